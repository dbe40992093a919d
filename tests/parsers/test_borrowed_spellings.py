"""One format's call written with a piece of another's spelling, read from each format's definition.

* Qwen3-Coder's bare ``<function=f>`` whose parameters are spelled as Anthropic's and
  MiniMax's, ``<parameter name="k">`` (MiniMax models write this without a block around it).
* gpt-oss's header with its tokens but without ``<|message|>``:
  ``<|channel|>commentary to=functions.f <|constrain|>json{…}``; JSON glued to the name
  with no constraint token stays no call. A message holding the whole call object again,
  ``to=f`` then ``{"name": "f", "arguments": {…}}``, is unwrapped to its arguments.
* GLM's name line followed by arguments as elements named by their keys:
  ``<tool_call>f<city>Paris</city></tool_call>``.
* Qwen3-Coder's ``function=NAME`` carried into a JSON call: ``{"function=f", "arguments": {…}}``.
* A tool's element with its arguments as attributes: ``<run_command command="ls -l" />``.
* Llama 3.1's built-in ``f.call(a=1)`` syntax written for an offered tool, without its tag;
  a tool named ``api.call`` itself is that tool.
* A call written flat (arguments beside the name) inside a fence, and Home Assistant's
  ``{"service": "light.turn_on", …}`` (home-llm's ```` ```homeassistant ```` block).
* Gemma 4's argument quoted Python's way and closed by its own quote token too
  (``pattern:':\\s*\\w+'<|"|>``): the stray token is dropped.

Every shape has its negative (prose or data that looks like it is no call) and streams to the
one-shot reading.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.parsers import jsonrepair as jr
from utp.types import Tool

from .conftest import assert_every_cut_matches, assert_stream_matches_under

RUN = Tool("run_command", parameters={"type": "object", "properties": {
    "command": {"type": "string"}, "workdir": {"type": "string"}, "timeout": {"type": "integer"}}})
BROWSE = Tool("browser_action", parameters={"type": "object", "properties": {"action": {"type": "string"}, "url": {"type": "string"}}})
WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {
    "location": {"type": "string"}, "days": {"type": "integer"},
    "where": {"type": "object", "properties": {"lat": {"type": "number"}}}}})
FETCH = Tool("webfetch", parameters={"type": "object", "properties": {"url": {"type": "string"}, "format": {"type": "string"}}})
SEARCH = Tool("brave_search", parameters={"type": "object", "properties": {"query": {"type": "string"}, "count": {"type": "integer"}}})
COVER = Tool("cover.close_cover", parameters={"type": "object", "properties": {"target_device": {"type": "string"}}})
TOOLS = [RUN, BROWSE, WEATHER, FETCH, SEARCH, COVER]


def calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


MINIMAX_PARAMETERS = (
    '<function=browser_action>\n<parameter name="action">launch</parameter>\n'
    '<parameter name="url">http://host.docker.internal/</parameter>\n</function>'
)


def test_a_bare_qwen3_coder_call_with_named_parameter_tags() -> None:
    assert calls(MINIMAX_PARAMETERS) == [("browser_action", {"action": "launch", "url": "http://host.docker.internal/"})]
    two = 'Opening it. <function=browser_action><parameter name="action">launch</parameter></function>\n' + MINIMAX_PARAMETERS
    assert [name for name, _ in calls(two)] == ["browser_action", "browser_action"]


def test_named_parameter_tags_stream_at_every_cut() -> None:
    assert_every_cut_matches(MINIMAX_PARAMETERS, TOOLS, step=9)


def test_prose_naming_function_and_parameter_tags_is_no_call() -> None:
    text = 'Write <function=NAME> and then <parameter name="key"> for each argument.'
    assert calls(text) == []
    assert parse_response(text, tools=TOOLS).content == text


DROPPED_MESSAGE = '<|channel|>commentary to=functions.run_command <|constrain|>json{\n  "command": "date",\n  "workdir": "/"\n}'


def test_a_harmony_header_without_its_message_token() -> None:
    parsed = parse_response(DROPPED_MESSAGE, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("run_command", {"command": "date", "workdir": "/"})]
    assert parsed.tool_calls[0].repairs == ["<|message|> left out after the header"]
    assert parsed.content == ""


def test_a_header_without_its_message_token_then_a_long_answer_leaves_no_token_in_the_content() -> None:
    text = '<|channel|>commentary to=functions.run_command <|constrain|>json{"command": "date"}<|call|>' + " and then some" * 60
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("run_command", {"command": "date"})]
    assert "<|" not in parsed.content
    for size in (1, 5, 64):
        assert_stream_matches_under(text, TOOLS, size)


def test_a_header_without_its_message_token_streams_at_every_cut() -> None:
    assert_every_cut_matches(DROPPED_MESSAGE, TOOLS, step=9)


HARMONY_WHOLE_CALL = (
    '<|channel|>commentary to=run_command <|constrain|>json<|message|>'
    '{"name":"run_command","arguments":{"command":"ls","workdir":"/srv"},"call_id":null}<|call|>'
)


def test_a_harmony_message_holding_the_whole_call_object_is_unwrapped_to_its_arguments() -> None:
    parsed = parse_response(HARMONY_WHOLE_CALL, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("run_command", {"command": "ls", "workdir": "/srv"})]
    assert "the call object written where its arguments belong, unwrapped to its arguments" in parsed.tool_calls[0].repairs
    assert_every_cut_matches(HARMONY_WHOLE_CALL, TOOLS, step=11)


def test_a_tool_that_takes_a_name_keeps_the_object_as_its_arguments() -> None:
    tag = Tool("tag", parameters={"type": "object", "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}}})
    text = '<|channel|>commentary to=functions.tag <|constrain|>json<|message|>{"name": "tag", "arguments": {"k": 1}}<|call|>'
    assert calls(text, [tag]) == [("tag", {"name": "tag", "arguments": {"k": 1}})]


@pytest.mark.parametrize("text", [
    '<|channel|>commentary to=functions.run_command{"command": "date"}<|end|>',  # no constraint: not a header gpt-oss writes
    '<|channel|>commentary to=functions.nosuch <|constrain|>json{"command": "date"}',  # not an offered tool
])
def test_json_glued_to_a_recipient_without_the_constraint_or_for_no_tool_is_no_call(text: str) -> None:
    assert calls(text) == []


GLM_ELEMENTS = [
    ("<tool_call>get_weather<location>Tokyo</location><days>3</days></tool_call>", [("get_weather", {"location": "Tokyo", "days": 3})]),
    ("I'll look that up.\n<tool_call>get_weather\n<location>Oslo</location>\n<where><lat>59.9</lat></where>\n</tool_call>\nHere it is.",
     [("get_weather", {"location": "Oslo", "where": {"lat": 59.9}})]),
]


@pytest.mark.parametrize(("text", "want"), GLM_ELEMENTS)
def test_glm_name_line_then_arguments_as_elements(text: str, want: list) -> None:
    assert calls(text) == want


def test_glm_elements_stream_at_every_cut() -> None:
    assert_every_cut_matches(GLM_ELEMENTS[1][0], TOOLS, step=9)


def test_glm_elements_the_output_stopped_after_are_read_unless_the_length_limit_stopped_it() -> None:
    text = "<tool_call>get_weather<location>Tokyo</location>\n"
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"location": "Tokyo"})]
    assert "output ended before </tool_call>" in parsed.tool_calls[0].repairs
    limited = {"message": {"role": "assistant", "content": text}, "done": True, "done_reason": "length"}
    assert parse_response(limited, tools=TOOLS).tool_calls == []
    assert_every_cut_matches(text, TOOLS, step=7)


def test_glm_elements_the_output_stopped_inside_are_reported_not_run() -> None:
    parsed = parse_response("<tool_call>get_weather<location>Tokyo</location><days>", tools=TOOLS)
    assert parsed.tool_calls == []
    assert [d.kind.value for d in parsed.diagnostics] == ["truncated"]


@pytest.mark.parametrize("text", [
    "<tool_call>get_weather<b>Tokyo</b></tool_call>",  # an element that is no parameter of the tool
    "<tool_call>nosuch<location>Tokyo</location></tool_call>",  # no offered tool
    "<tool_call>get_weather<location>Tokyo</location> and so on</tool_call>",  # prose among the elements
])
def test_name_lines_before_other_markup_are_no_call(text: str) -> None:
    assert calls(text) == []


def test_a_pair_written_inside_one_key_is_read_as_that_pair() -> None:
    assert jr.loads_lenient('{"function=webfetch","arguments":{"url":"x"}}') == ({"function": "webfetch", "arguments": {"url": "x"}}, [jr.PAIR_IN_ONE_STRING])
    text = '<tool_call>\n{"function=webfetch","arguments":{"url":"https://docs.opencode.ai","format":"markdown"}}\n</tool_call>'
    assert calls(text) == [("webfetch", {"url": "https://docs.opencode.ai", "format": "markdown"})]


def test_a_key_with_an_equals_sign_before_its_value_stays_a_key() -> None:
    assert jr.loads_lenient('{"a=b", "c"}') == ({"a=b": "c"}, [jr.COMMA_FOR_COLON])
    assert jr.loads_lenient('{"x=1": 2}') == ({"x=1": 2}, [])


ATTRIBUTES = [
    ('<run_command command="ls -l" />', [("run_command", {"command": "ls -l"})]),
    ('<run_command command="make test" timeout="60"></run_command>', [("run_command", {"command": "make test", "timeout": 60})]),
    ("Running it now.\n<run_command command='cd /tmp &amp;&amp; ls' workdir=\"/\"/>", [("run_command", {"command": "cd /tmp && ls", "workdir": "/"})]),
]


@pytest.mark.parametrize(("text", "want"), ATTRIBUTES)
def test_a_tools_element_with_its_arguments_as_attributes(text: str, want: list) -> None:
    assert calls(text) == want


@pytest.mark.parametrize("index", range(len(ATTRIBUTES)))
def test_attribute_elements_stream_at_every_cut(index: int) -> None:
    assert_every_cut_matches(ATTRIBUTES[index][0], TOOLS, step=9)


@pytest.mark.parametrize("text", [
    '<run_command command="ls">and a body</run_command>',  # an element with a body: shown, not used
    '<run_command shell="bash" />',  # an attribute that is no parameter
    '<run_command command="ls" command="pwd" />',  # one argument twice
    '<other_tool command="ls" />',  # no offered tool
])
def test_attribute_elements_that_are_not_a_whole_call_are_no_call(text: str) -> None:
    assert calls(text) == []


WRITE = Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})
EDIT = Tool("edit_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "search": {"type": "string"}, "replace": {"type": "string"}}})
BODIES = [
    ("<write_file path='a.ts'>const x = 1;</write_file>", [("write_file", {"path": "a.ts", "content": "const x = 1;"})]),
    ("Writing it.\n<write_file path='a.ts'>\nline1\n  line2\n</write_file>", [("write_file", {"path": "a.ts", "content": "line1\n  line2"})]),
    (
        "<edit_file path='a.ts'><search>return 1;</search><replace>return 2;</replace></edit_file>",
        [("edit_file", {"path": "a.ts", "search": "return 1;", "replace": "return 2;"})],
    ),
]


@pytest.mark.parametrize(("text", "want"), BODIES)
def test_an_attributed_element_s_body_adds_the_arguments_left(text: str, want: list) -> None:
    """The body of ``<write_file path='a'>…</write_file>`` (a desktop agent's prompt format for Llama
    models) made the element no call; its text is the one parameter left, its elements the rest."""
    tools = [*TOOLS, WRITE, EDIT]
    assert [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls] == want
    assert_every_cut_matches(text, tools, step=9)


@pytest.mark.parametrize("text", [
    "<write_file path='a.ts'>const x = <div>hi</div>;</write_file>",  # markup in the text: shown
    "<edit_file path='a.ts'>return 2;</edit_file>",  # text, but two parameters left
    "<edit_file path='a.ts'><path>b.ts</path></edit_file>",  # an element repeating an attribute
])
def test_attributed_elements_with_other_bodies_are_no_call(text: str) -> None:
    assert parse_response(text, tools=[*TOOLS, WRITE, EDIT]).tool_calls == []


def test_an_attributed_element_opened_again_before_its_closer_is_text() -> None:
    parsed = parse_response("<write_file path='a.ts'>text <write_file path='b.ts'>more</write_file>", tools=[WRITE])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("write_file", {"path": "b.ts", "content": "more"})]
    assert parsed.content == "<write_file path='a.ts'>text"


BUILTIN_SYNTAX = [
    ('brave_search.call(query="weather in London")', [("brave_search", {"query": "weather in London"})]),
    ("brave_search.call(query='tides', count=3)\n", [("brave_search", {"query": "tides", "count": 3})]),
]


@pytest.mark.parametrize(("text", "want"), BUILTIN_SYNTAX)
def test_llama_builtin_syntax_for_an_offered_tool_without_its_tag(text: str, want: list) -> None:
    assert calls(text) == want


def test_llama_builtin_syntax_streams_at_every_cut() -> None:
    assert_every_cut_matches(BUILTIN_SYNTAX[0][0], TOOLS, step=9)


def test_a_tool_named_with_call_is_that_tool() -> None:
    api = Tool("api.call", parameters={"type": "object", "properties": {"text": {"type": "string"}}})
    assert calls("<|python_tag|>api.call(text='hello')<|eom_id|>", [api]) == [("api.call", {"text": "hello"})]
    assert calls("<|python_tag|>brave_search.call(query='x')<|eom_id|>") == [("brave_search", {"query": "x"})]


@pytest.mark.parametrize("text", [
    'You can use brave_search.call(query="x") for that.',
    'brave_search.call(query="x") returns results, which is handy',
])
def test_builtin_syntax_in_prose_is_no_call(text: str) -> None:
    assert calls(text) == []


FLAT_FENCES = [
    ('closing the blinds as you requested.\n```homeassistant\n{"service": "cover.close_cover", "target_device": "cover.kitchen"}\n```',
     [("cover.close_cover", {"target_device": "cover.kitchen"})]),
    ('```json\n{"tool_name": "get_weather", "location": "Oslo", "days": 2}\n```', [("get_weather", {"location": "Oslo", "days": 2})]),
    ('{"service": "cover.close_cover", "target_device": "cover.kitchen"}', [("cover.close_cover", {"target_device": "cover.kitchen"})]),
]


@pytest.mark.parametrize(("text", "want"), FLAT_FENCES)
def test_a_call_written_flat_in_a_fence_and_home_assistants_service_key(text: str, want: list) -> None:
    assert calls(text) == want


def test_flat_fences_stream_at_every_cut() -> None:
    assert_every_cut_matches(FLAT_FENCES[0][0], TOOLS, step=9)


@pytest.mark.parametrize("text", [
    'Example:\n```json\n{"tool_name": "get_weather", "location": "Oslo"}\n```\nThat is the format.',  # a sample shown
    'The data {"service": "cover.close_cover", "target_device": "cover.kitchen"} is here.',  # mid-sentence
    '```json\n{"service": "web", "port": 80}\n```',  # a service that is no offered tool: configuration
])
def test_flat_objects_shown_or_naming_no_tool_are_no_call(text: str) -> None:
    assert calls(text) == []


GREP = Tool("grep", parameters={"type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}}})
GEMMA_STRAY = '<|tool_call>call:grep{path:<|"|>/data<|"|>,pattern:\':\\s*\\w+\'<|"|>}<tool_call|>'


def test_gemma_value_quoted_pythons_way_then_closed_by_the_quote_token() -> None:
    parsed = parse_response(GEMMA_STRAY, tools=[GREP])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("grep", {"path": "/data", "pattern": ":\\s*\\w+"})]
    assert parsed.tool_calls[0].repairs == ['dropped a stray <|"|> after a quoted value']
    assert_every_cut_matches(GEMMA_STRAY, [GREP], step=9)


def test_a_quote_token_after_an_unquoted_value_is_still_unreadable() -> None:
    parsed = parse_response('<|tool_call>call:grep{pattern:abc<|"|>}<tool_call|>', tools=[GREP])
    assert parsed.tool_calls == [] and [d.kind.value for d in parsed.diagnostics] == ["unparseable"]


CALCULATOR = Tool("calculator", parameters={"type": "object", "properties": {"expression": {"type": "string"}}})
PING = Tool("database.ping", parameters={"type": "object", "properties": {}})


@pytest.mark.parametrize("text", ['<tool_code>calculator(expression="5 + 5")</tool_code>', '<tool_code>calculator({"expression": "5 + 5"})</tool_code>'])
def test_gemmas_tool_code_convention_written_as_a_tag(text: str) -> None:
    assert calls(text, [CALCULATOR]) == [("calculator", {"expression": "5 + 5"})]
    assert_every_cut_matches(text, [CALCULATOR], step=9)


@pytest.mark.parametrize(
    "text",
    [
        # Gemini's tool_code: each call printed on a line of its own (a recorded Gemini reply left the tag open)
        '<tool_code>\nprint(default_api.calculator(expression="5 + 5"))\nprint(default_api.database.ping())\n</tool_code>',
        '<tool_code>\nprint(default_api.calculator(expression="5 + 5"))\nprint(default_api.database.ping())\n',
        '<tool_call>\ncalculator(expression="5 + 5")\ndatabase.ping()\n</tool_call>',
    ],
)
def test_calls_on_lines_of_their_own_in_one_tag_are_all_read(text: str) -> None:
    """The print around each call hid an offered name from the weak tag; a second line was dropped unread."""
    assert calls(text, [CALCULATOR, PING]) == [("calculator", {"expression": "5 + 5"}), ("database.ping", {})]
    assert_every_cut_matches(text, [CALCULATOR, PING], step=9)


@pytest.mark.parametrize(
    "text",
    ["<tool_code>print(1 + 2)</tool_code>", "Put code in a <tool_code> tag.", "<tool_code>x = 5</tool_code>", "<tool_code>print(nope())</tool_code>"],
)
def test_code_in_a_tool_code_tag_that_calls_no_offered_tool_stays_content(text: str) -> None:
    parsed = parse_response(text, tools=[CALCULATOR])
    assert parsed.tool_calls == [] and parsed.content == text


@pytest.mark.parametrize("constraint", ["", "<|constrain|>json"])
def test_a_harmony_call_with_an_empty_message_is_a_call_without_arguments(constraint: str) -> None:
    text = f"<|channel|>commentary to=functions.database.ping {constraint}<|message|><|call|>"
    parsed = parse_response(text, tools=[PING])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("database.ping", {})]
    assert parsed.content == ""


ARGUMENTS_ELEMENT = '<function name="calculator">\n  <arguments>{"expression": "6 + 6"}</arguments>\n</function>'


def test_a_function_elements_arguments_as_json_inside_an_arguments_element() -> None:
    assert calls(ARGUMENTS_ELEMENT, [CALCULATOR]) == [("calculator", {"expression": "6 + 6"})]
    assert_every_cut_matches(ARGUMENTS_ELEMENT, [CALCULATOR], step=9)


def test_prose_naming_an_arguments_element_is_no_call() -> None:
    text = 'The <function name="calculator"><arguments> element holds JSON.'
    assert parse_response(text, tools=[CALCULATOR]).content == text


READ = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
WRITE = Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})
DONE = Tool("attempt_completion", parameters={"type": "object", "properties": {"result": {"type": "string"}}})
LINES = [READ, WRITE, DONE, RUN]
CALL_LINES = (
    "Tool call: read_file (path: main.go)\nTool call: write_file (path: out.txt, content: Hello World)\n"
    'Tool call: run_command (command="go test ./...", timeout=60)\nTool call: attempt_completion (result: Я всё сделал)\n\nDone.'
)


def test_an_agents_tool_call_lines() -> None:
    assert calls(CALL_LINES, LINES) == [
        ("read_file", {"path": "main.go"}), ("write_file", {"path": "out.txt", "content": "Hello World"}),
        ("run_command", {"command": "go test ./...", "timeout": 60}), ("attempt_completion", {"result": "Я всё сделал"}),
    ]
    assert parse_response(CALL_LINES, tools=LINES).content == "Done."
    assert_every_cut_matches(CALL_LINES, LINES, step=13)


@pytest.mark.parametrize("text", [
    "The log says Tool call: read_file (path: main.go) and more.",  # inside a sentence
    "Tool call: delete_all (path: /)",  # no offered tool
    "Tool call: read_file (path: main.go) was made earlier",  # the line goes on
])
def test_tool_call_lines_in_prose_or_for_no_tool_are_no_call(text: str) -> None:
    assert calls(text, LINES) == []
