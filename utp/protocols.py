"""The seams of UTP, as structural Protocols (the SDD's three plus providers).

Anything with the right methods plugs in: a parser written elsewhere, an MCP
server wrapped as a tool provider, a backend for another server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from utp.types import ParsedResponse, Tool, ToolCall, ToolResult


@runtime_checkable
class ToolCallParser(Protocol):
    """Extracts tool calls from a model response (str, dict or object)."""

    def can_parse(self, response: Any) -> bool:
        """Cheap check: could this parser find anything in ``response``?"""
        ...

    def parse(self, response: Any) -> ParsedResponse:
        """Never raises on malformed input: problems become diagnostics."""
        ...


@runtime_checkable
class CallRenderer(Protocol):
    """Writes calls the way a model of one family would (for prompts and tests)."""

    def render(self, calls: Sequence[ToolCall]) -> str: ...


@runtime_checkable
class ToolDefinitionAdapter(Protocol):
    """Turns internal :class:`Tool` definitions into what a provider expects."""

    def format_tools(self, tools: Sequence[Tool]) -> Any:
        """The value of the request's ``tools`` field, or ``None`` to send none."""
        ...

    def format_system_prompt(self, base_prompt: str, tools: Sequence[Tool]) -> str:
        """The system prompt, with tool instructions where the format needs them."""
        ...


@runtime_checkable
class ToolResultAdapter(Protocol):
    """Turns results (and the assistant turn that asked for them) into messages."""

    def format_assistant(self, parsed: ParsedResponse) -> dict[str, Any]:
        """The assistant message to keep in history for a turn that made calls."""
        ...

    def format_results(
        self, calls: Sequence[ToolCall], results: Sequence[ToolResult]
    ) -> list[dict[str, Any]]:
        """Messages that carry the results back, in call order."""
        ...


@runtime_checkable
class ToolProvider(Protocol):
    """A pluggable set of tools (seed 002's ToolProviderProtocol)."""

    async def list_tools(self) -> list[Tool]: ...

    async def execute_tool(self, tool_name: str, parameters: dict[str, Any]) -> ToolResult: ...
