"""Every figure the reports and tuning show, one module per metric, collected by ``@register``.

Scoring is pure and happens when a report or a tuning profile is built:
:func:`score_run` reads a run record against its scenario once
(:func:`~harness.metrics.judge.judge`) and asks each registered metric for
its figures; :func:`summarise` asks each metric to aggregate a group of runs.
A record holds what happened; scores are derived, so a new or changed
metric never rewrites a committed record.

To add a metric, write one module here (see :mod:`harness.metrics.leaks` for
a small one) and its test: every module of the package is imported at start-up
and registers itself. ``docs/architecture.md`` walks through it.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
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
from harness.metrics.cache import cached_scores
from harness.metrics.judge import SCORER_VERSION, RunJudgement, judge
from harness.metrics.markup import find_leak, leak_triggers
from harness.metrics.turns import CLEAN_TERMINATIONS
from harness.outcomes import Outcome, errored_by_class, outcome_of, results_only
from harness.runrecord import RunRecord
from harness.scenario_model import Scenario

#: modules of this package that hold the machinery, not a metric
_NOT_METRICS = frozenset({"base", "cache", "judge", "markup", "schema", "turns"})


def _register_all() -> None:
    """Import every metric module of the package; each registers itself (a new file is all a new metric needs)."""
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name not in _NOT_METRICS:
            importlib.import_module(f"{__name__}.{module.name}")


_register_all()


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


def scores_for(record: Mapping[str, Any], scenario: Scenario | None = None) -> dict[str, Any]:
    """:func:`score_run` with the leak triggers of the registered families, computed once per process
    for the same record, scenario and metric versions (see :mod:`harness.metrics.cache`)."""
    return cached_scores(record, scenario, score_run)


def ensure_scores(
    records: Iterable[Mapping[str, Any]], scenarios: Mapping[tuple[str, str], Scenario] | None = None
) -> list[dict[str, Any]]:
    """Copies of ``records``, each with ``scores`` derived from what it recorded; a stored ``scores`` is ignored.

    A record holds what happened; its figures are derived here, every time a
    report or a tuning profile is built (:func:`harness.metrics.scores_for`,
    cached by record, scenario hash and metric versions). Records written
    before the runner stopped storing scores still carry a ``scores`` block
    on disk: it is replaced, never trusted, so improving a metric updates
    every report without touching a committed record.

    A record is judged against its scenario when the scenario is known and
    unchanged since the run (same ``scenario_hash``). A run of a scenario that
    changed since, or is no longer in the suites, answered a question that is
    not asked any more: it gets the scenario-free figures (parsing, tiers,
    throughput, errors) and no task verdict.
    """
    out = []
    unjudged: list[str] = []
    for record in records:
        scenario = (scenarios or {}).get((str(record.get("suite")), str(record.get("scenario"))))
        if scenario is not None and record.get("scenario_hash") not in (None, scenario.scenario_hash):
            scenario = None
        if scenario is None:
            unjudged.append(f"{record.get('suite')}/{record.get('scenario')}")
        out.append({**record, "scores": scores_for(record, scenario)})
    if unjudged:
        warnings.warn(f"{len(unjudged)} run(s) have no task verdict: their scenario changed since they ran or is not "
                      f"among the suites given (e.g. {unjudged[0]}; re-run them, or pass their suites)",
                      UnjudgedRunsWarning, stacklevel=2)
    return out


class UnjudgedRunsWarning(UserWarning):
    """Runs shown without a task verdict: the scenario they answered is not the one known now."""


def _scores(record: Mapping[str, Any]) -> Mapping[str, Any]:
    scores = record.get("scores")
    return scores if isinstance(scores, Mapping) else {}


def summarise(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One row of figures for a group of scored run records (``record["scores"]`` from :func:`ensure_scores`), every metric's.

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
    "UnjudgedRunsWarning",
    "columns",
    "ensure_scores",
    "find_leak",
    "format_row_schema",
    "judge",
    "leak_triggers",
    "metrics",
    "metrics_version",
    "register",
    "score_run",
    "scores_for",
    "summarise",
    "summary_fields",
    "unregister",
]
