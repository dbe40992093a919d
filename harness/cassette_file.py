"""A cassette on disk and how its requests are matched: the file format, its checks, secret redaction and request hashing.

The transports (:mod:`harness.cassettes`) record into and replay from a
:class:`Cassette`; what identifies a request (method, path, canonical body)
and what never reaches a file (secret headers and their values) is decided here,
apart from how bytes move, as vcrpy splits its cassette, matchers and persisters.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from utp.fileio import write_text_atomic
from utp.types import canonical_json


CASSETTE_VERSION = 1
MODES = ("none", "once", "new_episodes", "all")

#: header names whose values never reach a cassette (matched case-insensitively)
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "openai-api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "x-auth-token",
        "x-access-token",
    }
)
REDACTED = "<redacted>"
#: a secret header's value shorter than this is not searched for in the rest of an exchange
#: (a short value would also match ordinary text, and replay would serve it changed)
MIN_SECRET_CHARS = 8
#: response headers that describe one transfer, not the content; dropped on record
HOP_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "date", "content-encoding"})


class CassetteError(Exception):
    """A cassette file that cannot be used (unreadable, bad JSON, missing fields)."""


class CassetteMismatch(Exception):
    """A request the cassette has no answer for (replay must never improvise one)."""

    def __init__(self, message: str, *, request_hash: str, path: Path | None = None):
        super().__init__(message)
        self.request_hash = request_hash
        self.path = path


class CassetteMissing(CassetteMismatch):
    """Replay asked for a cassette file that does not exist."""


def is_secret_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in SECRET_HEADERS or "secret" in lowered or "token" in lowered or lowered.endswith("-key")


def redact_headers(headers: httpx.Headers | dict[str, str]) -> dict[str, str]:
    items = headers.multi_items() if isinstance(headers, httpx.Headers) else list(headers.items())
    return {name.lower(): (REDACTED if is_secret_header(name) else value) for name, value in items}


def secret_values(headers: httpx.Headers) -> set[str]:
    """The credentials a request carries in its secret headers: the whole value and, after an
    auth scheme (``Bearer sk-…``), the key alone. A server or proxy may echo them anywhere."""
    values: set[str] = set()
    for name, value in headers.multi_items():
        if is_secret_header(name):
            values.update(v for v in (value, value.partition(" ")[2]) if len(v) >= MIN_SECRET_CHARS)
    return values


def redact_values(value: Any, secrets: set[str]) -> Any:
    """``value`` (text, or JSON made of dicts, lists and text) with every secret replaced by REDACTED."""
    if isinstance(value, str):
        for secret in sorted(secrets, key=len, reverse=True):  # a whole header value before the key inside it
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {redact_values(k, secrets): redact_values(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_values(item, secrets) for item in value]
    return value


def decode_body(content: bytes) -> Any:
    """The request body as JSON when it is JSON (so key order never changes a hash), else text."""
    if not content:
        return None
    text = content.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def request_hash(method: str, path: str, body: Any) -> str:
    canonical = canonical_json({"method": method.upper(), "path": path, "body": body})
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def request_path(request: httpx.Request) -> str:
    """Path plus query: the host is left out so a cassette replays against any address."""
    return request.url.raw_path.decode("ascii", errors="replace")


# --------------------------------------------------------------------------- the file


_REQUIRED_HEADER = ("cassette_version", "model", "recorded_at", "synthetic")


@dataclass
class Cassette:
    path: Path
    header: dict[str, Any] = field(default_factory=dict)
    exchanges: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: str | Path) -> "Cassette":
        """Read and check a cassette; any defect is a :class:`CassetteError` naming the file."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CassetteError(f"{path}: cannot read cassette: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise CassetteError(f"{path}: cassette is not UTF-8 text: {exc.reason}") from None
        except json.JSONDecodeError as exc:
            raise CassetteError(f"{path}:{exc.lineno}: cassette is not valid JSON: {exc.msg}") from None
        if not isinstance(data, dict):
            raise CassetteError(f"{path}: cassette must be a JSON object with 'header' and 'exchanges'")
        header, exchanges = data.get("header"), data.get("exchanges")
        if not isinstance(header, dict):
            raise CassetteError(f"{path}: missing or invalid 'header' object")
        missing = [k for k in _REQUIRED_HEADER if k not in header]
        if missing:
            raise CassetteError(f"{path}: header is missing {', '.join(missing)}")
        if header["cassette_version"] != CASSETTE_VERSION:
            raise CassetteError(f"{path}: cassette_version {header['cassette_version']!r} is not supported (expected {CASSETTE_VERSION})")
        if header.get("synthetic") and not header.get("synthetic_reason"):
            raise CassetteError(f"{path}: a synthetic cassette must say why (header.synthetic_reason)")
        if not isinstance(exchanges, list):
            raise CassetteError(f"{path}: missing or invalid 'exchanges' list")
        for index, exchange in enumerate(exchanges):
            _check_exchange(path, index, exchange)
            _check_stream_chunks(path, index, exchange)
        return cls(path=path, header=header, exchanges=exchanges)

    def to_dict(self) -> dict[str, Any]:
        return {"header": self.header, "exchanges": self.exchanges}

    def save(self) -> None:
        """Write atomically: a crash mid-write leaves the old cassette, never half a new one."""
        write_text_atomic(self.path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")


def _check_exchange(path: Path, index: int, exchange: Any) -> None:
    where = f"{path}: exchanges[{index}]"
    if not isinstance(exchange, dict):
        raise CassetteError(f"{where}: expected an object")
    request, response = exchange.get("request"), exchange.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise CassetteError(f"{where}: needs 'request' and 'response' objects")
    for key in ("method", "path", "hash"):
        if not isinstance(request.get(key), str):
            raise CassetteError(f"{where}.request.{key}: missing or not a string")
    if not isinstance(response.get("status"), int):
        raise CassetteError(f"{where}.response.status: missing or not an integer")
    chunks = response.get("chunks")
    if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
        raise CassetteError(f"{where}.response.chunks: missing or not a list of strings")
    if not isinstance(response.get("headers", {}), dict):
        raise CassetteError(f"{where}.response.headers: not an object")




def _check_stream_chunks(path: Path, index: int, exchange: dict[str, Any]) -> None:
    """Every recorded stream line must be the JSON the server sent.

    A run whose stream really was malformed errors, and an errored run is
    never written as a cassette, so a line that does not parse here was
    damaged after recording: a cassette error naming the file and line, not a
    ``malformed_stream`` blamed on the server or the library.
    """
    response = exchange["response"]
    if response["status"] >= 400:
        return
    content_type = str((response.get("headers") or {}).get("content-type", ""))
    sse = "event-stream" in content_type
    if not sse and "ndjson" not in content_type:
        return
    for number, chunk in enumerate(response["chunks"]):
        for line in chunk.splitlines():
            text = line.strip()
            if sse:
                if not text.startswith("data:"):
                    continue
                text = text[len("data:"):].strip()
                if text == "[DONE]":
                    continue
            if not text:
                continue
            try:
                json.loads(text)
            except ValueError:
                raise CassetteError(
                    f"{path}:{_line_of(path, chunk)}: exchanges[{index}].response.chunks[{number}] is not the JSON a "
                    "server sends (the cassette was damaged after recording); record it again with RECORD=1"
                ) from None


def _line_of(path: Path, chunk: str) -> int:
    """The line of ``path`` where a chunk's JSON string starts (0 when it cannot be found)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return 0
    where = text.find(json.dumps(chunk, ensure_ascii=False))
    return text.count("\n", 0, where) + 1 if where >= 0 else 0


def new_header(model: str, *, engine: str | None = None, model_digest: str | None = None, recorded_by: str | None = None,
               synthetic: bool = False, synthetic_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    header: dict[str, Any] = {
        "cassette_version": CASSETTE_VERSION,
        "engine": engine,
        "model": model,
        "model_digest": model_digest,
        "recorded_at": None,
        "recorded_by": recorded_by,
        "synthetic": synthetic,
    }
    if synthetic:
        if not synthetic_reason:
            raise ValueError("a synthetic cassette needs a synthetic_reason")
        header["synthetic_reason"] = synthetic_reason
    header.update(extra)
    return header
