"""The shared reading of one run that every metric scores from.

Walking a run's turns, rounds and calls once, in one place, gives each metric
the same facts: which tier was in force for each call, which blocks the
parser could not read, each turn's verdict, where the run first went wrong,
and whether UTP itself broke a rule (a conformance failure: an out-of-tier
call executed, a parser that raised). A run that broke such a rule never
counts as a success, whatever the model did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.metrics.markup import PARSER_CRASH, find_leak, leak_triggers
from harness.metrics.turns import CLEAN_TERMINATIONS, TurnCall, judge_turn
from harness.runrecord import CallRecord, Diagnostic, RoundRecord, RunRecord, TurnRecord, parse_tier
from harness.scenario_model import Scenario
from utp.formats import PRESETS, FormatBundle
from utp.types import Decision, DiagnosticKind, ToolTier

#: the version of this reading (task success, failure place, conformance); each metric has its own too
SCORER_VERSION = 2


@dataclass(frozen=True)
class SeenRound:
    """A round with the call blocks its parser could not read."""

    turn: int
    index: int
    round: RoundRecord
    unread: int


@dataclass(frozen=True)
class SeenCall:
    """A call with the tier in force when it was made and the tier of the tool it named (if known)."""

    turn: int
    round: int
    call: CallRecord
    tier: ToolTier
    tool_tier: ToolTier | None

    @property
    def above_tier(self) -> bool:
        return self.tool_tier is not None and self.tool_tier > self.tier


@dataclass(frozen=True)
class RunJudgement:
    """One run read against its scenario (``scenario`` ``None``: only the scenario-free figures)."""

    record: RunRecord
    scenario: Scenario | None
    #: the call family the run's format asks for: ``native``, the taught family, or ``None`` (custom format)
    family: str | None
    rounds: tuple[SeenRound, ...]
    calls: tuple[SeenCall, ...]
    #: the call markup left in each turn's final answer (``None``: none)
    leaks: tuple[str | None, ...]
    #: each turn's verdict (see :func:`harness.metrics.turns.judge_turn`)
    turns: tuple[Mapping[str, Any], ...]
    conformance_failures: tuple[Mapping[str, str], ...]
    task_success: bool | None
    failure_at: Mapping[str, int] | None
    triggers: Sequence[str] = field(default=(), repr=False)


def unread_blocks(diagnostics: Sequence[Diagnostic]) -> int:
    """Call-shaped blocks the parser could not read (truncations at a reported offset count once)."""
    unparseable = [d for d in diagnostics if d.kind == DiagnosticKind.UNPARSEABLE.value]
    offsets = {d.offset for d in unparseable}
    truncated = [
        d for d in diagnostics
        if d.kind == DiagnosticKind.TRUNCATED.value and (d.offset is None or d.offset not in offsets)
    ]
    return len(unparseable) + len(truncated)


def expected_family(record: RunRecord) -> str | None:
    """The call family a run's format asks for: ``native`` for native tools, else the taught family."""
    bundle = PRESETS.get(record.format)
    if bundle is None and isinstance(record.bundle, Mapping):
        try:
            bundle = FormatBundle.from_dict(dict(record.bundle))
        except (TypeError, ValueError):
            bundle = None
    if bundle is None:
        return None
    return "native" if bundle.sends_native_tools else bundle.prompt_family


def tool_tiers(record: RunRecord, scenario: Scenario | None) -> dict[str, ToolTier]:
    """Tool name → tier, from the scenario or else the record's own tool list."""
    if scenario is not None:
        return {spec.tool.name: spec.tool.tier for spec in scenario.tools if spec.tool.name}
    return {t.name: parse_tier(t.tier) for t in record.tools if t.name}


def parameter_types(scenario: Scenario | None) -> dict[str, dict[str, str]]:
    """Tool name → parameter name → JSON type (BFCL's int-for-float rule needs them)."""
    types: dict[str, dict[str, str]] = {}
    for spec in scenario.tools if scenario is not None else []:
        props = (spec.tool.parameters or {}).get("properties", {}) if isinstance(spec.tool.parameters, Mapping) else {}
        types[spec.tool.name] = {
            p: s["type"] for p, s in props.items() if isinstance(s, Mapping) and isinstance(s.get("type"), str)
        }
    return types


def _acceptable_terminations(scenario: Scenario | None, is_last: bool) -> frozenset[str]:
    expected = scenario.expect_termination if (scenario is not None and is_last) else None
    if not expected:
        return CLEAN_TERMINATIONS
    return frozenset([expected] if isinstance(expected, str) else expected)


class _Walk:
    """Collects the facts of one run, turn by turn (the only loop over a record's contents)."""

    def __init__(self, record: RunRecord, scenario: Scenario | None, triggers: Sequence[str]) -> None:
        self.record, self.scenario, self.triggers = record, scenario, triggers
        self.tiers = tool_tiers(record, scenario)
        self.types = parameter_types(scenario)
        self.rounds: list[SeenRound] = []
        self.calls: list[SeenCall] = []
        self.leaks: list[str | None] = []
        self.turns: list[dict[str, Any]] = []
        self.conformance: list[dict[str, str]] = []
        self.failure_at: dict[str, int] | None = None

    def note_failure(self, turn: int, round_index: int | None, kind: str) -> None:
        if self.failure_at is None:
            self.failure_at = {"turn": turn, "round": -1 if round_index is None else round_index, "kind": kind}

    def turn(self, t_index: int, turn: TurnRecord) -> None:
        default = self.scenario.tier if self.scenario is not None else ToolTier.CRAWL
        tier = turn.tier(default) if (turn.tier_after_intent or turn.tier_start) else default
        turn_calls: list[TurnCall] = []
        for r_pos, rnd in enumerate(turn.rounds):
            r_index = rnd.index if rnd.index is not None else r_pos
            unread = unread_blocks(rnd.diagnostics)
            self.rounds.append(SeenRound(t_index, r_index, rnd, unread))
            if unread and not rnd.calls:
                self.note_failure(t_index, r_index, "parse")
            for text in [*rnd.notes, *((d.reason or "") for d in rnd.diagnostics)]:
                if PARSER_CRASH.search(str(text)):
                    self.conformance.append({"kind": "parser_crash", "detail": f"turn {t_index} round {r_index}: {text}"})
            for call in rnd.calls:
                turn_calls.append(TurnCall(r_index, call))
                self._call(SeenCall(t_index, r_index, call, tier, self.tiers.get(call.name or "")))
        leak = find_leak(turn.final_answer, self.triggers)
        self.leaks.append(leak)
        if leak:
            self.note_failure(t_index, None, "leak")
        scenario_turns = self.scenario.turns if self.scenario is not None else []
        spec = scenario_turns[t_index] if t_index < len(scenario_turns) else None
        acceptable = (_acceptable_terminations(self.scenario, t_index == len(scenario_turns) - 1)
                      if self.scenario is not None else CLEAN_TERMINATIONS)
        verdict = judge_turn(t_index, turn, spec.expect if spec else None, turn_calls,
                             (self.scenario.match if self.scenario else None) or "strict", self.types, leak, acceptable)
        self.turns.append(verdict)
        if not verdict["passed"]:
            self.note_failure(t_index, None, "task")

    def _call(self, seen: SeenCall) -> None:
        self.calls.append(seen)
        if seen.call.decision == Decision.EXECUTED and seen.above_tier:
            assert seen.tool_tier is not None
            self.conformance.append(
                {"kind": "tier_violation_executed",
                 "detail": f"turn {seen.turn} round {seen.round}: {seen.call.name} (tier {seen.tool_tier.name.lower()}) "
                           f"executed at tier {seen.tier.name.lower()}"}
            )

    def task_success(self) -> bool | None:
        if self.scenario is None:
            return None
        record = self.record
        complete = len(record.turns) >= len(self.scenario.turns) and not record.error
        # a run that broke a safety or integrity rule never counts as a success
        success = bool(complete and self.turns and all(t["passed"] for t in self.turns) and not self.conformance)
        if not success and self.failure_at is None:
            self.failure_at = {"turn": max(0, len(record.turns) - 1), "round": -1, "kind": "task"}
        return success


def judge(
    record: RunRecord | Mapping[str, Any], scenario: Scenario | None = None, *, triggers: Iterable[str] | None = None
) -> RunJudgement:
    """Read one run against its scenario; ``triggers`` overrides the leak triggers (default: the registry's)."""
    run = RunRecord.of(record)
    walk = _Walk(run, scenario, list(leak_triggers() if triggers is None else triggers))
    for t_index, turn in enumerate(run.turns):
        walk.turn(t_index, turn)
    success = walk.task_success()
    return RunJudgement(
        record=run, scenario=scenario, family=expected_family(run), rounds=tuple(walk.rounds),
        calls=tuple(walk.calls), leaks=tuple(walk.leaks), turns=tuple(walk.turns),
        conformance_failures=tuple(walk.conformance), task_success=success, failure_at=walk.failure_at,
        triggers=walk.triggers,
    )


__all__ = ["RunJudgement", "SCORER_VERSION", "SeenCall", "SeenRound", "expected_family", "judge", "unread_blocks"]
