"""Runs: how many runs are results, how many errored (by class) and how many the server refused as unsupported."""

from __future__ import annotations

from typing import Any

from harness.metrics.base import Column, Count, Group, Metric, Text, register
from harness.metrics.schema import COUNT


def _runs_cell(row: Any) -> str:
    text = str(row["runs"]) + (f" (+{row['errored']} errored)" if row.get("errored") else "")
    if row.get("unsupported"):
        text += f" ({row['unsupported']} unsupported)"
    return text


@register
class Runs(Metric):
    name = "runs"
    position = 10
    description = ("Runs that produced a result. Errored runs (connection, server, recording or harness failures) "
                   "are counted by class and never scored; runs the server refused as unsupported are results "
                   "and count as failed tasks.")
    summary_fields = {
        "runs": COUNT,
        "errored": COUNT,
        "errored_by_class": {"type": "object", "additionalProperties": COUNT},
        "unsupported": COUNT,
    }
    columns = (
        Column("Runs", Text(_runs_cell), "runs that produced a result; errored runs are counted separately and never "
               "scored, and runs the server refused as unsupported count as failed", rank=10, in_index=True,
               index_cell=Count("runs")),
    )

    def summarise(self, group: Group) -> dict[str, Any]:
        return {
            "runs": len(group.records),
            "errored": sum(group.errored_by_class.values()),
            "errored_by_class": dict(group.errored_by_class),
            "unsupported": group.unsupported,
        }
