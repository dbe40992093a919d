"""Drifted spellings of Llama's ``<function=`` calls and of FunctionGemma / Gemma 4 calls.

Definitions followed:

* Llama 3.1 custom tools: ``<function=NAME>{json}</function>`` (Meta's Llama 3.1
  model card / prompt-format page; vLLM's and llama.cpp's llama3 parsers read
  the same). Hosted Llama 3.x (Groq ``tool_use_failed`` errors, whose
  ``failed_generation`` carries the model's text) drops the ``>`` or writes
  ``=`` / ``,`` / ``:`` in its place, sometimes closing with ``>``.
* FunctionGemma: ``<start_function_call>call:NAME{key:<escape>v<escape>}<end_function_call>``
  (google/functiongemma-270m-it chat template; vLLM ``functiongemma_tool_parser``).
  Gemma 4: ``<|tool_call>call:NAME{key:<|"|>v<|"|>}<tool_call|>`` (Gemma 4 chat
  template), where every one of those markers is a special token.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import get_family, parse_response
from utp.parsers.base import ParseContext
from utp.parsers.scanloop import scan_text
from utp.types import DiagnosticKind, Tool, ToolCall

from .test_scan_filter import CONTEXTS, SCANNER, _outcome
from .test_streaming import cut, one_shot, run_chunks

FUNCTIONARY = get_family("functionary")
GEMMA = get_family("functiongemma")


def calls_of(text: str, tools: list[str] | None = None) -> list[tuple[str, dict]]:
    parsed = parse_response(text, tools=[{"name": t} for t in tools] if tools else None)
    return [(c.name, c.arguments) for c in parsed.tool_calls]


def _same_everywhere(text: str) -> None:
    """Filtered scan == literal scan, and any chunking of a stream == one-shot parsing."""
    for ctx in CONTEXTS:
        for reasoning in (False, True):
            filtered = scan_text(text, SCANNER, ctx, reasoning=reasoning)
            literal = scan_text(text, SCANNER, ctx, reasoning=reasoning, literal=True)
            assert _outcome(filtered) == _outcome(literal), text
    assert run_chunks(list(text))[:2] == one_shot(text)
    assert run_chunks(cut(text, [3, 7, 20, 41]))[:2] == one_shot(text)


# --- Llama / functionary: <function=NAME drift ---------------------------------------------

#: real: tashfeenahmed/freellmapi PR #291, Groq llama-3.3-70b-versatile failed_generation
FREELLMAPI = '<function=read={"file_path": "sample.txt"}</function>'


def test_real_groq_equals_sign_after_the_name() -> None:
    parsed = parse_response(FREELLMAPI)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("read", {"file_path": "sample.txt"}, "functionary")]
    assert parsed.tool_calls[0].repairs == ["'=' instead of '>' after the function name"]
    assert parsed.content == ""
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.REPAIRED]


@pytest.mark.parametrize(
    ("text", "name", "arguments", "repair"),
    [
        # glued: the form Groq's own tests of failed_generation rescue show most often
        ('<function=search_web{"query": "Kyoto"}</function>', "search_web", {"query": "Kyoto"}, "no '>' after the function name"),
        # ',' : prism-php/prism#983 (Groq llama-3.3 put 'get_transactions,{...}' in the name)
        ('<function=get_transactions,{"limit": "10"}</function>', "get_transactions", {"limit": "10"}, "',' instead of '>'"),
        ('<function=get_time:{}>', "get_time", {}, "':' instead of '>'"),
        ('<function=ledger_add={ "amount": 5 }>', "ledger_add", {"amount": 5}, "'=' instead of '>'"),
        # '>' moved after the arguments, then the close tag
        ('<function=write_file{"content": "x", "path": "y.txt"}></function>', "write_file", {"content": "x", "path": "y.txt"}, "no '>'"),
        ('<function=f = {"a": [1, 2]}</function>', "f", {"a": [1, 2]}, "'=' instead of '>'"),
        ('<function=mcp.tool-x\n', None, None, None),
    ],
)
def test_groq_header_drift_is_read_with_a_repair(text: str, name: str | None, arguments: dict | None, repair: str | None) -> None:
    parsed = parse_response("Sure.\n" + text)
    if name is None:
        assert parsed.tool_calls == [] and parsed.diagnostics == []
        return
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [(name, arguments)]
    assert parsed.tool_calls[0].format == "functionary"
    assert parsed.tool_calls[0].repairs[0].startswith(repair)
    assert parsed.content == "Sure."
    _same_everywhere("Sure.\n" + text + "\nDone.")


def test_standard_forms_are_unchanged() -> None:
    # langchain-ai/langchain PR #31440 (Groq Llama-3.1): the documented form
    parsed = parse_response('<function=brave_search>{"query": "Hello!"}</function>')
    assert [(c.name, c.arguments, c.repairs) for c in parsed.tool_calls] == [("brave_search", {"query": "Hello!"}, [])]
    # Qwen3-Coder keeps its parameters and its empty calls
    assert calls_of("<function=f><parameter=a>one</parameter></function>") == [("f", {"a": "one"})]
    assert [c.format for c in parse_response("<function=get_cart></function>").tool_calls] == ["qwen3_coder"]


@pytest.mark.parametrize("text", ['<function=f>{"a": 1}<function>', '<function=f>{"a": 1} <function>\nDone.'])
def test_closer_written_without_its_slash_is_read_as_the_closer(text: str) -> None:
    from .conftest import assert_every_cut_matches

    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("f", {"a": 1})]
    assert "<function> written for </function>" in parsed.tool_calls[0].repairs
    assert "<function>" not in parsed.content
    assert_every_cut_matches(text, None, step=5)


def test_qwen3_coder_passes_on_a_name_holding_json() -> None:
    """``<function=f{json}></function>`` has a '>' and then </function>: once Qwen3-Coder read
    the name as 'f{json}' with no arguments; a '{' in the name is Llama's drift."""
    parsed = parse_response('<function=f{"a": 1}></function>')
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("f", {"a": 1}, "functionary")]


def test_broken_json_after_a_drifted_header_is_reported() -> None:
    parsed = parse_response('<function=f={"a": }</function>')
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]


@pytest.mark.parametrize(
    "text",
    [
        "Write <function=NAME>, then the JSON.",
        "the tag <function=f{x}> is not a call",
        "<function=f{<function=f{<function=f{",
        "<function=f {name}",
        "<function=9f{\"a\": 1}</function>",
        '<function=a b{"a": 1}</function>',
        "`<function=f{\"a\": 1}</function>`",
        '<function=f' + " " * 20 + '{"a": 1}</function>',
        '<function=' + "f" * 129 + '{"a": 1}</function>',
    ],
)
def test_function_tag_prose_and_near_misses_stay_content(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and parsed.diagnostics == [], text
    assert parsed.content == text
    _same_everywhere(text)


def test_drift_head_is_necessary() -> None:
    head = re.compile(FUNCTIONARY.trigger_heads["<function="])
    qwen = re.compile(get_family("qwen3_coder").trigger_heads["<function="])
    for body in ['read={"a": 1}', 'f{}', 'f,{"a"', "f{x}", "f {", 'f:  {  "', "f" * 128 + '{"', "f" * 129 + '{"', 'a.b-c={"x"']:
        text = "<function=" + body
        for ctx in CONTEXTS:
            if head.match(text, len("<function=")) is None:
                assert FUNCTIONARY.extract(text, 0, "<function=", ctx) is None, text
            if qwen.match(text, len("<function=")) is None:
                assert get_family("qwen3_coder").extract(text, 0, "<function=", ctx) is None, text


# --- FunctionGemma: no 'call:', XML-style closer --------------------------------------------

#: real: DenisovAV/flutter_gemma#238, gemma-4-E2B-it prompted with FunctionGemma syntax
FLUTTER_GEMMA = "<start_function_call>get_financial_overview{}</end_function_call>"


def test_real_functiongemma_without_call_prefix_and_slashed_closer() -> None:
    parsed = parse_response(FLUTTER_GEMMA, tools=[{"name": "get_financial_overview"}])
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_financial_overview", {}, "functiongemma")]
    assert parsed.tool_calls[0].repairs == ["no 'call:' before 'get_financial_overview'", "closed with </end_function_call>"]
    assert parsed.content == ""
    _same_everywhere("Checking.\n" + FLUTTER_GEMMA + "\nDone.")


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ("<start_function_call>f{a:<escape>x<escape>}<end_function_call>", [("f", {"a": "x"})]),
        ('<|tool_call>get_weather{city:<|"|>Paris<|"|>}<tool_call|>', [("get_weather", {"city": "Paris"})]),
        ("<start_function_call>call:f{n:1}</end_function_call>", [("f", {"n": 1})]),
        ("<start_function_call>call:f{n:1}</start_function_call>", [("f", {"n": 1})]),
        ("<start_function_call>\n  f{}", [("f", {})]),
    ],
)
def test_functiongemma_drift_read(text: str, calls: list) -> None:
    assert calls_of(text) == calls
    _same_everywhere("Ok. " + text + " Done.")


def test_functiongemma_drift_that_does_not_read_is_reported() -> None:
    parsed = parse_response("<start_function_call>f{a b}<end_function_call> after")
    assert parsed.tool_calls == [] and [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]
    assert parsed.content == "after"
    parsed = parse_response("<start_function_call>f{a:<escape>unclosed")
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]


@pytest.mark.parametrize(
    "text",
    [
        "FunctionGemma wraps calls in <start_function_call> and <end_function_call> tokens.",
        "<start_function_call>{\"name\": \"f\"}",
        "<start_function_call>f {a:1}",
        "<start_function_call>f{<start_function_call>f{",
        "<start_function_call>9f{a:1}<end_function_call>",
    ],
)
def test_functiongemma_opener_prose_stays_content(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and parsed.diagnostics == [], text
    _same_everywhere(text)


# --- Gemma 4 with its special tokens stripped: a bare call:NAME{...} line ----------------------

#: real: Gitlawb/openclaude PR #380, Gemma 4 behind vLLM (special tokens skipped)
OPENCLAUDE = "call:write_file{content:hello,path:a.txt}"


@pytest.mark.parametrize("tools", [None, ["write_file"]])
def test_real_stripped_gemma4_call(tools: list[str] | None) -> None:
    parsed = parse_response(OPENCLAUDE, tools=[{"name": t} for t in tools] if tools else None)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("write_file", {"content": "hello", "path": "a.txt"}, "functiongemma")
    ]
    assert parsed.tool_calls[0].repairs[0].startswith("call tokens missing")
    assert parsed.content == ""


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        ("Writing it.\ncall:write_file{path:a.txt}\n", [("write_file", {"path": "a.txt"})], "Writing it."),
        ("  call:f{n:1, ok:true}  \nDone.", [("f", {"n": 1, "ok": True})], "Done."),
        ("call:f{a:1}call:g{b:[1,2]}", [("f", {"a": 1}), ("g", {"b": [1, 2]})], ""),
        ("call:f{}\r\ncall:g{}", [("f", {}), ("g", {})], ""),
        ('call:f{s:<|"|>a, b}<|"|>}<tool_call|>', [("f", {"s": "a, b}"})], ""),
        ("call:get_weather{city:Paris}", [("get_weather", {"city": "Paris"})], ""),
    ],
)
def test_bare_call_lines(text: str, calls: list, content: str) -> None:
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == calls
    assert parsed.content.strip() == content
    _same_everywhere(text)


@pytest.mark.parametrize(
    "text",
    [
        "Next call: {x}",
        "Next call:{x}",
        "I recall:foo{bar} from the docs.",
        "recall:foo{bar:1}",
        "call:foo{bar}",
        "call:foo{bar:1} is how Gemma writes a call.",
        "Write call:foo{bar:1} like this.",
        "call: foo{bar:1}",
        "call:foo {bar:1}",
        "call:foo{see here: 1}",
        "call:foo{1,2}",
        "call:foo{a:1",
        "call:foo{a:1}\n   and then",  # the call line is fine, but this is checked below with tools
        "a.call:foo{a:1}",
        "call:foo{a:1}" + " " * 17 + "\n",
        "call:foo{a:\nb}",
        "const o = {\ncall:function(){ return 1 }\n}",
        "call:f{a:1};",
    ],
)
def test_bare_call_prose_stays_content(text: str) -> None:
    parsed = parse_response(text, tools=[{"name": "bar"}])
    assert parsed.tool_calls == [] and parsed.diagnostics == [], text
    if text.startswith("call:foo{a:1}\n"):
        return
    without_tools = parse_response(text)
    assert without_tools.tool_calls == [] and without_tools.diagnostics == [], text
    assert without_tools.content.strip() == text.strip()
    _same_everywhere(text)


def test_bare_call_needs_an_offered_name_when_tools_are_given() -> None:
    assert calls_of("call:foo{a:1}") == [("foo", {"a": 1})]
    assert calls_of("call:foo{a:1}", tools=["bar"]) == []
    assert calls_of("call:bar{a:1}call:foo{a:1}", tools=["bar"]) == []


def test_bare_head_is_necessary() -> None:
    head = re.compile(GEMMA.trigger_heads["call:"])
    for prefix in ["", "\n", " ", "\t", "x", ":", "re", "{"]:
        for body in ["f{a:1}", "f{}", "f {", "f{ a:1}", "f{<escape>k<escape>:1}", "f{<x", "{", "9f{}", "f{\n}", "f" * 257 + "{}"]:
            text = prefix + "call:" + body
            if head.match(text, len(prefix) + 5) is None:
                for ctx in (ParseContext(), ParseContext([Tool("f")])):
                    assert GEMMA.extract(text, len(prefix), "call:", ctx) is None, text


def test_stream_holds_a_bare_call_line_only_until_it_is_decided() -> None:
    from utp.parsers.streaming import ContentDelta, StreamParser

    parser = StreamParser()
    shown = "".join(e.text for e in parser.feed("I recall: the docs") if isinstance(e, ContentDelta))
    assert shown.startswith("I recall: the docs"[: len(shown)]) and "recall: the" in shown
    parser = StreamParser()
    events = parser.feed("call:f{a:1} and more words\n")
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)).startswith("call:f{a:1} and more")


@pytest.mark.parametrize("unit", ["call:", "call:\n", "call: ", "call:f{", "call:f{\n", "\ncall:f{a:", "\ncall:f{a:<|\"|>", "call:f{}x\n"])
def test_bare_floods_stay_linear(unit: str) -> None:
    import time

    text = unit * 20000
    start = time.process_time()
    parse_response(text)
    assert time.process_time() - start < 2.0, unit


#: fragments of the drifted forms and their near misses, for the generated texts below
_PIECES = [
    "<function=", "read", "f", "=", ",", ":", " ", "\t", "{", "}", '{"a": 1}', '"', ">", "</function>", "\n",
    "<start_function_call>", "<|tool_call>", "call:", "<end_function_call>", "</end_function_call>", "<tool_call|>",
    "get_x", "{a:1}", "a:", "<escape>", '<|"|>', "re", "Next ", "x", "[1,2]", "9", "\r\n",
]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12),
    points=st.lists(st.integers(min_value=1, max_value=60), max_size=6),
)
def test_generated_drift_texts_scan_and_stream_alike(pieces: list[str], points: list[int]) -> None:
    text = "".join(pieces)
    for ctx in CONTEXTS:
        filtered = scan_text(text, SCANNER, ctx)
        literal = scan_text(text, SCANNER, ctx, literal=True)
        assert _outcome(filtered) == _outcome(literal), text
    assert run_chunks(cut(text, points))[:2] == one_shot(text), text
    assert run_chunks(list(text))[:2] == one_shot(text), text


@pytest.mark.parametrize("blanks", ["", " ", "  ", "\t"])
def test_a_bare_call_after_a_reasoning_closer_and_blanks_is_read_one_shot_as_streamed(blanks: str) -> None:
    """The scan's lookahead refused exactly one blank between the closer and ``call:``, where the
    reader accepts any: one-shot parsing showed the call as text and a stream ran it. Found by fuzzing."""
    from .conftest import assert_every_cut_matches

    tools = [Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})]
    text = f"<think>hmm</think>{blanks}call:get_weather{{city:<escape>Paris<escape>}}"
    parsed = parse_response(text, tools=tools)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert_every_cut_matches(text, tools, step=9)


@pytest.mark.parametrize(
    "text",
    [
        "<|tool_call>call:f<|channel>thought<channel|>{x:1}<tool_call|>",  # hf2q's test: a channel opened mid-call
        "<|tool_call>call:f hmm {x:1}<tool_call|>",
        "<start_function_call>call:f then{x:1}<end_function_call>",
    ],
)
def test_text_between_a_name_and_its_arguments_leaves_no_call_without_arguments(text: str) -> None:
    """A name with no braces is a call with no arguments only when an end token, the next
    call or the text's end follows; otherwise the arguments written later would be lost and
    ``f()`` run. It used to read ``f`` with ``{}``."""
    parsed = parse_response(text, tools=[{"name": "f"}])
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]
    _same_everywhere(text)


@pytest.mark.parametrize(
    "text",
    [
        "<|tool_call>call:f<tool_call|>",
        "<|tool_call>call:f <tool_call|>",
        "<|tool_call>call:f,call:g{a:1}<tool_call|>",
        "<|tool_call>call:f<|tool_call>call:g{}<tool_call|>",
    ],
)
def test_a_name_alone_before_an_end_or_the_next_call_is_a_call_without_arguments(text: str) -> None:
    assert calls_of(text)[0] == ("f", {})
    _same_everywhere(text)


@pytest.mark.parametrize("key", ["'", "'a'", "a'"])
def test_a_rendered_key_opening_with_a_quote_reads_back(key: str) -> None:
    """A key opening with ``'`` was rendered bare and then read as a key in Python's quotes (a
    round-trip property found it): such a key is now rendered between escape tokens."""
    text = get_family("functiongemma").render([ToolCall("A", {key: None})])
    parsed = parse_response(text, tools=[Tool("A", parameters={"type": "object", "properties": {key: {"type": "null"}}})], format="functiongemma")
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("A", {key: None})]
