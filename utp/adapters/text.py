"""History for models taught to call tools in text (prompt-based formats).

Such a model has no ``tool`` role to read and no ``tool_calls`` field to
write. Its own turn goes back exactly as it wrote it, call markup included, so
the next turn sees its syntax confirmed; the results come back as one user
message, in the wrapping its family's chat templates use (``<tool_response>``
for Qwen/Hermes, ``<function_results>`` for Anthropic-style XML) or as a plain
labelled list. Errors say what went wrong in words a small model can act on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from utp.adapters.results import error_line, pair_results
from utp.parsers import UnknownFormatError, get_family
from utp.parsers.base import CallFamily
from utp.response import view_response
from utp.types import ParsedResponse, ToolCall, ToolResult

Pairs = Sequence[tuple[ToolCall, ToolResult]]


def _value(result: ToolResult) -> Any:
    return error_line(result) if not result.success else result.result


def _text(result: ToolResult) -> str:
    return error_line(result) if not result.success else result.content_text()


def plain_results(pairs: Pairs) -> str:
    lines = ["Tool results:"]
    lines += [f"[{call.name}] {_text(result)}" for call, result in pairs]
    # No instruction after the list: small models echoed one ("Answer the user
    # with these results...") as their answer. What to do next is taught by the
    # system prompt's rules and by the demonstrations.
    return "\n".join(lines)


def hermes_results(pairs: Pairs) -> str:
    """Hermes' ``<tool_response>{"name": ..., "content": ...}</tool_response>``, one per call.

    Qwen's templates wrap each ``tool`` message the same way inside a user
    turn; the name is kept so parallel results cannot be confused.
    """
    blocks = []
    for call, result in pairs:
        body = json.dumps({"name": call.name, "content": _value(result)}, ensure_ascii=False, default=str)
        blocks.append(f"<tool_response>\n{body}\n</tool_response>")
    return "\n".join(blocks)


def tool_response_results(pairs: Pairs) -> str:
    """Qwen3-Coder's template: the bare result text in ``<tool_response>`` per call."""
    return "\n".join(f"<tool_response>\n{_text(result)}\n</tool_response>" for _, result in pairs)


def function_results(pairs: Pairs) -> str:
    """Anthropic's prompt-era ``<function_results>`` block."""
    parts = ["<function_results>"]
    for call, result in pairs:
        tag = "stdout" if result.success else "error"
        parts.append(f"<result>\n<tool_name>{call.name}</tool_name>\n<{tag}>\n{_text(result)}\n</{tag}>\n</result>")
    parts.append("</function_results>")
    return "\n".join(parts)


#: family name → how its results are written; other families get :func:`plain_results`
RESULT_STYLES: dict[str, Callable[[Pairs], str]] = {
    "hermes": hermes_results,
    "qwen3_coder": tool_response_results,
    "anthropic_xml": function_results,
}


class TextResultAdapter:
    """Assistant turns as the raw text; results as one user message."""

    def __init__(self, family: str | None = None) -> None:
        resolved = _family(family)  # aliases ("qwen_xml") wrap results like their family
        self.family = resolved.name if resolved is not None else family

    def format_assistant(self, parsed: ParsedResponse) -> dict[str, Any]:
        return {"role": "assistant", "content": self.assistant_text(parsed)}

    def format_results(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        pairs = pair_results(calls, results)
        if not pairs:
            return []
        style = RESULT_STYLES.get(self.family or "", plain_results)
        return [{"role": "user", "content": style(pairs)}]

    def assistant_text(self, parsed: ParsedResponse) -> str:
        """What the model wrote, markup included; rebuilt from the calls when the raw text is gone."""
        raw = _strip_reasoning(view_response(parsed.raw_response).content) if parsed.raw_response is not None else ""
        # Calls that came in the native field have no markup in the raw text;
        # render them so the model still sees, in its own syntax, what it asked for.
        missing = [c for c in parsed.tool_calls if c.format == "native"] if raw else list(parsed.tool_calls)
        text = raw or parsed.content
        if missing:
            rendered = self._render(missing)
            text = f"{text.rstrip()}\n{rendered}" if text.strip() else rendered
        return text

    def _render(self, calls: Sequence[ToolCall]) -> str:
        family = _family(self.family) or _family(calls[0].format)
        if family is not None:
            return family.render(calls)
        return "\n".join(
            json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False, default=str) for c in calls
        )


def _family(name: str | None) -> CallFamily | None:
    if not name or name == "native":
        return None
    try:
        return get_family(name)
    except UnknownFormatError:
        return None


def _strip_reasoning(text: str) -> str:
    """Drop an inline ``<think>`` block, as Qwen3's templates do for past turns."""
    marker = "</think>"
    if marker in text:
        return text.rsplit(marker, 1)[1].lstrip("\n")
    return text
