"""The JSON Schema a constrained reply must follow, built from the offered tools.

Servers that decode under a grammar (Ollama's ``format``, llama.cpp's
``json_schema``, llama-cpp-python's grammars) can force the *shape* of a
reply. The shape offered here has one branch per way a turn can end:

* one call: ``{"name": <an offered tool, as a const>, "arguments": <that
  tool's parameters schema>}``, one branch per tool so the arguments are
  checked against the right tool;
* several calls (where parallel calls are allowed): a list of at least two
  such objects, the list form the ``json`` call family already reads;
* a text answer: ``{"answer": "<text>"}``, so answering without a tool
  (restraint) stays expressible under the constraint.

Both call shapes are what :mod:`utp.parsers.families.json` reads with no
special path; the answer branch is unwrapped by
:func:`answer_text`. The schema is rebuilt per request because tiers change
which tools are offered. Constraining the shape is no reason to trust the
content: every call still goes through the registry's checks.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import jsonschema

from utp.parsers.jsonrepair import decode_json_at
from utp.types import Tool

#: the key of the text-answer branch
ANSWER_KEY = "answer"
#: the fewest calls the several-calls branch takes (one call has its own branch)
MIN_PARALLEL_CALLS = 2


def arguments_schema(tool: Tool) -> dict[str, Any]:
    """The tool's parameters schema as the ``arguments`` branch (an object, whatever was declared)."""
    schema = copy.deepcopy(tool.parameters) if isinstance(tool.parameters, dict) else {}
    schema.setdefault("type", "object")
    return schema


def call_branch(tool: Tool) -> dict[str, Any]:
    """``{"name": <const>, "arguments": ...}`` for one tool; ``name`` first, so it is decided first."""
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": arguments_schema(tool)},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def answer_branch() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {ANSWER_KEY: {"type": "string"}},
        "required": [ANSWER_KEY],
        "additionalProperties": False,
    }


def _unique(tools: Sequence[Tool]) -> list[Tool]:
    seen: dict[str, Tool] = {}
    for tool in tools:
        seen.setdefault(tool.name, tool)
    return list(seen.values())


def reply_schema(tools: Sequence[Tool], *, allow_parallel: bool = True) -> dict[str, Any]:
    """The schema a constrained reply follows, offering exactly ``tools`` (no tools: the answer branch alone)."""
    calls = [call_branch(t) for t in _unique(tools)]
    branches: list[dict[str, Any]] = list(calls)
    if calls and allow_parallel:
        branches.append({"type": "array", "items": {"anyOf": calls}, "minItems": MIN_PARALLEL_CALLS})
    branches.append(answer_branch())
    return {"anyOf": branches} if len(branches) > 1 else branches[0]


def follows_schema(value: Any, schema: dict[str, Any]) -> bool:
    """Whether a decoded reply validates against ``schema`` (a real JSON Schema validator)."""
    validator = jsonschema.validators.validator_for(schema)(schema)
    return validator.is_valid(value)


def without_argument_checks(schema: Any) -> Any:
    """``schema`` with every call branch's arguments relaxed to "any object" (other parts kept).

    What a reply must satisfy to show that the server enforced the shape: a
    grammar may be laxer than a validator about keywords such as ``format``
    or ``multipleOf``, and the registry checks the arguments anyway.
    """
    if isinstance(schema, list):
        return [without_argument_checks(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    relaxed = {k: without_argument_checks(v) for k, v in schema.items() if k != "properties"}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        is_call = isinstance(properties.get("name"), dict) and "const" in properties["name"] and "arguments" in properties
        relaxed["properties"] = {**properties, "arguments": {"type": "object"}} if is_call else properties
    return relaxed


def unenforced_reply(schema: dict[str, Any], content: str) -> str | None:
    """Why ``content`` shows the server did not enforce ``schema`` (``None`` when it did).

    Call only for a reply that ended normally: one cut off by the token
    limit cannot be complete JSON whatever the server enforced.
    """
    try:
        value = json.loads(content, strict=False)  # grammars may let raw control characters into strings
    except ValueError:
        return f"the reply is not JSON ({content[:80]!r}), so the server did not force the requested JSON Schema"
    if not follows_schema(value, without_argument_checks(schema)):
        return f"the reply {content[:80]!r} does not have the shape of the requested JSON Schema"
    return None


def answer_text(content: str) -> str | None:
    """The text of a ``{"answer": "..."}`` reply, or ``None`` when ``content`` is not one.

    An answer cut off by the token limit (``{"answer": "The weather in Par``)
    still gives its text: what the model managed to say is its answer.
    """
    text = content.strip()
    try:
        value = json.loads(text, strict=False)
    except ValueError:
        if not text.startswith("{"):
            return None
        try:
            value, _, _ = decode_json_at(text, 0)
        except ValueError:
            return None
    if isinstance(value, dict) and set(value) == {ANSWER_KEY} and isinstance(value[ANSWER_KEY], str):
        return value[ANSWER_KEY]
    return None


__all__ = [
    "ANSWER_KEY",
    "MIN_PARALLEL_CALLS",
    "answer_branch",
    "answer_text",
    "arguments_schema",
    "call_branch",
    "follows_schema",
    "reply_schema",
    "unenforced_reply",
    "without_argument_checks",
]
