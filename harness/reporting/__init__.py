"""Compatibility reports from stored run records: ``utp report``.

Reports are a pure function of ``reports/results/*.jsonl`` (and, optionally,
the scenarios to rescore against): no model runs, no clock, so ``utp report``
twice gives byte-identical files and a report can be rebuilt after the scorer
improves. Synthetic runs (hand-written cassettes) are left out of model
reports and only counted in the index, so no figure in a report is made up.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.metrics import UnjudgedRunsWarning
from harness.records import TornRecordWarning
from harness.scenario_model import Scenario
from harness.scenarios import SCENARIOS_ROOT
from harness.reporting.csvreport import render_csv
from harness.reporting.html import MODEL_PAGE, render_index_html
from harness.reporting.htmlmodel import render_model_html
from harness.reporting.jsonreport import model_report, render_json
from harness.reporting.loading import (
    ReportError,
    ensure_scores,
    load_records,
    load_scenarios,
    model_slug,
    write_text_atomic,
)
from harness.reporting.markdown import render_index_markdown, render_model_markdown

DEFAULT_RESULTS_DIR = Path("reports/results")
DEFAULT_OUT_DIR = Path("reports")


def split_synthetic(records: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[str, int]]:
    """(real records, synthetic run count per model)."""
    real = [r for r in records if not r.get("synthetic")]
    excluded = Counter(str(r.get("model")) for r in records if r.get("synthetic"))
    return real, dict(sorted(excluded.items()))


def build_model_reports(records: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Per-model report dicts (sorted by model) and synthetic runs excluded per model."""
    real, excluded = split_synthetic(records)
    by_model: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in real:
        by_model[str(record.get("model"))].append(record)
    reports = [model_report(m, by_model[m], excluded.get(m, 0)) for m in sorted(by_model)]
    slugs: dict[str, str] = {}
    for report in reports:
        if report["slug"] in slugs:
            raise ReportError(
                f"models {slugs[report['slug']]!r} and {report['model']!r} share the report directory "
                f"{report['slug']!r}; rename one"
            )
        slugs[report["slug"]] = report["model"]
    return reports, excluded


def build_reports(
    results_dir: str | Path = DEFAULT_RESULTS_DIR,
    out_dir: str | Path = DEFAULT_OUT_DIR,
    scenarios_dir: str | Path | None = None,
    scenarios: Mapping[tuple[str, str], Scenario] | None = None,
) -> list[Path]:
    """Write every model's compatibility.{md,json,csv} and page (index.html), plus index.md and index.html.

    Records are scored here, against the scenarios in ``scenarios_dir`` (the
    project's suites by default) and ``scenarios`` (by (suite id, scenario
    id): suites from elsewhere, such as the ones ``utp eval`` just ran): a
    report always reflects the current scorer, and a scoring change never has
    to rewrite the recorded history. A run whose scenario is not found is
    shown with its scenario-free figures and no task verdict.
    """
    records = load_records(results_dir)
    records = ensure_scores(records, {**load_scenarios(scenarios_dir or SCENARIOS_ROOT), **(scenarios or {})})
    reports, excluded = build_model_reports(records)
    out = Path(out_dir)
    written: list[Path] = []
    for report in reports:
        directory = out / report["slug"]
        written.append(write_text_atomic(directory / "compatibility.md", render_model_markdown(report)))
        written.append(write_text_atomic(directory / "compatibility.json", render_json(report)))
        written.append(write_text_atomic(directory / "compatibility.csv", render_csv(report)))
        written.append(write_text_atomic(directory / MODEL_PAGE, render_model_html(report)))
    written.append(write_text_atomic(out / "index.md", render_index_markdown(reports, excluded)))
    written.append(write_text_atomic(out / "index.html", render_index_html(reports, excluded)))
    return written


def add_report_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--results-dir", default=str(DEFAULT_RESULTS_DIR),
                        help="directory of run records (*.jsonl) (default: %(default)s)")
    parser.add_argument("--out", default=str(DEFAULT_OUT_DIR), help="where reports go (default: %(default)s)")
    parser.add_argument("--scenarios-dir", default=None,
                        help="score records against the scenarios in this directory (default: the project's suites)")
    return parser


def _namespace(args: argparse.Namespace | Sequence[str] | None, prog: str, add: Any) -> argparse.Namespace:
    if isinstance(args, argparse.Namespace):
        return args
    parser = add(argparse.ArgumentParser(prog=prog))
    return parser.parse_args(strip_separator(args))


def strip_separator(args: Sequence[str] | None) -> list[str] | None:
    """Drop a leading ``--`` (``utp report -- --out x`` reaches us with it under argparse REMAINDER)."""
    if args is None:
        return None
    argv = list(args)
    return argv[1:] if argv[:1] == ["--"] else argv


def report_main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """``utp report``: rebuild reports from stored results (no model runs). Returns an exit code."""
    ns = _namespace(args, "utp report", add_report_arguments)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TornRecordWarning)
            warnings.simplefilter("always", UnjudgedRunsWarning)
            written = build_reports(
                getattr(ns, "results_dir", DEFAULT_RESULTS_DIR),
                getattr(ns, "out", DEFAULT_OUT_DIR),
                getattr(ns, "scenarios_dir", None),
            )
    except ReportError as exc:
        print(f"utp report: {exc}", file=sys.stderr)
        return 2
    for warning in caught:
        print(f"utp report: warning: {warning.message}", file=sys.stderr)
    models = sum(1 for p in written if p.name == "compatibility.md")
    print(f"wrote {len(written)} files for {models} model(s) under {getattr(ns, 'out', DEFAULT_OUT_DIR)}")
    return 0


__all__ = [
    "ReportError",
    "add_report_arguments",
    "build_model_reports",
    "build_reports",
    "model_slug",
    "report_main",
    "split_synthetic",
    "strip_separator",
]
