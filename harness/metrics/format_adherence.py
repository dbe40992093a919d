"""Format adherence: calls written in the family the format teaches (``native``: in the tool_calls field).

Not judged for a custom format, whose taught family is unknown.
"""

from __future__ import annotations

from typing import Any

from harness.intervals import ratio
from harness.metrics.base import Column, CountedRate, Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import COUNT, RATE


@register
class FormatAdherence(Metric):
    name = "format_adherence"
    position = 80
    description = "Calls in the family the format teaches / calls judged (all calls of a preset's runs)."
    run_fields = ("adherence_calls", "adherent_calls", "format_adherence")
    summary_fields = {"adherence_calls": COUNT, "adherent_calls": COUNT, "format_adherence": RATE}
    columns = (
        Column("Adherence", CountedRate("adherent_calls", "adherence_calls"),
               "calls written in the format's own family (for native formats: in the tool_calls field)", rank=60),
    )

    def score(self, run: RunJudgement) -> dict[str, Any]:
        judged = len(run.calls) if run.family is not None else 0
        adherent = sum(1 for c in run.calls if c.call.format == run.family) if run.family is not None else 0
        return {"adherence_calls": judged, "adherent_calls": adherent, "format_adherence": ratio(adherent, judged)}

    def summarise(self, group: Group) -> dict[str, Any]:
        judged, adherent = group.total("adherence_calls"), group.total("adherent_calls")
        return {"adherence_calls": judged, "adherent_calls": adherent, "format_adherence": ratio(adherent, judged)}
