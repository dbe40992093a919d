"""Python-style calls read from source into ToolCalls, for every family that writes them.

``pythonic`` reads ``[f(a=1)]`` lists; Hermes, Llama, Sarashina, MiniMax and
the history display read the same syntax inside their own markup. What they
share lives here: where a bracketed list ends, how a list is read (strictly,
then salvaged, then as the model meant it), and how a call's arguments are
mapped onto the offered tool's parameters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from utp.parsers.base import ParseContext
from utp.parsers.familykit import make_call
from utp.parsers.listsalvage import salvage_items
from utp.parsers.names import resolve_name
from utp.parsers.pylenient import read_lenient_calls
from utp.parsers.pyliteral import CallFailure, LiteralError, RawCall, parse_calls, salvage_calls
from utp.parsers.textscan import find_forward
from utp.types import Diagnostic, Tool, ToolCall

#: a call list longer than this is not parsed (ast on megabytes of brackets is slow and pointless)
MAX_SPAN = 256 * 1024
_BRACKET_OR_QUOTE = re.compile(r"[\"'()\[\]{}]")
_DOUBLE_BODY = re.compile(r'(?:[^"\\]|\\.)*', re.S)
_SINGLE_BODY = re.compile(r"(?:[^'\\]|\\.)*", re.S)

_CLOSING = {"[": "]", "(": ")", "{": "}"}


def bracket_end(text: str, start: int, limit: int) -> int:
    """Index just past the bracket matching ``text[start]``; -1 at the end of text, -2 past ``limit``.

    Quotes are honoured (a ``]`` inside a string does not close anything).
    The scan jumps between brackets and quotes with a compiled pattern and
    skips string bodies in one match, so ordinary text costs C speed. When
    the bracket that brings the count back to zero is of another kind than
    the opener (``[f(a=1))]``: a small model's stray ``)``), the opener's own
    closer right after it (past blanks and closers only) ends the span: the
    reader then drops the stray one, recorded.
    """
    if find_forward(text, _CLOSING[text[start]], start) == -1:
        return -1  # nothing could ever close it: truncated, no scan needed
    depth = 0
    stop = min(len(text), start + limit)
    search = _BRACKET_OR_QUOTE.search
    i = start
    while True:
        found = search(text, i, stop)
        if found is None:
            return -1 if stop == len(text) else -2
        i = found.start()
        ch = text[i]
        if ch in "\"'":
            body = (_DOUBLE_BODY if ch == '"' else _SINGLE_BODY).match(text, i + 1, stop)
            i = body.end() + 1 if body else i + 1
            continue
        depth += 1 if ch in "([{" else -1
        if depth == 0:
            return i + 1 if ch == _CLOSING[text[start]] else _own_closer_after(text, start, i + 1)
        i += 1


#: how far past a closer of the wrong kind the opener's own closer is looked for
_STRAY_RUN = 8


def _own_closer_after(text: str, start: int, end: int) -> int:
    """``end``, or just past the opener's own closer when only blanks and closers stand before it."""
    closer = _CLOSING[text[start]]
    for at in range(end, min(len(text), end + _STRAY_RUN)):
        if text[at] == closer:
            return at + 1
        if text[at] not in ")]} \t":
            break
    return end


def read_calls(
    source: str, one_per_line: bool = False, lenient: Callable[[str], bool] | None = None
) -> tuple[list[RawCall], list[str], list[CallFailure]]:
    """:func:`parse_calls`, keeping the readable calls of a well-formed list when some are not.

    With ``lenient``, a list Python refuses as a whole is then read as the model
    meant it (:mod:`utp.parsers.pylenient`: unescaped quotes, bare words), when
    ``lenient`` accepts every name read: callers pass it where a marker or an
    offered tool's name already says these are calls. Raises
    :class:`LiteralError` (the whole list's error) when nothing can be read.
    """
    try:
        raws, repairs = parse_calls(source, one_per_line=one_per_line)
    except LiteralError:
        salvaged = salvage_calls(source, one_per_line=one_per_line) or (None if one_per_line else salvage_items(source))
        if salvaged is not None:
            return salvaged
        read = read_lenient_calls(source, one_per_line=one_per_line) if lenient is not None else None
        if read is None or not all(lenient(raw.name) for raw in read[0]):  # type: ignore[misc]
            raise
        return read[0], read[1], []
    return raws, repairs, []


def any_name(name: str) -> bool:
    """Every name will do: a call marker (``<|tool_call_start|>``) already says these are calls."""
    return True



def names_offered_tool(name: str, ctx: ParseContext) -> bool:
    """An offered tool, or what the composite will correct to one (case, spacing, ≤ 2 edits)."""
    return ctx.tool(name) is not None or resolve_name(name, ctx).known


def offered_tool(name: str, ctx: ParseContext) -> Tool | None:
    """The offered tool ``name`` means, as the composite will resolve it (``default_api.f`` is ``f``)."""
    tool = ctx.tool(name)
    if tool is None and ctx.has_tools:
        match = resolve_name(name, ctx)
        if match.known:
            tool = ctx.tool(match.name)
    return tool


def build_python_calls(
    family: str, raws: list[RawCall], repairs: list[str], raw_text: str, pos: int, ctx: ParseContext
) -> tuple[list[ToolCall], list[Diagnostic]]:
    """ToolCalls from python-style calls, arguments typed by the offered tools (for every family writing them)."""
    diagnostics: list[Diagnostic] = []
    calls = []
    for raw in raws:
        call_repairs = [*repairs, *raw.repairs]
        arguments = arguments_of(raw, offered_tool(raw.name, ctx), call_repairs)
        calls.append(make_call(family, raw.name, arguments, raw_text, pos, call_repairs, diagnostics))
    return calls, diagnostics


def arguments_of(raw: RawCall, tool: Tool | None, repairs: list[str]) -> dict[str, Any]:
    """Keyword arguments, plus positional ones mapped onto the tool's parameter order.

    One JSON object as the only argument (``get_weather({"city": "Paris"})``)
    is the arguments themselves, unless the tool takes exactly one parameter
    and it is an object.
    """
    positional, arguments = _unpacked(raw, tool, repairs)
    if not positional:
        return arguments
    if not arguments and len(positional) == 1 and isinstance(positional[0], dict) and not _takes_one_object(tool):
        repairs.append("one object argument read as the arguments")
        return dict(positional[0])
    order = [p for p in (tool.properties if tool else {}) if p not in arguments]
    for index, value in enumerate(positional):
        if index < len(order):
            arguments[order[index]] = value
        else:
            arguments[f"arg{index}"] = value
    if tool is None:
        repairs.append(f"{len(positional)} positional argument(s) kept as arg0.. (tool {raw.name!r} not offered)")
    elif len(positional) > len(order):
        repairs.append(f"{len(positional) - len(order)} positional argument(s) beyond {tool.name!r}'s parameters kept as argN")
    else:
        repairs.append(f"positional argument(s) mapped onto {tool.name!r}'s parameters in schema order")
    return arguments


def _unpacked(raw: RawCall, tool: Tool | None, repairs: list[str]) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments, with Python's ``*args`` / ``**kwargs`` written as keywords spread out.

    ``get_lat_lng(args=["Zurich"])`` (Llama 3.3 through Ollama) means the
    positional ``"Zurich"``, and ``f(kwargs={"a": 1})`` the keyword ``a``, when
    the offered tool has no parameter of that name.
    """
    positional, keywords = list(raw.positional), dict(raw.keywords)
    if tool is None:
        return positional, keywords
    packed_args = keywords.get("args")
    if isinstance(packed_args, list) and not positional and "args" not in tool.properties:
        positional = list(keywords.pop("args"))
        repairs.append(f"'args' list spread as positional arguments ({tool.name!r} has no 'args' parameter)")
    packed_kwargs = keywords.get("kwargs")
    if isinstance(packed_kwargs, dict) and "kwargs" not in tool.properties:
        del keywords["kwargs"]
        keywords = {**packed_kwargs, **keywords}
        repairs.append(f"'kwargs' object spread as keyword arguments ({tool.name!r} has no 'kwargs' parameter)")
    return positional, keywords


def _takes_one_object(tool: Tool | None) -> bool:
    if tool is None or len(tool.properties) != 1:
        return False
    [schema] = tool.properties.values()
    return isinstance(schema, dict) and schema.get("type") == "object"
