"""Three ways models name or keep a call that read as nothing before.

* ``{"action": "f", "params": {...}}``: the agent blob with its input under an
  arguments key instead of ``action_input``.
* A call id where the name belongs (``call-get_weather-0`` in Kimi's id slot).
* Gemma's ``tool_code`` keeping a result: ``x = f(...)`` then ``print(x)``.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.parsers.callshape import split_call_object

from .conftest import assert_every_cut_matches, assert_stream_matches_under

TOOLS = [
    {"name": "exec_command", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "read_file", "parameters": {"type": "object", "properties": {"filename": {"type": "string"}}}},
]


@pytest.mark.parametrize("key", ["params", "arguments", "args"])
def test_an_action_with_its_input_under_an_arguments_key(key: str) -> None:
    text = f'{{\n  "action": "exec_command",\n  "{key}": {{"cmd": "ls"}}\n}}'
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("exec_command", {"cmd": "ls"})]
    assert_stream_matches_under(text, TOOLS, 7)


def test_an_action_beside_other_data_is_no_call() -> None:
    assert split_call_object({"action": "buy", "price": 3}) is None
    assert split_call_object({"action": "buy", "params": {}, "price": 3}) is None
    assert split_call_object({"action": "Final Answer", "params": "done"}) is None


KIMI = 'Checking.<|tool_calls_section_begin|><|tool_call_begin|>call-get_weather-0<|tool_call_argument_begin|>{"city": "Seattle"}<|tool_call_end|><|tool_calls_section_end|>'


def test_a_call_id_where_the_name_belongs() -> None:
    call = parse_response(KIMI, tools=TOOLS).tool_calls[0]
    assert (call.name, call.arguments, call.known) == ("get_weather", {"city": "Seattle"}, True)
    assert_every_cut_matches(KIMI, TOOLS, 7)


def test_an_id_naming_no_offered_tool_stays_unknown() -> None:
    call = parse_response(KIMI.replace("call-get_weather-0", "call-get_forecast-0"), tools=TOOLS).tool_calls[0]
    assert call.known is False


TOOL_CODE = "I will read it.\n\n```tool_code\nsummary = read_file(filename='notes.txt')\nprint(summary)\n```"


def test_a_tool_code_call_whose_result_is_kept_and_printed() -> None:
    parsed = parse_response(TOOL_CODE, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"filename": "notes.txt"})]
    assert "result assigned to 'summary'" in parsed.tool_calls[0].repairs
    assert parsed.content == "I will read it."
    assert_every_cut_matches(TOOL_CODE, TOOLS, 5)


@pytest.mark.parametrize(
    "body",
    ["x = 5", "x = read_file(filename='a')\nprint(x.upper())", "x = read_file(filename=name)"],
)
def test_tool_code_that_is_more_than_calls_is_not_read(body: str) -> None:
    assert parse_response(f"```tool_code\n{body}\n```", tools=TOOLS).tool_calls == []
