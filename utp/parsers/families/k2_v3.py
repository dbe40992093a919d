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
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.callshape import extract_tagged_json
from utp.parsers.familykit import unreadable
from utp.parsers.textscan import skip_space
from utp.types import DiagnosticKind, ToolCall

from utp.parsers.families.glm import KeyValueSyntax, read_key_value_call, render_key_value

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
    #: the bare name: one word (no blank, tag, brace or quote) of at most 256 characters, so a
    #: sentence between an opener and a closer in prose is no name
    re.compile(r"""\s*+([^\s<>{}\[\]"']{1,256}+)\s*+(?=""" + re.escape(KEY) + "|" + re.escape(CLOSE) + ")"),
    ("<ifm|arg_type>", "</ifm|arg_type>"),
)
#: after ``<ifm|tool_call>``: a bare name's first character or a JSON body (or the end: truncated)
_CALL_HEAD = r"""\s*+(?:[^\s<>"']|\Z)"""
#: after the group opener: whitespace and a call opener, or the end of the text (truncated)
_GROUP_HEAD = rf"\s*+(?:{re.escape(OPEN)}|\Z)"
#: a call cut off inside its bare name or the tag after it: ``<ifm|tool_call>get_ti`` or ``…get_time\n</ifm|tool``
_CUT_IN_NAME = re.compile(r"""\s*+[^\s<>{}\[\]"']{0,256}+\s*+(<[^<>\s]{0,20})?\Z""")


def _cut_in_name(text: str, body: int) -> bool:
    """Does the text end while a call's name, or the tag after it, is still being written?"""
    match = _CUT_IN_NAME.match(text, body)
    if match is None:
        return False
    tag = match.group(1) or ""
    return KEY.startswith(tag) or CLOSE.startswith(tag)


def _read_call(family: str, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
    body = skip_space(text, pos + len(OPEN))
    if body >= len(text):
        return unreadable(family, text, pos, len(text), f"output ended after {OPEN}", kind=DiagnosticKind.TRUNCATED)
    if text[body] in "{[":
        found = extract_tagged_json(family, text, pos, body, closers=(CLOSE,))
        if found is not None and found.calls and text.endswith(CLOSE, 0, found.end):
            found.final = True
        return found
    return read_key_value_call(family, text, pos, ctx, SYNTAX)


@register_family
class K2V3Family(CallFamily):
    name = "k2_v3"
    triggers = (GROUP_OPEN, OPEN)
    aliases = ("ifm", "k2v3", "k2_horizon")
    trigger_heads = {OPEN: _CALL_HEAD, GROUP_OPEN: _GROUP_HEAD}
    summary = "K2-V3 IFM: <ifm|tool_call>NAME<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value></ifm|tool_call>"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == OPEN:
            return _read_call(self.name, text, pos, ctx)
        cursor = skip_space(text, pos + len(GROUP_OPEN))
        if cursor >= len(text):
            return unreadable(self.name, text, pos, len(text), f"output ended after {GROUP_OPEN}", kind=DiagnosticKind.TRUNCATED)
        if not text.startswith(OPEN, cursor):
            return None
        calls: list[ToolCall] = []
        diagnostics = []
        end = cursor
        while text.startswith(OPEN, cursor):
            found = _read_call(self.name, text, cursor, ctx)
            if found is None:
                if _cut_in_name(text, cursor + len(OPEN)):  # the group is still being written
                    return unreadable(
                        self.name, text, cursor, len(text), f"output ended inside a call in {GROUP_OPEN}",
                        kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics,
                    )
                break
            calls.extend(found.calls)
            diagnostics.extend(found.diagnostics)
            end = found.end
            if not found.final:
                return Extraction(end=end, calls=calls, diagnostics=diagnostics)
            cursor = skip_space(text, end)
        if not calls and not diagnostics:
            return None
        after = skip_space(text, end)
        if text.startswith(GROUP_CLOSE, after):
            return Extraction(end=after + len(GROUP_CLOSE), calls=calls, diagnostics=diagnostics, final=True)
        return Extraction(end=end, calls=calls, diagnostics=diagnostics, closer=GROUP_CLOSE)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return f"{GROUP_OPEN}\n{render_key_value(calls, SYNTAX)}\n{GROUP_CLOSE}"
