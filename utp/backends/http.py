"""What the HTTP backends share: where the server is, and how to ask it safely.

Retrying is only safe before the caller has seen any of the answer: a second
attempt after half a stream would hand the loop a reply stitched from two
different generations. So :meth:`HttpClientBase._send` retries transient
failures (refused connections, timeouts, 429/502/503/504) while *opening*
the response, and everything after the headers is the caller's, unretried.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from utp.backends.base import BackendError
from utp.backends.errors import (
    classify_exception,
    classify_status,
    error_message_from_body,
    error_message_from_payload,
    malformed_stream,
    stream_error,
)
from utp.numbers import int_or_digits

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: Listen-on-everything addresses a client cannot connect to as such.
_WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]", ""}


def resolve_ollama_host(value: str | None = None) -> str:
    """Base URL from an ``OLLAMA_HOST``-style value, the way Ollama's client reads it.

    ``None`` reads the environment. Accepts ``host``, ``host:port``,
    ``scheme://host[:port][/path]``; without a scheme the port defaults to
    11434, with ``http://``/``https://`` to 80/443 (as Ollama's envconfig
    does). A wildcard listen address (``0.0.0.0``) means "this machine".
    """
    if value is None:
        value = os.environ.get("OLLAMA_HOST", "")
    value = value.strip().strip("\"'").strip()
    if not value:
        return DEFAULT_OLLAMA_URL
    scheme, sep, rest = value.partition("://")
    if not sep:
        scheme, rest = "http", value
        default_port = 11434
    else:
        scheme = scheme.lower()
        default_port = _DEFAULT_PORTS.get(scheme, 11434)
    hostport, _, path = rest.partition("/")
    parts = urlsplit(f"//{hostport}")
    try:
        port = parts.port or default_port
    except ValueError:
        raise ValueError(f"OLLAMA_HOST {value!r}: port is not a number") from None
    host = parts.hostname or ""
    if host in _WILDCARD_HOSTS:
        host = "127.0.0.1"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    path = f"/{path.strip('/')}" if path.strip("/") else ""
    return f"{scheme}://{host}:{port}{path}"


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: attempt n (1-based) waits ``backoff_s * 2**(n-1)``."""

    retries: int = 2
    backoff_s: float = 0.25
    max_backoff_s: float = 4.0

    def delay(self, attempt: int) -> float:
        return min(self.max_backoff_s, self.backoff_s * (2 ** (attempt - 1)))


class HttpClientBase:
    """An httpx client plus the retrying open; subclasses speak one API."""

    kind = "http"

    def __init__(
        self,
        base_url: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | httpx.Timeout = 300.0,
        retries: int = 2,
        backoff_s: float = 0.25,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = RetryPolicy(retries=max(0, retries), backoff_s=backoff_s)
        self.transport = transport
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            transport=transport,
            timeout=timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout),
            headers=dict(headers or {}),
        )
        #: attempts made by the last request (1 = no retry); for provenance and tests
        self.last_attempts = 0

    def where(self, method: str, path: str, model: str | None) -> str:
        target = f"{method} {self.base_url}{path}"
        return f"{target} (model {model!r})" if model else target

    async def _send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        model: str | None = None,
        stream: bool = False,
    ) -> httpx.Response:
        """A successful response (body unread when ``stream``); errors classified.

        The caller must ``aclose()`` a streamed response.
        """
        where = self.where(method, path, model)
        attempt = 0
        while True:
            attempt += 1
            self.last_attempts = attempt
            error = await self._attempt(method, path, json, stream, where)
            if isinstance(error, httpx.Response):
                return error
            if not error.transient or attempt > self.retry.retries:
                if attempt > 1:
                    error.args = (f"{error.args[0]} (after {attempt} attempts)",)
                raise error
            await asyncio.sleep(self.retry.delay(attempt))

    async def _attempt(self, method: str, path: str, body: Any, stream: bool, where: str) -> httpx.Response | BackendError:
        request = self._client.build_request(method, path, json=body)
        try:
            response = await self._client.send(request, stream=stream)
        except httpx.HTTPError as exc:
            return classify_exception(exc, where=where)
        if response.status_code < 400:
            return response
        try:
            text = (await response.aread()).decode("utf-8", "replace")
        except httpx.HTTPError:
            text = ""
        finally:
            await response.aclose()
        return classify_status(response.status_code, error_message_from_body(text), where=where)

    async def _get_json(self, path: str, *, model: str | None = None) -> Any:
        return await self._json_call("GET", path, None, model)

    async def _post_json(self, path: str, body: Any, *, model: str | None = None) -> Any:
        return await self._json_call("POST", path, body, model)

    async def _json_call(self, method: str, path: str, body: Any, model: str | None) -> Any:
        response = await self._send(method, path, json=body, model=model)
        try:
            return loads_reply(response.text)
        except ValueError:
            snippet = response.text[:200]
            raise malformed_stream(f"response is not JSON: {snippet!r}", where=self.where(method, path, model)) from None

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> "HttpClientBase":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


@dataclass
class CollectedStream:
    """Every chunk of a streamed reply, with the client-side clock readings."""

    chunks: list[dict[str, Any]]
    wall_s: float
    ttft_s: float | None


async def collect_stream(
    stream: AsyncIterator[dict[str, Any]],
    has_output: Callable[[dict[str, Any]], bool],
    add: Callable[[dict[str, Any]], None],
) -> CollectedStream:
    """Drain ``stream``, feeding each chunk to ``add``; time to first output token included.

    Both HTTP backends merge chunks differently but time them the same way,
    so a throughput report never mixes two definitions of "first token".
    """
    started = time.perf_counter()
    ttft: float | None = None
    chunks: list[dict[str, Any]] = []
    async for chunk in stream:
        if ttft is None and has_output(chunk):
            ttft = time.perf_counter() - started
        chunks.append(chunk)
        add(chunk)
    return CollectedStream(chunks, time.perf_counter() - started, ttft)


def loads_reply(text: str) -> Any:
    """A server's JSON; an integer past Python's 4,300-digit limit is kept as its digits (a
    model's number a server passed on), which validation then reports, not "not JSON"."""
    return json.loads(text, parse_int=int_or_digits)


def decode_stream_object(text: str, index: int, where: str, unit: str) -> dict[str, Any]:
    """One streamed JSON object (an NDJSON line or an SSE event's data), or a classified error.

    A server that reports a failure mid-stream does so inside the stream
    (``{"error": ...}``, HTTP status already sent), so that is checked here too.
    """
    try:
        chunk = loads_reply(text)
    except ValueError:
        raise malformed_stream(f"{unit} {index} is not JSON: {text[:200]!r}", where=where) from None
    if not isinstance(chunk, dict):
        raise malformed_stream(f"{unit} {index} is not a JSON object: {text[:200]!r}", where=where)
    message = error_message_from_payload(chunk)
    if message is not None:
        raise stream_error(message, where=where, chunk_index=index)
    return chunk
