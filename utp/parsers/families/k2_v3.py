"""K2-V3 (K2 Horizon, MBZUAI IFM) calls: GLM's key/value markup under ``<ifm|...>`` tags.

The canonical template (SGLang's ``k2_v3`` detector) writes::

    <ifm|tool_calls>
    <ifm|tool_call>NAME<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value></ifm|tool_call>
    </ifm|tool_calls>

The ``<ifm|tool_calls>`` group wrapper is optional; a typed dialect puts
``<ifm|arg_type>T</ifm|arg_type>`` between a key and its value (the tool's
schema wins over it); a JSON dialect puts ``{"name": ..., "arguments": ...}``
(or a list of them, arguments possibly a JSON string) inside
``<ifm|tool_call>``. Values are raw text typed by the schema, read as JSON
when untyped and JSON. The key/value reader is the GLM family's.
"""

from __future__ import annotations

import re

from utp.parsers.base import Extraction, ParseContext, register_family, static_triggers
from utp.parsers.taggedjson import extract_tagged_json
from utp.parsers.familykit import unreadable
from utp.parsers.keyvalue import KeyValueFamily, KeyValueSyntax, word_name_pattern
from utp.parsers.textscan import skip_space
from utp.types import DiagnosticKind

OPEN = "<ifm|tool_call>"
CLOSE = "</ifm|tool_call>"
GROUP_OPEN = "<ifm|tool_calls>"
GROUP_CLOSE = "</ifm|tool_calls>"
KEY = "<ifm|arg_key>"
SYNTAX = KeyValueSyntax(
    OPEN,
    CLOSE,
    KEY,
    "</ifm|arg_key>",
    "<ifm|arg_value>",
    "</ifm|arg_value>",
    word_name_pattern(KEY, CLOSE),
    ("<ifm|arg_type>", "</ifm|arg_type>"),
)
#: after ``<ifm|tool_call>``: a bare name's first character or a JSON body (or the end: truncated)
_CALL_HEAD = r"""\s*+(?:[^\s<>"']|\Z)"""
#: after the group opener: whitespace and a call opener, or the end of the text (truncated)
_GROUP_HEAD = rf"\s*+(?:{re.escape(OPEN)}|\Z)"


@register_family
class K2V3Family(KeyValueFamily):
    name = "k2_v3"
    syntax = SYNTAX
    group = (GROUP_OPEN, GROUP_CLOSE)
    aliases = ("ifm", "k2v3", "k2_horizon")
    declared_triggers = static_triggers((GROUP_OPEN, OPEN), {OPEN: _CALL_HEAD, GROUP_OPEN: _GROUP_HEAD})
    summary = "K2-V3 IFM: <ifm|tool_call>NAME<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value></ifm|tool_call>"

    def read_call(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """A bare name and key/value tags, or the JSON dialect's ``{"name": ..., "arguments": ...}``."""
        body = skip_space(text, pos + len(OPEN))
        if body >= len(text):
            return unreadable(self.name, text, pos, len(text), f"output ended after {OPEN}", kind=DiagnosticKind.TRUNCATED)
        if text[body] in "{[":
            found = extract_tagged_json(self.name, text, pos, body, closers=(CLOSE,))
            if found is not None and found.calls and text.endswith(CLOSE, 0, found.end):
                found.final = True
            return found
        return super().read_call(text, pos, ctx)
