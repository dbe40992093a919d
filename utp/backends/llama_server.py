"""llama.cpp's own OpenAI-compatible server, started and stopped by UTP.

``llamacpp:NAME`` runs one of the embedded models (:data:`LOCAL_MODELS`)
behind a real ``llama-server --jinja`` on a free loopback port: the model's
chat template renders the tools and llama.cpp's own parser reads calls out
of the output into ``tool_calls`` — the other half of what local servers do,
next to the embedded stand-in that leaves calls in ``content``.

The server is started on the first request (replay never starts one), shared
by every request for the same model and settings in the process, and
stopped when the process ends, also after Ctrl-C or an error (``atexit``, and
on Linux the kernel's parent-death signal if the process is killed).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from utp.backends.base import BackendError, BackendErrorKind, ModelInfo
from utp.backends.gguf_meta import template_renders_tools
from utp.backends.models import LocalModel, file_sha256, get_local_model
from utp.backends.openai_compat import OpenAICompatBackend

#: the base URL requests are addressed to; the transport sends them to the real port
LLAMA_SERVER_BASE_URL = "http://llama-server.local"
BUILD_HINT = "run `make llama-server` (builds llama.cpp's server from the llama-cpp-python sdist with portable CPU flags, about 15-30 minutes on 2 cores)"
START_TIMEOUT_S = 300.0
#: what the server's provenance says about where calls are parsed
SERVER_TOOL_PARSER = "llama.cpp --jinja (the server's own parser fills tool_calls)"


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "utp" / "llama-server"


def server_binary() -> Path:
    """``$UTP_LLAMA_SERVER``, else the binary ``make llama-server`` recorded; a missing one says how to build it."""
    explicit = os.environ.get("UTP_LLAMA_SERVER")
    candidate = Path(explicit) if explicit else cache_root() / "bin" / "llama-server"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    where = f"$UTP_LLAMA_SERVER={explicit}" if explicit else str(candidate)
    raise BackendError(BackendErrorKind.NOT_INSTALLED, f"llama-server is not built ({where} is missing): {BUILD_HINT}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the server gets SIGTERM if UTP dies without running atexit (SIGKILL, OOM).

    The kernel sends it when the *thread* that started the child exits, so
    servers are started from :data:`_SPAWNER`'s one thread, which lives as
    long as the process (a worker of asyncio's pool may be retired earlier).
    """
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="utp-llama-server-spawner")


@dataclass(frozen=True)
class ServerSettings:
    gguf: Path
    alias: str
    n_threads: int | None = None
    n_ctx: int = 4096

    def command(self, binary: Path, port: int) -> list[str]:
        args = [str(binary), "--model", str(self.gguf), "--alias", self.alias, "--jinja", "--host", "127.0.0.1",
                "--port", str(port), "--ctx-size", str(self.n_ctx), "--parallel", "1", "--no-webui"]
        if self.n_threads:
            args += ["--threads", str(self.n_threads), "--threads-batch", str(self.n_threads)]
        return args


@dataclass
class LlamaServerProcess:
    """One running ``llama-server``; :meth:`start` returns once ``/health`` answers 200."""

    settings: ServerSettings
    binary: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    started_s: float = field(default=0.0)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = START_TIMEOUT_S) -> "LlamaServerProcess":
        self.port = free_port()
        log_dir = cache_root() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"{self.settings.alias}-{self.port}.log"
        began = time.perf_counter()
        with self.log_path.open("wb") as log:
            self.process = _SPAWNER.submit(
                subprocess.Popen, self.settings.command(self.binary, self.port), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, preexec_fn=_die_with_parent if os.name == "posix" else None,
            ).result()
        try:
            self._wait_healthy(timeout_s)
        except BaseException:
            self.stop()
            raise
        self.started_s = time.perf_counter() - began
        return self

    def _wait_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        assert self.process is not None
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise BackendError(BackendErrorKind.CONNECT_ERROR, f"llama-server exited with {_exit_text(code)} while starting: {self.log_tail()}")
            try:
                if httpx.get(f"{self.base_url}/health", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass  # not listening yet, or still loading the model (503)
            time.sleep(0.25)
        raise BackendError(BackendErrorKind.TIMEOUT, f"llama-server did not become healthy within {timeout_s:.0f} s: {self.log_tail()}")

    def log_tail(self, lines: int = 6) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path else ""
        except OSError:
            text = ""
        tail = " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])
        return f"{tail or 'no output'} (log: {self.log_path})"

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


class ServerPool:
    """One server per model and settings per process, all stopped at exit."""

    def __init__(self) -> None:
        self._servers: dict[ServerSettings, LlamaServerProcess] = {}
        self._lock = threading.Lock()

    def get(self, settings: ServerSettings) -> LlamaServerProcess:
        with self._lock:
            server = self._servers.get(settings)
            if server is not None and server.process is not None and server.process.poll() is None:
                return server
            server = LlamaServerProcess(settings, server_binary()).start()
            self._servers[settings] = server
            return server

    def running(self) -> list[LlamaServerProcess]:
        with self._lock:
            return [s for s in self._servers.values() if s.process is not None and s.process.poll() is None]

    def stop_all(self) -> None:
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.stop()


SERVERS = ServerPool()
atexit.register(SERVERS.stop_all)


class LlamaServerTransport(httpx.AsyncBaseTransport):
    """Sends requests addressed to :data:`LLAMA_SERVER_BASE_URL` to a ``llama-server`` it starts on first use."""

    backend_kind = "llama-server"

    def __init__(self, model: str | LocalModel, *, n_threads: int | None = None, n_ctx: int = 4096, pool: ServerPool | None = None):
        self.spec = model if isinstance(model, LocalModel) else get_local_model(model)
        self.n_threads = n_threads
        self.n_ctx = n_ctx
        self._pool = pool or SERVERS
        self._http = httpx.AsyncHTTPTransport()

    def settings(self) -> ServerSettings:
        return ServerSettings(Path(self.spec.loader()), self.spec.name, self.n_threads, self.n_ctx)

    def _server(self) -> LlamaServerProcess:
        server_binary()  # a missing build is named before the GGUF is looked for
        return self._pool.get(self.settings())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        server = await asyncio.to_thread(self._server)
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=server.port)
        request.headers["host"] = f"127.0.0.1:{server.port}"
        return await self._http.handle_async_request(request)

    async def aclose(self) -> None:
        """The server keeps running for the process's other requests (stopped at exit)."""
        await self._http.aclose()


class LlamaServerBackend(OpenAICompatBackend):
    """The OpenAI-compatible client, plus what ``/props`` says about the server and its template."""

    kind = "llama-server"

    def __init__(self, spec: LocalModel, **kw: Any) -> None:
        super().__init__(LLAMA_SERVER_BASE_URL, **kw)
        self.spec = spec

    async def _props(self) -> dict[str, Any]:
        body = await self._get_json("/props")
        return body if isinstance(body, dict) else {}

    async def version(self) -> str:
        return f"llama-server {(await self._props()).get('build_info') or 'unknown build'}"

    async def show(self, model: str) -> ModelInfo:
        info = await super().show(model)
        props = await self._props()
        template = props.get("chat_template") if isinstance(props.get("chat_template"), str) else None
        info.template = template
        info.engine, info.engine_version = "llama-server", await self.version()
        info.digest = self.spec.sha256 or _live_digest(self.spec)
        info.capabilities = ["completion", "tools"] if template and template_renders_tools(template) else ["completion"]
        info.parser = SERVER_TOOL_PARSER
        info.details = {**info.details, "family": self.spec.family, "parameter_size": self.spec.parameter_size,
                        "quantization_level": self.spec.quantization_level, "total_slots": props.get("total_slots")}
        return info


def _live_digest(spec: LocalModel) -> str | None:
    try:
        return file_sha256(spec.loader())
    except (BackendError, OSError):
        return None

