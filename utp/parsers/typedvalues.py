"""Raw text typed by a tool's JSON Schema: ``<parameter=n>42`` is 42 when ``n`` is a number.

Raw-text formats (Qwen3-Coder, Claude-style XML, GLM, MiniMax, Cline) carry
no types; the property's schema does. Containers written as text are read by
:mod:`utp.parsers.pyliteral`'s literal reader, never evaluated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from utp.numbers import read_number
from utp.parsers.pyliteral import LiteralError, parse_literal
from utp.types import json_type_name


def schema_types(schema: Any) -> list[str]:
    """The JSON types a property schema allows, in the order it lists them."""
    if not isinstance(schema, Mapping):
        return []
    declared = schema.get("type")
    types: list[str] = []
    if isinstance(declared, str):
        types.append(declared)
    elif isinstance(declared, list):
        types.extend(t for t in declared if isinstance(t, str))
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                types.extend(t for t in schema_types(option) if t not in types)
    if not types and "enum" in schema and isinstance(schema["enum"], list):
        for value in schema["enum"]:
            name = json_type_name(value)
            if name not in types:
                types.append(name)
    return types


_MISSING = object()


def _as_integer(raw: str) -> Any:
    number = read_number(raw)  # "3.0" is the integer 3; "3.5" is no integer
    if isinstance(number, float):
        number = int(number) if number.is_integer() else None
    return _MISSING if number is None else number


def _as_number(raw: str) -> Any:
    number = read_number(raw)
    return _MISSING if number is None else number


def _as_boolean(raw: str) -> Any:
    return {"true": True, "false": False}.get(raw.strip().lower(), _MISSING)


def _as_null(raw: str) -> Any:
    return None if raw.strip().lower() in ("null", "none") else _MISSING


def _as_container(kind: type) -> Any:
    def convert(raw: str) -> Any:
        try:
            value, _ = parse_literal(raw)
            if isinstance(value, str):  # double-encoded: the container written as a quoted string
                value, _ = parse_literal(value)
        except LiteralError:
            value = _unescaped_container(raw)
        return value if isinstance(value, kind) else _MISSING

    return convert


def _unescaped_container(raw: str) -> Any:
    """A container written with its quotes escaped, as inside a JSON string (``[{\\"id\\": 1}]``)."""
    text = raw.strip()
    if '\\"' not in text or text[:1] not in "[{":
        return _MISSING
    try:
        value, _ = parse_literal(json.loads(f'"{text}"'))
    except (ValueError, RecursionError, LiteralError):
        return _MISSING
    return value


def _as_string(raw: str) -> Any:
    """The text, or the string inside when the whole value is one JSON string (``"Berlin"``):
    models JSON-encode raw-text values by habit, and a string property holds what is inside."""
    text = raw.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return raw
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return raw
    return value if isinstance(value, str) else raw


_CONVERTERS = {
    "string": _as_string,
    "integer": _as_integer,
    "number": _as_number,
    "boolean": _as_boolean,
    "null": _as_null,
    "array": _as_container(list),
    "object": _as_container(dict),
}
#: type names hand-written tool schemas use for JSON Schema's (Python's and other languages' names)
_TYPE_ALIASES = {"float": "number", "double": "number", "int": "integer", "bool": "boolean", "str": "string", "dict": "object", "list": "array"}


#: the JSON words, and the characters every other JSON value starts with: ``San Francisco``
#: is text without the cost of a refused ``json.loads``
_JSON_WORDS = {"true": True, "false": False, "null": None}
_JSON_VALUE_START = frozenset('{["-0123456789')
#: a JSON number, read without the decoder (most untyped values that are JSON are numbers)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:(\.[0-9]+)?([eE][-+]?[0-9]+)?)")


def json_or_text(raw: str) -> Any:
    """A JSON value when ``raw`` is one, a Python list or dict literal, else ``raw`` itself (untyped XML values)."""
    text = raw.strip()
    if not text:
        return raw
    if text in _JSON_WORDS:
        return _JSON_WORDS[text]
    if text[0] not in _JSON_VALUE_START:
        return raw
    number = _JSON_NUMBER.fullmatch(text)
    if number is not None and len(text) < 20:  # json.loads's reading, sooner (long ones go to it)
        return float(text) if number.group(1) or number.group(2) else int(text)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:  # ``{'a': 1}``: the container the model wrote in Python's spelling, as an object property reads it
        value, repairs = parse_literal(text) if text[:1] in "[{" else (None, [])
    except LiteralError:
        return raw
    return value if isinstance(value, (list, dict)) and not repairs else raw


def typed_value(raw: str, schema: Any, *, untyped: str = "string") -> Any:
    """Convert a raw text value by its property schema's type(s), tried in order.

    Raw-text formats (Qwen3-Coder, Claude-style XML, GLM) carry no types; the
    tool's schema says whether ``42`` is a number or a string (Python's type
    names, ``float`` or ``dict``, count as the JSON types they name). ``null``
    for a nullable property is null, and a union with ``string`` tries its
    other types first, as any text would be a string. Without a type (or
    with only type names unknown here) ``untyped`` decides: ``"string"`` keeps
    the text, ``"json"`` reads a JSON value (or a Python list or dict) when the
    text is one. A value no listed type accepts stays text, so
    schema validation reports it rather than this reader guessing.
    """
    if schema is None:  # no tools, or a key the tool does not declare: the common untyped case, first
        return json_or_text(raw) if untyped == "json" else raw
    types = [t for t in schema_types(schema) if _TYPE_ALIASES.get(t, t) in _CONVERTERS]  # a type unknown here says nothing
    if not types:
        return json_or_text(raw) if untyped == "json" else raw
    if "null" in types and _as_null(raw) is None:
        return None  # a nullable value written null: the model's "no value", not the word
    if len(types) > 1 and "string" in types:  # any text is a string: the other types get their say first
        types = [t for t in types if t != "string"] + ["string"]
    for type_name in types:
        convert = _CONVERTERS.get(_TYPE_ALIASES.get(type_name, type_name))
        if convert is None:
            continue
        value = convert(raw)
        if value is not _MISSING:
            return value
    return raw


def property_schema(tool: Any, key: str) -> Any:
    """The schema of ``key`` in a tool's parameters (None when unknown)."""
    if tool is None:
        return None
    return tool.properties.get(key)
