"""Parser speed: typical responses per family, the real-output corpus, hostile inputs, streaming.

Run with ``make bench`` (``pytest -m bench --benchmark-only``). Targets from the
issue, to be checked against the medians these report (nothing here asserts a
time): median ≤ 15 µs per parse over the corpus; 1 MB hostile input ≤ 100 ms;
streaming total ≤ 2× one-shot on the same text. ``json.loads`` of a valid
payload of the same size is benchmarked next to each hostile input as the
floor a parser written in Python is compared with. Streaming is measured for
per-token (4 chars), 16-char and whole-line chunks against the one-shot parse.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.parsers.conftest import WHOLE_ANSWER_ONLY
from utp.parsers import family_names, get_family, get_parser
from utp.parsers.streaming import CallReady, ContentDelta, StreamParser
from utp.types import Tool, ToolCall
from utp.validation import validate_arguments

pytestmark = pytest.mark.bench

CORPUS = Path("/work/shared/corpus/annotated_outputs.jsonl")
_LOCAL_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "annotated_outputs.jsonl"
if _LOCAL_CORPUS.exists():
    CORPUS = _LOCAL_CORPUS

TOOLS = [
    Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}),
    Tool("search_code", parameters={"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}),
]
TYPICAL_CALLS = [ToolCall("get_weather", {"city": "Paris", "days": 3}), ToolCall("search_code", {"query": "def parse", "limit": 5})]
SIZES = {"10KB": 10 * 1024, "100KB": 100 * 1024, "1MB": 1024 * 1024}


def typical_response(family: str) -> str:
    """Short prose around one family's rendering of two calls (a whole-answer family's rendering alone)."""
    rendered = get_family(family).render(TYPICAL_CALLS)
    return rendered if family in WHOLE_ANSWER_ONLY else f"Let me check both for you.\n{rendered}\nOne moment."


@pytest.mark.parametrize("family", family_names())
def test_bench_typical_response(benchmark, family: str) -> None:
    parser = get_parser("auto", TOOLS, allow_bash=True)
    text = typical_response(family)
    parsed = benchmark(parser.parse, text)
    assert [c.name for c in parsed.tool_calls] == ["get_weather", "search_code"]


def _corpus_texts() -> list[str]:
    with CORPUS.open(encoding="utf-8") as handle:
        return [json.loads(line)["raw"] for line in handle]


def test_bench_corpus_all_records(benchmark) -> None:
    """One round parses every annotated record once; per-parse time = round time / records."""
    parser = get_parser("auto")
    texts = _corpus_texts()

    def parse_all() -> int:
        return sum(len(parser.parse(text).tool_calls) for text in texts)

    found = benchmark(parse_all)
    benchmark.extra_info["records"] = len(texts)
    assert found > 0


@pytest.mark.parametrize("index", range(len(_corpus_texts())))
def test_bench_corpus_record(benchmark, file_median, index: int) -> None:
    """Each record alone: the median over these medians is the corpus per-parse figure."""
    parser = get_parser("auto")
    text = _corpus_texts()[index]
    assert benchmark(parser.parse, text).content is not None
    file_median(f"corpus:{index}")


def _hostile(kind: str, size: int) -> str:
    if kind.endswith("+close"):  # the same flood with one closer at the end: nothing short-circuits
        return _hostile(kind[: -len("+close")], size - 1) + "}"
    unit = {
        "unclosed_tool_call": "<tool_call>",
        "unclosed_qwen": "<tool_call><function=f><parameter=a>",
        "unclosed_pythonic": "[f(",
        "unclosed_mistral": "[TOOL_CALLS]",
        "unclosed_gemma": "<start_function_call>call:f{a:",
        "braces": "{",
        "brackets": "[",
        "braces_spaced": "{ ",
        "json_call_heads": '{"name": ',
        "json_call_lines": '\n{"name": "f", ',
        "weak_tag_strings": '<tools>{"a": "',
        "tag_call_heads": '<tool_call>{"name": ',
        "harmony_heads": '<|channel|>commentary to=functions.f <|message|>{"a": ',
        "functionary_heads": '>>>f\n{"a": ',
        "fence_openers": "```json\n",
        # strings that never close after a JSON tag / in bare call lines (were quadratic: seconds for 40 KB)
        "json_tag_strings": '<tool_calls>["',
        "bare_call_strings": '\n{"name": "f", "arguments": "',
        # call-shaped units of the families whose markers come from the offered tool `f`
        "tool_element_heads": "<f>\n<a>",
        "hermes_tool_elements": "<tool_call><f><a>x</a>",
        "python_fence_calls": "```py\nf()\n",
        "react_calls": "Action: f\nAction Input: x\n",
    }[kind]
    return unit * (size // len(unit))


HOSTILE_KINDS = [
    "unclosed_tool_call", "unclosed_qwen", "unclosed_pythonic", "unclosed_mistral", "unclosed_gemma", "braces", "brackets",
    "braces_spaced", "json_call_heads", "json_call_lines", "weak_tag_strings", "tag_call_heads", "harmony_heads", "functionary_heads", "fence_openers",
    "json_tag_strings", "bare_call_strings",
    "json_call_heads+close", "json_call_lines+close",
    "tool_element_heads", "hermes_tool_elements", "python_fence_calls", "react_calls",
]


@pytest.mark.parametrize("size", list(SIZES), ids=str)
@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_bench_hostile(benchmark, file_median, kind: str, size: str) -> None:
    parser = get_parser("auto", [Tool("f")], allow_bash=True)
    text = _hostile(kind, SIZES[size])
    rounds = 3 if size == "1MB" else 10
    parsed = benchmark.pedantic(parser.parse, args=(text,), rounds=rounds, iterations=1, warmup_rounds=1)
    assert not [d for d in parsed.diagnostics if "parser error" in d.reason]
    file_median(f"hostile:{kind}:{size}")


def test_bench_first_parse_with_a_new_tool_list(benchmark, file_median) -> None:
    """What a new tool list costs: its own triggers' pattern is compiled at the first parse.

    Each round offers tool names never seen before, as an evaluation suite does
    scenario after scenario; the families' shared trie is compiled once.
    """
    text = '<tool_call>{"name": "t0", "arguments": {"a": 1}}</tool_call>'
    counter = iter(range(10**9))

    def new_tools() -> tuple[tuple, dict]:
        n = next(counter)
        return (), {"tools": [Tool(f"tool_{n}_{k}") for k in range(5)]}

    def first_parse(tools: list[Tool]) -> int:
        return len(get_parser("auto", tools).parse(text).tool_calls)

    assert benchmark.pedantic(first_parse, setup=new_tools, rounds=50, iterations=1, warmup_rounds=1) == 1
    file_median("first parse, new tool list")


def test_bench_first_stream_with_a_new_tool_list(benchmark, file_median) -> None:
    """The same for a stream, which compiles one combined pattern for the tool list."""
    chunks = ['<tool_call>{"name": "t0", ', '"arguments": {"a": 1}}</tool_call>']
    counter = iter(range(10**9))

    def new_tools() -> tuple[tuple, dict]:
        n = next(counter)
        return (), {"tools": [Tool(f"stream_tool_{n}_{k}") for k in range(5)]}

    def first_stream(tools: list[Tool]) -> int:
        return _consume(StreamParser(tools=tools), chunks)

    assert benchmark.pedantic(first_stream, setup=new_tools, rounds=30, iterations=1, warmup_rounds=1) == 1
    file_median("first stream, new tool list")


def _every_trigger() -> list[str]:
    scanner = get_parser("auto", [Tool("f")], allow_bash=True).scanner
    return sorted(scanner.content_triggers)


@pytest.mark.parametrize("after", ["", "\n"], ids=["bare", "newline"])
@pytest.mark.parametrize("trigger", _every_trigger())
def test_bench_opener_flood(benchmark, file_median, trigger: str, after: str) -> None:
    """A megabyte of one trigger (every family's, reasoning tags included), each never closed."""
    parser = get_parser("auto", [Tool("f")], allow_bash=True)
    unit = trigger + after
    text = unit * (SIZES["1MB"] // len(unit))
    parsed = benchmark.pedantic(parser.parse, args=(text,), rounds=3, iterations=1, warmup_rounds=1)
    # a self-closing tool element (``<f/>``) is a whole call by itself: its flood is one of calls
    # (read up to the call-span limit), timed with the others
    assert not parsed.tool_calls or trigger.endswith("/>")
    file_median(f"flood:{unit!r}")


#: digits in each number flood (a digit run and one letter where the schema wants a number)
FLOOD_DIGITS = 20_000
NUMBER_TOOL = Tool("f", parameters={"type": "object", "properties": {"n": {"type": "number"}}})
NUMBER_FLOOD_FAMILIES = ["qwen3_coder", "glm", "anthropic_xml", "minimax_m3", "cline_xml", "functiongemma"]


def _number_flood(family: str) -> str:
    value = "1" * FLOOD_DIGITS + "x"
    if family == "functiongemma":  # a bare word: its rendering would quote a string
        return f"<start_function_call>call:f{{n:{value}}}<end_function_call>"
    return get_family(family).render([ToolCall("f", {"n": value})])


@pytest.mark.parametrize("family", NUMBER_FLOOD_FAMILIES)
def test_bench_number_flood(benchmark, file_median, family: str) -> None:
    """20,000 digits and a letter as a number-typed value (once quadratic: 18 s)."""
    parser = get_parser(family, [NUMBER_TOOL])
    parsed = benchmark.pedantic(parser.parse, args=(_number_flood(family),), rounds=10, iterations=1, warmup_rounds=1)
    assert len(parsed.tool_calls) == 1
    file_median(f"numbers:{family}")


def test_bench_number_flood_native_validation(benchmark, file_median) -> None:
    """The same value in a native call: schema validation tries to read it as a number."""
    arguments = {"n": "1" * FLOOD_DIGITS + "x"}
    outcome = benchmark.pedantic(validate_arguments, args=(NUMBER_TOOL.parameters, arguments), rounds=10, iterations=1, warmup_rounds=1)
    assert not outcome.ok
    file_median("numbers:native (validation)")


def test_bench_number_flood_json_loads_reference(benchmark, file_median) -> None:
    """``json.loads`` of a call holding the same value as a string: the floor for the floods."""
    payload = json.dumps({"name": "f", "arguments": {"n": "1" * FLOOD_DIGITS + "x"}})
    benchmark.pedantic(json.loads, args=(payload,), rounds=10, iterations=1, warmup_rounds=1)
    file_median("json.loads:numbers")


@pytest.mark.parametrize("size", list(SIZES), ids=str)
def test_bench_json_loads_reference(benchmark, file_median, size: str) -> None:
    """Valid JSON of the same size through the C decoder: the floor for the hostile cases."""
    count = SIZES[size] // 16
    payload = json.dumps({"items": [{"k": "abcdef"} for _ in range(count)]})
    rounds = 3 if size == "1MB" else 10
    value = benchmark.pedantic(json.loads, args=(payload,), rounds=rounds, iterations=1, warmup_rounds=1)
    assert len(value["items"]) == count
    file_median(f"json.loads:{size}")


def _stream_text() -> str:
    prose = "Here is what I found while reading the repository. " * 20
    return prose + "\n" + get_family("hermes").render(TYPICAL_CALLS) + "\n" + prose


def _chunked(text: str, how: str) -> list[str]:
    if how == "lines":
        return text.splitlines(keepends=True)
    size = int(how.split("_")[0])
    return [text[i : i + size] for i in range(0, len(text), size)]


def _consume(parser: StreamParser, chunks: list[str]) -> int:
    """What an agent does with a stream: look at each event, act on the calls."""
    ready = 0
    for chunk in chunks:
        for event in parser.feed(chunk):
            if type(event) is CallReady:
                ready += 1
    for event in parser.close():
        if type(event) is CallReady:
            ready += 1
    return ready


@pytest.mark.parametrize("how", ["4_chars", "16_chars", "lines"])
def test_bench_streaming_chunkings(benchmark, file_median, how: str) -> None:
    """Realistic chunkings: per token (~4 chars, Ollama/OpenAI deltas), 16 chars, whole lines."""
    text = _stream_text()
    chunks = _chunked(text, how)

    def stream() -> int:
        return _consume(StreamParser(tools=TOOLS), chunks)

    benchmark.extra_info["chunks"] = len(chunks)
    assert benchmark(stream) == 2
    file_median(f"stream:{how} ({len(chunks)} chunks)")


def test_bench_streaming_without_tools(benchmark, file_median) -> None:
    """Token-sized chunks with no tools offered: the stream then watches for no tool names."""
    chunks = _chunked(_stream_text(), "4_chars")
    assert benchmark(lambda: _consume(StreamParser(), chunks)) == 2
    file_median(f"stream:4_chars, no tools ({len(chunks)} chunks)")


@pytest.mark.parametrize("how", ["one chunk", "one-shot"])
def test_bench_large_chunk_of_openers(benchmark, file_median, how: str) -> None:
    """``"[" * 40000`` as ONE chunk against the same text parsed at once (a stream once took 7.8 s)."""
    text = "[" * 40_000
    if how == "one-shot":
        run = lambda: len(get_parser("auto").parse(text).content)  # noqa: E731
    else:
        run = lambda: _consume(StreamParser(), [text])  # noqa: E731
    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    file_median(f"openers:{how}")


class _FloorParser:
    """The least a Python stream parser can do per chunk: one method call, one event back."""

    def feed(self, chunk: str) -> list[ContentDelta]:
        return [ContentDelta(chunk)]

    def close(self) -> list[ContentDelta]:
        return []


@pytest.mark.parametrize("how", ["4_chars", "16_chars"])
def test_bench_streaming_floor(benchmark, file_median, how: str) -> None:
    """What any incremental parser written in Python pays for the chunking alone (no parsing)."""
    chunks = _chunked(_stream_text(), how)
    assert benchmark(lambda: _consume(_FloorParser(), chunks)) == 0  # type: ignore[arg-type]
    file_median(f"stream:floor, no parsing, {how} ({len(chunks)} chunks)")


def test_bench_streaming_one_shot_reference(benchmark, file_median) -> None:
    """The same text parsed at once (the streaming target is ≤ 2× this)."""
    text = _stream_text()
    parser = get_parser("auto", TOOLS)
    assert len(benchmark(parser.parse, text).tool_calls) == 2
    file_median("stream:one-shot")


def _prose_text() -> str:
    """2.2 KB of prose and no call: where one-shot parsing is one regex scan and a stream pays per chunk."""
    return "Here is what I found while reading the repository. " * 43


def test_bench_prose_one_shot(benchmark, file_median) -> None:
    parser = get_parser("auto", TOOLS)
    assert benchmark(parser.parse, _prose_text()).tool_calls == []
    file_median("prose:one-shot")


@pytest.mark.parametrize("how", ["4_chars", "16_chars"])
def test_bench_prose_streaming(benchmark, file_median, how: str) -> None:
    chunks = _chunked(_prose_text(), how)
    assert benchmark(lambda: _consume(StreamParser(tools=TOOLS), chunks)) == 0
    file_median(f"prose:stream, {how} ({len(chunks)} chunks)")


@pytest.mark.parametrize("how", ["4_chars", "16_chars"])
def test_bench_prose_streaming_floor(benchmark, file_median, how: str) -> None:
    """The do-nothing parser on prose: no Python stream can cost less than this."""
    chunks = _chunked(_prose_text(), how)
    assert benchmark(lambda: _consume(_FloorParser(), chunks)) == 0  # type: ignore[arg-type]
    file_median(f"prose:floor, no parsing, {how} ({len(chunks)} chunks)")
