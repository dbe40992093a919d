"""OpenAI chat-completions shapes (also what Ollama's ``/v1`` endpoint speaks).

Definitions are ``{"type": "function", "function": {...}}``; an assistant turn
carries ``tool_calls`` whose ``arguments`` is a JSON *string* (``/v1`` answers
400 to anything else), and each result is its own ``role: "tool"`` message
tied to the call by ``tool_call_id``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from utp.adapters.ids import CallIds
from utp.adapters.results import pair_results
from utp.adapters.schema import object_schema
from utp.tooldefs import normalize_tools
from utp.types import ParsedResponse, Tool, ToolCall, ToolResult


def function_tool(tool: Tool) -> dict[str, Any]:
    """One definition in the function-calling shape OpenAI and Ollama share."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": object_schema(tool.parameters),
        },
    }


class OpenAIDefinitionAdapter:
    """Native ``tools`` array; the system prompt needs no tool text."""

    def format_tools(self, tools: Sequence[Any]) -> list[dict[str, Any]] | None:
        # An empty ``tools`` array is rejected by OpenAI ("[] is too short"),
        # so no tools means no field at all.
        normalized = normalize_tools(list(tools))
        return [function_tool(t) for t in normalized] or None

    def format_system_prompt(self, base_prompt: str, tools: Sequence[Any]) -> str:
        return base_prompt


class OpenAIResultAdapter:
    """History in chat-completions form, with ids generated where the model gave none.

    One instance belongs to one conversation: it numbers the ids it invents.
    """

    def __init__(self) -> None:
        self._ids = CallIds("call_")

    def format_assistant(self, parsed: ParsedResponse) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": parsed.content}
        if parsed.tool_calls:
            message["tool_calls"] = [self._tool_call(c) for c in parsed.tool_calls]
        return message

    def format_results(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": self._id_for(call, result), "content": result.content_text()}
            for call, result in pair_results(calls, results)
        ]

    def _tool_call(self, call: ToolCall) -> dict[str, Any]:
        return {
            "id": self._ids.ensure(call),
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": json.dumps(call.arguments, ensure_ascii=False, default=str),
            },
        }

    def _id_for(self, call: ToolCall, result: ToolResult) -> str:
        if not call.id and result.call_id:
            call.id = result.call_id
        return self._ids.ensure(call)
