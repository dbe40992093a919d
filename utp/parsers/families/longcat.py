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

from utp.parsers.base import Extraction, ParseContext, register_family
from utp.parsers.keyvalue import KeyValueFamily, KeyValueSyntax, word_name_pattern
from utp.parsers.textscan import skip_space

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
    word_name_pattern(KEY, CLOSE),
)


@register_family
class LongCatFamily(KeyValueFamily):
    name = "longcat"
    syntax = SYNTAX
    #: above hermes on the shared opener: a bare name is ours, a JSON body is hermes'
    priority = 60
    aliases = ("longcat_flash", "longcat_xml")
    summary = "LongCat-Flash: <longcat_tool_call>NAME<longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value></longcat_tool_call>"

    def read_call(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        body = skip_space(text, pos + len(OPEN))
        if body >= len(text) or text[body] in "{[":
            return None
        return super().read_call(text, pos, ctx)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        body = skip_space(text, pos + len(OPEN))
        return body < len(text) and text[body] in "{["
