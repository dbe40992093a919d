"""The README's results table, generated from the committed reports.

The README is what people read to pick a model and format, so its figures
must be the reports' own: this builds the table from
``reports/*/compatibility.json`` and a test checks the README holds it
verbatim. ``python -m harness.reporting.readme_table`` prints it after the
reports change.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.reporting.constraint import lift_cell, newcombe_difference, points_span
from harness.reporting.text import DASH, counted_rate, md_table
from harness.reporting.verdict import is_native_format

HEADERS = ["model", "recommended format", "call tasks [95% CI]", "lead over the runner-up [95% CI]", "restraint",
           "native: calls only in text", "constraining: lift [95% CI]", "runs"]


def _row(report: Mapping[str, Any], name: str | None) -> Mapping[str, Any] | None:
    return next((f for f in report["formats"] if f["format"] == name), None)


def lead_cell(report: Mapping[str, Any]) -> str:
    """``+4 points [-17, +25] over prompt-json``: the margin with Newcombe's interval for the difference."""
    verdict = report["verdict"]
    best, runner = _row(report, verdict["best_format"]), _row(report, verdict["runner_up"])
    if best is None:
        return DASH
    if runner is None or not int(runner["call_tasks"] or 0):
        return "the only format that passed a call task"
    lift, low, high = newcombe_difference(int(best["call_passed"]), int(best["call_tasks"]),
                                          int(runner["call_passed"]), int(runner["call_tasks"]))
    return f"{points_span(lift, low, high)} over {runner['format']}"


def native_cell(report: Mapping[str, Any]) -> str:
    """Calls made under native tool definitions that came back only as text (the seeds' P0 symptom)."""
    if report["verdict"]["native_tools"] == "unsupported":
        return "server refuses tools"
    rows = [f for f in report["formats"] if is_native_format(str(f["format"]))]
    total = sum(int(f.get("adherence_calls") or 0) for f in rows)
    if not total:
        return "not measured"
    in_text = total - sum(int(f.get("adherent_calls") or 0) for f in rows)
    return f"{in_text} of {total}"


def results_row(report: Mapping[str, Any]) -> list[str]:
    verdict = report["verdict"]
    best = _row(report, verdict["best_format"])
    runs = str(report["sources"]["runs"])
    if report["sources"].get("errored"):
        runs += f" (+{report['sources']['errored']} errored)"
    return [
        f"`{report['model']}`",
        verdict["best_format"] or "none earned",
        counted_rate(verdict["best_call_passed"], verdict["best_call_tasks"], *(verdict["best_ci"] or [None, None])),
        lead_cell(report),
        counted_rate(best["restraint_passed"], best["restraint_tasks"]) if best else DASH,
        native_cell(report),
        lift_cell(report.get("constraint_lift")),
        runs,
    ]


def load_reports(reports_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(reports_dir.glob("*/compatibility.json"))
            if path.parent.name != "replayed"]


def results_table(reports: Sequence[Mapping[str, Any]]) -> str:
    return md_table(HEADERS, [results_row(r) for r in sorted(reports, key=lambda r: str(r["model"]))])


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    print(results_table(load_reports(Path(args[0] if args else "reports"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
