"""Shared fixtures for the parser tests: the real-output corpus and helpers."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.sweeps import single_cuts, sweep_stride

CORPUS_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
ANNOTATED = CORPUS_DIR / "annotated_outputs.jsonl"

#: families whose rendering between sentences is prose by design: read only as the whole answer
#: (keyword_command), or unmarked only where the calls end the answer (named_json)
WHOLE_ANSWER_ONLY = frozenset({"keyword_command", "named_json", "minimax_stripped"})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def load_annotated() -> list[dict[str, Any]]:
    """The annotated corpus records, or a skip naming the missing file."""
    if not ANNOTATED.is_file():
        pytest.skip(f"corpus not present: {ANNOTATED.resolve()} (expected ../shared/corpus relative to the project root)")
    with ANNOTATED.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def names_args(calls: Any) -> list[tuple[str, str]]:
    """Calls as sortable (name, canonical arguments) pairs, for order-insensitive comparison."""
    out = []
    for call in calls:
        if isinstance(call, dict):
            name, arguments = call["name"], call.get("arguments", {})
        else:
            name, arguments = call.name, call.arguments
        out.append((name, json.dumps(arguments, sort_keys=True)))
    return sorted(out)


def streamed(text: str, size: int) -> tuple[str, list[tuple[str, dict]]]:
    """Content and calls of ``text`` streamed in chunks of ``size`` characters."""
    from utp.parsers.streaming import CallReady, ContentDelta, stream_parse

    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    events, _ = stream_parse(chunks)
    content = "".join(e.text for e in events if isinstance(e, ContentDelta))
    return content, [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)]


def assert_stream_matches(text: str) -> None:
    """Streaming ``text`` in small and large chunks gives the one-shot content and calls."""
    from utp.parsers import parse_response

    parsed = parse_response(text)
    want = (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls])
    for size in (1, 2, 3, 7, 64):
        assert streamed(text, size) == want, (size, text)


def streamed_at_cuts(text: str, cuts: list[int], tools: Any = None) -> tuple[str, list[tuple[str, dict]]]:
    """Content and calls of ``text`` streamed in pieces cut at ``cuts`` (out-of-range cuts ignored)."""
    from utp.parsers.streaming import CallReady, ContentDelta, stream_parse

    bounds = sorted({c for c in cuts if 0 < c < len(text)})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)])]
    events, _ = stream_parse(chunks, tools=tools)
    content = "".join(e.text for e in events if isinstance(e, ContentDelta))
    return content, [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)]


def assert_every_cut_matches(text: str, tools: Any, step: int) -> None:
    """Cuts at one position, and at two positions ``step`` apart, stream to the one-shot content and calls.

    Cuts inside a trigger or a call are where a stream can go wrong (text shown
    that belongs to a call, a call announced early); every single position is
    tried, and pairs at a stride to keep the count quadratic only in ``len/step``
    (``make test-full``; ``make test`` tries every second single position and
    pairs at a wider stride).
    """
    from utp.parsers import parse_response

    parsed = parse_response(text, tools=tools)
    expected = (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls])
    stride = sweep_stride(step)
    for a in single_cuts(len(text)):
        assert streamed_at_cuts(text, [a], tools) == expected, a
        for b in range(a + 1, len(text), stride):
            assert streamed_at_cuts(text, [a, b], tools) == expected, (a, b)


def stream_cpu_time(text: str, tools: Any, size: int = 16) -> float:
    """CPU time to stream ``text`` in ``size``-character chunks: the fastest of three runs
    (other load on a shared machine only ever adds time)."""
    from utp.parsers.streaming import StreamParser

    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        parser = StreamParser(tools=tools)
        for chunk in chunks:
            parser.feed(chunk)
        parser.close()
        best = min(best, time.process_time() - start)
    return best


def assert_stream_matches_under(text: str, tools: Any, size: int) -> None:
    """Streaming ``text`` in ``size``-character chunks with ``tools`` offered gives the one-shot content and calls."""
    from utp.parsers import parse_response
    from utp.parsers.streaming import CallReady, ContentDelta, stream_parse

    one_shot = parse_response(text, tools=tools)
    events, _ = stream_parse([text[i : i + size] for i in range(0, len(text), size)], tools=tools)
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == one_shot.content
    assert [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)] == [(c.name, c.arguments) for c in one_shot.tool_calls]
