"""Arguments written as nested XML elements named by their keys, each tag maybe behind a marker token.

MiniMax-M3 writes ``M<invoke name="f">M<city>Tokyo M</city>M<shipping>M<zip>1M</zip>M</shipping>M</invoke>``
with its marker token ``M`` before every tag; servers that drop special
tokens, and parsers' own fixtures, write the same elements with no marker
inside MiniMax's ``<minimax:tool_call>`` block. :class:`ElementMarkup` says
which marker (``""`` for none) and which closer ends the block around them.

An element holding elements is an object, and a key repeated inside one is a
list. Leaf values are raw text typed by the tool's schema (followed into
nested properties and list items), read as JSON when the schema does not say
and the text is JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from utp.parsers.layout import unindented
from utp.parsers.typedvalues import schema_types, typed_value
from utp.parsers.textscan import ends_inside, find_forward, skip_space

#: a tag still being written at the end of the output
_PARTIAL_TAG = re.compile(r"<[^<>]{0,300}")
#: how deep nested elements are read (deeper is reported, not read)
MAX_DEPTH = 16


class ElementsCut(Exception):
    """The output ended inside the element being read."""


class ElementsBroken(Exception):
    """An element that does not close where its markup says it must."""


@dataclass(frozen=True)
class ElementMarkup:
    """The marker written before every tag (``""``: none) and the closer of the block the elements sit in."""

    mark: str
    block_close: str
    element: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "element", re.compile(re.escape(self.mark) + r"<([A-Za-z_][\w.\-]{0,255})>"))

    def cut_off(self, text: str, cursor: int, closer: str) -> bool:
        """Does the output end at ``cursor``, or inside a tag begun there (the marker, ``closer``, or a tag after the marker)?"""
        if ends_inside(text, cursor, closer, self.mark):
            return True
        return text.startswith(self.mark, cursor) and _PARTIAL_TAG.fullmatch(text, cursor + len(self.mark)) is not None


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


def read_elements(
    markup: ElementMarkup, text: str, cursor: int, closer: str, schema: Any, depth: int = 0, items: bool = False
) -> tuple[list[tuple[str, Any]], int]:
    """The elements from ``cursor`` up to ``closer`` (consumed), as (key, value) pairs in order.

    With ``items`` every element is an item of an array whose items' schema is ``schema``.
    """
    pairs: list[tuple[str, Any]] = []
    while True:
        cursor = skip_space(text, cursor)
        if text.startswith(closer, cursor):
            return pairs, cursor + len(closer)
        element = markup.element.match(text, cursor)
        if element is None:
            if markup.cut_off(text, cursor, closer):
                raise ElementsCut()
            raise ElementsBroken(f"text where an element or {closer} belongs at offset {cursor}")
        key = element.group(1)
        value, cursor = _read_value(markup, text, element.end(), key, schema if items else _child_schema(schema, key), depth)
        pairs.append((key, value))


def as_object(pairs: list[tuple[str, Any]], schema: Any) -> dict[str, Any]:
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


def _read_value(markup: ElementMarkup, text: str, start: int, key: str, schema: Any, depth: int) -> tuple[Any, int]:
    """The value of element ``key`` whose opening tag ends at ``start``, and the index past its closer.

    Elements inside make an object, or a list when the schema says array (or,
    with no schema, when every one of them is an ``<item>``).
    """
    closer = f"{markup.mark}</{key}>"
    body = skip_space(text, start)
    items = _items_schema(schema)
    if markup.element.match(text, body) is not None:
        if depth >= MAX_DEPTH:
            raise ElementsBroken(f"elements nested deeper than {MAX_DEPTH}")
        pairs, end = read_elements(markup, text, body, closer, items if items is not None else schema, depth + 1, items=items is not None)
        if items is not None or (schema is None and all(k == "item" for k, _ in pairs)):
            return [value for _, value in pairs], end
        return as_object(pairs, schema), end
    end = find_forward(text, closer, start)
    if end == -1:
        if find_forward(text, markup.block_close, start) == -1:
            raise ElementsCut()
        raise ElementsBroken(f"<{key}> is not closed by {closer}")
    raw = unindented(text[start:end]).strip()
    if items is not None and not raw.startswith("["):  # one item written straight under the array's key
        return typed_value(raw, items or None, untyped="json"), end + len(closer)
    return typed_value(raw, schema, untyped="json"), end + len(closer)
