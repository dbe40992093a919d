"""LongCat-Flash calls: GLM's key/value markup under ``<longcat_...>`` tags.

Ollama's LongCat-Flash parser reads::

    <longcat_tool_call>NAME<longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value></longcat_tool_call>

one block per call, back to back. Values are raw text typed by the tool's
schema, and read as JSON when untyped and JSON (as the GLM family reads
them; the key/value reader is its). The JSON dialect,
``<longcat_tool_call>{"name": ..., "arguments": ...}</longcat_tool_call>``, is
the Hermes family's: this one passes on a body that opens with a bracket.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.families.glm import KeyValueSyntax, read_key_value_call, render_key_value
from utp.parsers.textscan import skip_space
from utp.types import ToolCall

OPEN = "<longcat_tool_call>"
CLOSE = "</longcat_tool_call>"
KEY = "<longcat_arg_key>"
SYNTAX = KeyValueSyntax(
    OPEN,
    CLOSE,
    KEY,
    "</longcat_arg_key>",
    "<longcat_arg_value>",
    "</longcat_arg_value>",
    #: the bare name: one word (no blank, tag, brace or quote) of at most 256 characters
    re.compile(r"""\s*+([^\s<>{}\[\]"']{1,256}+)\s*+(?=""" + re.escape(KEY) + "|" + re.escape(CLOSE) + ")"),
)


@register_family
class LongCatFamily(CallFamily):
    name = "longcat"
    triggers = (OPEN,)
    #: above hermes on the shared opener: a bare name is ours, a JSON body is hermes'
    priority = 60
    #: a bare name's first character (scan lookahead)
    trigger_heads = {OPEN: r"""\s*+[^\s<>{}\[\]"']"""}
    aliases = ("longcat_flash", "longcat_xml")
    summary = "LongCat-Flash: <longcat_tool_call>NAME<longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value></longcat_tool_call>"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        body = skip_space(text, pos + len(OPEN))
        if body >= len(text) or text[body] in "{[":
            return None
        found = read_key_value_call(self.name, text, pos, ctx, SYNTAX)
        if found is not None and found.calls and text.endswith(CLOSE, 0, found.end):
            found.final = True
        return found

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        body = skip_space(text, pos + len(OPEN))
        return body < len(text) and text[body] in "{["

    def render(self, calls: Sequence[ToolCall]) -> str:
        return render_key_value(calls, SYNTAX)
