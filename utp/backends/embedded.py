"""llama.cpp in-process, answering Ollama's HTTP API as an httpx transport.

Why a transport and not a backend: the Ollama client, cassette recording and
replay all work on HTTP exchanges. An in-process model that *speaks* Ollama's
API plugs into all of them unchanged, so an evaluation on the embedded model
is recorded and replayed exactly like one on a real server.

It behaves like Ollama with a modelfile that has no tool parser. A model whose
GGUF chat template reads ``tools`` (Qwen's does) gets the request's tools
rendered through that template, as Ollama renders them through the model's
template, and whatever the model writes comes back in ``message.content``:
calls are never parsed out here (grading UTP's parser with UTP's parser would
measure nothing), and ``/api/show`` says so. A model whose template has no
tools section answers ``tools`` with Ollama's 400 ``"<model> does not
support tools"`` (tiny models are evaluated with prompt-based formats).
Counters come from llama.cpp's own performance timers, and changing
``num_ctx`` reloads the model.
``format`` (``"json"`` or a JSON Schema) becomes a llama.cpp grammar, as in
Ollama; a schema the converter cannot turn into a grammar is refused rather
than silently replaced by "any JSON" (what llama-cpp-python's
``response_format`` would do).
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx

from utp.backends.base import BackendError
from utp.backends.gguf_meta import chat_template, template_renders_tools
from utp.backends.grammar import GrammarError, reply_grammar
from utp.backends.llama_engine import (
    ENGINES,
    FALLBACK_TEMPLATES,
    Engine,
    EngineCache,
    EngineLoadError,
    import_llama_cpp,
    llama_cpp_version,
    perf_counters,
    reset_perf,
)
from utp.backends.models import LocalModel, file_sha256, get_local_model

#: what ``/api/show`` reports as the tool parser of a model whose template renders tools
NO_TOOL_PARSER = "none: calls stay in content"

DEFAULT_NUM_CTX = 4096

#: Ollama's sampling defaults (``api.DefaultOptions``), so the embedded model
#: samples the way the same GGUF would under Ollama when options are omitted.
OLLAMA_DEFAULTS: dict[str, Any] = {"temperature": 0.8, "top_k": 40, "top_p": 0.9, "repeat_penalty": 1.0}

#: Ollama option -> (create_chat_completion keyword, expected types).
OPTION_MAP: dict[str, tuple[str, tuple[type, ...]]] = {
    "temperature": ("temperature", (int, float)),
    "top_k": ("top_k", (int,)),
    "top_p": ("top_p", (int, float)),
    "min_p": ("min_p", (int, float)),
    "seed": ("seed", (int,)),
    "num_predict": ("max_tokens", (int,)),
    "stop": ("stop", (list, str)),
    "repeat_penalty": ("repeat_penalty", (int, float)),
    "presence_penalty": ("presence_penalty", (int, float)),
    "frequency_penalty": ("frequency_penalty", (int, float)),
}

#: Load-time options (a change reloads the model, as in Ollama).
RUNNER_OPTIONS: dict[str, tuple[type, ...]] = {"num_ctx": (int,), "num_thread": (int,), "num_batch": (int,)}


class _RequestError(Exception):
    """An Ollama-style error reply: status plus ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _content_text(content: Any) -> str:
    """Message content as the string a chat template concatenates."""
    return content if isinstance(content, str) else ("" if content is None else json.dumps(content, ensure_ascii=False))


def template_accepts_role(template: str, role: str) -> bool:
    return f"'{role}'" in template or f'"{role}"' in template


def prepare_messages(messages: list[dict[str, Any]], template: str) -> list[dict[str, Any]]:
    """Ollama-style history rewritten into what a tool-less chat template renders.

    Templates of tiny models know system/user/assistant only: a ``tool``
    message becomes a user turn "Tool result (NAME): ...", an assistant turn
    that only carried native calls shows them as JSON text, and consecutive
    turns of one role are merged (Gemma's template refuses non-alternating
    roles). A template that enforces alternation also gets later system
    messages as user text.
    """
    tool_role = template_accepts_role(template, "tool")
    strict = "raise_exception" in template
    out: list[dict[str, Any]] = []
    for position, message in enumerate(messages):
        role = str(message.get("role") or "user").lower()
        text = _content_text(message.get("content"))
        if role == "assistant" and not text and message.get("tool_calls"):
            calls = [c.get("function", c) for c in message["tool_calls"] if isinstance(c, dict)]
            text = json.dumps([{"name": c.get("name"), "arguments": c.get("arguments")} for c in calls], ensure_ascii=False)
        if role == "tool" and not tool_role:
            name = message.get("tool_name") or message.get("name") or message.get("tool_call_id") or "tool"
            role, text = "user", f"Tool result ({name}): {text}"
        if role == "system" and strict and position > 0:
            role = "user"
        if role not in ("system", "user", "assistant", "tool"):
            role = "user"
        if out and out[-1]["role"] == role:
            out[-1]["content"] = f"{out[-1]['content']}\n\n{text}"
        else:
            out.append({"role": role, "content": text})
    return out


def prepare_tool_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ollama-style history for a template that renders tools itself.

    Such a template has its own places for an assistant turn's ``tool_calls``
    and for ``tool`` results (Qwen's wraps them in ``<tool_response>``), so
    they are handed to it unchanged instead of being flattened into text; only
    content is made a string and unknown roles become user turns.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role = str(message.get("role") or "user").lower()
        text = _content_text(message.get("content"))
        prepared: dict[str, Any] = {"role": role if role in ("system", "user", "assistant", "tool") else "user", "content": text}
        calls = message.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            prepared["tool_calls"] = [c if "function" in c else {"function": c} for c in calls if isinstance(c, dict)]
        out.append(prepared)
    return out


def _check_type(name: str, value: Any, types: tuple[type, ...]) -> None:
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        wanted = " or ".join("integer" if t is int else "number" if t is float else "string" if t is str else "array" for t in types)
        raise _RequestError(400, f'option "{name}" must be of type {wanted}')


def sampling_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """create_chat_completion keywords from Ollama ``options`` (Ollama's defaults first)."""
    merged = {**OLLAMA_DEFAULTS, **options}
    kwargs: dict[str, Any] = {}
    for name, value in merged.items():
        if name in OPTION_MAP:
            keyword, types = OPTION_MAP[name]
            _check_type(name, value, types)
            if name == "seed" and value < 0:
                continue  # Ollama: -1 = random
            if name == "num_predict" and value < 0:
                continue  # Ollama: -1 = no limit
            kwargs[keyword] = value
        elif name in RUNNER_OPTIONS:
            _check_type(name, value, RUNNER_OPTIONS[name])
        # unknown options: Ollama logs and ignores them; so do we
    return kwargs


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")


_DONE_REASONS = {"stop": "stop", "length": "length", None: "stop"}


class _QueueStream(httpx.AsyncByteStream):
    """NDJSON bytes handed over from the generation thread."""

    def __init__(self, items: "asyncio.Queue[bytes | None]", cancel: threading.Event) -> None:
        self._items = items
        self._cancel = cancel

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            item = await self._items.get()
            if item is None:
                return
            yield item

    async def aclose(self) -> None:
        self._cancel.set()  # a client that stops reading stops the generation


class EmbeddedOllamaTransport(httpx.AsyncBaseTransport):
    """Ollama's ``/api/*`` answered by llama-cpp-python in this process.

    ``model`` is a ``LOCAL_MODELS`` name (``"smollm2-135m"`` or
    ``"local:smollm2-135m"``) or a :class:`LocalModel`. Requests must name that
    model (``name`` or ``name:latest``); others get Ollama's 404.
    """

    backend_kind = "embedded"

    def __init__(self, model: str | LocalModel = "smollm2-135m", *, n_threads: int | None = None, engines: EngineCache | None = None) -> None:
        self.spec = model if isinstance(model, LocalModel) else get_local_model(model)
        self.model_name = self.spec.name
        self.n_threads = n_threads
        self._engines = engines or ENGINES
        self._path: Path | None = None
        self._renders_tools: bool | None = None
        self._routes: dict[tuple[str, str], Callable[[Any], Any]] = {
            ("POST", "/api/chat"): self._chat,
            ("POST", "/api/show"): self._show,
            ("GET", "/api/tags"): self._tags,
            ("GET", "/api/version"): self._version,
            ("HEAD", "/api/version"): self._version,
            ("GET", "/api/ps"): self._ps,
        }

    # -- plumbing -----------------------------------------------------------------

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        handler = self._routes.get((request.method, request.url.path))
        if handler is None:
            return self._json(404, {"error": f"{request.method} {request.url.path}: no such endpoint on the embedded server"})
        body: Any = None
        if request.method == "POST":
            raw = await request.aread()
            if not raw:
                return self._json(400, {"error": "missing request body"})
            try:
                body = json.loads(raw)
            except ValueError as exc:
                return self._json(400, {"error": f"invalid JSON body: {exc}"})
            if not isinstance(body, dict):
                return self._json(400, {"error": "request body must be a JSON object"})
        try:
            return await handler(body)
        except _RequestError as exc:
            return self._json(exc.status, {"error": str(exc)})
        except BackendError:
            raise  # NOT_INSTALLED and friends: already a clear, classified message
        except Exception as exc:  # a server answers 500, it does not crash its client
            return self._json(500, {"error": f"embedded llama.cpp: {type(exc).__name__}: {exc}"})

    @staticmethod
    def _json(status: int, payload: Any) -> httpx.Response:
        return httpx.Response(status, json=payload, headers={"Content-Type": "application/json; charset=utf-8"})

    def model_path(self) -> Path:
        if self._path is None:
            self._path = Path(self.spec.loader())
        return self._path

    def renders_tools(self) -> bool:
        """Whether the GGUF's own chat template has a tools section (read from its header once)."""
        if self._renders_tools is None:
            self._renders_tools = template_renders_tools(chat_template(self.model_path()))
        return self._renders_tools

    def _capabilities(self) -> list[str]:
        return ["completion", "tools"] if self.renders_tools() else ["completion"]

    def _check_model(self, body: dict[str, Any]) -> str:
        name = str(body.get("model") or body.get("name") or "")
        if name.removeprefix("local:").removesuffix(":latest") != self.model_name:
            raise _RequestError(404, f"model '{name}' not found")
        return name

    def _digest(self) -> str:
        return file_sha256(self.model_path())

    def _details(self) -> dict[str, Any]:
        return {
            "parent_model": "",
            "format": "gguf",
            "family": self.spec.family,
            "families": [self.spec.family],
            "parameter_size": self.spec.parameter_size,
            "quantization_level": self.spec.quantization_level,
        }

    def _entry(self) -> dict[str, Any]:
        path = self.model_path()
        stat = path.stat()
        return {
            "name": self.model_name,
            "model": self.model_name,
            "modified_at": _dt.datetime.fromtimestamp(stat.st_mtime, _dt.timezone.utc).isoformat(),
            "size": stat.st_size,
            "digest": self._digest(),
            "details": self._details(),
        }

    # -- discovery ----------------------------------------------------------------

    async def _version(self, body: Any) -> httpx.Response:
        return self._json(200, {"version": f"embedded-llama.cpp-{llama_cpp_version()}"})

    async def _tags(self, body: Any) -> httpx.Response:
        entry = await asyncio.to_thread(self._entry)
        return self._json(200, {"models": [{**entry, "capabilities": self._capabilities()}]})

    async def _ps(self, body: Any) -> httpx.Response:
        models = []
        for path, engine in self._engines.loaded():
            if path == self._path:
                entry = await asyncio.to_thread(self._entry)
                models.append({**entry, "expires_at": None, "size_vram": 0, "context_length": engine.n_ctx})
        return self._json(200, {"models": models})

    async def _show(self, body: dict[str, Any]) -> httpx.Response:
        self._check_model(body)
        engine, _ = await asyncio.to_thread(self._engine, DEFAULT_NUM_CTX, True)
        metadata = dict(engine.llama.metadata)
        model_info = {k: v for k, v in metadata.items() if not k.startswith("tokenizer.") or k == "tokenizer.ggml.model"}
        return self._json(
            200,
            {
                "modelfile": f"# embedded llama.cpp\nFROM {self.model_path()}",
                "parameters": "",
                "template": engine.template,
                "details": self._details(),
                "model_info": model_info,
                "capabilities": self._capabilities(),
                **({"parser": NO_TOOL_PARSER} if self.renders_tools() else {}),
                "license": self.spec.license,
                "modified_at": _dt.datetime.fromtimestamp(self.model_path().stat().st_mtime, _dt.timezone.utc).isoformat(),
            },
        )

    def _engine(self, n_ctx: int, keep_loaded_ctx: bool = False, n_threads: int | None = None) -> tuple[Engine, int]:
        """Load (or reuse) the model; ``keep_loaded_ctx`` reuses any loaded n_ctx.

        ``n_threads`` is Ollama's ``num_thread`` runner option: like Ollama, a
        different value reloads the runner.
        """
        path = self.model_path()
        if keep_loaded_ctx:
            for loaded_path, engine in self._engines.loaded():
                if loaded_path == path:
                    return engine, 0
        try:
            return self._engines.get(self.spec, path, n_ctx, n_threads or self.n_threads)
        except EngineLoadError as exc:
            raise _RequestError(500, str(exc)) from None

    # -- chat ---------------------------------------------------------------------

    async def _chat(self, body: dict[str, Any]) -> httpx.Response:
        started = time.perf_counter_ns()
        name = self._check_model(body)
        tools = body.get("tools")
        if tools and not await asyncio.to_thread(self.renders_tools):
            raise _RequestError(400, f"{name} does not support tools")
        if tools and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
            raise _RequestError(400, "tools must be a list of objects")
        if body.get("think") not in (None, False):
            raise _RequestError(400, f'"{name}" does not support thinking')
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise _RequestError(400, "messages must be a list of objects")
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise _RequestError(400, "options must be an object")
        kwargs = sampling_kwargs(options)
        try:
            grammar = await asyncio.to_thread(reply_grammar, body.get("format"), import_llama_cpp)
        except GrammarError as exc:
            raise _RequestError(400, f'"{name}" does not support structured output with this format: {exc}') from None
        if grammar is not None:
            kwargs["grammar"] = grammar
        n_ctx = options.get("num_ctx", DEFAULT_NUM_CTX)
        n_threads = options.get("num_thread")
        engine, load_ns = await asyncio.to_thread(self._engine, int(n_ctx), False, int(n_threads) if n_threads else None)
        if self.renders_tools():
            prepared = prepare_tool_messages(messages)
            if tools:
                kwargs["tools"] = tools  # rendered by the model's template; the reply is not parsed
        else:
            prepared = prepare_messages(messages, engine.template)
        header = {"model": name}
        if body.get("stream", True) is False:
            result = await asyncio.to_thread(self._generate_all, engine, prepared, kwargs)
            content, finish, perf = result
            final = self._final(header, finish, perf, load_ns, started)
            final["message"] = {"role": "assistant", "content": content}
            return self._json(200, final)
        return self._stream(engine, prepared, kwargs, header, load_ns, started)

    @staticmethod
    def _generate_all(engine: Engine, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> tuple[str, str, dict[str, float] | None]:
        with engine.lock:
            reset_perf(engine.llama)
            out = engine.llama.create_chat_completion(messages=messages, stream=False, **kwargs)
            perf = perf_counters(engine.llama)
        choice = out["choices"][0]
        return choice["message"].get("content") or "", _DONE_REASONS.get(choice.get("finish_reason"), "stop"), perf

    def _stream(self, engine: Engine, messages: list[dict[str, Any]], kwargs: dict[str, Any], header: dict[str, Any], load_ns: int, started: int) -> httpx.Response:
        loop = asyncio.get_running_loop()
        items: asyncio.Queue[bytes | None] = asyncio.Queue()
        cancel = threading.Event()

        def put(item: bytes | None) -> None:
            try:
                loop.call_soon_threadsafe(items.put_nowait, item)
            except RuntimeError:  # the client's event loop is gone: nobody is listening
                cancel.set()

        def line(payload: dict[str, Any]) -> bytes:
            return json.dumps(payload, ensure_ascii=False).encode() + b"\n"

        def work() -> None:
            finish: str | None = None
            try:
                with engine.lock:
                    reset_perf(engine.llama)
                    for chunk in engine.llama.create_chat_completion(messages=messages, stream=True, **kwargs):
                        if cancel.is_set():
                            break
                        choice = (chunk.get("choices") or [{}])[0]
                        text = (choice.get("delta") or {}).get("content")
                        if text:
                            put(line({**header, "created_at": _now(), "message": {"role": "assistant", "content": text}, "done": False}))
                        finish = choice.get("finish_reason") or finish
                    perf = perf_counters(engine.llama)
                final = self._final(header, _DONE_REASONS.get(finish, "stop"), perf, load_ns, started)
                final["message"] = {"role": "assistant", "content": ""}
                put(line(final))
            except Exception as exc:  # reported the way Ollama reports a mid-stream failure
                put(line({"error": f"embedded llama.cpp generation failed: {type(exc).__name__}: {exc}"}))
            finally:
                put(None)

        threading.Thread(target=work, name=f"utp-embedded-{self.model_name}", daemon=True).start()
        return httpx.Response(200, headers={"Content-Type": "application/x-ndjson"}, stream=_QueueStream(items, cancel))

    @staticmethod
    def _final(header: dict[str, Any], done_reason: str, perf: dict[str, float] | None, load_ns: int, started: int) -> dict[str, Any]:
        """The ``done:true`` object; zero fields omitted, as Ollama's omitempty does."""
        fields: dict[str, Any] = {"total_duration": time.perf_counter_ns() - started, "load_duration": load_ns}
        if perf:
            fields.update(
                prompt_eval_count=int(perf["n_p_eval"]),
                prompt_eval_duration=int(perf["t_p_eval_ms"] * 1e6),
                eval_count=int(perf["n_eval"]),
                eval_duration=int(perf["t_eval_ms"] * 1e6),
            )
        return {
            **header,
            "created_at": _now(),
            "done": True,
            "done_reason": done_reason,
            **{k: v for k, v in fields.items() if v},
        }

    async def aclose(self) -> None:
        """Models stay cached for the process (like a loaded Ollama runner)."""
        return None


__all__ = [
    "DEFAULT_NUM_CTX",
    "FALLBACK_TEMPLATES",
    "NO_TOOL_PARSER",
    "EmbeddedOllamaTransport",
    "prepare_messages",
    "prepare_tool_messages",
    "sampling_kwargs",
]
