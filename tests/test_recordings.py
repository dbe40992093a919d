"""The recordings in the repository: real models, replayed to the same scores.

`scenarios/cassettes/` holds runs of real models (the embedded SmolLM2 and
Gemma 3) recorded with `utp eval --record`; `reports/results/` holds the run
records written while recording. Replaying every cassette must give exactly
the recorded reading (the calls, decisions and answers UTP made of the
model's outputs; wall time and time to first token are not measured in
replay), and the committed reports must show formats that really differ.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.outcomes import is_errored
from harness.records import model_slug, read_records
from harness.rescore import reading
from harness.runplan import recorded_models
from tests.support.sweeps import full_sweeps

ROOT = Path(__file__).resolve().parents[1]
CASSETTES = ROOT / "scenarios" / "cassettes"
RESULTS = ROOT / "reports" / "results"
REAL_MODELS = ("local:smollm2-135m", "local:gemma3-270m")
#: scenarios per suite replayed by `make test` (every format, every suite); `make test-full` replays all
QUICK_REPLAY_LIMIT = 2
#: models trained to call tools, and the same GGUF behind llama-server; recorded over hours, so
#: replayed for whatever part of their recording the repository holds
TOOL_MODELS = tuple(
    model
    for model in ("local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b", "llamacpp:qwen2.5-coder-0.5b", "llamacpp:qwen2.5-coder-1.5b")
    if (CASSETTES / model_slug(model) / "provenance.json").is_file()
)


def recorded_runs(model: str) -> dict[tuple, Any]:
    """What UTP read from each recorded run (the latest recording of each run that has a cassette)."""
    runs = {}
    for record in read_records(RESULTS, latest_only=False, models=[model]):
        if record.get("mode") == "record":
            key = (record["format"], record["suite"], record["scenario"], record["repeat"])
            runs[key] = reading(record)
    return runs


def test_the_repository_carries_recordings_of_both_real_models():
    assert set(REAL_MODELS) <= set(recorded_models(CASSETTES))
    for model in REAL_MODELS:
        header = json.loads((CASSETTES / model_slug(model) / "provenance.json").read_text())["header"]
        assert header["synthetic"] is False
        assert header["model_digest"] and header["engine"]
        assert recorded_runs(model), f"no recorded run records for {model}"


def _errored(model: str, key: tuple) -> bool:
    return any(is_errored(r) for r in read_records(RESULTS, models=[model])
               if (r["format"], r["suite"], r["scenario"], r["repeat"]) == key)


#: the same GGUF files behind llama-server: replayed by `make test-full` only (their embedded twins by both)
SERVER_TWINS = tuple(model for model in TOOL_MODELS if model.startswith("llamacpp:"))


@pytest.mark.parametrize("model", REAL_MODELS + TOOL_MODELS)
def test_replaying_the_cassettes_gives_the_recorded_reading(model: str, tmp_path: Path):
    """Every recorded run under `make test-full`; under `make test`, the first scenarios of every suite in every format."""
    if model in SERVER_TWINS and not full_sweeps():
        pytest.skip("replayed by make test-full (its embedded twin is replayed here)")
    sample = [] if full_sweeps() else ["--limit", str(QUICK_REPLAY_LIMIT)]
    code = main(["eval", "--model", model, "--replay", "--results-dir", str(tmp_path / "results"),
                 "--reports-dir", str(tmp_path / "reports"), "--no-reports", "--concurrency", "4", *sample])
    assert code == 0
    replayed = {}
    for record in read_records(tmp_path / "results"):
        assert record["mode"] == "replay"
        key = (record["format"], record["suite"], record["scenario"], record["repeat"])
        replayed[key] = reading(record)
    recorded = recorded_runs(model)
    if sample:
        assert {(fmt, suite) for fmt, suite, *_ in replayed} == {(fmt, suite) for fmt, suite, *_ in recorded}
        recorded = {key: recorded[key] for key in replayed if key in recorded}
    else:
        errored_when_recorded = {k for k in recorded.keys() - replayed.keys() if _errored(model, k)}
        recorded = {k: v for k, v in recorded.items() if k not in errored_when_recorded}  # it keeps no cassette
    assert replayed.keys() == recorded.keys()
    differing = [key for key in replayed if recorded[key] != replayed[key]]
    assert not differing, f"{len(differing)} runs read differently in replay, e.g. {differing[:3]}"


@pytest.mark.parametrize("model", REAL_MODELS)
def test_committed_report_shows_formats_that_really_differ(model: str):
    report = json.loads((ROOT / "reports" / model_slug(model) / "compatibility.json").read_text())
    rows = report["formats"]
    assert len(rows) >= 2
    parse = {row["format"]: row.get("parse_success") for row in rows}
    task = {row["format"]: row.get("task_success") for row in rows}
    assert len({v for v in parse.values()}) > 1 or len({v for v in task.values()}) > 1


@pytest.mark.parametrize("model", REAL_MODELS)
def test_committed_report_states_bfcl_accuracy_per_category(model: str):
    text = (ROOT / "reports" / model_slug(model) / "compatibility.md").read_text()
    categories = {r["suite"].split("/", 1)[1] for r in read_records(RESULTS, models=[model]) if r["suite"].startswith("bfcl/")}
    assert categories, "no BFCL runs recorded"
    for category in categories:
        assert category in text
    per_format: dict[str, set[str]] = defaultdict(set)
    for record in read_records(RESULTS, models=[model]):
        per_format[record["format"]].add(record["suite"])
    assert per_format
