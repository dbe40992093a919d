"""OllamaBackend over real HTTP against the scripted server (a test double)."""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.scripted_server import ModelCard, ScriptedServer, Turn, closed_port_url, turn_from_callable
from utp.backends import BackendError, BackendErrorKind, ChatRequest, Counters, OllamaBackend, merge_ollama_chunks, resolve_ollama_host
from utp.backends.ollama import counters_from_ollama


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def request(stream: bool, **kw) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], stream=stream, **kw)


def backend(url: str, **kw) -> OllamaBackend:
    kw.setdefault("backoff_s", 0.001)
    return OllamaBackend(url, **kw)


CALL = {"name": "get_weather", "arguments": {"city": "Tokyo", "days": 2}}


# -- happy paths ----------------------------------------------------------------


@pytest.mark.anyio
async def test_streaming_merges_chunks_like_ollama_non_streaming() -> None:
    turn = Turn(content="The weather is fine.", thinking="Let me think.", tool_calls=[CALL, {"name": "b", "arguments": {}}])
    with ScriptedServer([turn, turn], chunk_size=3) as srv:
        async with backend(srv.url) as client:
            streamed = await client.chat(request(True))
            whole = await client.chat(request(False))
    assert streamed.chunks is not None and len(streamed.chunks) > 5  # content really came in pieces
    assert streamed.message["content"] == "The weather is fine." == whole.message["content"]
    assert streamed.message["thinking"] == "Let me think." == whole.message["thinking"]
    names = [c["function"]["name"] for c in streamed.message["tool_calls"]]
    assert names == ["get_weather", "b"]
    assert streamed.raw["message"]["tool_calls"] == whole.raw["message"]["tool_calls"]
    assert streamed.raw["done"] is True and streamed.done_reason == "stop"
    assert streamed.counters.completion_tokens == streamed.chunks[-1]["eval_count"]
    assert whole.chunks is None


@pytest.mark.anyio
async def test_request_body_carries_only_set_fields() -> None:
    with ScriptedServer([Turn(content="ok")]) as srv:
        async with backend(srv.url) as client:
            tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
            await client.chat(request(False, tools=tools, options={"temperature": 0, "num_ctx": 2048}, think=False, keep_alive="5m"))
    body = srv.chat_bodies[0]
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": False,
        "tools": tools,
        "options": {"temperature": 0, "num_ctx": 2048},
        "think": False,
        "keep_alive": "5m",
    }
    with ScriptedServer([Turn(content="ok")]) as srv:
        async with backend(srv.url) as client:
            await client.chat(request(True))
    assert set(srv.chat_bodies[0]) == {"model", "messages", "stream"}


@pytest.mark.anyio
async def test_counters_come_from_the_final_chunk_and_ttft_is_measured_live() -> None:
    counters = {"eval_count": 40, "eval_duration": 2_000_000_000, "prompt_eval_count": 100, "prompt_eval_duration": 500_000_000,
                "load_duration": 7, "total_duration": 3_000_000_000}
    with ScriptedServer([Turn(content="abcdefgh", counters=counters)], chunk_delay_s=0.01) as srv:
        async with backend(srv.url) as client:
            reply = await client.chat(request(True))
    c = reply.counters
    assert (c.completion_tokens, c.eval_ns, c.prompt_tokens, c.prompt_eval_ns, c.load_ns, c.total_ns) == (
        40, 2_000_000_000, 100, 500_000_000, 7, 3_000_000_000)
    assert c.decode_tps == pytest.approx(20.0)
    assert c.prompt_tps == pytest.approx(200.0)
    assert c.ttft_s is not None and c.wall_s is not None and 0 < c.ttft_s <= c.wall_s


@given(
    eval_count=st.integers(min_value=1, max_value=10**6),
    eval_ns=st.integers(min_value=1, max_value=10**13),
)
def test_decode_tps_is_eval_count_over_eval_duration(eval_count: int, eval_ns: int) -> None:
    counters = counters_from_ollama({"eval_count": eval_count, "eval_duration": eval_ns})
    assert counters.decode_tps == pytest.approx(eval_count / eval_ns * 1e9)
    assert Counters.from_dict(counters.to_dict()) == counters


def test_missing_counters_stay_none() -> None:
    counters = counters_from_ollama({"done": True})
    assert counters.completion_tokens is None and counters.decode_tps is None and counters.prompt_tps is None


def test_merge_appends_tool_calls_across_chunks() -> None:
    chunks = [
        {"message": {"role": "assistant", "content": "a"}, "done": False},
        {"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "x", "arguments": {}}}]}, "done": False},
        {"message": {"role": "assistant", "content": "b", "tool_calls": [{"function": {"name": "y", "arguments": {"k": 1}}}]}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "length", "eval_count": 3},
    ]
    merged = merge_ollama_chunks(chunks)
    assert merged["message"]["content"] == "ab"
    assert [c["function"]["name"] for c in merged["message"]["tool_calls"]] == ["x", "y"]
    assert merged["done_reason"] == "length" and merged["eval_count"] == 3
    assert "thinking" not in merged["message"]


@pytest.mark.anyio
async def test_stream_chat_yields_raw_chunks_in_order() -> None:
    with ScriptedServer([Turn(content="abcdefgh")], chunk_size=2) as srv:
        async with backend(srv.url) as client:
            chunks = [c async for c in client.stream_chat(request(False))]
    assert "".join(c["message"]["content"] for c in chunks) == "abcdefgh"
    assert chunks[-1]["done"] is True and all(not c["done"] for c in chunks[:-1])
    assert srv.chat_bodies[0]["stream"] is True


@pytest.mark.anyio
async def test_turn_from_callable_sees_the_request() -> None:
    def answer(body: dict) -> Turn:
        return Turn(content=f"you sent {len(body['messages'])} message(s)")

    with ScriptedServer([turn_from_callable(answer)]) as srv:
        async with backend(srv.url) as client:
            reply = await client.chat(request(False))
    assert reply.message["content"] == "you sent 1 message(s)"


@pytest.mark.anyio
async def test_show_combines_show_tags_and_version() -> None:
    card = ModelCard(capabilities=["completion", "tools", "thinking"], template="TPL {{ .Tools }}", parser="qwen3", digest="ab" * 32)
    with ScriptedServer(models={"qwen3:8b": card, "other:latest": ModelCard()}, version="0.12.10") as srv:
        async with backend(srv.url) as client:
            info = await client.show("qwen3:8b")
            models = await client.list_models()
            running = await client.ps()
            version = await client.version()
    assert info.digest == "ab" * 32
    assert info.capabilities == ["completion", "tools", "thinking"] and info.supports_tools is True
    assert (info.template, info.parser, info.engine, info.engine_version) == ("TPL {{ .Tools }}", "qwen3", "ollama", "0.12.10")
    assert info.details["format"] == "gguf"
    assert models == ["qwen3:8b", "other:latest"]
    assert {m["name"] for m in running} == {"qwen3:8b", "other:latest"}
    assert version == "0.12.10"


@pytest.mark.anyio
async def test_show_matches_bare_name_to_latest_tag() -> None:
    with ScriptedServer(models={"llama3.2:latest": ModelCard(digest="cd" * 32)}) as srv:
        async with backend(srv.url) as client:
            info = await client.show("llama3.2")
    assert info.digest == "cd" * 32


# -- errors ---------------------------------------------------------------------


ERROR_CASES = [
    (Turn.tools_unsupported("dolphin-mistral:latest"), BackendErrorKind.TOOLS_UNSUPPORTED, 400),
    (Turn.http_error(400, "registry.ollama.ai/library/x:latest does not support completion\ntools"), BackendErrorKind.TOOLS_UNSUPPORTED, 400),
    (Turn.thinking_unsupported("gemma3:1b"), BackendErrorKind.THINKING_UNSUPPORTED, 400),
    (Turn.model_not_found("nope"), BackendErrorKind.MODEL_NOT_FOUND, 404),
    (Turn.http_error(400, 'invalid think value: "x"'), BackendErrorKind.BAD_REQUEST, 400),
    (Turn.http_error(500, "unexpected end of JSON input"), BackendErrorKind.SERVER_ERROR, 500),
]


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(("turn", "kind", "status"), ERROR_CASES)
async def test_http_errors_are_classified(turn: Turn, kind: BackendErrorKind, status: int, stream: bool) -> None:
    with ScriptedServer([turn]) as srv:
        async with backend(srv.url) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(stream))
    assert info.value.kind is kind and info.value.status == status
    assert srv.url in str(info.value) and "'m'" in str(info.value)  # says where: URL and model
    assert len(srv.chat_bodies) == 1  # not retried


@pytest.mark.anyio
@pytest.mark.parametrize("key", ["error", "error parsing tool call"])
async def test_error_line_mid_stream_is_a_stream_error(key: str) -> None:
    turn = Turn(content="abcdefghijkl", stream_error="XML syntax error on line 7", stream_error_key=key, fault_after=2)
    with ScriptedServer([turn]) as srv:
        async with backend(srv.url) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(True))
    assert info.value.kind is BackendErrorKind.STREAM_ERROR
    assert "XML syntax error on line 7" in str(info.value) and "chunk 2" in str(info.value)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("turn", "fragment"),
    [
        (Turn(content="abcdefghijkl", truncate=True, fault_after=2), "after 2 chunk"),
        (Turn(content="abcdefghijkl", omit_done=True), "without a done:true"),
        (Turn(content="abcdefghijkl", malformed=True, fault_after=1), "chunk 1 is not JSON"),
    ],
    ids=["cut-mid-line", "no-done", "malformed-line"],
)
async def test_broken_streams_are_malformed(turn: Turn, fragment: str) -> None:
    with ScriptedServer([turn, Turn(content="unused")]) as srv:
        async with backend(srv.url) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(True))
    assert info.value.kind is BackendErrorKind.MALFORMED_STREAM
    assert fragment in str(info.value)
    assert srv.remaining == 1  # a half-consumed stream is never retried


@pytest.mark.anyio
async def test_error_object_in_non_streaming_reply() -> None:
    with ScriptedServer([Turn(raw_body={"error": "boom"})]) as srv:
        async with backend(srv.url) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(False))
    assert info.value.kind is BackendErrorKind.STREAM_ERROR


@pytest.mark.anyio
@pytest.mark.parametrize("status", [503, 502, 429])
async def test_transient_status_is_retried_then_succeeds(status: int) -> None:
    with ScriptedServer([Turn.http_error(status, "busy"), Turn.http_error(status, "busy"), Turn(content="done")]) as srv:
        async with backend(srv.url, retries=2) as client:
            reply = await client.chat(request(True))
            attempts = client.last_attempts
    assert reply.message["content"] == "done"
    assert attempts == 3 and len(srv.chat_bodies) == 3


@pytest.mark.anyio
async def test_retries_give_up_with_the_last_error() -> None:
    with ScriptedServer([Turn.http_error(503, "queue full")] * 3) as srv:
        async with backend(srv.url, retries=1) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(False))
    assert info.value.kind is BackendErrorKind.SERVER_ERROR and info.value.transient
    assert "after 2 attempts" in str(info.value)
    assert srv.remaining == 1


@pytest.mark.anyio
async def test_bad_request_is_not_retried() -> None:
    with ScriptedServer([Turn.http_error(400, "missing request body"), Turn(content="unused")]) as srv:
        async with backend(srv.url, retries=3) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(False))
    assert info.value.kind is BackendErrorKind.BAD_REQUEST
    assert len(srv.chat_bodies) == 1


@pytest.mark.anyio
async def test_connection_refused_is_connect_error_after_retries() -> None:
    url = closed_port_url()
    async with backend(url, retries=2) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(request(False))
        assert client.last_attempts == 3
    assert info.value.kind is BackendErrorKind.CONNECT_ERROR and url in str(info.value)


@pytest.mark.anyio
async def test_slow_server_is_a_timeout() -> None:
    with ScriptedServer([Turn(content="late", delay_s=2.0)]) as srv:
        async with backend(srv.url, timeout=0.2, retries=0) as client:
            with pytest.raises(BackendError) as info:
                await client.chat(request(True))
    assert info.value.kind is BackendErrorKind.TIMEOUT


@pytest.mark.anyio
async def test_timeout_is_retried_before_any_chunk() -> None:
    with ScriptedServer([Turn(content="late", delay_s=2.0), Turn(content="on time")]) as srv:
        async with backend(srv.url, timeout=0.3, retries=1) as client:
            reply = await client.chat(request(True))
    assert reply.message["content"] == "on time"


# -- OLLAMA_HOST ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "url"),
    [
        (None, "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:8080", "http://127.0.0.1:8080"),
        ("example.com", "http://example.com:11434"),
        ("example.com:1234", "http://example.com:1234"),
        ("http://example.com", "http://example.com:80"),
        ("https://example.com", "https://example.com:443"),
        ("http://10.0.0.2:11434/", "http://10.0.0.2:11434"),
        ("https://proxy.local/ollama/", "https://proxy.local:443/ollama"),
        ('"localhost:9999"', "http://localhost:9999"),
        ("[::1]:5000", "http://[::1]:5000"),
    ],
)
def test_ollama_host_parsing(value: str | None, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert resolve_ollama_host(value) == url


def test_ollama_host_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:7777")
    assert OllamaBackend().base_url == "http://127.0.0.1:7777"
    assert OllamaBackend("myhost").base_url == "http://myhost:11434"


def test_ollama_host_with_bad_port_names_the_value() -> None:
    with pytest.raises(ValueError, match="port is not a number"):
        resolve_ollama_host("host:abc")


@pytest.mark.anyio
async def test_custom_transport_is_used() -> None:
    seen: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.url.path)
        return httpx.Response(200, json={"model": "m", "message": {"role": "assistant", "content": "via transport"}, "done": True})

    async with OllamaBackend("http://nowhere.invalid", transport=httpx.MockTransport(handler)) as client:
        reply = await client.chat(request(False))
    assert reply.message["content"] == "via transport" and seen == ["/api/chat"]
    assert json.loads(json.dumps(reply.raw))["done"] is True
