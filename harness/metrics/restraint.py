"""Restraint: task success over the tasks whose right answer is no call (passed by not calling)."""

from __future__ import annotations

from typing import Any

from harness.intervals import ratio
from harness.metrics.base import Column, CountedRate, Group, Metric, register
from harness.metrics.schema import COUNT, RATE


@register
class Restraint(Metric):
    name = "restraint"
    position = 40
    description = "Task success over restraint tasks (the right answer is no call)."
    summary_fields = {"restraint_tasks": COUNT, "restraint_passed": COUNT, "restraint": RATE}
    columns = (
        Column("Restraint", CountedRate("restraint_passed", "restraint_tasks"),
               "tasks whose right answer is no call, passed by not calling", rank=30, in_index=True),
    )

    def summarise(self, group: Group) -> dict[str, Any]:
        tasks = [s for s in group.scores if s.get("task_kind") == "restraint" and s.get("task_success") is not None]
        passed = sum(1 for s in tasks if s.get("task_success"))
        return {"restraint_tasks": len(tasks), "restraint_passed": passed, "restraint": ratio(passed, len(tasks))}
