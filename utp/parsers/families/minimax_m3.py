"""MiniMax-M3 calls: XML elements, each tag behind MiniMax's ``]<]minimax[>[`` marker token.

vLLM's and llama.cpp's MiniMax-M3 parsers read (the marker written ``M``)::

    M<tool_call>
    M<invoke name="NAME">M<city>Tokyo M</city>M<shipping>M<zip>018956M</zip>M</shipping>M</invoke>
    M</tool_call>

Each argument is an element named after its key; an element holding
elements is an object, and a key repeated inside one is a list. Leaf values
are raw text typed by the tool's schema (followed into nested properties and
list items), read as JSON when the schema does not say and the text is JSON.
Invokes the output wrote whole before it was cut off run; the cut one is
reported. Reasoning comes in ``<mm:think>…</mm:think>`` (``REASONING_TAGS``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import make_call, render_value, unreadable
from utp.parsers.layout import unindented
from utp.parsers.pyliteral import schema_types, typed_value
from utp.parsers.textscan import ends_inside, find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

MARK = "]<]minimax[>["
OPEN, CLOSE = f"{MARK}<tool_call>", f"{MARK}</tool_call>"
INVOKE_END = f"{MARK}</invoke>"
_INVOKE = re.compile(re.escape(MARK) + r"""<invoke\s+name\s*=\s*(["'])([^"'\n<>]{1,256})\1\s*>""")
#: an element's opening tag after the marker: the argument's key
_ELEMENT = re.compile(re.escape(MARK) + r"<([A-Za-z_][\w.\-]{0,255})>")
#: a tag still being written at the end of the output
_PARTIAL_TAG = re.compile(r"<[^<>]{0,300}")
#: how deep nested elements are read (deeper is reported, not read)
MAX_DEPTH = 16


class _Cut(Exception):
    """The output ended inside the element being read."""


class _Broken(Exception):
    """An element that does not close where its markup says it must."""


def _cut_off(text: str, cursor: int, closer: str) -> bool:
    """Does the output end at ``cursor``, or inside a tag begun there (the marker, ``closer``, or a tag after the marker)?"""
    if ends_inside(text, cursor, closer, MARK):
        return True
    return text.startswith(MARK, cursor) and _PARTIAL_TAG.fullmatch(text, cursor + len(MARK)) is not None


def _child_schema(schema: Any, key: str) -> Any:
    """The schema of ``key`` inside an object schema."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return properties.get(key) if isinstance(properties, dict) else None


def _items_schema(schema: Any) -> Any | None:
    """The items' schema when ``schema`` allows an array (``{}`` for any items), else None."""
    if not isinstance(schema, dict) or "array" not in schema_types(schema):
        return None
    for option in (schema, *(o for key in ("anyOf", "oneOf") for o in schema.get(key) or () if isinstance(o, dict))):
        if "array" in schema_types(option) and isinstance(option.get("items"), dict):
            return option["items"]
    return {}


def _read_elements(text: str, cursor: int, closer: str, schema: Any, depth: int, items: bool = False) -> tuple[list[tuple[str, Any]], int]:
    """The elements from ``cursor`` up to ``closer`` (consumed), as (key, value) pairs in order.

    With ``items`` every element is an item of an array whose items' schema is ``schema``.
    """
    pairs: list[tuple[str, Any]] = []
    while True:
        cursor = skip_space(text, cursor)
        if text.startswith(closer, cursor):
            return pairs, cursor + len(closer)
        element = _ELEMENT.match(text, cursor)
        if element is None:
            if _cut_off(text, cursor, closer):
                raise _Cut()
            raise _Broken(f"text where an element or {closer} belongs at offset {cursor}")
        key = element.group(1)
        value, cursor = _read_value(text, element.end(), key, schema if items else _child_schema(schema, key), depth)
        pairs.append((key, value))


def _as_object(pairs: list[tuple[str, Any]], schema: Any) -> dict[str, Any]:
    """Pairs as an object: a key written again, or one the schema calls an array, holds a list."""
    values: dict[str, Any] = {}
    repeated: set[str] = set()
    for key, value in pairs:
        if key in values:
            if key not in repeated:
                values[key] = [values[key]]
                repeated.add(key)
            values[key].append(value)
        elif _items_schema(_child_schema(schema, key)) is not None and not isinstance(value, list):
            values[key] = [value]
            repeated.add(key)
        else:
            values[key] = value
    return values


def _read_value(text: str, start: int, key: str, schema: Any, depth: int) -> tuple[Any, int]:
    """The value of element ``key`` whose opening tag ends at ``start``, and the index past its closer.

    Elements inside make an object, or a list when the schema says array (or,
    with no schema, when every one of them is an ``<item>``).
    """
    closer = f"{MARK}</{key}>"
    body = skip_space(text, start)
    items = _items_schema(schema)
    if _ELEMENT.match(text, body) is not None:
        if depth >= MAX_DEPTH:
            raise _Broken(f"elements nested deeper than {MAX_DEPTH}")
        pairs, end = _read_elements(text, body, closer, items if items is not None else schema, depth + 1, items=items is not None)
        if items is not None or (schema is None and all(k == "item" for k, _ in pairs)):
            return [value for _, value in pairs], end
        return _as_object(pairs, schema), end
    end = find_forward(text, closer, start)
    if end == -1:
        if find_forward(text, CLOSE, start) == -1:
            raise _Cut()
        raise _Broken(f"<{key}> is not closed by {closer}")
    raw = unindented(text[start:end]).strip()
    if items is not None and not raw.startswith("["):  # one item written straight under the array's key
        return typed_value(raw, items or None, untyped="json"), end + len(closer)
    return typed_value(raw, schema, untyped="json"), end + len(closer)


@register_family
class MinimaxM3Family(CallFamily):
    name = "minimax_m3"
    #: after the block's opener: an invoke, the closer, or the end of the text (in a tag: truncated);
    #: the marker alone is no reason to look (a flood of openers never reaches ``extract``)
    declared_triggers = static_triggers((OPEN,), {OPEN: rf"\s*+(?:{re.escape(MARK)}(?:<invoke\s|</tool_call>|<[^<>]{{0,300}}+\Z)|\S{{0,40}}+\Z)"})
    aliases = ("minimax3", "minimax_m3_xml")
    summary = 'MiniMax-M3: ]<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<a>1]<]minimax[>[</a>…'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        cursor = skip_space(text, pos + len(OPEN))
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        while True:
            if text.startswith(CLOSE, cursor):
                return Extraction(end=cursor + len(CLOSE), calls=calls, diagnostics=diagnostics, final=True)
            invoke = _INVOKE.match(text, cursor)
            if invoke is None:
                if _cut_off(text, cursor, CLOSE):
                    return unreadable(self.name, text, cursor if calls else pos, len(text), "output ended inside the call block",
                                      kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics)
                if not calls:
                    return None
                close = find_forward(text, CLOSE, cursor)
                end = len(text) if close == -1 else close + len(CLOSE)
                return unreadable(self.name, text, cursor, end, "text where an invoke belongs", calls=calls, diagnostics=diagnostics)
            name = invoke.group(2).strip()
            tool = ctx.tool(name)
            schema = tool.parameters if tool is not None else None
            try:
                pairs, after = _read_elements(text, invoke.end(), INVOKE_END, schema, 0)
            except _Cut:
                return unreadable(self.name, text, cursor if calls else pos, len(text), f"output ended inside the invoke of {name!r}",
                                  kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics)
            except _Broken as exc:
                close = find_forward(text, CLOSE, cursor)
                end = len(text) if close == -1 else close + len(CLOSE)
                return unreadable(self.name, text, cursor, end, f"invoke of {name!r}: {exc}", calls=calls, diagnostics=diagnostics)
            calls.append(make_call(self.name, name, _as_object(pairs, schema), text[cursor:after], cursor, [], diagnostics))
            cursor = skip_space(text, after)

    def render(self, calls: Sequence[ToolCall]) -> str:
        """One element per argument; objects and lists as JSON text (read back as JSON)."""
        invokes = "".join(
            f'{MARK}<invoke name="{call.name}">'
            + "".join(f"{MARK}<{key}>{render_value(value)}{MARK}</{key}>" for key, value in call.arguments.items())
            + f"{INVOKE_END}\n"
            for call in calls
        )
        return f"{OPEN}\n{invokes}{CLOSE}"
