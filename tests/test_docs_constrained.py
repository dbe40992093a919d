"""docs/constrained.md's measured tables are the committed recordings' own."""

from __future__ import annotations

from pathlib import Path

from harness.reporting.constrained_tables import reply_table, tables

ROOT = Path(__file__).resolve().parents[1]


def test_the_constrained_page_holds_the_generated_tables() -> None:
    page = (ROOT / "docs" / "constrained.md").read_text(encoding="utf-8")
    for table in tables(ROOT):
        assert table in page, "docs/constrained.md differs from the reports: paste `python -m harness.reporting.constrained_tables`"


def _run(fmt: str, raw_first: str, calls: list[str]) -> dict:
    rounds = [{"index": 0, "raw_text": raw_first, "calls": [{"name": n, "arguments": {}} for n in calls]}]
    return {"model": "m", "format": fmt, "suite": "core/single_call", "scenario": f"s-{raw_first[:9]}-{len(calls)}",
            "turns": [{"user": "u", "rounds": rounds}]}


def test_each_preset_s_answer_branch_is_recognised_by_its_own_reader() -> None:
    records = [
        _run("constrained-json", '{"answer": "Sydney"}', []),
        _run("constrained-json", '{"name": "answer", "arguments": {"text": "x"}}', []),  # not this preset's answer
        _run("constrained-call", '{"name": "answer", "arguments": {"text": "Sydney"}}', []),
        _run("constrained-call", '{"name": "get_weather", "arguments": {}}', ["get_weather"]),
        _run("fewshot-json", '{"answer": "free-form presets are not counted"}', []),
    ]
    errored = {**_run("constrained-call", "", []), "scenario": "timed-out"}
    errored["turns"] = [{"user": "u", "rounds": [], "termination": "backend_error",
                         "error": "timeout: POST http://127.0.0.1/api/chat: timed out waiting for the server"}]
    table = reply_table([*records, errored])
    assert "| `m` | `constrained-json` | 2 | 0 | 0 | 1 |" in table
    assert "| `m` | `constrained-call` | 2 | 1 | 1 | 1 |" in table  # the errored run is not counted
    assert "fewshot-json" not in table
