"""One view over the many shapes a model response arrives in.

Parsers should not each re-learn that Ollama puts the message under
``message``, OpenAI under ``choices[0].message``, vLLM's reasoning under
``reasoning_content``, Ollama's ``/v1`` under ``reasoning``, and that SDK
objects carry the same fields as attributes. :func:`view_response` does it once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from utp.numbers import integer_text


@dataclass
class ResponseView:
    content: str = ""
    thinking: str = ""
    native_calls: list[Any] = field(default_factory=list)
    finish_reason: str | None = None
    raw: Any = None


def view_response(response: Any) -> ResponseView:
    """Never raises: an unknown shape is read as having no content."""
    if response is None:
        return ResponseView(raw=None)
    if isinstance(response, str):
        return ResponseView(content=response, raw=response)
    if isinstance(response, (bytes, bytearray)):
        return ResponseView(content=bytes(response).decode("utf-8", "replace"), raw=response)
    if isinstance(response, Mapping):
        return _view_mapping(response)
    return _view_object(response)


def _view_mapping(resp: Mapping[str, Any]) -> ResponseView:
    finish = _str_or_none(resp.get("done_reason")) or _str_or_none(resp.get("finish_reason"))
    message: Any = resp
    choices = resp.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        choice = choices[0]
        finish = _str_or_none(choice.get("finish_reason")) or finish
        message = choice.get("message") or choice.get("delta") or {}
    elif isinstance(resp.get("message"), Mapping):
        message = resp["message"]
    if not isinstance(message, Mapping):
        return ResponseView(raw=resp, finish_reason=finish)
    content = _text(message.get("content"))
    thinking = _text(
        message.get("thinking") or message.get("reasoning_content") or message.get("reasoning")
    )
    calls = message.get("tool_calls")
    native = list(calls) if isinstance(calls, list) else []
    if not native:
        native = _tool_use_blocks(message.get("content"))
    legacy = message.get("function_call")  # OpenAI's pre-tools single call
    if not native and isinstance(legacy, Mapping) and legacy.get("name"):
        native = [{"function": legacy}]
    return ResponseView(content=content, thinking=thinking, native_calls=native, finish_reason=finish, raw=resp)


def _view_object(obj: Any) -> ResponseView:
    choices = getattr(obj, "choices", None)
    if isinstance(choices, list) and choices:
        msg = getattr(choices[0], "message", None)
        if msg is not None:
            inner = _view_object(msg)
            inner.finish_reason = _str_or_none(getattr(choices[0], "finish_reason", None))
            inner.raw = obj
            return inner
    msg = getattr(obj, "message", None)
    if msg is not None and not isinstance(msg, str):
        inner = _view_mapping(msg) if isinstance(msg, Mapping) else _view_object(msg)
        inner.raw = obj
        inner.finish_reason = inner.finish_reason or _str_or_none(getattr(obj, "done_reason", None))
        return inner
    calls = getattr(obj, "tool_calls", None)
    native = list(calls) if isinstance(calls, (list, tuple)) else []
    return ResponseView(
        content=_text(getattr(obj, "content", "")),
        thinking=_text(getattr(obj, "thinking", None) or getattr(obj, "reasoning_content", None)),
        native_calls=native or _tool_use_blocks(getattr(obj, "content", None)),
        finish_reason=_str_or_none(getattr(obj, "finish_reason", None) or getattr(obj, "done_reason", None)),
        raw=obj,
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: [{"type": "text", "text": ...}]
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(get_field(part, "text"), str):  # mappings and SDK block objects
                parts.append(get_field(part, "text"))
        return "".join(parts)
    return integer_text(value) if isinstance(value, int) else str(value)  # str() raises past 4,300 digits


def _tool_use_blocks(content: Any) -> list[Any]:
    """Anthropic puts calls in the content list as ``tool_use`` blocks; read them as native calls."""
    if not isinstance(content, list):
        return []
    return [
        {
            "id": get_field(part, "id"),
            "type": "function",
            "function": {"name": get_field(part, "name"), "arguments": get_field(part, "input", None) or {}},
        }
        for part in content
        if get_field(part, "type") == "tool_use" and isinstance(get_field(part, "name"), str)
    ]


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def get_field(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` for mappings, ``obj.key`` for objects."""
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)
