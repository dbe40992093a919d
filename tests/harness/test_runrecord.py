"""Typed run records: every committed record reads and writes back byte-identical; bad input names file:line:field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.records import iter_records
from harness.runrecord import RecordError, RunRecord

RESULTS = Path(__file__).resolve().parents[2] / "reports" / "results"


def test_committed_records_round_trip_byte_identical():
    lines = 0
    for path in sorted(RESULTS.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(keepends=True), start=1):
            record = RunRecord.from_dict(json.loads(line), f"{path.name}:{number}:")
            written = json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"
            assert written == line, f"{path.name}:{number} changed on the round trip"
            lines += 1
    assert lines > 0


def test_typed_fields_read_as_attributes():
    record = RunRecord.from_dict({
        "model": "m", "format": "prompt-hermes", "suite": "core/x", "scenario": "s", "repeat": 1, "mode": "replay",
        "turns": [{"termination": "final_answer", "rounds": [
            {"index": 0, "calls": [{"name": "get_weather", "decision": "executed", "future_field": 1}],
             "counters": {"eval_ns": 10, "completion_tokens": 2}}]}],
    })
    call = record.turns[0].rounds[0].calls[0]
    assert (call.name, call.decision, call.extra) == ("get_weather", "executed", {"future_field": 1})
    assert record.turns[0].rounds[0].measured.eval_ns == 10 and record.replayed
    assert record.to_dict()["turns"][0]["rounds"][0]["calls"][0]["future_field"] == 1


def test_scores_an_older_runner_stored_are_kept_on_disk_but_are_no_field():
    line = ('{"model":"m","format":"native","suite":"core/x","scenario":"s","repeat":0,"turns":[],'
            '"error":null,"scores":{"scorer_version":2,"task_success":true},"outcome":{"outcome":"completed"}}')
    record = RunRecord.from_dict(json.loads(line))
    assert "scores" not in RunRecord.FIELDS and not hasattr(record, "scores")
    assert record.extra["scores"] == {"scorer_version": 2, "task_success": True}  # kept, never read
    assert json.dumps(record.to_dict(), separators=(",", ":")) == line


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"model": "m", "format": "f", "suite": "s"}', r"r\.jsonl:1:scenario: field is missing"),
        ('{"model": "", "format": "f", "suite": "s", "scenario": "x"}', r"r\.jsonl:1:model: expected a non-empty"),
        ('{"model": "m", "format": "f", "suite": "s", "scenario": "x", "repeat": 0, '
         '"turns": [{"rounds": [{"calls": [{"name": 3}]}]}]}', r"r\.jsonl:1:turns\[0\]\.rounds\[0\]\.calls\[0\]\.name"),
        ('["not", "a", "record"]', r"r\.jsonl:1: expected an object, got list"),
    ],
)
def test_bad_records_name_file_line_and_field(tmp_path: Path, line: str, message: str):
    path = tmp_path / "r.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=message):
        list(iter_records(path, strict=True))


def test_the_record_s_counters_are_the_backend_s_counters_field_for_field():
    """The record keeps a typed copy of what a backend reports; a counter added to one and not the
    other would be silently dropped on writing (or never read back)."""
    from dataclasses import fields

    from harness.runrecord import Counters as RecordCounters
    from utp.backends.base import Counters as BackendCounters

    backend = [(f.name, str(f.type)) for f in fields(BackendCounters)]
    record = [(f.name, str(f.type)) for f in fields(RecordCounters) if f.name not in ("keys", "extra")]
    assert record == backend
    assert list(RecordCounters.FIELDS) == [name for name, _ in backend]
