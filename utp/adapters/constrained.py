"""Constrained decoding: the reply's shape forced by a JSON Schema the server enforces.

The definition adapter sends no ``tools`` field. It lists the tools in the
system prompt, says what each branch of the reply means, and gives the loop
the schema (:meth:`ConstrainedDefinitionAdapter.response_schema`) that every
request carries, rebuilt from the tools offered in that round. Calls come
back as the ``json`` family writes them, so the ordinary ``auto`` parser
reads them and the registry checks them like any other call. The result
adapter turns the text-answer branch (``{"answer": "..."}``) back into plain
content, so a final answer reads as prose, not as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from utp.adapters.prompt import PromptDefinitionAdapter, restraint_example, tools_heading, with_block
from utp.adapters.text import TextResultAdapter
from utp.constrained import ANSWER_SHAPES, AnswerShape, reply_schema
from utp.parsers.base import CallFamily
from utp.response import view_response
from utp.tooldefs import normalize_tools
from utp.types import ParsedResponse, Tool, ToolCall

#: the call family whose syntax the schema forces (what the parser reads and scoring expects)
CONSTRAINED_FAMILY = "json"


class ConstrainedDefinitionAdapter:
    """Instructions for the constrained reply, plus the schema each request carries."""

    def __init__(self, allow_parallel: bool = True, answer: str = "key") -> None:
        self.allow_parallel = allow_parallel
        self.answer: AnswerShape = ANSWER_SHAPES[answer]
        self._examples = PromptDefinitionAdapter(CONSTRAINED_FAMILY)

    @property
    def family(self) -> CallFamily:
        """The family the calls are written in (the loop renders retry examples with it)."""
        return self._examples.family

    def format_tools(self, tools: Sequence[Any]) -> None:
        return None

    def example_calls(self, tools: Sequence[Tool]) -> list[ToolCall]:
        return self._examples.example_calls(tools)

    def response_schema(self, tools: Sequence[Any]) -> dict[str, Any]:
        """The schema the reply must follow, offering exactly ``tools`` (none: the answer branch only)."""
        return reply_schema(normalize_tools(list(tools)), allow_parallel=self.allow_parallel, answer=self.answer.name)

    def format_system_prompt(self, base_prompt: str, tools: Sequence[Any]) -> str:
        normalized = normalize_tools(list(tools))
        block = self.instructions(normalized) if normalized else f"Reply with JSON only, in this form:\n{self.answer.example(normalized)}"
        return with_block(base_prompt, block)

    def instructions(self, tools: Sequence[Tool]) -> str:
        calls = self.example_calls(tools)
        parts = [
            *tools_heading(CONSTRAINED_FAMILY, tools),
            "Reply with JSON only, in one of these forms.",
            f"To call a tool:\n{self.family.render(calls[:1])}",
        ]
        if self.allow_parallel and len(calls) > 1:
            parts.append(f"To call several tools at once:\n{self.family.render(calls)}")
        parts.append(f"To answer the user in text:\n{self.answer.example(tools)}")
        short = self.answer.short(tools)
        parts.append(
            "Rules:\n"
            "- Use only the tools listed above, with their exact names and argument names.\n"
            f"- After your call, the tool results arrive in the next message; then answer the user with {short}.\n"
            f"- If no tool fits the request (like \"{restraint_example(tools)}\"), answer directly with {short}."
        )
        return "\n\n".join(parts)


class ConstrainedResultAdapter(TextResultAdapter):
    """Results as text, as for the ``json`` family; a text-answer reply read as plain content."""

    def __init__(self, family: str | None = None, answer: str = "key") -> None:
        super().__init__(family or CONSTRAINED_FAMILY)
        self.answer: AnswerShape = ANSWER_SHAPES[answer]

    def read_answer(self, parsed: ParsedResponse) -> ParsedResponse:
        """``parsed`` with a text-answer reply's text as its content (real calls are left alone).

        Under the call shape the answer arrives as a call the parser flags
        unknown (the answer tool is never registered) or, cut off by the token
        limit, as a truncated one; either way the whole reply is the answer, so
        it is read from the reply's own text. A registered tool of that name
        is a real call and stays one.
        """
        if any(call.known is True for call in parsed.tool_calls):
            return parsed
        if self.answer.written_as_call:
            text = self.answer.read(view_response(parsed.raw_response).content or parsed.content)
            return parsed if text is None else replace(parsed, content=text, tool_calls=[], diagnostics=[])
        if parsed.tool_calls:
            return parsed
        text = self.answer.read(parsed.content)
        return parsed if text is None else replace(parsed, content=text)


__all__ = ["CONSTRAINED_FAMILY", "ConstrainedDefinitionAdapter", "ConstrainedResultAdapter"]
