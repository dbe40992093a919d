"""Rates with honest uncertainty: Wilson score intervals and the pass@k / pass^k estimators.

A success rate from 12 runs is a range, not a number: reports and tuning carry
Wilson score intervals (good behaviour near 0 and 1 and for small n, unlike the
normal approximation) so "format A beats format B" is only claimed when the
data supports it. pass@k / pass^k use the unbiased estimators over repeats
(Chen et al. 2021 for pass@k; the τ-bench "pass^k" for reliability). Pure
arithmetic, shared by the metrics (:mod:`harness.metrics`) and the tables
(:mod:`harness.stats`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: z for a two-sided 95% interval
Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n`` (``(0, 1)`` when n is 0)."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    # floating-point noise must not push the interval past the point estimate
    return (min(low, p), max(high, p))


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k draws without replacement from n runs, c correct, succeeds)."""
    _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all of k draws without replacement succeed): reliability, not luck."""
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n) or not (1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def mean_pass_k(outcomes: Mapping[Any, Sequence[bool]], k: int) -> tuple[float | None, float | None]:
    """pass@k and pass^k averaged over scenarios that have at least k repeats."""
    at, hat = [], []
    for runs in outcomes.values():
        n = len(runs)
        if n >= k:
            c = sum(1 for r in runs if r)
            at.append(pass_at_k(n, c, k))
            hat.append(pass_hat_k(n, c, k))
    if not at:
        return (None, None)
    return (sum(at) / len(at), sum(hat) / len(hat))


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or ``None`` (not measured) when nothing was counted."""
    return num / den if den else None


__all__ = ["Z95", "mean_pass_k", "pass_at_k", "pass_hat_k", "ratio", "wilson_interval"]
