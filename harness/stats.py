"""The per model × format table, breakdowns by suite or BFCL category, and the ranking of formats.

The figures in a row come from the metrics (:mod:`harness.metrics`): one
module per metric, each aggregating its own fields with its interval. This
module groups records and orders formats; the interval arithmetic is in
:mod:`harness.intervals` (re-exported here).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from harness.intervals import Z95, mean_pass_k, pass_at_k, pass_hat_k, ratio, wilson_interval
from harness.metrics import summarise, summary_fields
from harness.outcomes import results_only


def bfcl_category(suite: str | None) -> str | None:
    """``bfcl/simple_python`` → ``simple_python``; other suites have no BFCL category."""
    if suite and suite.startswith("bfcl/"):
        return suite.split("/", 1)[1] or None
    return None


def _scores(record: Mapping[str, Any]) -> Mapping[str, Any]:
    scores = record.get("scores")
    return scores if isinstance(scores, Mapping) else {}


def aggregate_columns() -> list[str]:
    """Columns of :func:`aggregate`, in order: model, format, then every registered metric's summary fields."""
    return ["model", "format", *summary_fields()]


#: columns of :func:`aggregate` with the metrics registered at import (see :func:`aggregate_columns`)
AGGREGATE_COLUMNS = aggregate_columns()


def aggregate(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Per model × format figures from scored run records (``record["scores"]``, derived by
    :func:`harness.metrics.ensure_scores`).

    Rows are sorted by model, then format, so the table (and every report
    built from it) is the same for the same records.
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(str(record.get("model")), str(record.get("format")))].append(record)
    rows = [{"model": m, "format": f, **summarise(groups[(m, f)])} for m, f in sorted(groups)]
    return pd.DataFrame(rows, columns=aggregate_columns())


def breakdown(records: Iterable[Mapping[str, Any]], by: str = "suite") -> pd.DataFrame:
    """Task success per model × format × suite (``by="suite"``) or BFCL category (``by="category"``)."""
    if by not in ("suite", "category"):
        raise ValueError(f"breakdown by {by!r}: expected 'suite' or 'category'")
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in results_only(records):
        suite = record.get("suite")
        key = bfcl_category(suite) if by == "category" else suite
        if key is None:
            continue
        groups[(str(record.get("model")), str(record.get("format")), str(key))].append(record)
    rows = []
    for model, fmt, key in sorted(groups):
        group = groups[(model, fmt, key)]
        judged = [r for r in group if _scores(r).get("task_success") is not None]
        passed = sum(1 for r in judged if _scores(r).get("task_success"))
        low, high = wilson_interval(passed, len(judged))
        rows.append(
            {"model": model, "format": fmt, by: key, "runs": len(group), "passed": passed,
             "task_success": ratio(passed, len(judged)), "ci_low": low, "ci_high": high}
        )
    return pd.DataFrame(rows, columns=["model", "format", by, "runs", "passed", "task_success", "ci_low", "ci_high"])


def format_sensitivity(table: pd.DataFrame) -> pd.DataFrame:
    """Per model: how much the choice of format matters to call-task success (best − worst, population std).

    Best and worst are named by :func:`rank_key`, the order tuning uses.
    """
    rows = []
    for model, group in table.groupby("model", sort=True):
        rates = group.dropna(subset=["call_task_success"])
        if rates.empty:
            continue
        ranked = rank_formats(rates.to_dict(orient="records"))
        values = [float(v) for v in rates["call_task_success"]]
        rows.append(
            {
                "model": model,
                "formats": len(values),
                "best_format": ranked[0]["format"],
                "best": max(values),
                "worst_format": ranked[-1]["format"],
                "worst": min(values),
                "sensitivity": max(values) - min(values),
                "std": statistics.pstdev(values) if len(values) > 1 else 0.0,
            }
        )
    return pd.DataFrame(
        rows, columns=["model", "formats", "best_format", "best", "worst_format", "worst", "sensitivity", "std"]
    )


__all__ = [
    "AGGREGATE_COLUMNS",
    "Z95",
    "aggregate",
    "aggregate_columns",
    "bfcl_category",
    "breakdown",
    "format_sensitivity",
    "earned_recommendation",
    "intervals_overlap",
    "mean_pass_k",
    "pass_at_k",
    "pass_hat_k",
    "rank_formats",
    "rank_key",
    "ratio",
    "summarise",
    "wilson_interval",
]


def rank_key(row: Mapping[str, Any]) -> tuple[float, float, float, float, str]:
    """Sort key for "which format is best": call-task success, then restraint, parse success, decode speed.

    Call tasks come first because a format can pass every restraint task by
    never calling; missing figures rank below any measured one; the format
    name breaks exact ties so the choice is reproducible.
    """

    def value(name: str) -> float:
        v = row.get(name)
        return -math.inf if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    return (-value("call_task_success"), -value("restraint"), -value("parse_success"), -value("decode_tps"),
            str(row.get("format")))


def rank_formats(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Format rows (as from :func:`aggregate`) best first, by :func:`rank_key`."""
    return sorted(rows, key=rank_key)


def intervals_overlap(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "call_") -> bool:
    """Do two rows' Wilson intervals overlap (the lead may be noise)? Call-task intervals by default."""
    low, high = f"{prefix}ci_low", f"{prefix}ci_high"
    return float(a[low]) <= float(b[high]) and float(b[low]) <= float(a[high])


def earned_recommendation(row: Mapping[str, Any]) -> bool:
    """A format may be recommended only once it has passed at least one task that needs a call."""
    return int(row.get("call_passed") or 0) > 0
