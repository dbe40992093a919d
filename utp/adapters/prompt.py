"""Tools taught through the prompt, for models without native tool support.

Nothing goes in the request's ``tools`` field. The system prompt lists the
tools and shows the exact call syntax of one call family by *rendering* an
example call with that family's renderer, so the prompt and the parser can
never disagree about the syntax. Tiny models (135M-270M parameters) copy
demonstrations far more reliably than they follow instructions, so
``few_shot=True`` adds worked exchanges as prior turns: a call, its result,
the answer in prose, and one question answered without any tool.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from utp.adapters.examples import example_arguments
from utp.adapters.listing import tool_listing
from utp.adapters.text import TextResultAdapter
from utp.parsers import get_family
from utp.tooldefs import normalize_tools
from utp.types import Tool, ToolCall, ToolResult

#: how many tools the demonstrations and the parallel example use (the first offered)
DEMONSTRATED_TOOLS = 2

#: (question, answer, words that would make a tool fit it); first one no tool fits wins
_RESTRAINT_EXAMPLES: tuple[tuple[str, str, frozenset[str]], ...] = (
    (
        "What is the capital of France?",
        "The capital of France is Paris.",
        frozenset({"capital", "france", "country", "countries", "geography", "wiki", "wikipedia", "search", "fact", "facts"}),
    ),
    ("Say hello in Spanish.", "¡Hola!", frozenset({"translate", "translation", "spanish", "language", "hello"})),
    ("Thanks, that's all for now.", "You're welcome!", frozenset()),
)


class PromptDefinitionAdapter:
    """Instructions (and optionally demonstrations) for one call family."""

    def __init__(self, family: str, few_shot: bool = False) -> None:
        self.family = get_family(family)  # unknown names fail here, with the known ones listed
        self.few_shot = few_shot

    @property
    def family_name(self) -> str:
        return self.family.name

    def format_tools(self, tools: Sequence[Any]) -> None:
        return None

    def format_system_prompt(self, base_prompt: str, tools: Sequence[Any]) -> str:
        normalized = normalize_tools(list(tools))
        if not normalized:
            return base_prompt
        block = self.instructions(normalized)
        return f"{base_prompt.rstrip()}\n\n{block}" if base_prompt.strip() else block

    def instructions(self, tools: Sequence[Tool]) -> str:
        calls = self.example_calls(tools)
        parts = [
            "# Tools",
            "You can call these tools:",
            tool_listing(self.family.name, tools),
            "To call a tool, reply with ONLY the call, written exactly like this:",
            self.family.render(calls[:1]),
        ]
        if len(calls) > 1:
            parts += ["To call several tools at once, write them together like this:", self.family.render(calls)]
        parts.append(
            "Rules:\n"
            "- Use only the tools listed above, with their exact names and argument names.\n"
            "- After your call, the tool results arrive in the next message; then answer the user in plain text.\n"
            "- If no tool fits the request, answer directly in plain text without calling a tool."
        )
        return "\n\n".join(parts)

    def example_calls(self, tools: Sequence[Tool]) -> list[ToolCall]:
        """One synthesised call for each of the first offered tools."""
        return [
            ToolCall(name=t.name, arguments=example_arguments(t), format=self.family.name)
            for t in list(tools)[:DEMONSTRATED_TOOLS]
        ]

    def demonstrations(self, tools: Sequence[Any]) -> list[dict[str, Any]]:
        """Prior turns to put before the real conversation (empty unless ``few_shot``)."""
        normalized = normalize_tools(list(tools))
        if not self.few_shot or not normalized:
            return []
        results = TextResultAdapter(self.family.name)
        messages: list[dict[str, Any]] = []
        for call in self.example_calls(normalized):
            result = ToolResult(call_id=None, tool_name=call.name, result={"status": "ok"}, executed=True)
            messages.append({"role": "user", "content": _request_for(_tool(normalized, call.name), call)})
            messages.append({"role": "assistant", "content": self.family.render([call])})
            messages.extend(results.format_results([call], [result]))
            messages.append({"role": "assistant", "content": _answer_for(call)})
        question, answer = _restraint_example(normalized)
        messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        return messages


def _tool(tools: Sequence[Tool], name: str) -> Tool:
    return next(t for t in tools if t.name == name)


def _request_for(tool: Tool, call: ToolCall) -> str:
    """A user request the demonstrated call answers, built from the description."""
    sentence = re.split(r"(?<=[.!?])\s", tool.description.strip(), maxsplit=1)[0].rstrip(".!? ")
    ask = sentence or f"Use {tool.name}"
    if call.arguments:
        details = ", ".join(f"{k}: {_words(v)}" for k, v in call.arguments.items())
        return f"{ask} ({details})."
    return f"{ask}."


def _answer_for(call: ToolCall) -> str:
    subject = next((_words(v) for v in call.arguments.values()), "")
    return f"Done: {call.name} returned ok" + (f" for {subject}." if subject else ".")


def _words(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _restraint_example(tools: Sequence[Tool]) -> tuple[str, str]:
    vocabulary: set[str] = set()
    for tool in tools:
        vocabulary.update(re.findall(r"[a-z]+", f"{tool.name} {tool.description}".lower().replace("_", " ")))
    for question, answer, topics in _RESTRAINT_EXAMPLES:
        if not topics & vocabulary:
            return question, answer
    question, answer, _ = _RESTRAINT_EXAMPLES[-1]
    return question, answer
