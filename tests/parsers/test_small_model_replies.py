"""What small local models write when asked for a call, read as the call they meant.

* the name under ``tool_call`` (gemma4:e2b: ``{"tool_call": "get_weather", "parameters": {…}}``);
* the call quoted as the string of an answer object (qwen3.5:9b under Ollama's
  ``/api/generate``: ``{"content": "{\\"name\\": …}"}``);
* an offered tool's name glued to its arguments written as Python or JavaScript writes an object
  (gemma-3-4b: ``run_terminal_cmd{'command': 'pytest -q',}``);
* apostrophes inside single-quoted Python strings (``'Alison O'Brien'``);
* one ``}`` too many closing the call object before its name (``…}}}, 'name': 'f'}``);
* an arguments object alone in a fence as the whole answer, for the one tool it fits;
* ``[tool_call: NAME(key="v")]``: Gemini CLI's bracket holding a Python-style call.

Each with what must stay data or prose.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches


def _tool(name: str, required: tuple[str, ...] = (), **properties: str) -> Tool:
    return Tool(name, parameters={"type": "object", "properties": {k: {"type": t} for k, t in properties.items()}, "required": list(required)})


WEATHER = _tool("get_weather", ("city",), city="string", units="string")
COMMAND = _tool("run_command", ("command",), command="string")
TIMER = _tool("set_timer", ("minutes",), minutes="integer", label="string")
TOOLS = [WEATHER, COMMAND, TIMER]


def _calls(text: str, tools: list | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


def _repairs(text: str, tools: list | None = TOOLS) -> list[str]:
    return [r for c in parse_response(text, tools=tools).tool_calls for r in c.repairs]


# --------------------------------------------------------------------------- the name under tool_call


@pytest.mark.parametrize(
    "text",
    [
        '{"tool_call":"get_weather","parameters":{"city":"Seattle","units":"imperial"}}',
        '```json\n{\n  "tool_call": "get_weather",\n  "parameters": {\n    "city": "Seattle",\n    "units": "imperial"\n  }\n}\n```',
    ],
)
@pytest.mark.parametrize("tools", [TOOLS, None])
def test_the_name_under_tool_call(text: str, tools: list | None) -> None:
    assert _calls(text, tools) == [("get_weather", {"city": "Seattle", "units": "imperial"})]


def test_tool_call_beside_other_keys_is_data() -> None:
    assert _calls('{"tool_call": "get_weather", "status": "done", "elapsed": 3}') == []


# --------------------------------------------------------------------------- a call quoted under an answer key

QUOTED = '<think>\n\n</think>\n\n{\n  "content": "{\\n  \\"name\\": \\"get_weather\\",\\n  \\"arguments\\": {\\"city\\": \\"Oslo\\"}\\n}"\n}'


@pytest.mark.parametrize("tools", [TOOLS, None])
def test_a_call_quoted_as_the_string_of_an_answer_object(tools: list | None) -> None:
    assert _calls(QUOTED, tools) == [("get_weather", {"city": "Oslo"})]
    assert "call JSON quoted as a string under an answer key" in _repairs(QUOTED, tools)


def test_an_offered_tools_name_keyed_call_quoted_so() -> None:
    text = '{"content": "{\\"get_weather\\": {\\"city\\": \\"Oslo\\"}}"}'
    assert _calls(text) == [("get_weather", {"city": "Oslo"})]
    assert _calls(text.replace("get_weather", "get_news")) == []  # a name nobody offered: data


def test_a_quoted_call_streams_as_one_shot() -> None:
    assert_every_cut_matches(QUOTED, TOOLS, step=7)


@pytest.mark.parametrize(
    "text",
    [
        '{"content": "The weather in Oslo is mild."}',
        '{"content": "{\\"temperature\\": 20, \\"city\\": \\"Oslo\\"}"}',
        '{"content": "{\\"name\\": \\"get_weather\\""}',  # a string that is no whole JSON
        '{"content": "{\\"name\\": \\"get_weather\\", \\"arguments\\": {}}", "role": "tool"}',  # a record, not an answer
    ],
)
def test_answer_objects_holding_no_call_stay_data(text: str) -> None:
    assert _calls(text) == []


# --------------------------------------------------------------------------- a name glued to its arguments


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("run_command{'command': 'pytest -q',}\n", ("run_command", {"command": "pytest -q"})),
        ('set_timer{minutes: 10, label: "tea steeping"}', ("set_timer", {"minutes": 10, "label": "tea steeping"})),
        ("<think>The user wants a timer.</think>\nset_timer{minutes: 10}", ("set_timer", {"minutes": 10})),
    ],
)
def test_an_answer_that_is_an_offered_tools_name_glued_to_its_arguments_as_python_writes_them(text: str, call: tuple) -> None:
    assert _calls(text) == [call]
    assert "arguments glued to the tool's name, written as a Python or JavaScript object" in _repairs(text)
    assert_every_cut_matches(text, TOOLS, step=5)


@pytest.mark.parametrize(
    "text",
    [
        "Use set_timer{minutes: 10} to start one.",  # in a sentence
        "set_timer{minutes: 10}\nThen tell me when it rings.",  # more after it
        "start_timer{minutes: 10}",  # nobody offered it
        "const set_timer{minutes: 10}",  # code
        "set_timer{seconds: 10}",  # a key the tool does not take
    ],
)
def test_a_glued_name_that_is_not_the_whole_answer_stays_prose(text: str) -> None:
    assert _calls(text) == []


# --------------------------------------------------------------------------- quotes and braces of Python-minded models


def test_apostrophes_inside_single_quoted_strings() -> None:
    text = (
        "<tool_call>\n{'arguments': {'city': 'Oslo', 'units': 'The user's own, I'd say'}, 'name': 'get_weather'}\n</tool_call>\n"
        "<tool_call>\n{'arguments': {'command': 'echo 'Netflix' timed out'}, 'name': 'run_command'}\n</tool_call>"
    )
    assert _calls(text) == [
        ("get_weather", {"city": "Oslo", "units": "The user's own, I'd say"}),
        ("run_command", {"command": "echo 'Netflix' timed out"}),
    ]


@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_stray_brace_closing_the_object_before_its_name(quote: str) -> None:
    text = "<tool_call>\n{'arguments': {'city': 'Oslo', 'units': {'temp': 'C'}}}, 'name': 'get_weather'}\n</tool_call>".replace("'", quote)
    assert _calls(text) == [("get_weather", {"city": "Oslo", "units": {"temp": "C"}})]
    assert "dropped a stray } that closed the object early" in _repairs(text)


def test_a_complete_object_followed_by_prose_with_a_colon_is_not_merged() -> None:
    text = '{"name": "get_weather", "arguments": {"city": "Oslo"}}, note: the weather is for tomorrow'
    parsed = parse_response(text, tools=TOOLS)
    assert all("stray }" not in r for c in parsed.tool_calls for r in c.repairs)


# --------------------------------------------------------------------------- an arguments object alone


def test_a_fenced_arguments_object_as_the_whole_answer_calls_the_one_tool_it_fits() -> None:
    text = '```json\n{\n"command": "pwd"\n}\n```'
    assert _calls(text) == [("run_command", {"command": "pwd"})]
    assert "tool named by its arguments' keys (no name written)" in _repairs(text)


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ('```json\n{"units": "metric"}\n```', TOOLS),  # get_weather's required city is missing
        ('```json\n{"command": "pwd"}\n```', [COMMAND, _tool("run_script", ("command",), command="string")]),  # two tools fit
        ('Here is the config:\n```json\n{"command": "pwd"}\n```', TOOLS),  # after prose: data shown
        ('```json\n{"command": "pwd"}\n```', None),  # no tools offered
    ],
)
def test_an_arguments_object_that_fits_no_single_tool_stays_data(text: str, tools: list | None) -> None:
    assert _calls(text, tools) == []


# --------------------------------------------------------------------------- [tool_call: NAME(...)]


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ('Let me check the directory.\n\n[tool_call: run_command(command="pwd")]', ("run_command", {"command": "pwd"})),
        ("[tool_call: set_timer(minutes=10, label='tea')]", ("set_timer", {"minutes": 10, "label": "tea"})),
    ],
)
def test_gemini_clis_bracket_holding_a_python_call(text: str, call: tuple) -> None:
    assert _calls(text) == [call]
    assert_every_cut_matches(text, TOOLS, step=6)


@pytest.mark.parametrize(
    "text",
    [
        'Write [tool_call: run_command(command="pwd")] to run it.',  # in a sentence
        '[tool_call: delete_everything(force=True)]',  # nobody offered it
        '[tool_call: run_command(command="pwd")] and then more words',  # not a call line: words after the bracket
    ],
)
def test_a_bracketed_python_call_that_is_no_call_line_stays_prose(text: str) -> None:
    assert _calls(text) == []


def test_a_full_width_colon_lead_in_before_a_python_call() -> None:
    assert _calls('\u8c03\u7528\u5de5\u5177\uff1aget_weather(city="Paris")') == [("get_weather", {"city": "Paris"})]


# --------------------------------------------------------------------------- a router's "action": "call"


@pytest.mark.parametrize("tools", [TOOLS, None])
def test_a_key_saying_the_object_is_a_call_sits_beside_name_and_arguments(tools: list | None) -> None:
    text = '{"action":"call","tool":"get_weather","arguments":{"city":"Chongqing"}}'
    assert _calls(text, tools) == [("get_weather", {"city": "Chongqing"})]


def test_the_router_object_on_its_own_line_after_a_sentence() -> None:
    text = 'Sure, I will look.\n\n{"action":"call","tool":"get_weather","arguments":{"city":"Oslo"}}'
    assert _calls(text) == [("get_weather", {"city": "Oslo"})]
    assert _calls(text.replace("get_weather", "get_news")) == []  # a name nobody offered, after prose: data


@pytest.mark.parametrize(
    "text",
    [
        '{"action":"delegate","reason":"multi_task"}',
        '{"action":"cancel","tool":"get_weather","arguments":{"city":"Chongqing"}}',  # another word: not a call
    ],
)
def test_a_router_object_that_is_no_call_stays_data(text: str) -> None:
    assert _calls(text) == []


# --------------------------------------------------------------------------- Gemma 4 E2B's tool_code fences

WRITE = _tool("Write", ("path",), path="string", content="string")


def test_a_fence_closer_inside_a_string_of_a_tool_code_call() -> None:
    text = '```tool_code\nWrite(path="homework.md", content="# Homework\\n\\n1. one\\n\\n```")\n```\nSaved.'
    assert _calls(text, [WRITE]) == [("Write", {"path": "homework.md", "content": "# Homework\n\n1. one\n\n```"})]
    assert parse_response(text, tools=[WRITE]).content == "Saved."
    assert_every_cut_matches(text, [WRITE], step=7)


@pytest.mark.parametrize(
    "text",
    [
        '```tool_code\nWrite --path "x.md" --content "hello world"\n```',
        '```tool_code\nWrite --path="x.md" --content="hello world"\n```',
        'Write --path "x.md" --content "hello world"',  # the whole answer, no fence
    ],
)
def test_a_command_line_with_long_flags_named_as_the_parameters(text: str) -> None:
    assert _calls(text, [WRITE]) == [("Write", {"path": "x.md", "content": "hello world"})]
    assert_every_cut_matches(text, [WRITE], step=5)


@pytest.mark.parametrize(
    "text",
    [
        "```tool_code\nls -la\n```",  # a shell command, no offered tool
        '```tool_code\nWrite --path x.md --verbose\n```',  # a flag the tool does not take
        "Run Write --path x.md to save it.",  # in a sentence
        '```bash\nWrite --path "x.md" --content "hi"\n```\nThat is the command.',  # a shell fence shown
    ],
)
def test_command_lines_that_are_no_call_stay_content(text: str) -> None:
    assert _calls(text, [WRITE]) == []


# --------------------------------------------------------------------------- an agent's actions envelope


@pytest.mark.parametrize(
    "text",
    [
        '{"actions":[{"tool":"get_weather","arguments":{"city":"Oslo"}}],"response":"checking"}',
        '{"response":"checking","actions":[{"tool":"get_weather","arguments":{"city":"Oslo"}}]}',
    ],
)
def test_an_envelope_listing_calls_under_actions(text: str) -> None:
    assert _calls(text) == [("get_weather", {"city": "Oslo"})]


@pytest.mark.parametrize(
    "text",
    [
        '{"response":"It is sunny in Oslo."}',
        '{"actions":[{"step":"look outside"}],"response":"done"}',  # actions that are no calls
    ],
)
def test_an_envelope_without_calls_stays_data(text: str) -> None:
    assert _calls(text) == []


# --------------------------------------------------------------------------- DSML spaced out


def test_dsml_with_its_token_spaced_out() -> None:
    text = (
        "\u6211\u6765\u5e2e\u4f60\u67e5\u4e00\u4e0b\u3002\n\n< | DSML | function_calls>\n< | DSML | invoke name=\"get_weather\">\n"
        '< | DSML | parameter name="city" string="true">Oslo</ | DSML | parameter>\n</ | DSML | invoke>\n</ | DSML | function_calls>'
    )
    assert _calls(text) == [("get_weather", {"city": "Oslo"})]
    assert_every_cut_matches(text, TOOLS, step=9)
