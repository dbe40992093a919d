"""The committed scenario suites are valid, consistent and passable.

A suite that no model could pass (a fact the fixtures never return, a tool
still locked when it is expected, an escalation the intent rules already
allow) would read as a model failure in every report. So besides schema
validity, every core scenario is replayed here by a *reference model*: for
each turn the tier is raised by the real intent rules, each expected call is
executed through the real ToolRegistry and fixtures, each expected escalation
is checked to be refused, and the final-answer check is applied to what the
tools returned.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.fixtures import build_registry
from harness.scenarios import load_suite, load_suites
from harness.scenario_model import ExpectedCall, FinalCheck, Scenario, Suite
from utp.intent import detect_intent_tier
from utp.loop import LoopLimits
from utp.types import ErrorKind, ToolCall, ToolTier

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = PROJECT_ROOT / "scenarios"
CORE = SCENARIOS / "core"
BFCL = SCENARIOS / "bfcl"
FIXTURE_REPO = SCENARIOS / "fixtures" / "repo"

CORE_FILES = sorted(CORE.glob("*.yaml"))
BFCL_FILES = sorted(BFCL.glob("*.yaml"))

#: the suites the brief asks for, by file name
REQUIRED_CORE_FILES = [
    "01_single_call.yaml", "02_chains.yaml", "03_parallel.yaml", "04_restraint.yaml", "05_tiers.yaml",
    "06_hallucination.yaml", "07_invalid_args.yaml", "08_loop_trap.yaml", "09_format_drift.yaml",
    "10_long_context.yaml", "11_llmc_coding.yaml",
]

#: free-text arguments the expectations leave open (``optional`` without
#: values); the reference model needs *a* sensible value to run the fixture
REFERENCE_TEXT: dict[tuple[str, str], dict[str, str]] = {
    ("core/llmc_coding", "search-authentication"): {"query": "authenticat"},
    ("core/llmc_coding", "where-is-validate-token"): {"query": "def validate_token"},
    ("core/tiers", "search-locked-at-crawl"): {"query": "refund policy"},
    ("core/hallucination", "knowledge-base-query"): {"text": "VPN setup"},
}


@pytest.fixture(scope="module")
def core_suites() -> list[Suite]:
    return load_suites([CORE])


@pytest.fixture(scope="module")
def all_suites() -> list[Suite]:
    return load_suites([CORE, BFCL])


def _core_scenarios() -> list[Scenario]:
    return [scenario for suite in load_suites([CORE]) for scenario in suite.scenarios]


def _scenario_id(scenario: Scenario) -> str:
    return f"{scenario.suite}/{scenario.id}"


CORE_SCENARIOS = _core_scenarios()


# --------------------------------------------------------------------------- validity


def test_every_required_core_suite_exists():
    assert set(REQUIRED_CORE_FILES) <= {p.name for p in CORE_FILES}


@pytest.mark.parametrize("path", CORE_FILES + BFCL_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_suite_file_validates_and_loads(path: Path):
    suite = load_suite(path)
    assert suite.scenarios
    assert suite.id == f"{path.parent.name}/{suite.id.split('/', 1)[1]}"


def test_all_suites_load_together_with_unique_ids(all_suites: list[Suite]):
    suite_ids = [s.id for s in all_suites]
    assert len(suite_ids) == len(set(suite_ids))
    keys = Counter((s.id, sc.id) for s in all_suites for sc in s.scenarios)
    assert [k for k, n in keys.items() if n > 1] == []
    core_ids = Counter(sc.id for s in all_suites if s.id.startswith("core/") for sc in s.scenarios)
    assert [k for k, n in core_ids.items() if n > 1] == [], "core scenario ids should be unique across suites"


def test_core_size_and_spread(core_suites: list[Suite]):
    per_suite = {s.id: len(s.scenarios) for s in core_suites}
    assert all(n >= 3 for n in per_suite.values()), per_suite
    assert 30 <= sum(per_suite.values()) <= 50, per_suite
    tiers_used = {spec.tool.tier for s in core_suites for sc in s.scenarios for spec in sc.tools}
    assert tiers_used == {ToolTier.CRAWL, ToolTier.WALK, ToolTier.RUN}


def test_expected_and_escalated_tools_are_offered(all_suites: list[Suite]):
    for suite in all_suites:
        for scenario in suite.scenarios:
            offered = set(scenario.tool_by_name)
            for turn in scenario.turns:
                for call in turn.expect.calls or []:
                    assert call.name in offered, f"{_scenario_id(scenario)}: {call.name} not offered"
                for name in turn.expect.escalation:
                    assert name in offered, f"{_scenario_id(scenario)}: escalation {name} not offered"


def test_restraint_turns_expect_no_calls(all_suites: list[Suite]):
    restraint = [t for s in all_suites for sc in s.scenarios for t in sc.turns if t.expect.no_call]
    assert len(restraint) >= 50 + 4  # the BFCL irrelevance sample plus core restraint
    assert all(t.expect.calls in (None, []) for t in restraint)


# --------------------------------------------------------------------------- tiers


def _tiers_by_turn(scenario: Scenario) -> list[ToolTier]:
    """The tier in force during each turn: unlocks are monotonic across turns."""
    tier = scenario.tier
    reached = []
    for turn in scenario.turns:
        tier = max(tier, detect_intent_tier(turn.user))
        reached.append(tier)
    return reached


def test_expected_calls_are_unlocked_and_escalations_locked(all_suites: list[Suite]):
    for suite in all_suites:
        for scenario in suite.scenarios:
            tools = scenario.tool_by_name
            for turn, tier in zip(scenario.turns, _tiers_by_turn(scenario)):
                for call in turn.expect.calls or []:
                    assert tools[call.name].tier <= tier, (
                        f"{_scenario_id(scenario)}: {call.name} ({tools[call.name].tier.name}) expected "
                        f"but the turn only reaches {tier.name}: {turn.user!r}"
                    )
                for name in turn.expect.escalation:
                    assert tools[name].tier > tier, (
                        f"{_scenario_id(scenario)}: escalation to {name} expected, but the wording "
                        f"already unlocks {tier.name}: {turn.user!r}"
                    )


def test_tier_suite_locks_then_unlocks_by_intent(core_suites: list[Suite]):
    tiers = next(s for s in core_suites if s.id == "core/tiers")
    for scenario in tiers.scenarios:
        escalated = {name for t in scenario.turns for name in t.expect.escalation}
        later_calls = {c.name for t in scenario.turns[1:] for c in t.expect.calls or []}
        assert escalated <= later_calls, f"{scenario.id}: each refused tool should succeed in a later turn"
    escalating = [sc for s in core_suites for sc in s.scenarios if any(t.expect.escalation for t in sc.turns)]
    assert len(escalating) >= 4
    escalated_tiers = {sc.tool_by_name[n].tier for sc in escalating for t in sc.turns for n in t.expect.escalation}
    assert escalated_tiers == {ToolTier.WALK, ToolTier.RUN}  # both locks are exercised


# --------------------------------------------------------------------------- the reference model


def _placeholder(schema: dict[str, Any]) -> Any:
    """A value valid for ``schema``, for required arguments the expectation leaves open."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(kind, "reference text")


def _reference_arguments(scenario: Scenario, call: ExpectedCall) -> dict[str, Any]:
    tool = scenario.tool_by_name[call.name]
    arguments = {name: values[0] for name, values in call.arguments.items() if values}
    overrides = REFERENCE_TEXT.get((scenario.suite, scenario.id), {})
    for name in tool.required:
        if name not in arguments:
            arguments[name] = overrides.get(name, _placeholder(tool.properties.get(name, {})))
    for name, value in overrides.items():
        if name in tool.properties:
            arguments[name] = value
    return arguments


def _final_ok(check: FinalCheck, text: str) -> list[str]:
    """What a correct answer built from ``text`` would still miss."""
    haystack = text.lower() if check.icase else text
    missing = [c for c in check.contains if (c.lower() if check.icase else c) not in haystack]
    if check.contains_any and not any((c.lower() if check.icase else c) in haystack for c in check.contains_any):
        missing.append(f"any of {check.contains_any}")
    if check.regex and not re.search(check.regex, text, re.IGNORECASE if check.icase else 0):
        missing.append(f"regex {check.regex}")
    return missing


async def _replay_reference(scenario: Scenario) -> None:
    registry = build_registry(scenario)
    evidence: list[str] = []
    for index, turn in enumerate(scenario.turns):
        registry.apply_intent(turn.user)
        where = f"{_scenario_id(scenario)} turn {index}"
        for name in turn.expect.escalation:
            call = ToolCall(name=name, arguments=_reference_arguments(scenario, ExpectedCall(name=name)))
            decision = registry.check(call)
            assert not decision.allowed and decision.error_kind is ErrorKind.TIER_VIOLATION, (
                f"{where}: {name} should be refused as out of tier, got {decision.decision}"
            )
        for call in turn.expect.calls or []:
            arguments = _reference_arguments(scenario, call)
            result = await registry.execute(ToolCall(name=call.name, arguments=arguments), 5.0)
            assert result.executed and result.success, f"{where}: {call.name}({arguments}) failed: {result.error}"
            evidence.append(result.content_text())
        if turn.expect.final is not None and evidence:
            missing = _final_ok(turn.expect.final, "\n".join(evidence))
            assert missing == [], f"{where}: the tools' results never mention {missing}"


@pytest.mark.parametrize("scenario", CORE_SCENARIOS, ids=_scenario_id)
def test_reference_model_passes(scenario: Scenario):
    asyncio.run(_replay_reference(scenario))


def test_restraint_answers_are_checked(core_suites: list[Suite]):
    restraint = next(s for s in core_suites if s.id == "core/restraint")
    for scenario in restraint.scenarios:
        turn = scenario.turns[0]
        assert turn.expect.no_call and turn.expect.calls == []
        assert turn.expect.final is not None, f"{scenario.id}: a restraint answer should be checked"


# --------------------------------------------------------------------------- specific suites


def test_loop_trap_leaves_room_for_repeat_detection(core_suites: list[Suite]):
    trap = next(s for s in core_suites if s.id == "core/loop_trap")
    max_repeats = LoopLimits().max_repeats
    for scenario in trap.scenarios:
        assert scenario.expect_termination and "repeated_call" in scenario.expect_termination
        assert "max_rounds" not in scenario.expect_termination
        assert scenario.max_rounds > max_repeats + 1, scenario.id


def test_loop_trap_fixtures_never_change_their_answer(core_suites: list[Suite]):
    trap = next(s for s in core_suites if s.id == "core/loop_trap")
    for scenario in trap.scenarios:
        registry = build_registry(scenario)
        registry.apply_intent(scenario.turns[0].user)
        for spec in scenario.tools:
            arguments = _reference_arguments(scenario, ExpectedCall(name=spec.tool.name))
            answers = {
                asyncio.run(registry.execute(ToolCall(name=spec.tool.name, arguments=arguments), 5.0)).content_text()
                for _ in range(4)
            }
            assert len(answers) == 1, f"{scenario.id}: {spec.tool.name} changes its answer"


def test_long_context_prompts_are_long(core_suites: list[Suite]):
    suite = next(s for s in core_suites if s.id == "core/long_context")
    sizes = [len(sc.system or "") + sum(len(t.user) for t in sc.turns) for sc in suite.scenarios]
    assert all(size >= 4000 for size in sizes), sizes  # roughly 1k+ tokens each
    assert max(sizes) >= 6000


def test_short_prompts_outside_long_context(core_suites: list[Suite]):
    for suite in core_suites:
        if suite.id == "core/long_context":
            continue
        for scenario in suite.scenarios:
            assert all(len(t.user) <= 200 for t in scenario.turns), scenario.id
            assert len(scenario.system or "") <= 400, scenario.id


def test_invalid_args_suite_has_constraints_to_break(core_suites: list[Suite]):
    suite = next(s for s in core_suites if s.id == "core/invalid_args")
    keywords = Counter()
    for scenario in suite.scenarios:
        for spec in scenario.tools:
            text = json.dumps(spec.tool.parameters)
            for keyword in ("enum", "integer", "required", "pattern", "maximum"):
                keywords[keyword] += keyword in text
    assert all(keywords[k] for k in ("enum", "integer", "required", "pattern", "maximum")), keywords


# --------------------------------------------------------------------------- the fixture repository


def test_fixture_repository_is_a_small_python_project():
    files = sorted(p.relative_to(FIXTURE_REPO).as_posix() for p in FIXTURE_REPO.rglob("*") if p.is_file())
    assert 8 <= len(files) <= 15, files
    for required in ("src/auth.py", "src/config.py", "tests/test_auth.py", "README.md"):
        assert required in files
    auth = (FIXTURE_REPO / "src" / "auth.py").read_text()
    assert "def authenticate(" in auth and "def validate_token(" in auth
    assert "DEFAULT_PORT = 8080" in (FIXTURE_REPO / "src" / "config.py").read_text()
    for path in FIXTURE_REPO.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")  # real, parseable code


def test_llmc_tasks_point_at_existing_files(core_suites: list[Suite]):
    llmc = next(s for s in core_suites if s.id == "core/llmc_coding")
    checked = 0
    for scenario in llmc.scenarios:
        for spec in scenario.tools:
            assert spec.fixture.kind == "files"
            assert (Path(spec.fixture.base_dir or SCENARIOS) / spec.fixture.config["files"]["root"]).resolve() == FIXTURE_REPO.resolve()
        for turn in scenario.turns:
            for call in turn.expect.calls or []:
                for path in call.arguments.get("path", []):
                    target = FIXTURE_REPO / path
                    assert target.exists(), f"{scenario.id}: {path} is not in the fixture repository"
                    checked += 1
    assert checked >= 8


# --------------------------------------------------------------------------- end to end: runner + loop + scorer


#: answers a correct model gives from its own knowledge (restraint turns)
REFERENCE_ANSWERS: dict[tuple[str, str], str] = {
    ("core/restraint", "capital-of-australia"): "The capital of Australia is Canberra.",
    ("core/restraint", "simple-arithmetic"): "12 times 12 is 144.",
    ("core/restraint", "translate-thank-you"): "In Spanish you say \"gracias\".",
    ("core/restraint", "unit-conversion-no-tool"): "5 kilometers are 5000 meters.",
    ("core/hallucination", "no-booking-tool"): "I can't make reservations: I have no booking tool.",
}


def _plan(scenario: Scenario, turn_index: int) -> list[list[dict[str, Any]]]:
    """The responses a correct model gives in one turn, one list of calls per round."""
    expect = scenario.turns[turn_index].expect

    def call(expected: ExpectedCall) -> dict[str, Any]:
        return {"name": expected.name, "arguments": _reference_arguments(scenario, expected)}

    steps: list[list[dict[str, Any]]] = []
    if expect.escalation:
        steps.append([call(ExpectedCall(name=name)) for name in expect.escalation])
    expected = list(expect.calls or [])
    if expected and expect.order == "parallel":
        steps.append([call(c) for c in expected])
    else:
        steps.extend([call(c)] for c in expected)
    return steps


def _reference_server_model(scenarios: list[Scenario]):
    """A TEST DOUBLE model that plays each core scenario correctly over the native API.

    The conversation's first user message says which scenario is running; the
    number of user messages says which turn; the assistant messages since the
    last user message say which round.
    """
    from tests.support.scripted_server import Turn

    by_opening = {sc.turns[0].user: sc for sc in scenarios}
    assert len(by_opening) == len(scenarios), "core scenarios should open with distinct user messages"

    def model(body: dict[str, Any]) -> Turn:
        messages = body.get("messages") or []
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        scenario = by_opening[messages[users[0]]["content"]]
        turn_index = len(users) - 1
        step = sum(1 for m in messages[users[-1]:] if m.get("role") == "assistant")
        plan = _plan(scenario, turn_index)
        traps = scenario.expect_termination or []
        if step < len(plan):
            return Turn(tool_calls=plan[step])
        if plan and "repeated_call" in traps and turn_index == len(scenario.turns) - 1:
            return Turn(tool_calls=plan[-1])  # keeps polling: the runtime must stop it
        answer = REFERENCE_ANSWERS.get((scenario.suite, scenario.id))
        if answer is None:
            results = [str(m.get("content")) for m in messages if m.get("role") == "tool"]
            answer = "From the tools: " + " | ".join(results) if results else "Done."
        return Turn(content=answer)

    return model


def test_a_correct_model_passes_every_core_scenario_end_to_end(tmp_path: Path):
    """Real runner, loop, registry, fixtures and scorer; only the model is scripted."""
    from harness.runner import run_matrix
    from harness.runplan import RunnerConfig
    from tests.support.scripted_server import ScriptedServer, turn_from_callable

    suites = load_suites([CORE])
    scenarios = [sc for s in suites for sc in s.scenarios]
    model = _reference_server_model(scenarios)
    with ScriptedServer(default_turn=turn_from_callable(model)) as server:
        result = run_matrix(
            RunnerConfig(
                models=["scripted:latest"], formats=["native"], suites=suites, host=server.url,
                results_dir=tmp_path / "results", cassette_dir=tmp_path / "cassettes",
                hardware="test rig", show_progress=False,
            )
        )
    assert len(result.records) == len(scenarios)
    scored = result.scored()
    failures = {
        f"{r['suite']}/{r['scenario']}": r["error"] or [t["reasons"] for t in r["scores"].get("turns", []) if not t["passed"]]
        for r in scored
        if r["scores"].get("task_success") is not True
    }
    assert failures == {}
    assert result.exit_code == 0
    by_id = {f"{r['suite']}/{r['scenario']}": r for r in scored}
    assert by_id["core/loop_trap/export-still-processing"]["turns"][-1]["termination"] == "repeated_call"
    tiers = by_id["core/tiers/append-note-needs-consent"]
    assert tiers["scores"]["blocked"] == tiers["scores"]["escalation_attempts"] == 1
    assert tiers["scores"]["executed_violations"] == 0
