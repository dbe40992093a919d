"""Calls a server already parsed: the ``tool_calls`` field, in every shape it comes in.

Ollama's ``/api/chat`` gives ``{"function": {"name", "arguments": {...}}}``
with object arguments; OpenAI-compatible servers give arguments as a JSON
*string* (sometimes encoded twice, sometimes invalid), plus ids; SDKs hand
over objects with the same attributes; Anthropic-style blocks use ``input``.
All of them become :class:`ToolCall` with ``format="native"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from utp.numbers import safe_repr
from utp.parsers.callshape import build_call, unparseable
from utp.response import get_field
from utp.types import Diagnostic, ToolCall

FORMAT = "native"
_ARG_FIELDS = ("arguments", "parameters", "input", "args")


def parse_native_calls(items: list[Any]) -> tuple[list[ToolCall], list[Diagnostic]]:
    """Read every native call; a malformed item becomes a diagnostic, never an exception."""
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    for index, item in enumerate(items):
        try:
            call, diags = parse_native_call(item)
        except Exception as exc:  # an SDK object whose properties raise
            call, diags = None, [unparseable(FORMAT, f"tool_calls[{index}]: {type(exc).__name__}: {exc}", safe_repr(item))]
        diagnostics.extend(diags)
        if call is not None:
            calls.append(call)
    return calls, diagnostics


def parse_native_call(item: Any) -> tuple[ToolCall | None, list[Diagnostic]]:
    function = get_field(item, "function")
    holder = function if function is not None and not isinstance(function, str) else item
    name = get_field(holder, "name")
    if name is None and isinstance(function, str):
        name = function
    if not isinstance(name, str) or not name.strip():
        return None, [unparseable(FORMAT, "native tool call without a name", _describe(item))]
    raw_args: Any = None
    for field in _ARG_FIELDS:
        raw_args = get_field(holder, field)
        if raw_args is not None:
            break
    if raw_args is not None and not isinstance(raw_args, (str, Mapping, list)):
        raw_args = _object_to_dict(raw_args)
    if isinstance(raw_args, Mapping) and not isinstance(raw_args, dict):
        raw_args = dict(raw_args)
    call_id = get_field(item, "id")
    return build_call(name.strip(), raw_args, FORMAT, item, call_id=call_id if isinstance(call_id, str) else None)


def _object_to_dict(value: Any) -> Any:
    for method in ("model_dump", "dict", "to_dict"):
        fn = getattr(value, method, None)
        if callable(fn):
            return fn()
    return getattr(value, "__dict__", value)


def _describe(item: Any) -> str:
    return safe_repr(item)[:300]
