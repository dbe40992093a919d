"""docs/constrained.md's measured tables, generated from the committed reports and records.

"Does constraining help?" is answered in each report; the reference page
shows the answer for every model side by side, and what the constrained
replies did (did the first reply call, or answer at once?). Its figures must
be the recordings' own, so this builds both tables and a test checks the page
holds them verbatim. ``python -m harness.reporting.constrained_tables``
prints them after the reports change.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.outcomes import is_errored
from harness.records import read_records
from harness.reporting.constraint import is_constrained, points_span
from harness.reporting.readme_table import load_reports
from harness.reporting.text import counted_rate, md_table
from harness.runrecord import RunRecord
from utp.adapters import get_definition_adapter
from utp.formats import PRESETS

LIFT_HEADERS = ["model", "best constrained preset", "call tasks", "best free-form, same scenarios", "call tasks",
                "lift [95% CI]"]
REPLY_HEADERS = ["model", "preset", "core runs", "a call in the first reply", "a call in any reply", "first reply an answer"]


def lift_row(report: Mapping[str, Any]) -> list[str] | None:
    lift = report.get("constraint_lift")
    if not lift:
        return None
    return [
        f"`{report['model']}`",
        f"`{lift['constrained']}`",
        counted_rate(lift["constrained_passed"], lift["constrained_tasks"]),
        f"`{lift['free_form']}`",
        counted_rate(lift["free_form_passed"], lift["free_form_tasks"]),
        points_span(lift["lift"], *lift["lift_ci"]),
    ]


def lift_table(reports: Sequence[Mapping[str, Any]]) -> str:
    rows = [row for r in sorted(reports, key=lambda r: str(r["model"])) if (row := lift_row(r))]
    return md_table(LIFT_HEADERS, rows)


def _first_round(run: RunRecord) -> Any:
    return run.turns[0].rounds[0] if run.turns and run.turns[0].rounds else None


def _answered_at_once(run: RunRecord) -> bool:
    """Whether the first reply took the preset's text-answer branch (read by the preset's own adapter)."""
    first = _first_round(run)
    if first is None or first.calls:
        return False
    shape = getattr(get_definition_adapter(PRESETS[run.format].definition_format), "answer", None)
    return shape is not None and shape.read(first.raw_text or "") is not None


def reply_row(model: str, preset: str, runs: Sequence[RunRecord]) -> list[str]:
    first_calls = sum(1 for run in runs if (first := _first_round(run)) is not None and first.calls)
    any_calls = sum(1 for run in runs if any(rnd.calls for turn in run.turns for rnd in turn.rounds))
    return [
        f"`{model}`",
        f"`{preset}`",
        str(len(runs)),
        str(first_calls),
        str(any_calls),
        str(sum(1 for run in runs if _answered_at_once(run))),
    ]


def reply_table(records: Sequence[Mapping[str, Any]]) -> str:
    """Per model and constrained preset, over its core runs that did not error."""
    by_cell: dict[tuple[str, str], list[RunRecord]] = {}
    for record in records:
        if is_errored(record):
            continue
        run = RunRecord.of(record)
        if is_constrained(run.format) and run.suite.startswith("core/") and not run.synthetic:
            by_cell.setdefault((run.model, run.format), []).append(run)
    rows = [reply_row(model, preset, runs) for (model, preset), runs in sorted(by_cell.items())]
    return md_table(REPLY_HEADERS, rows)


def tables(root: Path) -> tuple[str, str]:
    reports = load_reports(root / "reports")
    return lift_table(reports), reply_table(read_records(root / "reports" / "results"))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    for table in tables(Path(args[0] if args else ".")):
        print(table, end="\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
