"""Hunyuan (HY v4) calls: GLM's key/value markup with every tag carrying the ``:opensource`` suffix.

vLLM's HY v4 parser reads::

    <tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>k</arg_key:opensource><arg_value:opensource>v</arg_value:opensource></tool_call:opensource></tool_calls:opensource>

several calls back to back inside the group. HY v3's open-source release
writes the same tags with ``<tool_sep:opensource>`` between the name and the
first key (as HY v3 itself writes GLM's own tags with ``<tool_sep>``, which the
GLM family reads); the separator is optional. Values are raw text typed by the
tool's schema, read as JSON when untyped and JSON. HY v3's JSON variant writes
the arguments as one JSON object after the separator instead of key/value
tags (``<tool_call:opensource>NAME<tool_sep:opensource>{"k": "v"}</tool_call:opensource>``).
"""

from __future__ import annotations

import re

from utp.parsers.base import Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import json_arguments_before, make_call
from utp.parsers.keyvalue import _NAME_HEAD, KeyValueFamily, KeyValueSyntax, word_name_pattern
from utp.parsers.textscan import skip_space
from utp.types import Diagnostic

SUFFIX = ":opensource"
OPEN, CLOSE = f"<tool_call{SUFFIX}>", f"</tool_call{SUFFIX}>"
GROUP_OPEN, GROUP_CLOSE = f"<tool_calls{SUFFIX}>", f"</tool_calls{SUFFIX}>"
KEY = f"<arg_key{SUFFIX}>"
SEPARATOR = f"<tool_sep{SUFFIX}>"
#: the JSON variant's header: the name, the separator, then the arguments object
_JSON_HEADER = re.compile(rf"""\s*+([^\s<>{{}}\[\]"']{{1,256}}+)\s*+{re.escape(SEPARATOR)}\s*+(?=\{{)""")
SYNTAX = KeyValueSyntax(
    OPEN, CLOSE, KEY, f"</arg_key{SUFFIX}>", f"<arg_value{SUFFIX}>", f"</arg_value{SUFFIX}>", word_name_pattern(KEY, CLOSE, SEPARATOR), separator=SEPARATOR
)


@register_family
class HunyuanFamily(KeyValueFamily):
    name = "hunyuan"
    syntax = SYNTAX
    group = (GROUP_OPEN, GROUP_CLOSE)
    aliases = ("hy_v4", "hunyuan_v4", "hy_v3_opensource")
    declared_triggers = static_triggers((GROUP_OPEN, OPEN), {OPEN: _NAME_HEAD, GROUP_OPEN: rf"\s*+(?:{re.escape(OPEN)}|\Z)"})
    summary = "Hunyuan HY v4: <tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>k</arg_key:opensource><arg_value:opensource>v</arg_value:opensource>…"

    def read_call(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """The JSON variant when a JSON object follows the separator, else the key/value tags."""
        header = _JSON_HEADER.match(text, pos + len(OPEN))
        if header is None:
            return super().read_call(text, pos, ctx)
        name = header.group(1)
        read = json_arguments_before(self.name, text, pos, header.end(), CLOSE, name)
        if isinstance(read, Extraction):
            return read
        arguments, end, repairs = read
        after = skip_space(text, end)
        closed = text.startswith(CLOSE, after)
        if closed:
            end = after + len(CLOSE)
        else:
            repairs = [*repairs, f"missing {CLOSE}"]
        diagnostics: list[Diagnostic] = []
        return Extraction(end=end, calls=[make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)], diagnostics=diagnostics, final=closed)
