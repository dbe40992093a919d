"""Calls whose markup a model bent, and call lists with one broken member, each cited.

* Nameless parameters in Qwen3-Coder calls: ``<parameter>command</parameter>view</parameter>``
  (Qwen2.5-Coder-7B on SWE-bench, measured by a coding-agent harness's own notes),
  ``<parameter>command</parameter>`` then ``<parameter>create</parameter>`` and
  ``<parameter>path=/testbed/x.py</parameter>`` (an R2E-Gym action parser's tests),
  MiniMax's ``<parameter<parameter>command</parameter>`` then the value element (a
  coding agent's repair tests), and ``<parameter>NAME</parameter>`` followed by the
  value as text (the shape issue #26 lists with the pretty-printed values).
* A quoted key, ``<parameter="command">ls -la /tmp</parameter>`` (openvinotoolkit/model_server#4487:
  a third of one fleet's schema-invalid calls).
* A key glued to its value, ``<parameter=command=ls -la</parameter>``, and a close written
  ``</parameter/>`` or missing its ``>`` (tag damage seen on Qwen3.5/3.6 quantisations).
* GLM-4.7 leaving out ``<arg_value>``: ``<arg_key>query</arg_key>how many vacation days left</arg_value>``
  (raw sampled tokens in vllm-project/vllm#49248).
* Claude-style and DSML invokes whose ``</parameter>`` (and ``</invoke>``) were left out before
  the next parameter or invoke tag (DeepSeek V4's damaged DSML, as a coding agent's
  normalisation tests transcribe it): the value ends at the next tag.
* Qwen3-Coder calls whose ``</function>`` (and the last ``</parameter>``) were left out before
  the next ``<function=``: each call ends where the next opens, instead of the first
  swallowing the second's tag or parameters.
* GLM, Kimi K2, DeepSeek and Gemma 4 calls whose end tag or token was left out before the next
  call's opener: each call ends where the next opens (a token quoted in a JSON string
  is still the argument's text).
* A JSON call list with one member that never closes (``{"city": "Paris"}, {"name": ...``)
  and a bare call object missing its last brace before the next call's line: the broken
  one is read with its closers supplied, its siblings are kept.

Every shape has its negative (prose that mentions it is no call) and streams to the
one-shot reading.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches, assert_stream_matches

EDITOR = Tool(
    "str_replace_editor",
    parameters={"type": "object", "properties": {"command": {"type": "string"}, "path": {"type": "string"}, "file_text": {"type": "string"}}},
)
TERMINAL = Tool("terminal_execute", parameters={"type": "object", "properties": {"command": {"type": "string"}}})
READ_FILE = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
BASH = Tool("bash", parameters={"type": "object", "properties": {"command": {"type": "string"}}})
SEARCH = Tool("search", parameters={"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}})
WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
TIME = Tool("get_time", parameters={"type": "object", "properties": {"tz": {"type": "string"}}})
TOOLS = [EDITOR, TERMINAL, READ_FILE, BASH, SEARCH, WEATHER, TIME]


def calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


def wrapped(body: str, name: str) -> str:
    return f"<tool_call>\n<function={name}>\n{body}\n</function>\n</tool_call>"


NAMELESS = [
    (wrapped("<parameter>command</parameter>view</parameter>\n<parameter>path</parameter>/a.py</parameter>", "str_replace_editor"),
     ("str_replace_editor", {"command": "view", "path": "/a.py"})),
    (wrapped("<parameter>command</parameter>\n<parameter>create</parameter>\n<parameter>path=/testbed/util.py</parameter>\n"
             "<parameter>file_text=print(1)</parameter>", "str_replace_editor"),
     ("str_replace_editor", {"command": "create", "path": "/testbed/util.py", "file_text": "print(1)"})),
    (wrapped("<parameter<parameter>command</parameter>\n<parameter>echo repaired</parameter>", "terminal_execute"),
     ("terminal_execute", {"command": "echo repaired"})),
    (wrapped("<parameter>path</parameter>\n/tmp/a.txt", "read_file"), ("read_file", {"path": "/tmp/a.txt"})),
    ("<tool_call>\n<function=read_file>\n    <parameter>path</parameter>\n      /tmp/a.txt\n    </function>\n</tool_call>",
     ("read_file", {"path": "/tmp/a.txt"})),
]

TAG_DAMAGE = [
    (wrapped('<parameter="command">ls -la /tmp</parameter>', "bash"), ("bash", {"command": "ls -la /tmp"})),
    (wrapped("<parameter=command=ls -la</parameter>", "bash"), ("bash", {"command": "ls -la"})),
    (wrapped("<parameter=command=ls -la>\n</parameter>", "bash"), ("bash", {"command": "ls -la"})),
    (wrapped("<parameter=command>\nls -la\n</parameter/>", "bash"), ("bash", {"command": "ls -la"})),
    (wrapped("<parameter=query>\nrust\n</parameter\n<parameter=limit>\n10\n</parameter>", "search"), ("search", {"query": "rust", "limit": 10})),
    ('<tool_call>\n<function="bash">\n<parameter=command>\npwd\n</parameter>\n</function>\n</tool_call>', ("bash", {"command": "pwd"})),
]

INVOKE_CLOSERS_LEFT_OUT = [
    ('<function_calls>\n<invoke name="search">\n<parameter name="query">rust lifetimes\n<parameter name="limit">5</parameter>\n'
     "</invoke>\n</function_calls>", [("search", {"query": "rust lifetimes", "limit": 5})]),
    ('<\uff5cDSML\uff5ctool_calls>\n<\uff5cDSML\uff5cinvoke name="read_file">\n'
     '<\uff5cDSML\uff5cparameter name="path" string="true">/srv/notes.md\n'
     '<\uff5cDSML\uff5cinvoke name="search">\n<\uff5cDSML\uff5cparameter name="query" string="true">todo</\uff5cDSML\uff5cparameter>\n'
     "<\uff5cDSML\uff5cparameter name=\"limit\" string=\"false\">3\n</\uff5cDSML\uff5cinvoke>\n</\uff5cDSML\uff5ctool_calls>",
     [("read_file", {"path": "/srv/notes.md"}), ("search", {"query": "todo", "limit": 3})]),
    ('<|DSML|tool_calls>\n<invoke name="read_file">\n<parameter name="path" string="true">/srv/a.txt\n'
     '<invoke name="bash">\n<parameter name="command" string="true">wc -l /srv/a.txt</parameter>\n</invoke>\n</|DSML|tool_calls>',
     [("read_file", {"path": "/srv/a.txt"}), ("bash", {"command": "wc -l /srv/a.txt"})]),
]


FUNCTION_CLOSE_LEFT_OUT = [
    ("<tool_call>\n<function=read_file>\n<parameter=path>\n/srv/a.txt\n</parameter>\n"
     "<function=search>\n<parameter=query>\nrust\n</parameter>\n</function>\n</tool_call>",
     [("read_file", {"path": "/srv/a.txt"}), ("search", {"query": "rust"})]),
    ("<tool_call>\n<function=search>\n<parameter=limit>\n4\n<function=bash>\n<parameter=command>\nls\n</parameter>\n"
     "</function>\n</tool_call>", [("search", {"limit": 4}), ("bash", {"command": "ls"})]),
    ("<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n<function=get_weather>\n</function>",
     [("get_time", {"tz": "UTC"}), ("get_weather", {})]),
]


@pytest.mark.parametrize(("text", "want"), FUNCTION_CLOSE_LEFT_OUT)
def test_qwen3_coder_call_left_open_ends_where_the_next_opens(text: str, want: list) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert "missing </function> before the next <function=" in parsed.tool_calls[0].repairs
    assert calls(text, tools=None) == want


def test_a_function_tag_quoted_inside_a_closed_value_is_its_text() -> None:
    text = wrapped("<parameter=query>\nwhat does <function=f> mean\n</parameter>", "search")
    assert calls(text) == [("search", {"query": "what does <function=f> mean"})]


_DS = {"calls": "<\uff5ctool\u2581calls\u2581begin\uff5c>", "call": "<\uff5ctool\u2581call\u2581begin\uff5c>",
       "sep": "<\uff5ctool\u2581sep\uff5c>", "end": "<\uff5ctool\u2581call\u2581end\uff5c>", "close": "<\uff5ctool\u2581calls\u2581end\uff5c>"}
_KIMI = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{{\"tz\": {tz}}}"
END_LEFT_OUT = [
    ("<tool_call>get_time\n<arg_key>tz</arg_key>\n<arg_value>UTC</arg_value>\n"
     "<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>rust</arg_value>\n</tool_call>",
     [("get_time", {"tz": "UTC"}), ("search", {"query": "rust"})]),
    (_KIMI.format(tz='"UTC"') + '<|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>{"query": "rust"}'
     "<|tool_call_end|><|tool_calls_section_end|>", [("get_time", {"tz": "UTC"}), ("search", {"query": "rust"})]),
    ('{calls}{call}get_time{sep}{{"tz": "UTC"}}{call}search{sep}{{"query": "rust"}}{end}{close}'.format(**_DS),
     [("get_time", {"tz": "UTC"}), ("search", {"query": "rust"})]),
    ('<|tool_call>call:get_time{tz:<|"|>UTC<|"|>}\n<|tool_call>call:search{query:<|"|>rust<|"|>}<tool_call|>',
     [("get_time", {"tz": "UTC"}), ("search", {"query": "rust"})]),
]
QUOTED_OPENER = [
    (_KIMI.format(tz='"<|tool_call_begin|>"') + "<|tool_call_end|><|tool_calls_section_end|>", [("get_time", {"tz": "<|tool_call_begin|>"})]),
    ('{calls}{call}get_time{sep}{{"tz": "{call}"}}{end}{close}'.format(**_DS), [("get_time", {"tz": _DS["call"]})]),
]


@pytest.mark.parametrize(("text", "want"), END_LEFT_OUT)
def test_call_left_open_ends_where_the_next_call_opens(text: str, want: list) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert any(r.startswith("missing") and "before the next" in r for r in parsed.tool_calls[0].repairs)
    assert calls(text, tools=None) == want


@pytest.mark.parametrize(("text", "want"), QUOTED_OPENER)
def test_an_opener_quoted_in_a_json_string_is_the_argument(text: str, want: list) -> None:
    assert calls(text) == want


@pytest.mark.parametrize(("text", "want"), INVOKE_CLOSERS_LEFT_OUT)
def test_invoke_value_whose_closer_was_left_out_ends_at_the_next_tag(text: str, want: list) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert any("missing" in r for r in parsed.tool_calls[0].repairs)
    assert calls(text, tools=None) == want


GLM_NO_VALUE_OPENER = [
    ("<tool_call>search<arg_key>query</arg_key>how many vacation days left</arg_value></tool_call>",
     ("search", {"query": "how many vacation days left"})),
    ("<tool_call>search<arg_key>query</arg_key>rust</arg_value><arg_key>limit</arg_key><arg_value>5</arg_value></tool_call>",
     ("search", {"query": "rust", "limit": 5})),
]


@pytest.mark.parametrize(("text", "call"), NAMELESS + TAG_DAMAGE + GLM_NO_VALUE_OPENER)
def test_bent_markup_is_read_with_its_repair_named(text: str, call: tuple[str, dict]) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [call]
    assert parsed.tool_calls[0].repairs, "a bent tag is a repair, named on the call"


def test_nameless_keys_must_name_a_listed_property() -> None:
    # a nameless element that names no property of the tool is skipped and said, never made a key
    parsed = parse_response(wrapped("<parameter>colour</parameter>red</parameter>\n<parameter=path>/a</parameter>", "read_file"), tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "/a"})]
    # without tools, anything shaped like a key is one
    assert calls(wrapped("<parameter>colour</parameter>red</parameter>", "paint"), tools=None) == [("paint", {"colour": "red"})]


def test_a_nameless_tag_inside_a_tagged_value_is_its_text() -> None:
    # the template never writes a nameless <parameter>: inside a value it is the value's text
    text = wrapped("<parameter=path>\nUse <parameter> tags here\n</parameter>", "read_file")
    assert calls(text) == [("read_file", {"path": "Use <parameter> tags here"})]
    assert_stream_matches(text)


def test_a_glued_tag_is_split_only_when_the_whole_is_not_a_key() -> None:
    tool = Tool("f", parameters={"type": "object", "properties": {"a=b": {"type": "string"}, "a": {"type": "string"}}})
    assert calls(wrapped("<parameter=a=b>\nx\n</parameter>", "f"), tools=[tool]) == [("f", {"a=b": "x"})]


def test_glm_value_left_open_loses_the_line_break_before_the_next_tag() -> None:
    # the template writes a line break after </arg_value>: with the closer gone it is still layout
    text = "<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>rust lang\n<arg_key>limit</arg_key>\n<arg_value>2</arg_value>\n</tool_call>"
    assert calls(text) == [("search", {"query": "rust lang", "limit": 2})]
    spaced = "<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>rust lang  </tool_call>"
    assert calls(spaced) == [("search", {"query": "rust lang"})]  # a one-line value's padding is layout (GLM's parsers strip it)


def test_glm_value_without_opener_stops_at_the_next_tag() -> None:
    # the closer belongs to a later value: this key has none (as before)
    text = "<tool_call>search<arg_key>query</arg_key><arg_key>limit</arg_key><arg_value>5</arg_value></tool_call>"
    assert calls(text) == [("search", {"query": None, "limit": 5})]


SALVAGE = [
    ('[{"name": "get_weather", "arguments": {"city": "Paris"}, {"name": "get_time", "arguments": {"tz": "UTC"}}]',
     [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "UTC"})]),
    ('<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}, {"name": "get_time", "arguments": {"tz": "UTC"}}]</tool_call>',
     [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "UTC"})]),
    ('<tool_call>[{"name": "get_weather", "arguments": {"city": }}, {"name": "get_time", "arguments": {"tz": "UTC"}}]</tool_call>',
     [("get_time", {"tz": "UTC"})]),
    ('{"name": "get_weather", "arguments": {"city": "Paris"}\n{"name": "get_time", "arguments": {"tz": "UTC"}}',
     [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "UTC"})]),
    ('{"name": "get_weather", "arguments": {"city": }}\n{"name": "get_time", "arguments": {"tz": "UTC"}}',
     [("get_time", {"tz": "UTC"})]),
]


@pytest.mark.parametrize(("text", "want"), SALVAGE)
def test_one_broken_call_does_not_cost_its_siblings(text: str, want: list) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    if len(want) == 1:
        assert any(d.kind.value == "unparseable" for d in parsed.diagnostics), "the broken one is reported"


NEGATIVES = [
    "In Qwen's format a nameless <parameter>path</parameter> tag is wrong; write <parameter=path> instead.",
    "Write `<parameter=command=ls>` as two parts: the key, then the value, closed by </parameter/> never.",
    "GLM closes a value with </arg_value>, as in <arg_key>query</arg_key> then the value.",
    "A list like [{\"a\": 1}, {\"b\": 2}] is data, and so is {\"name\": \"Ada\", \"age\": 3}.",
    "<function=read_file> takes <parameter>path</parameter> as its only argument.",
    'Inside <invoke name="search"> each <parameter name="query"> needs its own closing tag.',
    "Close <function=search> with </function> before you open <function=bash> and its <parameter=command>.",
    "GLM opens each call with <tool_call> and the name, then <arg_key>; a second <tool_call> opens the next.",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_prose_about_the_shapes_is_no_call(text: str) -> None:
    assert calls(text) == []
    assert calls(text, tools=None) == []


@pytest.mark.parametrize("text", [t for t, _ in NAMELESS + TAG_DAMAGE + GLM_NO_VALUE_OPENER] + [t for t, _ in SALVAGE + INVOKE_CLOSERS_LEFT_OUT + FUNCTION_CLOSE_LEFT_OUT + END_LEFT_OUT + QUOTED_OPENER] + NEGATIVES)
def test_streams_to_the_one_shot_reading(text: str) -> None:
    assert_stream_matches(text)


@pytest.mark.parametrize(
    "text",
    [NAMELESS[0][0], TAG_DAMAGE[1][0], GLM_NO_VALUE_OPENER[0][0], SALVAGE[0][0], SALVAGE[3][0], INVOKE_CLOSERS_LEFT_OUT[1][0],
     FUNCTION_CLOSE_LEFT_OUT[0][0], FUNCTION_CLOSE_LEFT_OUT[1][0], *(t for t, _ in END_LEFT_OUT)],
)
def test_every_cut_streams_to_the_one_shot_reading(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=9)


GLM_ESCAPED_BREAKS = "<tool_call>get_weather\\n<arg_key>city</arg_key>\\n<arg_value>Hangzhou</arg_value>\\n</tool_call>"


def test_glm_stray_characters_between_a_key_and_its_value_are_skipped() -> None:
    """Line breaks written as the two characters ``\\n`` (a double-escaped output) stand between the tags."""
    tools = [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    parsed = parse_response(GLM_ESCAPED_BREAKS, tools=tools)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Hangzhou"})]
    assert any("between 'city' and its value" in r for r in parsed.tool_calls[0].repairs)
    tagged = parse_response("<tool_call>get_weather\n<arg_key>city</arg_key> <b>x</b><arg_value>Hangzhou</arg_value></tool_call>", tools=tools)
    assert not any("between 'city'" in r for call in tagged.tool_calls for r in call.repairs)  # markup between is not skipped
