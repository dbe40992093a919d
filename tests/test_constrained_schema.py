"""The constrained reply schema against the real jsonschema validator, and its round trip
through the ordinary parser: a reply the schema admits is read as the same call."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp import parse_response
from utp.adapters.constrained import ConstrainedResultAdapter
from utp.constrained import (
    ANSWER_KEY,
    answer_text,
    follows_schema,
    reply_schema,
    unenforced_reply,
    without_argument_checks,
)
from utp.types import ParsedResponse, Tool

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)

#: JSON Schema type -> (property schema, strategy for a valid value, a value of another type)
PROPERTY_KINDS: dict[str, tuple[dict[str, Any], st.SearchStrategy[Any], Any]] = {
    "string": ({"type": "string"}, TEXT, 7),
    "integer": ({"type": "integer"}, st.integers(-10**6, 10**6), "seven"),
    "number": ({"type": "number"}, st.floats(-1e6, 1e6, allow_nan=False), "seven"),
    "boolean": ({"type": "boolean"}, st.booleans(), "yes"),
    "enum": ({"type": "string", "enum": ["low", "high"]}, st.sampled_from(["low", "high"]), "medium"),
    "list": ({"type": "array", "items": {"type": "string"}}, st.lists(TEXT, max_size=3), {"not": "a list"}),
}


@st.composite
def tools(draw: st.DrawFn) -> list[Tool]:
    """1-4 tools with distinct names, each with up to 4 typed properties, some required."""
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    made = []
    for name in names:
        props = draw(st.dictionaries(NAMES, st.sampled_from(sorted(PROPERTY_KINDS)), max_size=4))
        required = [p for p in props if draw(st.booleans())]
        schema = {"type": "object", "properties": {p: PROPERTY_KINDS[k][0] for p, k in props.items()}, "required": required}
        made.append(Tool(name, f"tool {name}", schema))
    return made


def kind_of(tool: Tool, prop: str) -> str:
    return next(k for k, (schema, _, _) in PROPERTY_KINDS.items() if schema == tool.properties[prop])


@st.composite
def valid_arguments(draw: st.DrawFn, tool: Tool) -> dict[str, Any]:
    chosen = [p for p in tool.properties if p in tool.required or draw(st.booleans())]
    return {p: draw(PROPERTY_KINDS[kind_of(tool, p)][1]) for p in chosen}


@st.composite
def tools_and_call(draw: st.DrawFn) -> tuple[list[Tool], dict[str, Any]]:
    offered = draw(tools())
    tool = draw(st.sampled_from(offered))
    return offered, {"name": tool.name, "arguments": draw(valid_arguments(tool))}


def validates(schema: dict[str, Any], value: Any) -> bool:
    jsonschema.validators.validator_for(schema).check_schema(schema)  # the schema itself is valid JSON Schema
    return follows_schema(value, schema)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools_and_call())
def test_every_valid_call_validates(case):
    offered, call = case
    assert validates(reply_schema(offered), call)
    assert validates(reply_schema(offered, allow_parallel=False), call)


@st.composite
def tools_and_calls(draw: st.DrawFn) -> tuple[list[Tool], list[dict[str, Any]]]:
    """Offered tools and 2-4 valid calls of them (a tool may be called more than once)."""
    offered = draw(tools())
    chosen = draw(st.lists(st.sampled_from(offered), min_size=2, max_size=4))
    return offered, [{"name": t.name, "arguments": draw(valid_arguments(t))} for t in chosen]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools_and_calls())
def test_several_valid_calls_validate_only_where_parallel_calls_are_allowed(case):
    offered, calls = case
    assert validates(reply_schema(offered), calls)
    assert not validates(reply_schema(offered, allow_parallel=False), calls)


@settings(max_examples=100, deadline=None)
@given(tools_and_call(), NAMES)
def test_a_call_to_a_tool_not_offered_does_not_validate(case, other):
    offered, call = case
    if other in {t.name for t in offered}:
        other += "_x"
    assert not validates(reply_schema(offered), {**call, "name": other})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_call_with_invalid_arguments_does_not_validate(data):
    offered = data.draw(tools())
    typed = [t for t in offered if t.properties]
    if not typed:
        offered = [*offered, Tool("typed_tool", "", {"type": "object", "properties": {"n": {"type": "integer"}}})]
        typed = [offered[-1]]
    tool = data.draw(st.sampled_from(typed))
    arguments = data.draw(valid_arguments(tool))
    prop = data.draw(st.sampled_from(sorted(tool.properties)))
    how = data.draw(st.sampled_from(["wrong type", "missing required"] if prop in tool.required else ["wrong type"]))
    if how == "wrong type":
        arguments[prop] = PROPERTY_KINDS[kind_of(tool, prop)][2]
    else:
        arguments.pop(prop, None)
    schema = reply_schema(offered)
    assert not validates(schema, {"name": tool.name, "arguments": arguments})
    assert not validates(schema, {"name": tool.name, "arguments": json.dumps(arguments)})  # arguments as a string


@settings(deadline=None)
@given(tools(), TEXT)
def test_a_text_answer_validates_whatever_is_offered(offered, text):
    assert validates(reply_schema(offered), {ANSWER_KEY: text})
    assert validates(reply_schema([]), {ANSWER_KEY: text})  # nothing offered: restraint is all that is left
    assert not validates(reply_schema(offered), {ANSWER_KEY: text, "name": offered[0].name})
    assert not validates(reply_schema(offered), text)  # bare prose is no branch


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools_and_call())
def test_a_constrained_call_is_read_by_the_ordinary_parser_as_the_same_call(case):
    offered, call = case
    text = json.dumps(call, ensure_ascii=False)  # name first, as the schema orders it
    parsed = parse_response(text, tools=offered)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [(call["name"], call["arguments"])]
    assert parsed.tool_calls[0].format == "json"
    assert parsed.content.strip() == ""


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools_and_calls())
def test_several_constrained_calls_are_read_in_order(case):
    offered, calls = case
    parsed = parse_response(json.dumps(calls, ensure_ascii=False), tools=offered)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [(c["name"], c["arguments"]) for c in calls]


@settings(deadline=None)
@given(tools(), TEXT)
def test_a_constrained_text_answer_becomes_plain_content(offered, text):
    reply = json.dumps({ANSWER_KEY: text}, ensure_ascii=False)
    parsed = ConstrainedResultAdapter().read_answer(parse_response(reply, tools=offered))
    assert parsed.tool_calls == [] and parsed.content == text


def test_an_answer_cut_off_by_the_token_limit_keeps_what_was_said():
    assert answer_text('{"answer": "It is 11 degrees in Tok') == "It is 11 degrees in Tok"
    assert answer_text('{"answer": "fine"}') == "fine"
    assert answer_text("Just prose.") is None
    assert answer_text('{"name": "f", "arguments": {}}') is None


def test_reading_the_answer_leaves_calls_and_other_content_alone():
    adapter = ConstrainedResultAdapter()
    prose = ParsedResponse(content="Plain words.")
    assert adapter.read_answer(prose) is prose
    call = parse_response('{"name": "ping", "arguments": {}}', tools=[Tool("ping")])
    assert adapter.read_answer(call) is call


def test_the_shape_check_ignores_argument_keywords_a_grammar_may_not_enforce():
    dated = Tool("book", "", {"type": "object", "properties": {"day": {"type": "string", "minLength": 10}}, "required": ["day"]})
    schema = reply_schema([dated])
    reply = '{"name": "book", "arguments": {"day": "Friday"}}'
    assert not follows_schema(json.loads(reply), schema)  # the full schema refuses it (registry's job)
    assert unenforced_reply(schema, reply) is None  # but the server did enforce the shape
    assert follows_schema(json.loads(reply), without_argument_checks(schema))


def test_a_raw_newline_inside_a_string_is_still_an_enforced_reply():
    """llama-cpp-python's grammar lets raw control characters into strings (llama.cpp's own does not):
    found on Qwen2.5-Coder 0.5B, whose multi-line answers were wrongly called unsupported."""
    reply = '{"answer": "Steps:\n1. **Open** the client"}'.replace("\\n", "\n")
    assert "\n" in reply
    assert unenforced_reply(reply_schema([Tool("f")]), reply) is None
    assert answer_text(reply) == "Steps:\n1. **Open** the client"


@pytest.mark.parametrize(
    "reply, why",
    [
        ("Sure, here is the weather.", "not JSON"),
        ('{"city": "Paris"}', "shape"),
        ('{"name": "write_file", "arguments": {}}', "shape"),  # a tool this round did not offer
    ],
)
def test_a_reply_outside_the_schema_says_the_server_did_not_enforce_it(reply, why):
    schema = reply_schema([Tool("get_weather", "", {"type": "object", "properties": {"city": {"type": "string"}}})])
    assert why in (unenforced_reply(schema, reply) or "")


def test_tool_schemas_are_copied_not_shared():
    tool = Tool("f", "", {"properties": {"a": {"type": "string"}}})
    schema = reply_schema([tool])
    schema["anyOf"][0]["properties"]["arguments"]["properties"]["a"]["type"] = "integer"
    assert tool.parameters == {"properties": {"a": {"type": "string"}}}
    assert schema["anyOf"][0]["properties"]["arguments"]["type"] == "object"  # filled in where missing

