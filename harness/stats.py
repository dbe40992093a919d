"""Rates with honest uncertainty, pass@k, and the per model × format table.

A success rate from 12 runs is a range, not a number: reports and tuning carry
Wilson score intervals (good behaviour near 0 and 1 and for small n, unlike the
normal approximation) so "format A beats format B" is only claimed when the
data supports it. pass@k / pass^k use the unbiased estimators over repeats
(Chen et al. 2021 for pass@k; the τ-bench "pass^k" for reliability).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from harness.outcomes import Outcome, errored_by_class, outcome_of, results_only

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


def bfcl_category(suite: str | None) -> str | None:
    """``bfcl/simple_python`` → ``simple_python``; other suites have no BFCL category."""
    if suite and suite.startswith("bfcl/"):
        return suite.split("/", 1)[1] or None
    return None


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _scores(record: Mapping[str, Any]) -> Mapping[str, Any]:
    scores = record.get("scores")
    return scores if isinstance(scores, Mapping) else {}


def _rate_with_interval(passed: int, judged: int) -> tuple[float | None, float, float]:
    low, high = wilson_interval(passed, judged)
    return _ratio(passed, judged), low, high


def summarise(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One row of figures for a group of run records.

    Errored runs (see :mod:`harness.outcomes`) are counted and otherwise left
    out: a refused connection says nothing about a format. Runs the server
    refused as unsupported are results (the format does not work) and count
    as failed tasks. Call-task success (tasks whose right answer includes a
    call) is reported apart from restraint (tasks whose right answer is no
    call), because a format that never calls passes every restraint task.

    Rates over calls are pooled (Σ numerator / Σ denominator), so a run with
    ten calls weighs more than a run with one; rates over runs count runs.
    Every rate comes with its numerator and denominator.
    """
    errored = errored_by_class(records)
    unsupported = sum(1 for r in records if outcome_of(r) is Outcome.UNSUPPORTED)
    records = results_only(records)
    scores = [_scores(r) for r in records]
    runs = len(records)
    # runs scored without their scenario have task_success None: not judged, not failed
    judged = sum(1 for s in scores if s.get("task_success") is not None)
    passed = sum(1 for s in scores if s.get("task_success"))
    task_success, low, high = _rate_with_interval(passed, judged)
    calls = [s for s in scores if s.get("task_kind") == "call" and s.get("task_success") is not None]
    call_passed = sum(1 for s in calls if s.get("task_success"))
    call_success, call_low, call_high = _rate_with_interval(call_passed, len(calls))
    restraint = [s for s in scores if s.get("task_kind") == "restraint" and s.get("task_success") is not None]
    restraint_passed = sum(1 for s in restraint if s.get("task_success"))
    errors = 0
    for s in scores:
        errors += sum((s.get("errors") or {}).values()) + sum((s.get("backend_errors") or {}).values())
    by_scenario: dict[tuple[Any, Any], list[bool]] = defaultdict(list)
    for r, s in zip(records, scores):
        if s.get("task_success") is not None:
            by_scenario[(r.get("suite"), r.get("scenario"))].append(bool(s.get("task_success")))
    k = min((len(v) for v in by_scenario.values()), default=0)
    p_at, p_hat = mean_pass_k(by_scenario, k) if k >= 2 else (None, None)
    calls_meant = sum(s.get("calls_meant", 0) for s in scores)
    adherence_calls = sum(s.get("adherence_calls", 0) for s in scores)
    args_checked = sum(s.get("args_checked", 0) for s in scores)
    return {
        "runs": runs,
        "errored": sum(errored.values()),
        "errored_by_class": errored,
        "unsupported": unsupported,
        "judged": judged,
        "passed": passed,
        "task_success": task_success,
        "ci_low": low,
        "ci_high": high,
        "call_tasks": len(calls),
        "call_passed": call_passed,
        "call_task_success": call_success,
        "call_ci_low": call_low,
        "call_ci_high": call_high,
        "restraint_tasks": len(restraint),
        "restraint_passed": restraint_passed,
        "restraint": _ratio(restraint_passed, len(restraint)),
        "calls_meant": calls_meant,
        "calls_extracted": sum(s.get("calls_extracted", 0) for s in scores),
        "parse_success": _ratio(sum(s.get("calls_extracted", 0) for s in scores), calls_meant),
        "leaks": sum(1 for s in scores if s.get("leaks")),
        "leak_rate": _ratio(sum(1 for s in scores if s.get("leaks")), runs),
        "args_checked": args_checked,
        "args_valid": sum(s.get("args_valid", 0) for s in scores),
        "argument_validity": _ratio(sum(s.get("args_valid", 0) for s in scores), args_checked),
        "adherence_calls": adherence_calls,
        "adherent_calls": sum(s.get("adherent_calls", 0) for s in scores),
        "format_adherence": _ratio(sum(s.get("adherent_calls", 0) for s in scores), adherence_calls),
        "escalation_attempts": sum(s.get("escalation_attempts", 0) for s in scores),
        "blocked": sum(s.get("blocked", 0) for s in scores),
        "executed_violations": sum(s.get("executed_violations", 0) for s in scores),
        "clean_terminations": sum(1 for s in scores if s.get("clean_termination")),
        "clean_termination_rate": _ratio(sum(1 for s in scores if s.get("clean_termination")), runs),
        "conformance_failures": sum(len(s.get("conformance_failures") or []) for s in scores),
        "decode_tps": _median(s.get("decode_tps") for s in scores),
        "prompt_tps": _median(s.get("prompt_tps") for s in scores),
        "wall_s": _median(s.get("wall_s") for s in scores),
        "ttft_s": _median(s.get("ttft_s") for s in scores),
        "errors": errors,
        "k": k if k >= 2 else None,
        "pass_at_k": p_at,
        "pass_hat_k": p_hat,
    }


#: columns of :func:`aggregate`, in order
AGGREGATE_COLUMNS = ["model", "format", *summarise([]).keys()]


def aggregate(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Per model × format figures from scored run records (``record["scores"]``).

    Rows are sorted by model, then format, so the table (and every report
    built from it) is the same for the same records.
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(str(record.get("model")), str(record.get("format")))].append(record)
    rows = [{"model": m, "format": f, **summarise(groups[(m, f)])} for m, f in sorted(groups)]
    return pd.DataFrame(rows, columns=AGGREGATE_COLUMNS)


def breakdown(records: Iterable[Mapping[str, Any]], by: str = "suite") -> pd.DataFrame:
    """Task success per model × format × suite (``by="suite"``) or BFCL category (``by="category"``)."""
    if by not in ("suite", "category"):
        raise ValueError(f"breakdown by {by!r}: expected 'suite' or 'category'")
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in results_only(records):
        suite = record.get("suite")
        key = bfcl_category(suite) if by == "category" else suite
        if key is None:
            continue
        groups[(str(record.get("model")), str(record.get("format")), str(key))].append(record)
    rows = []
    for model, fmt, key in sorted(groups):
        group = groups[(model, fmt, key)]
        judged = [r for r in group if _scores(r).get("task_success") is not None]
        passed = sum(1 for r in judged if _scores(r).get("task_success"))
        low, high = wilson_interval(passed, len(judged))
        rows.append(
            {"model": model, "format": fmt, by: key, "runs": len(group), "passed": passed,
             "task_success": _ratio(passed, len(judged)), "ci_low": low, "ci_high": high}
        )
    return pd.DataFrame(rows, columns=["model", "format", by, "runs", "passed", "task_success", "ci_low", "ci_high"])


def format_sensitivity(table: pd.DataFrame) -> pd.DataFrame:
    """Per model: how much the choice of format matters to call-task success (best − worst, population std).

    Best and worst are named by :func:`rank_key`, the order tuning uses.
    """
    rows = []
    for model, group in table.groupby("model", sort=True):
        rates = group.dropna(subset=["call_task_success"])
        if rates.empty:
            continue
        ranked = rank_formats(rates.to_dict(orient="records"))
        values = [float(v) for v in rates["call_task_success"]]
        rows.append(
            {
                "model": model,
                "formats": len(values),
                "best_format": ranked[0]["format"],
                "best": max(values),
                "worst_format": ranked[-1]["format"],
                "worst": min(values),
                "sensitivity": max(values) - min(values),
                "std": statistics.pstdev(values) if len(values) > 1 else 0.0,
            }
        )
    return pd.DataFrame(
        rows, columns=["model", "formats", "best_format", "best", "worst_format", "worst", "sensitivity", "std"]
    )


__all__ = [
    "AGGREGATE_COLUMNS",
    "Z95",
    "aggregate",
    "bfcl_category",
    "breakdown",
    "format_sensitivity",
    "earned_recommendation",
    "intervals_overlap",
    "mean_pass_k",
    "pass_at_k",
    "pass_hat_k",
    "rank_formats",
    "rank_key",
    "summarise",
    "wilson_interval",
]


def rank_key(row: Mapping[str, Any]) -> tuple[float, float, float, float, str]:
    """Sort key for "which format is best": call-task success, then restraint, parse success, decode speed.

    Call tasks come first because a format can pass every restraint task by
    never calling; missing figures rank below any measured one; the format
    name breaks exact ties so the choice is reproducible.
    """

    def value(name: str) -> float:
        v = row.get(name)
        return -math.inf if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    return (-value("call_task_success"), -value("restraint"), -value("parse_success"), -value("decode_tps"),
            str(row.get("format")))


def rank_formats(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Format rows (as from :func:`aggregate`) best first, by :func:`rank_key`."""
    return sorted(rows, key=rank_key)


def intervals_overlap(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "call_") -> bool:
    """Do two rows' Wilson intervals overlap (the lead may be noise)? Call-task intervals by default."""
    low, high = f"{prefix}ci_low", f"{prefix}ci_high"
    return float(a[low]) <= float(b[high]) and float(b[low]) <= float(a[high])


def earned_recommendation(row: Mapping[str, Any]) -> bool:
    """A format may be recommended only once it has passed at least one task that needs a call."""
    return int(row.get("call_passed") or 0) > 0
