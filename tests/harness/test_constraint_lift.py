"""The report's answer to "does constraining help this model?" (issue #27)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.reporting.constraint import constraint_lift, lift_cell, newcombe_difference
from harness.reporting.jsonreport import model_report
from harness.metrics import SCORER_VERSION


@pytest.mark.parametrize(
    ("a", "n_a", "b", "n_b", "low", "high"),
    [(56, 70, 48, 80, 0.0524, 0.3339), (9, 10, 3, 10, 0.1705, 0.8090), (6, 7, 2, 7, 0.0582, 0.8062),
     (5, 56, 0, 29, -0.0381, 0.1926)],
)
def test_newcombe_matches_the_published_table(a: int, n_a: int, b: int, n_b: int, low: float, high: float) -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, Table II, method 10
    difference, got_low, got_high = newcombe_difference(a, n_a, b, n_b)
    assert difference == pytest.approx(a / n_a - b / n_b)
    assert (got_low, got_high) == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


@given(st.integers(1, 60), st.integers(1, 60), st.data())
def test_newcombe_interval_holds_the_estimate_and_stays_in_range(n_a: int, n_b: int, data: st.DataObject) -> None:
    a = data.draw(st.integers(0, n_a))
    b = data.draw(st.integers(0, n_b))
    difference, low, high = newcombe_difference(a, n_a, b, n_b)
    assert -1.0 <= low <= difference <= high <= 1.0


def test_newcombe_needs_trials_on_both_sides() -> None:
    with pytest.raises(ValueError, match="trials on both sides"):
        newcombe_difference(0, 0, 3, 10)


def _record(fmt: str, scenario: str, ok: bool, suite: str = "core/x", kind: str = "call") -> dict:
    return {
        "schema": 1, "model": "m", "format": fmt, "suite": suite, "scenario": scenario, "repeat": 0,
        "mode": "record", "synthetic": False, "provenance": {}, "turns": [], "error": None,
        "scores": {"scorer_version": SCORER_VERSION, "task_success": ok, "task_kind": kind, "calls_extracted": 1,
                   "calls_meant": 1, "errors": {}, "backend_errors": {}, "conformance_failures": [],
                   "clean_termination": True},
    }


def _runs(fmt: str, passed: int, tasks: int, suite: str = "core/x") -> list[dict]:
    return [_record(fmt, f"call-{i}", i < passed, suite) for i in range(tasks)]


def test_lift_is_over_the_best_free_form_preset_not_the_first() -> None:
    records = _runs("prompt-json", 3, 39) + _runs("constrained-json", 20, 39) + _runs("prompt-hermes", 12, 39)
    lift = constraint_lift(records)
    assert lift is not None
    assert (lift.constrained, lift.free_form) == ("constrained-json", "prompt-hermes")
    assert lift.lift == pytest.approx(8 / 39)
    assert "+21 points" in lift.sentence()


def test_both_sides_count_only_the_scenarios_the_constrained_preset_ran() -> None:
    # fewshot-json also ran a BFCL suite where it did well; the comparison is on core alone
    records = _runs("constrained-json", 2, 39) + _runs("fewshot-json", 5, 39) + _runs("fewshot-json", 50, 60, "bfcl/simple")
    lift = constraint_lift(records)
    assert lift is not None
    assert (lift.free_form_passed, lift.free_form_tasks) == (5, 39)


def test_a_lift_whose_interval_holds_zero_is_called_no_measurable_difference() -> None:
    lift = constraint_lift(_runs("constrained-json", 2, 39) + _runs("fewshot-json", 5, 39))
    assert lift is not None and not lift.significant
    assert lift.sentence().startswith("Constraining makes no measurable difference")
    assert "-8 points" in lift.sentence()


def test_a_clear_loss_is_stated_as_one() -> None:
    lift = constraint_lift(_runs("constrained-json", 0, 39) + _runs("prompt-hermes", 12, 39))
    assert lift is not None and lift.significant and lift.high < 0
    assert lift.sentence().startswith("Constraining hurts this model")


def test_no_lift_without_both_sides_measured() -> None:
    assert constraint_lift(_runs("prompt-hermes", 12, 39)) is None
    restraint_only = [_record("prompt-hermes", f"call-{i}", True, kind="restraint") for i in range(5)]
    assert constraint_lift(_runs("constrained-json", 1, 5) + restraint_only) is None


def test_the_report_and_its_verdict_carry_the_lift() -> None:
    report = model_report("m", _runs("constrained-json", 0, 39) + _runs("prompt-hermes", 12, 39))
    assert report["constraint_lift"]["free_form"] == "prompt-hermes"
    assert "Constraining hurts this model" in report["verdict"]["text"]
    assert lift_cell(report["constraint_lift"]).startswith("-31 points [")
    assert lift_cell(report["constraint_lift"]).endswith("vs prompt-hermes")
    assert lift_cell(None) == "not measured"


def test_a_difference_of_one_point_is_written_in_the_singular() -> None:
    from harness.reporting.constraint import points_span

    assert points_span(0.01, -0.12, 0.14) == "+1 point [-12, +14]"
    assert points_span(-0.011, -0.2, 0.1) == "-1 point [-20, +10]"
    assert points_span(0.02, -0.1, 0.1) == "+2 points [-10, +10]"
    assert points_span(0.0, -0.1, 0.1) == "0 points [-10, +10]"
