"""MiniMax-M3 calls: XML elements, each tag behind MiniMax's ``]<]minimax[>[`` marker token.

vLLM's and llama.cpp's MiniMax-M3 parsers read (the marker written ``M``)::

    M<tool_call>
    M<invoke name="NAME">M<city>Tokyo M</city>M<shipping>M<zip>018956M</zip>M</shipping>M</invoke>
    M</tool_call>

Each argument is an element named after its key, read by
:mod:`utp.parsers.nestedelements` (objects, lists, values typed by the schema).
Invokes the output wrote whole before it was cut off run; the cut one is
reported. Reasoning comes in ``<mm:think>…</mm:think>`` (``REASONING_TAGS``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import make_call, render_value, unreadable
from utp.parsers.nestedelements import ElementMarkup, ElementsBroken, ElementsCut, as_object, read_elements
from utp.parsers.textscan import find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

MARK = "]<]minimax[>["
OPEN, CLOSE = f"{MARK}<tool_call>", f"{MARK}</tool_call>"
INVOKE_END = f"{MARK}</invoke>"
_INVOKE = re.compile(re.escape(MARK) + r"""<invoke\s+name\s*=\s*(["'])([^"'\n<>]{1,256})\1\s*>""")


_MARKUP = ElementMarkup(MARK, CLOSE)


@register_family
class MinimaxM3Family(CallFamily):
    name = "minimax_m3"
    #: after the block's opener: an invoke, the closer, or the end of the text (in a tag: truncated);
    #: the marker alone is no reason to look (a flood of openers never reaches ``extract``)
    declared_triggers = static_triggers((OPEN,), {OPEN: rf"\s*+(?:{re.escape(MARK)}(?:<invoke\s|</tool_call>|<[^<>]{{0,300}}+\Z)|\S{{0,40}}+\Z)"})
    aliases = ("minimax3", "minimax_m3_xml")
    summary = 'MiniMax-M3: ]<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<a>1]<]minimax[>[</a>…'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        cursor = skip_space(text, pos + len(OPEN))
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        while True:
            if text.startswith(CLOSE, cursor):
                return Extraction(end=cursor + len(CLOSE), calls=calls, diagnostics=diagnostics, final=True)
            invoke = _INVOKE.match(text, cursor)
            if invoke is None:
                if _MARKUP.cut_off(text, cursor, CLOSE):
                    return unreadable(self.name, text, cursor if calls else pos, len(text), "output ended inside the call block",
                                      kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics)
                if not calls:
                    return None
                close = find_forward(text, CLOSE, cursor)
                end = len(text) if close == -1 else close + len(CLOSE)
                return unreadable(self.name, text, cursor, end, "text where an invoke belongs", calls=calls, diagnostics=diagnostics)
            name = invoke.group(2).strip()
            tool = ctx.tool(name)
            schema = tool.parameters if tool is not None else None
            try:
                pairs, after = read_elements(_MARKUP, text, invoke.end(), INVOKE_END, schema)
            except ElementsCut:
                return unreadable(self.name, text, cursor if calls else pos, len(text), f"output ended inside the invoke of {name!r}",
                                  kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics)
            except ElementsBroken as exc:
                close = find_forward(text, CLOSE, cursor)
                end = len(text) if close == -1 else close + len(CLOSE)
                return unreadable(self.name, text, cursor, end, f"invoke of {name!r}: {exc}", calls=calls, diagnostics=diagnostics)
            calls.append(make_call(self.name, name, as_object(pairs, schema), text[cursor:after], cursor, [], diagnostics))
            cursor = skip_space(text, after)

    def render(self, calls: Sequence[ToolCall]) -> str:
        """One element per argument; objects and lists as JSON text (read back as JSON)."""
        invokes = "".join(
            f'{MARK}<invoke name="{call.name}">'
            + "".join(f"{MARK}<{key}>{render_value(value)}{MARK}</{key}>" for key, value in call.arguments.items())
            + f"{INVOKE_END}\n"
            for call in calls
        )
        return f"{OPEN}\n{invokes}{CLOSE}"
