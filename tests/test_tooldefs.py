"""Every definition shape callers already have normalises to the same Tool."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utp.tooldefs import ToolDefinitionError, normalize_tool, normalize_tools
from utp.types import Tool, ToolTier

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "Name of the city"},
        "units": {"type": "string", "description": "Temperature units", "default": "celsius", "enum": ["celsius", "fahrenheit", "kelvin"]},
    },
    "required": ["city"],
}
EXPECTED = Tool(name="get_weather", description="Get current weather information for a city", parameters=SCHEMA)


@dataclass
class ToolParameter:  # seed 002's shape (xaibo)
    type: str
    description: str | None = None
    required: bool = False
    default: Any = None
    enum: list[str] | None = None


@dataclass
class Seed002Tool:
    name: str
    description: str
    parameters: dict[str, ToolParameter] = field(default_factory=dict)


SEED_PARAMS = {
    "city": ToolParameter(type="string", description="Name of the city", required=True),
    "units": ToolParameter(
        type="string", description="Temperature units", default="celsius", enum=["celsius", "fahrenheit", "kelvin"]
    ),
}

SHAPES = {
    "openai": {"type": "function", "function": {"name": "get_weather", "description": EXPECTED.description, "parameters": SCHEMA}},
    "flattened": {"name": "get_weather", "description": EXPECTED.description, "parameters": SCHEMA},
    "anthropic": {"name": "get_weather", "description": EXPECTED.description, "input_schema": SCHEMA},
    "mcp": {"name": "get_weather", "title": "Weather", "description": EXPECTED.description, "inputSchema": SCHEMA},
    "seed002_objects": Seed002Tool("get_weather", EXPECTED.description, SEED_PARAMS),
    "seed002_dicts": {
        "name": "get_weather",
        "description": EXPECTED.description,
        "parameters": {
            "city": {"type": "string", "description": "Name of the city", "required": True},
            "units": {"type": "string", "description": "Temperature units", "required": False, "default": "celsius", "enum": ["celsius", "fahrenheit", "kelvin"]},
        },
    },
    "function_without_type": {"function": {"name": "get_weather", "description": EXPECTED.description, "parameters": SCHEMA}},
    "tool": EXPECTED,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_normalises_to_the_same_tool(shape):
    [tool] = normalize_tools([SHAPES[shape]])
    assert tool.name == EXPECTED.name
    assert tool.description == EXPECTED.description
    assert tool.parameters == EXPECTED.parameters
    assert tool.tier is ToolTier.CRAWL


def test_a_single_definition_is_accepted_without_a_list():
    assert normalize_tools(SHAPES["openai"])[0].name == "get_weather"
    assert normalize_tools(None) == []


def test_tier_and_confirmation_survive_the_openai_wrapper():
    wrapped = {**SHAPES["openai"], "tier": "walk", "requires_confirmation": True}
    tool = normalize_tool(wrapped)
    assert tool.tier is ToolTier.WALK
    assert tool.requires_confirmation is True


def test_missing_parameters_become_an_empty_object_schema():
    assert normalize_tool({"name": "ping"}).parameters == {"type": "object", "properties": {}}


def test_json_schema_without_type_gets_one():
    tool = normalize_tool({"name": "a", "parameters": {"properties": {"x": {"type": "integer"}}}})
    assert tool.parameters == {"type": "object", "properties": {"x": {"type": "integer"}}}


def test_seed002_parameter_named_properties_is_not_mistaken_for_a_schema():
    tool = normalize_tool({"name": "a", "parameters": {"properties": {"type": "object", "required": True}}})
    assert tool.parameters == {"type": "object", "properties": {"properties": {"type": "object"}}, "required": ["properties"]}


def test_seed002_dicts_keep_other_json_schema_keywords():
    tool = normalize_tool({"name": "a", "parameters": {"tags": {"type": "array", "items": {"type": "string"}, "required": True}}})
    assert tool.properties["tags"] == {"type": "array", "items": {"type": "string"}}
    assert tool.required == ["tags"]


@pytest.mark.parametrize(
    ("definitions", "message"),
    [
        ([{"name": "ok"}, {"description": "no name"}], r"tools\[1\]: missing or empty 'name'"),
        ([{"name": "  "}], r"tools\[0\]: missing or empty 'name'"),
        ([{"name": "a", "description": 3}], r"tools\[0\] \(a\): 'description' must be a string"),
        ([{"name": "a", "parameters": "city"}], r"tools\[0\] \(a\): parameters must be an object, got str"),
        ([{"name": "a", "parameters": {"type": "string"}}], r"tools\[0\] \(a\): parameters must be an object schema, got type 'string'"),
        ([{"name": "a", "parameters": {"city": {"type": "str"}}}], r"tools\[0\] \(a\): parameter 'city' has type 'str'"),
        ([{"name": "a", "parameters": {"city": 5}}], r"tools\[0\] \(a\): parameter 'city' has no 'type'"),
        ([{"name": "a", "tier": "sprint"}], r"tools\[0\] \(a\): unknown tier 'sprint'"),
        ([{"name": "a"}, {"name": "a"}], r"tools\[1\]: duplicate tool name 'a'"),
        ([42], r"tools\[0\]: expected a tool definition, got int"),
    ],
)
def test_bad_definitions_name_the_index_and_field(definitions, message):
    with pytest.raises(ToolDefinitionError, match=message):
        normalize_tools(definitions)


_PARAM = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "number", "boolean", "array", "object"])},
    optional={"description": st.text(min_size=1, max_size=20), "required": st.booleans()},
)


@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
    params=st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True), _PARAM, max_size=5),
)
def test_seed002_and_json_schema_forms_agree(name, params):
    """Converting seed-002 params to a schema, then normalising that schema again, changes nothing."""
    tool = normalize_tool({"name": name, "parameters": params})
    assert set(tool.properties) == set(params)
    assert set(tool.required) == {p for p, spec in params.items() if spec.get("required")}
    for shape in ("openai", "anthropic", "mcp"):
        key = {"openai": "parameters", "anthropic": "input_schema", "mcp": "inputSchema"}[shape]
        body = {"name": name, key: tool.parameters}
        if shape == "openai":
            body = {"type": "function", "function": body}
        assert normalize_tool(body).parameters == tool.parameters


# -- utp.response (the lead's view_response; fixed alongside tooldefs) -----------------


def test_view_response_reads_anthropic_tool_use_blocks_from_dicts_and_objects():
    from types import SimpleNamespace

    from utp.response import view_response

    blocks = [{"type": "text", "text": "Checking."}, {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}]
    for response in ({"role": "assistant", "content": blocks}, SimpleNamespace(content=[SimpleNamespace(**b) for b in blocks])):
        view = view_response(response)
        assert view.content == "Checking."
        assert view.native_calls == [
            {"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
        ]


def test_view_response_prefers_tool_calls_over_content_blocks():
    from utp.response import view_response

    message = {"content": [{"type": "tool_use", "name": "b", "input": {}}], "tool_calls": [{"function": {"name": "a"}}]}
    assert view_response({"message": message}).native_calls == [{"function": {"name": "a"}}]
