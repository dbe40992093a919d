"""The report's answer to "does constraining help this model?" (issue #27)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.reporting.constraint import constraint_lift, newcombe_difference
from harness.reporting.verdict import build_verdict


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


def _row(name: str, passed: int, tasks: int) -> dict:
    return {"format": name, "call_passed": passed, "call_tasks": tasks, "call_task_success": passed / tasks if tasks else None,
            "restraint": None, "parse_success": None, "decode_tps": None}


def test_lift_is_over_the_best_free_form_preset_not_the_first() -> None:
    rows = [_row("prompt-json", 3, 39), _row("constrained-json", 20, 39), _row("prompt-hermes", 12, 39)]
    lift = constraint_lift(rows)
    assert lift is not None
    assert (lift.constrained, lift.free_form) == ("constrained-json", "prompt-hermes")
    assert lift.lift == pytest.approx(8 / 39)
    assert "+21 points" in lift.sentence()


def test_a_lift_whose_interval_holds_zero_is_called_no_measurable_difference() -> None:
    lift = constraint_lift([_row("constrained-json", 2, 39), _row("fewshot-json", 5, 39)])
    assert lift is not None and not lift.significant
    assert lift.sentence().startswith("Constraining makes no measurable difference")
    assert "-8 points" in lift.sentence()


def test_a_clear_loss_is_stated_as_one() -> None:
    lift = constraint_lift([_row("constrained-json", 0, 39), _row("prompt-hermes", 12, 39)])
    assert lift is not None and lift.significant and lift.high < 0
    assert lift.sentence().startswith("Constraining hurts this model")


def test_no_lift_without_both_sides_measured() -> None:
    assert constraint_lift([_row("prompt-hermes", 12, 39)]) is None
    assert constraint_lift([_row("constrained-json", 1, 39), _row("prompt-hermes", 0, 0)]) is None


def test_the_verdict_carries_the_lift() -> None:
    report = {
        "model": "m",
        "formats": [
            {**_row("constrained-json", 0, 39), "runs": 44, "call_ci_low": 0.0, "call_ci_high": 0.09},
            {**_row("prompt-hermes", 12, 39), "runs": 44, "call_ci_low": 0.19, "call_ci_high": 0.46},
        ],
        "errors": [],
        "sources": {"runs": 88, "errored": 0, "summary": "88 runs"},
    }
    verdict = build_verdict(report)
    assert verdict["constraint_lift"]["free_form"] == "prompt-hermes"
    assert "Constraining hurts this model" in verdict["text"]


def test_the_index_table_has_a_constraining_column() -> None:
    from harness.reporting.constraint import lift_cell

    lift = constraint_lift([_row("constrained-json", 0, 39), _row("prompt-hermes", 12, 39)])
    assert lift is not None
    assert lift_cell(lift.as_dict()).startswith("-31 points [")
    assert lift_cell(lift.as_dict()).endswith("vs prompt-hermes")
    assert lift_cell(None) == "not measured"
