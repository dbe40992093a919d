"""Leaks: runs whose final answer kept call markup (a call the model meant that was never read)."""

from __future__ import annotations

from typing import Any

from harness.intervals import ratio
from harness.metrics.base import Column, CountedRate, Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import COUNT, RATE


@register
class Leaks(Metric):
    name = "leaks"
    position = 60
    description = "Turns whose final answer kept call markup; summarised as runs with a leak over runs."
    run_fields = ("leaks",)
    summary_fields = {"leaks": COUNT, "leak_rate": RATE}
    columns = (
        Column("Leaks", CountedRate("leaks", "runs"), "runs whose final answer kept call markup (fewer is better)",
               rank=50),
    )

    def score(self, run: RunJudgement) -> dict[str, Any]:
        return {"leaks": sum(1 for leak in run.leaks if leak)}

    def summarise(self, group: Group) -> dict[str, Any]:
        leaked = group.runs_with("leaks")
        return {"leaks": leaked, "leak_rate": ratio(leaked, len(group.scores))}
