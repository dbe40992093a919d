"""The Qwen2.5-Coder models on the real engines (opt-in: ``make test-local`` / ``-m local``).

Embedded: the GGUF joined from its part packages loads, the template's tools
section renders the request's tools, and what the model wrote comes back in
``content`` (no parser in the stand-in). Server: ``llamacpp:`` starts a real
``llama-server --jinja`` on loopback, answers, and is stopped again.
"""

from __future__ import annotations

import importlib.util

import pytest

from utp.backends import ChatRequest, make_backend
from utp.backends.base import BackendError
from utp.backends.embedded import NO_TOOL_PARSER
from utp.backends.llama_server import LlamaServerBackend, LlamaServerTransport, ServerPool, server_binary
from utp.backends.models import LOCAL_MODELS

QWEN = ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",
                                             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]

pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed: run `make local-models`"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def gguf_or_skip(name: str) -> None:
    try:
        LOCAL_MODELS[name].loader()
    except BackendError as exc:
        pytest.skip(f"{name}: {exc}")


def weather_question(model: str, stream: bool = True) -> ChatRequest:
    return ChatRequest(model=model, messages=[{"role": "user", "content": "What's the weather in Paris?"}], tools=WEATHER,
                       options={"temperature": 0, "seed": 42, "num_predict": 64, "num_ctx": 2048}, stream=stream)


@pytest.mark.anyio
@pytest.mark.parametrize("name", QWEN)
async def test_embedded_qwen_renders_tools_and_leaves_calls_in_content(name: str) -> None:
    gguf_or_skip(name)
    backend, model = make_backend(f"local:{name}")
    async with backend:
        info = await backend.show(model)
        reply = await backend.chat(weather_question(model))
    assert info.digest == LOCAL_MODELS[name].sha256
    assert "tools" in info.capabilities and info.parser == NO_TOOL_PARSER
    assert "<tools>" in (info.template or "") and "<tool_call>" in (info.template or "")
    assert reply.message["tool_calls"] == []  # the stand-in parses nothing
    assert "get_weather" in reply.message["content"]  # the rendered tools reached the model: it names the tool
    assert reply.counters.completion_tokens and reply.counters.decode_tps and reply.counters.decode_tps > 0


@pytest.mark.anyio
async def test_llama_server_starts_answers_and_stops() -> None:
    name = "qwen2.5-coder-0.5b"
    gguf_or_skip(name)
    try:
        server_binary()
    except BackendError as exc:
        pytest.skip(str(exc))
    pool = ServerPool()
    spec = LOCAL_MODELS[name]
    backend = LlamaServerBackend(spec, transport=LlamaServerTransport(spec, n_ctx=2048, pool=pool))
    try:
        async with backend:
            info = await backend.show(name)
            reply = await backend.chat(weather_question(name, stream=False))
        server = pool.running()[0]
        assert info.engine == "llama-server" and "tools" in info.capabilities and info.digest == spec.sha256
        assert reply.message["content"] or reply.message["tool_calls"]
        assert reply.counters.eval_ns and reply.counters.decode_tps and reply.counters.decode_tps > 0  # the server's own timings
    finally:
        pool.stop_all()
    assert pool.running() == [] and server.process is None
