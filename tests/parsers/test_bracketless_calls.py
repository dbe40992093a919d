"""A whole answer that is Python-style calls without the list brackets.

BFCL's prompt-mode decoder (``default_decode_ast_prompting`` in the
berkeley-function-call-leaderboard) strips the answer and adds ``[``/``]``
when the model left them out, so ``get_weather(city="Paris")`` alone is a
call list. UTP reads it only when it is the whole answer (reasoning before it
aside) and every name is an offered tool: the tools' names are the triggers,
so without tools nothing changes.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import get_parser, parse_response
from utp.parsers.base import ParseContext, registered_families
from utp.parsers.scanloop import scan_text
from utp.parsers.triggerscan import TriggerScanner

from .conftest import assert_every_cut_matches
from utp.parsers.streaming import CallReady, ContentDelta, stream_parse
from utp.types import DiagnosticKind, Tool

WEATHER = Tool(
    "get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}},
)
TOOLS = [WEATHER, Tool("math.hypot"), Tool("g")]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


def _streamed(text: str, cuts: list[int]) -> tuple[str, list[tuple]]:
    bounds = sorted({c for c in cuts if 0 < c < len(text)})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)])]
    events, _ = stream_parse(chunks, tools=TOOLS)
    return "".join(e.text for e in events if isinstance(e, ContentDelta)), [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)]


def _one_shot(text: str) -> tuple[str, list[tuple]]:
    parsed = parse_response(text, tools=TOOLS)
    return parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('get_weather(city="Paris")', [("get_weather", {"city": "Paris"})]),
        ('  get_weather(city="Paris", unit="celsius")\n\n', [("get_weather", {"city": "Paris", "unit": "celsius"})]),
        ('get_weather(city="Paris"), get_weather(city="Oslo")', [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]),
        ('get_weather(city="Paris")\nmath.hypot(x=3, y=4)', [("get_weather", {"city": "Paris"}), ("math.hypot", {"x": 3, "y": 4})]),
        ('<think>The user wants the weather.</think>\n\nget_weather(city="Paris")', [("get_weather", {"city": "Paris"})]),
        ("g()", [("g", {})]),
    ],
)
def test_a_whole_answer_of_bare_calls_is_a_call_list(text: str, expected: list[tuple]) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert parsed.content == ""
    assert {c.format for c in parsed.tool_calls} == {"pythonic"}


def test_positional_arguments_are_mapped_by_the_schema_and_recorded() -> None:
    [call] = parse_response('get_weather("Paris", "celsius")', tools=TOOLS).tool_calls
    assert call.arguments == {"city": "Paris", "unit": "celsius"}
    assert call.repairs and "positional" in call.repairs[0]


@pytest.mark.parametrize(
    "text",
    [
        'get_weather(city="Paris") should tell us.',  # prose after it
        'You can call get_weather(city="Paris") for that.',  # not the answer's start
        'get_weather(city="Paris")\nprint(1)',  # a name that is no tool
        "get_weather(city=paris)",  # a variable, not a literal: code
        "get_weather(**options)",
        '```python\nresult = get_weather(city="Paris")\nresult += 1\n```',  # code in a fence (test_code_fence_calls.py)
        '`get_weather(city="Paris")`',
        'get_weather(city="Paris"',  # never closed
        'weather(city="Paris")',  # another name
        'xget_weather(city="Paris")',
    ],
)
def test_anything_else_stays_content(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert parsed.content == text.strip()
    assert not [d for d in parsed.diagnostics if d.kind != DiagnosticKind.REPAIRED]


def test_without_tools_a_bare_call_is_prose() -> None:
    assert _calls('get_weather(city="Paris")', tools=None) == []
    assert _calls('print("hello")', tools=None) == []


def test_tool_names_that_python_cannot_call_add_no_trigger() -> None:
    parser = get_parser("auto", [Tool("get-weather"), Tool("search files"), Tool("ok.name")])
    triggers = TriggerScanner(parser.families, parser.ctx).content_triggers
    assert "ok.name(" in triggers
    assert not {"get-weather(", "search files("} & triggers
    assert {t for t in parser.anchored if t.endswith("(")} == {
        "ok.name(", "functions.ok.name(", "default_api.ok.name(", "print(ok.name(", "print(default_api.ok.name(", "ok.name.call(",
    }


@pytest.mark.parametrize(
    "text",
    ["print(default_api.get_weather(city='Paris'))", "Checking.\nprint(get_weather(city='Paris'))"],
)
def test_gemini_print_around_a_bracketless_call(text: str) -> None:
    """Gemma/Gemini write their tool_code convention without the fence: ``print(default_api.f(...))``."""
    tools = [Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})]
    parsed = parse_response(text, tools=tools)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert "print(...) around the call removed" in parsed.tool_calls[0].repairs
    assert_every_cut_matches(text, tools, 3)


@pytest.mark.parametrize("text", ["You can run print(get_weather(city='Paris')) yourself.", "print(get_weather(city='Paris'))\nprint('done')"])
def test_print_around_a_call_inside_prose_or_code_is_not_a_call(text: str) -> None:
    assert parse_response(text, tools=[Tool("get_weather")]).tool_calls == []


@pytest.mark.parametrize("text", ['functions.get_weather({"city": "Paris"})', 'default_api.get_weather(city="Paris")'])
def test_a_namespace_before_the_name_is_the_tool(text: str) -> None:
    """Tools declared in a namespace (Harmony's ``namespace functions``, Gemini's ``default_api``)
    are called through it; the name resolves to the offered tool, and the repair is recorded."""
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert parsed.content == ""
    assert any("get_weather" in d.reason for d in parsed.diagnostics)
    assert _streamed(text, list(range(1, len(text)))) == _one_shot(text)


# ------------------------------------------------------------------ heads, scans, streams

_BODY = ["g(", "get_weather(", "(", ")", "city=", '"Paris"', "'x'", "1", "-2", "[1]", "{}", "True", "x", ", ", " ", "\n",
         "<think>t</think>", "</think>", "print(", "=", "b'", "r'a'", "`", "\u00a0", "functions.", "default_api."]


_SCANNER = TriggerScanner(list(registered_families().values()), ParseContext(TOOLS))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from(_BODY), min_size=1, max_size=10))
def test_trying_the_answer_start_alone_equals_visiting_every_tool_trigger(parts: list[str]) -> None:
    """One-shot parsing tries the tools' triggers only at the answer's start; the stream's scanner
    (which has them as ordinary triggers) visits every occurrence. Both must agree."""
    text = "".join(parts)
    parser = get_parser("auto", TOOLS)
    anchored = scan_text(text, parser.scanner, parser.ctx, reasoning=True, anchored=parser.anchored)
    everywhere = scan_text(text, _SCANNER, parser.ctx, reasoning=True, literal=True)
    assert [(c.name, c.arguments) for c in anchored.calls] == [(c.name, c.arguments) for c in everywhere.calls]
    assert anchored.spans == everywhere.spans


#: a lone ``</think>`` (pre-filled reasoning) is the stream's documented difference in content
_STREAM_BODY = [piece for piece in _BODY if piece != "</think>"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from(_STREAM_BODY), min_size=1, max_size=8), cuts=st.lists(st.integers(1, 80), max_size=6))
def test_streaming_matches_one_shot(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    assert _streamed(text, cuts) == _one_shot(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from(_BODY), min_size=1, max_size=8), cuts=st.lists(st.integers(1, 80), max_size=6))
def test_streaming_gives_the_one_shot_calls_even_after_prefilled_reasoning(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    assert _streamed(text, cuts)[1] == _one_shot(text)[1]


@pytest.mark.parametrize("chunks", [["reason ", "</think>\n", "g()"], ["x", "</think>", "g(", ")"], ["g", "(", ")"]])
def test_after_prefilled_reasoning_streamed_as_content_the_call_is_still_announced(chunks: list[str]) -> None:
    events, result = stream_parse(chunks, tools=TOOLS)
    assert [e.call.name for e in events if isinstance(e, CallReady)] == ["g"]
    assert [c.name for c in result.tool_calls] == ["g"]


@pytest.mark.parametrize("text", ['get_weather(city="Paris")', '<think>t</think>\nget_weather(city="Paris"), g()', 'g(a=1)  then more'])
def test_every_single_character_cut_matches_one_shot(text: str) -> None:
    assert _streamed(text, list(range(1, len(text)))) == _one_shot(text)


@pytest.mark.parametrize(("text", "content"), [
    ('Here is the function call:\nget_weather(city="Paris")', "Here is the function call:"),
    ('Here is the function call:\n\nget_weather(city="Paris"), g()', "Here is the function call:"),
    ('Tool call: get_weather(city="Paris")', ""),  # the call line's own label (history_display), not a lead-in
    ('<think>t</think>\nCalling it now:\nget_weather(city="Paris")', "Calling it now:"),
])
def test_a_lead_in_line_may_announce_the_call_list(text: str, content: str) -> None:
    """Small models write "Here is the function call:" before the calls (as before a bare JSON call)."""
    parsed = parse_response(text, tools=TOOLS)
    assert [c.name for c in parsed.tool_calls][:1] == ["get_weather"]
    assert parsed.content == content
    assert _streamed(text, list(range(1, len(text)))) == _one_shot(text)


@pytest.mark.parametrize("text", [
    'Note: get_weather(city="Paris") returns the weather.',  # prose after the call
    'Use it like this:\nget_weather(city="Paris") gives the weather.',
    'The result (see f(x)): get_weather(city="Paris")',  # code before the colon: no lead-in
])
def test_no_lead_in_no_call(text: str) -> None:
    assert _calls(text) == []


@pytest.mark.parametrize("text", [
    'I will call it now.\nget_weather(city="Paris")',  # no colon: a sentence, then the call's own line
    'First line.\nHere is the call:\nget_weather(city="Paris")',  # a lead-in that does not open the answer
])
def test_call_lines_that_end_the_answer_after_prose_are_calls(text: str) -> None:
    """The answer's closing lines, each one call of an offered tool (tests/parsers/test_call_lines_after_prose.py)."""
    assert [c.name for c in parse_response(text, tools=TOOLS).tool_calls] == ["get_weather"]
    assert _streamed(text, list(range(1, len(text)))) == _one_shot(text)
