"""A call object that says why it is made, ``<invoke>`` as a plain call tag, and two invoke dialects' details.

Sources (transcribed outside the repository, see docs/accuracy.md):

* cgtrai/amiagi's tool-calling tests: ``{"tool": f, "args": {…}, "intent": "inspect"}`` in fences and
  under ``tool_calls``;
* peterdmv/beamclaw's parser: ``<invoke><name>curl</name><args>{…}</args></invoke>``;
* sugarcraft/sugar-crush's DSML and MiniMax tests: ``string=true`` left unquoted, and MiniMax
  values framed by line breaks (MiniMax's reference parser trims them).
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches

READ = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
LIST = Tool("list_dir", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
CURL = Tool("curl", parameters={"type": "object", "properties": {"url": {"type": "string"}}})
WRITE = Tool("write", parameters={"type": "object", "properties": {"content": {"type": "string"}, "path": {"type": "string"}}})
TOOLS = [READ, LIST, CURL, WRITE]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --- the call's purpose beside its name and arguments --------------------------------------------


@pytest.mark.parametrize("key", ["intent", "reason", "rationale", "purpose", "explanation", "justification"])
def test_a_purpose_in_words_beside_a_name_and_arguments_is_still_a_call(key: str) -> None:
    """The extra key made the object "something else", so nothing ran."""
    text = '```tool_call\n{"tool":"read_file","args":{"path":"/tmp/a.txt"},"' + key + '":"odczyt"}\n```'
    assert _calls(text) == [("read_file", {"path": "/tmp/a.txt"})]
    assert _calls(text, None) == [("read_file", {"path": "/tmp/a.txt"})]


def test_a_purpose_beside_each_call_of_a_list_and_beside_the_list() -> None:
    text = (
        '{"tool_calls":[{"name":"list_dir","args":{"path":"."},"intent":"scan"},'
        '{"name":"read_file","args":{"path":"README.md"},"intent":"inspect"}],"intent":"look around"}'
    )
    assert _calls(text) == [("list_dir", {"path": "."}), ("read_file", {"path": "README.md"})]
    assert_every_cut_matches(text, TOOLS, step=13)


def test_a_purpose_beside_a_wrapped_call() -> None:
    text = '```json\n{"tool_call":{"name":"list_dir","arguments":{"path":"."}},"intent":"lista"}\n```'
    assert _calls(text) == [("list_dir", {"path": "."})]


@pytest.mark.parametrize(
    "text",
    [
        '{"name":"read_file","args":{"path":"a"},"intent":{"goal":"x"}}',  # a purpose that is data, not words
        '{"name":"read_file","intent":"inspect"}',  # a name and a purpose, no arguments: any object
        '{"action":"cancel","tool":"read_file","arguments":{"path":"a"}}',  # a router's "not a call" stays so
    ],
)
def test_objects_a_purpose_key_does_not_make_a_call(text: str) -> None:
    assert _calls(text, None) == []


def test_a_prompt_s_call_example_echoed_with_a_description_is_no_call() -> None:
    """smollm2-135m's recorded reply to a Hermes prompt: the example call, a ``description`` added beside
    its arguments. Reading a ``description`` beside ``arguments`` as words (a Claude Code proxy's test,
    cage) made this echo a call, and the replay of the recorded run read differently; it was dropped."""
    text = (
        "To call a tool, reply with only the call, written exactly like this:\n\n<tool_call>\n"
        '{"type": "function", "function": {"name": "flight_book", "description": "Book a flight.", '
        '"arguments": {"_from": "example from", "to": "example to"}}}\n</tool_call>\n\nThis is a custom function.'
    )
    assert _calls(text, [Tool("flight_book")]) == []


# --- <invoke> as a plain call tag ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<invoke><name>curl</name><args>{"url":"http://example.com"}</args></invoke>', [("curl", {"url": "http://example.com"})]),
        ('<invoke>{"name":"read_file","arguments":{"path":"a.txt"}}</invoke>', [("read_file", {"path": "a.txt"})]),
        ("<invoke><tool_name>list_dir</tool_name><parameters><path>src</path></parameters></invoke>", [("list_dir", {"path": "src"})]),
    ],
)
def test_an_invoke_tag_without_attributes_holds_a_call_as_the_hermes_tags_do(text: str, expected: list) -> None:
    """Read nothing before: only ``<invoke name=…>`` (and Claude 2.1's invoke inside ``<function_calls>``) was a call."""
    assert _calls(text) == expected
    assert_every_cut_matches(text, TOOLS, step=7)


@pytest.mark.parametrize(
    "text",
    [
        "<invoke>the deploy script</invoke> runs nightly.",
        "<invoke><name>curl</name><args>{unreadable</args></invoke>",
    ],
)
def test_an_invoke_tag_that_holds_no_call_stays_text(text: str) -> None:
    assert _calls(text) == []


# --- DeepSeek's string attribute left unquoted -----------------------------------------------------


def test_an_unquoted_string_attribute_keeps_the_parameter() -> None:
    """The parameter tag did not match, so its value was skipped and the call ran with no arguments."""
    text = '<｜DSML｜tool_calls><｜DSML｜invoke name="read_file"><｜DSML｜parameter name="path" string=true>3</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'
    assert _calls(text) == [("read_file", {"path": "3"})]
    assert _calls(text.replace("string=true", "string=false").replace('"path"', '"n"'), None) == [("read_file", {"n": 3})]
    assert_every_cut_matches(text, TOOLS, step=9)


# --- MiniMax's framing line breaks ---------------------------------------------------------------


def test_the_line_breaks_framing_a_minimax_value_are_layout() -> None:
    text = '<minimax:tool_call><invoke name="write"><parameter name="content">\nline one\n    indented\n</parameter></invoke></minimax:tool_call>'
    assert _calls(text) == [("write", {"content": "line one\n    indented"})]
    assert_every_cut_matches(text, TOOLS, step=7)


def test_a_further_line_break_is_the_minimax_value_s_own_and_claude_s_values_stay_as_written() -> None:
    minimax = '<minimax:tool_call><invoke name="write"><parameter name="content">\nlast line\n\n</parameter></invoke></minimax:tool_call>'
    assert _calls(minimax) == [("write", {"content": "last line\n"})]
    claude = '<function_calls><invoke name="write"><parameter name="content">\nline\n</parameter></invoke></function_calls>'
    assert _calls(claude) == [("write", {"content": "\nline\n"})]


# --- other attributes beside an invoke's or a parameter's name -------------------------------------

WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})


def test_attributes_beside_the_names_of_an_invoke_and_its_parameters() -> None:
    """``<invoke displayname=… name=…>`` did not match the invoke tag at all (chuk_chat's foreign-protocol test)."""
    text = '<invoke displayname="Wetter" name="get_weather"><parameter displayname="Ort" name="city">Kiel</parameter></invoke>'
    assert _calls(text, [WEATHER]) == [("get_weather", {"city": "Kiel"})]
    assert _calls('<function_calls><invoke name="get_weather" id="c1"><parameter name="city" string="true" id="p1">7</parameter></invoke></function_calls>', [WEATHER]) == [
        ("get_weather", {"city": "7"})
    ]
    assert_every_cut_matches(text, [WEATHER], step=5)


def test_an_invoke_with_attributes_but_no_name_is_no_call() -> None:
    assert _calls('<invoke displayname="Wetter" id="1"><parameter name="city">Kiel</parameter></invoke>', [WEATHER]) == []
