"""Record and replay a model server's HTTP exchanges, chunk by chunk.

A cassette lets anyone re-run an evaluation without the model: the parser,
checks and scoring see byte-identical responses, streamed in the same pieces
(NDJSON lines, SSE events) the server sent. Cassettes are httpx transports, so
the real backend code runs on top of them and the embedded model records like
any server.

Replay never touches the network. In mode ``none`` (the CI default) a request
that was not recorded fails loudly, naming its hash and showing a diff against
the closest recorded request: a silent fallback to a live server would make a
"replayed" result mean nothing.

Modes (as in VCR): ``none`` replay only; ``once`` record when the file does not
exist, else replay only; ``new_episodes`` replay what is known, record what is
new; ``all`` re-record everything.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from harness.cassette_file import (
    CASSETTE_VERSION,
    MODES,
    HOP_HEADERS,
    CassetteMismatch,
    CassetteMissing,
    redact_headers,
    secret_values,
    redact_values,
    decode_body,
    request_hash,
    request_path,
    Cassette,
)


# --------------------------------------------------------------------------- chunking


def _splitter(content_type: str) -> bytes | None:
    """The separator ending one logical chunk: NDJSON lines, SSE events, or none (whole body)."""
    lowered = content_type.lower()
    if "ndjson" in lowered or "jsonl" in lowered:
        return b"\n"
    if "event-stream" in lowered:
        return b"\n\n"
    return None


class _RecordingStream(httpx.AsyncByteStream):
    """Passes the server's bytes through as they arrive while cutting them into logical chunks."""

    def __init__(self, inner: httpx.AsyncByteStream, separator: bytes | None, on_done: Any):
        self._inner = inner
        self._separator = separator
        self._pending = b""
        self._chunks: list[str] = []
        self._on_done = on_done
        self._finished = False

    def _cut(self, final: bool) -> None:
        if self._separator is not None:
            while (position := self._pending.find(self._separator)) >= 0:
                end = position + len(self._separator)
                self._chunks.append(self._pending[:end].decode("utf-8", errors="replace"))
                self._pending = self._pending[end:]
        if final and self._pending:
            self._chunks.append(self._pending.decode("utf-8", errors="replace"))
            self._pending = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        complete = False
        try:
            async for piece in self._inner:
                self._pending += piece
                self._cut(final=False)
                yield piece
            complete = True
        finally:
            self._finish(complete)

    def _finish(self, complete: bool) -> None:
        if not self._finished:
            self._finished = True
            self._cut(final=True)
            self._on_done(self._chunks, complete)

    async def aclose(self) -> None:
        self._finish(False)
        await self._inner.aclose()


class _ReplayStream(httpx.AsyncByteStream):
    def __init__(self, chunks: list[str]):
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk.encode("utf-8")
            await asyncio.sleep(0)

    async def aclose(self) -> None:
        return None


# --------------------------------------------------------------------------- transports


class CassetteTransport(httpx.AsyncBaseTransport):
    """Serves from, and records into, ONE cassette file according to ``mode``.

    Errors raised to the caller are also kept in ``failures``: a backend may wrap
    exceptions it does not know, and the runner must still see that a replay
    ran off its cassette.
    """

    def __init__(self, path: str | Path, mode: str = "none", inner: httpx.AsyncBaseTransport | None = None,
                 header: dict[str, Any] | None = None, close_inner: bool = False):
        if mode not in MODES:
            raise ValueError(f"unknown cassette mode {mode!r}; expected one of {', '.join(MODES)}")
        self.path = Path(path)
        self.requested_mode = mode
        exists = self.path.exists()
        self.mode = ("none" if exists else "all") if mode == "once" else mode
        if self.mode != "none" and inner is None:
            raise ValueError(f"cassette mode {mode!r} records, so it needs an inner transport")
        self._inner = inner
        self._close_inner = close_inner
        self.failures: list[CassetteMismatch] = []
        self.recorded = 0
        self.replayed = 0
        self._seen: dict[str, int] = {}
        self._dirty = False
        if self.mode == "all" or not exists:
            self.cassette: Cassette | None = Cassette(self.path, header=dict(header or {}), exchanges=[]) if self.mode != "none" else None
            self._known: list[dict[str, Any]] = []
        else:
            self.cassette = Cassette.load(self.path)
            self._known = list(self.cassette.exchanges)
            if header and self.mode == "new_episodes":
                self.cassette.header.setdefault("model", header.get("model"))

    @property
    def replaying(self) -> bool:
        """True when no request of this transport will reach a live server."""
        return self.mode == "none"

    @property
    def backend_kind(self) -> str | None:
        """What answers behind the cassette ("embedded", "ollama"...), for the backend's provenance."""
        return getattr(self._inner, "backend_kind", None) or self.header.get("backend")

    @property
    def header(self) -> dict[str, Any]:
        return self.cassette.header if self.cassette is not None else {}

    def _recorded(self, digest: str, occurrence: int) -> dict[str, Any] | None:
        matches = [e for e in self._known if e["request"]["hash"] == digest]
        return matches[occurrence] if occurrence < len(matches) else None

    def _mismatch(self, method: str, path: str, body: Any, digest: str, occurrence: int) -> CassetteMismatch:
        if self.cassette is None:
            error: CassetteMismatch = CassetteMissing(
                f"no cassette at {self.path} (replay only): cannot answer {method} {path} (request hash {digest}); "
                "record it first with `utp eval --record`",
                request_hash=digest,
                path=self.path,
            )
            self.failures.append(error)
            return error
        wanted = _pretty({"method": method, "path": path, "body": body})
        closest, ratio = None, -1.0
        for exchange in self._known:
            recorded = exchange["request"]
            candidate = _pretty({"method": recorded["method"], "path": recorded["path"], "body": recorded.get("body")})
            score = difflib.SequenceMatcher(None, candidate, wanted, autojunk=False).ratio()
            if score > ratio:
                closest, ratio = (recorded, candidate), score
        if closest is None:
            detail = "the cassette has no exchanges"
        else:
            diff = difflib.unified_diff(
                closest[1].splitlines(), wanted.splitlines(),
                fromfile=f"recorded {closest[0]['hash'][:12]}", tofile=f"requested {digest[:12]}", lineterm="", n=2,
            )
            lines = list(diff)
            if len(lines) > 80:
                lines = lines[:80] + [f"... ({len(lines) - 80} more diff lines)"]
            detail = "diff against the closest recorded request:\n" + "\n".join(lines)
            if not lines:
                detail = f"the same request was recorded only {occurrence} time(s); this is occurrence {occurrence + 1}"
        error = CassetteMismatch(
            f"{self.path}: request hash {digest} ({method} {path}) is not in the cassette; {detail}",
            request_hash=digest,
            path=self.path,
        )
        self.failures.append(error)
        return error

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        content = await request.aread()
        method, path, body = request.method, request_path(request), decode_body(content)
        digest = request_hash(method, path, body)
        occurrence = self._seen.get(digest, 0)
        self._seen[digest] = occurrence + 1
        if self.mode in ("none", "new_episodes"):
            exchange = self._recorded(digest, occurrence)
            if exchange is not None:
                self.replayed += 1
                response = exchange["response"]
                return httpx.Response(
                    status_code=response["status"],
                    headers=response.get("headers") or {},
                    stream=_ReplayStream(list(response["chunks"])),
                    request=request,
                )
            if self.mode == "none":
                raise self._mismatch(method, path, body, digest, occurrence)
        return await self._record(request, method, path, body, digest)

    async def _record(self, request: httpx.Request, method: str, path: str, body: Any, digest: str) -> httpx.Response:
        assert self._inner is not None and self.cassette is not None
        request.headers["accept-encoding"] = "identity"  # chunks must be the text the client reads
        secrets = secret_values(request.headers)  # the configured key, wherever a server echoes it
        recorded = {"method": method, "path": redact_values(path, secrets), "body": redact_values(body, secrets), "hash": digest,
                    "headers": redact_values(redact_headers(request.headers), secrets)}
        exchange: dict[str, Any] = {"request": recorded, "response": None}
        self.cassette.exchanges.append(exchange)  # slot taken now: order = request order
        self._dirty = True
        try:
            response = await self._inner.handle_async_request(request)
        except BaseException:
            # no response to replay (connection refused, timeout): the backend reports it live
            self.cassette.exchanges.remove(exchange)
            raise
        headers = redact_values({k: v for k, v in redact_headers(response.headers).items() if k not in HOP_HEADERS}, secrets)
        exchange["response"] = {"status": response.status_code, "headers": headers, "chunks": [], "complete": False}
        started = time.perf_counter()

        def done(chunks: list[str], complete: bool) -> None:
            exchange["response"]["chunks"] = redact_values(chunks, secrets)
            exchange["response"]["complete"] = complete
            exchange["response"]["elapsed_s"] = round(time.perf_counter() - started, 6)
            self.recorded += 1

        stream = _RecordingStream(response.stream, _splitter(response.headers.get("content-type", "")), done)  # type: ignore[arg-type]
        return httpx.Response(status_code=response.status_code, headers=response.headers, stream=stream, request=request,
                              extensions=response.extensions)

    def finish(self) -> Path | None:
        """Write the cassette if anything was recorded; returns the path written."""
        if not self._dirty or self.cassette is None:
            return None
        self.cassette.header.setdefault("cassette_version", CASSETTE_VERSION)
        self.cassette.header["recorded_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.cassette.header.setdefault("synthetic", False)
        self.cassette.save()
        self._dirty = False
        return self.path

    async def aclose(self) -> None:
        if self._close_inner and self._inner is not None:
            await self._inner.aclose()


class RecordingTransport(CassetteTransport):
    """Live requests through ``inner``, every exchange recorded (mode ``all``)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, cassette_path: str | Path, header: dict[str, Any] | None = None,
                 close_inner: bool = False):
        super().__init__(cassette_path, "all", inner=inner, header=header, close_inner=close_inner)


class ReplayTransport(CassetteTransport):
    """Recorded exchanges only; no inner transport exists, so nothing can reach the network."""

    def __init__(self, cassette: str | Path | Cassette):
        path = cassette.path if isinstance(cassette, Cassette) else Path(cassette)
        super().__init__(path, "none")
        if isinstance(cassette, Cassette):
            self.cassette = cassette
            self._known = list(cassette.exchanges)


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=str)
