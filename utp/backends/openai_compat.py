"""OpenAI-compatible ``/v1/chat/completions`` (Ollama's /v1, vLLM, llama-server...).

Streaming tool calls arrive as fragments keyed by ``index``: the first carries
``id`` and ``name``, later ones only pieces of the ``arguments`` string
(vLLM, OpenAI), or each delta carries a whole call (Ollama). Assembly by
index handles both. The assembled reply is a ``chat.completion`` object with
arguments left as JSON strings, exactly what a non-streaming server returns,
so parsers see one shape whichever mode produced it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from utp.backends.base import BackendResponse, ChatRequest, Counters, ModelInfo
from utp.backends.errors import classify_exception, error_message_from_payload, malformed_stream, stream_error
from utp.backends.shapes import OPENAI_CHUNK, OPENAI_COMPLETION, check_shape
from utp.backends.http import HttpClientBase, collect_stream, decode_stream_object

#: Ollama option name -> OpenAI request field.
OPTION_FIELDS: dict[str, str] = {
    "temperature": "temperature",
    "seed": "seed",
    "num_predict": "max_tokens",
    "top_p": "top_p",
    "stop": "stop",
}

#: Delta keys that carry reasoning text (vLLM/DeepSeek vs Ollama).
REASONING_KEYS: tuple[str, ...] = ("reasoning_content", "reasoning")


#: the name the reply schema goes under in ``response_format`` (OpenAI requires one)
RESPONSE_SCHEMA_NAME = "utp_reply"


def json_schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    """``response_format`` for a reply schema: OpenAI's shape, which llama-server reads too.

    No ``"strict": true``: OpenAI's strict mode refuses a root ``anyOf`` and
    optional properties, which tool schemas have; llama-server ignores the flag.
    """
    return {"type": "json_schema", "json_schema": {"name": RESPONSE_SCHEMA_NAME, "schema": schema}}


def normalise_base_url(base_url: str) -> str:
    """Accept a server root or its ``/v1``: the client adds ``/v1`` itself."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _string_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """History with tool-call arguments as JSON strings, which /v1 requires
    (an object there is a 400 ``invalid tool call arguments`` on Ollama)."""
    out = []
    for message in messages:
        calls = message.get("tool_calls")
        if not calls or not any(isinstance((c.get("function") or {}).get("arguments"), dict) for c in calls if isinstance(c, dict)):
            out.append(message)
            continue
        fixed = []
        for call in calls:
            function = dict(call.get("function") or {})
            if isinstance(function.get("arguments"), dict):
                function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
            fixed.append({**call, "function": function})
        out.append({**message, "tool_calls": fixed})
    return out


@dataclass
class _CallParts:
    index: int
    id: str | None = None
    type: str = "function"
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


@dataclass
class OpenAIStreamAssembler:
    """Folds ``chat.completion.chunk`` objects into one ``chat.completion``."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    reasoning_key: str | None = None
    calls: dict[int, _CallParts] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    #: llama-server's engine counters (``prompt_ms``, ``predicted_ms``...), on its last chunk
    timings: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    role: str = "assistant"

    def add(self, chunk: dict[str, Any]) -> None:
        for key in ("id", "created", "model", "system_fingerprint"):
            if chunk.get(key) is not None:
                self.meta.setdefault(key, chunk[key])
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            self._add_delta(choice.get("delta") or {})
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def _add_delta(self, delta: dict[str, Any]) -> None:
        self.role = delta.get("role") or self.role
        if delta.get("content"):
            self.content.append(delta["content"])
        for key in REASONING_KEYS:
            if delta.get(key):
                self.reasoning_key = self.reasoning_key or key
                self.reasoning.append(delta[key])
        for position, fragment in enumerate(delta.get("tool_calls") or []):
            index = fragment.get("index")
            index = position if not isinstance(index, int) else index
            parts = self.calls.setdefault(index, _CallParts(index))
            parts.id = parts.id or fragment.get("id")
            parts.type = fragment.get("type") or parts.type
            function = fragment.get("function") or {}
            parts.name = parts.name or function.get("name")
            if function.get("arguments"):
                parts.arguments.append(function["arguments"])

    @property
    def saw_finish(self) -> bool:
        return self.finish_reason is not None

    def tool_calls(self) -> list[dict[str, Any]]:
        return [
            {
                "id": parts.id,
                "type": parts.type,
                "index": parts.index,
                "function": {"name": parts.name or "", "arguments": "".join(parts.arguments)},
            }
            for parts in sorted(self.calls.values(), key=lambda p: p.index)
        ]

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": self.role, "content": "".join(self.content)}
        if self.reasoning:
            message[self.reasoning_key or REASONING_KEYS[0]] = "".join(self.reasoning)
        if self.calls:
            message["tool_calls"] = self.tool_calls()
        completion = {
            "id": self.meta.get("id"),
            "object": "chat.completion",
            "created": self.meta.get("created"),
            "model": self.meta.get("model"),
            "system_fingerprint": self.meta.get("system_fingerprint"),
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self.usage,
        }
        if self.timings is not None:
            completion["timings"] = self.timings
        return completion


def assemble_openai_chunks(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``chat.completion`` equivalent to a list of streamed chunks."""
    assembler = OpenAIStreamAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.completion()


def message_from_completion(completion: dict[str, Any]) -> dict[str, Any]:
    choices = completion.get("choices") or [{}]
    message = choices[0].get("message") or {}
    thinking = next((message[k] for k in REASONING_KEYS if message.get(k)), "")
    return {
        "role": message.get("role") or "assistant",
        "content": message.get("content") or "",
        "thinking": thinking,
        "tool_calls": list(message.get("tool_calls") or []),
    }


def counters_from_usage(usage: dict[str, Any] | None, *, wall_s: float | None, ttft_s: float | None = None,
                        timings: dict[str, Any] | None = None) -> Counters:
    """/v1 reports token counts only; durations stay None rather than guessed, unless the
    server adds its engine's own ``timings`` (llama-server: milliseconds per phase)."""
    usage = usage or {}
    timings = timings if isinstance(timings, dict) else {}

    def number(source: dict[str, Any], key: str, scale: float = 1) -> int | None:
        value = source.get(key)
        return int(value * scale) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    return Counters(
        prompt_tokens=number(usage, "prompt_tokens") if "prompt_tokens" in usage else number(timings, "prompt_n"),
        completion_tokens=number(usage, "completion_tokens") if "completion_tokens" in usage else number(timings, "predicted_n"),
        prompt_eval_ns=number(timings, "prompt_ms", 1e6),
        eval_ns=number(timings, "predicted_ms", 1e6),
        wall_s=wall_s,
        ttft_s=ttft_s,
    )


def _delta_has_output(chunk: dict[str, Any]) -> bool:
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("tool_calls") or any(delta.get(k) for k in REASONING_KEYS):
            return True
    return False


class OpenAICompatBackend(HttpClientBase):
    kind = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | httpx.Timeout = 300.0,
        retries: int = 2,
        backoff_s: float = 0.25,
    ) -> None:
        base = base_url or os.environ.get("OPENAI_BASE_URL") or "http://127.0.0.1:11434"
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        super().__init__(normalise_base_url(base), transport=transport, timeout=timeout, retries=retries, backoff_s=backoff_s, headers=headers)

    @staticmethod
    def payload(request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "messages": _string_arguments(request.messages), "stream": bool(request.stream)}
        if request.tools is not None:
            body["tools"] = request.tools
        for option, value in (request.options or {}).items():
            if option in OPTION_FIELDS and value is not None:
                body[OPTION_FIELDS[option]] = value
        if isinstance(request.think, str):
            body["reasoning_effort"] = request.think
        if request.stream:
            body["stream_options"] = {"include_usage": True}
        if request.response_schema is not None:
            body["response_format"] = json_schema_format(request.response_schema)
        return body

    async def chat(self, request: ChatRequest) -> BackendResponse:
        if request.stream:
            return await self._chat_streaming(request)
        started = time.perf_counter()
        path = "/v1/chat/completions"
        completion = await self._post_json(path, self.payload(request), model=request.model)
        wall = time.perf_counter() - started
        where = self.where("POST", path, request.model)
        if not isinstance(completion, dict) or not isinstance(completion.get("choices"), list):
            message = error_message_from_payload(completion)
            if message is not None:
                raise stream_error(message, where=where, chunk_index=0)
            raise malformed_stream(f"not a chat.completion object: {json.dumps(completion)[:200]}", where=where)
        check_shape(completion, OPENAI_COMPLETION, where=where)
        finish = (completion["choices"][0] if completion["choices"] else {}).get("finish_reason")
        return BackendResponse(
            raw=completion,
            message=message_from_completion(completion),
            done_reason=finish or "stop",
            counters=counters_from_usage(completion.get("usage"), wall_s=wall, timings=completion.get("timings")),
        )

    async def _chat_streaming(self, request: ChatRequest) -> BackendResponse:
        assembler = OpenAIStreamAssembler()
        collected = await collect_stream(self.stream_chat(request), _delta_has_output, assembler.add)
        completion = assembler.completion()
        return BackendResponse(
            raw=completion,
            message=message_from_completion(completion),
            done_reason=assembler.finish_reason or "stop",
            counters=counters_from_usage(assembler.usage, wall_s=collected.wall_s, ttft_s=collected.ttft_s, timings=assembler.timings),
            chunks=collected.chunks,
        )

    async def stream_chat(self, request: ChatRequest) -> AsyncIterator[dict[str, Any]]:
        """Raw ``chat.completion.chunk`` objects from the SSE stream."""
        path = "/v1/chat/completions"
        body = self.payload(request)
        body["stream"] = True
        body.setdefault("stream_options", {"include_usage": True})
        where = self.where("POST", path, request.model)
        response = await self._send("POST", path, json=body, model=request.model, stream=True)
        index = 0
        finished = False
        done = False
        data_lines: list[str] = []

        def event_ready(line: str | None) -> str | None:
            """Collect SSE ``data:`` lines; return an event's data at its blank line
            (or at end of stream, ``line is None``)."""
            nonlocal data_lines
            if line is not None:
                if line.startswith("data:"):
                    value = line[5:]
                    data_lines.append(value[1:] if value.startswith(" ") else value)
                    return None
                if line.strip():
                    return None  # comments, "event:", "id:", "retry:" fields
            if not data_lines:
                return None
            data, data_lines = "\n".join(data_lines), []
            return data

        try:
            lines = response.aiter_lines()
            while not done:
                try:
                    line: str | None = await lines.__anext__()
                except StopAsyncIteration:
                    line = None
                data = event_ready(line)
                if data is not None:
                    if data.strip() == "[DONE]":
                        done = True
                        break
                    chunk = decode_stream_object(data, index, where, "SSE event")
                    check_shape(chunk, OPENAI_CHUNK, where=where, what=f"SSE event {index}")
                    index += 1
                    finished = finished or any(c.get("finish_reason") for c in chunk.get("choices") or [])
                    yield chunk
                if line is None:
                    break
        except httpx.HTTPError as exc:
            error = classify_exception(exc, where=where)
            error.args = (f"{error.args[0]} after {index} chunk(s)",)
            raise error from None
        finally:
            await response.aclose()
        if not done and not finished:
            raise malformed_stream(f"stream ended after {index} chunk(s) without finish_reason or [DONE] (truncated)", where=where)

    # -- discovery ----------------------------------------------------------------

    async def list_models(self) -> list[str]:
        body = await self._get_json("/v1/models")
        data = body.get("data") if isinstance(body, dict) else None
        return [str(m.get("id")) for m in data or [] if isinstance(m, dict)]

    async def version(self) -> str:
        """/v1 has no version endpoint; the best honest answer is empty."""
        return ""

    async def show(self, model: str) -> ModelInfo:
        """What /v1/models says about ``model`` (no capabilities or template on /v1)."""
        body = await self._get_json("/v1/models", model=model)
        entries = body.get("data") if isinstance(body, dict) else None
        entry = next((m for m in entries or [] if isinstance(m, dict) and m.get("id") == model), {})
        return ModelInfo(name=model, engine="openai", engine_version=None, details={"owned_by": entry.get("owned_by")} if entry else {}, raw=entry)


__all__ = [
    "OPTION_FIELDS",
    "OpenAICompatBackend",
    "OpenAIStreamAssembler",
    "assemble_openai_chunks",
    "json_schema_format",
    "counters_from_usage",
    "message_from_completion",
    "normalise_base_url",
]
