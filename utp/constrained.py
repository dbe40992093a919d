"""The JSON Schema a constrained reply must follow, built from the offered tools.

Servers that decode under a grammar (Ollama's ``format``, llama.cpp's
``json_schema``, llama-cpp-python's grammars) can force the *shape* of a
reply. The shape offered here has one branch per way a turn can end:

* one call: ``{"name": <an offered tool, as a const>, "arguments": <that
  tool's parameters schema>}``, one branch per tool so the arguments are
  checked against the right tool;
* several calls (where parallel calls are allowed): a list of at least two
  such objects, the list form the ``json`` call family already reads;
* a text answer, so answering without a tool (restraint) stays expressible
  under the constraint. Its shape is an :class:`AnswerShape`: either its own
  key, ``{"answer": "<text>"}`` (the ``constrained-json`` preset), or a call
  to a reserved ``answer`` tool, ``{"name": "answer", "arguments": {"text":
  "<text>"}}`` (``constrained-call``). The second exists because the first
  key a grammar lets a model choose is where it decides: small Qwen models
  under the ``{"answer"}`` shape took it before any tool, where the call shape
  makes every reply begin ``{"name": "`` and the choice is between tool names.

Both call shapes are what :mod:`utp.parsers.families.json` reads with no
special path; the answer branch is unwrapped by the shape's reader. The schema is rebuilt per request because tiers change
which tools are offered. Constraining the shape is no reason to trust the
content: every call still goes through the registry's checks.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

from utp.parsers.jsonrepair import decode_json_at
from utp.types import Tool

#: the key of the text-answer branch
ANSWER_KEY = "answer"
#: the fewest calls the several-calls branch takes (one call has its own branch)
MIN_PARALLEL_CALLS = 2
#: names the answer tool takes, the first not offered as a real tool
ANSWER_TOOL_NAMES = ("answer", "answer_user", "reply_to_user")
#: the answer tool's one argument
ANSWER_TOOL_ARGUMENT = "text"


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


def answer_tool_name(tools: Sequence[Tool]) -> str:
    """The answer tool's name for this round: the first of :data:`ANSWER_TOOL_NAMES` no offered tool has."""
    taken = {t.name for t in tools}
    return next(name for name in ANSWER_TOOL_NAMES if name not in taken)


def answer_tool(tools: Sequence[Tool]) -> Tool:
    """The reserved tool a ``constrained-call`` reply calls to answer in text (never registered, never run)."""
    return Tool(
        name=answer_tool_name(tools),
        description="Answer the user in plain words, without calling a tool.",
        parameters={
            "type": "object",
            "properties": {ANSWER_TOOL_ARGUMENT: {"type": "string"}},
            "required": [ANSWER_TOOL_ARGUMENT],
        },
    )


def answer_call_text(content: str) -> str | None:
    """The text of a ``{"name": "answer", "arguments": {"text": "..."}}`` reply, or ``None``.

    Read from the reply's own text, as :func:`answer_text` is, so an answer
    cut off by the token limit still gives what the model managed to say.
    """
    value = _decoded_reply(content)
    if not isinstance(value, dict) or value.get("name") not in ANSWER_TOOL_NAMES:
        return None
    arguments = value.get("arguments")
    if isinstance(arguments, dict) and set(arguments) <= {ANSWER_TOOL_ARGUMENT}:
        text = arguments.get(ANSWER_TOOL_ARGUMENT, "")
        return text if isinstance(text, str) else None
    return None


@dataclass(frozen=True)
class AnswerShape:
    """How a constrained reply answers in text: its schema branch, its example, and its reader."""

    name: str
    branch: Callable[[Sequence[Tool]], dict[str, Any]]
    example: Callable[[Sequence[Tool]], str]
    #: the example with its text elided, as the prompt's rules cite it
    short: Callable[[Sequence[Tool]], str]
    read: Callable[[str], str | None]
    #: whether the answer is written as a call (then the parser's reading of it, call or failed call, is the answer's)
    written_as_call: bool = False


ANSWER_SHAPES: dict[str, AnswerShape] = {
    "key": AnswerShape(
        "key",
        branch=lambda tools: answer_branch(),
        example=lambda tools: json.dumps({ANSWER_KEY: "your answer in plain words"}),
        short=lambda tools: f'{{"{ANSWER_KEY}": ...}}',
        read=lambda content: answer_text(content),
    ),
    "call": AnswerShape(
        "call",
        branch=lambda tools: call_branch(answer_tool(tools)),
        example=lambda tools: json.dumps(
            {"name": answer_tool_name(tools), "arguments": {ANSWER_TOOL_ARGUMENT: "your answer in plain words"}}
        ),
        short=lambda tools: f'{{"name": "{answer_tool_name(tools)}", "arguments": {{"{ANSWER_TOOL_ARGUMENT}": ...}}}}',
        read=answer_call_text,
        written_as_call=True,
    ),
}


def reply_schema(tools: Sequence[Tool], *, allow_parallel: bool = True, answer: str = "key") -> dict[str, Any]:
    """The schema a constrained reply follows, offering exactly ``tools`` (no tools: the answer branch alone).

    ``answer`` names the :data:`ANSWER_SHAPES` entry the text-answer branch takes.
    """
    offered = _unique(tools)
    calls = [call_branch(t) for t in offered]
    branches: list[dict[str, Any]] = list(calls)
    if calls and allow_parallel:
        branches.append({"type": "array", "items": {"anyOf": calls}, "minItems": MIN_PARALLEL_CALLS})
    branches.append(ANSWER_SHAPES[answer].branch(offered))
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
    value = _decoded_reply(content)
    if isinstance(value, dict) and set(value) == {ANSWER_KEY} and isinstance(value[ANSWER_KEY], str):
        return value[ANSWER_KEY]
    return None


def _decoded_reply(content: str) -> Any:
    """``content`` as JSON, completed where the token limit cut it off; ``None`` when it is not JSON."""
    text = content.strip()
    try:
        return json.loads(text, strict=False)
    except ValueError:
        if not text.startswith("{"):
            return None
        try:
            value, _, _ = decode_json_at(text, 0)
        except ValueError:
            return None
        return value


__all__ = [
    "ANSWER_KEY",
    "ANSWER_SHAPES",
    "ANSWER_TOOL_ARGUMENT",
    "ANSWER_TOOL_NAMES",
    "MIN_PARALLEL_CALLS",
    "AnswerShape",
    "answer_branch",
    "answer_call_text",
    "answer_text",
    "answer_tool",
    "answer_tool_name",
    "arguments_schema",
    "call_branch",
    "follows_schema",
    "reply_schema",
    "unenforced_reply",
    "without_argument_checks",
]
