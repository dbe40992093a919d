"""``utp rescore``: recorded runs re-scored from their own cassettes, nothing else touched.

The fixture is one real recorded run of Gemma 3 270M (its cassette and its
record, copied from the repository) next to a second recorded run. The first
record is given the reading an older parser would have stored (a call it
named differently, and the scores that followed), as happened when UTP
learned to map a misspelled tool's positional arguments.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.records import read_records
from harness.rescore import CLIENT_CLOCK, main, rescored_record

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
    stale["scores"]["args_valid"] = 0
    stale["scores"]["calls_matched"] = 0
    stale.pop("rescored", None)
    lines[0] = json.dumps(stale, ensure_ascii=False, separators=(",", ":"))
    results.mkdir()
    (results / f"{SLUG}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return cassettes, results


def _run(cassettes: Path, results: Path, *extra: str) -> int:
    return main(["--model", MODEL, "--results-dir", str(results), "--cassette-dir", str(cassettes), "--no-reports", *extra])


def test_a_stale_score_is_rederived_and_the_change_is_recorded(recorded: tuple[Path, Path], capsys) -> None:
    cassettes, results = recorded
    path = results / f"{SLUG}.jsonl"
    before = path.read_text(encoding="utf-8").splitlines()
    assert _run(cassettes, results) == 0
    assert f"{MODEL}: 1 recorded run(s) re-read differently and re-scored" in capsys.readouterr().out
    after = path.read_text(encoding="utf-8").splitlines()
    assert after[1] == before[1]  # the run whose scores stand is left byte for byte
    old, new = json.loads(before[0]), json.loads(after[0])
    assert new["mode"] == "record" and new["provenance"] == old["provenance"]
    assert new["scores"]["args_valid"] == 1 and new["scores"]["calls_matched"] == 1
    assert {k: new["scores"][k] for k in CLIENT_CLOCK if k in old["scores"]} == {k: old["scores"][k] for k in CLIENT_CLOCK if k in old["scores"]}
    assert {"args_valid": 0, "calls_matched": 0}.items() <= new["rescored"]["previous_scores"].items()
    assert new["rescored"]["utp_version"]
    round_ = new["turns"][0]["rounds"][0]
    assert round_["client_wall_s"] == old["turns"][0]["rounds"][0]["client_wall_s"]  # the recording's clock
    assert [c["name"] for c in round_["calls"]] == ["gcd"]


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
    recorded = {"scores": {"a": 1, "wall_s": 3.0}, "turns": [{"rounds": [{"client_wall_s": 0.5, "calls": [call]}]}],
                "mode": "record", "error": None}
    same = {"scores": {"a": 1, "task_kind": "call"}, "turns": [{"rounds": [{"calls": [call]}]}], "mode": "replay",
            "error": None}
    assert rescored_record(recorded, same, "2026-01-01T00:00:00Z", "9") is None  # a new score key alone is no reason
    reread = {**same, "scores": {"a": 2}, "turns": [{"rounds": [{"calls": [{**call, "name": "g"}]}]}]}
    changed = rescored_record(recorded, reread, "2026-01-01T00:00:00Z", "9")
    assert changed is not None
    assert changed["scores"] == {"a": 2, "wall_s": 3.0} and changed["mode"] == "record"
    assert changed["turns"][0]["rounds"][0]["client_wall_s"] == 0.5
    assert changed["rescored"] == {"at": "2026-01-01T00:00:00Z", "utp_version": "9", "previous_scores": {"a": 1}}


def test_nothing_recorded_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["--results-dir", str(tmp_path), "--no-reports"]) == 2
    assert "no recorded runs under" in capsys.readouterr().err


def test_a_model_without_results_is_a_clear_error(recorded: tuple[Path, Path], capsys) -> None:
    cassettes, results = recorded
    assert main(["--model", "local:smollm2-135m", "--results-dir", str(results), "--cassette-dir", str(cassettes), "--no-reports"]) == 2
    assert "no results file for local:smollm2-135m" in capsys.readouterr().err
