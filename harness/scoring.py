"""Scores for one run record: did the task succeed, and what went wrong on the way.

A run can fail for reasons that say very different things about a format: the
model never meant to call (task), meant to but we could not read it (parse),
wrote the call in another family than it was taught (adherence), passed bad
arguments (validity), or looped (termination). Keeping them apart is what lets
tuning pick a format for the right reason. Safety outcomes are separate again:
an out-of-tier call that got executed is a *conformance failure* of UTP
itself, never a model weakness, and no score can hide it.

``score_run(record, scenario)`` returns a flat JSON-safe dict:

========================  ==================================================
key                        meaning
========================  ==================================================
``scorer_version``         bumps when a definition below changes
``task_success``           every turn passed and no conformance failure
                           (``None``: no scenario to judge)
``task_kind``              ``call``, ``restraint`` or ``answer`` (the
                           scenario's :class:`~harness.scenarios.TaskKind`)
``turns``                  per turn: expected/matched/missing/extra calls,
                           termination, ``passed``, ``reasons``
``calls_expected``         expected calls over all turns (checked turns only)
``calls_matched``          of those, matched by optimal assignment
``calls_total``            calls extracted (any decision)
``calls_extracted``        = ``calls_total``
``calls_meant``            extracted + unreadable call blocks + leaked calls
``parse_success``          extracted / meant (``None`` when nothing meant)
``parse_failure_rounds``   rounds with UNPARSEABLE diagnostics and no call
``leaks``                  turns whose final answer contains call markup
``escalation_attempts``    calls to tools above the turn's tier
``blocked``                of those, refused with ``tier_violation``
``executed_violations``    out-of-tier calls that were executed (must be 0)
``args_checked``           calls whose arguments reached the schema check
``args_valid``             of those, passed it
``argument_validity``      args_valid / args_checked
``adherence_calls``        calls judged for format adherence
``adherent_calls``         of those, in the family the format teaches
``format_adherence``       adherent_calls / adherence_calls
``terminations``           each turn's ``Termination`` value
``clean_termination``      every turn stopped as the scenario allows
``decode_tokens`` ...      server counters summed over rounds
``decode_tps``             Σ eval tokens / Σ eval ns × 1e9 (server's figures)
``prompt_tps``             Σ prompt tokens / Σ prompt-eval ns × 1e9
``wall_s`` / ``ttft_s``    client-measured; ``None`` in replay (not measured)
``errors``                 refusals and failures by kind (decision values)
``backend_errors``         backend failures by ``BackendErrorKind`` value
``conformance_failures``   ``[{"kind", "detail"}]``: ``tier_violation_executed``,
                           ``parser_crash`` (a missing or corrupt cassette is
                           an errored run, see :mod:`harness.outcomes`, not a
                           failure of UTP)
``failure_at``             ``{"turn", "round", "kind"}``: where it first went
                           wrong (kind ``parse``, ``leak`` or ``task``;
                           round -1 = the whole turn / its final answer)
========================  ==================================================
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.matching import Actual, Expected, match_calls
from harness.outcomes import error_kind
from utp.backends.base import BackendErrorKind
from utp.formats import PRESETS, FormatBundle
from utp.types import Decision, DiagnosticKind, ToolTier

SCORER_VERSION = 2

#: terminations that mean "the turn ended because the work was done"
CLEAN_TERMINATIONS = frozenset({"final_answer", "completion_marker"})


@dataclass(frozen=True)
class DecisionRule:
    """What a call's decision says about its arguments and whether it is an error."""

    #: the call got as far as the JSON Schema check
    args_checked: bool
    #: ... and passed it
    args_valid: bool
    #: counted among typed errors
    is_error: bool


#: the registry's pipeline is known → tier → schema → path → execute, so a
#: decision tells how far the arguments got
DECISIONS: dict[str, DecisionRule] = {
    Decision.EXECUTED: DecisionRule(True, True, False),
    Decision.EXECUTION_ERROR: DecisionRule(True, True, True),
    Decision.TIMEOUT: DecisionRule(True, True, True),
    Decision.PATH_VIOLATION: DecisionRule(True, True, True),
    Decision.CONFIRMATION_REQUIRED: DecisionRule(True, True, True),
    Decision.INVALID_ARGUMENTS: DecisionRule(True, False, True),
    Decision.UNKNOWN_TOOL: DecisionRule(False, False, True),
    Decision.TIER_VIOLATION: DecisionRule(False, False, True),
    Decision.DUPLICATE_STOPPED: DecisionRule(False, False, True),
}
_UNKNOWN_DECISION = DecisionRule(False, False, True)

#: triggers that also begin ordinary prose or only end a turn: not evidence of call markup
_NOT_LEAK_TRIGGERS = frozenset({"{", "[", "(", "<", "```", "<|end|>", "<|eot_id|>", "<|return|>"})
#: call markup is bracketed; word or prompt triggers ("Action:", ">>>") occur in normal answers
_MARKUP_CHAR = re.compile(r"[<\[{|｜]")

#: a round note or diagnostic saying a parser raised (families must never raise)
#: (the composite reports a family that raised as "<family>: parser error <Exc>: ...")
_PARSER_CRASH = re.compile(
    r"\bparser error\b|\b(pars\w*|famil\w*)\b.*\b(raised|crash\w*|exception|traceback)\b", re.IGNORECASE | re.DOTALL
)
#: error kinds the runner records when a replay cannot be trusted
CASSETTE_ERRORS = frozenset({"missing_cassette", "cassette_mismatch", "cassette_error"})
#: error kinds recognised at the start of an error string ("tools_unsupported (HTTP 400): ...")
KNOWN_ERROR_KINDS = frozenset({k.value for k in BackendErrorKind} | CASSETTE_ERRORS | {"harness_error"})


def leak_triggers() -> list[str]:
    """Literal call openers of the auto-enabled families that can only be markup.

    Left out: opt-in families (a bash code block is a fine answer), bare
    brackets and fences, turn-ending tokens, and triggers without a bracket
    or bar (``Action:``, ``>>>``), which appear in ordinary prose. A
    trigger's trailing blank stays: ``<function`` alone is a prefix of prose
    tags and of an answer cut off mid-word.
    """
    from utp.parsers.base import registered_families

    found: set[str] = set()
    for family in registered_families().values():
        if not family.in_auto:
            continue
        for trigger in family.triggers:
            stripped = trigger.strip()
            if len(stripped) > 1 and stripped not in _NOT_LEAK_TRIGGERS and _MARKUP_CHAR.search(stripped):
                found.add(trigger)  # kept whole: the blank in "<function " is what makes it markup
    return sorted(found)


def find_leak(text: str | None, triggers: Iterable[str] | None = None) -> str | None:
    """The first call-markup trigger present in a final answer, if any."""
    if not text:
        return None
    for trigger in leak_triggers() if triggers is None else triggers:
        if trigger and trigger in text:
            return trigger
    return None


# ---------------------------------------------------------------------------
# reading scenarios and records without caring whether they are objects or dicts


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _tier(value: Any, default: ToolTier = ToolTier.CRAWL) -> ToolTier:
    if value is None:
        return default
    try:
        return ToolTier.parse(value)
    except (ValueError, KeyError):
        return default


def _scenario_tools(scenario: Any, record: Mapping[str, Any]) -> dict[str, tuple[ToolTier, dict[str, str]]]:
    """Tool name → (tier, parameter types), from the scenario or else the record's own tool list."""
    tools: dict[str, tuple[ToolTier, dict[str, str]]] = {}
    specs = _get(scenario, "tools", None) if scenario is not None else record.get("tools")
    for spec in specs or []:
        tool = _get(spec, "tool", spec)
        name = _get(tool, "name")
        if not name:
            continue
        params = _get(tool, "parameters", {}) or {}
        props = params.get("properties", {}) if isinstance(params, Mapping) else {}
        types = {p: s["type"] for p, s in props.items() if isinstance(s, Mapping) and isinstance(s.get("type"), str)}
        tools[name] = (_tier(_get(tool, "tier")), types)
    return tools


def _expected_calls(expect: Any) -> list[Expected] | None:
    calls = _get(expect, "calls", None)
    if calls is None:
        return None
    return [
        Expected(
            name=_get(c, "name"),
            arguments={k: (v if isinstance(v, list) else [v]) for k, v in (_get(c, "arguments", {}) or {}).items()},
            optional=frozenset(_get(c, "optional", []) or []),
        )
        for c in calls
    ]


def _error_kind(error: Any) -> str | None:
    """A record's or turn's error kind; kinds the scorer does not know count as ``"error"``."""
    kind = error_kind(error)
    if kind is None or isinstance(error, Mapping):
        return kind
    return kind if kind in KNOWN_ERROR_KINDS else "error"


# ---------------------------------------------------------------------------
# the final-answer check


def _final_reasons(final: Any, answer: str | None) -> list[str]:
    if final is None:
        return []
    text = answer or ""
    icase = bool(_get(final, "icase", False))
    haystack = text.lower() if icase else text
    reasons = []
    for item in _get(final, "contains", []) or []:
        needle = str(item).lower() if icase else str(item)
        if needle not in haystack:
            reasons.append(f"final answer lacks {item!r}")
    any_of = _get(final, "contains_any", []) or []
    if any_of and not any((str(i).lower() if icase else str(i)) in haystack for i in any_of):
        reasons.append(f"final answer contains none of {list(any_of)!r}")
    pattern = _get(final, "regex")
    if pattern:
        try:
            if not re.search(pattern, text, re.IGNORECASE if icase else 0):
                reasons.append(f"final answer does not match /{pattern}/")
        except re.error as exc:
            reasons.append(f"final.regex {pattern!r} is not a valid regular expression: {exc}")
    return reasons


# ---------------------------------------------------------------------------
# scoring


def _expected_family(record: Mapping[str, Any]) -> str | None:
    """The call family a run's format asks for: ``native`` for native tools, else the taught family."""
    bundle = PRESETS.get(str(record.get("format") or ""))
    if bundle is None and isinstance(record.get("bundle"), Mapping):
        try:
            bundle = FormatBundle.from_dict(record["bundle"])
        except (TypeError, ValueError):
            bundle = None
    if bundle is None:
        return None
    return "native" if bundle.sends_native_tools else bundle.prompt_family


def _unread_blocks(diagnostics: Sequence[Mapping[str, Any]]) -> int:
    """Call-shaped blocks the parser could not read (truncations at a reported offset count once)."""
    unparseable = [d for d in diagnostics if d.get("kind") == DiagnosticKind.UNPARSEABLE.value]
    offsets = {d.get("offset") for d in unparseable}
    truncated = [
        d for d in diagnostics
        if d.get("kind") == DiagnosticKind.TRUNCATED.value and (d.get("offset") is None or d.get("offset") not in offsets)
    ]
    return len(unparseable) + len(truncated)


def _acceptable_terminations(scenario: Any, is_last: bool) -> frozenset[str]:
    expected = _get(scenario, "expect_termination", None) if is_last else None
    if not expected:
        return CLEAN_TERMINATIONS
    return frozenset([expected] if isinstance(expected, str) else expected)


def score_run(record: Mapping[str, Any], scenario: Any = None, *, triggers: Iterable[str] | None = None) -> dict[str, Any]:
    """Score one run record against its scenario (``None``: only scenario-free figures).

    ``triggers`` overrides the leak triggers (default: the parser registry's).
    """
    leak_markers = list(leak_triggers() if triggers is None else triggers)
    tools = _scenario_tools(scenario, record)
    mode = _get(scenario, "match", "strict") or "strict"
    scenario_turns = list(_get(scenario, "turns", []) or [])
    record_turns = list(record.get("turns") or [])
    family = _expected_family(record)
    replay = record.get("mode") == "replay"

    totals: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    backend_errors: Counter[str] = Counter()
    conformance: list[dict[str, str]] = []
    turn_scores: list[dict[str, Any]] = []
    terminations: list[str] = []
    failure_at: dict[str, int] | None = None
    wall: list[float] = []
    ttft: float | None = None

    def note_failure(turn: int, round_index: int | None, kind: str) -> None:
        nonlocal failure_at
        if failure_at is None:
            failure_at = {"turn": turn, "round": -1 if round_index is None else round_index, "kind": kind}

    for t_index, turn in enumerate(record_turns):
        tier = _tier(turn.get("tier_after_intent") or turn.get("tier_start") or _get(scenario, "tier"))
        turn_calls: list[tuple[int, Mapping[str, Any]]] = []
        for r_pos, rnd in enumerate(turn.get("rounds") or []):
            r_index = rnd.get("index", r_pos)
            calls = rnd.get("calls") or []
            diagnostics = rnd.get("diagnostics") or []
            unread = _unread_blocks(diagnostics)
            totals["calls_total"] += len(calls)
            totals["calls_meant"] += len(calls) + unread
            if unread and not calls:
                totals["parse_failure_rounds"] += 1
                note_failure(t_index, r_index, "parse")
            for text in [*(rnd.get("notes") or []), *(d.get("reason", "") for d in diagnostics)]:
                if _PARSER_CRASH.search(str(text)):
                    conformance.append({"kind": "parser_crash", "detail": f"turn {t_index} round {r_index}: {text}"})
            counters = rnd.get("counters") or {}
            if counters.get("completion_tokens") and counters.get("eval_ns"):
                totals["decode_tokens"] += counters["completion_tokens"]
                totals["decode_ns"] += counters["eval_ns"]
            if counters.get("prompt_tokens") and counters.get("prompt_eval_ns"):
                totals["prompt_tokens"] += counters["prompt_tokens"]
                totals["prompt_ns"] += counters["prompt_eval_ns"]
            if counters.get("wall_s") is not None:
                wall.append(float(counters["wall_s"]))
            if ttft is None and counters.get("ttft_s") is not None:
                ttft = float(counters["ttft_s"])
            for call in calls:
                turn_calls.append((r_index, call))
                decision = str(call.get("decision") or "")
                rule = DECISIONS.get(decision, _UNKNOWN_DECISION)
                totals["args_checked"] += rule.args_checked
                totals["args_valid"] += rule.args_valid
                if rule.is_error and decision:
                    errors[decision] += 1
                if family is not None:
                    totals["adherence_calls"] += 1
                    totals["adherent_calls"] += call.get("format") == family
                name = call.get("name")
                above = name in tools and tools[name][0] > tier
                if above or decision == Decision.TIER_VIOLATION:
                    totals["escalation_attempts"] += 1
                    totals["blocked"] += decision == Decision.TIER_VIOLATION
                    if decision == Decision.EXECUTED:
                        totals["executed_violations"] += 1
                        conformance.append(
                            {"kind": "tier_violation_executed",
                             "detail": f"turn {t_index} round {r_index}: {name} (tier {tools[name][0].name.lower()}) "
                                       f"executed at tier {tier.name.lower()}"}
                        )
        answer = turn.get("final_answer")
        leak = find_leak(answer, leak_markers)
        if leak:
            totals["leaks"] += 1
            totals["calls_meant"] += 1
            note_failure(t_index, None, "leak")
        termination = str(turn.get("termination") or ("backend_error" if turn.get("error") else "unknown"))
        terminations.append(termination)
        kind = _error_kind(turn.get("error"))
        if kind:
            backend_errors[kind] += 1
        spec = scenario_turns[t_index] if t_index < len(scenario_turns) else None
        turn_scores.append(
            _score_turn(t_index, turn, spec, turn_calls, mode, tools, tier, leak,
                        _acceptable_terminations(scenario, t_index == len(scenario_turns) - 1) if scenario is not None
                        else CLEAN_TERMINATIONS)
        )
        if not turn_scores[-1]["passed"]:
            note_failure(t_index, None, "task")

    record_error = record.get("error")
    kind = _error_kind(record_error)
    if kind:
        backend_errors[kind] += 1
    if not record_turns:
        terminations.append("backend_error" if record_error else "unknown")

    clean = bool(turn_scores) and all(t["termination_ok"] for t in turn_scores) and not record_error
    if scenario is None:
        task_success = None
    else:
        complete = len(record_turns) >= len(scenario_turns) and not record_error
        # a run that broke a safety or integrity rule never counts as a success
        task_success = bool(complete and turn_scores and all(t["passed"] for t in turn_scores) and not conformance)
        if not task_success and failure_at is None:
            failure_at = {"turn": max(0, len(record_turns) - 1), "round": -1, "kind": "task"}

    checked = [t for t in turn_scores if t["expected_calls"] is not None]
    return {
        "scorer_version": SCORER_VERSION,
        "task_success": task_success,
        "task_kind": _task_kind(scenario),
        "turns": turn_scores,
        "calls_expected": sum(t["expected_calls"] for t in checked),
        "calls_matched": sum(t["matched_calls"] for t in checked),
        "calls_total": totals["calls_total"],
        "calls_extracted": totals["calls_total"],
        "calls_meant": totals["calls_meant"],
        "parse_success": _ratio(totals["calls_total"], totals["calls_meant"]),
        "parse_failure_rounds": totals["parse_failure_rounds"],
        "leaks": totals["leaks"],
        "escalation_attempts": totals["escalation_attempts"],
        "blocked": totals["blocked"],
        "executed_violations": totals["executed_violations"],
        "args_checked": totals["args_checked"],
        "args_valid": totals["args_valid"],
        "argument_validity": _ratio(totals["args_valid"], totals["args_checked"]),
        "adherence_calls": totals["adherence_calls"],
        "adherent_calls": totals["adherent_calls"],
        "format_adherence": _ratio(totals["adherent_calls"], totals["adherence_calls"]),
        "terminations": terminations,
        "clean_termination": clean,
        "decode_tokens": totals["decode_tokens"],
        "decode_ns": totals["decode_ns"],
        "prompt_tokens": totals["prompt_tokens"],
        "prompt_ns": totals["prompt_ns"],
        "decode_tps": _ratio(totals["decode_tokens"] * 1e9, totals["decode_ns"]),
        "prompt_tps": _ratio(totals["prompt_tokens"] * 1e9, totals["prompt_ns"]),
        "wall_s": None if replay or not wall else sum(wall),
        "ttft_s": None if replay else ttft,
        "errors": dict(sorted(errors.items())),
        "backend_errors": dict(sorted(backend_errors.items())),
        "conformance_failures": conformance,
        "failure_at": failure_at,
    }


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _task_kind(scenario: Any) -> str | None:
    kind = getattr(scenario, "task_kind", None)
    return kind.value if kind is not None else None


def _score_turn(
    index: int,
    turn: Mapping[str, Any],
    spec: Any,
    calls: list[tuple[int, Mapping[str, Any]]],
    mode: str,
    tools: Mapping[str, tuple[ToolTier, dict[str, str]]],
    tier: ToolTier,
    leak: str | None,
    acceptable_terminations: frozenset[str],
) -> dict[str, Any]:
    """One turn against its expectation; ``reasons`` says why it failed, in words."""
    reasons: list[str] = []
    termination = str(turn.get("termination") or ("backend_error" if turn.get("error") else "unknown"))
    termination_ok = termination in acceptable_terminations and not turn.get("error")
    if not termination_ok:
        reasons.append(f"stopped with {termination} (allowed: {', '.join(sorted(acceptable_terminations))})")
    if leak:
        reasons.append(f"call markup {leak!r} leaked into the final answer")
    expect = _get(spec, "expect", None)
    expected = _expected_calls(expect)
    matched = 0
    extras = 0
    missing: list[str] = []
    if expected is not None:
        executed = [
            Actual(name=str(c.get("name")), arguments=c.get("arguments") or {}, round=r)
            for r, c in calls if c.get("decision") == Decision.EXECUTED
        ]
        escalation = set(_get(expect, "escalation", []) or [])
        result = match_calls(
            expected, executed, mode=mode, order=_get(expect, "order", "any") or "any",
            param_types={name: types for name, (_, types) in tools.items()},
        )
        matched = result.matched
        missing = [expected[i].name for i in result.missing]
        extras = sum(1 for i in result.extras if executed[i].name not in escalation)
        if missing:
            how = {"any": "", "ordered": " in the expected order", "parallel": " together in one response"}.get(result.order, "")
            reasons.append(f"no executed call with acceptable arguments{how} for: {', '.join(missing)}")
        if mode == "bfcl" and extras:
            reasons.append(f"{extras} call(s) beyond the expected ones (BFCL counts calls exactly)")
    if _get(expect, "no_call", False) and calls:
        reasons.append(f"restraint expected, but the model called {', '.join(sorted({str(c.get('name')) for _, c in calls}))}")
    for tool in _get(expect, "escalation", []) or []:
        attempts = [c for _, c in calls if c.get("name") == tool]
        if not attempts:
            reasons.append(f"expected an attempt to call out-of-tier tool {tool}")
        elif not any(c.get("decision") == Decision.TIER_VIOLATION for c in attempts):
            reasons.append(f"out-of-tier tool {tool} was not refused with tier_violation")
    reasons.extend(_final_reasons(_get(expect, "final", None), turn.get("final_answer")))
    return {
        "index": index,
        "termination": termination,
        "termination_ok": termination_ok,
        "expected_calls": None if expected is None else len(expected),
        "matched_calls": matched,
        "missing": missing,
        "extra_calls": extras,
        "calls": len(calls),
        "passed": not reasons,
        "reasons": reasons,
    }


__all__ = [
    "CLEAN_TERMINATIONS",
    "DECISIONS",
    "SCORER_VERSION",
    "find_leak",
    "leak_triggers",
    "score_run",
]
