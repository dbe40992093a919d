"""Example arguments and tool listings used by prompt-based formats."""

from __future__ import annotations

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from utp.adapters.examples import description_example, example_arguments, example_value
from utp.adapters.listing import python_signature, python_type, tool_listing
from utp.types import Tool


def test_example_values_follow_the_schema_keywords():
    assert example_value({"type": "string", "enum": ["c", "f"]}, "units") == "c"
    assert example_value({"type": "string"}, "city") == "Paris"
    assert example_value({"type": "string"}, "file_path") == "README.md"
    assert example_value({"type": "string"}, "ticketNumber") == "example ticket number"
    assert example_value({"type": "string", "format": "date"}, "when") == "2024-05-01"
    assert example_value({"type": "integer"}, "count") == 1
    assert example_value({"type": "integer", "minimum": 5}, "count") == 5
    assert example_value({"type": "number", "maximum": 1}, "ratio") == 1.0
    assert example_value({"type": "boolean"}, "recursive") is True
    assert example_value({"type": "array", "items": {"type": "string"}}, "cities") == ["Paris"]
    assert example_value({"type": ["null", "integer"]}, "n") == 1
    assert example_value({"anyOf": [{"type": "null"}, {"type": "boolean"}]}, "flag") is True
    assert example_value({"type": "string", "default": "metric"}, "units") == "metric"
    assert example_value({"const": 3}, "x") == 3


def test_example_values_prefer_the_example_written_in_the_description():
    assert example_value({"type": "string", "description": "Airline code and number, e.g. BA117"}, "flight_number") == "BA117"
    assert example_value({"type": "string", "description": "Ticker symbol (e.g. MSFT)"}, "symbol") == "MSFT"
    assert example_value({"type": "string", "description": "Code, for example: 'USD'."}, "currency") == "USD"
    assert example_value({"type": "string", "description": "City name"}, "city") == "Paris"
    assert description_example("A name such as Bob.") == "Bob"
    limited = {"type": "string", "description": "e.g. BA117", "pattern": "^[a-z]+$"}
    assert example_value(limited, "airline") == "example airline"
    assert description_example("no hint here") is None
    assert description_example(None) is None


def test_example_arguments_fill_required_or_show_one_argument():
    tool = Tool(
        name="t",
        parameters={"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["b"]},
    )
    assert example_arguments(tool) == {"b": 1}
    optional_only = Tool(name="t", parameters={"type": "object", "properties": {"query": {"type": "string"}}})
    assert example_arguments(optional_only) == {"query": "project status"}
    assert example_arguments(Tool(name="t")) == {}


def test_example_arguments_for_nested_objects():
    tool = Tool(
        name="create_event",
        parameters={
            "type": "object",
            "properties": {
                "event": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "attendees": {"type": "array", "items": {"type": "string", "format": "email"}}},
                    "required": ["title", "attendees"],
                }
            },
            "required": ["event"],
        },
    )
    assert example_arguments(tool) == {"event": {"title": "Weekly report", "attendees": ["alice@example.com"]}}


_LEAF = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "integer"}),
    st.builds(lambda lo: {"type": "integer", "minimum": lo}, st.integers(-5, 50)),
    st.just({"type": "number"}),
    st.just({"type": "boolean"}),
    st.builds(lambda vals: {"type": "string", "enum": vals}, st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=3, unique=True)),
    st.just({"type": "string", "format": "date-time"}),
)
_SCHEMA = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(
            lambda props: {"type": "object", "properties": props, "required": list(props)},
            st.dictionaries(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), inner, max_size=3),
        ),
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), _SCHEMA, min_size=1, max_size=4))
def test_example_arguments_are_valid_against_the_schema(properties):
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    args = example_arguments(Tool(name="t", parameters=schema))
    jsonschema.validate(args, schema)
    assert set(args) == set(properties)


def test_python_types_read_like_python():
    assert python_type({"type": "string"}) == "str"
    assert python_type({"type": "array", "items": {"type": "integer"}}) == "list[int]"
    assert python_type({"type": ["string", "null"]}) == "str | None"
    assert python_type({"enum": ["a", "b"]}) == 'Literal["a", "b"]'
    assert python_type({}) == "Any"


def test_python_signature_puts_required_first_and_shows_defaults():
    tool = Tool(
        name="search",
        description="Search the code.",
        parameters={
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "default": 10},
                "query": {"type": "string", "description": "Words to find"},
            },
            "required": ["query"],
        },
    )
    assert python_signature(tool) == (
        "search(query: str, limit: int = 10)\n    Search the code.\n    query: Words to find"
    )


def test_listing_style_is_chosen_per_family():
    tool = Tool(name="ping", description="Check.")
    assert tool_listing("pythonic", [tool]).startswith("ping()")
    assert tool_listing("hermes", [tool]).startswith("<tools>\n")
    assert tool_listing("mistral", [tool]) == '{"name": "ping", "description": "Check.", "parameters": {"type": "object", "properties": {}}}'
