"""Markup real replies bend a little: a stray quote, a clipped closer, a type attribute, a label spelled otherwise.

Sources (transcribed outside the repository, see docs/accuracy.md):

* a Go agent's Claude-style ``<invoke>`` test: ``<parameter name="timeout" type="integer">30</parameter>``;
* jasontitus/mcpzim's on-device captures: Qwen 3.5 4B writing ``" "South Korea"`` and
  ``{""place": …}``, a reply clipped inside ``</tool``, Gemma 4 E2B writing
  ``call:search({…}) -> OBJECT``;
* martinosk/easi: an ``<invoke>`` inside a ``<function_result>`` the model made up;
* a Go gateway's DeepSeek log with ASCII bars spaced inside the token (``<| DSML | invoke``), and
  IAmiGOI/Module-Engine's guide tests with the tokenizer's bars spaced so (``<｜ DSML ｜invoke``);
* jakobhoeg/browser-ai: ```` ```tool-call ```` and ```` ```toolcall ```` fences;
* monday8am/koogagent: ``<function>NAME</function>`` then ``<parameters>{…}</parameters>``.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches

SEARCH = Tool("search", parameters={"type": "object", "properties": {"titles": {"type": "array"}, "place": {"type": "string"}, "kinds": {"type": "array"}, "radius_km": {"type": "number"}}})
EXEC = Tool("exec", parameters={"type": "object", "properties": {}})
WEATHER = Tool("GetWeather")
LOCATED = Tool("GetWeatherFromLocation", parameters={"type": "object", "properties": {"latitude": {"type": "string"}}})
TOOLS = [SEARCH, EXEC, WEATHER, LOCATED]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --- a parameter's type attribute ----------------------------------------------------------------

def test_a_type_attribute_beside_a_parameter_name_keeps_the_parameter_and_types_it() -> None:
    """The parameter was dropped as text that is not a parameter; ``exec`` offers no schema to type by."""
    text = '<invoke name="exec">\n<parameter name="command">ls -la</parameter>\n<parameter name="timeout" type="integer">30</parameter>\n</invoke>'
    assert _calls(text) == [("exec", {"command": "ls -la", "timeout": 30})]
    assert_every_cut_matches(text, TOOLS, step=11)


def test_the_schema_outranks_the_type_attribute() -> None:
    text = '<function_calls><invoke name="search"><parameter name="place" type="integer">30</parameter></invoke></function_calls>'
    assert _calls(text) == [("search", {"place": "30"})]


# --- a stray quote before a string ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"titles": ["North Korea", " "South Korea"]}', {"titles": ["North Korea", "South Korea"]}),
        ('{""place":"north beach","kinds":["bar"],"radius_km":1}', {"place": "north beach", "kinds": ["bar"], "radius_km": 1}),
        ('{""place":"North Beach", " "kinds":["museum"], " "radius_km":1}', {"place": "North Beach", "kinds": ["museum"], "radius_km": 1}),
    ],
)
def test_a_stray_quote_before_a_string_is_dropped(arguments: str, expected: dict) -> None:
    text = f'<tool_call>\n{{"name": "search", "arguments": {arguments}}}\n</tool_call>'
    [call] = parse_response(text, tools=TOOLS).tool_calls
    assert (call.name, call.arguments) == ("search", expected)
    assert "dropped a stray quote before a string" in call.repairs
    assert_every_cut_matches(text, TOOLS, step=13)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('" "Hello" she said"', ' "Hello" she said'),  # the quote inside opens no string that ends as one
        ('"say "hi" now"', 'say "hi" now'),
        ('" "', " "),
        ('""', ""),
    ],
)
def test_quotes_inside_a_value_are_not_taken_for_a_stray_one(value: str, expected: str) -> None:
    text = f'<tool_call>{{"name": "search", "arguments": {{"place": {value}}}}}</tool_call>'
    assert _calls(text) == [("search", {"place": expected})]


# --- a closer clipped by the output's end ----------------------------------------------------------

@pytest.mark.parametrize("clipped", ["</tool", "</", "<", "</tool_call"])
def test_a_closer_the_output_ends_inside_does_not_spoil_the_call_before_it(clipped: str) -> None:
    """The JSON lacked its last brace too: the repair read ``</tool`` as part of it and gave up."""
    text = '<tool_call>\n{"name": "search", "arguments": {"place": "North Beach", "kinds": ["restaurant"]}\n' + clipped
    assert _calls(text) == [("search", {"place": "North Beach", "kinds": ["restaurant"]})]
    assert_every_cut_matches(text, TOOLS, step=17)


def test_text_cut_inside_a_string_is_still_truncated() -> None:
    parsed = parse_response('<tool_call>\n{"name": "search", "arguments": {"place": "North </tool', tools=TOOLS)
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]


# --- a made-up result ---------------------------------------------------------------------------------

def test_an_invoke_inside_a_result_the_model_wrote_is_no_call() -> None:
    text = (
        "I'll look that up.\n<function_calls> <invoke name=\"search\"> <parameter name=\"place\">acme</parameter> </invoke> </function_calls>"
        ' <function_result> <invoke name="search"> {"applications": [{"name": "FakeApp"}]} </invoke> </function_calls>\n'
        "Based on the results, you have one application."
    )
    assert _calls(text) == [("search", {"place": "acme"})]
    assert_every_cut_matches(text, TOOLS, step=19)


def test_an_invoke_after_prose_is_still_a_call() -> None:
    assert _calls('Looking.\n<invoke name="search"><parameter name="place">Oslo</parameter></invoke>') == [("search", {"place": "Oslo"})]


# --- Gemma 4 writing a declaration's shape ------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<|tool_call>call:exec({}) -> OBJECT<tool_call|>", ("exec", {})),
        ('<|tool_call>call:search({place:<|"|>kangaroo<|"|>}) -> OBJECT<tool_call|>', ("search", {"place": "kangaroo"})),
        ('<|tool_call>call:search{place:<|"|>k<|"|>} -> OBJECT<tool_call|>', ("search", {"place": "k"})),
        ('<|tool_call>call:search(place: "x")<tool_call|>', ("search", {"place": "x"})),
    ],
)
def test_an_object_in_parentheses_and_a_return_type_are_read_as_the_call(text: str, expected: tuple) -> None:
    [call] = parse_response(text, tools=TOOLS).tool_calls
    assert (call.name, call.arguments) == expected
    assert_every_cut_matches(text, TOOLS, step=7)


def test_a_return_type_outside_the_call_tokens_stays_prose() -> None:
    text = "search({place: 1}) -> OBJECT"
    assert _calls(text) == []


# --- DeepSeek's token with ASCII bars spaced inside ------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected", "content"),
    [
        (
            "Cek keduanya.\n\n<| DSML | tool_calls>\n<| DSML | invoke name=\"exec\">\n"
            '<| DSML | parameter name="host" string="true">vps</| DSML | parameter>\n'
            "</| DSML | invoke>\n</| DSML | tool_calls>",
            [("exec", {"host": "vps"})],
            "Cek keduanya.",
        ),
        (  # IAmiGOI/Module-Engine's guide tests: the tokenizer's bars, ``<｜ DSML ｜invoke``, two invokes
            '<\uff5c DSML \uff5ctool_calls><\uff5c DSML \uff5cinvoke name="exec"><\uff5c DSML \uff5cparameter name="host" string="true">vps'
            '</\uff5c DSML \uff5cparameter></\uff5c DSML \uff5cinvoke><\uff5c DSML \uff5cinvoke name="exec"><\uff5c DSML \uff5cparameter '
            'name="host" string="true">db</\uff5c DSML \uff5cparameter></\uff5c DSML \uff5cinvoke></\uff5c DSML \uff5ctool_calls>',
            [("exec", {"host": "vps"}), ("exec", {"host": "db"})],
            "",
        ),
    ],
)
def test_bars_with_blanks_inside_the_dsml_token(text: str, expected: list, content: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert parsed.content == content
    assert_every_cut_matches(text, TOOLS, step=13)


def test_the_spaced_token_in_prose_is_prose() -> None:
    text = "DeepSeek writes <| DSML | tool_calls> before its invokes."
    assert _calls(text) == [] and parse_response(text, tools=TOOLS).content == text


# --- fence labels ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("label", ["tool-call", "toolcall", "Tool-Call", "tool-calls", "function-call"])
def test_a_call_label_however_its_words_are_joined(label: str) -> None:
    text = f'```{label}\n{{"name": "GetWeather"}}\n```'
    assert _calls(text) == [("GetWeather", {})]
    assert_every_cut_matches(text, TOOLS, step=5)


def test_a_name_only_object_under_another_label_is_still_data() -> None:
    assert _calls('Like this:\n```tool-calling-guide\n{"name": "GetWeather"}\n```\nThanks.') == []


# --- the name in a <function> element ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<function>GetWeather</function>", [("GetWeather", {})]),
        ("<function>  GetWeather  </function>", [("GetWeather", {})]),
        ("Let me check that for you.\n<function>GetWeather</function>", [("GetWeather", {})]),
        ('<function>GetWeatherFromLocation</function>\n<parameters>{"latitude": "48.8534"}</parameters>', [("GetWeatherFromLocation", {"latitude": "48.8534"})]),
        ('<function>GetWeatherFromLocation</function>\n<parameters>  {"latitude": "1"}  </parameters>', [("GetWeatherFromLocation", {"latitude": "1"})]),
    ],
)
def test_a_function_element_naming_the_call(text: str, expected: list) -> None:
    assert _calls(text) == expected
    assert_every_cut_matches(text, TOOLS, step=7)


@pytest.mark.parametrize(
    "text",
    [
        "<function>none</function>",  # the client's own no-call marker
        "<function>GetLocation</function>",  # no such tool, no arguments: a mention
        "The <function>GetWeather</function> element names it.",  # in a sentence
        "<function>main</function>\n<file>a.c</file>",  # a record: other elements beside it
    ],
)
def test_a_function_element_that_calls_nothing(text: str) -> None:
    assert _calls(text) == []


def test_json_and_glm_pairs_in_a_function_tag_keep_their_readings() -> None:
    assert _calls('<function>{"name": "search", "arguments": {"place": "x"}}</function>') == [("search", {"place": "x"})]
    assert _calls("<tool_call>search<arg_key>place</arg_key><arg_value>x</arg_value></tool_call>") == [("search", {"place": "x"})]


# --- sets 47 and 48: an id under OpenAI's key, Obsidian Copilot's tag, a Gemma string the end token cut ------

def test_a_call_object_opening_with_its_tool_call_id_is_a_call() -> None:
    """carbocation/CarbocationLocalLLM: the object opened with ``tool_call_id``, which the scan's
    list of call keys lacked (inside a tag it was read already)."""
    text = '[\n  {"tool_call_id":"call-9","name":"search","parameters":{"place":"Swift"}},\n  {"name":"exec","arguments":{"value":42}}\n]'
    assert _calls(text) == [("search", {"place": "Swift"}), ("exec", {"value": 42})]
    assert _calls('{"tool_call_id": "c7", "output": "done"}') == []  # a result, no name


OBSIDIAN = (
    "I'll search your vault.\n\n<use_tool>\n<name>search</name>\n<place>piano</place>\n"
    "<kinds>\n  <item>notes</item>\n  <item>pdf</item>\n</kinds>\n</use_tool>\n\nThen the web."
)


def test_obsidian_copilots_use_tool_tag_with_item_lists() -> None:
    parsed = parse_response(OBSIDIAN, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search", {"place": "piano", "kinds": ["notes", "pdf"]})]
    assert parsed.content == "I'll search your vault.\nThen the web."
    assert_every_cut_matches(OBSIDIAN, TOOLS, step=17)


def test_items_of_elements_are_objects() -> None:
    text = "<use_tool><name>search</name><kinds><item><a>1</a><b>x</b></item><item><a>2</a></item></kinds></use_tool>"
    assert _calls(text) == [("search", {"kinds": [{"a": 1, "b": "x"}, {"a": 2}]})]


@pytest.mark.parametrize(
    "value",
    ["<item>a</item> and more", "<items>a</items>", "<p>Hi</p>"],
)
def test_other_markup_in_a_value_stays_its_text(value: str) -> None:
    assert _calls(f"<use_tool><name>search</name><place>{value}</place></use_tool>") == [("search", {"place": value})]


def test_an_empty_name_element_names_no_tool_called_name() -> None:
    text = "<use_tool>\n<name></name>\n<param>value</param>\n</use_tool>\n\n<use_tool>\n<name>search</name>\n<place>x</place>\n</use_tool>"
    assert _calls(text) == [("search", {"place": "x"})]


def test_use_tool_in_prose_is_prose() -> None:
    text = "Wrap each call in a <use_tool> tag."
    assert _calls(text) == [] and parse_response(text, tools=TOOLS).content == text


@pytest.mark.parametrize(
    "text",
    [
        '<|tool_call>call:search{place:<|"|>hello world<tool_call|>',
        "<start_function_call>call:search{place:<escape>hi<end_function_call>",
    ],
)
def test_a_string_the_end_token_cut_off_is_not_run(text: str) -> None:
    """Sources disagree (SharpInference runs it, hoshi does not); the value may have been cut, so
    nothing runs and the block is reported."""
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.diagnostics
    assert_every_cut_matches(text, TOOLS, step=3)


def test_a_closing_quote_written_later_keeps_the_end_token_inside_the_string() -> None:
    text = '<|tool_call>call:search{place:<|"|>see <tool_call|> here<|"|>}<tool_call|>'
    assert _calls(text) == [("search", {"place": "see <tool_call|> here"})]
    assert_every_cut_matches(text, TOOLS, step=3)


# --- sets 49 and 50: a string property written as a JSON string, displays, wrappers, Qwen3.5's bent closers ------

@pytest.mark.parametrize(
    "text",
    [
        '<tool_call><function=search><parameter=place>"Berlin"</parameter></function></tool_call>',
        '<tool_call>search<arg_key>place</arg_key><arg_value>"Berlin"</arg_value></tool_call>',
        '<minimax:tool_call><invoke name="search"><parameter name="place">"Berlin"</parameter></invoke></minimax:tool_call>',
    ],
)
def test_a_string_property_written_as_one_json_string_holds_what_is_inside(text: str) -> None:
    """MLXFoundationModel's tests (and two held-out sources) unquote; Mference keeps the quotes.
    A raw-text format's string value was kept as ``"Berlin"``, quotes and all."""
    assert _calls(text) == [("search", {"place": "Berlin"})]


@pytest.mark.parametrize(
    ("value", "expected"),
    [('"a" and "b"', '"a" and "b"'), ('say "hi"', 'say "hi"'), ('"x\\ny"', "x\ny"), ('"', '"')],
)
def test_only_a_whole_json_string_is_unquoted(value: str, expected: str) -> None:
    text = f"<tool_call><function=search><parameter=place>{value}</parameter></function></tool_call>"
    assert _calls(text) == [("search", {"place": expected})]


def test_tool_call_display_in_brackets() -> None:
    text = 'Checking.\n[Tool call: search({"place":"Berlin"})]'
    assert _calls(text) == [("search", {"place": "Berlin"})]
    assert_every_cut_matches(text, TOOLS, step=5)
    assert _calls("the [Tool call: search] label") == []


def test_geminis_function_call_wrapper_written_as_text() -> None:
    text = '{\n  "functionCall": {\n    "name": "search",\n    "args": {"place": "x"}\n  }\n}'
    assert _calls(text) == [("search", {"place": "x"})]
    assert_every_cut_matches(text, TOOLS, step=9)


def test_the_name_written_again_under_another_name_key() -> None:
    assert _calls('{"name":"search","tool":"search","arguments":{"place":"Paris"}}') == [("search", {"place": "Paris"})]
    assert _calls('{"name":"search","tool":"exec","arguments":{"place":"Paris"}}') == []  # which one?


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<|tool_call>call:search{'place':'Berlin'}<tool_call|>", ("search", {"place": "Berlin"})),
        ("<|tool_call>call:google:mcp:docs:create-pdf(title='Q2', options={pages:2})<tool_call|>",
         ("google:mcp:docs:create-pdf", {"title": "Q2", "options": {"pages": 2}})),
    ],
)
def test_gemma_single_quoted_keys_and_deep_namespaces(text: str, expected: tuple) -> None:
    [call] = parse_response(text, tools=None).tool_calls
    assert (call.name, call.arguments) == expected
    assert_every_cut_matches(text, None, step=7)


#: saorsa-labs/fae's recorded Qwen3.5 replies under mlx-swift-lm
FAE_BENT_CLOSER = "<tool_call>\n<function=search>\n<parameter=place>\nDocuments/todo.txt\n</parameter>\n</function\n</function!"
FAE_KEY_ELEMENT = "<tool_call>\n<function=search>\n<place>\n~/Documents/todo.txt\n</parameter>\n</function\n</tool_call>"


def test_qwen35_bent_function_closer_and_a_key_element_closed_as_a_parameter() -> None:
    assert _calls(FAE_BENT_CLOSER) == [("search", {"place": "Documents/todo.txt"})]
    assert _calls(FAE_KEY_ELEMENT) == [("search", {"place": "~/Documents/todo.txt"})]
    for text in (FAE_BENT_CLOSER, FAE_KEY_ELEMENT):
        assert_every_cut_matches(text, TOOLS, step=5)


def test_a_key_element_the_tool_does_not_take_is_not_an_argument() -> None:
    parsed = parse_response("<tool_call>\n<function=search>\n<colour>\nred\n</parameter>\n</function>\n</tool_call>", tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.diagnostics


# --- sets 51 and 52: a server's prefix on the name, a module beside it, a name whose '>' never came -------------

def test_an_mcp_servers_prefix_before_an_offered_tools_name_resolves_to_the_tool() -> None:
    """collabo_ide's model wrote ``call:collabo_ide:read_file{…}``; the name was left unknown."""
    text = "Reading <|tool_call>call:collabo_ide:search{place:'test.py'}<tool_call|> ok"
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search", {"place": "test.py"})]
    assert _calls('<tool_call>{"name": "srv:nosuch", "arguments": {}}</tool_call>') == [("srv:nosuch", {})]  # flagged unknown


def test_a_module_beside_the_name_is_routing_not_a_refusal() -> None:
    text = '[\n  {"type": "function", "function": {"name": "search", "module": "web", "arguments": {"place": "x"}}}\n]'
    assert _calls(text) == [("search", {"place": "x"})]


def test_a_function_name_whose_angle_bracket_never_came_before_the_block_closer() -> None:
    """A Go agent's recorded Qwen reply: ``<function=NAME`` then the block's closer, no arguments."""
    text = "<tool_call>\n<function=search\n\n</tool_call>"
    assert _calls(text) == [("search", {})]
    assert_every_cut_matches(text, TOOLS, step=3)
    assert _calls("<tool_call>\n<function=search hello\n\n</tool_call>") == []
