"""Turn the parser benchmarks' medians into the figures the issue's targets are stated in.

pytest-benchmark prints one row per benchmark; the targets are about
derived numbers (the median over the corpus records' medians, streaming over
one-shot, a megabyte of hostile input against ``json.loads`` of a megabyte),
so each benchmark files its median here and the summary does the arithmetic.
"""

from __future__ import annotations

import statistics
from typing import Any

import pytest

#: benchmark key -> median seconds, filled by the ``file_median`` fixture
MEDIANS: dict[str, float] = {}
#: the same keys -> fastest round (what the code costs when nothing else runs on the machine)
MINIMUMS: dict[str, float] = {}


@pytest.fixture
def file_median(benchmark: Any):
    """Call with a key after the benchmark ran: its median joins the summary."""

    def record(key: str) -> None:
        stats = getattr(benchmark, "stats", None)
        if stats is not None:
            MEDIANS[key] = stats.stats.median
            MINIMUMS[key] = stats.stats.min

    return record


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not MEDIANS:
        return
    write = terminalreporter.write_line
    terminalreporter.section("parser targets (medians)")
    corpus = [v for k, v in MEDIANS.items() if k.startswith("corpus:")]
    if corpus:
        figure = statistics.median(corpus) * 1e6
        fastest = statistics.median(v for k, v in MINIMUMS.items() if k.startswith("corpus:")) * 1e6
        write(f"corpus: median of {len(corpus)} per-record medians = {figure:.1f} us per parse (target <= 15 us); "
              f"of per-record fastest rounds = {fastest:.1f} us")
    one_shot = MEDIANS.get("stream:one-shot")
    if one_shot:
        for key in sorted(k for k in MEDIANS if k.startswith("stream:") and k != "stream:one-shot"):
            write(f"streaming {key[7:]}: {MEDIANS[key] * 1e6:.0f} us = {MEDIANS[key] / one_shot:.1f}x one-shot ({one_shot * 1e6:.0f} us) (target <= 2x)")
    prose = MEDIANS.get("prose:one-shot")
    if prose:
        for key in sorted(k for k in MEDIANS if k.startswith("prose:") and k != "prose:one-shot"):
            write(f"prose only, {key[6:]}: {MEDIANS[key] * 1e6:.0f} us = {MEDIANS[key] / prose:.1f}x one-shot ({prose * 1e6:.0f} us)")
    reference = MEDIANS.get("json.loads:1MB")
    for key in sorted(k for k in MEDIANS if k.startswith("hostile:") and k.endswith(":1MB")):
        ratio = f" = {MEDIANS[key] / reference:.1f}x json.loads" if reference else ""
        write(f"{key[8:]}: {MEDIANS[key] * 1e3:.1f} ms{ratio} (target <= 100 ms)")
    if "openers:one chunk" in MEDIANS and "openers:one-shot" in MEDIANS:
        chunk, shot = MEDIANS["openers:one chunk"], MEDIANS["openers:one-shot"]
        write(f'"[" * 40000 as one chunk: {chunk * 1e3:.1f} ms = {chunk / shot:.0f}x one-shot ({shot * 1e3:.2f} ms)')
    numbers_floor = MEDIANS.get("json.loads:numbers")
    for key in sorted(k for k in MEDIANS if k.startswith("numbers:")):
        ratio = f" = {MEDIANS[key] / numbers_floor:.0f}x json.loads of the same value" if numbers_floor else ""
        write(f"20,000-digit number flood, {key[8:]}: {MEDIANS[key] * 1e3:.2f} ms{ratio}")
    for key in ("first parse, new tool list", "first stream, new tool list"):
        if key in MEDIANS:
            write(f"{key}: {MEDIANS[key] * 1e3:.2f} ms")
    floods = {k[6:]: v for k, v in MEDIANS.items() if k.startswith("flood:")}
    if floods:
        over = sorted(((v, k) for k, v in floods.items() if v > 0.1), reverse=True)
        worst = max(floods.items(), key=lambda kv: kv[1])
        write(f"1 MB of one never-closed trigger, {len(floods)} kinds: {len(floods) - len(over)} within 100 ms; "
              f"median {statistics.median(floods.values()) * 1e3:.1f} ms, worst {worst[1] * 1e3:.1f} ms ({worst[0]})")
        for seconds, key in over:
            write(f"  over target: {key} {seconds * 1e3:.1f} ms")
