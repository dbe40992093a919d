"""Call ids that the assistant turn and its results agree on.

OpenAI and Anthropic pair every result with the call it answers by id, but a
call read out of text (``<tool_call>{...}``) never has one. The id is given
once, when the assistant turn is written to history, and stored on the
:class:`~utp.types.ToolCall` itself so the result message written afterwards
(and the transcript) carries the same one. Ids count up per conversation, not
randomly, so a replayed conversation sends byte-identical requests and its
cassette still matches.
"""

from __future__ import annotations

from utp.types import ToolCall


class CallIds:
    """Hands out ``<prefix><n>`` ids, skipping any the model already used."""

    def __init__(self, prefix: str = "call_") -> None:
        self._prefix = prefix
        self._counter = 0
        self._seen: set[str] = set()

    def ensure(self, call: ToolCall) -> str:
        """The call's id, giving it a fresh one (stored on the call) if it has none."""
        if call.id:
            self._seen.add(call.id)
            return call.id
        call.id = self._fresh()
        return call.id

    def _fresh(self) -> str:
        while True:
            self._counter += 1
            candidate = f"{self._prefix}{self._counter}"
            if candidate not in self._seen:
                self._seen.add(candidate)
                return candidate
