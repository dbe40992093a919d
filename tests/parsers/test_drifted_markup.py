"""Real outputs where a model's call markup drifted from its template, each cited.

* Nemotron-Mini in Ollama wrote ``<toolcall> {...} </toolcall>`` (its chat
  template's tag) into content half of the time (ollama/ollama#6870).
* Hermes 4 wrote the call JSON and then a ``</tool_call>`` it never opened
  (NousResearch/hermes-agent#742 lists ``</think>{"name":...}</tool_call>``).
* Python-style calls inside Hermes tags: ``<tool_call>get_weather(city='北京')</tool_call>``
  is the agent format of published fine-tuning recipes (ms-swift's docs), and
  a Gemma 3 1B evaluation quoted ``<tool_call>get_weather(city: Antwerp)</tool_call>``
  (right tags, a value that is no Python: reported, never run).
* The tool as an element inside the tags,
  ``<tool_call><write_file><path>p</path></write_file></tool_call>``, is one
  of the narrated-call shapes agents salvage from Gemini and local models.
* Gemma 3 4B behind an OpenAI-compatible server answered with Google's
  ```` ```tool_code ```` convention, ``print(...)`` around the call, and an
  empty ``tool_calls`` list (a chat-completion JSON quoted in a public repository).
* Llama 3.3 through Ollama answered pydantic-ai's weather agent with
  ``<|python_tag|>get_lat_lng(args=["Zurich"])``: Python's ``*args`` written as
  a keyword (quoted in a public port of that example, pointing to
  pydantic/pydantic-ai#437). Llama 3.1 also writes its built-in tools'
  ``NAME.call(...)`` syntax for tools of its own; other parsers' test suites
  accept ``<|python_tag|>get_weather.call(location="Tokyo")``.
* The tool named by an attribute, ``<tool_call name="mock_search">{"query": "deerflow"}</tool_call>``:
  agent frameworks write past calls into the conversation in this shape
  (and test their own parsers with it, some inside ``<tool_calls>``), so
  models shown it answer in it.
* gpt-oss served with a Hermes-style template writes its Harmony recipient
  header where the name belongs: ``<tool_call>assistant to=functions.NAME json``
  and the JSON arguments (SGLang's multi-format detector tests,
  test/registered/function_call/test_multi_format_detector.py, read it).
* Qwen3-Coder-style output with a tag's ``>`` left out, ``<function=read_file``
  or ``<parameter=path`` and then the template's line break (mlx-lm's parser
  tests carry regressions for both).
* Call JSON with both an ``"arguments"`` and an empty ``"parameters"`` key, and
  Llama's ``<|python_tag|>{"name": "f"}`` for a tool without arguments
  (lmdeploy's parser tests read both).
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches

WEATHER_LOOKUP = Tool(
    "weather_lookup",
    parameters={"type": "object", "properties": {"temp_units": {"type": "string"}, "zip_codes": {"type": "array", "items": {"type": "integer"}}}},
)
GET_WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
TEMPERATURE = Tool("get_current_temperature", parameters={"type": "object", "properties": {"location": {"type": "string"}}})
TOOLS = [WEATHER_LOOKUP, GET_WEATHER, TEMPERATURE]

NEMOTRON_MINI = ' <toolcall> {"name": "weather_lookup", "arguments": {\n  "temp_units": "celsius",\n  "zip_codes": [\n    12345\n  ]\n}} </toolcall>'
GEMMA3_4B = {
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "```tool_code\nprint(get_current_temperature(location='Paris'))\n```", "tool_calls": []},
            "finish_reason": "stop",
        }
    ]
}


def test_nemotron_mini_toolcall_tag() -> None:
    parsed = parse_response(NEMOTRON_MINI, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("weather_lookup", {"temp_units": "celsius", "zip_codes": [12345]})]
    assert parsed.content == ""


@pytest.mark.parametrize("tools", [TOOLS, None])
def test_gemma_tool_code_print_call_with_an_empty_native_list(tools: list[Tool] | None) -> None:
    parsed = parse_response(GEMMA3_4B, tools=tools)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_current_temperature", {"location": "Paris"})]
    assert parsed.content == "" and parsed.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    "text, content",
    [
        ('<think>The user wants Paris.</think>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>', ""),
        ('Let me check.\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', "Let me check."),
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}\n</function_call>\nOne moment.', "One moment."),
    ],
)
def test_a_closing_tag_after_a_bare_call_belongs_to_the_call(text: str, content: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert parsed.content == content


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<tool_call>get_weather(city='北京')</tool_call>", [("get_weather", {"city": "北京"})]),
        ('<tool_call>get_weather({"city": "San Francisco"})</tool_call>', [("get_weather", {"city": "San Francisco"})]),
        ("<tool_call>get_weather('Oslo')</tool_call>", [("get_weather", {"city": "Oslo"})]),  # positional, by the schema
        ("<tool_call>\n<get_weather>\n<city>Paris</city>\n</get_weather>\n</tool_call>", [("get_weather", {"city": "Paris"})]),
    ],
)
def test_python_calls_and_tool_elements_inside_hermes_tags(text: str, expected: list[tuple]) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert parsed.content == "" and all(c.format == "hermes" for c in parsed.tool_calls)


@pytest.mark.parametrize("text", ["<tool_call>get_weather(city=a + b)</tool_call>", "<tool_call>get_weather(city: str)</tool_call>"])
def test_a_python_call_that_is_no_literal_is_reported_not_run(text: str) -> None:
    """An expression, or a signature's annotation, where a value belongs: reported, not run."""
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == ""
    assert parsed.unparsed and "hermes" in parsed.unparsed[0].reason


def test_a_weak_tag_needs_an_offered_tool_for_a_python_call() -> None:
    assert parse_response('<tools>get_weather(city="x")</tools>', tools=TOOLS).tool_calls
    text = '<tools>get_weather(city="x")</tools>'
    assert parse_response(text).tool_calls == [] and parse_response(text).content == text


def test_a_closing_tag_without_a_call_stays_content() -> None:
    text = "Use the </tool_call> tag to end a call."
    assert parse_response(text, tools=TOOLS).content == text


@pytest.mark.parametrize(
    "text",
    [
        NEMOTRON_MINI,
        'Let me check.\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\nDone.',
        '{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_calls>',
        GEMMA3_4B["choices"][0]["message"]["content"],
        "Sure.\n<tool_call>get_weather(city='北京')</tool_call>\nWaiting.",
        '<tool_call>get_weather({"city": "SF"})</tool_call><tool_call><get_weather><city>Rome</city></get_weather></tool_call>',
        "<tool_call>get_weather(city: Antwerp)</tool_call> ok",
    ],
)
def test_streaming_any_single_and_double_cut_matches_one_shot(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=6)


GET_LAT_LNG = Tool(
    "get_lat_lng",
    parameters={"type": "object", "properties": {"location_description": {"type": "string"}}, "required": ["location_description"]},
)


@pytest.mark.parametrize(
    "text",
    ['<|python_tag|>get_lat_lng(args=["Zurich"])', '[get_lat_lng(args=["Zurich"])]', '<|python_tag|>get_lat_lng(kwargs={"location_description": "Zurich"})'],
)
def test_packed_args_and_kwargs_are_spread_onto_the_tools_parameters(text: str) -> None:
    [call] = parse_response(text, tools=[GET_LAT_LNG]).tool_calls
    assert (call.name, call.arguments) == ("get_lat_lng", {"location_description": "Zurich"})
    assert any("spread" in repair for repair in call.repairs)


def test_a_parameter_named_args_keeps_its_list() -> None:
    tool = Tool("run", parameters={"type": "object", "properties": {"args": {"type": "array"}}})
    [call] = parse_response('[run(args=["-v"])]', tools=[tool]).tool_calls
    assert call.arguments == {"args": ["-v"]} and call.repairs == []


def test_builtin_call_syntax_for_a_tool_of_its_own() -> None:
    parsed = parse_response('<|python_tag|>get_weather.call(city="Tokyo")<|eom_id|>', tools=TOOLS)
    assert [(c.name, c.arguments, c.known) for c in parsed.tool_calls] == [("get_weather", {"city": "Tokyo"}, True)]
    assert parsed.content == ""
    flagged = parse_response('<|python_tag|>get_forecast.call(city="Tokyo")', tools=TOOLS)
    assert [(c.name, c.known) for c in flagged.tool_calls] == [("get_forecast", False)]  # flagged, never dropped


MOCK_SEARCH = Tool("mock_search", parameters={"type": "object", "properties": {"query": {"type": "string"}}})
READ_FILE = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})


@pytest.mark.parametrize(
    "text, expected, content",
    [
        ('<tool_call name="mock_search">{"query":"deerflow"}</tool_call>', [("mock_search", {"query": "deerflow"})], ""),
        ("Searching.\n<tool_call name='mock_search'>\n{\"query\": \"x\"}\n</tool_call>\nWait.", [("mock_search", {"query": "x"})], "Searching.\nWait."),
        ('<tool_call name="read_file"></tool_call>', [("read_file", {})], ""),
        ('<function_call name="read_file">{"path": "a.txt"}</function_call>', [("read_file", {"path": "a.txt"})], ""),
        ('<tool_call name="read_file">{"path": "a.txt"}</tool_call><tool_call name="mock_search">{"query": "q"}</tool_call>',
         [("read_file", {"path": "a.txt"}), ("mock_search", {"query": "q"})], ""),
    ],
)
def test_the_tool_named_by_an_attribute_of_the_tag(text: str, expected: list[tuple], content: str) -> None:
    parsed = parse_response(text, tools=[MOCK_SEARCH, READ_FILE])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert parsed.content == content and {c.format for c in parsed.tool_calls} == {"hermes"}


@pytest.mark.parametrize("text", ['Use <tool_call name="x"> tags.', '<tool_call name="x">plain words</tool_call>', "<tool_call name=x>{}</tool_call>"])
def test_an_attribute_tag_without_arguments_after_it_stays_content(text: str) -> None:
    parsed = parse_response(text, tools=[MOCK_SEARCH])
    assert parsed.tool_calls == [] and parsed.content == text


def test_an_attribute_tag_the_output_ends_inside_is_reported() -> None:
    parsed = parse_response('Reading.\n<tool_call name="read_file">', tools=[READ_FILE])
    assert parsed.tool_calls == [] and [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]


@pytest.mark.parametrize(
    "text",
    [
        'Searching.\n<tool_call name="mock_search">{"query": "deerflow"}</tool_call>\nDone.',
        '<tool_call name="read_file">{"path": "a"}\nthen prose',
        'Use <tool_call name="x"> tags, <tool_call name="read_file"></tool_call>',
    ],
)
def test_attribute_tags_stream_like_one_shot(text: str) -> None:
    assert_every_cut_matches(text, [MOCK_SEARCH, READ_FILE], step=5)


@pytest.mark.parametrize(
    "header",
    ["assistant to=functions.weather_lookup json\n", "to=functions.weather_lookup\n", "assistant to=functions.weather_lookup<|constrain|>json ", "to=weather_lookup "],
    ids=["assistant-json", "bare", "constrain", "no-namespace"],
)
def test_a_harmony_recipient_header_inside_hermes_tags_names_the_tool(header: str) -> None:
    text = f'Checking.\n<tool_call>{header}{{"temp_units": "C", "zip_codes": [8001]}}\n</tool_call>'
    parsed = parse_response(text, tools=[WEATHER_LOOKUP])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("weather_lookup", {"temp_units": "C", "zip_codes": [8001]})]
    assert parsed.content == "Checking."
    assert_every_cut_matches(text, [WEATHER_LOOKUP], step=19)


READ_FILE = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}}})


@pytest.mark.parametrize(
    ("text", "supplied"),
    [
        ("<tool_call>\n<function=read_file\n<parameter=path>\n/etc/hosts\n</parameter>\n</function>\n</tool_call>", "<function=read_file"),
        ("<tool_call>\n<function=read_file>\n<parameter=path\n/etc/hosts\n</parameter>\n</function>\n</tool_call>", "<parameter=path"),
    ],
    ids=["function", "parameter"],
)
def test_a_qwen3_coder_tag_missing_its_closing_bracket_before_the_line_break(text: str, supplied: str) -> None:
    parsed = parse_response(text, tools=[READ_FILE])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "/etc/hosts"})]
    assert parsed.tool_calls[0].repairs == [f"'>' supplied after {supplied}"]
    assert_every_cut_matches(text, [READ_FILE], step=11)


def test_a_parameter_value_may_hold_a_bracket_after_the_missing_one() -> None:
    text = "<tool_call>\n<function=read_file>\n<parameter=path\na>b.txt\n</parameter>\n<parameter=lines\n3\n</parameter>\n</function>\n</tool_call>"
    assert [(c.name, c.arguments) for c in parse_response(text, tools=[READ_FILE]).tool_calls] == [("read_file", {"path": "a>b.txt", "lines": 3})]


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>\n<function=read file\n<parameter=path>\nx\n</parameter>\n</function>\n</tool_call>",  # two words: no name
        "<tool_call>\n<function=read_file\nthen some prose\n</tool_call>",  # no parameter or closer follows
        "<tool_call>\n<function=bad_name\n</function>\n</tool_call>",  # broken markup naming no offered tool
    ],
)
def test_a_missing_bracket_is_supplied_only_where_a_name_ends_the_line_before_a_parameter(text: str) -> None:
    parsed = parse_response(text, tools=[READ_FILE])
    assert parsed.tool_calls == [] and parsed.diagnostics[0].kind is DiagnosticKind.UNPARSEABLE


def test_a_bare_function_tag_missing_its_bracket_stays_content() -> None:
    text = "See <function=read_file\n<parameter=path>\nx\n</parameter>\n</function> in the docs."
    parsed = parse_response(text, tools=[READ_FILE])
    assert parsed.tool_calls == [] and parsed.content == text


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [('"arguments": {}, "parameters": {}', {}), ('"arguments": {"path": "a"}, "parameters": {}', {"path": "a"}),
     ('"parameters": {"path": "a"}, "arguments": ""', {"path": "a"}), ('"arguments": {"path": "a"}, "parameters": {"path": "a"}', {"path": "a"})],
    ids=["both-empty", "parameters-empty", "arguments-empty-string", "equal"],
)
def test_an_empty_second_argument_key_is_noise(arguments: str, expected: dict) -> None:
    text = f'<tool_call>{{"name": "read_file", {arguments}}}</tool_call>'
    assert [(c.name, c.arguments) for c in parse_response(text).tool_calls] == [("read_file", expected)]


def test_two_argument_keys_that_disagree_are_not_guessed_between() -> None:
    text = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}, "parameters": {"path": "b"}}</tool_call>'
    assert parse_response(text, tools=[READ_FILE]).tool_calls == []


def test_llama_name_only_call_for_an_offered_tool() -> None:
    text = '<|python_tag|>{"name": "read_file"}<|eom_id|>'
    assert [(c.name, c.arguments) for c in parse_response(text, tools=[READ_FILE]).tool_calls] == [("read_file", {})]
    # a bare name that is no offered tool is a hallucinated result, not a call; so is any without tools
    for tools in ([GET_WEATHER], None):
        parsed = parse_response(text, tools=tools)
        assert parsed.tool_calls == [] and parsed.content == '<|python_tag|>{"name": "read_file"}'
    assert_every_cut_matches(text, [READ_FILE], step=5)



@pytest.mark.parametrize("header", ["to=functions.get_weather", "assistant to=functions.get_weather", "to=get_weather"])
def test_a_recipient_header_with_no_arguments_names_the_offered_tool(header: str) -> None:
    """gpt-oss's header where the name belongs and nothing after it: the tool, not a tool called 'to=…'."""
    parsed = parse_response(f"<tool_call>{header}</tool_call>", tools=[GET_WEATHER])
    assert [(c.name, c.known) for c in parsed.tool_calls] == [("get_weather", True)]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.NAME_CORRECTED]
