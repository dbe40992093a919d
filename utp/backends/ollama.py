"""Ollama's native ``/api/chat``: the backend that sees the server's own timings.

Throughput in reports must be the server's measurement (``eval_count`` over
``eval_duration``), so this backend keeps Ollama's counters verbatim and adds
only what a client alone can know: wall time and time to first token.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from utp.backends.base import BackendResponse, ChatRequest, Counters, ModelInfo
from utp.backends.errors import classify_exception, error_message_from_payload, malformed_stream, stream_error
from utp.backends.shapes import OLLAMA_CHUNK, check_shape
from utp.backends.http import HttpClientBase, collect_stream, decode_stream_object, resolve_ollama_host

#: Ollama final-chunk field -> Counters field.
OLLAMA_COUNTER_FIELDS: dict[str, str] = {
    "prompt_eval_count": "prompt_tokens",
    "eval_count": "completion_tokens",
    "prompt_eval_duration": "prompt_eval_ns",
    "eval_duration": "eval_ns",
    "load_duration": "load_ns",
    "total_duration": "total_ns",
}


def counters_from_ollama(final: dict[str, Any], *, wall_s: float | None = None, ttft_s: float | None = None) -> Counters:
    """Counters from a ``done:true`` object (missing fields stay None: Ollama omits zeros)."""
    values = {ours: final.get(theirs) for theirs, ours in OLLAMA_COUNTER_FIELDS.items()}
    return Counters(**{k: int(v) if isinstance(v, (int, float)) else None for k, v in values.items()}, wall_s=wall_s, ttft_s=ttft_s)


def chunk_has_output(chunk: dict[str, Any]) -> bool:
    """Whether a chunk carries anything the model generated (for ttft)."""
    message = chunk.get("message") or {}
    return bool(message.get("content") or message.get("thinking") or message.get("tool_calls"))


@dataclass
class OllamaChunkMerger:
    """Folds streamed ``/api/chat`` chunks into the non-streaming reply.

    Mirrors Ollama's own ``stream:false`` path: content and thinking are
    concatenated, every chunk's ``tool_calls`` appended, and the top level
    (done_reason, counters) taken from the final chunk.
    """

    content: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] | None = None
    role: str = "assistant"

    def add(self, chunk: dict[str, Any]) -> None:
        message = chunk.get("message") or {}
        self.role = message.get("role") or self.role
        if message.get("content"):
            self.content.append(message["content"])
        if message.get("thinking"):
            self.thinking.append(message["thinking"])
        self.tool_calls.extend(message.get("tool_calls") or [])
        if chunk.get("done"):
            self.final = chunk

    def merged(self) -> dict[str, Any]:
        base = dict(self.final or {})
        message: dict[str, Any] = {"role": self.role, "content": "".join(self.content)}
        if self.thinking:
            message["thinking"] = "".join(self.thinking)
        if self.tool_calls:
            message["tool_calls"] = list(self.tool_calls)
        base["message"] = message
        return base


def normalised_message(raw: dict[str, Any]) -> dict[str, Any]:
    message = raw.get("message") or {}
    return {
        "role": message.get("role") or "assistant",
        "content": message.get("content") or "",
        "thinking": message.get("thinking") or "",
        "tool_calls": list(message.get("tool_calls") or []),
    }


def merge_ollama_chunks(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming ``/api/chat`` object equivalent to ``chunks``."""
    merger = OllamaChunkMerger()
    for chunk in chunks:
        merger.add(chunk)
    return merger.merged()


def _model_names_match(wanted: str, listed: str) -> bool:
    """Ollama lists ``name:tag``; a bare name means ``:latest``."""
    def norm(name: str) -> str:
        return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"

    return norm(wanted) == norm(listed)


class OllamaBackend(HttpClientBase):
    """Client for Ollama's native API (also for anything that speaks it, e.g. the embedded transport)."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | httpx.Timeout = 300.0,
        retries: int = 2,
        backoff_s: float = 0.25,
        kind: str | None = None,
    ) -> None:
        url = base_url if base_url and base_url.startswith(("http://", "https://")) else resolve_ollama_host(base_url)
        super().__init__(url, transport=transport, timeout=timeout, retries=retries, backoff_s=backoff_s)
        #: "ollama", or "embedded" when a transport answers in-process
        self.kind = kind or getattr(transport, "backend_kind", None) or "ollama"

    # -- chat ---------------------------------------------------------------------

    @staticmethod
    def payload(request: ChatRequest) -> dict[str, Any]:
        """The ``/api/chat`` body: only the fields that were set, so server defaults apply."""
        body: dict[str, Any] = {"model": request.model, "messages": request.messages, "stream": bool(request.stream)}
        if request.tools is not None:
            body["tools"] = request.tools
        if request.options:
            body["options"] = dict(request.options)
        if request.think is not None:
            body["think"] = request.think
        if request.keep_alive is not None:
            body["keep_alive"] = request.keep_alive
        if request.response_schema is not None:
            body["format"] = request.response_schema  # Ollama takes the JSON Schema itself
        return body

    async def chat(self, request: ChatRequest) -> BackendResponse:
        if request.stream:
            return await self._chat_streaming(request)
        started = time.perf_counter()
        raw = await self._post_json("/api/chat", self.payload(request), model=request.model)
        wall = time.perf_counter() - started
        where = self.where("POST", "/api/chat", request.model)
        if not isinstance(raw, dict):
            raise malformed_stream(f"expected a JSON object, got {type(raw).__name__}", where=where)
        message = error_message_from_payload(raw)
        if message is not None:
            raise stream_error(message, where=where, chunk_index=0)
        check_shape(raw, OLLAMA_CHUNK, where=where)
        return BackendResponse(
            raw=raw,
            message=normalised_message(raw),
            done_reason=raw.get("done_reason") or "stop",
            counters=counters_from_ollama(raw, wall_s=wall),
        )

    async def _chat_streaming(self, request: ChatRequest) -> BackendResponse:
        merger = OllamaChunkMerger()
        collected = await collect_stream(self.stream_chat(request), chunk_has_output, merger.add)
        raw = merger.merged()
        return BackendResponse(
            raw=raw,
            message=normalised_message(raw),
            done_reason=raw.get("done_reason") or "stop",
            counters=counters_from_ollama(raw, wall_s=collected.wall_s, ttft_s=collected.ttft_s),
            chunks=collected.chunks,
        )

    async def stream_chat(self, request: ChatRequest) -> AsyncIterator[dict[str, Any]]:
        """Raw NDJSON chunks; raises BackendError on an error line or a broken stream."""
        body = self.payload(request)
        body["stream"] = True
        where = self.where("POST", "/api/chat", request.model)
        response = await self._send("POST", "/api/chat", json=body, model=request.model, stream=True)
        index = 0
        done = False
        try:
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                chunk = decode_stream_object(line, index, where, "stream chunk")
                check_shape(chunk, OLLAMA_CHUNK, where=where, what=f"stream chunk {index}")
                index += 1
                yield chunk
                if chunk.get("done"):
                    done = True
                    break
        except httpx.HTTPError as exc:
            error = classify_exception(exc, where=where)
            error.args = (f"{error.args[0]} after {index} chunk(s)",)
            raise error from None
        finally:
            await response.aclose()
        if not done:
            raise malformed_stream(f"stream ended after {index} chunk(s) without a done:true chunk (truncated)", where=where)

    # -- discovery ----------------------------------------------------------------

    async def version(self) -> str:
        body = await self._get_json("/api/version")
        return str((body or {}).get("version", "")) if isinstance(body, dict) else ""

    async def tags(self) -> list[dict[str, Any]]:
        body = await self._get_json("/api/tags")
        models = body.get("models") if isinstance(body, dict) else None
        return [m for m in models or [] if isinstance(m, dict)]

    async def list_models(self) -> list[str]:
        return [str(m.get("name") or m.get("model")) for m in await self.tags()]

    async def ps(self) -> list[dict[str, Any]]:
        body = await self._get_json("/api/ps")
        models = body.get("models") if isinstance(body, dict) else None
        return [m for m in models or [] if isinstance(m, dict)]

    async def show(self, model: str) -> ModelInfo:
        """Model provenance: /api/show for what it is, /api/tags for its digest
        (/api/show has none), /api/version for the engine."""
        shown = await self._post_json("/api/show", {"model": model}, model=model)
        if not isinstance(shown, dict):
            shown = {}
        digest = None
        for entry in await self.tags():
            if _model_names_match(model, str(entry.get("name") or entry.get("model") or "")):
                digest = entry.get("digest")
                break
        version = await self.version()
        engine = "embedded" if version.startswith("embedded-") else self.kind
        return ModelInfo(
            name=model,
            digest=digest,
            capabilities=list(shown.get("capabilities") or []),
            template=shown.get("template"),
            parser=shown.get("parser") or None,
            details=dict(shown.get("details") or {}),
            engine=engine,
            engine_version=version,
            raw=shown,
        )


__all__ = [
    "OLLAMA_COUNTER_FIELDS",
    "OllamaBackend",
    "OllamaChunkMerger",
    "counters_from_ollama",
    "merge_ollama_chunks",
]
