"""utp tune: per-model choice, overlap honesty, TOML round trip, llmc.toml snippet."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from harness.metrics import ensure_scores
from harness.reporting.loading import load_scenarios
from harness.tuning import choose_profile, ranked_formats, recommendations, tune, tune_main
from utp.formats import PRESETS
from utp.tuned import load_tuned


#: the scenario every run below answered: one call, get_weather for Tokyo
SUITE = """\
suite: core/single_call
scenarios:
  - id: weather
    description: one call
    tools:
      - name: get_weather
        description: weather
        parameters: {type: object, properties: {city: {type: string}}, required: [city]}
        fixture: {result: {temp_c: 11}}
    turns:
      - user: Weather in Tokyo?
        expect:
          calls: [{name: get_weather, arguments: {city: [Tokyo]}}]
"""


@pytest.fixture
def scenarios_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    (directory / "single.yaml").write_text(SUITE, encoding="utf-8")
    return directory


def run_record(model: str, fmt: str, repeat: int, ok: bool, *, synthetic: bool = False, tps: float = 30.0) -> dict:
    """A stored run record: one call (Tokyo passes, Paris fails), one answer, the server's counters."""
    call = {"name": "get_weather", "arguments": {"city": "Tokyo" if ok else "Paris"}, "decision": "executed"}
    rounds = [{"index": 0, "content": "", "calls": [call],
               "counters": {"prompt_tokens": 400, "completion_tokens": int(tps), "prompt_eval_ns": 1_000_000_000,
                            "eval_ns": 1_000_000_000}},
              {"index": 1, "content": "It is 11 C.", "calls": []}]
    return {
        "schema": 1, "model": model, "format": fmt, "suite": "core/single_call", "scenario": "weather",
        "repeat": repeat, "mode": "replay", "synthetic": synthetic, "provenance": {},
        "turns": [{"user": "Weather in Tokyo?", "rounds": rounds, "final_answer": "It is 11 C.",
                   "termination": "final_answer", "error": None}],
        "error": None,
    }


def scored(records: list[dict], scenarios_dir: Path) -> list[dict]:
    """The records with the scores tuning derives from them."""
    return ensure_scores(records, load_scenarios(scenarios_dir))


def outcomes(model: str, fmt: str, successes: int, runs: int, **kw: Any) -> list[dict]:
    return [run_record(model, fmt, r, r < successes, **kw) for r in range(runs)]


def write(directory: Path, records: list[dict]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for model in {r["model"] for r in records}:
        lines = [json.dumps(r) for r in records if r["model"] == model]
        (directory / f"{model.replace(':', '_')}.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def test_models_with_different_best_formats_get_different_choices(tmp_path: Path, scenarios_dir: Path):
    records = (
        outcomes("qwen3:4b", "native", 2, 20) + outcomes("qwen3:4b", "prompt-hermes", 19, 20)
        + outcomes("llama3.2:3b", "native", 18, 20) + outcomes("llama3.2:3b", "prompt-hermes", 3, 20)
        + outcomes("llama3.2:3b", "fewshot-json", 10, 20)
        + outcomes("llama3.2:3b", "prompt-hermes", 0, 0)
    )
    out = tmp_path / "tuned.toml"
    profiles = tune([write(tmp_path / "results", records)], out, scenarios_dir=scenarios_dir)
    assert profiles["qwen3:4b"].preset == "prompt-hermes"
    assert profiles["qwen3:4b"].bundle == PRESETS["prompt-hermes"]
    assert profiles["llama3.2:3b"].preset == "native"
    assert profiles["llama3.2:3b"].fallbacks == ("fewshot-json", "prompt-hermes")
    assert profiles["qwen3:4b"].evidence["overlaps_runner_up"] is False
    assert profiles["qwen3:4b"].evidence["margin"] == pytest.approx(0.85)

    loaded = load_tuned(out)
    assert set(loaded) == {"qwen3:4b", "llama3.2:3b"}
    assert loaded["llama3.2:3b"].bundle == PRESETS["native"]
    assert loaded["llama3.2:3b"].runner_up == "fewshot-json"
    assert loaded["qwen3:4b"].evidence["runs"] == 20
    assert loaded["qwen3:4b"].evidence["task_success"] == pytest.approx(0.95)
    assert tomllib.loads(out.read_text())["models"]["qwen3:4b"]["prompt_family"] == "hermes"


def test_overlapping_intervals_are_flagged(tmp_path: Path, scenarios_dir: Path):
    close = outcomes("m", "prompt-json", 4, 5) + outcomes("m", "prompt-hermes", 3, 5)
    profile = tune([write(tmp_path / "results", close)], None, scenarios_dir=scenarios_dir)["m"]
    assert profile.preset == "prompt-json"
    assert profile.evidence["overlaps_runner_up"] is True
    line = recommendations([tmp_path / "results"], scenarios=load_scenarios(scenarios_dir))[0]
    assert line.startswith("m: use prompt-json") and "overlap" in line and "not settled" in line


def test_ties_fall_to_parse_success_then_throughput(scenarios_dir: Path):
    records = scored(outcomes("m", "native", 3, 4, tps=10.0) + outcomes("m", "prompt-json", 3, 4, tps=50.0), scenarios_dir)
    ranked = ranked_formats(records)["m"]
    assert [r["format"] for r in ranked] == ["prompt-json", "native"]
    for r in records:
        if r["format"] == "prompt-json":
            r["scores"]["calls_meant"] = 2  # parse success 0.5 beats speed
    assert ranked_formats(records)["m"][0]["format"] == "native"


def test_synthetic_and_unknown_formats_never_vote(scenarios_dir: Path):
    records = outcomes("m", "native", 1, 4) + outcomes("m", "prompt-json", 4, 4, synthetic=True)
    records = scored(records + outcomes("m", "homemade-format", 4, 4), scenarios_dir)
    profile = choose_profile("m", ranked_formats(records)["m"])
    assert profile.preset == "native" and profile.fallbacks == () and profile.runner_up is None
    with pytest.raises(ValueError, match="no measured formats"):
        choose_profile("m", [])


def test_tune_main_prints_choice_and_llmc_snippet(tmp_path: Path, scenarios_dir: Path, capsys):
    results = write(tmp_path / "r1", outcomes("qwen3:4b", "prompt-hermes", 9, 10))
    more = write(tmp_path / "r2", outcomes("qwen3:4b", "native", 2, 10))
    out = tmp_path / "tuned.toml"
    code = tune_main(["--results-dir", str(results), "--results-dir", str(more), "--out", str(out),
                      "--scenarios-dir", str(scenarios_dir)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "qwen3:4b: use prompt-hermes" in printed
    assert "[profiles.qwen3-4b.tools]" in printed
    snippet = printed[printed.index("[profiles.qwen3-4b.tools]"):].split("\n\n")[0]
    assert tomllib.loads(snippet)["profiles"]["qwen3-4b"]["tools"]["prompt_family"] == "hermes"
    assert load_tuned(out)["qwen3:4b"].fallbacks == ("native",)


def test_tune_main_without_results_writes_nothing(tmp_path: Path, capsys):
    (tmp_path / "results").mkdir()
    out = tmp_path / "tuned.toml"
    assert tune_main(["--results-dir", str(tmp_path / "results"), "--out", str(out)]) == 1
    assert "nothing written" in capsys.readouterr().err and not out.exists()
    assert tune_main(["--results-dir", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_tune_chooses_constrained_json_when_it_wins_and_the_profile_sends_the_schema(tmp_path: Path, scenarios_dir: Path):
    from utp.adapters.constrained import ConstrainedDefinitionAdapter
    from utp.negotiator import FormatNegotiator

    records = outcomes("tiny:1b", "constrained-json", 15, 20) + outcomes("tiny:1b", "fewshot-json", 6, 20)
    out = tmp_path / "tuned.toml"
    profiles = tune([write(tmp_path / "results", records)], out, scenarios_dir=scenarios_dir)
    assert profiles["tiny:1b"].preset == "constrained-json"
    assert profiles["tiny:1b"].fallbacks == ("fewshot-json",)
    loaded = load_tuned(out)
    assert loaded["tiny:1b"].bundle == PRESETS["constrained-json"]
    negotiated = FormatNegotiator(tuned=loaded).negotiate("ollama", "tiny:1b")
    assert (negotiated.source, negotiated.bundle) == ("tuned", PRESETS["constrained-json"])
    assert isinstance(negotiated.definition_adapter, ConstrainedDefinitionAdapter)
