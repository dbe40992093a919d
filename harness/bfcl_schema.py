"""BFCL's function descriptions as JSON Schema, and its function names as tool names.

BFCL writes parameter types in its own vocabulary (``dict``, ``float``,
``HashMap``, ``any``) and marks optional properties its own way; a model
must see a clean JSON Schema, and a name with dots must become a name the
servers accept. The importer (:mod:`harness.bfcl`) uses these for every item.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any




#: tool names Ollama's and OpenAI's APIs accept
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

#: BFCL type name -> JSON Schema type; ``None`` = no type constraint.
#: Mirrors bfcl_eval's GORILLA_TO_OPENAPI except ``any``, which BFCL turns into
#: "string" for providers that demand a type; JSON Schema can say "anything".
BFCL_TYPES: dict[str, str | None] = {
    "dict": "object",
    "object": "object",
    "HashMap": "object",
    "Hashtable": "object",
    "float": "number",
    "double": "number",
    "number": "number",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "Bigint": "integer",
    "string": "string",
    "String": "string",
    "char": "string",
    "boolean": "boolean",
    "Boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "ArrayList": "array",
    "Array": "array",
    "Queue": "array",
    "Stack": "array",
    "any": None,
    "Any": None,
    "": None,  # one live item declares an empty type: no constraint is the honest reading
    "null": "null",
}

#: BFCL keywords that are not JSON Schema (``optional: true`` on a property
#: duplicates ``required``); dropped so the schema a model sees is clean
_NON_SCHEMA_KEYS = frozenset({"optional"})


class BfclError(Exception):
    """Missing data or an item UTP cannot represent; the message says which and where."""


# --------------------------------------------------------------------------- schema conversion


def to_json_schema(node: Any, where: str = "parameters") -> dict[str, Any]:
    """Turn one BFCL parameter schema (at any depth) into valid JSON Schema.

    ``where`` is the field path used in error messages.
    """
    if not isinstance(node, Mapping):
        raise BfclError(f"{where}: expected a schema object, got {type(node).__name__}")
    schema: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NON_SCHEMA_KEYS:
            continue
        convert = _KEYWORD_CONVERTERS.get(key)
        if convert is None:
            schema[key] = value
        else:
            schema.update(convert(value, f"{where}.{key}"))
    return schema


def _convert_type(value: Any, where: str) -> dict[str, Any]:
    names = value if isinstance(value, list) else [value]
    mapped: list[str] = []
    for name in names:
        if not isinstance(name, str) or name not in BFCL_TYPES:
            known = ", ".join(sorted(BFCL_TYPES))
            raise BfclError(f"{where}: unknown BFCL type {name!r} (known: {known})")
        target = BFCL_TYPES[name]
        if target is None:  # "any" anywhere in a union means no constraint at all
            return {}
        if target not in mapped:
            mapped.append(target)
    return {"type": mapped[0] if len(mapped) == 1 else mapped}


def _convert_properties(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise BfclError(f"{where}: expected a mapping of parameter name to schema")
    return {"properties": {name: to_json_schema(sub, f"{where}.{name}") for name, sub in value.items()}}


def _convert_items(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, list):  # draft-4 tuple syntax; 2020-12 spells it prefixItems
        return {"prefixItems": [to_json_schema(sub, f"{where}[{i}]") for i, sub in enumerate(value)]}
    return {"items": to_json_schema(value, where)}


def _convert_additional(value: Any, where: str) -> dict[str, Any]:
    return {"additionalProperties": to_json_schema(value, where) if isinstance(value, Mapping) else value}


def _convert_required(value: Any, where: str) -> dict[str, Any]:
    # Draft-3 style ``required: true`` on a property is BFCL's "optional: false";
    # JSON Schema only knows the list form on the parent object.
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {"required": list(value)}
    return {}


#: keyword -> converter returning the keywords to put in its place ({} drops it)
_KEYWORD_CONVERTERS: dict[str, Callable[[Any, str], dict[str, Any]]] = {
    "type": _convert_type,
    "properties": _convert_properties,
    "items": _convert_items,
    "additionalProperties": _convert_additional,
    "required": _convert_required,
}


def tool_parameters(parameters: Any, where: str) -> dict[str, Any]:
    """A function's whole ``parameters`` block: always an object schema."""
    schema = to_json_schema(parameters, where)
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema


def tool_name(name: Any, where: str) -> str:
    """BFCL's name with dots replaced, checked against what chat APIs accept."""
    if not isinstance(name, str) or not name:
        raise BfclError(f"{where}: function name must be a non-empty string")
    mapped = name.replace(".", "_")
    if not TOOL_NAME_RE.match(mapped):
        raise BfclError(f"{where}: function name {name!r} is not a valid tool name even with '.' -> '_'")
    return mapped
