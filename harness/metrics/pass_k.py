"""pass@k / pass^k over repeats: passed at least once / every time in k draws (k = the fewest repeats, ≥ 2)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from harness.intervals import mean_pass_k
from harness.metrics.base import Column, Group, Metric, Text, register
from harness.metrics.schema import RATE

DASH = "—"


def _percent(value: Any) -> str:
    return f"{value * 100:.0f}%" if isinstance(value, (int, float)) else DASH


def _cell(row: Mapping[str, Any]) -> str:
    if row.get("k") is None:
        return DASH
    return f"k={row['k']}: {_percent(row.get('pass_at_k'))} / {_percent(row.get('pass_hat_k'))}"


@register
class PassK(Metric):
    name = "pass_k"
    position = 150
    description = "Unbiased pass@k (Chen et al. 2021) and pass^k (τ-bench) averaged over scenarios with k repeats."
    summary_fields = {"k": {"type": ["integer", "null"], "minimum": 0}, "pass_at_k": RATE, "pass_hat_k": RATE}
    columns = (
        Column("pass@k / pass^k", Text(_cell), "with k repeats of a task: passed at least once / passed every time",
               rank=130),
    )

    def summarise(self, group: Group) -> dict[str, Any]:
        by_scenario: dict[tuple[Any, Any], list[bool]] = defaultdict(list)
        for record, score in zip(group.records, group.scores):
            if score.get("task_success") is not None:
                by_scenario[(record.get("suite"), record.get("scenario"))].append(bool(score.get("task_success")))
        k = min((len(v) for v in by_scenario.values()), default=0)
        at, hat = mean_pass_k(by_scenario, k) if k >= 2 else (None, None)
        return {"k": k if k >= 2 else None, "pass_at_k": at, "pass_hat_k": hat}
