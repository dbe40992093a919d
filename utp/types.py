"""The internal representation every wire format translates to and from.

A model may announce a call in a native ``tool_calls`` field, in XML-ish tags,
in a fenced JSON block, as a Python-style list... Everything past the parser
(tier checks, schema validation, execution, scoring) sees only these types, so
a safety check written once holds for every format.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class ToolFormat(str, enum.Enum):
    """Wire families for tool *definitions* and *results* (the SDD's enum).

    Call parsing has many more families (hermes, mistral, pythonic...); those
    are registry names in :mod:`utp.parsers`, not members here.
    """

    OPENAI = "openai"
    OLLAMA = "ollama"
    ANTHROPIC = "anthropic"
    PROMPT = "prompt"
    AUTO = "auto"


class ToolTier(enum.IntEnum):
    """Progressive disclosure: a tool is offered only once its tier is unlocked."""

    CRAWL = 0
    WALK = 1
    RUN = 2

    @classmethod
    def parse(cls, value: "ToolTier | str | int") -> "ToolTier":
        if isinstance(value, ToolTier):
            return value
        if isinstance(value, int):
            return cls(value)
        try:
            return cls[str(value).strip().upper()]
        except KeyError:
            names = ", ".join(t.name.lower() for t in cls)
            raise ValueError(f"unknown tier {value!r} (expected one of: {names})") from None


def _empty_object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


@dataclass(frozen=True)
class Tool:
    """A tool definition, independent of any provider's wire shape."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=_empty_object_schema)
    tier: ToolTier = ToolTier.CRAWL
    requires_confirmation: bool = False

    def __hash__(self) -> int:  # parameters is a dict; identity is the name
        return hash(self.name)

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> list[str]:
        req = self.parameters.get("required")
        return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []


@dataclass
class ToolCall:
    """One call the model asked for, whatever format it was written in.

    ``format`` names the parser family that recognised it (``"native"``,
    ``"hermes"``, ``"pythonic"``...), ``raw`` keeps the exact source text or
    object for debugging, and ``repairs`` lists what had to be fixed to read it
    (empty for a clean parse). ``known`` is ``None`` when no tools were offered
    to check against, else whether ``name`` is an offered tool.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    raw: Any = None
    format: str | None = None
    repairs: list[str] = field(default_factory=list)
    known: bool | None = None

    def canonical_key(self) -> tuple[str, str]:
        """Name plus canonical arguments: equal for calls that do the same thing."""
        return (self.name, canonical_json(self.arguments))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "arguments": self.arguments,
            "id": self.id,
            "format": self.format,
            "repairs": list(self.repairs),
            "known": self.known,
        }


class ErrorKind(str, enum.Enum):
    """Why a call produced no result; each one tells the model what to do next."""

    UNKNOWN_TOOL = "unknown_tool"
    TIER_VIOLATION = "tier_violation"
    INVALID_ARGUMENTS = "invalid_arguments"
    PATH_VIOLATION = "path_violation"
    EXECUTION_ERROR = "execution_error"
    TIMEOUT = "timeout"
    CONFIRMATION_REQUIRED = "confirmation_required"
    PARSE_ERROR = "parse_error"


class Decision(str, enum.Enum):
    """What became of one parsed call: the one spelling shared by the registry, the transcript and scoring.

    The registry's refusals keep their :class:`ErrorKind` names, so a record
    reads the same whichever layer wrote it.
    """

    EXECUTED = "executed"
    DUPLICATE_STOPPED = "duplicate_stopped"  # the loop refused to run the same call again
    UNKNOWN_TOOL = ErrorKind.UNKNOWN_TOOL.value
    TIER_VIOLATION = ErrorKind.TIER_VIOLATION.value
    INVALID_ARGUMENTS = ErrorKind.INVALID_ARGUMENTS.value
    PATH_VIOLATION = ErrorKind.PATH_VIOLATION.value
    EXECUTION_ERROR = ErrorKind.EXECUTION_ERROR.value
    TIMEOUT = ErrorKind.TIMEOUT.value
    CONFIRMATION_REQUIRED = ErrorKind.CONFIRMATION_REQUIRED.value

    @classmethod
    def refused(cls, kind: ErrorKind | None) -> "Decision | str":
        """The decision for a call the registry refused (``"refused"`` when it gave no kind)."""
        return cls(kind.value) if kind is not None and kind.value in cls._value2member_map_ else "refused"


@dataclass
class ToolResult:
    """The outcome of one call, success or typed refusal."""

    call_id: str | None
    tool_name: str
    result: Any = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    executed: bool = False
    coercions: list[str] = field(default_factory=list)
    duration_s: float | None = None

    @property
    def success(self) -> bool:
        return self.error is None

    def content_text(self) -> str:
        """The text a model reads: the result, or the error with its kind."""
        if self.error is not None:
            kind = self.error_kind.value if self.error_kind else "error"
            return json.dumps({"error": self.error, "kind": kind}, ensure_ascii=False)
        if isinstance(self.result, str):
            return self.result
        return json.dumps(self.result, ensure_ascii=False, default=str)

    def to_dict(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "result": self.result,
            "error": self.error,
            "error_kind": self.error_kind.value if self.error_kind else None,
            "executed": self.executed,
            "coercions": list(self.coercions),
            "duration_s": self.duration_s,
        }


class DiagnosticKind(str, enum.Enum):
    """What a parser noticed besides the calls it returned."""

    UNPARSEABLE = "unparseable"  # looked like a call, could not be read
    REPAIRED = "repaired"  # read after fixing the text (see ToolCall.repairs)
    UNKNOWN_TOOL = "unknown_tool"  # parsed, but the name is not an offered tool
    NAME_CORRECTED = "name_corrected"  # misspelt name mapped to the one close offered tool
    IN_REASONING = "in_reasoning"  # call-like text inside <think>: not a call
    SHOWN = "shown"  # call markup introduced as an example ("For instance:"): shown, not made
    DUPLICATE = "duplicate"  # same call seen natively and in content
    TRUNCATED = "truncated"  # output ended inside a call


@dataclass
class Diagnostic:
    kind: DiagnosticKind
    reason: str
    raw: str = ""
    format: str | None = None
    offset: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "reason": self.reason,
            "raw": self.raw,
            "format": self.format,
            "offset": self.offset,
        }


@dataclass
class ParsedResponse:
    """What a model said: prose, reasoning, calls, and what could not be read."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    raw_response: Any = None
    thinking: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def unparsed(self) -> list[Diagnostic]:
        """Blocks that looked like a call but could not be parsed."""
        return [d for d in self.diagnostics if d.kind is DiagnosticKind.UNPARSEABLE]

    @property
    def formats(self) -> list[str]:
        """Distinct families the calls came in, in order of first appearance."""
        seen: dict[str, None] = {}
        for call in self.tool_calls:
            if call.format:
                seen.setdefault(call.format, None)
        return list(seen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "thinking": self.thinking,
            "finish_reason": self.finish_reason,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def json_type_name(value: Any) -> str:
    """The JSON Schema type name of a Python value (for messages and schema building)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def canonical_json(value: Any) -> str:
    """Stable text for a JSON value: sorted keys, no spaces, floats as written.

    An ``int`` too long for ``str()`` (past Python's digit limit) is written
    as a string of its exact digits rather than raising.
    """
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except ValueError:  # an int past Python's digit limit: written as its exact digits, in quotes
        from utp.numbers import spell_huge_ints

        return json.dumps(spell_huge_ints(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
