"""Model backends: Ollama's API, OpenAI-compatible servers, and llama.cpp in-process.

``make_backend("ollama:qwen3:8b")`` / ``make_backend("openai:gpt-x")`` /
``make_backend("local:smollm2-135m")`` returns ``(backend, model_name)``.
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


BACKEND_FACTORIES: dict[str, BackendFactory] = {
    "ollama": _ollama,
    "openai": _openai,
    "local": _local,
}


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
    "LocalModel",
    "ModelInfo",
    "OllamaBackend",
    "OpenAICompatBackend",
    "RetryPolicy",
    "assemble_openai_chunks",
    "file_sha256",
    "get_local_model",
    "make_backend",
    "merge_ollama_chunks",
    "resolve_ollama_host",
    "split_spec",
]
