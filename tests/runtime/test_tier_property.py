"""Tier enforcement holds whatever format a call is written in (HLD §5.5, §6.3).

Calls to out-of-tier tools are rendered in every registered call family (as
the family's own ``render`` writes them), with their names varied in case
and whitespace, mixed with allowed calls, parsed by the real parser against
all registered tools and run through the registry: no out-of-tier call runs,
each is answered with TIER_VIOLATION, and the allowed calls run.

Families are read from the registry at run time, so a family added later is
covered without editing this file.

Two strengths of the claim. *Safety* (always): nothing out of tier runs, and
any parsed call whose name normalises to a locked tool is a TIER_VIOLATION.
*Reporting* (when the family promises to round-trip the text, i.e. an
auto-mode family and a name matching ``[A-Za-z_][A-Za-z0-9_]*``): every
locked call written comes back as exactly one TIER_VIOLATION and every
allowed call runs. Names padded with whitespace lie outside the families'
round-trip contract; some families then drop the call or read an empty
name, which is safe (nothing runs) but not a report, so only safety is
asserted for them.
"""

import asyncio
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from utp.parsers import family_names, get_family, parse_response
from utp.registry import ToolRegistry, normalise_tool_name
from utp.types import ErrorKind, Tool, ToolCall, ToolTier

from .doubles import Recorder

TEXT_PARAM = {"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}},
              "required": ["text", "n"]}
TOOLS = [
    Tool("get_weather", "Weather.", TEXT_PARAM, tier=ToolTier.CRAWL),
    Tool("read_file", "Read.", TEXT_PARAM, tier=ToolTier.WALK),
    Tool("write_file", "Write.", TEXT_PARAM, tier=ToolTier.RUN),
    Tool("delete_repo", "Delete.", TEXT_PARAM, tier=ToolTier.RUN),
]
FAMILIES = family_names()

VARIANTS = [
    lambda n: n,
    lambda n: n.upper(),
    lambda n: n.title(),
    lambda n: f" {n} ",
    lambda n: f" {n.title()} ",
    lambda n: n.swapcase(),
    lambda n: f"\t{n}",
]


def make_registry(tier: ToolTier):
    recorders = {t.name: Recorder(f"ran {t.name}", t.name) for t in TOOLS}
    registry = ToolRegistry(tier=tier)
    for tool in TOOLS:
        registry.register(tool, recorders[tool.name])
    return registry, recorders


def render(family_name: str, calls: list[ToolCall]) -> str | None:
    try:
        return get_family(family_name).render(calls)
    except Exception:  # a family that cannot write this name/shape is skipped, not failed
        return None


def parse(family_name: str, text: str):
    options = {} if get_family(family_name).in_auto else {"allow_bash": True}
    return parse_response(text, tools=TOOLS, **options)


_CONTRACT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def round_trip_promised(family_name: str, calls: list[ToolCall]) -> bool:
    family = get_family(family_name)
    if not family.in_auto or not all(_CONTRACT_NAME.fullmatch(c.name) for c in calls):
        return False
    # a family whose only markers are the offered tools' names (cline_xml's <read_file>) reads those
    # names exactly: a variant spelling is markup it does not see (never run either way, as checked above)
    return bool(family.triggers) or all(c.name in {t.name for t in TOOLS} for c in calls)


def run_all(registry, calls):
    return asyncio.run(registry.execute_all(calls, timeout_s=5))


def locked_name(name: str, tier: ToolTier) -> str | None:
    """The locked tool a (possibly varied) name stands for, if any."""
    key = normalise_tool_name(name)
    for tool in TOOLS:
        if tool.tier > tier and normalise_tool_name(tool.name) == key:
            return tool.name
    return None


@st.composite
def scenarios(draw):
    tier = draw(st.sampled_from([ToolTier.CRAWL, ToolTier.WALK]))
    family = draw(st.sampled_from(FAMILIES))
    allowed = [t for t in TOOLS if t.tier <= tier]
    locked = [t for t in TOOLS if t.tier > tier]
    count = draw(st.integers(min_value=1, max_value=4))
    calls, expect_locked = [], []
    for index in range(count):
        is_locked = draw(st.booleans()) or index == 0
        word = draw(st.text(alphabet="abcdefghij", min_size=1, max_size=8))
        arguments = {"text": word, "n": index}  # n keeps calls distinct (no de-duplication)
        if is_locked:
            tool = draw(st.sampled_from(locked))
            variant = draw(st.sampled_from(VARIANTS))
            calls.append(ToolCall(variant(tool.name), arguments))
            expect_locked.append(tool.name)
        else:
            tool = draw(st.sampled_from(allowed))
            calls.append(ToolCall(tool.name, arguments))
    draw(st.permutations(calls))
    return tier, family, calls, expect_locked


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_out_of_tier_calls_never_execute_in_any_format(scenario):
    tier, family, calls, expect_locked = scenario
    text = render(family, calls)
    assume(text is not None)
    registry, recorders = make_registry(tier)
    parsed = parse(family, text)
    results = run_all(registry, parsed.tool_calls)

    # 1. nothing out of tier ran, whatever the parser made of the text
    for tool in TOOLS:
        if tool.tier > tier:
            assert recorders[tool.name].calls == [], (family, text)
    # 2. every parsed call that names a locked tool (in any case/spacing) was refused as a tier violation
    for call, result in zip(parsed.tool_calls, results):
        if locked_name(call.name, tier):
            assert result.error_kind is ErrorKind.TIER_VIOLATION and not result.executed, (family, text, call)
    refused = sorted(locked_name(c.name, tier) for c, r in zip(parsed.tool_calls, results)
                     if r.error_kind is ErrorKind.TIER_VIOLATION)
    if not round_trip_promised(family, calls):
        assert len(refused) <= len(expect_locked)
        return
    # 3. the locked calls that were written are reported, one refusal each
    assert refused == sorted(expect_locked), (family, text, [c.name for c in parsed.tool_calls])
    # 4. the allowed calls ran, with their arguments
    for call in calls:
        if not locked_name(call.name, tier):
            assert call.arguments in recorders[call.name].calls, (family, text)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_every_family_and_variant_is_refused(family, variant):
    """The deterministic grid behind the property: each family × each name variant."""
    name = VARIANTS[variant]("write_file")
    calls = [ToolCall(name, {"text": "x", "n": 0}), ToolCall("get_weather", {"text": "y", "n": 1})]
    text = render(family, calls)
    if text is None:
        pytest.skip(f"{family} cannot render {name!r}")
    registry, recorders = make_registry(ToolTier.CRAWL)
    parsed = parse(family, text)
    results = run_all(registry, parsed.tool_calls)
    assert recorders["write_file"].calls == []
    for call, result in zip(parsed.tool_calls, results):
        if locked_name(call.name, ToolTier.CRAWL):
            assert result.error_kind is ErrorKind.TIER_VIOLATION and not result.executed
    if round_trip_promised(family, calls):
        kinds = {locked_name(c.name, ToolTier.CRAWL) or c.name: r.error_kind for c, r in zip(parsed.tool_calls, results)}
        assert kinds.get("write_file") is ErrorKind.TIER_VIOLATION, (family, text, parsed.tool_calls)
        assert recorders["get_weather"].calls == [{"text": "y", "n": 1}], (family, text)
