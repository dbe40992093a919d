"""Intervals, pass@k / pass^k, and the per model × format aggregation."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stats import (
    AGGREGATE_COLUMNS,
    aggregate,
    bfcl_category,
    breakdown,
    format_sensitivity,
    intervals_overlap,
    mean_pass_k,
    pass_at_k,
    pass_hat_k,
    rank_formats,
    wilson_interval,
)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_brackets_the_estimate(case):
    successes, n = case
    low, high = wilson_interval(successes, n)
    p = successes / n
    assert 0.0 <= low <= p <= high <= 1.0


def test_wilson_known_values():
    # reference values of the 95% Wilson score interval
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(5, 10)
    assert (low, high) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_narrows_with_more_runs():
    narrow = wilson_interval(80, 100)
    wide = wilson_interval(8, 10)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError, match="11/10"):
        wilson_interval(11, 10)


def _enumerate(n: int, c: int, k: int) -> tuple[float, float]:
    """Exact probabilities over every k-subset of n runs of which c succeeded."""
    runs = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    any_ok = sum(1 for s in subsets if any(runs[i] for i in s))
    all_ok = sum(1 for s in subsets if all(runs[i] for i in s))
    return any_ok / len(subsets), all_ok / len(subsets)


@pytest.mark.parametrize("n", range(1, 7))
def test_pass_at_k_and_pass_hat_k_match_enumeration(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            at, hat = _enumerate(n, c, k)
            assert pass_at_k(n, c, k) == pytest.approx(at)
            assert pass_hat_k(n, c, k) == pytest.approx(hat)


def test_pass_k_argument_checks_and_averaging():
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 0)
    at, hat = mean_pass_k({"a": [True, False], "b": [True, True], "c": [True]}, 2)
    # c has fewer than k repeats and is skipped
    assert at == pytest.approx((1.0 + 1.0) / 2)
    assert hat == pytest.approx((0.0 + 1.0) / 2)
    assert mean_pass_k({"a": [True]}, 2) == (None, None)


def _rec(model, fmt, ok, *, suite="core/single", scenario="s1", repeat=0, **scores):
    base = {
        "task_success": ok, "task_kind": "call", "calls_extracted": 1, "calls_meant": 1 if ok else 2, "leaks": 0,
        "args_checked": 1, "args_valid": 1, "adherence_calls": 1, "adherent_calls": 1 if ok else 0,
        "escalation_attempts": 0, "blocked": 0, "executed_violations": 0, "clean_termination": True,
        "conformance_failures": [], "decode_tps": 40.0 if ok else 20.0, "prompt_tps": 500.0,
        "wall_s": None, "ttft_s": None, "errors": {}, "backend_errors": {},
    }
    base.update(scores)
    return {"model": model, "format": fmt, "suite": suite, "scenario": scenario, "repeat": repeat, "scores": base}


def test_aggregate_per_model_and_format():
    records = [_rec("m", "native", True, repeat=0), _rec("m", "native", False, repeat=1),
               _rec("m", "prompt-hermes", True, repeat=0, errors={"invalid_arguments": 2}),
               _rec("m", "prompt-hermes", True, repeat=1)]
    table = aggregate(records)
    assert list(table.columns) == AGGREGATE_COLUMNS
    assert list(table["format"]) == ["native", "prompt-hermes"]
    native = table[table["format"] == "native"].iloc[0]
    assert native["runs"] == 2 and native["task_success"] == 0.5
    assert native["parse_success"] == pytest.approx(2 / 3)
    assert native["format_adherence"] == 0.5
    assert native["decode_tps"] == 30.0
    assert (native["ci_low"], native["ci_high"]) == wilson_interval(1, 2)
    assert native["k"] == 2 and native["pass_at_k"] == 1.0 and native["pass_hat_k"] == 0.0
    hermes = table[table["format"] == "prompt-hermes"].iloc[0]
    assert hermes["errors"] == 2 and hermes["task_success"] == 1.0


def test_unjudged_runs_do_not_count_as_failures():
    records = [_rec("m", "native", True), _rec("m", "native", None, repeat=1)]
    row = aggregate(records).iloc[0]
    assert row["runs"] == 2 and row["task_success"] == 1.0
    assert (row["ci_low"], row["ci_high"]) == wilson_interval(1, 1)
    only_unjudged = aggregate([_rec("m", "native", None)]).iloc[0]
    assert only_unjudged["task_success"] is None or only_unjudged["task_success"] != only_unjudged["task_success"]


def test_breakdown_by_suite_and_bfcl_category():
    records = [_rec("m", "native", True, suite="bfcl/simple_python"),
               _rec("m", "native", False, suite="bfcl/parallel", scenario="p"),
               _rec("m", "native", True, suite="core/single", scenario="c")]
    assert bfcl_category("bfcl/simple_python") == "simple_python"
    assert bfcl_category("core/single") is None
    cats = breakdown(records, "category")
    assert sorted(cats["category"]) == ["parallel", "simple_python"]
    assert list(cats.sort_values("category")["task_success"]) == [0.0, 1.0]
    suites = breakdown(records, "suite")
    assert len(suites) == 3
    with pytest.raises(ValueError, match="nonsense"):
        breakdown(records, "nonsense")


def test_format_sensitivity_is_spread_across_formats():
    records = [_rec("m", "native", True), _rec("m", "native", True, repeat=1),
               _rec("m", "prompt-json", False), _rec("m", "prompt-json", True, repeat=1),
               _rec("m", "prompt-hermes", False), _rec("m", "prompt-hermes", False, repeat=1)]
    sens = format_sensitivity(aggregate(records)).iloc[0]
    assert sens["best_format"] == "native" and sens["worst_format"] == "prompt-hermes"
    assert sens["sensitivity"] == 1.0
    assert sens["std"] == pytest.approx(math.sqrt(((1 - 0.5) ** 2 + 0 + (0 - 0.5) ** 2) / 3))


def test_ranking_uses_call_tasks_then_restraint_then_parse_then_speed():
    rows = [
        {"format": "a", "call_task_success": 0.8, "restraint": 1.0, "parse_success": 0.9, "decode_tps": 10.0},
        {"format": "b", "call_task_success": 0.8, "restraint": 1.0, "parse_success": 1.0, "decode_tps": 5.0},
        {"format": "c", "call_task_success": 0.8, "restraint": 1.0, "parse_success": 1.0, "decode_tps": 9.0},
        {"format": "d", "call_task_success": 0.9, "restraint": 0.0, "parse_success": 0.1, "decode_tps": None},
        {"format": "e", "call_task_success": None, "restraint": 1.0, "parse_success": 1.0, "decode_tps": 99.0},
        {"format": "f", "call_task_success": 0.8, "restraint": 0.5, "parse_success": 1.0, "decode_tps": 99.0},
    ]
    assert [r["format"] for r in rank_formats(rows)] == ["d", "c", "b", "a", "f", "e"]
    assert intervals_overlap({"call_ci_low": 0.2, "call_ci_high": 0.6}, {"call_ci_low": 0.5, "call_ci_high": 0.9})
    assert not intervals_overlap({"call_ci_low": 0.7, "call_ci_high": 0.95}, {"call_ci_low": 0.1, "call_ci_high": 0.4})
    assert intervals_overlap({"ci_low": 0.2, "ci_high": 0.6}, {"ci_low": 0.5, "ci_high": 0.9}, prefix="")
