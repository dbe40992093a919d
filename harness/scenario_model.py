"""What a scenario is, as data: its tools and fixtures, its turns and what each expects, and its task kind.

Loading a suite (YAML, schema checks with line numbers, semantic checks) is
:mod:`harness.scenarios`; scoring and the runner only need these types.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any


from utp.types import Tool, ToolTier, canonical_json


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class FixtureSpec:
    """How a scenario's tool answers; ``kind`` is the one key the YAML used."""

    kind: str  # result | by_args | error | sequence | files
    config: dict[str, Any]
    #: the directory relative ``files: {root: ...}`` paths resolve against
    base_dir: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "config": self.config}


@dataclass(frozen=True)
class ToolSpec:
    tool: Tool
    fixture: FixtureSpec

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.tool.name,
            "description": self.tool.description,
            "parameters": self.tool.parameters,
            "tier": self.tool.tier.name.lower(),
            "requires_confirmation": self.tool.requires_confirmation,
            "fixture": self.fixture.to_dict(),
        }


@dataclass(frozen=True)
class ExpectedCall:
    """A call the model should make; each argument lists its acceptable values."""

    name: str
    arguments: dict[str, list[Any]] = field(default_factory=dict)
    optional: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FinalCheck:
    contains: list[str] = field(default_factory=list)
    regex: str | None = None
    contains_any: list[str] = field(default_factory=list)
    icase: bool = False


@dataclass(frozen=True)
class Expectation:
    #: ``None`` = calls are not checked for this turn
    calls: list[ExpectedCall] | None = None
    order: str = "any"
    no_call: bool = False
    escalation: list[str] = field(default_factory=list)
    final: FinalCheck | None = None


@dataclass(frozen=True)
class Turn:
    user: str
    expect: Expectation = field(default_factory=Expectation)


class TaskKind(str, enum.Enum):
    """What a scenario asks of the model, for verdicts that cannot be won by abstaining.

    A format that never calls passes every restraint task; ranking formats on
    all tasks together would recommend it. So the recommendation ranks on
    *call* tasks and shows restraint beside them.
    """

    CALL = "call"  # the right answer includes a call (or an attempt at a locked tool)
    RESTRAINT = "restraint"  # the right answer is no call
    ANSWER = "answer"  # only the final answer is checked


def task_kind_of(turns: Sequence["Turn"]) -> TaskKind:
    expectations = [turn.expect for turn in turns]
    if any(e.calls or e.escalation for e in expectations):
        return TaskKind.CALL
    if any(e.no_call or e.calls == [] for e in expectations):
        return TaskKind.RESTRAINT
    return TaskKind.ANSWER


@dataclass(frozen=True)
class Scenario:
    id: str
    suite: str
    description: str
    tags: list[str]
    tier: ToolTier
    max_rounds: int
    match: str
    system: str | None
    tools: list[ToolSpec]
    turns: list[Turn]
    source_path: str
    line: int
    expect_termination: list[str] | None = None

    @property
    def tool_by_name(self) -> dict[str, Tool]:
        return {spec.tool.name: spec.tool for spec in self.tools}

    def content(self) -> dict[str, Any]:
        """The normalised content: what the scenario *asks*, not where it lives."""
        return {
            "id": self.id,
            "description": self.description,
            "tags": list(self.tags),
            "tier": self.tier.name.lower(),
            "max_rounds": self.max_rounds,
            "match": self.match,
            "system": self.system,
            "expect_termination": self.expect_termination,
            "tools": [spec.to_dict() for spec in self.tools],
            "turns": [asdict(turn) for turn in self.turns],
        }

    @property
    def task_kind(self) -> "TaskKind":
        """Whether the right answer includes a call (see :class:`TaskKind`)."""
        return task_kind_of(self.turns)

    @cached_property
    def scenario_hash(self) -> str:
        """Changes whenever the content changes, so --resume never reuses a stale result.

        Computed once per scenario: scoring and reports ask for it for every run record, and
        a scenario is a frozen record read from its file, never edited in place.
        """
        return hashlib.sha256(canonical_json(self.content()).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Suite:
    id: str
    description: str
    path: str
    scenarios: list[Scenario]


#: the words in a tool's name that choose its file fixture's behaviour when the scenario gives no ``kind:``
FILE_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "write": ("write", "edit", "create", "save", "update", "append", "patch"),
    "search": ("search", "grep", "find", "query"),
    "list": ("list", "ls", "dir", "tree", "browse"),
    "read": ("read", "cat", "open", "view", "get", "show", "load"),
}
UNKNOWN_FILE_KIND = "cannot tell which file behaviour it has; add `kind: read|list|search|write`"


def file_kind_for(tool_name: str, explicit: str | None = None) -> str | None:
    """The file behaviour a tool has: the explicit ``kind:``, else the first kind a word of its name names."""
    if explicit:
        return explicit
    lowered = tool_name.lower()
    return next((kind for kind, words in FILE_KIND_WORDS.items() if any(w in lowered for w in words)), None)


DEFAULT_TIER = "crawl"
DEFAULT_MAX_ROUNDS = 6
DEFAULT_MATCH = "strict"
