"""Call markup written without its special tokens, or bent by the model, read from each format's definition.

* MiniMax-M3's argument elements with its marker token dropped, inside MiniMax's
  ``<minimax:tool_call>`` block: ``<invoke name="f"><city>Oslo</city></invoke>``
  (nested elements are objects, a repeated key a list, leaves typed by the schema).
* Glimmer's header: a special token sampled into the invoke's name (``name="fore<|message|>cast"``)
  is removed; call markup that the prose of a `` to=user`` message leads into is shown, not run,
  while a ``to=user`` message that is nothing but the call block is a call with a wrong header.
* Key/value markup (GLM and the families sharing its reader) with a value's closer left
  out: the next key tag or the call's closer ends it; a call cut inside its closer after a
  whole value is read; TeleChat's ``<param_key>``/``<param_value>`` spelling.
* Qwen3-Coder / Seed-OSS value layout: the newline after ``<parameter=k>`` and the one before
  ``</parameter>`` are each removed on their own; a value on one line with its tags loses the
  blanks around it; a bare call whose ``</function>`` was left out before a stray ``</tool_call>``.
* DeepSeek's block with a ``<｜tool▁call▁begin｜>`` left out: a name glued to the separator
  right after the block's opener (or after a call's end) starts a call.
* Python-style calls of names Python cannot spell: a hyphenated tool name
  (``[tide-table(port="Hull")]``) and an argument named by a Python keyword (``f(from="A")``),
  bare or in OLMo 3's ``<function_calls>`` block.
* A client's display of a past call, ``[Calling tool: f with arguments: {…}]``, its object
  printed with typographic quotes (``{“a”: “x”}``).
* GLM-4's ``NAME`` line followed by the whole call object (``{"name": NAME, "arguments": {…}}``):
  the object's arguments, unless the tool takes a ``name`` itself.
* Call JSON in a fence with another language's label (```` ```xml ````) when the fence is the
  whole answer and names an offered tool.
* One Python-style call of an offered tool opening the answer, then a new sentence or line
  (a sentence the call is the subject of stays prose).
* Decided, not repaired: Kimi K2 calls the output stopped inside an unclosed ``<think>``
  (no closing marker) stay reasoning, reported ``IN_REASONING``.

Every shape has its negative (prose that mentions it is no call) and streams to the
one-shot reading.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches, assert_stream_matches_under

LOOKUP = Tool("lookup", parameters={"type": "object", "properties": {
    "term": {"type": "string"}, "max_hits": {"type": "integer"}, "fuzzy": {"type": "boolean"},
    "where": {"type": "object", "properties": {"lang": {"type": "string"}, "year": {"type": "integer"}}},
    "tags": {"type": "array", "items": {"type": "string"}}}})
FORECAST = Tool("forecast", parameters={"type": "object", "properties": {"town": {"type": "string"}}})
TOOLS = [LOOKUP, FORECAST]


def calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


UNMARKED_M3 = [
    ('<minimax:tool_call><invoke name="lookup"><term>tide tables</term><max_hits>4</max_hits><fuzzy>false</fuzzy></invoke></minimax:tool_call>',
     [("lookup", {"term": "tide tables", "max_hits": 4, "fuzzy": False})]),
    ('<minimax:tool_call>\n<invoke name="lookup">\n<where><lang>nl</lang><year>1999</year></where>\n<tags>a</tags><tags>b</tags>\n</invoke>\n</minimax:tool_call>',
     [("lookup", {"where": {"lang": "nl", "year": 1999}, "tags": ["a", "b"]})]),
    ('Checking. <minimax:tool_call><invoke name="forecast"><town>Oslo</town></invoke><invoke name="lookup"><term>x</term></invoke></minimax:tool_call> done',
     [("forecast", {"town": "Oslo"}), ("lookup", {"term": "x"})]),
]


@pytest.mark.parametrize(("text", "want"), UNMARKED_M3)
def test_minimax_m3_elements_without_the_marker_token_are_arguments(text: str, want: list) -> None:
    assert calls(text) == want
    assert_stream_matches_under(text, TOOLS, 3)


def test_minimax_m3_elements_stream_at_every_cut() -> None:
    assert_every_cut_matches(UNMARKED_M3[1][0], TOOLS, 9)


def test_prose_about_invoke_elements_is_no_call() -> None:
    text = 'In MiniMax output an argument looks like <city>Oslo</city> inside an invoke tag; write <invoke name="..."> yourself.'
    assert calls(text) == []


def glimmer(recipient: str, body: str) -> str:
    return f" to={recipient}<|message|>{body}<|eot|>"


ATEM_BLOCK = '<atem:function_calls>\n<atem:invoke name="{name}">\n<atem:parameter name="town">Bergen</atem:parameter>\n</atem:invoke>\n</atem:function_calls>'

GLIMMER = [
    (glimmer("forecast", ATEM_BLOCK.format(name="forecast<|message|>")), [("forecast", {"town": "Bergen"})]),
    (glimmer("forecast", ATEM_BLOCK.format(name="fore<|message|>cast")), [("forecast", {"town": "Bergen"})]),
    (glimmer("user", ATEM_BLOCK.format(name="forecast")), [("forecast", {"town": "Bergen"})]),
    (glimmer("user", "The markup looks like this: " + ATEM_BLOCK.format(name="forecast")), []),
    (glimmer("assistant", "Example:\n" + ATEM_BLOCK.format(name="forecast")), []),
]


@pytest.mark.parametrize(("text", "want"), GLIMMER)
def test_glimmer_recipient_and_token_damaged_names(text: str, want: list) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    if "<|message|>\"" in text or "fore<|message|>cast" in text:
        assert any("special token removed" in r for r in parsed.tool_calls[0].repairs)
    if not want:
        assert "<atem:invoke" in parsed.content  # shown to the reader as written
    assert_stream_matches_under(text, TOOLS, 5)


def test_glimmer_answer_with_markup_streams_at_every_cut() -> None:
    assert_every_cut_matches(GLIMMER[3][0], TOOLS, 11)


KEY_VALUE = [
    ("<tool_call>forecast\n<arg_key>town</arg_key>\n<arg_value>Tromso</tool_call>", [("forecast", {"town": "Tromso"})]),
    ("<tool_call>lookup\n<arg_key>term</arg_key>\n<arg_value>eels<arg_key>max_hits</arg_key>\n<arg_value>2</arg_value></tool_call>",
     [("lookup", {"term": "eels", "max_hits": 2})]),
    ("<tool_call>lookup\n<arg_key>term</arg_key>\n<arg_value>eels</arg_value>\n<arg_key>max_hits</arg_key>\n<arg_value>2</arg_value></tool_",
     [("lookup", {"term": "eels", "max_hits": 2})]),
    ("<tool_call>lookup<param_key>term</param_key><param_value>eels</param_value></tool_call>"
     "<tool_call>forecast<param_key>town</param_key><param_value>Bodo</param_value></tool_call>",
     [("lookup", {"term": "eels"}), ("forecast", {"town": "Bodo"})]),
]


def test_telechat_values_lose_the_blanks_around_them() -> None:
    text = "<tool_call>lookup<param_key> term </param_key>\n<param_value> 22 </param_value><param_key>max_hits</param_key> <param_value> 3 </param_value></tool_call>"
    assert calls(text) == [("lookup", {"term": "22", "max_hits": 3})]


@pytest.mark.parametrize(("text", "want"), KEY_VALUE)
def test_key_value_values_whose_closer_is_missing_and_telechat_tags(text: str, want: list) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert all(call.repairs for call in parsed.tool_calls[:1]) or "param_key" in text
    assert_stream_matches_under(text, TOOLS, 4)


@pytest.mark.parametrize("index", [0, 1])
def test_key_value_missing_closers_stream_at_every_cut(index: int) -> None:
    assert_every_cut_matches(KEY_VALUE[index][0], TOOLS, 13)


def test_a_value_quoting_a_call_is_not_split_at_its_key_tag() -> None:
    text = "<tool_call>lookup\n<arg_key>term</arg_key>\n<arg_value>see <tool_call>g<arg_key>k</arg_key></tool_call> there</arg_value></tool_call>"
    assert calls(text)[0][1]["term"].startswith("see <tool_call>g<arg_key>k")


def test_prose_about_param_and_arg_tags_is_no_call() -> None:
    text = "TeleChat writes each argument as <param_key>name</param_key> then <param_value>value</param_value>, GLM as <arg_key>."
    assert calls(text) == []


SHELL = Tool("shell_run", parameters={"type": "object", "properties": {"cmd": {"type": "string"}, "body": {"type": "string"}}})

QWEN_LAYOUT = [
    ("<tool_call>\n<function=shell_run>\n<parameter=body>x = 1\n\n</parameter>\n</function>\n</tool_call>", {"body": "x = 1\n"}),
    ("<tool_call>\n<function=shell_run>\n<parameter=body>x = 1\n</parameter>\n</function>\n</tool_call>", {"body": "x = 1"}),
    ("<tool_call>\n<function=shell_run>\n<parameter=body>\nx = 1\n\n</parameter>\n</function>\n</tool_call>", {"body": "x = 1\n"}),
    ("<seed:tool_call>\n<function=shell_run>\n<parameter=body>\n  indented\n</parameter>\n</function>\n</seed:tool_call>", {"body": "  indented"}),
    ("<tool_call><function=shell_run> <parameter=cmd> du -sh . </parameter> </function></tool_call>", {"cmd": "du -sh ."}),
    ("<function=shell_run> <parameter=cmd> du -sh . </parameter> </tool_call>", {"cmd": "du -sh ."}),
]


@pytest.mark.parametrize(("text", "arguments"), QWEN_LAYOUT)
def test_qwen3_coder_value_layout(text: str, arguments: dict) -> None:
    assert calls(text, [SHELL]) == [("shell_run", arguments)]
    assert_stream_matches_under(text, [SHELL], 3)


def test_bare_call_closed_by_a_stray_block_closer_streams_at_every_cut() -> None:
    assert_every_cut_matches(QWEN_LAYOUT[-1][0], [SHELL], 7)


def test_prose_naming_qwen3_coder_tags_is_no_call() -> None:
    text = "Qwen3-Coder writes <function=NAME> then <parameter=KEY> lines; a stray </tool_call> ends nothing here."
    assert calls(text, [SHELL]) == []


DS_BEGIN, DS_SEP, DS_END, DS_CLOSE = "<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"
DEEPSEEK_UNOPENED = [
    f'{DS_BEGIN}forecast{DS_SEP}{{"town": "Narvik"}}{DS_END}{DS_CLOSE}',
    f'{DS_BEGIN}forecast{DS_SEP}{{"town": "Narvik"}}{DS_END}<｜tool▁call▁begin｜>lookup{DS_SEP}{{"term": "ice"}}{DS_END}{DS_CLOSE}',
]


@pytest.mark.parametrize("text", DEEPSEEK_UNOPENED)
def test_deepseek_call_begin_left_out(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls][:1] == [("forecast", {"town": "Narvik"})]
    assert "missing <｜tool▁call▁begin｜>" in parsed.tool_calls[0].repairs
    assert parsed.content.strip() == ""
    assert_every_cut_matches(text, TOOLS, 17)


def test_prose_after_a_deepseek_calls_token_is_no_call() -> None:
    assert calls(f"{DS_BEGIN}forecast says rain{DS_CLOSE}") == []


TIDES = Tool("tide-table", parameters={"type": "object", "properties": {"port": {"type": "string"}}})
TRAIN = Tool("book_train", parameters={"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "class": {"type": "integer"}}})
PY_TOOLS = [TIDES, TRAIN]

PY_NAMES = [
    ('[tide-table(port="Hull")]', [("tide-table", {"port": "Hull"})]),
    ('[tide-table(port="Hull"), book_train(from="York", to="Leeds", class=2)]',
     [("tide-table", {"port": "Hull"}), ("book_train", {"from": "York", "to": "Leeds", "class": 2})]),
    ('<function_calls>book_train(from="York", to="a-b(c)")</function_calls>', [("book_train", {"from": "York", "to": "a-b(c)"})]),
]


@pytest.mark.parametrize(("text", "want"), PY_NAMES)
def test_python_calls_with_names_python_cannot_spell(text: str, want: list) -> None:
    parsed = parse_response(text, tools=PY_TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert parsed.tool_calls[0].repairs  # the renaming is said
    assert_stream_matches_under(text, PY_TOOLS, 3)


def test_keyword_names_inside_strings_stay_text_and_plain_calls_are_not_renamed() -> None:
    parsed = parse_response('[book_train(to="Leeds,from=York (class=2)")]', tools=PY_TOOLS)
    assert [(c.name, c.arguments, c.repairs) for c in parsed.tool_calls] == [("book_train", {"to": "Leeds,from=York (class=2)"}, [])]
    quoted = parse_response("[book_train(to='it\\'s, from=here', class=2)]", tools=PY_TOOLS).tool_calls[0]
    assert quoted.arguments == {"to": "it's, from=here", "class": 2} and quoted.repairs


def test_python_names_stream_at_every_cut() -> None:
    assert_every_cut_matches(PY_NAMES[1][0], PY_TOOLS, 13)


@pytest.mark.parametrize("text", ["Tides: [high-water(t) for t in days] is a comprehension.", "See [x-y(2)] and [tide-table(port)] in the notes."])
def test_hyphenated_code_in_prose_is_no_call(text: str) -> None:
    assert calls(text, PY_TOOLS) == []


DISPLAYED = [
    '[Calling tool: shell_run with arguments: {"cmd": "uptime"}]',
    "[Calling tool: shell_run with arguments: {\u201ccmd\u201d: \u201cecho \u2018hi\u2019 && uptime\u201d}]",
]


@pytest.mark.parametrize("text", DISPLAYED)
def test_call_display_with_arguments_label(text: str) -> None:
    parsed = parse_response(text, tools=[SHELL])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("shell_run", {"cmd": "uptime" if "uptime\"" in text else "echo \u2018hi\u2019 && uptime"})]
    assert parsed.content.strip() == ""
    assert_every_cut_matches(text, [SHELL], 11)


def test_call_display_label_in_prose_is_no_call() -> None:
    assert calls("[Calling tool: shell_run with arguments: see the log above]", [SHELL]) == []


@pytest.mark.parametrize("ident", [" (ID: shell_run_1768372099304_19)", ""])
def test_openclaws_tool_call_display(ident: str) -> None:
    text = f'Checking.\n[Tool Call: shell_run{ident}] Arguments: {{ "cmd": "uptime" }}\nDone.'
    parsed = parse_response(text, tools=[SHELL])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("shell_run", {"cmd": "uptime"})]
    assert parsed.content == "Checking.\nDone."
    assert_every_cut_matches(text, [SHELL], 3)


@pytest.mark.parametrize("text", ["[Tool Call: shell_run] was shown above.", "[Tool Call: shell_run] Arguments: none"])
def test_openclaws_display_without_an_object_is_prose(text: str) -> None:
    assert calls(text, [SHELL]) == []


NAMED = Tool("rename", parameters={"type": "object", "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}}})


def test_announced_tool_line_then_the_whole_call_object() -> None:
    text = 'Using tool: shell_run\n{\n  "name": "shell_run",\n  "arguments": {"cmd": "df -h"}\n}'
    parsed = parse_response(text, tools=[SHELL, NAMED])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("shell_run", {"cmd": "df -h"})]
    assert_stream_matches_under(text, [SHELL, NAMED], 5)


def test_a_tool_taking_a_name_keeps_the_object_as_its_arguments() -> None:
    text = 'rename\n{"name": "rename", "arguments": {"x": 1}}'
    assert calls(text, [SHELL, NAMED]) == [("rename", {"name": "rename", "arguments": {"x": 1}})]


MISLABELLED = '```xml\n  {"name": "forecast", "arguments": {"town": "Alta"}}\n```'


def test_call_json_in_a_mislabelled_fence_that_is_the_whole_answer() -> None:
    assert calls(MISLABELLED) == [("forecast", {"town": "Alta"})]
    assert_every_cut_matches(MISLABELLED, TOOLS, 9)


@pytest.mark.parametrize("text", [
    "Here is the payload:\n" + MISLABELLED + "\nSend it to the API.",
    '```xml\n{"name": "unknown_tool", "arguments": {}}\n```',
])
def test_mislabelled_fence_in_prose_or_naming_no_tool_is_no_call(text: str) -> None:
    assert calls(text) == []


CALL_THEN_PROSE = 'forecast(town="Kiruna") I have asked for the forecast; it will be back shortly.'


def test_a_call_on_the_first_line_then_prose_lines() -> None:
    text = 'forecast(town="Kiruna")\nthat is the request; the answer follows.'
    assert calls(text) == [("forecast", {"town": "Kiruna"})]


def test_a_call_opening_the_answer_then_prose() -> None:
    parsed = parse_response(CALL_THEN_PROSE, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("forecast", {"town": "Kiruna"})]
    assert parsed.content.strip().startswith("I have asked")
    assert_every_cut_matches(CALL_THEN_PROSE, TOOLS, 23)


@pytest.mark.parametrize("text", [
    'forecast(town="Kiruna").upper() returns the text in capitals.',
    'The docs say forecast(town="Kiruna") fetches a forecast.',
    'forecast(town) needs a town name first.',
    'forecast(town="Kiruna") should tell us.',
])
def test_code_or_prose_starting_with_a_call_is_no_call(text: str) -> None:
    assert calls(text) == []


def test_kimi_calls_cut_off_inside_an_unclosed_think_stay_reasoning() -> None:
    text = '<think>Two lookups needed<|tool_call_begin|>functions.forecast:0<|tool_call_argument_begin|>{"town": "Oslo"}'
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert DiagnosticKind.IN_REASONING in [d.kind for d in parsed.diagnostics]
    assert_stream_matches_under(text, TOOLS, 6)
