"""How a prompt lists the offered tools, per call family.

A model follows a listing best in the shape its own training data used:
Qwen/Hermes templates put one JSON definition per line inside ``<tools>``;
models taught Python-style calls read Python signatures; everything else gets
one compact JSON object per line (name, description, parameters), which is
short and leaves no doubt about argument names and types.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from utp.adapters.openai import function_tool
from utp.adapters.schema import object_schema
from utp.types import Tool


def json_listing(tools: Sequence[Tool]) -> str:
    return "\n".join(
        _compact({"name": t.name, "description": t.description, "parameters": object_schema(t.parameters)})
        for t in tools
    )


def hermes_listing(tools: Sequence[Tool]) -> str:
    lines = "\n".join(_compact(function_tool(t)) for t in tools)
    return f"<tools>\n{lines}\n</tools>"


def python_listing(tools: Sequence[Tool]) -> str:
    return "\n".join(python_signature(t) for t in tools)


def python_signature(tool: Tool) -> str:
    """``name(a: str, b: int = 1)`` then the description and per-argument notes, indented."""
    props = tool.properties
    required = [n for n in tool.required if n in props]
    optional = [n for n in props if n not in required]
    parts = [f"{n}: {python_type(props[n])}" for n in required]
    for n in optional:
        default = props[n].get("default") if isinstance(props[n], dict) else None
        annotation = python_type(props[n])
        if default is None and not annotation.endswith("None"):
            annotation += " | None"  # optional with no default: say so the way Python does
        parts.append(f"{n}: {annotation} = {_python_literal(default)}")
    lines = [f"{tool.name}({', '.join(parts)})"]
    if tool.description:
        lines.append(f"    {tool.description.strip()}")
    for n in [*required, *optional]:
        desc = props[n].get("description") if isinstance(props[n], dict) else None
        if isinstance(desc, str) and desc.strip():
            lines.append(f"    {n}: {desc.strip()}")
    return "\n".join(lines)


_PY_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "object": "dict",
    "null": "None",
}


def python_type(schema: Any) -> str:
    """A Python annotation for a JSON Schema, as a model would read it."""
    if not isinstance(schema, dict):
        return "Any"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "Literal[" + ", ".join(_python_literal(v) for v in schema["enum"]) + "]"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(python_type({**schema, "type": k}) for k in kind) or "Any"
    if kind == "array":
        items = schema.get("items")
        return f"list[{python_type(items)}]" if isinstance(items, dict) and items else "list"
    for combinator in ("anyOf", "oneOf"):
        if isinstance(schema.get(combinator), list):
            return " | ".join(python_type(o) for o in schema[combinator]) or "Any"
    return _PY_TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"


def _python_literal(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, default=str)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


#: family name → listing; families not named here get :func:`json_listing`
LISTINGS: dict[str, Callable[[Sequence[Tool]], str]] = {
    "hermes": hermes_listing,
    "pythonic": python_listing,
}


def tool_listing(family: str, tools: Sequence[Tool]) -> str:
    return LISTINGS.get(family, json_listing)(tools)
