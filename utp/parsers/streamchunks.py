"""The chunk shapes a stream accepts besides text: Ollama NDJSON messages and OpenAI deltas.

Ollama's ``/api/chat`` objects carry ``message`` with ``content``, ``thinking``
and complete ``tool_calls``; OpenAI chat-completion chunks carry
``choices[0].delta`` with tool-call fragments assembled by ``index`` and read
when the stream ends. :class:`NativeChunkReader` is the part of
:class:`~utp.parsers.streaming.StreamParser` that takes them apart: content
goes to the text buffer (``_append``), native calls to ``_announce``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from utp.parsers.native import parse_native_calls
from utp.parsers.streamevents import StreamEvent, ThinkingDelta
from utp.response import get_field


@dataclass
class _OpenAICall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class NativeChunkReader:
    """Reading Ollama and OpenAI chunks (a part of :class:`~utp.parsers.streaming.StreamParser`, which holds the state)."""

    __slots__ = ()

    def _read_chunk(self, chunk: Any, events: list[StreamEvent]) -> None:
        choices = get_field(chunk, "choices")
        if isinstance(choices, list):
            for choice in choices[:1]:
                delta = get_field(choice, "delta") or get_field(choice, "message") or {}
                self._read_message(delta, events, openai=True)
                reason = get_field(choice, "finish_reason")
                if isinstance(reason, str) and reason:
                    self._finish = reason
            return
        message = get_field(chunk, "message")
        if message is not None and not isinstance(message, str):
            self._read_message(message, events, openai=False)
        reason = get_field(chunk, "done_reason") or get_field(chunk, "finish_reason")
        if isinstance(reason, str) and reason:
            self._finish = reason

    def _read_message(self, message: Any, events: list[StreamEvent], openai: bool) -> None:
        content = get_field(message, "content")
        if isinstance(content, str):
            self._append(self._admit(content))
        thinking = get_field(message, "thinking") or get_field(message, "reasoning_content") or get_field(message, "reasoning")
        if isinstance(thinking, str) and thinking:
            self._thinking_field.append(thinking)
            events.append(ThinkingDelta(thinking))
        calls = get_field(message, "tool_calls")
        legacy = get_field(message, "function_call")
        if not calls and isinstance(legacy, Mapping):
            calls = [{"index": 0, "function": legacy}]
        if not isinstance(calls, list):
            return
        for item in calls:
            index = get_field(item, "index")
            if openai or (isinstance(index, int) and _is_fragment(item)):
                self._openai_fragment(item, index if isinstance(index, int) else len(self._openai_calls))
            else:
                self._native_items.append(item)
                found, diagnostics = parse_native_calls([item])
                self._announce(found, diagnostics, events)

    def _openai_fragment(self, item: Any, index: int) -> None:
        slot = self._openai_calls.setdefault(index, _OpenAICall())
        call_id = get_field(item, "id")
        if isinstance(call_id, str) and call_id:
            slot.id = call_id
        function = get_field(item, "function") or {}
        name = get_field(function, "name")
        if isinstance(name, str):
            slot.name += name if not slot.name or name != slot.name else ""
        arguments = get_field(function, "arguments")
        if isinstance(arguments, str):
            slot.arguments.append(arguments)
        elif isinstance(arguments, Mapping):
            slot.arguments = [json.dumps(arguments)]

    @staticmethod
    def _openai_item(slot: _OpenAICall) -> dict[str, Any]:
        return {"id": slot.id, "type": "function", "function": {"name": slot.name, "arguments": "".join(slot.arguments)}}

    def _flush_openai(self, events: list[StreamEvent]) -> None:
        if not self._openai_calls:
            return
        items = [self._openai_item(c) for _, c in sorted(self._openai_calls.items())]
        found, diagnostics = parse_native_calls(items)
        self._announce(found, diagnostics, events)


def _is_fragment(item: Any) -> bool:
    """An OpenAI-style streamed piece (string arguments) rather than Ollama's complete call."""
    function = get_field(item, "function") or {}
    return isinstance(get_field(function, "arguments"), str) or get_field(item, "type") == "function"
