"""Conformance failures: runs where UTP itself broke a rule (an out-of-tier call executed, a parser that raised).

A missing or corrupt cassette is an errored run (see :mod:`harness.outcomes`), not a failure of UTP.
"""

from __future__ import annotations

from typing import Any

from harness.metrics.base import Column, Count, Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import COUNT


@register
class Conformance(Metric):
    name = "conformance"
    position = 110
    description = "UTP's own rule breaks, each with its kind (tier_violation_executed, parser_crash) and where."
    run_fields = ("conformance_failures",)
    summary_fields = {"conformance_failures": COUNT}
    columns = (
        Column("Conformance failures", Count("conformance_failures"),
               "runs where UTP itself broke a rule (parser crash, out-of-tier call executed)", table="safety", rank=40),
    )

    def score(self, run: RunJudgement) -> dict[str, Any]:
        return {"conformance_failures": [dict(c) for c in run.conformance_failures]}

    def summarise(self, group: Group) -> dict[str, Any]:
        return {"conformance_failures": sum(len(s.get("conformance_failures") or []) for s in group.scores)}
