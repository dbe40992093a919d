"""Throughput from the server's own counters: Σ tokens / Σ nanoseconds per run, the median run per group."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from harness.intervals import ratio
from harness.metrics.base import Column, Figure, Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import MEASURE


def median(values: Iterable[float | None]) -> float | None:
    """The median of the measured values (``None`` when none was measured)."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


@register
class Throughput(Metric):
    name = "throughput"
    position = 120
    description = ("Decode and prompt tokens per second from the server's counters (Σ tokens / Σ eval ns × 1e9 "
                   "per run, rounds without both figures left out); the median run per group.")
    run_fields = ("decode_tokens", "decode_ns", "prompt_tokens", "prompt_ns", "decode_tps", "prompt_tps")
    summary_fields = {"decode_tps": MEASURE, "prompt_tps": MEASURE}
    columns = (
        Column("Decode tok/s", Figure("decode_tps"), "generation speed from the server's own counters (median run)",
               rank=90, in_index=True),
        Column("Prompt tok/s", Figure("prompt_tps"), "prompt-reading speed from the server's own counters (median run)",
               rank=100),
    )

    def score(self, run: RunJudgement) -> dict[str, Any]:
        decode_tokens = decode_ns = prompt_tokens = prompt_ns = 0
        for seen in run.rounds:
            counters = seen.round.measured
            if counters.completion_tokens and counters.eval_ns:
                decode_tokens += counters.completion_tokens
                decode_ns += counters.eval_ns
            if counters.prompt_tokens and counters.prompt_eval_ns:
                prompt_tokens += counters.prompt_tokens
                prompt_ns += counters.prompt_eval_ns
        return {
            "decode_tokens": decode_tokens, "decode_ns": decode_ns, "prompt_tokens": prompt_tokens,
            "prompt_ns": prompt_ns, "decode_tps": ratio(decode_tokens * 1e9, decode_ns),
            "prompt_tps": ratio(prompt_tokens * 1e9, prompt_ns),
        }

    def summarise(self, group: Group) -> dict[str, Any]:
        return {"decode_tps": median(group.values("decode_tps")), "prompt_tps": median(group.values("prompt_tps"))}
