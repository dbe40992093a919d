"""Tools taught through the prompt, for models without native tool support.

Nothing goes in the request's ``tools`` field. The system prompt lists the
tools and shows the exact call syntax of one call family by *rendering* an
example call with that family's renderer, so the prompt and the parser can
never disagree about the syntax. Tiny models (135M-270M parameters) copy
demonstrations far more reliably than they follow instructions, so
``few_shot=True`` adds worked exchanges as prior turns: a greeting answered
without a tool, then per demonstrated tool a request a user could have typed,
the call, a result in the same wrapping real results get, and an answer that
quotes it. Everything here is built from the offered tools alone (names,
descriptions, schemas), never from knowledge of a particular tool set.
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

#: (question no tool should answer, words that would make a tool fit it); first one no tool fits wins
_RESTRAINT_EXAMPLES: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "What is the capital of France?",
        frozenset({"capital", "france", "country", "countries", "geography", "wiki", "wikipedia", "search", "fact", "facts"}),
    ),
    ("Say hello in Spanish.", frozenset({"translate", "translation", "spanish", "language", "hello"})),
    ("Thanks, that's all for now.", frozenset()),
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
        return with_block(base_prompt, self.instructions(normalized))

    def instructions(self, tools: Sequence[Tool]) -> str:
        calls = self.example_calls(tools)
        parts = [
            *tools_heading(self.family.name, tools),
            "To call a tool, reply with ONLY the call, written exactly like this:",
            self.family.render(calls[:1]),
        ]
        if len(calls) > 1:
            parts += ["To call several tools at once, write them together like this:", self.family.render(calls)]
        question = restraint_example(tools)
        parts.append(
            "Rules:\n"
            "- Use only the tools listed above, with their exact names and argument names.\n"
            "- After your call, the tool results arrive in the next message; then answer the user in plain text.\n"
            f"- If no tool fits the request (like \"{question}\"), answer directly in plain text without calling a tool."
        )
        return "\n\n".join(parts)

    def example_calls(self, tools: Sequence[Tool]) -> list[ToolCall]:
        """One synthesised call for each of the first offered tools."""
        return [
            ToolCall(name=t.name, arguments=example_arguments(t), format=self.family.name)
            for t in list(tools)[:DEMONSTRATED_TOOLS]
        ]

    def demonstrations(self, tools: Sequence[Any]) -> list[dict[str, Any]]:
        """Prior turns to put before the real conversation (empty unless ``few_shot``).

        Each exchange must look exactly like the real conversation will: a
        request a user would type, the call, the result in the very wrapping
        real results come back in, and an answer that *uses* the result. A
        tiny model copies whatever is unnatural in a demonstration (a request
        that reads like a schema, ``{"status": "ok"}``, "Done: ... returned
        ok") instead of the pattern it was meant to show.
        """
        normalized = normalize_tools(list(tools))
        if not self.few_shot or not normalized:
            return []
        results = TextResultAdapter(self.family.name)
        # A greeting first, then the calls. Measured on SmolLM2-135M: a
        # demonstrated question answered in prose (anywhere in the prior
        # turns) made it answer real questions in prose; a greeting shows that
        # not every message needs a tool without teaching that, and restraint
        # for questions is taught by the rules (with an example question).
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": GREETING[0]},
            {"role": "assistant", "content": GREETING[1]},
        ]
        for call in self.example_calls(normalized):
            tool = _tool(normalized, call.name)
            outcome = example_result(tool, call)
            result = ToolResult(call_id=None, tool_name=call.name, result=outcome, executed=True)
            messages.append({"role": "user", "content": example_request(tool, call)})
            messages.append({"role": "assistant", "content": self.family.render([call])})
            messages.extend(results.format_results([call], [result]))
            messages.append({"role": "assistant", "content": example_answer(tool, call, outcome)})
        return messages


def with_block(base_prompt: str, block: str) -> str:
    """The system prompt with the tools block after the caller's own text (if any)."""
    return f"{base_prompt.rstrip()}\n\n{block}" if base_prompt.strip() else block


def tools_heading(family: str, tools: Sequence[Tool]) -> list[str]:
    """The start of every tools block: a heading, and the tools listed as ``family`` reads them best."""
    return ["# Tools", "You can call these tools:", tool_listing(family, tools)]


#: the no-tool exchange that opens the demonstrations: no tool set answers a greeting
GREETING = ("Hi there!", "Hello! How can I help you?")

#: the value every demonstrated result reports: a plain number a model can quote back
DEMO_RESULT_VALUE = 18


def _tool(tools: Sequence[Tool], name: str) -> Tool:
    return next(t for t in tools if t.name == name)


#: first words of tool names that look something up: their demonstration is a question
LOOKUP_VERBS = frozenset(
    {"get", "fetch", "find", "lookup", "look", "search", "list", "check", "query", "read", "retrieve", "show", "describe"}
)


def example_request(tool: Tool, call: ToolCall) -> str:
    """A request a user could have typed, which the demonstrated call answers.

    Users ask questions, so a look-up tool (``get_stock_price``) is asked for
    as one: "What is the stock price for MSFT?". A small model that saw only
    imperative requests answers a real question in prose, as it would any
    question. Other tools get the description's first sentence with each
    argument's value put in place of the phrase that names it ("Send an email
    to a recipient" + ``recipient=...``), so the model sees the values move
    from the request into the call; arguments no phrase names go in brackets.
    """
    values = [_words(v) for v in call.arguments.values() if not isinstance(v, (dict, list))]
    words = _name_words(tool.name)
    if words and words[0] in LOOKUP_VERBS and len(words) > 1 and values:
        return f"What is the {' '.join(_subject_words(tool.name))} for {' and '.join(values)}?"
    sentence = re.split(r"(?<=[.!?])\s", tool.description.strip(), maxsplit=1)[0].rstrip(".!? ")
    text = sentence or f"Use {' '.join(words)}"
    leftover: list[str] = []
    for name, value in call.arguments.items():
        replaced = _put_value_in_place(text, name, value)
        if replaced is None:
            leftover.append(f"{' '.join(_name_words(name))}: {_words(value)}")
        else:
            text = replaced
    if leftover:
        text = f"{text} ({', '.join(leftover)})"
    return text[:1].upper() + text[1:] + "."


def _put_value_in_place(text: str, name: str, value: Any) -> str | None:
    """``text`` with "a/the/its ... <name's last word>" replaced by the value, or ``None``."""
    if isinstance(value, (dict, list)) or value is None or not _name_words(name):
        return None
    noun = re.escape(_name_words(name)[-1])
    # up to three describing words between the determiner and the noun, but no
    # preposition: "a customer by email" names the customer, not the email
    between = r"(?:(?!(?:by|of|for|in|on|at|from|to|with|and|or)\b)[\w-]+\s+){0,3}?"
    phrase = re.compile(rf"\b(?:a|an|the|its|their|one|some)\s+{between}{noun}\w*\b", re.I)
    match = phrase.search(text)
    if match is None:
        return None
    return text[: match.start()] + _words(value) + text[match.end() :]


def example_result(tool: Tool, call: ToolCall) -> dict[str, Any]:
    """A result with one field named after what the tool gives back.

    Not ``{"status": "ok"}`` (copied verbatim as an answer) and not the
    arguments echoed back (a small model then copies the result's keys into
    its next call's arguments).
    """
    return {"_".join(_subject_words(tool.name)): DEMO_RESULT_VALUE}


def example_answer(tool: Tool, call: ToolCall, outcome: dict[str, Any]) -> str:
    """A short answer in prose that quotes the result, as the real answer should."""
    what = " ".join(_subject_words(tool.name))
    subject = next((_words(v) for v in call.arguments.values() if not isinstance(v, (dict, list))), "")
    value = outcome["_".join(_subject_words(tool.name))]
    return f"The {what} for {subject} is {value}." if subject else f"The {what} is {value}."


def _name_words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def _subject_words(tool_name: str) -> list[str]:
    """What a tool gives back, from its name: ``get_stock_price`` → stock price."""
    words = _name_words(tool_name)
    return words[1:] if len(words) > 1 else ["result"]


def _words(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def restraint_example(tools: Sequence[Tool]) -> str:
    """A question for the rules' "no tool fits" example that none of ``tools`` could answer."""
    vocabulary: set[str] = set()
    for tool in tools:
        vocabulary.update(re.findall(r"[a-z]+", f"{tool.name} {tool.description}".lower().replace("_", " ")))
    for question, topics in _RESTRAINT_EXAMPLES:
        if not topics & vocabulary:
            return question
    return _RESTRAINT_EXAMPLES[-1][0]
