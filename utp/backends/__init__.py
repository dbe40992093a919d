"""Model backends: Ollama's API, OpenAI-compatible servers, and llama.cpp in-process.

``make_backend("ollama:qwen3:8b")`` / ``make_backend("openai:gpt-x")`` /
``make_backend("local:smollm2-135m")`` / ``make_backend("llamacpp:qwen2.5-coder-0.5b")`` returns ``(backend, model_name)``.
The scheme is looked up in :data:`BACKEND_FACTORIES`, so a new kind of server
is one entry, not another branch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from utp.backends.base import (
    BackendError,
    BackendErrorKind,
    BackendResponse,
    ChatBackend,
    ChatRequest,
    Counters,
    ModelInfo,
)
from utp.backends.embedded import EmbeddedOllamaTransport
from utp.backends.llama_server import LlamaServerBackend, LlamaServerTransport
from utp.backends.http import RetryPolicy, resolve_ollama_host
from utp.backends.models import LOCAL_MODELS, LocalModel, file_sha256, get_local_model
from utp.backends.ollama import OllamaBackend, merge_ollama_chunks
from utp.backends.openai_compat import OpenAICompatBackend, assemble_openai_chunks

EMBEDDED_BASE_URL = "http://embedded.local"

BackendFactory = Callable[..., tuple[Any, str]]


def _ollama(model: str, host: str | None, transport: httpx.AsyncBaseTransport | None, **kw: Any) -> tuple[Any, str]:
    return OllamaBackend(host, transport=transport, **kw), model


def _openai(model: str, host: str | None, transport: httpx.AsyncBaseTransport | None, **kw: Any) -> tuple[Any, str]:
    return OpenAICompatBackend(host, transport=transport, **kw), model


def _local(model: str, host: str | None, transport: httpx.AsyncBaseTransport | None, **kw: Any) -> tuple[Any, str]:
    """The embedded model under the Ollama client. A given ``transport`` (a
    cassette recorder or replayer) is used instead of a fresh embedded one:
    replay must not need llama.cpp at all."""
    spec = get_local_model(model)
    n_threads = kw.pop("n_threads", None)
    transport = transport or EmbeddedOllamaTransport(spec, n_threads=n_threads)
    return OllamaBackend(EMBEDDED_BASE_URL, transport=transport, kind="embedded", **kw), spec.name


def _llamacpp(model: str, host: str | None, transport: httpx.AsyncBaseTransport | None, **kw: Any) -> tuple[Any, str]:
    """An embedded model's GGUF behind a real ``llama-server --jinja`` (OpenAI API) that UTP starts
    on first use; a given ``transport`` (a cassette) is used instead, so replay needs no server."""
    spec = get_local_model(model)
    n_threads = kw.pop("n_threads", None)
    n_ctx = kw.pop("n_ctx", None) or 4096
    transport = transport or LlamaServerTransport(spec, n_threads=n_threads, n_ctx=n_ctx)
    return LlamaServerBackend(spec, transport=transport, **kw), spec.name


BACKEND_FACTORIES: dict[str, BackendFactory] = {
    "ollama": _ollama,
    "openai": _openai,
    "local": _local,
    "llamacpp": _llamacpp,
}

#: Schemes whose model runs under UTP's control (in-process, or a server UTP starts):
#: the transport that reaches it, given the run's ``num_thread`` and ``num_ctx``.
ManagedTransportFactory = Callable[[str, int | None, int | None], httpx.AsyncBaseTransport]
MANAGED_TRANSPORTS: dict[str, ManagedTransportFactory] = {
    "local": lambda name, threads, ctx: EmbeddedOllamaTransport(name),
    "llamacpp": lambda name, threads, ctx: LlamaServerTransport(name, n_threads=threads, n_ctx=ctx or 4096),
}


def managed_transport(spec: str, n_threads: int | None = None, n_ctx: int | None = None) -> httpx.AsyncBaseTransport | None:
    """The transport to a model UTP runs itself (``local:``, ``llamacpp:``); None for a server named by URL."""
    scheme, model = split_spec(spec)
    factory = MANAGED_TRANSPORTS.get(scheme)
    return factory(model, n_threads, n_ctx) if factory else None


def split_spec(spec: str) -> tuple[str, str]:
    """``"scheme:model"`` -> (scheme, model); a plain name (``qwen3:8b``) is Ollama's."""
    spec = spec.strip()
    scheme, sep, rest = spec.partition(":")
    if sep and scheme in BACKEND_FACTORIES:
        if not rest:
            raise ValueError(f"model spec {spec!r}: nothing after {scheme!r}: (expected e.g. {scheme}:MODEL)")
        return scheme, rest
    if not spec:
        raise ValueError("empty model spec (expected MODEL, ollama:MODEL, openai:MODEL or local:NAME)")
    return "ollama", spec


def make_backend(spec: str, host: str | None = None, transport: httpx.AsyncBaseTransport | None = None, **kw: Any) -> tuple[Any, str]:
    """A backend for ``spec`` and the model name to put in its requests.

    ``host`` is the server URL (Ollama: anything ``OLLAMA_HOST`` accepts);
    ``kw`` goes to the backend (``timeout``, ``retries``, ``backoff_s``,
    ``api_key`` for OpenAI, ``n_threads`` for local models).
    """
    scheme, model = split_spec(spec)
    return BACKEND_FACTORIES[scheme](model, host, transport, **kw)


__all__ = [
    "BACKEND_FACTORIES",
    "EMBEDDED_BASE_URL",
    "LOCAL_MODELS",
    "BackendError",
    "BackendErrorKind",
    "BackendResponse",
    "ChatBackend",
    "ChatRequest",
    "Counters",
    "EmbeddedOllamaTransport",
    "LlamaServerBackend",
    "LlamaServerTransport",
    "LocalModel",
    "ModelInfo",
    "OllamaBackend",
    "OpenAICompatBackend",
    "RetryPolicy",
    "assemble_openai_chunks",
    "file_sha256",
    "get_local_model",
    "make_backend",
    "managed_transport",
    "merge_ollama_chunks",
    "resolve_ollama_host",
    "split_spec",
]
