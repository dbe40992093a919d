"""Turn what a server said (status, body, broken stream) into a BackendError kind.

The loop and the harness react to the *kind* (a model without tool support is
evaluated with prompt formats; a 503 is retried; a mid-stream parser failure
is scored as a failed turn), so classification lives in one table here rather
than in each backend.
"""

from __future__ import annotations

import json
import re
from typing import Any

from utp.backends.base import BackendError, BackendErrorKind

#: Statuses worth a second try: the server is busy or a proxy hiccuped.
TRANSIENT_STATUSES: frozenset[int] = frozenset({429, 502, 503, 504})

_MISSING_CAPABILITY = re.compile(r"does not support (?P<rest>.*)", re.DOTALL)

#: Missing capability (as Ollama names it) -> kind. Checked in this order, so a
#: model missing both tools and thinking is reported as missing tools.
CAPABILITY_KINDS: tuple[tuple[str, BackendErrorKind], ...] = (
    ("tools", BackendErrorKind.TOOLS_UNSUPPORTED),
    ("thinking", BackendErrorKind.THINKING_UNSUPPORTED),
    ("structured", BackendErrorKind.STRUCTURED_OUTPUT_UNSUPPORTED),  # "does not support structured output"
)

#: Replies (any error status) refusing a reply schema: llama-server's own messages
#: (an older server rejects the ``json_schema`` type with a 500, a schema its
#: converter cannot turn into a grammar is a 400) and servers that name the field.
STRUCTURED_OUTPUT_REFUSALS: tuple[re.Pattern[str], ...] = (
    re.compile(r"JSON schema conversion failed", re.I),
    re.compile(r"response_format type must be one of", re.I),
    re.compile(r"\b(response_format|json_schema|structured output)\b.{0,60}\b(not supported|unsupported)\b", re.I | re.S),
)

#: Exact statuses with a meaning of their own; the rest go by class (4xx/5xx).
STATUS_KINDS: dict[int, BackendErrorKind] = {
    404: BackendErrorKind.MODEL_NOT_FOUND,
}

#: Status class -> kind, for statuses not in STATUS_KINDS.
STATUS_CLASS_KINDS: dict[int, BackendErrorKind] = {
    4: BackendErrorKind.BAD_REQUEST,
    5: BackendErrorKind.SERVER_ERROR,
}


def missing_capabilities(message: str) -> list[str]:
    """Capabilities named in Ollama's "<model> does not support X" error.

    Several missing capabilities come newline-joined by Go's ``errors.Join``:
    ``"m does not support completion\\ntools"``; every line after the first
    is a bare capability name (or another "does not support X" sentence).
    """
    match = _MISSING_CAPABILITY.search(message)
    if not match:
        return []
    names: list[str] = []
    for line in match.group("rest").splitlines():
        line = line.strip()
        inner = _MISSING_CAPABILITY.search(line)
        if inner:
            line = inner.group("rest").strip()
        if line:
            names.append(line.split()[0].strip("\"'.,").lower())
    return names


def error_message_from_body(text: str) -> str:
    """The human message inside an Ollama or OpenAI error body (or the body itself)."""
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip() or "(empty body)"
    return error_message_from_payload(body) or text.strip()


def error_message_from_payload(body: Any) -> str | None:
    """``{"error": "..."}`` (Ollama), ``{"error": {"message": ...}}`` (OpenAI),
    or any key starting with ``error`` (Ollama v0.11.3 streamed
    ``{"error parsing tool call": "..."}``). None when the object is no error."""
    if not isinstance(body, dict):
        return None
    for key, value in body.items():
        if not isinstance(key, str) or not key.startswith("error"):
            continue
        if value is None:
            continue
        if isinstance(value, dict):
            detail = value.get("message") or json.dumps(value)
            kind = value.get("type")
            return f"{detail} [{kind}]" if kind else str(detail)
        return str(value) if key == "error" else f"{key}: {value}"
    return None


def classify_status(status: int, message: str, *, where: str) -> BackendError:
    """The BackendError for an HTTP error reply; ``where`` names URL and model."""
    kind: BackendErrorKind | None = None
    if 400 <= status < 500:
        missing = missing_capabilities(message)
        kind = next((k for cap, k in CAPABILITY_KINDS if cap in missing), None)
    if kind is None and status >= 400 and any(p.search(message) for p in STRUCTURED_OUTPUT_REFUSALS):
        kind = BackendErrorKind.STRUCTURED_OUTPUT_UNSUPPORTED
    if kind is None:
        kind = STATUS_KINDS.get(status) or STATUS_CLASS_KINDS.get(status // 100, BackendErrorKind.SERVER_ERROR)
    return BackendError(kind, f"{where}: {message}", status=status, transient=status in TRANSIENT_STATUSES)


def stream_error(message: str, *, where: str, chunk_index: int) -> BackendError:
    return BackendError(
        BackendErrorKind.STREAM_ERROR,
        f"{where}: server reported an error in stream chunk {chunk_index}: {message}",
    )


def malformed_stream(reason: str, *, where: str) -> BackendError:
    return BackendError(BackendErrorKind.MALFORMED_STREAM, f"{where}: {reason}")


def malformed_response(reason: str, *, where: str) -> BackendError:
    return BackendError(BackendErrorKind.MALFORMED_RESPONSE, f"{where}: {reason}")


#: httpx exception type -> (kind, transient, description). Looked up along the MRO.
def _exception_table() -> dict[type, tuple[BackendErrorKind, bool, str]]:
    import httpx

    return {
        httpx.ConnectTimeout: (BackendErrorKind.TIMEOUT, True, "timed out connecting"),
        httpx.ConnectError: (BackendErrorKind.CONNECT_ERROR, True, "cannot connect"),
        httpx.ReadTimeout: (BackendErrorKind.TIMEOUT, True, "timed out waiting for the server"),
        httpx.WriteTimeout: (BackendErrorKind.TIMEOUT, True, "timed out sending the request"),
        httpx.PoolTimeout: (BackendErrorKind.TIMEOUT, True, "timed out waiting for a connection"),
        httpx.TimeoutException: (BackendErrorKind.TIMEOUT, True, "timed out"),
        httpx.RemoteProtocolError: (BackendErrorKind.MALFORMED_STREAM, False, "connection closed mid-response"),
        httpx.ReadError: (BackendErrorKind.MALFORMED_STREAM, False, "connection broke mid-response"),
        httpx.WriteError: (BackendErrorKind.CONNECT_ERROR, True, "connection broke while sending"),
        httpx.UnsupportedProtocol: (BackendErrorKind.CONNECT_ERROR, False, "unsupported URL"),
        httpx.TransportError: (BackendErrorKind.CONNECT_ERROR, False, "transport failure"),
    }


_EXCEPTIONS: dict[type, tuple[BackendErrorKind, bool, str]] | None = None


def classify_exception(exc: BaseException, *, where: str) -> BackendError:
    """The BackendError for an httpx transport exception."""
    global _EXCEPTIONS
    if _EXCEPTIONS is None:
        _EXCEPTIONS = _exception_table()
    for cls in type(exc).__mro__:
        entry = _EXCEPTIONS.get(cls)
        if entry:
            kind, transient, what = entry
            detail = str(exc) or type(exc).__name__
            return BackendError(kind, f"{where}: {what} ({detail})", transient=transient)
    return BackendError(BackendErrorKind.CONNECT_ERROR, f"{where}: {type(exc).__name__}: {exc}")

