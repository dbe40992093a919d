"""``utp rescore``: recorded runs re-read from their own cassettes, nothing else touched.

The fixture is one real recorded run of Gemma 3 270M (its cassette and its
record, copied from the repository) next to a second recorded run. The first
record is given the reading an older parser would have stored (a call it
named differently), as happened when UTP learned to map a misspelled tool's
positional arguments, and the scores an older runner stored with it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.records import read_records
from harness.rescore import main, rescored_record
from harness.scenarios import SCENARIOS_ROOT
from tests.support.derived import derived_scores

ROOT = Path(__file__).resolve().parents[2]
MODEL = "local:gemma3-270m"
SLUG = "local_gemma3-270m"
RUNS = [
    ("fewshot-pythonic", "bfcl/parallel_multiple", "parallel_multiple_5"),
    ("prompt-json", "core/single_call", "weather-tokyo"),
]


def _record_line(fmt: str, suite: str, scenario: str) -> str:
    lines = (ROOT / "reports" / "results" / f"{SLUG}.jsonl").read_text(encoding="utf-8").splitlines()
    found = [line for line in lines if (r := json.loads(line))["mode"] == "record" and (r["format"], r["suite"], r["scenario"]) == (fmt, suite, scenario)]
    return found[-1]


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, Path]:
    cassettes, results = tmp_path / "cassettes", tmp_path / "results"
    (cassettes / SLUG).mkdir(parents=True)
    shutil.copy(ROOT / "scenarios" / "cassettes" / SLUG / "provenance.json", cassettes / SLUG)
    lines = []
    for fmt, suite, scenario in RUNS:
        source = ROOT / "scenarios" / "cassettes" / SLUG / fmt / suite / f"{scenario}.r0.json"
        target = cassettes / SLUG / fmt / suite / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
        lines.append(_record_line(fmt, suite, scenario))
    stale = json.loads(lines[0])
    stale["turns"][0]["rounds"][0]["calls"][0]["name"] = "gdc"
    stale["scores"] = {**stale.get("scores", {}), "args_valid": 0, "calls_matched": 0}  # as an older runner stored them
    stale.pop("rescored", None)
    lines[0] = json.dumps(stale, ensure_ascii=False, separators=(",", ":"))
    results.mkdir()
    (results / f"{SLUG}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return cassettes, results


def _run(cassettes: Path, results: Path, *extra: str) -> int:
    return main(["--model", MODEL, "--results-dir", str(results), "--cassette-dir", str(cassettes), "--no-reports", *extra])


def test_a_stale_reading_is_reread_and_the_change_is_recorded(recorded: tuple[Path, Path], capsys) -> None:
    cassettes, results = recorded
    path = results / f"{SLUG}.jsonl"
    before = path.read_text(encoding="utf-8").splitlines()
    key = ("fewshot-pythonic", "bfcl/parallel_multiple", "parallel_multiple_5", 0)
    assert derived_scores(results, SCENARIOS_ROOT)[key]["calls_matched"] == 0  # the old reading's figures
    assert _run(cassettes, results) == 0
    assert f"{MODEL}: 1 recorded run(s) re-read differently and rewritten" in capsys.readouterr().out
    after = path.read_text(encoding="utf-8").splitlines()
    assert after[1] == before[1]  # the run whose reading stands is left byte for byte
    old, new = json.loads(before[0]), json.loads(after[0])
    assert new["mode"] == "record" and new["provenance"] == old["provenance"]
    assert "scores" not in new  # the stored scores judged the old reading; reports derive them
    assert derived_scores(results, SCENARIOS_ROOT)[key]["calls_matched"] == 1
    assert ["gdc"] == [name for _, _, name, _ in new["rescored"]["previous_calls"]][:1]
    assert new["rescored"]["utp_version"] and new["rescored"]["at"]
    round_, recorded_round = new["turns"][0]["rounds"][0], old["turns"][0]["rounds"][0]
    assert round_["client_wall_s"] == recorded_round["client_wall_s"]  # the recording's clocks
    assert round_["counters"]["wall_s"] == recorded_round["counters"]["wall_s"]
    assert [c["name"] for c in round_["calls"]][:1] == ["gcd"]


def test_rescoring_twice_changes_nothing_more(recorded: tuple[Path, Path], capsys) -> None:
    cassettes, results = recorded
    assert _run(cassettes, results) == 0
    once = (results / f"{SLUG}.jsonl").read_bytes()
    assert _run(cassettes, results) == 0
    assert f"{MODEL}: every recorded reading stands" in capsys.readouterr().out
    assert (results / f"{SLUG}.jsonl").read_bytes() == once
    assert len(read_records(results)) == 2


def test_only_runs_read_differently_are_rewritten() -> None:
    call = {"name": "f", "arguments": {}, "decision": "executed"}
    recorded = {"scores": {"a": 1}, "turns": [{"rounds": [{"client_wall_s": 0.5, "counters": {"wall_s": 0.4}, "calls": [call]}]}],
                "mode": "record", "error": None}
    same = {"turns": [{"rounds": [{"counters": {"wall_s": None}, "calls": [call]}]}], "mode": "replay", "error": None}
    assert rescored_record(recorded, same, "2026-01-01T00:00:00Z", "9") is None  # stored scores alone are no reason
    reread = {**same, "turns": [{"rounds": [{"counters": {"wall_s": None}, "calls": [{**call, "name": "g"}]}]}]}
    changed = rescored_record(recorded, reread, "2026-01-01T00:00:00Z", "9")
    assert changed is not None
    assert "scores" not in changed and changed["mode"] == "record"
    assert changed["turns"][0]["rounds"][0]["client_wall_s"] == 0.5
    assert changed["turns"][0]["rounds"][0]["counters"] == {"wall_s": 0.4}
    assert changed["turns"][0]["rounds"][0]["calls"][0]["name"] == "g"
    assert changed["rescored"] == {"at": "2026-01-01T00:00:00Z", "utp_version": "9",
                                   "previous_calls": [[0, 0, "f", "executed"]]}


def test_nothing_recorded_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["--results-dir", str(tmp_path), "--no-reports"]) == 2
    assert "no recorded runs under" in capsys.readouterr().err


def test_a_model_without_results_is_a_clear_error(recorded: tuple[Path, Path], capsys) -> None:
    cassettes, results = recorded
    assert main(["--model", "local:smollm2-135m", "--results-dir", str(results), "--cassette-dir", str(cassettes), "--no-reports"]) == 2
    assert "no results file for local:smollm2-135m" in capsys.readouterr().err


def test_a_changed_reading_re_derives_existing_tuned_profiles(recorded: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    """The tuned profiles' evidence is the reports' evidence: both are rebuilt from the re-read records."""
    from utp.tuned import load_tuned

    cassettes, results = recorded
    tuned = tmp_path / "tuned_profiles.toml"
    shutil.copy(ROOT / "reports" / "tuned_profiles.toml", tuned)  # tuned on every recorded run
    before = load_tuned(tuned)
    assert before[MODEL].evidence["runs"] > len(RUNS)
    assert main(["--model", MODEL, "--results-dir", str(results), "--cassette-dir", str(cassettes),
                 "--reports-dir", str(tmp_path / "reports"), "--tuned", str(tuned)]) == 0
    assert "Tuned profiles re-derived" in capsys.readouterr().out
    after = load_tuned(tuned)
    # these two runs earn no recommendation, so the choice that rested on the old reading goes
    assert MODEL not in after
    assert set(after) == set(before) - {MODEL}  # models these results lack are kept as they were
    assert all(after[m] == before[m] for m in after)


def test_rescoring_never_creates_tuned_profiles(recorded: tuple[Path, Path], tmp_path: Path) -> None:
    cassettes, results = recorded
    tuned = tmp_path / "never_tuned.toml"
    assert main(["--model", MODEL, "--results-dir", str(results), "--cassette-dir", str(cassettes),
                 "--reports-dir", str(tmp_path / "reports"), "--tuned", str(tuned)]) == 0
    assert not tuned.exists()
