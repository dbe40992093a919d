"""Loop termination: how each turn stopped, and whether every turn stopped as the scenario allows."""

from __future__ import annotations

from typing import Any

from harness.intervals import ratio
from harness.metrics.base import Column, CountedRate, Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import COUNT, RATE


@register
class Termination(Metric):
    name = "termination"
    position = 100
    description = ("Each turn's Termination value; a clean stop is every turn ending as allowed (an answer or a "
                   "completion marker, unless the scenario says otherwise) with no run error.")
    run_fields = ("terminations", "clean_termination")
    summary_fields = {"clean_terminations": COUNT, "clean_termination_rate": RATE}
    columns = (
        Column("Clean stops", CountedRate("clean_terminations", "runs"),
               "runs that ended with an answer, not a round limit or an error", rank=80),
    )

    def score(self, run: RunJudgement) -> dict[str, Any]:
        record = run.record
        stops = [t["termination"] for t in run.turns]
        if not record.turns:
            stops.append("backend_error" if record.error else "unknown")
        clean = bool(run.turns) and all(t["termination_ok"] for t in run.turns) and not record.error
        return {"terminations": stops, "clean_termination": clean}

    def summarise(self, group: Group) -> dict[str, Any]:
        clean = group.runs_with("clean_termination")
        return {"clean_terminations": clean, "clean_termination_rate": ratio(clean, len(group.scores))}
