"""OpenAICompatBackend over real HTTP against the scripted server (a test double),
including every recorded exchange of the shared corpus replayed byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.scripted_server import ScriptedServer, Turn, closed_port_url
from utp.backends import BackendError, BackendErrorKind, ChatRequest, OpenAICompatBackend, assemble_openai_chunks
from utp.backends.openai_compat import normalise_base_url

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT.parent / "shared" / "corpus" / "recorded_tool_exchanges.jsonl"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def request(stream: bool, **kw: Any) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], stream=stream, **kw)


def backend(url: str, **kw: Any) -> OpenAICompatBackend:
    kw.setdefault("backoff_s", 0.001)
    kw.setdefault("api_key", "")
    return OpenAICompatBackend(url, **kw)


# -- the recorded corpus ------------------------------------------------------------


def load_recordings() -> list[dict[str, Any]]:
    if not RECORDINGS.is_file():
        return []
    return [json.loads(line) for line in RECORDINGS.read_text(encoding="utf-8").splitlines() if line.strip()]


RECORDS = load_recordings()


def expected_from_chunks(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """What a careful reader of the stream expects, computed independently of the backend."""
    content = ""
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    usage = None
    for chunk in chunks:
        if chunk.get("usage") is not None:
            usage = chunk["usage"]
        for choice in chunk.get("choices", []):
            delta = choice.get("delta") or {}
            content += delta.get("content") or ""
            for fragment in delta.get("tool_calls") or []:
                slot = calls.setdefault(fragment["index"], {"id": None, "name": None, "arguments": ""})
                function = fragment.get("function") or {}
                if slot["id"] is None and fragment.get("id"):
                    slot["id"] = fragment["id"]
                if slot["name"] is None and function.get("name"):
                    slot["name"] = function["name"]
                slot["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason") is not None:
                finish = choice["finish_reason"]
    return {
        "content": content,
        "calls": [(calls[i]["id"], calls[i]["name"], calls[i]["arguments"]) for i in sorted(calls)],
        "finish_reason": finish,
        "usage": usage,
    }


def expected_from_completion(body: dict[str, Any]) -> dict[str, Any]:
    choice = body["choices"][0]
    message = choice["message"]
    return {
        "content": message.get("content") or "",
        "calls": [(c.get("id"), c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []],
        "finish_reason": choice.get("finish_reason"),
        "usage": body.get("usage"),
    }


def observed(raw: dict[str, Any]) -> dict[str, Any]:
    choice = raw["choices"][0]
    message = choice["message"]
    return {
        "content": message.get("content") or "",
        "calls": [(c.get("id"), c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []],
        "finish_reason": choice.get("finish_reason"),
        "usage": raw.get("usage"),
    }


def chunks_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    return record["response_chunks"]


def chat_request_from_recording(record: dict[str, Any]) -> ChatRequest:
    body = record["request"]
    options = {k: body[k] for k in ("temperature", "seed", "top_p", "stop") if k in body}
    if "max_tokens" in body:
        options["num_predict"] = body["max_tokens"]
    return ChatRequest(model=body["model"], messages=body["messages"], tools=body.get("tools"), options=options, stream=record["streaming"])


@pytest.mark.skipif(not RECORDS, reason=f"corpus not found at {RECORDINGS}")
@pytest.mark.anyio
async def test_every_recorded_exchange_reassembles_to_the_implied_message() -> None:
    turns: list[Turn] = []
    expectations: list[dict[str, Any] | None] = []
    for record in RECORDS:
        chunks = record["response_chunks"]
        if record["streaming"]:
            turns.append(Turn(raw_chunks=chunks))
            expectations.append(expected_from_chunks(chunks))
        elif chunks:
            assert len(chunks) == 1
            turns.append(Turn(raw_body=chunks[0]))
            expectations.append(expected_from_completion(chunks[0]))
        else:
            # one vLLM recording has an empty body: it implies no message, so
            # the only right answer is a classified error, not an empty reply
            turns.append(Turn(raw_body=""))
            expectations.append(None)
    checked = with_calls = empty = 0
    with ScriptedServer(turns) as srv:
        async with backend(srv.url) as client:
            for record, expected in zip(RECORDS, expectations):
                where = record["source"]["path"]
                if expected is None:
                    with pytest.raises(BackendError) as info:
                        await client.chat(chat_request_from_recording(record))
                    assert info.value.kind is BackendErrorKind.MALFORMED_STREAM, where
                    checked += 1
                    empty += 1
                    continue
                reply = await client.chat(chat_request_from_recording(record))
                assert observed(reply.raw) == expected, where
                assert reply.done_reason == (expected["finish_reason"] or "stop"), where
                assert reply.message["content"] == expected["content"], where
                usage = expected["usage"] or {}
                assert reply.counters.completion_tokens == usage.get("completion_tokens"), where
                assert reply.counters.prompt_tokens == usage.get("prompt_tokens"), where
                assert reply.counters.eval_ns is None and reply.counters.wall_s is not None
                if record["streaming"]:
                    assert reply.chunks == chunks_of(record), where  # every chunk arrived, JSON intact
                checked += 1
                with_calls += bool(expected["calls"])
    assert checked == len(RECORDS) == 78
    assert with_calls > 0 and empty == 1 and srv.remaining == 0
    # the recorded requests went out with the recorded messages and tools
    for record, body in zip(RECORDS, srv.chat_bodies):
        assert body["messages"] == record["request"]["messages"]
        assert body.get("tools") == record["request"].get("tools")


# -- synthetic streams --------------------------------------------------------------


@pytest.mark.anyio
async def test_fragmented_tool_calls_are_assembled_by_index() -> None:
    calls = [{"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "c"}, "id": "call_a"},
             {"name": "get_time", "arguments": {"tz": "Asia/Tokyo"}, "id": "call_b"}]
    turn = Turn(content="Checking.", thinking="need both", tool_calls=calls)
    with ScriptedServer([turn, turn], chunk_size=3) as srv:
        async with backend(srv.url) as client:
            streamed = await client.chat(request(True))
            whole = await client.chat(request(False))
    assert streamed.chunks and sum(1 for c in streamed.chunks if c["choices"] and c["choices"][0]["delta"].get("tool_calls")) > 4
    for reply in (streamed, whole):
        got = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in reply.message["tool_calls"]]
        assert got == [("call_a", "get_weather", calls[0]["arguments"]), ("call_b", "get_time", calls[1]["arguments"])]
        assert isinstance(reply.raw["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], str)
        assert reply.message["content"] == "Checking." and reply.message["thinking"] == "need both"
        assert reply.done_reason == "tool_calls"
    assert streamed.counters.ttft_s is not None and 0 < streamed.counters.ttft_s <= streamed.counters.wall_s
    assert streamed.counters.completion_tokens is not None  # usage chunk was requested and read


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_both_reasoning_keys_are_concatenated(key: str) -> None:
    chunks = [{"choices": [{"index": 0, "delta": {key: "a"}}]}, {"choices": [{"index": 0, "delta": {key: "b"}, "finish_reason": "stop"}]}]
    completion = assemble_openai_chunks(chunks)
    assert completion["choices"][0]["message"][key] == "ab"


def test_whole_calls_per_delta_like_ollama() -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c0", "type": "function", "function": {"name": "a", "arguments": "{\"x\":1}"}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "c1", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    calls = assemble_openai_chunks(chunks)["choices"][0]["message"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [("c0", "a", "{\"x\":1}"), ("c1", "b", "{}")]


@pytest.mark.anyio
async def test_request_mapping_and_auth_header() -> None:
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]},
        {"role": "tool", "tool_call_id": "c", "content": "1"},
    ]
    with ScriptedServer([Turn(content="ok"), Turn(content="ok")]) as srv:
        async with backend(srv.url + "/v1/", api_key="sk-test") as client:
            await client.chat(ChatRequest(model="m", messages=history, options={"temperature": 0.1, "seed": 7, "num_predict": 64, "top_p": 0.5, "stop": ["x"], "num_ctx": 8192}))
            await client.chat(request(True))
    body = srv.chat_bodies[0]
    assert (body["temperature"], body["seed"], body["max_tokens"], body["top_p"], body["stop"]) == (0.1, 7, 64, 0.5, ["x"])
    assert "num_ctx" not in body and "options" not in body and body["stream"] is False
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'  # /v1 wants a string
    assert srv.requests[0].path == "/v1/chat/completions"
    assert srv.requests[0].headers["Authorization"] == "Bearer sk-test"
    assert srv.chat_bodies[1]["stream_options"] == {"include_usage": True}


def test_api_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    client = OpenAICompatBackend("http://127.0.0.1:1")
    assert client._client.headers["Authorization"] == "Bearer sk-env"


@pytest.mark.parametrize(("given", "base"), [("http://h:1/v1", "http://h:1"), ("http://h:1/v1/", "http://h:1"), ("http://h:1", "http://h:1")])
def test_base_url_with_or_without_v1(given: str, base: str) -> None:
    assert normalise_base_url(given) == base


@pytest.mark.anyio
async def test_list_models() -> None:
    with ScriptedServer(models={"a": {}, "b": {}}) as srv:
        async with backend(srv.url) as client:
            assert await client.list_models() == ["a", "b"]
            info = await client.show("a")
    assert info.name == "a" and info.engine == "openai"


# -- errors ---------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("turn", "kind"),
    [
        (Turn.tools_unsupported("deepseek-r1:latest"), BackendErrorKind.TOOLS_UNSUPPORTED),
        (Turn.thinking_unsupported("m"), BackendErrorKind.THINKING_UNSUPPORTED),
        (Turn.model_not_found("m"), BackendErrorKind.MODEL_NOT_FOUND),
        (Turn.http_error(400, "invalid tool call arguments"), BackendErrorKind.BAD_REQUEST),
        (Turn.http_error(500, "boom"), BackendErrorKind.SERVER_ERROR),
    ],
)
async def test_openai_error_envelopes_are_classified(turn: Turn, kind: BackendErrorKind, stream: bool) -> None:
    with ScriptedServer([turn]) as srv:
        async with backend(srv.url) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(stream))
    assert info.value.kind is kind
    assert "/v1/chat/completions" in str(info.value) and turn.error in str(info.value)


@pytest.mark.anyio
async def test_api_error_type_on_400_still_means_tools_unsupported() -> None:
    body = {"error": {"message": "registry.ollama.ai/library/deepseek-r1:latest does not support tools", "type": "api_error"}}
    turn = Turn(status=400, error=body["error"]["message"])
    with ScriptedServer([turn]) as srv:
        async with backend(srv.url) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(False))
    assert info.value.kind is BackendErrorKind.TOOLS_UNSUPPORTED


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("turn", "kind"),
    [
        (Turn(content="abcdefgh", stream_error="upstream died", fault_after=2), BackendErrorKind.STREAM_ERROR),
        (Turn(content="abcdefgh", truncate=True, fault_after=2), BackendErrorKind.MALFORMED_STREAM),
        (Turn(content="abcdefgh", malformed=True, fault_after=2), BackendErrorKind.MALFORMED_STREAM),
        (Turn(content="abcdefgh", omit_done=True, include_usage=False), BackendErrorKind.MALFORMED_STREAM),
    ],
    ids=["error-event", "cut", "malformed", "no-finish"],
)
async def test_broken_sse_streams(turn: Turn, kind: BackendErrorKind) -> None:
    with ScriptedServer([turn, Turn(content="unused")]) as srv:
        async with backend(srv.url) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(True))
    assert info.value.kind is kind
    assert srv.remaining == 1  # never retried after chunks were consumed


@pytest.mark.anyio
async def test_503_retried_then_succeeds_and_refused_port_is_connect_error() -> None:
    with ScriptedServer([Turn.http_error(503, "overloaded"), Turn(content="ok")]) as srv:
        async with backend(srv.url, retries=2) as client:
            reply = await client.chat(request(True))
            assert client.last_attempts == 2
    assert reply.message["content"] == "ok"
    async with backend(closed_port_url(), retries=1) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(request(False))
    assert info.value.kind is BackendErrorKind.CONNECT_ERROR
