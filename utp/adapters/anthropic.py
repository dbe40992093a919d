"""Anthropic Messages API shapes.

Definitions are ``{"name", "description", "input_schema"}``. A turn that calls
tools is a list of content blocks (text, then ``tool_use`` blocks, each with a
required id), and all results of that turn go back in ONE user message of
``tool_result`` blocks: the API rejects a conversation whose tool results are
split across messages or that leaves a ``tool_use`` unanswered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from utp.adapters.ids import CallIds
from utp.adapters.results import error_line, pair_results
from utp.adapters.schema import object_schema
from utp.tooldefs import normalize_tools
from utp.types import ParsedResponse, ToolCall, ToolResult


class AnthropicDefinitionAdapter:
    def format_tools(self, tools: Sequence[Any]) -> list[dict[str, Any]] | None:
        return [
            {"name": t.name, "description": t.description, "input_schema": object_schema(t.parameters)}
            for t in normalize_tools(list(tools))
        ] or None

    def format_system_prompt(self, base_prompt: str, tools: Sequence[Any]) -> str:
        return base_prompt


class AnthropicResultAdapter:
    """One instance per conversation: it numbers the ``tool_use`` ids it invents."""

    def __init__(self) -> None:
        self._ids = CallIds("toolu_")

    def format_assistant(self, parsed: ParsedResponse) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        if parsed.content.strip():  # the API rejects empty text blocks
            blocks.append({"type": "text", "text": parsed.content})
        for call in parsed.tool_calls:
            blocks.append({"type": "tool_use", "id": self._ids.ensure(call), "name": call.name, "input": dict(call.arguments)})
        return {"role": "assistant", "content": blocks}

    def format_results(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        pairs = pair_results(calls, results)
        if not pairs:
            return []
        blocks = []
        for call, result in pairs:
            if not call.id and result.call_id:
                call.id = result.call_id
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": self._ids.ensure(call),
                    "content": result.content_text() if result.success else error_line(result),
                    "is_error": not result.success,
                }
            )
        return [{"role": "user", "content": blocks}]
