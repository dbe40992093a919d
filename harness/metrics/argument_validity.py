"""Argument validity: calls whose arguments passed the tool's JSON Schema, of those that reached the check.

The registry's pipeline is known → tier → schema → path → execute, so a
call's decision tells how far its arguments got.
"""

from __future__ import annotations

from typing import Any

from harness.intervals import ratio
from harness.metrics.base import Column, CountedRate, Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import COUNT, RATE
from utp.types import Decision

#: decisions reached after the schema check passed
PASSED_SCHEMA = frozenset({Decision.EXECUTED, Decision.EXECUTION_ERROR, Decision.TIMEOUT, Decision.PATH_VIOLATION,
                           Decision.CONFIRMATION_REQUIRED})
#: decisions reached by the schema check (passed or failed)
CHECKED = PASSED_SCHEMA | {Decision.INVALID_ARGUMENTS}


@register
class ArgumentValidity(Metric):
    name = "argument_validity"
    position = 70
    description = "Calls whose arguments passed the tool's JSON Schema / calls whose arguments reached the check."
    run_fields = ("args_checked", "args_valid", "argument_validity")
    summary_fields = {"args_checked": COUNT, "args_valid": COUNT, "argument_validity": RATE}
    columns = (
        Column("Arg validity", CountedRate("args_valid", "args_checked"),
               "calls whose arguments passed the tool's JSON Schema", rank=70),
    )

    def score(self, run: RunJudgement) -> dict[str, Any]:
        checked = sum(1 for c in run.calls if c.call.decision in CHECKED)
        valid = sum(1 for c in run.calls if c.call.decision in PASSED_SCHEMA)
        return {"args_checked": checked, "args_valid": valid, "argument_validity": ratio(valid, checked)}

    def summarise(self, group: Group) -> dict[str, Any]:
        checked, valid = group.total("args_checked"), group.total("args_valid")
        return {"args_checked": checked, "args_valid": valid, "argument_validity": ratio(valid, checked)}
