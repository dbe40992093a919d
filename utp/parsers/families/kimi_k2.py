"""Moonshot Kimi K2: calls in a tool-calls section, each with an id ``functions.NAME:IDX``.

::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0
    <|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>

The id is kept as the call id; the name is the part between ``functions.``
and ``:IDX``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.callshape import build_call, unparseable
from utp.parsers.jsonrepair import loads_lenient
from utp.parsers.textscan import find_forward
from utp.types import Diagnostic, DiagnosticKind, ToolCall

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
ARG_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
_ID = re.compile(r"\s*(?:functions\.)?([^\s:<>]{1,200}?)(?::(\d+))?\s*$")
#: scan lookahead for the section token. ``extract`` skips whitespace (``\s`` is ``str.isspace``)
#: after it and returns None unless a call token, the section end or the end of the text follows.
#: The call token gets no head: Kimi reads any ``<|tool_call_begin|>`` (a call, or an UNPARSEABLE
#: one without an argument token).
SECTION_HEAD = "\\s*+(?:\\Z|" + re.escape(CALL_BEGIN) + "|" + re.escape(SECTION_END) + ")"


@register_family
class KimiK2Family(CallFamily):
    name = "kimi_k2"
    triggers = (SECTION_BEGIN, CALL_BEGIN)
    priority = 50
    aliases = ("kimi", "kimi_k2_instruct")
    trigger_heads = {SECTION_BEGIN: SECTION_HEAD}
    summary = "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>..."

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        cursor = _skip(text, pos + len(SECTION_BEGIN)) if trigger == SECTION_BEGIN else pos
        end = cursor
        while text.startswith(CALL_BEGIN, cursor):
            head_start = cursor + len(CALL_BEGIN)
            arg = find_forward(text, ARG_BEGIN, head_start)
            close = find_forward(text, CALL_END, head_start)
            if arg < 0 or (close >= 0 and arg > close):
                stop = close + len(CALL_END) if close >= 0 else len(text)
                diagnostics.append(unparseable(self.name, "call without <|tool_call_argument_begin|>", text[cursor:stop], cursor))
                end = cursor = _skip(text, stop)
                if close < 0:
                    return Extraction(len(text), calls, diagnostics)
                continue
            ident = _ID.match(text[head_start:arg])
            body_end = close if close >= 0 else len(text)
            raw_args = text[arg + len(ARG_BEGIN) : body_end]
            if ident is None:
                diagnostics.append(unparseable(self.name, "unreadable function id", text[cursor:body_end], cursor))
            else:
                self._add(ident, text[head_start:arg].strip(), raw_args, text[cursor:body_end], calls, diagnostics)
            if close < 0:
                diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended inside a call", text[cursor:][:300], self.name, cursor))
                return Extraction(len(text), calls, diagnostics)
            end = close + len(CALL_END)
            cursor = _skip(text, end)
        if text.startswith(SECTION_END, cursor):
            end = cursor + len(SECTION_END)
        if trigger == SECTION_BEGIN and not calls and not diagnostics:
            if cursor >= len(text):
                return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended after the section token", text[pos:], self.name, pos)])
            # an empty section goes with its end token; a lone section token stays text
            return Extraction(end, [], []) if end > cursor else None
        return Extraction(end, calls, diagnostics) if end > pos else None

    def _add(self, ident: re.Match[str], call_id: str, raw_args: str, raw: str, calls: list[ToolCall], diagnostics: list[Diagnostic]) -> None:
        name = ident.group(1)
        try:
            arguments, repairs = loads_lenient(raw_args) if raw_args.strip() else ({}, [])
        except ValueError as exc:
            diagnostics.append(unparseable(self.name, f"arguments of {name!r}: {exc}", raw))
            return
        call, diags = build_call(name, arguments, self.name, raw, repairs, call_id)
        diagnostics.extend(diags)
        if call is not None:
            calls.append(call)

    def render(self, calls: Sequence[ToolCall]) -> str:
        items = "".join(
            f"{CALL_BEGIN}functions.{c.name}:{i}{ARG_BEGIN}{json.dumps(c.arguments, ensure_ascii=False)}{CALL_END}"
            for i, c in enumerate(calls)
        )
        return f"{SECTION_BEGIN}{items}{SECTION_END}"


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos
