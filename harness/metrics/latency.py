"""Latency measured by the client: wall seconds per run and seconds to the first token (never in replay)."""

from __future__ import annotations

from typing import Any

from harness.metrics.base import Column, Figure, Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import MEASURE
from harness.metrics.throughput import median

NOT_MEASURED = "not measured"


@register
class Latency(Metric):
    name = "latency"
    position = 130
    description = "Client-measured seconds per run (Σ rounds) and to the first token; not measured in replay."
    run_fields = ("wall_s", "ttft_s")
    summary_fields = {"wall_s": MEASURE, "ttft_s": MEASURE}
    columns = (
        Column("Wall s", Figure("wall_s", 2, NOT_MEASURED), "median seconds per run, measured only live (not for replays)",
               rank=110),
        Column("TTFT s", Figure("ttft_s", 2, NOT_MEASURED), "median seconds to the first token, measured only live",
               rank=120),
    )

    def score(self, run: RunJudgement) -> dict[str, Any]:
        if run.record.replayed:
            return {"wall_s": None, "ttft_s": None}
        walls = [float(s.round.measured.wall_s) for s in run.rounds if s.round.measured.wall_s is not None]
        first = next((float(s.round.measured.ttft_s) for s in run.rounds if s.round.measured.ttft_s is not None), None)
        return {"wall_s": sum(walls) if walls else None, "ttft_s": first}

    def summarise(self, group: Group) -> dict[str, Any]:
        return {"wall_s": median(group.values("wall_s")), "ttft_s": median(group.values("ttft_s"))}
