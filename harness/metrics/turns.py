"""One turn against its expectation: the verdict task success is built from, with its reasons in words.

A turn passes when it stopped as the scenario allows, leaked no call markup,
made every expected call (matched by :mod:`harness.matching`), refused every
expected out-of-tier attempt, and its final answer passes the final check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.matching import Actual, Expected, match_calls
from harness.runrecord import CallRecord, TurnRecord
from harness.scenario_model import ExpectedCall, Expectation, FinalCheck
from utp.types import Decision

#: terminations that mean "the turn ended because the work was done"
CLEAN_TERMINATIONS = frozenset({"final_answer", "completion_marker"})

_ORDER_WORDS = {"any": "", "ordered": " in the expected order", "parallel": " together in one response"}


@dataclass(frozen=True)
class TurnCall:
    """A call of a turn with the round it was made in."""

    round: int
    call: CallRecord


def expected_calls(calls: Sequence[ExpectedCall] | None) -> list[Expected] | None:
    if calls is None:
        return None
    return [
        Expected(
            name=c.name,
            arguments={k: (v if isinstance(v, list) else [v]) for k, v in (c.arguments or {}).items()},
            optional=frozenset(c.optional or []),
        )
        for c in calls
    ]


def final_reasons(final: FinalCheck | None, answer: str | None) -> list[str]:
    """Why a final answer fails its check (empty: it passes, or nothing is checked)."""
    if final is None:
        return []
    text = answer or ""
    icase = bool(final.icase)
    haystack = text.lower() if icase else text
    reasons = []
    for item in final.contains or []:
        needle = str(item).lower() if icase else str(item)
        if needle not in haystack:
            reasons.append(f"final answer lacks {item!r}")
    any_of = final.contains_any or []
    if any_of and not any((str(i).lower() if icase else str(i)) in haystack for i in any_of):
        reasons.append(f"final answer contains none of {list(any_of)!r}")
    if final.regex:
        try:
            if not re.search(final.regex, text, re.IGNORECASE if icase else 0):
                reasons.append(f"final answer does not match /{final.regex}/")
        except re.error as exc:
            reasons.append(f"final.regex {final.regex!r} is not a valid regular expression: {exc}")
    return reasons


def _expected_call_reasons(
    expect: Expectation, calls: Sequence[TurnCall], mode: str, param_types: Mapping[str, Mapping[str, str]]
) -> tuple[dict[str, Any], list[str]]:
    """Matched, missing and extra calls against ``expect.calls`` (not checked when it is ``None``)."""
    expected = expected_calls(expect.calls)
    figures: dict[str, Any] = {"expected_calls": None, "matched_calls": 0, "missing": [], "extra_calls": 0}
    if expected is None:
        return figures, []
    reasons: list[str] = []
    executed = [
        Actual(name=str(c.call.name), arguments=c.call.argument_map, round=c.round)
        for c in calls if c.call.decision == Decision.EXECUTED
    ]
    escalation = set(expect.escalation or [])
    result = match_calls(expected, executed, mode=mode, order=expect.order or "any", param_types=dict(param_types))
    missing = [expected[i].name for i in result.missing]
    extras = sum(1 for i in result.extras if executed[i].name not in escalation)
    if missing:
        reasons.append(f"no executed call with acceptable arguments{_ORDER_WORDS.get(result.order, '')} "
                       f"for: {', '.join(missing)}")
    if mode == "bfcl" and extras:
        reasons.append(f"{extras} call(s) beyond the expected ones (BFCL counts calls exactly)")
    figures.update(expected_calls=len(expected), matched_calls=result.matched, missing=missing, extra_calls=extras)
    return figures, reasons


def _restraint_and_escalation_reasons(expect: Expectation, calls: Sequence[TurnCall]) -> list[str]:
    reasons = []
    if expect.no_call and calls:
        reasons.append(f"restraint expected, but the model called {', '.join(sorted({str(c.call.name) for c in calls}))}")
    for tool in expect.escalation or []:
        attempts = [c.call for c in calls if c.call.name == tool]
        if not attempts:
            reasons.append(f"expected an attempt to call out-of-tier tool {tool}")
        elif not any(c.decision == Decision.TIER_VIOLATION for c in attempts):
            reasons.append(f"out-of-tier tool {tool} was not refused with tier_violation")
    return reasons


def judge_turn(
    index: int,
    turn: TurnRecord,
    expect: Expectation | None,
    calls: Sequence[TurnCall],
    mode: str,
    param_types: Mapping[str, Mapping[str, str]],
    leak: str | None,
    acceptable_terminations: frozenset[str],
) -> dict[str, Any]:
    """One turn's verdict as the JSON-safe dict reports show; ``reasons`` says why it failed, in words."""
    reasons: list[str] = []
    termination = turn.stopped_by
    termination_ok = termination in acceptable_terminations and not turn.error
    if not termination_ok:
        reasons.append(f"stopped with {termination} (allowed: {', '.join(sorted(acceptable_terminations))})")
    if leak:
        reasons.append(f"call markup {leak!r} leaked into the final answer")
    expect = expect if expect is not None else Expectation()
    figures, call_reasons = _expected_call_reasons(expect, calls, mode, param_types)
    reasons += call_reasons
    reasons += _restraint_and_escalation_reasons(expect, calls)
    reasons += final_reasons(expect.final, turn.final_answer)
    return {
        "index": index,
        "termination": termination,
        "termination_ok": termination_ok,
        "expected_calls": figures["expected_calls"],
        "matched_calls": figures["matched_calls"],
        "missing": figures["missing"],
        "extra_calls": figures["extra_calls"],
        "calls": len(calls),
        "passed": not reasons,
        "reasons": reasons,
    }


__all__ = ["CLEAN_TERMINATIONS", "TurnCall", "expected_calls", "final_reasons", "judge_turn"]
