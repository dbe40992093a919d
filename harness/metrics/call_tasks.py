"""Call-task success: task success over the tasks whose right answer includes a call.

Reported apart from restraint because a format that never calls passes every
restraint task; formats are ranked on this rate (with its 95% Wilson interval).
"""

from __future__ import annotations

from typing import Any

from harness.intervals import ratio, wilson_interval
from harness.metrics.base import Column, CountedRate, Group, Metric, register
from harness.metrics.schema import BOUND, COUNT, RATE


@register
class CallTaskSuccess(Metric):
    name = "call_task_success"
    position = 30
    description = "Task success over call tasks (tasks whose right answer includes a call), with a 95% Wilson interval."
    summary_fields = {"call_tasks": COUNT, "call_passed": COUNT, "call_task_success": RATE,
                      "call_ci_low": BOUND, "call_ci_high": BOUND}
    columns = (
        Column("Call tasks [95% CI]", CountedRate("call_passed", "call_tasks", "call_ci_low", "call_ci_high"),
               "tasks whose right answer includes a call, passed only with every expected call, the final-answer "
               "check and a clean stop: passed/tasks (rate [95% interval]); formats are ranked on it",
               rank=20, in_index=True),
    )

    def summarise(self, group: Group) -> dict[str, Any]:
        calls = [s for s in group.scores if s.get("task_kind") == "call" and s.get("task_success") is not None]
        passed = sum(1 for s in calls if s.get("task_success"))
        low, high = wilson_interval(passed, len(calls))
        return {"call_tasks": len(calls), "call_passed": passed, "call_task_success": ratio(passed, len(calls)),
                "call_ci_low": low, "call_ci_high": high}
