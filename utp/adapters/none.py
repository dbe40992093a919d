"""No tools at all: the baseline a format is compared against, and plain chat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class NoToolsDefinitionAdapter:
    def format_tools(self, tools: Sequence[Any]) -> None:
        return None

    def format_system_prompt(self, base_prompt: str, tools: Sequence[Any]) -> str:
        return base_prompt
