"""Does constraining help this model, and by how much?

A constrained preset (``constrained-json``) forces the reply's shape with a
schema or grammar; the question a reader has is whether that finishes more
tasks than the best thing the model does without it. The answer is the lift
in call-task success over the model's best free-form preset, with Newcombe's
interval for a difference of two proportions (each side's Wilson interval
combined), stated whichever way it goes and "not measured" when either side
has no call tasks.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.reporting.text import counted_rate
from harness.stats import rank_formats, summarise, wilson_interval
from utp.formats import PRESETS


def is_constrained(format_name: str) -> bool:
    bundle = PRESETS.get(format_name)
    return bool(bundle and bundle.is_constrained)


def newcombe_difference(passed_a: int, n_a: int, passed_b: int, n_b: int) -> tuple[float, float, float]:
    """(difference, low, high) for ``passed_a/n_a − passed_b/n_b``: Newcombe's hybrid score interval.

    It keeps within [−1, 1] and behaves at 0 and n, where the Wald interval
    collapses; both sides need at least one trial.
    """
    if n_a < 1 or n_b < 1:
        raise ValueError(f"newcombe_difference needs trials on both sides, got n={n_a} and n={n_b}")
    p_a, p_b = passed_a / n_a, passed_b / n_b
    low_a, high_a = wilson_interval(passed_a, n_a)
    low_b, high_b = wilson_interval(passed_b, n_b)
    difference = p_a - p_b
    low = difference - math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2)
    high = difference + math.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2)
    return difference, max(-1.0, low), min(1.0, high)


@dataclass(frozen=True)
class ConstraintLift:
    """One constrained preset against the model's best free-form preset, on call tasks."""

    constrained: str
    constrained_passed: int
    constrained_tasks: int
    free_form: str
    free_form_passed: int
    free_form_tasks: int
    lift: float
    low: float
    high: float

    @property
    def significant(self) -> bool:
        """The interval excludes zero: constraining really helps (or really hurts)."""
        return self.low > 0 or self.high < 0

    def sentence(self) -> str:
        figures = (
            f"{self.constrained} {counted_rate(self.constrained_passed, self.constrained_tasks)} against "
            f"{self.free_form} {counted_rate(self.free_form_passed, self.free_form_tasks)}, the best free-form preset"
        )
        span = points_span(self.lift, self.low, self.high)
        if self.significant and self.lift > 0:
            verdict = f"Constraining helps this model: {span} on call tasks ({figures})."
        elif self.significant:
            verdict = f"Constraining hurts this model: {span} on call tasks ({figures})."
        else:
            verdict = (f"Constraining makes no measurable difference for this model: {span} on call tasks, "
                       f"an interval that includes 0 ({figures}).")
        return verdict

    def as_dict(self) -> dict[str, Any]:
        return {
            "constrained": self.constrained,
            "constrained_passed": self.constrained_passed,
            "constrained_tasks": self.constrained_tasks,
            "free_form": self.free_form,
            "free_form_passed": self.free_form_passed,
            "free_form_tasks": self.free_form_tasks,
            "lift": self.lift,
            "lift_ci": [self.low, self.high],
            "significant": self.significant,
            "text": self.sentence(),
        }


def signed_points(share: float) -> str:
    """``+12``, ``-8``, ``0``: percentage points with their sign."""
    value = round(share * 100)
    return f"{value:+d}" if value else "0"


def points_span(difference: float, low: float, high: float) -> str:
    """``+15 points [-6, +35]``: a difference of two rates with its interval, as every report writes it."""
    unit = "point" if abs(round(difference * 100)) == 1 else "points"
    return f"{signed_points(difference)} {unit} [{signed_points(low)}, {signed_points(high)}]"


def lift_cell(lift: Mapping[str, Any] | None) -> str:
    """``-31 points [-46, -18] vs prompt-hermes``: a report's constraint lift in a table cell."""
    if not lift:
        return "not measured"
    low, high = lift["lift_ci"]
    return f"{points_span(lift['lift'], low, high)} vs {lift['free_form']}"


def constraint_lift(records: Sequence[Mapping[str, Any]]) -> ConstraintLift | None:
    """The best constrained preset's lift over the best free-form one, on the same scenarios.

    Both sides count only the scenarios the constrained preset was run on (a
    constrained recording of the core suites is not compared with a free-form
    figure pooled over BFCL too); the free-form side is the preset that does
    best there. None when either side has no call task.
    """
    by_format: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_format[str(record.get("format"))].append(record)
    constrained_rows = [_row(name, runs) for name, runs in by_format.items() if is_constrained(name)]
    constrained = next((r for r in rank_formats(constrained_rows) if r["call_tasks"]), None)
    if constrained is None:
        return None
    scenarios = {_scenario_key(r) for r in by_format[constrained["format"]]}
    free_rows = [_row(name, [r for r in runs if _scenario_key(r) in scenarios])
                 for name, runs in by_format.items() if not is_constrained(name)]
    free_form = next((r for r in rank_formats(free_rows) if r["call_tasks"]), None)
    if free_form is None:
        return None
    passed_c, tasks_c = int(constrained["call_passed"]), int(constrained["call_tasks"])
    passed_f, tasks_f = int(free_form["call_passed"]), int(free_form["call_tasks"])
    lift, low, high = newcombe_difference(passed_c, tasks_c, passed_f, tasks_f)
    return ConstraintLift(str(constrained["format"]), passed_c, tasks_c, str(free_form["format"]), passed_f, tasks_f,
                          lift, low, high)


def _scenario_key(record: Mapping[str, Any]) -> tuple[str, str]:
    return (str(record.get("suite")), str(record.get("scenario")))


def _row(name: str, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One format's figures over these records, as the reports' format rows compute them."""
    return {"format": name, **summarise(records)}


__all__ = ["ConstraintLift", "constraint_lift", "is_constrained", "lift_cell", "newcombe_difference", "points_span", "signed_points"]
