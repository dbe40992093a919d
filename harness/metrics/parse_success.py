"""Parse success: calls extracted over calls the model meant to make.

Meant = extracted + call blocks the parser could not read (a truncation at a
reported offset counts once) + final answers that kept call markup. Pooled
over calls, so a run with ten calls weighs more than a run with one.
"""

from __future__ import annotations

from typing import Any

from harness.intervals import ratio
from harness.metrics.base import Column, CountedRate, Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import COUNT, RATE


@register
class ParseSuccess(Metric):
    name = "parse_success"
    position = 50
    description = "Calls extracted / calls the model meant (extracted + unreadable call blocks + leaked markup)."
    run_fields = ("calls_total", "calls_extracted", "calls_meant", "parse_success", "parse_failure_rounds")
    summary_fields = {"calls_meant": COUNT, "calls_extracted": COUNT, "parse_success": RATE}
    columns = (
        Column("Parse", CountedRate("calls_extracted", "calls_meant"),
               "calls extracted / calls the model meant to make", rank=40, in_index=True),
    )

    def score(self, run: RunJudgement) -> dict[str, Any]:
        extracted = len(run.calls)
        meant = extracted + sum(r.unread for r in run.rounds) + sum(1 for leak in run.leaks if leak)
        return {
            "calls_total": extracted,
            "calls_extracted": extracted,
            "calls_meant": meant,
            "parse_success": ratio(extracted, meant),
            "parse_failure_rounds": sum(1 for r in run.rounds if r.unread and not r.round.calls),
        }

    def summarise(self, group: Group) -> dict[str, Any]:
        meant, extracted = group.total("calls_meant"), group.total("calls_extracted")
        return {"calls_meant": meant, "calls_extracted": extracted, "parse_success": ratio(extracted, meant)}
