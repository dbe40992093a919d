"""llama.cpp models loaded in this process, one per file, with their counters.

Loading is the slow, crash-prone part of the embedded backend: it is kept
apart from the HTTP stand-in (``embedded.py``) so the stand-in reads as
request handling, and so the one-time check that this CPU can run the
installed llama.cpp build at all (``engine_probe``) runs before any load.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.metadata
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from utp.backends.base import BackendError, BackendErrorKind
from utp.backends.engine_probe import ensure_engine_runs
from utp.backends.models import INSTALL_HINT, LocalModel


class EngineLoadError(Exception):
    """llama.cpp refused the file (a server answers this with a 500)."""


#: Chat templates for GGUFs that ship none. The Gemma 3 270M GGUF has no
#: ``tokenizer.chat_template``; llama-cpp-python's built-in "gemma" format
#: would silently drop system messages (where prompt-based tool formats put
#: their instructions), so this reproduces the Gemma 3 instruct template
#: (system text prefixed to the first user turn, "assistant" -> "model").
FALLBACK_TEMPLATES: dict[str, str] = {
    "gemma3": (
        "{{ bos_token }}"
        "{%- if messages[0]['role'] == 'system' -%}"
        "{%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}"
        "{%- set loop_messages = messages[1:] -%}"
        "{%- else -%}"
        "{%- set first_user_prefix = '' -%}"
        "{%- set loop_messages = messages -%}"
        "{%- endif -%}"
        "{%- for message in loop_messages -%}"
        "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
        "{%- endif -%}"
        "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
        "{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}"
        "{{ message['content'] | trim }}"
        "{{ '<end_of_turn>\n' }}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}"
    ),
}
FALLBACK_EOS: dict[str, str] = {"gemma3": "<end_of_turn>"}


def import_llama_cpp() -> Any:
    """``llama_cpp``, or a NOT_INSTALLED error that says how to get it."""
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise BackendError(
            BackendErrorKind.NOT_INSTALLED,
            f"the embedded backend needs llama-cpp-python, which is not installed ({exc}): {INSTALL_HINT}",
        ) from None


def llama_cpp_version() -> str:
    try:
        return importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(import_llama_cpp(), "__version__", "unknown"))


@dataclass
class Engine:
    llama: Any
    n_ctx: int
    n_threads: int | None
    template: str
    load_ns: int
    lock: threading.Lock
    loaded_at: float


class EngineCache:
    """One Llama per model file per process; reloaded when ``num_ctx`` changes."""

    def __init__(self) -> None:
        self._engines: dict[Path, Engine] = {}
        self._lock = threading.Lock()

    def get(self, spec: LocalModel, path: Path, n_ctx: int, n_threads: int | None) -> tuple[Engine, int]:
        """The engine and the load time this call spent (0 when already loaded)."""
        with self._lock:
            engine = self._engines.get(path)
            if engine is not None and engine.n_ctx == n_ctx and (n_threads is None or engine.n_threads == n_threads):
                return engine, 0
            if engine is not None:
                with engine.lock:  # wait for a running generation before dropping it
                    close = getattr(engine.llama, "close", None)
                    if close is not None:
                        close()
                del self._engines[path]
            engine = self._load(spec, path, n_ctx, n_threads)
            self._engines[path] = engine
            return engine, engine.load_ns

    def close_all(self) -> None:
        """Free every model while llama_cpp is still importable (run at exit:
        freeing during interpreter teardown makes llama.cpp's finalisers fail)."""
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            close = getattr(engine.llama, "close", None)
            if close is not None:
                with engine.lock:
                    close()

    def loaded(self) -> list[tuple[Path, Engine]]:
        with self._lock:
            return list(self._engines.items())

    @staticmethod
    def _load(spec: LocalModel, path: Path, n_ctx: int, n_threads: int | None) -> Engine:
        llama_cpp = import_llama_cpp()
        ensure_engine_runs(path)  # a build for another CPU fails here in one line, not with a core dump
        started = time.perf_counter_ns()
        kwargs: dict[str, Any] = {"model_path": str(path), "n_ctx": n_ctx, "verbose": False}
        if n_threads:
            # Ollama's num_thread bounds prompt processing too; llama-cpp-python would
            # otherwise batch on every core, which starves a second engine on the machine
            kwargs["n_threads"] = kwargs["n_threads_batch"] = n_threads
        try:
            llama = llama_cpp.Llama(**kwargs)
        except (ValueError, RuntimeError, OSError) as exc:
            raise EngineLoadError(f"embedded llama.cpp could not load {path}: {exc}") from None
        template = str(llama.metadata.get("tokenizer.chat_template") or "")
        if not template and spec.family in FALLBACK_TEMPLATES:
            template = FALLBACK_TEMPLATES[spec.family]
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            eos = FALLBACK_EOS[spec.family]
            stop_ids = [t for t in (llama.token_eos(), *llama.tokenize(eos.encode(), add_bos=False, special=True)) if t >= 0]
            llama.chat_handler = Jinja2ChatFormatter(
                template=template, eos_token=eos, bos_token=token_text(llama, llama.token_bos()), stop_token_ids=stop_ids
            ).to_chat_handler()
        load_ns = time.perf_counter_ns() - started
        return Engine(llama, n_ctx, n_threads, template, load_ns, threading.Lock(), time.time())


def token_text(llama: Any, token: int) -> str:
    if token < 0:
        return ""
    return llama.detokenize([token], special=True).decode("utf-8", "replace")


ENGINES = EngineCache()
atexit.register(ENGINES.close_all)


def perf_counters(llama: Any) -> dict[str, float] | None:
    """llama.cpp's own counters for the last generation (None if unavailable)."""
    llama_cpp = import_llama_cpp()
    ctx = getattr(getattr(llama, "_ctx", None), "ctx", None)
    if ctx is None or not hasattr(llama_cpp, "llama_perf_context"):
        return None
    data = llama_cpp.llama_perf_context(ctx)
    return {name: getattr(data, name) for name in ("t_p_eval_ms", "t_eval_ms", "n_p_eval", "n_eval")}


def reset_perf(llama: Any) -> None:
    llama_cpp = import_llama_cpp()
    ctx = getattr(getattr(llama, "_ctx", None), "ctx", None)
    if ctx is not None and hasattr(llama_cpp, "llama_perf_context_reset"):
        llama_cpp.llama_perf_context_reset(ctx)
