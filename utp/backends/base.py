"""What every model backend takes and returns.

A backend sends one chat request and hands back the raw response (for the
parser and the transcript) plus counters normalised from the server's own
fields, so throughput is always the server's measurement, never our guess.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    #: already in wire shape (the definition adapter's output), or None
    tools: list[dict[str, Any]] | None = None
    #: Ollama ``options`` (temperature, seed, num_ctx, num_predict...)
    options: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    think: bool | str | None = None
    keep_alive: str | int | None = None
    #: a JSON Schema the reply must follow (constrained decoding), or None for free-form;
    #: each backend sends it its server's way (Ollama ``format``, OpenAI ``response_format``)
    response_schema: dict[str, Any] | None = None


@dataclass
class Counters:
    """Token counts and timings as the server reported them (None = not reported).

    Durations are nanoseconds, as Ollama sends them. ``wall_s`` and ``ttft_s``
    are measured by the client and are ``None`` in replay, where they would be
    meaningless.
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_eval_ns: int | None = None
    eval_ns: int | None = None
    load_ns: int | None = None
    total_ns: int | None = None
    wall_s: float | None = None
    ttft_s: float | None = None

    @property
    def decode_tps(self) -> float | None:
        if self.completion_tokens and self.eval_ns:
            return self.completion_tokens / self.eval_ns * 1e9
        return None

    @property
    def prompt_tps(self) -> float | None:
        if self.prompt_tokens and self.prompt_eval_ns:
            return self.prompt_tokens / self.prompt_eval_ns * 1e9
        return None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Counters":
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__})


@dataclass
class BackendResponse:
    """One model turn.

    ``raw`` is the response in its server's own shape (an Ollama ``/api/chat``
    object, streamed chunks merged as Ollama's non-streaming reply would be; or
    an OpenAI ``chat.completion``), which is what parsers accept. ``message``
    is the normalised assistant message ``{"role", "content", "thinking",
    "tool_calls"}``. ``chunks`` keeps the streamed chunks in order.
    """

    raw: dict[str, Any]
    message: dict[str, Any]
    done_reason: str = "stop"
    counters: Counters = field(default_factory=Counters)
    chunks: list[dict[str, Any]] | None = None


@dataclass
class ModelInfo:
    """Provenance for a model: what it is, which digest, what it can do."""

    name: str
    digest: str | None = None
    capabilities: list[str] = field(default_factory=list)
    template: str | None = None
    parser: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    engine: str | None = None
    engine_version: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def supports_tools(self) -> bool | None:
        return ("tools" in self.capabilities) if self.capabilities else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("raw", None)
        return data


class BackendErrorKind(str, enum.Enum):
    TOOLS_UNSUPPORTED = "tools_unsupported"  # 400 "... does not support tools"
    #: the server or model cannot (or did not) force a reply schema
    STRUCTURED_OUTPUT_UNSUPPORTED = "structured_output_unsupported"
    THINKING_UNSUPPORTED = "thinking_unsupported"
    MODEL_NOT_FOUND = "model_not_found"  # 404
    BAD_REQUEST = "bad_request"  # other 4xx
    SERVER_ERROR = "server_error"  # 5xx
    STREAM_ERROR = "stream_error"  # {"error": ...} line mid-stream
    MALFORMED_STREAM = "malformed_stream"  # truncated or unparsable NDJSON / SSE
    MALFORMED_RESPONSE = "malformed_response"  # valid JSON of the wrong shape (a field of the wrong type)
    CONNECT_ERROR = "connect_error"
    TIMEOUT = "timeout"
    NOT_INSTALLED = "not_installed"  # embedded backend without llama-cpp-python


class BackendError(Exception):
    """A classified failure; ``transient`` ones were retried before being raised."""

    def __init__(self, kind: BackendErrorKind, message: str, *, status: int | None = None, transient: bool = False):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.transient = transient

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{self.kind.value}{status}: {self.args[0]}"


@runtime_checkable
class ChatBackend(Protocol):
    """A model server (or in-process model) that answers chat requests."""

    #: "ollama", "openai" or "embedded"; recorded in provenance
    kind: str

    async def chat(self, request: ChatRequest) -> BackendResponse: ...

    def stream_chat(self, request: ChatRequest) -> AsyncIterator[dict[str, Any]]:
        """Yield raw chunks as they arrive (the same chunks ``chat`` merges)."""
        ...

    async def show(self, model: str) -> ModelInfo: ...

    async def version(self) -> str: ...

    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...
