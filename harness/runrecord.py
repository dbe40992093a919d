"""Typed run records: what happened in one run, as frozen dataclasses read from and written to JSONL.

A run record holds what happened (the requests' turns and rounds, the calls
and their decisions, the server's counters, provenance), never a judgement of
it: scores are derived from it by :mod:`harness.metrics` when a report or a
tuning profile is built. Readers use attributes (``turn.rounds``,
``call.decision``) instead of walking dicts with ``.get``, and a bad value is
an error naming where it is (``results.jsonl:12: turns[0].rounds[1].calls[0].name``).

The JSONL on disk is the contract: ``RunRecord.from_dict(d).to_dict() == d``
for every record, key order included, so committed results read and written
through these types stay byte-identical. Keys a type does not know are kept
(in ``extra``) rather than dropped, so an older or newer record survives the
round trip. Records written before scores were derived still carry a
``scores`` block: it is one of those kept keys (:attr:`RunRecord.LEGACY`),
never a field, and no reader trusts it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from utp.types import ToolTier


class RecordError(ValueError):
    """A run record that does not have the shape of one; the message names the file, line and field."""


# --------------------------------------------------------------------------- field readers

Reader = Callable[[Any, str], Any]


def _scalar(*types: type, nullable: bool = True) -> Reader:
    names = "/".join(t.__name__ for t in types) + (" or null" if nullable else "")

    def read(value: Any, where: str) -> Any:
        if value is None and nullable:
            return None
        # bool is an int in Python, never in a record
        if isinstance(value, bool) and bool not in types:
            raise RecordError(f"{where}: expected {names}, got a boolean")
        if not isinstance(value, types):
            raise RecordError(f"{where}: expected {names}, got {type(value).__name__}")
        # an in-memory record may hold enum members (Decision.EXECUTED); on disk they are their values
        return value.value if isinstance(value, enum.Enum) else value

    return read


_STR = _scalar(str)
def _name(value: Any, where: str) -> str:
    """A non-empty string (a run's model, format, suite and scenario place it in a report)."""
    if not isinstance(value, str) or not value:
        raise RecordError(f"{where}: expected a non-empty string, got {value!r}")
    return value



_INT = _scalar(int)
_NUMBER = _scalar(int, float)
_BOOL = _scalar(bool)
_OBJECT = _scalar(dict)
_LIST = _scalar(list)
_ANY: Reader = lambda value, where: value  # noqa: E731 - free-form payloads (arguments, raw responses)


def _list_of(kind: "type[_Typed]") -> Reader:
    def read(value: Any, where: str) -> Any:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise RecordError(f"{where}: expected a list, got {type(value).__name__}")
        return tuple(kind.from_dict(item, f"{where}[{i}]") for i, item in enumerate(value))

    return read


def _one(kind: "type[_Typed]") -> Reader:
    return lambda value, where: None if value is None else kind.from_dict(value, where)


def _at(where: str, key: str) -> str:
    """``results.jsonl:12:`` + ``turns`` → ``results.jsonl:12:turns``; ``…turns[0]`` + ``rounds`` → ``…turns[0].rounds``."""
    return f"{where}{key}" if not where or where.endswith(":") else f"{where}.{key}"


def _dump(value: Any) -> Any:
    if isinstance(value, _Typed):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_dump(v) for v in value]
    return value


@dataclass(frozen=True)
class _Typed:
    """Shared reading and writing: each subclass lists its JSON keys in :attr:`FIELDS`."""

    #: JSON key → reader (checks the type, builds nested records)
    FIELDS: ClassVar[dict[str, Reader]] = {}
    #: keys that must be present
    REQUIRED: ClassVar[tuple[str, ...]] = ()
    #: keys of the record as read (their order is kept on writing); empty = every field in FIELDS order
    keys: tuple[str, ...] = field(default=(), compare=False, repr=False, kw_only=True)
    #: keys this type does not know, kept as they were
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, kw_only=True)

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> Any:
        """Read and check one object; ``where`` (``"results.jsonl:12:"``) prefixes every error."""
        if not isinstance(data, Mapping):
            raise RecordError(f"{where.rstrip(':') or 'record'}: expected an object, got {type(data).__name__}")
        for name in cls.REQUIRED:
            if name not in data:
                raise RecordError(f"{_at(where, name)}: field is missing")
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            reader = cls.FIELDS.get(key)
            if reader is None:
                extra[key] = value
            else:
                known[key] = reader(value, _at(where, key))
        return cls(**known, keys=tuple(data), extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object this record was read from (same keys, same order)."""
        out: dict[str, Any] = {}
        for key in self.keys or tuple(self.FIELDS):
            out[key] = self.extra[key] if key in self.extra else _dump(getattr(self, key))
        return out


# --------------------------------------------------------------------------- the records


@dataclass(frozen=True)
class Diagnostic(_Typed):
    """Something the parser noticed in a round (a block it could not read, a truncation, a repair)."""

    kind: str | None = None
    offset: int | None = None
    reason: str | None = None
    format: str | None = None
    raw: str | None = None
    FIELDS: ClassVar[dict[str, Reader]] = {"kind": _STR, "offset": _INT, "reason": _STR, "format": _STR, "raw": _STR}


@dataclass(frozen=True)
class Counters(_Typed):
    """The server's own counters for one round, and the client's clock when measured live.

    The record's typed copy of :class:`utp.backends.base.Counters` (what a
    backend reports), field for field: ``tests/harness/test_runrecord.py``
    fails when the two differ, so a new counter is added to both.
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_eval_ns: int | None = None
    eval_ns: int | None = None
    load_ns: int | None = None
    total_ns: int | None = None
    wall_s: float | None = None
    ttft_s: float | None = None
    FIELDS: ClassVar[dict[str, Reader]] = {
        "prompt_tokens": _INT, "completion_tokens": _INT, "prompt_eval_ns": _INT, "eval_ns": _INT,
        "load_ns": _INT, "total_ns": _INT, "wall_s": _NUMBER, "ttft_s": _NUMBER,
    }


@dataclass(frozen=True)
class CallRecord(_Typed):
    """One call as extracted, and what the registry decided about it (a :class:`~utp.types.Decision` value)."""

    name: str | None = None
    arguments: Any = None
    id: str | None = None
    format: str | None = None
    repairs: Any = None
    known: bool | None = None
    decision: str | None = None
    message: str | None = None
    coercions: Any = None
    result: Any = None
    FIELDS: ClassVar[dict[str, Reader]] = {
        "name": _STR, "arguments": _ANY, "id": _STR, "format": _STR, "repairs": _ANY, "known": _BOOL,
        "decision": _STR, "message": _STR, "coercions": _ANY, "result": _ANY,
    }

    @property
    def argument_map(self) -> Mapping[str, Any]:
        return self.arguments if isinstance(self.arguments, Mapping) else {}


@dataclass(frozen=True)
class RoundRecord(_Typed):
    """One request and its answer: the text, the calls read from it, the parser's diagnostics, counters."""

    index: int | None = None
    content: str | None = None
    thinking: str | None = None
    raw_text: str | None = None
    calls: tuple[CallRecord, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    counters: Counters | None = None
    notes: tuple[Any, ...] = ()
    format: Any = None
    client_wall_s: float | None = None
    messages_count: int | None = None
    error: str | None = None
    raw_response: Any = None
    FIELDS: ClassVar[dict[str, Reader]] = {
        "index": _INT, "content": _STR, "thinking": _STR, "raw_text": _STR,
        "calls": _list_of(CallRecord), "diagnostics": _list_of(Diagnostic), "counters": _one(Counters),
        "notes": lambda v, w: tuple(_LIST(v, w) or ()), "format": _ANY, "client_wall_s": _NUMBER,
        "messages_count": _INT, "error": _STR, "raw_response": _ANY,
    }

    @property
    def measured(self) -> Counters:
        return self.counters if self.counters is not None else Counters()


@dataclass(frozen=True)
class TurnRecord(_Typed):
    """One user message and the rounds it took to answer it."""

    user: str | None = None
    tier_start: str | None = None
    tier_after_intent: str | None = None
    rounds: tuple[RoundRecord, ...] = ()
    final_answer: str | None = None
    termination: str | None = None
    error: Any = None
    format_switches: Any = None
    FIELDS: ClassVar[dict[str, Reader]] = {
        "user": _STR, "tier_start": _STR, "tier_after_intent": _STR, "rounds": _list_of(RoundRecord),
        "final_answer": _STR, "termination": _STR, "error": _ANY, "format_switches": _ANY,
    }

    @property
    def stopped_by(self) -> str:
        """How the turn ended (``backend_error`` when it has an error and no termination)."""
        return str(self.termination or ("backend_error" if self.error else "unknown"))

    def tier(self, default: ToolTier = ToolTier.CRAWL) -> ToolTier:
        """The tier in force once the user's intent was read."""
        return parse_tier(self.tier_after_intent or self.tier_start, default)


@dataclass(frozen=True)
class ToolEntry(_Typed):
    """A tool the run offered, by name and tier."""

    name: str | None = None
    tier: str | None = None
    FIELDS: ClassVar[dict[str, Reader]] = {"name": _STR, "tier": _STR}


@dataclass(frozen=True)
class RunRecord(_Typed):
    """One run of one scenario under one format on one model: what happened, and where it came from."""

    model: str = ""
    format: str = ""
    suite: str = ""
    scenario: str = ""
    repeat: int = 0
    schema: int | None = None
    scenario_hash: str | None = None
    mode: str | None = None
    synthetic: bool | None = None
    bundle: Mapping[str, Any] | None = None
    tools: tuple[ToolEntry, ...] = ()
    provenance: Mapping[str, Any] | None = None
    turns: tuple[TurnRecord, ...] = ()
    error: Any = None
    outcome: Mapping[str, Any] | None = None
    rescored: Mapping[str, Any] | None = None
    FIELDS: ClassVar[dict[str, Reader]] = {
        "schema": _INT, "model": _name, "format": _name, "suite": _name, "scenario": _name, "repeat": _scalar(int, nullable=False), "scenario_hash": _STR, "mode": _STR,
        "synthetic": _BOOL, "bundle": _OBJECT, "tools": _list_of(ToolEntry), "provenance": _OBJECT,
        "turns": _list_of(TurnRecord), "error": _ANY, "outcome": _OBJECT, "rescored": _OBJECT,
    }
    REQUIRED: ClassVar[tuple[str, ...]] = ("model", "format", "suite", "scenario")
    #: keys older runners stored and no reader uses: kept in ``extra`` so their lines round-trip byte for byte
    LEGACY: ClassVar[frozenset[str]] = frozenset({"scores"})

    @classmethod
    def of(cls, record: "RunRecord | Mapping[str, Any]") -> "RunRecord":
        """A typed record from either a typed one or the dict a runner built."""
        return record if isinstance(record, RunRecord) else cls.from_dict(record, "record:")

    @property
    def replayed(self) -> bool:
        return self.mode == "replay"


def parse_tier(value: Any, default: ToolTier = ToolTier.CRAWL) -> ToolTier:
    """A tier from its recorded spelling; an unknown or missing one is ``default``."""
    if value is None:
        return default
    try:
        return ToolTier.parse(value)
    except (ValueError, KeyError):
        return default


__all__ = [
    "CallRecord",
    "Counters",
    "Diagnostic",
    "RecordError",
    "RoundRecord",
    "RunRecord",
    "ToolEntry",
    "TurnRecord",
    "parse_tier",
]
