"""Example arguments synthesised from a tool's JSON Schema.

A prompt that shows ``get_weather(city="Paris")`` teaches a small model more
than a paragraph about syntax, but the example must fit the offered tool: a
valid value of the right type for every required argument. Values are
plausible rather than random (a ``city`` gets a city, a ``path`` a file name)
because models copy the shape of what they see, and deterministic so the same
tools always give the same prompt (and the same request hash in cassettes).
"""

from __future__ import annotations

import re
from typing import Any

from utp.types import Tool

#: (fragment of a property name, example value), first match wins
_NAMED_STRINGS: tuple[tuple[str, str], ...] = (
    ("city", "Paris"),
    ("location", "Paris"),
    ("country", "France"),
    ("email", "alice@example.com"),
    ("url", "https://example.com"),
    ("uri", "https://example.com"),
    ("filename", "notes.txt"),
    ("file", "README.md"),
    ("path", "README.md"),
    ("dir", "src"),
    ("branch", "main"),
    ("repo", "octocat/hello-world"),
    ("folder", "src"),
    ("query", "project status"),
    ("search", "project status"),
    ("pattern", "TODO"),
    ("command", "ls -la"),
    ("cmd", "ls -la"),
    ("code", "print(1 + 1)"),
    ("expression", "2 + 3"),
    ("date", "2024-05-01"),
    ("time", "12:00"),
    ("timezone", "Europe/Paris"),
    ("language", "en"),
    ("lang", "en"),
    ("currency", "EUR"),
    ("symbol", "AAPL"),
    ("title", "Weekly report"),
    ("username", "alice"),
    ("user", "alice"),
    ("name", "Alice"),
    ("message", "Hello!"),
    ("text", "Hello world"),
    ("content", "Hello world"),
    ("id", "42"),
)

_FORMATTED_STRINGS = {
    "date": "2024-05-01",
    "date-time": "2024-05-01T12:00:00Z",
    "time": "12:00:00",
    "email": "alice@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}

_MAX_DEPTH = 4


def example_arguments(tool: Tool) -> dict[str, Any]:
    """Arguments for one plausible call: every required property, or the first one.

    With nothing required, one argument is still shown so the example teaches
    how arguments are written; with no properties the call has none.
    """
    props = tool.properties
    names = [n for n in tool.required if n in props] or list(props)[:1]
    return {name: example_value(props[name], name) for name in names}


def example_value(schema: Any, name: str = "value", depth: int = 0) -> Any:
    """A value valid against ``schema`` (for the keywords small tools use)."""
    if not isinstance(schema, dict):
        return _named_string(name)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if schema.get("default") is not None:
        return schema["default"]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        options = schema.get(combinator)
        if isinstance(options, list):
            usable = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            if usable:
                return example_value(usable[0], name, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    builder = _BY_TYPE.get(kind if isinstance(kind, str) else "", _string_value)
    return builder(schema, name, depth)


def _string_value(schema: dict[str, Any], name: str, depth: int) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATTED_STRINGS:
        return _FORMATTED_STRINGS[fmt]
    hint = description_example(schema.get("description"))
    return hint if hint is not None and _fits(schema, hint) else _named_string(name)


def _fits(schema: dict[str, Any], value: str) -> bool:
    """Whether a string hint keeps the length and pattern limits the schema sets."""
    low, high, pattern = schema.get("minLength"), schema.get("maxLength"), schema.get("pattern")
    if isinstance(low, int) and len(value) < low or isinstance(high, int) and len(value) > high:
        return False
    if isinstance(pattern, str):
        try:
            return re.search(pattern, value) is not None
        except re.error:
            return False
    return True


#: "e.g. Paris", "e.g., 'USD'", "for example: MSFT" in a property description
_EXAMPLE_HINT = re.compile(r"\b(?:e\.g\.|eg\.|for example|such as)[,:]?\s+[\"'`]?([^\"'`,;()\n]+?)[\"'`]?(?=[,;()\n]|\.\s|\.?$)", re.I)


def description_example(description: Any) -> str | None:
    """The example value an author wrote into a description, if any.

    It is the value the tool's author had in mind, so it beats any guess from
    the property name (and a placeholder like "example flight number" that a
    small model copies verbatim into its real call).
    """
    if not isinstance(description, str):
        return None
    match = _EXAMPLE_HINT.search(description)
    if match is None:
        return None
    value = match.group(1).strip().rstrip(".")
    return value if 0 < len(value) <= 40 else None


def _named_string(name: str) -> str:
    lowered = name.lower()
    for fragment, value in _NAMED_STRINGS:
        if fragment in lowered:
            return value
    words = re.sub(r"[_\-]+", " ", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)).strip().lower()
    return f"example {words}" if words else "example"


def _number_in_range(schema: dict[str, Any], preferred: float) -> float:
    low, high = schema.get("minimum"), schema.get("maximum")
    value = preferred
    if isinstance(low, (int, float)) and value < low:
        value = low
    if isinstance(high, (int, float)) and value > high:
        value = high
    return value


def _integer_value(schema: dict[str, Any], name: str, depth: int) -> int:
    return int(_number_in_range(schema, 1))


def _number_value(schema: dict[str, Any], name: str, depth: int) -> float:
    return float(_number_in_range(schema, 1.5))


def _boolean_value(schema: dict[str, Any], name: str, depth: int) -> bool:
    return True


def _null_value(schema: dict[str, Any], name: str, depth: int) -> None:
    return None


def _array_value(schema: dict[str, Any], name: str, depth: int) -> list[Any]:
    if depth >= _MAX_DEPTH:
        return []
    item_name = _singular(name)
    count = max(1, schema.get("minItems", 1) if isinstance(schema.get("minItems"), int) else 1)
    return [example_value(schema.get("items", {}), item_name, depth + 1) for _ in range(count)]


def _singular(name: str) -> str:
    if name.endswith("ies") and len(name) > 3:
        return name[:-3] + "y"
    if name.endswith("s") and len(name) > 1:
        return name[:-1]
    return name


def _object_value(schema: dict[str, Any], name: str, depth: int) -> dict[str, Any]:
    props = schema.get("properties")
    if depth >= _MAX_DEPTH or not isinstance(props, dict):
        return {}
    required = [r for r in schema.get("required", []) if isinstance(r, str) and r in props]
    names = required or list(props)[:1]
    return {n: example_value(props[n], n, depth + 1) for n in names}


_BY_TYPE = {
    "string": _string_value,
    "integer": _integer_value,
    "number": _number_value,
    "boolean": _boolean_value,
    "null": _null_value,
    "array": _array_value,
    "object": _object_value,
}
