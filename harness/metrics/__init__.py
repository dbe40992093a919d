"""Every figure the reports and tuning show, one module per metric, collected by ``@register``.

Scoring is pure and happens when a report or a tuning profile is built:
:func:`score_run` reads a run record against its scenario once
(:func:`~harness.metrics.judge.judge`) and asks each registered metric for
its figures; :func:`summarise` asks each metric to aggregate a group of runs.
A record holds what happened; scores are derived, so a new or changed
metric never rewrites a committed record.

To add a metric, write one module here (see :mod:`harness.metrics.leaks` for
a small one), import it below, and test it; ``docs/architecture.md`` walks
through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.metrics.base import (
    REGISTRY,
    Cell,
    Column,
    Count,
    CountedRate,
    Figure,
    Group,
    Metric,
    Text,
    columns,
    metrics,
    metrics_version,
    register,
    unregister,
)
from harness.metrics.judge import SCORER_VERSION, RunJudgement, judge
from harness.metrics.markup import find_leak, leak_triggers
from harness.metrics.turns import CLEAN_TERMINATIONS
from harness.outcomes import Outcome, errored_by_class, outcome_of, results_only
from harness.runrecord import RunRecord
from harness.scenarios import Scenario

# The registration order is the order of the summary fields (CSV and JSON columns).
from harness.metrics import runs as _runs  # noqa: E402,F401  (registers)
from harness.metrics import task_success as _task_success  # noqa: E402,F401
from harness.metrics import call_tasks as _call_tasks  # noqa: E402,F401
from harness.metrics import restraint as _restraint  # noqa: E402,F401
from harness.metrics import parse_success as _parse_success  # noqa: E402,F401
from harness.metrics import leaks as _leaks  # noqa: E402,F401
from harness.metrics import argument_validity as _argument_validity  # noqa: E402,F401
from harness.metrics import format_adherence as _format_adherence  # noqa: E402,F401
from harness.metrics import tier_enforcement as _tier_enforcement  # noqa: E402,F401
from harness.metrics import termination as _termination  # noqa: E402,F401
from harness.metrics import conformance as _conformance  # noqa: E402,F401
from harness.metrics import throughput as _throughput  # noqa: E402,F401
from harness.metrics import latency as _latency  # noqa: E402,F401
from harness.metrics import errors as _errors  # noqa: E402,F401
from harness.metrics import pass_k as _pass_k  # noqa: E402,F401


def score_run(
    record: RunRecord | Mapping[str, Any], scenario: Scenario | None = None, *, triggers: Iterable[str] | None = None
) -> dict[str, Any]:
    """Every registered metric's figures for one run (``scenario`` ``None``: only the scenario-free ones).

    ``triggers`` overrides the leak triggers (default: the parser registry's).
    """
    run = judge(record, scenario, triggers=triggers)
    scores: dict[str, Any] = {"scorer_version": SCORER_VERSION}
    for metric in REGISTRY.values():
        scores.update(metric.score(run))
    return scores


def _scores(record: Mapping[str, Any]) -> Mapping[str, Any]:
    scores = record.get("scores")
    return scores if isinstance(scores, Mapping) else {}


def summarise(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One row of figures for a group of scored run records (``record["scores"]``), every metric's.

    Errored runs (see :mod:`harness.outcomes`) are counted and otherwise left
    out: a refused connection says nothing about a format. Runs the server
    refused as unsupported are results and count as failed tasks. Rates over
    calls are pooled (Σ numerator / Σ denominator); rates over runs count runs.
    """
    results = results_only(records)
    group = Group(
        records=results,
        scores=[_scores(r) for r in results],
        errored_by_class=errored_by_class(records),
        unsupported=sum(1 for r in records if outcome_of(r) is Outcome.UNSUPPORTED),
    )
    row: dict[str, Any] = {}
    for metric in REGISTRY.values():
        row.update(metric.summarise(group))
    return row


def summary_fields() -> list[str]:
    """The keys of a :func:`summarise` row, in order."""
    return [name for metric in REGISTRY.values() for name in metric.summary_fields]


def format_row_schema() -> dict[str, Any]:
    """JSON Schema of one row of a report's ``formats`` (the format and every metric's summary fields)."""
    properties: dict[str, Any] = {"format": {"type": "string"}}
    for metric in REGISTRY.values():
        properties.update({name: dict(schema) for name, schema in metric.summary_fields.items()})
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


__all__ = [
    "CLEAN_TERMINATIONS",
    "Cell",
    "Column",
    "Count",
    "CountedRate",
    "Figure",
    "Group",
    "Metric",
    "REGISTRY",
    "RunJudgement",
    "SCORER_VERSION",
    "Text",
    "columns",
    "find_leak",
    "format_row_schema",
    "judge",
    "leak_triggers",
    "metrics",
    "metrics_version",
    "register",
    "score_run",
    "summarise",
    "summary_fields",
    "unregister",
]
