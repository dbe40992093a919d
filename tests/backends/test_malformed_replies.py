"""A server reply of the wrong shape is a classified backend error, never an exception.

JSON that parses but is not what the API defines (``{"message": "hello"}``,
``choices: [null]``, a streamed ``content`` that is a number) once reached code
that called ``.get`` on a string or joined a list, and the AttributeError or
TypeError escaped the loop, which promises to end with a termination, never an
exception, for anything a server did. Each shape here goes over real HTTP to
the scripted server (a TEST DOUBLE) and must come back as ``malformed_response``
naming the field that is wrong; the property at the end sends wrong shapes
through the real backends and the real ToolLoop over an httpx MockTransport.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.scripted_server import ScriptedServer, Turn
from utp.backends.base import BackendError, BackendErrorKind, ChatRequest
from utp.backends.ollama import OllamaBackend
from utp.backends.openai_compat import OpenAICompatBackend
from utp.formats import get_preset
from utp.loop import LoopLimits, Termination, ToolLoop
from utp.negotiator import negotiated_for
from utp.registry import ToolRegistry
from utp.types import Tool

pytestmark = pytest.mark.anyio

DONE = {"done": True, "done_reason": "stop"}
#: (what the wrong reply is, the Ollama /api/chat body, the field the error must name)
OLLAMA_REPLIES = [
    ("message is a string", {"message": "hello", **DONE}, "message"),
    ("message is a list", {"message": [{"role": "assistant", "content": "hi"}], **DONE}, "message"),
    ("content is a number", {"message": {"role": "assistant", "content": 5}, **DONE}, "message.content"),
    ("thinking is a list", {"message": {"role": "assistant", "content": "", "thinking": ["a"]}, **DONE}, "message.thinking"),
    ("tool_calls is a string", {"message": {"role": "assistant", "content": "", "tool_calls": "f()"}, **DONE}, "message.tool_calls"),
    ("done_reason is a number", {"message": {"role": "assistant", "content": "hi"}, "done": True, "done_reason": 3}, "done_reason"),
]
#: the same for /v1/chat/completions
OPENAI_REPLIES = [
    ("a choice is a string", {"choices": ["x"]}, "choices[0]"),
    ("a choice is null", {"choices": [None]}, "choices[0]"),
    ("message is a string", {"choices": [{"index": 0, "message": "x", "finish_reason": "stop"}]}, "choices[0].message"),
    ("usage is a string", {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}], "usage": "x"}, "usage"),
    ("content is an object", {"choices": [{"index": 0, "message": {"role": "assistant", "content": {"a": 1}}, "finish_reason": "stop"}]}, "choices[0].message.content"),
]
#: streamed: the chunks (the last one ends the stream as the API says) and the field
OLLAMA_STREAMS = [
    ("message is a string", [{"message": "hello", "done": False}, DONE], "message"),
    ("streamed content is a number", [{"message": {"role": "assistant", "content": 5}, "done": False}, DONE], "message.content"),
    ("streamed thinking is an object", [{"message": {"role": "assistant", "thinking": {"t": 1}}, "done": False}, DONE], "message.thinking"),
    ("streamed tool_calls is an object", [{"message": {"role": "assistant", "tool_calls": {"f": 1}}, "done": False}, DONE], "message.tool_calls"),
]
_END = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
OPENAI_STREAMS = [
    ("a choice is a string", [{"choices": ["x"]}, _END], "choices[0]"),
    ("a choice is null", [{"choices": [None]}, _END], "choices[0]"),
    ("delta is a string", [{"choices": [{"index": 0, "delta": "x"}]}, _END], "choices[0].delta"),
    ("usage is a string", [{"choices": [{"index": 0, "delta": {"content": "hi"}}], "usage": "x"}, _END], "usage"),
    ("streamed content is a number", [{"choices": [{"index": 0, "delta": {"content": 5}}]}, _END], "choices[0].delta.content"),
    ("arguments fragment is an object", [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": {"a": 1}}}]}}]}, _END],
     "choices[0].delta.tool_calls[0].function.arguments"),
]


def _backend(kind: str, url: str) -> OllamaBackend | OpenAICompatBackend:
    return OllamaBackend(url, retries=0) if kind == "ollama" else OpenAICompatBackend(url, retries=0)


async def _chat(kind: str, turn: Turn, stream: bool) -> BackendError:
    with ScriptedServer([turn]) as srv:
        backend = _backend(kind, srv.url)
        try:
            with pytest.raises(BackendError) as caught:
                await backend.chat(ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], stream=stream))
        finally:
            await backend.aclose()
    return caught.value


def _cases(kind: str, rows: list[tuple[str, Any, str]], stream: bool) -> list[Any]:
    return [pytest.param(kind, body, field, stream, id=f"{kind}-{'stream' if stream else 'reply'}: {what}") for what, body, field in rows]


@pytest.mark.parametrize(
    ("kind", "body", "field", "stream"),
    _cases("ollama", OLLAMA_REPLIES, False) + _cases("openai", OPENAI_REPLIES, False)
    + _cases("ollama", OLLAMA_STREAMS, True) + _cases("openai", OPENAI_STREAMS, True),
)
async def test_a_wrong_shaped_reply_is_a_malformed_response_naming_the_field(kind: str, body: Any, field: str, stream: bool) -> None:
    turn = Turn(raw_chunks=body) if stream else Turn(raw_body=json.dumps(body))
    error = await _chat(kind, turn, stream)
    assert error.kind is BackendErrorKind.MALFORMED_RESPONSE, str(error)
    assert f"{field} is " in str(error) and "expected" in str(error), str(error)


# --- the property: nothing a server sends escapes the loop -----------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.integers(4301, 4400).map(lambda d: 10**d) | st.floats(allow_nan=False) | st.text(max_size=8)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
OLLAMA_KEYS = ["message", "role", "content", "thinking", "tool_calls", "function", "name", "arguments", "done", "done_reason", "eval_count"]
OPENAI_KEYS = ["choices", "index", "message", "delta", "role", "content", "reasoning_content", "tool_calls", "function", "name", "arguments", "id",
               "finish_reason", "usage", "prompt_tokens"]


def _shaped(keys: list[str]) -> st.SearchStrategy[Any]:
    """JSON built from the API's own field names with values of any type: mostly almost-right replies."""
    return st.recursive(
        JSON_SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(keys), inner, max_size=4),
        max_leaves=12,
    ) | JSON_VALUES


def _reply_transport(kind: str, replies: list[Any], stream: bool) -> httpx.MockTransport:
    """TEST DOUBLE server: answers every chat with the given JSON (as a body, or as the stream's chunks)."""

    def answer(request: httpx.Request) -> httpx.Response:
        if not stream:
            return httpx.Response(200, content=json.dumps(replies[0]).encode() if not isinstance(replies[0], bytes) else replies[0],
                                  headers={"content-type": "application/json"})
        if kind == "ollama":
            lines = "".join(json.dumps(r) + "\n" for r in replies)
            return httpx.Response(200, content=lines.encode(), headers={"content-type": "application/x-ndjson"})
        events = "".join(f"data: {json.dumps(r)}\n\n" for r in replies) + "data: [DONE]\n\n"
        return httpx.Response(200, content=events.encode(), headers={"content-type": "text/event-stream"})

    return httpx.MockTransport(answer)


def _dumpable(value: Any) -> bool:
    try:
        json.dumps(value)
    except ValueError:
        return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["ollama", "openai"]), stream=st.booleans(), data=st.data())
def test_no_server_reply_shape_escapes_the_loop(kind: str, stream: bool, data: st.DataObject) -> None:
    import anyio

    keys = OLLAMA_KEYS if kind == "ollama" else OPENAI_KEYS
    replies = data.draw(st.lists(_shaped(keys), min_size=1, max_size=3).filter(lambda rs: all(_dumpable(r) for r in rs)), label="replies")

    async def run() -> Any:
        transport = _reply_transport(kind, replies, stream)
        backend = (OllamaBackend("http://server.test", transport=transport, retries=0) if kind == "ollama"
                   else OpenAICompatBackend("http://server.test", transport=transport, retries=0))
        registry = ToolRegistry()
        registry.register(Tool("f", "A tool.", {"type": "object", "properties": {"a": {"type": "integer"}}}), lambda **kw: "ok")
        preset = get_preset("native" if kind == "ollama" else "native-openai")
        loop = ToolLoop(backend, registry, negotiated_for(preset), "m", {}, LoopLimits(max_rounds=2), stream=stream)
        try:
            return await loop.run("hi")
        finally:
            await backend.aclose()

    result = anyio.run(run)
    assert isinstance(result.termination, Termination)
    json.dumps(result.to_dict())
