"""Native tool definitions plus a taught call family in the system prompt.

A bundle may send tools natively *and* set a ``prompt_style``: some models
accept the ``tools`` field but write calls in their own text syntax anyway,
and showing that syntax keeps them consistent. The request carries the native
``tools`` array; the system prompt (and demonstrations, for ``few_shot``)
come from the prompt adapter of the taught family.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from utp.adapters.prompt import PromptDefinitionAdapter
from utp.protocols import ToolDefinitionAdapter


class TaughtNativeDefinitionAdapter:
    def __init__(self, native: ToolDefinitionAdapter, teacher: PromptDefinitionAdapter) -> None:
        self.native = native
        self.teacher = teacher

    @property
    def family_name(self) -> str:
        return self.teacher.family_name

    def format_tools(self, tools: Sequence[Any]) -> Any:
        return self.native.format_tools(tools)

    def format_system_prompt(self, base_prompt: str, tools: Sequence[Any]) -> str:
        return self.teacher.format_system_prompt(base_prompt, tools)

    def demonstrations(self, tools: Sequence[Any]) -> list[dict[str, Any]]:
        return self.teacher.demonstrations(tools)
