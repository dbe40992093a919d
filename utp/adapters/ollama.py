"""Ollama's native ``/api/chat`` shapes.

Definitions look like OpenAI's, but history differs: ``arguments`` must be a
JSON *object* (a string fails to decode), results name their tool with
``tool_name`` (ids exist only since v0.12.10, so they are sent only when the
model gave one), and the assistant's ``thinking`` goes back with its turn, as
Ollama's tool-calling docs ask.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from utp.adapters.openai import OpenAIDefinitionAdapter
from utp.adapters.results import pair_results
from utp.types import ParsedResponse, ToolCall, ToolResult


class OllamaDefinitionAdapter(OpenAIDefinitionAdapter):
    """Same ``tools`` array as OpenAI; Ollama drops schema keywords it cannot store."""


class OllamaResultAdapter:
    def format_assistant(self, parsed: ParsedResponse) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": parsed.content}
        if parsed.thinking:
            message["thinking"] = parsed.thinking
        if parsed.tool_calls:
            message["tool_calls"] = [self._tool_call(c) for c in parsed.tool_calls]
        return message

    def format_results(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        messages = []
        for call, result in pair_results(calls, results):
            message: dict[str, Any] = {"role": "tool", "tool_name": call.name, "content": result.content_text()}
            call_id = call.id or result.call_id
            if call_id:
                message["tool_call_id"] = call_id
            messages.append(message)
        return messages

    @staticmethod
    def _tool_call(call: ToolCall) -> dict[str, Any]:
        entry: dict[str, Any] = {"function": {"name": call.name, "arguments": dict(call.arguments)}}
        if call.id:
            entry["id"] = call.id
        return entry
