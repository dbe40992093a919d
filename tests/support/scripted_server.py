"""A scripted model server: a TEST DOUBLE speaking Ollama's and OpenAI's HTTP APIs.

Real HTTP on 127.0.0.1 (an ephemeral port), real chunked streaming, real
connection drops: the backends under test go through httpx exactly as they do
against a live server. Only the "model" is scripted: each chat request takes
the next :class:`Turn` from a queue.

Import (works under ``python -m pytest`` from the project root)::

    from tests.support.scripted_server import (
        ScriptedServer, Turn, turn_from_callable, closed_port_url,
    )

Stable API
----------
``ScriptedServer(turns=(), *, models=None, version="0.12.10-scripted",
default_turn=None, chunk_size=4, chunk_delay_s=0.0)``
    Context manager; ``srv.url`` is ``http://127.0.0.1:<port>``.
    ``turns`` is consumed in order by ``POST /api/chat`` and
    ``POST /v1/chat/completions`` (one shared queue). When it is empty,
    ``default_turn`` (a Turn or a ``turn_from_callable``) answers (if given) or the request gets HTTP 500
    ``{"error": "scripted server: no turns left ..."}`` so a test that asks
    more often than it scripted fails loudly.
    ``models``: ``{name: ModelCard}`` (or ``{name: dict}`` with the same keys);
    ``None`` means every model name exists with a default card. With a
    mapping, unknown names get 404 ``model '<name>' not found`` on
    ``/api/chat``, ``/api/show`` and ``/v1/chat/completions``.
    ``srv.add_turns(*turns)`` appends; ``srv.requests`` is every request as
    :class:`RecordedRequest` (method, path, headers, body as JSON or None);
    ``srv.chat_bodies`` is the JSON bodies of chat requests only;
    ``srv.remaining`` counts unconsumed turns.
    ``srv.url`` stays readable after the server stopped (for messages in asserts).
    Also usable as a pytest fixture: ``with ScriptedServer(...) as srv: yield srv``.

``Turn(content="", thinking="", tool_calls=(), ...)``
    One model answer. ``tool_calls`` items: ``{"name", "arguments", "id"?}``
    (arguments a dict; on /v1 it is sent as a JSON string, split into
    fragments). ``done_reason`` ("stop"/"length"), ``counters`` overrides
    Ollama's final-chunk fields (eval_count, eval_duration, prompt_eval_count,
    prompt_eval_duration, load_duration, total_duration), ``usage`` overrides
    OpenAI usage, ``reasoning_key`` ("reasoning_content" or "reasoning") and
    ``include_usage`` (None = only when the request asks via
    ``stream_options.include_usage``) shape /v1 output.
    Byte-level control: ``raw_chunks`` (list of dict or str) replaces the
    generated stream: dicts are ``json.dumps``-ed, strings sent verbatim,
    each as one NDJSON line on /api/chat or one ``data: ...`` SSE event on /v1
    (``[DONE]`` is appended on /v1 unless ``sse_done=False``). ``raw_body``
    replaces the generated non-streaming JSON body (a str/bytes goes out
    verbatim, e.g. ``""`` for an empty body).

    Faults (each one independent):
      ``status`` + ``error``: reply HTTP ``status`` with ``{"error": error}``
      (OpenAI envelope ``{"error": {"message", "type"}}`` on /v1);
      ``stream_error``: after ``fault_after`` chunks, an error line
      (``{"error": ...}``; ``stream_error_key`` changes the key, e.g.
      ``"error parsing tool call"`` like Ollama v0.11.3) then the stream ends;
      ``truncate``: after ``fault_after`` chunks, half a line then the
      connection is cut (no terminating chunk);
      ``omit_done``: stream ends cleanly but without its last chunk (the
      ``done:true`` one on /api/chat; on /v1 the last chunk and ``[DONE]``);
      ``malformed``: after ``fault_after`` chunks, a line that is not JSON;
      ``delay_s``: sleep before the status line (for client timeouts);
      ``chunk_delay_s``: sleep between chunks (for ttft).
    Convenience constructors: ``Turn.http_error(status, message)``,
    ``Turn.tools_unsupported(model)``, ``Turn.thinking_unsupported(model)``,
    ``Turn.model_not_found(model)``.

``turn_from_callable(fn)``
    A queue entry whose turn is computed from the request: ``fn(body) ->
    Turn`` (``body`` is the decoded JSON request). For scripted models whose
    answer depends on what they were sent.

``closed_port_url()``
    ``http://127.0.0.1:<port>`` where nothing listens (connect refused).

``ModelCard(capabilities, template, details, parser, digest, model_info, size)``
    What ``/api/show``, ``/api/tags`` and ``/api/ps`` report for a model.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "ModelCard",
    "RecordedRequest",
    "ScriptedServer",
    "Turn",
    "closed_port_url",
    "turn_from_callable",
]

DEFAULT_TEMPLATE = "{{ if .System }}<|system|>{{ .System }}{{ end }}{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}{{ end }}"


@dataclass
class ModelCard:
    capabilities: list[str] = field(default_factory=lambda: ["completion", "tools"])
    template: str = DEFAULT_TEMPLATE
    details: dict[str, Any] = field(
        default_factory=lambda: {
            "parent_model": "",
            "format": "gguf",
            "family": "scripted",
            "families": ["scripted"],
            "parameter_size": "0B",
            "quantization_level": "none",
        }
    )
    parser: str = ""
    digest: str = "0" * 64
    model_info: dict[str, Any] = field(default_factory=lambda: {"general.architecture": "scripted"})
    size: int = 1024


@dataclass
class Turn:
    content: str = ""
    thinking: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    done_reason: str = "stop"
    counters: dict[str, int] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    reasoning_key: str = "reasoning_content"
    include_usage: bool | None = None
    raw_chunks: list[Any] | None = None
    raw_body: Any = None
    sse_done: bool = True
    # faults
    status: int | None = None
    error: str | None = None
    stream_error: str | None = None
    stream_error_key: str = "error"
    truncate: bool = False
    omit_done: bool = False
    malformed: bool = False
    fault_after: int = 1
    delay_s: float = 0.0
    chunk_delay_s: float | None = None

    @classmethod
    def http_error(cls, status: int, message: str) -> "Turn":
        return cls(status=status, error=message)

    @classmethod
    def tools_unsupported(cls, model: str) -> "Turn":
        return cls(status=400, error=f"registry.ollama.ai/library/{model} does not support tools")

    @classmethod
    def thinking_unsupported(cls, model: str) -> "Turn":
        return cls(status=400, error=f'"{model}" does not support thinking')

    @classmethod
    def model_not_found(cls, model: str) -> "Turn":
        return cls(status=404, error=f"model '{model}' not found")


@dataclass
class _CallableTurn:
    fn: Callable[[Any], Turn]


def turn_from_callable(fn: Callable[[Any], Turn]) -> Any:
    """Queue entry computed from the request body when its request arrives."""
    return _CallableTurn(fn)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def closed_port_url() -> str:
    """A URL whose port was just free: connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _split(text: str, size: int) -> list[str]:
    if not text:
        return []
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


class _Abort(Exception):
    """Raised inside a handler to cut the connection without a clean end."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def setup(self) -> None:
        super().setup()
        # small chunks must leave at once: Nagle + delayed ACK would add ~40 ms per chunk
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- plumbing -----------------------------------------------------------------

    def _read_body(self) -> tuple[bytes, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        if not data:
            return data, None
        try:
            return data, json.loads(data)
        except ValueError:
            return data, None

    def _send_json(self, status: int, payload: Any) -> None:
        """Send ``payload`` as JSON; a str/bytes payload goes out verbatim."""
        if isinstance(payload, (str, bytes)):
            data = payload.encode() if isinstance(payload, str) else payload
        else:
            data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_chunked(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _write_chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def _end_chunked(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _cut(self, partial: bytes) -> None:
        """Send part of a line inside a valid chunk, then drop the connection."""
        self._write_chunk(partial)
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise _Abort

    def _pause(self, seconds: float) -> None:
        if seconds > 0:
            self.server.stopping.wait(seconds)

    # -- routing ------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _dispatch(self, method: str) -> None:
        raw, body = self._read_body()
        path = self.path.split("?", 1)[0]
        self.server.owner._record(RecordedRequest(method, path, dict(self.headers.items()), body))
        routes = {
            ("POST", "/api/chat"): self._ollama_chat,
            ("POST", "/api/show"): self._ollama_show,
            ("GET", "/api/tags"): self._ollama_tags,
            ("GET", "/api/version"): self._ollama_version,
            ("GET", "/api/ps"): self._ollama_ps,
            ("POST", "/v1/chat/completions"): self._openai_chat,
            ("GET", "/v1/models"): self._openai_models,
        }
        handler = routes.get((method, path))
        try:
            if handler is None:
                self._send_json(404, {"error": f"scripted server: no route {method} {path}"})
            elif method == "POST" and body is None:
                self._send_json(400, {"error": "missing request body" if not raw else "invalid JSON body"})
            else:
                handler(body)
        except _Abort:
            return
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # -- discovery endpoints ------------------------------------------------------

    def _card(self, name: str) -> ModelCard | None:
        return self.server.owner._card(name)

    def _ollama_show(self, body: Any) -> None:
        name = body.get("model") or body.get("name") or ""
        card = self._card(name)
        if card is None:
            self._send_json(404, {"error": f"model '{name}' not found"})
            return
        self._send_json(
            200,
            {
                "modelfile": f"FROM {name}",
                "parameters": "",
                "template": card.template,
                "details": card.details,
                "model_info": card.model_info,
                "capabilities": card.capabilities,
                "parser": card.parser,
                "modified_at": "2026-01-01T00:00:00Z",
            },
        )

    def _model_entries(self) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "model": name,
                "modified_at": "2026-01-01T00:00:00Z",
                "size": card.size,
                "digest": card.digest,
                "details": card.details,
                "capabilities": card.capabilities,
            }
            for name, card in self.server.owner._cards().items()
        ]

    def _ollama_tags(self, body: Any) -> None:
        self._send_json(200, {"models": self._model_entries()})

    def _ollama_ps(self, body: Any) -> None:
        models = []
        for entry in self._model_entries():
            entry = dict(entry)
            entry.pop("capabilities", None)
            entry.update(expires_at="2026-01-01T00:05:00Z", size_vram=entry["size"], context_length=4096)
            models.append(entry)
        self._send_json(200, {"models": models})

    def _ollama_version(self, body: Any) -> None:
        self._send_json(200, {"version": self.server.owner.version})

    def _openai_models(self, body: Any) -> None:
        data = [{"id": name, "object": "model", "created": 0, "owned_by": "scripted"} for name in self.server.owner._cards()]
        self._send_json(200, {"object": "list", "data": data})

    # -- turns --------------------------------------------------------------------

    def _next_turn(self, body: Any, openai: bool) -> Turn | None:
        """The turn to play, or None when an error reply was already sent."""
        model = body.get("model", "")
        if self._card(model) is None:
            self._error(404, f"model '{model}' not found", openai)
            return None
        turn = self.server.owner._pop_turn(body)
        if turn is None:
            self._error(500, "scripted server: no turns left (script more Turns or set default_turn)", openai)
            return None
        self._pause(turn.delay_s)
        if turn.status is not None and turn.status >= 300:
            self._error(turn.status, turn.error or f"scripted HTTP {turn.status}", openai)
            return None
        return turn

    def _error(self, status: int, message: str, openai: bool) -> None:
        if not openai:
            self._send_json(status, {"error": message})
            return
        kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})

    def _chunk_delay(self, turn: Turn) -> float:
        return self.server.owner.chunk_delay_s if turn.chunk_delay_s is None else turn.chunk_delay_s

    def _play_lines(self, turn: Turn, lines: list[bytes], terminator: bytes | None, error_line: bytes) -> None:
        """Write framed lines with the turn's faults; shared by NDJSON and SSE."""
        self._start_chunked("application/x-ndjson" if terminator is None else "text/event-stream")
        delay = self._chunk_delay(turn)
        fault_at = max(0, min(turn.fault_after, len(lines)))
        if turn.omit_done:
            lines = lines[:-1]
            terminator = None
        for index, line in enumerate(lines):
            if index == fault_at:
                if turn.stream_error is not None:
                    self._write_chunk(error_line)
                    self._end_chunked()
                    return
                if turn.truncate:
                    self._cut(line[: max(1, len(line) // 2)])
                if turn.malformed:
                    self._write_chunk(self._malformed_line(terminator is not None))
            if index:
                self._pause(delay)
            self._write_chunk(line)
        if terminator:
            self._write_chunk(terminator)
        self._end_chunked()

    @staticmethod
    def _malformed_line(sse: bool) -> bytes:
        return b'data: {"choices": [{"delta": {"content": "oops"\n\n' if sse else b'{"model": "x", "message": {"content": \n'

    # -- Ollama /api/chat ---------------------------------------------------------

    def _ollama_chat(self, body: Any) -> None:
        turn = self._next_turn(body, openai=False)
        if turn is None:
            return
        model = body.get("model", "")
        stream = body.get("stream", True) is not False
        if not stream:
            self._send_json(200, turn.raw_body if turn.raw_body is not None else self._ollama_full(turn, model))
            return
        chunks = turn.raw_chunks if turn.raw_chunks is not None else self._ollama_chunks(turn, model)
        lines = [(c if isinstance(c, str) else json.dumps(c)).encode() + b"\n" for c in chunks]
        error = json.dumps({turn.stream_error_key: turn.stream_error}).encode() + b"\n"
        self._play_lines(turn, lines, None, error)

    @staticmethod
    def _ollama_call(call: dict[str, Any], index: int) -> dict[str, Any]:
        out: dict[str, Any] = {"function": {"index": index, "name": call["name"], "arguments": call.get("arguments", {})}}
        if call.get("id"):
            out["id"] = call["id"]
        return out

    def _ollama_final_fields(self, turn: Turn, pieces: int) -> dict[str, Any]:
        eval_count = max(1, pieces)
        fields = {
            "total_duration": 50_000_000 + eval_count * 20_000_000,
            "load_duration": 10_000_000,
            "prompt_eval_count": 12,
            "prompt_eval_duration": 30_000_000,
            "eval_count": eval_count,
            "eval_duration": eval_count * 20_000_000,
        }
        fields.update(turn.counters)
        return fields

    def _ollama_full(self, turn: Turn, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.content}
        if turn.thinking:
            message["thinking"] = turn.thinking
        if turn.tool_calls:
            message["tool_calls"] = [self._ollama_call(c, i) for i, c in enumerate(turn.tool_calls)]
        pieces = len(_split(turn.content, self.server.owner.chunk_size)) + len(_split(turn.thinking, self.server.owner.chunk_size))
        return {
            "model": model,
            "created_at": "2026-01-01T00:00:00Z",
            "message": message,
            "done_reason": turn.done_reason,
            "done": True,
            **self._ollama_final_fields(turn, pieces + len(turn.tool_calls)),
        }

    def _ollama_chunks(self, turn: Turn, model: str) -> list[dict[str, Any]]:
        size = self.server.owner.chunk_size

        def chunk(**message: Any) -> dict[str, Any]:
            return {"model": model, "created_at": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": "", **message}, "done": False}

        chunks = [chunk(content="", thinking=piece) for piece in _split(turn.thinking, size)]
        chunks += [chunk(content=piece) for piece in _split(turn.content, size)]
        chunks += [chunk(tool_calls=[self._ollama_call(c, i)]) for i, c in enumerate(turn.tool_calls)]
        final = chunk(content="")
        final.update(done=True, done_reason=turn.done_reason, **self._ollama_final_fields(turn, len(chunks)))
        return chunks + [final]

    # -- OpenAI /v1/chat/completions ----------------------------------------------

    def _openai_chat(self, body: Any) -> None:
        turn = self._next_turn(body, openai=True)
        if turn is None:
            return
        model = body.get("model", "")
        if not body.get("stream"):
            self._send_json(200, turn.raw_body if turn.raw_body is not None else self._openai_full(turn, model))
            return
        if turn.raw_chunks is not None:
            events = [c if isinstance(c, str) else json.dumps(c) for c in turn.raw_chunks]
        else:
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            include_usage = wants_usage if turn.include_usage is None else turn.include_usage
            events = [json.dumps(c) for c in self._openai_chunks(turn, model, include_usage)]
        lines = [f"data: {e}\n\n".encode() for e in events]
        terminator = b"data: [DONE]\n\n" if turn.sse_done else b""
        error = f"data: {json.dumps({'error': {'message': turn.stream_error, 'type': 'api_error'}})}\n\n".encode()
        self._play_lines(turn, lines, terminator, error)

    @staticmethod
    def _finish_reason(turn: Turn) -> str:
        if turn.done_reason == "length":
            return "length"
        return "tool_calls" if turn.tool_calls else turn.done_reason

    def _usage(self, turn: Turn, completion: int) -> dict[str, Any]:
        if turn.usage is not None:
            return turn.usage
        return {"prompt_tokens": 12, "completion_tokens": completion, "total_tokens": 12 + completion}

    def _openai_full(self, turn: Turn, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.content}
        if turn.thinking:
            message[turn.reasoning_key] = turn.thinking
        if turn.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.get("id") or f"call_{i:08d}",
                    "index": i,
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}), separators=(",", ":"))},
                }
                for i, c in enumerate(turn.tool_calls)
            ]
        size = self.server.owner.chunk_size
        completion = max(1, len(_split(turn.content, size)) + len(_split(turn.thinking, size)) + len(turn.tool_calls))
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish_reason(turn)}],
            "usage": self._usage(turn, completion),
        }

    def _openai_chunks(self, turn: Turn, model: str, include_usage: bool) -> list[dict[str, Any]]:
        size = self.server.owner.chunk_size

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        chunks = [chunk({"role": "assistant", "content": ""})]
        chunks += [chunk({turn.reasoning_key: piece}) for piece in _split(turn.thinking, size)]
        chunks += [chunk({"content": piece}) for piece in _split(turn.content, size)]
        for index, call in enumerate(turn.tool_calls):
            arguments = json.dumps(call.get("arguments", {}), separators=(",", ":"))
            head = {"index": index, "id": call.get("id") or f"call_{index:08d}", "type": "function", "function": {"name": call["name"], "arguments": ""}}
            chunks.append(chunk({"tool_calls": [head]}))
            chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": frag}}]}) for frag in _split(arguments, size)]
        generated = len(chunks) - 1
        chunks.append(chunk({}, self._finish_reason(turn)))
        if include_usage:
            usage_chunk = chunk({})
            usage_chunk["choices"] = []
            usage_chunk["usage"] = self._usage(turn, max(1, generated))
            chunks.append(usage_chunk)
        return chunks


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: "ScriptedServer") -> None:
        self.owner = owner
        self.stopping = threading.Event()
        super().__init__(("127.0.0.1", 0), _Handler)


class ScriptedServer:
    """The scripted model server (a test double); see the module docstring."""

    def __init__(
        self,
        turns: Iterable[Turn | Any] = (),
        *,
        models: Mapping[str, ModelCard | Mapping[str, Any]] | None = None,
        version: str = "0.12.10-scripted",
        default_turn: Turn | Any | None = None,
        chunk_size: int = 4,
        chunk_delay_s: float = 0.0,
    ) -> None:
        self._turns: deque[Turn | _CallableTurn] = deque(turns)
        self._models = None if models is None else {k: v if isinstance(v, ModelCard) else ModelCard(**v) for k, v in models.items()}
        self.version = version
        self.default_turn = default_turn
        self.chunk_size = chunk_size
        self.chunk_delay_s = chunk_delay_s
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------

    def start(self) -> "ScriptedServer":
        self._server = _Server(self)
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port it listens (or, after stop, listened) on."""
        if self._port is None:
            raise RuntimeError("ScriptedServer was never started: use it as a context manager or call start()")
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script and records -------------------------------------------------------

    def add_turns(self, *turns: Turn | Any) -> None:
        with self._lock:
            self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns)

    @property
    def chat_bodies(self) -> list[Any]:
        with self._lock:
            return [r.body for r in self.requests if r.path in ("/api/chat", "/v1/chat/completions")]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _pop_turn(self, body: Any) -> Turn | None:
        with self._lock:
            entry = self._turns.popleft() if self._turns else self.default_turn
        if isinstance(entry, _CallableTurn):
            return entry.fn(body)
        return entry

    def _cards(self) -> dict[str, ModelCard]:
        return dict(self._models) if self._models is not None else {"scripted-model": ModelCard()}

    def _card(self, name: str) -> ModelCard | None:
        if self._models is None:
            return ModelCard()
        # Ollama resolves a bare name to its ":latest" tag
        return self._models.get(name) or (self._models.get(f"{name}:latest") if ":" not in name else None)
