"""Shapes that depend on the server or chat template as much as on the model, each cited.

* Magistral writes its reasoning between ``[THINK]`` and ``[/THINK]`` (its
  model card's system prompt); Ollama leaves the tags in content, and agents
  showed them as the answer (RooCodeInc/Roo-Code#8522).
* Gemma 4 thinks in ``<|channel>thought … <channel|>`` (its chat template;
  the reasoning parsers of vllm-mlx PR #274 split it off). Its calls,
  ``<|tool_call>call:NAME{…}<tool_call|>``, drift to parenthesised arguments,
  ``call:NAME(key: "value")`` (NousResearch/hermes-agent PR #7449 parses them),
  and to the name written twice, ``call:NAME:NAME{key: "value"}``
  (DenisovAV/flutter_gemma#228).
* Kimi K2's section tokens are also written singular,
  ``<|tool_call_section_begin|>`` (llama.cpp PR #17376 review; vLLM's tests).
  A server that does not render Kimi's special tokens leaves
  ``functions.NAME:IDX{…}`` bare, which is why published Kimi K2.6 templates
  for llama.cpp and LM Studio switch to ``<tool_call>`` JSON (jundot/omlx#984).
* gpt-oss decoded with special tokens skipped glues its header words
  together, ``analysis…assistantcommentary to=functions.NAME json{…}``
  (SGLang's gpt-oss detector reads this "simplified format"; llama.cpp
  PR #15158 handles the ``NAMEjson`` glue).
* gpt-oss's generation prompt ends with ``<|start|>assistant``, so a call
  whose recipient sits in the role position arrives as
  `` to=functions.NAME<|channel|>commentary json<|message|>{…}<|call|>``
  (the Harmony spec allows the recipient in either header position; vLLM's
  and llama.cpp's gpt-oss parsers read both).
* ByteDance Seed-OSS wraps Qwen3-Coder-style calls in ``<seed:tool_call>``
  (its chat template).
* LM Studio's default tool use has models write
  ``[TOOL_REQUEST]{"name": …, "arguments": …}[END_TOOL_REQUEST]``
  (lmstudio.ai/docs/advanced/tool-use); OpenClaw's provider notes report
  local models naming the tool in the brackets instead, ``[NAME]{…}[END_TOOL_REQUEST]``.
"""

from __future__ import annotations

import pytest

from utp.parsers import get_family, parse_response
from utp.parsers.reasoning import REASONING_TAGS, may_hold_reasoning
from utp.parsers.streaming import CallReady, stream_parse
from utp.types import DiagnosticKind, Tool, ToolCall

from .conftest import assert_every_cut_matches

GET_WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}})
SEARCH = Tool("search", parameters={"type": "object", "properties": {"query": {"type": "string"}}})
TOOLS = [GET_WEATHER, SEARCH]


def calls_of(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# ---------------------------------------------------------------- reasoning tags


MAGISTRAL = '[THINK]The user wants Paris. Draft: [TOOL_CALLS]get_weather[ARGS]{"city": "Rome"} No, Paris.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
GEMMA4 = '<|channel>thought\nThey asked for Paris; call get_weather.<channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>'


def test_magistral_reasoning_is_thinking_and_the_call_after_it_runs() -> None:
    parsed = parse_response(MAGISTRAL, tools=TOOLS)
    assert parsed.thinking.startswith("The user wants Paris.")
    assert parsed.content == ""
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert any(d.kind is DiagnosticKind.IN_REASONING for d in parsed.diagnostics)  # the call it only considered


def test_gemma4_thought_channel_is_thinking() -> None:
    parsed = parse_response(GEMMA4, tools=TOOLS)
    assert parsed.thinking == "They asked for Paris; call get_weather."
    assert parsed.content == ""
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris", "days": 3})]


def test_an_orphan_closer_means_the_output_began_inside_reasoning() -> None:
    parsed = parse_response("pre-filled thoughts[/THINK]The answer is 4.")
    assert (parsed.thinking, parsed.content) == ("pre-filled thoughts", "The answer is 4.")
    parsed = parse_response("thoughts<channel|>The answer is 4.")
    assert (parsed.thinking, parsed.content) == ("thoughts", "The answer is 4.")


def test_every_reasoning_tag_passes_the_cheap_check() -> None:
    """``may_hold_reasoning`` must say yes for every tag, or reasoning would be left in content."""
    for opener, closer in REASONING_TAGS:
        assert may_hold_reasoning(opener) and may_hold_reasoning(closer), (opener, closer)
    assert not may_hold_reasoning("no reasoning here")


@pytest.mark.parametrize("text", [MAGISTRAL, GEMMA4], ids=["magistral", "gemma4"])
def test_streamed_reasoning_matches_one_shot_at_every_cut(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=23)


# ---------------------------------------------------------------- Gemma 4 drift


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<|tool_call>call:get_weather(city: "Paris")<tool_call|>', {"city": "Paris"}),
        ("<|tool_call>call:get_weather(city: 'Paris', days=3)<tool_call|>", {"city": "Paris", "days": 3}),
        ('<|tool_call>call:get_weather(city: <|"|>Pa)ris<|"|>)<tool_call|>', {"city": "Pa)ris"}),
        ("<|tool_call>call:get_weather()<tool_call|>", {}),
        ("<start_function_call>call:get_weather(city=<escape>Paris<escape>)<end_function_call>", {"city": "Paris"}),
    ],
)
def test_gemma4_parenthesised_arguments(text: str, expected: dict) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", expected)]
    assert "arguments written in parentheses" in parsed.tool_calls[0].repairs


def test_gemma4_name_written_twice() -> None:
    parsed = parse_response('<|tool_call>call:get_weather:get_weather{city: "Paris"}<tool_call|>', tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert "name 'get_weather' written twice" in parsed.tool_calls[0].repairs


@pytest.mark.parametrize("tools", [None, [{"name": "mcp:lookup"}]])
def test_gemma4_namespaced_name_is_one_name(tools: list | None) -> None:
    """An MCP client's ``server:tool`` name: the part after the colon was read as stray text."""
    text = 'prefix <|tool_call>call:mcp:lookup{city:<|"|>Paris<|"|>}<tool_call|> suffix'
    parsed = parse_response(text, tools=tools)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("mcp:lookup", {"city": "Paris"})]
    assert parsed.tool_calls[0].repairs == []
    assert parsed.content == "prefix\nsuffix"


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ('<|tool_call>call:write{{"content":"x"}}<tool_call|>', {"content": "x"}),
        ('<|tool_call>call:write{{content:<|"|>x<|"|>,n:2}}<tool_call|>', {"content": "x", "n": 2}),
    ],
)
def test_gemma4_arguments_in_doubled_braces(text: str, arguments: dict) -> None:
    """A Jinja template's escaped braces copied into the call: read as 'missing key' and dropped."""
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("write", arguments)]
    assert "arguments inside doubled braces" in parsed.tool_calls[0].repairs


def test_gemma4_doubled_braces_around_something_else_stay_unreadable() -> None:
    parsed = parse_response("<|tool_call>call:write{{a:1},b:2}<tool_call|>")
    assert parsed.tool_calls == [] and parsed.diagnostics


REPEATED_END = '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><tool_call|>\n<tool_call|>Done.'


@pytest.mark.parametrize(
    ("text", "content"),
    [
        (REPEATED_END, "Done."),
        ("<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call> <end_function_call>", ""),
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>' + "<tool_call|>" * 70, "<tool_call|>" * 7),  # capped run
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|> Then <tool_call|>', "Then <tool_call|>"),  # not right after
    ],
)
def test_gemma4_end_token_repeated_after_a_call_is_part_of_it(text: str, content: str) -> None:
    """Gemma 4 sometimes writes ``<tool_call|>`` again after a call (ollama/ollama#15370)."""
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert parsed.content == content


def test_gemma4_repeated_end_tokens_stream_like_one_shot_at_every_cut() -> None:
    assert_every_cut_matches(REPEATED_END + "\n<tool_call|>    \t<end_function_call>" + " " * 40 + "x", TOOLS, step=11)


def test_gemma4_unclosed_quote_in_parentheses_is_reported_not_run() -> None:
    parsed = parse_response("<|tool_call>call:get_weather(city: 'Paris<tool_call|>", tools=TOOLS)
    assert parsed.tool_calls == []
    assert any(d.kind is DiagnosticKind.UNPARSEABLE and "not closed" in d.reason for d in parsed.diagnostics)


def test_a_name_never_swallows_the_parenthesis() -> None:
    """Before: ``get_weather(city`` became the tool name."""
    parsed = parse_response('<|tool_call>call:get_weather(city: "Paris")<tool_call|>')
    assert [c.name for c in parsed.tool_calls] == ["get_weather"]


# ---------------------------------------------------------------- Kimi


def test_kimi_singular_section_tokens_leave_no_markup() -> None:
    text = 'Sure.<|tool_call_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_call_section_end|>'
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments, c.id) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, "functions.get_weather:0")]
    assert parsed.content == "Sure."


STRIPPED_KIMI = 'I will look both up.\nfunctions.get_weather:0 {"city": "Paris"}functions.search:1{"query": "rain"}\nOne moment.'


def test_kimi_with_its_tokens_stripped() -> None:
    parsed = parse_response(STRIPPED_KIMI, tools=TOOLS)
    assert [(c.name, c.arguments, c.id) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "functions.get_weather:0"),
        ("search", {"query": "rain"}, "functions.search:1"),
    ]
    assert parsed.content == "I will look both up.\nOne moment."
    assert all(c.repairs[0].startswith("call tokens missing") for c in parsed.tool_calls)


@pytest.mark.parametrize(
    "text",
    [
        'Use functions.get_weather:0{"city": "Paris"} to check.',  # inside a sentence
        'functions.get_weather:0{"city": "Paris"} is the id format.',  # the line goes on
        'functions.get_weather{"city": "Paris"}',  # no index
        'functions.unknown:0{"city": "Paris"}',  # not an offered tool
    ],
)
def test_stripped_kimi_ids_that_stay_prose(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS + [Tool("unknown_tool")])
    assert parsed.tool_calls == [] and parsed.content == text


def test_stripped_kimi_needs_offered_tools() -> None:
    assert calls_of('functions.get_weather:0{"city": "Paris"}', tools=None) == []


def test_stripped_kimi_streams_like_one_shot_at_every_cut() -> None:
    assert_every_cut_matches(STRIPPED_KIMI, TOOLS, step=19)


# ---------------------------------------------------------------- gpt-oss, tokens stripped


STRIPPED_HARMONY = 'analysisUser wants Paris.assistantcommentary to=functions.get_weather json{"city":"Paris"}'


@pytest.mark.parametrize(
    "text",
    [
        STRIPPED_HARMONY,
        'analysisUser wants Paris.assistantcommentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
        'commentary to=functions.get_weatherjson{"city":"Paris"}',
        'commentary to=functions.get_weather {"city":"Paris"}',
        # the recipient in the role position, the channel after it, the line broken before the JSON
        'assistant to=functions.get_weather commentary json\n{"city":"Paris"}',
        'Checking.\nassistant to=functions.get_weather json {"city":"Paris"}',
    ],
)
def test_gpt_oss_with_its_header_tokens_stripped(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, "harmony")]
    assert parsed.tool_calls[0].repairs[0] == "header tokens missing (stripped special tokens?)"
    assert "to=functions" not in parsed.content


@pytest.mark.parametrize(
    "text",
    [
        "The commentary to=functions.get_weather header names the recipient.",  # no arguments
        'commentary to=functions.get_weather_daily json{"city":"Paris"}',  # another name
        'commentary to=functions.unknown json{"city":"Paris"}',  # not offered
        "Here assistant to=functions.get_weather commentary json is the header it writes.",  # no arguments
        'assistant to=functions.get_weather commentary json\n\nNext: {"city":"Paris"}',  # prose before the JSON
    ],
)
def test_stripped_gpt_oss_headers_that_stay_prose(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == text


def test_stripped_gpt_oss_needs_offered_tools() -> None:
    assert calls_of(STRIPPED_HARMONY, tools=None) == []


def test_stripped_gpt_oss_streams_like_one_shot_at_every_cut() -> None:
    assert_every_cut_matches(STRIPPED_HARMONY + "\nDone.", TOOLS, step=17)
    assert_every_cut_matches('Checking.\nassistant to=functions.get_weather commentary json\n{"city":"Paris"}\nDone.', TOOLS, step=1)


# ---------------------------------------------------------------- gpt-oss, recipient after the prefill


ROLE_RECIPIENT = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Paris"}<|call|>'


@pytest.mark.parametrize(
    "text",
    [
        ROLE_RECIPIENT,
        "assistant" + ROLE_RECIPIENT,  # the role word survived, its token did not
        '<|channel|>analysis<|message|>Paris.<|end|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Paris"}<|call|>',
        'Checking.\nto=functions.get_weather<|channel|>commentary<|message|>{"city":"Paris"}<|call|>',
    ],
)
def test_gpt_oss_recipient_in_the_role_position_before_a_bare_channel(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, "harmony")]
    assert "to=" not in parsed.content and "assistant" not in parsed.content


@pytest.mark.parametrize(
    "text",
    [
        "I sent it to=x. <|channel|>final<|message|>Hello",  # the final answer never has a recipient
        "a=b to=functions.get_weather<|channel|>",  # no message yet: nothing to read
        "value:to=functions.get_weather<|channel|>commentary<|message|>{}<|call|>",  # glued to a word
    ],
)
def test_role_recipients_that_are_not_calls(text: str) -> None:
    assert calls_of(text) == []


def test_role_recipient_streams_the_same_calls_and_result_at_every_cut() -> None:
    """The stream has shown the recipient when ``<|channel|>`` arrives (a documented difference): its calls and result match."""
    text = ROLE_RECIPIENT + "\nDone."
    one_shot = parse_response(text, tools=TOOLS)
    for cut in range(1, len(text)):
        events, result = stream_parse([text[:cut], text[cut:]], tools=TOOLS)
        assert [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)] == calls_of(text), cut
        assert (result.content, result.tool_calls) == (one_shot.content, one_shot.tool_calls), cut


# ---------------------------------------------------------------- Seed-OSS


SEED_OSS = (
    "<seed:think>Paris, so get_weather.</seed:think>Checking.\n"
    "<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</seed:tool_call>"
)


def test_seed_oss_block_leaves_no_markup() -> None:
    parsed = parse_response(SEED_OSS, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris", "days": 2}, "qwen3_coder")]
    assert (parsed.thinking, parsed.content) == ("Paris, so get_weather.", "Checking.")


def test_seed_oss_streams_like_one_shot_at_every_cut() -> None:
    assert_every_cut_matches(SEED_OSS, TOOLS, step=29)


# ---------------------------------------------------------------- LM Studio


LM_STUDIO = (
    "I'll check both.\n"
    '[TOOL_REQUEST]\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n[END_TOOL_REQUEST]\n'
    '[TOOL_REQUEST]{"name": "search", "arguments": {"query": "rain"}}[END_TOOL_REQUEST]\nDone.'
)


def test_lm_studio_default_format() -> None:
    parsed = parse_response(LM_STUDIO, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "lmstudio"),
        ("search", {"query": "rain"}, "lmstudio"),
    ]
    assert parsed.content == "I'll check both.\nDone."


def test_lm_studio_end_marker_missing_at_the_end_of_the_output() -> None:
    assert calls_of('[TOOL_REQUEST]{"name": "get_weather", "arguments": {"city": "Paris"}}') == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[get_weather]{"city": "Paris"}[END_TOOL_REQUEST]', {"city": "Paris"}),
        ('[get_weather] {"name": "get_weather", "arguments": {"city": "Paris"}} [END_TOOL_REQUEST]', {"city": "Paris"}),
    ],
)
def test_lm_studio_with_the_tool_named_in_the_brackets(text: str, expected: dict) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", expected)]
    assert parsed.tool_calls[0].repairs[0] == "tool name 'get_weather' in brackets instead of [TOOL_REQUEST]"


@pytest.mark.parametrize(
    "text",
    [
        'See [get_weather] {"city": "Paris"} for details.',  # no end marker
        "The [TOOL_REQUEST] marker is what LM Studio reads.",
    ],
)
def test_lm_studio_markers_in_prose_stay_prose(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == text


def test_a_bracketed_name_reopened_before_the_end_marker_is_prose_up_to_the_last_one() -> None:
    parsed = parse_response('[get_weather]{"city": "Paris"} or [get_weather]{"city": "Rome"}[END_TOOL_REQUEST]', tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Rome"})]
    assert parsed.content == '[get_weather]{"city": "Paris"} or'


def test_lm_studio_bracketed_name_needs_an_offered_tool() -> None:
    assert calls_of('[get_weather]{"city": "Paris"}[END_TOOL_REQUEST]', tools=None) == []


@pytest.mark.parametrize("text", [LM_STUDIO, 'Ok.\n[get_weather] {"city": "Paris"} [END_TOOL_REQUEST]\nbye'], ids=["tagged", "named"])
def test_lm_studio_streams_like_one_shot_at_every_cut(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=31)


def test_lm_studio_render_round_trips() -> None:
    calls = [ToolCall("get_weather", {"city": "Paris"}), ToolCall("search", {"query": "[TOOL_REQUEST] {}"})]
    text = get_family("lmstudio").render(calls)
    assert [(c.name, c.arguments) for c in parse_response(text, format="lmstudio").tool_calls] == [(c.name, c.arguments) for c in calls]


# ---------------------------------------------------------------- GLM, call tokens stripped

GLM_TOOLS = [{"name": "read", "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}, "limit": {"type": "integer"}}}}]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("read<arg_key>filePath</arg_key><arg_value>/home/a</arg_value>", ""),
        ("Looking.\nread\n<arg_key>filePath</arg_key>\n<arg_value>/home/a</arg_value>\n<arg_key>limit</arg_key>\n<arg_value>5</arg_value>\nThen more.", "Looking.\nThen more."),
    ],
)
def test_glm_with_its_call_tokens_stripped(text: str, content: str) -> None:
    parsed = parse_response(text, tools=GLM_TOOLS)
    assert [c.name for c in parsed.tool_calls] == ["read"] and parsed.tool_calls[0].arguments["filePath"] == "/home/a"
    assert "the <tool_call> tokens were stripped" in parsed.tool_calls[0].repairs
    assert parsed.content == content
    assert_every_cut_matches(text, GLM_TOOLS, step=2)


@pytest.mark.parametrize(
    "text",
    [
        "We read<arg_key> tags in the docs.",  # no whole pair
        "read<arg_key>filePath</arg_key><arg_value>/home/a",  # the value never closes
        "unread<arg_key>filePath</arg_key><arg_value>/home/a</arg_value>",  # another word
        "write<arg_key>filePath</arg_key><arg_value>/home/a</arg_value>",  # not offered
    ],
)
def test_stripped_glm_shapes_that_stay_prose(text: str) -> None:
    assert parse_response(text, tools=GLM_TOOLS).tool_calls == []


def test_a_flood_of_stripped_glm_heads_is_not_visited() -> None:
    """``f<arg_key>`` repeated: the head asks for the rest of a first pair, so no occurrence reaches Python."""
    from utp.parsers.base import ParseContext, registered_families
    from utp.parsers.triggerscan import TriggerScanner
    from utp.tooldefs import normalize_tools

    scanner = TriggerScanner(list(registered_families().values()), ParseContext(normalize_tools(GLM_TOOLS)))
    for unit in ("read<arg_key>", "read<arg_key>x"):
        flood = unit * 400
        visited = [m.start() for m in scanner.filtered_call_pattern.finditer(flood)]
        assert all(at >= len(flood) - len(unit) for at in visited), (unit, visited[:3])
