"""The record of one loop run: what was sent, what came back, what was decided.

A compatibility report is only as good as its evidence, so each round keeps
the exact request, the server's raw response, every parsed call with the
check's verdict and the result, the parser's diagnostics, the server's token
counters and the client's wall time. ``to_dict()`` is the ``rounds`` list of
a run record (docs/architecture.md) and is plain JSON.

Requests are snapshotted when recorded: the loop keeps appending to its
message list, and a transcript that changed after the fact would lie.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from utp.types import Decision, Diagnostic, ToolCall, ToolResult

#: decision recorded for a call the loop refused to run again
DUPLICATE_STOPPED = Decision.DUPLICATE_STOPPED
#: decision recorded for a call that ran (whatever its handler returned)
EXECUTED = Decision.EXECUTED


@dataclass
class CallRecord:
    """One parsed call, the verdict on it, and its result."""

    call: ToolCall
    decision: Decision | str
    message: str = ""
    coercions: list[str] = field(default_factory=list)
    result: ToolResult | None = None

    def to_dict(self) -> dict[str, Any]:
        data = self.call.to_dict()
        data["decision"] = self.decision.value if isinstance(self.decision, Decision) else self.decision
        data["message"] = self.message
        data["coercions"] = list(self.coercions)
        data["result"] = self.result.to_dict() if self.result is not None else None
        return data


@dataclass
class RoundRecord:
    index: int
    request: dict[str, Any] = field(default_factory=dict)
    messages_count: int = 0
    format: dict[str, Any] | None = None
    raw_response: Any = None
    content: str = ""
    thinking: str = ""
    raw_text: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    counters: dict[str, Any] | None = None
    client_wall_s: float | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    def record_request(self, request: Any) -> None:
        body = dataclasses.asdict(request) if dataclasses.is_dataclass(request) else dict(request)
        self.request = copy.deepcopy(body)
        self.messages_count = len(self.request.get("messages") or [])

    def note(self, text: str) -> None:
        self.notes.append(text)

    @property
    def tokens(self) -> int:
        if not self.counters:
            return 0
        return int(self.counters.get("prompt_tokens") or 0) + int(self.counters.get("completion_tokens") or 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "content": self.content,
            "thinking": self.thinking,
            "raw_text": self.raw_text,
            "calls": [c.to_dict() for c in self.calls],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "counters": dict(self.counters) if self.counters is not None else None,
            "notes": list(self.notes),
            "format": dict(self.format) if self.format is not None else None,
            "client_wall_s": self.client_wall_s,
            "messages_count": self.messages_count,
            "error": self.error,
            "request": self.request,
            "raw_response": self.raw_response,
        }


@dataclass
class Transcript:
    rounds: list[RoundRecord] = field(default_factory=list)

    def new_round(self) -> RoundRecord:
        record = RoundRecord(index=len(self.rounds))
        self.rounds.append(record)
        return record

    @property
    def calls(self) -> list[CallRecord]:
        return [c for r in self.rounds for c in r.calls]

    @property
    def tokens(self) -> int:
        return sum(r.tokens for r in self.rounds)

    @property
    def notes(self) -> list[str]:
        return [n for r in self.rounds for n in r.notes]

    def to_dict(self) -> list[dict[str, Any]]:
        """The run record's ``rounds`` list."""
        return [r.to_dict() for r in self.rounds]
