"""One deadline per response, and one connection pool shared by every request to a host.

httpx's timeouts are per operation: a read timeout of 300 s restarts with
every byte, so a server that trickles one token a minute is never cut off,
and a reply can take as long as it likes. An evaluation needs the opposite:
each model response (headers *and* the whole streamed body) must finish
within one total deadline, after which it is a classified ``timeout``.

Creating an ``httpx.AsyncClient`` per run also costs ~30 ms (it loads CA
certificates even for ``http://``) and a new connection. :class:`SharedPool`
keeps one real transport per host for a whole evaluation and hands each
backend a view of it that does not close it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx

#: connecting to a server on the same machine or LAN takes milliseconds; a few seconds means nobody is there
DEFAULT_CONNECT_TIMEOUT_S = 5.0
#: one model response, end to end (a large model on a CPU can take minutes for a long answer)
DEFAULT_RESPONSE_DEADLINE_S = 300.0


class _DeadlineStream(httpx.AsyncByteStream):
    """A response body that raises ``httpx.ReadTimeout`` once the response's deadline has passed."""

    def __init__(self, inner: httpx.AsyncByteStream, deadline: float, request: httpx.Request, total_s: float):
        self._inner = inner
        self._deadline = deadline
        self._request = request
        self._total_s = total_s

    def _expired(self) -> httpx.ReadTimeout:
        return httpx.ReadTimeout(
            f"the response did not finish within the {self._total_s:g} s deadline (--timeout)", request=self._request
        )

    async def __aiter__(self) -> AsyncIterator[bytes]:
        iterator = self._inner.__aiter__()
        while True:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise self._expired()
            try:
                chunk = await asyncio.wait_for(iterator.__anext__(), timeout=remaining)
            except StopAsyncIteration:
                return
            except asyncio.TimeoutError:
                raise self._expired() from None
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class DeadlineTransport(httpx.AsyncBaseTransport):
    """Wraps a transport so each response, body included, completes within ``total_s`` seconds.

    ``close_inner=False`` makes it a borrowed view: closing the backend that
    owns it leaves the shared pool open for the next run.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, total_s: float = DEFAULT_RESPONSE_DEADLINE_S,
                 *, close_inner: bool = False) -> None:
        if total_s <= 0:
            raise ValueError(f"a response deadline must be positive (got {total_s})")
        self.inner = inner
        self.total_s = total_s
        self._close_inner = close_inner

    @property
    def backend_kind(self) -> str | None:
        return getattr(self.inner, "backend_kind", None)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.total_s
        try:
            response = await asyncio.wait_for(self.inner.handle_async_request(request), timeout=self.total_s)
        except asyncio.TimeoutError:
            raise httpx.ReadTimeout(
                f"no response headers within the {self.total_s:g} s deadline (--timeout)", request=request
            ) from None
        stream = _DeadlineStream(response.stream, deadline, request, self.total_s)  # type: ignore[arg-type]
        return httpx.Response(
            status_code=response.status_code, headers=response.headers, stream=stream, request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        if self._close_inner:
            await self.inner.aclose()


class SharedPool:
    """One real HTTP transport (connection pool) per evaluation, lent to every backend as a deadline view."""

    def __init__(self, total_s: float = DEFAULT_RESPONSE_DEADLINE_S, connect_s: float = DEFAULT_CONNECT_TIMEOUT_S,
                 inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.total_s = total_s
        self.connect_s = connect_s
        self._inner = inner
        self._owned = inner is None

    def _transport(self) -> httpx.AsyncBaseTransport:
        if self._inner is None:
            self._inner = httpx.AsyncHTTPTransport(retries=0)
        return self._inner

    def lend(self) -> DeadlineTransport:
        return DeadlineTransport(self._transport(), self.total_s, close_inner=False)

    def client_timeout(self) -> httpx.Timeout:
        """The per-operation timeouts a backend's client should send with each request."""
        return httpx.Timeout(self.total_s, connect=self.connect_s)

    async def aclose(self) -> None:
        if self._inner is not None and self._owned:
            await self._inner.aclose()
        self._inner = None


__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DEFAULT_RESPONSE_DEADLINE_S",
    "DeadlineTransport",
    "SharedPool",
]

