"""SB Intuitions' Sarashina: ``<|tool_calls|>[{'name': ..., 'arguments': {...}}]``.

Sarashina2.2's chat template has the model write the special token and then
a Python list of call dicts (Python's repr: single quotes, ``True``,
``None``, backslash escapes); nothing closes it, so the calls end where the
list's bracket closes. That is the format, not damage, so it is read as
Python reads it and no repair is recorded. A list Python cannot read is
reported unreadable. DeepSeek's calls token spelled in ASCII is the same text;
it stays DeepSeek's when no list follows.
"""

from __future__ import annotations

from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.callshape import calls_from_value
from utp.parsers.pythoncalls import MAX_SPAN, bracket_end
from utp.parsers.familykit import unreadable
from utp.parsers.pyliteral import LiteralError, parse_literal
from utp.parsers.textscan import skip_space
from utp.types import DiagnosticKind, ToolCall

TAG = "<|tool_calls|>"


@register_family
class SarashinaFamily(CallFamily):
    name = "sarashina"
    #: above DeepSeek, whose ASCII spelling of its calls token is the same text
    priority = 55
    declared_triggers = static_triggers((TAG,), {TAG: r"\s*+\["})
    aliases = ("sarashina2",)
    summary = "<|tool_calls|>[{'name': ..., 'arguments': {...}}] (Sarashina, a Python list of dicts)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        start = skip_space(text, pos + len(TAG))
        if not text.startswith("[", start):
            return None
        end = bracket_end(text, start, MAX_SPAN)
        if end == -1:
            return unreadable(self.name, text, pos, len(text), "output ended inside the call list", kind=DiagnosticKind.TRUNCATED)
        if end < 0:
            return None
        try:
            value, repairs = parse_literal(text[start:end])
        except LiteralError as error:
            return unreadable(self.name, text, pos, end, f"the call list is not a Python literal: {error}")
        found = calls_from_value(value, self.name, text[start:end], repairs)
        if found is None:
            return None
        return Extraction(end, found[0], found[1])

    def render(self, calls: Sequence[ToolCall]) -> str:
        return TAG + repr([{"name": c.name, "arguments": c.arguments} for c in calls])
