"""GLM-4.5 / 4.6 / 4.7 calls: ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

The name is bare text right after ``<tool_call>`` (GLM-4.5/4.6 put a newline
after it, 4.7 does not); each argument is a key/value tag pair whose value is
raw text typed by the tool's schema, or read as JSON when it is JSON and the
schema does not say. The opener is shared with Hermes (``<tool_call>{json}``)
and Qwen3-Coder (``<tool_call><function=...>``): this family only claims a body
that is a bare name followed by ``<arg_key>`` or the close.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.familykit import make_call, unreadable
from utp.parsers.pyliteral import property_schema, typed_value
from utp.parsers.textscan import find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

from utp.parsers.families.qwen3_coder import render_value

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
KEY, KEY_END = "<arg_key>", "</arg_key>"
VALUE, VALUE_END = "<arg_value>", "</arg_value>"
#: the bare name: no tag, brace or quote, at most 256 characters on one line
_NAME = re.compile(r"[ \t]*([^\s<>{}\[\]\"'][^\n<>{}\[\]\"]{0,255}?)\s*(?=<arg_key>|</tool_call>)")


@register_family
class GlmFamily(CallFamily):
    name = "glm"
    triggers = (OPEN,)
    #: between qwen3_coder and hermes on the shared <tool_call>
    priority = 65
    #: the bare name's first character (scan lookahead)
    trigger_heads = {OPEN: r"[ \t]*[^\s<>{}\[\]\"']"}
    aliases = ("glm4", "glm45", "glm47", "glm4_moe")
    summary = "GLM-4.5+: <tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        match = _NAME.match(text, pos + len(OPEN))
        if match is None:
            return None
        name = match.group(1).strip()
        tool = ctx.tool(name)
        arguments: dict[str, Any] = {}
        repairs: list[str] = []
        diagnostics: list[Diagnostic] = []
        cursor = match.end()
        while True:
            cursor = skip_space(text, cursor)
            if text.startswith(CLOSE, cursor):
                end = cursor + len(CLOSE)
                break
            if not text.startswith(KEY, cursor):
                close = find_forward(text, CLOSE, cursor)
                if close == -1:
                    return unreadable(
                        self.name, text, pos, len(text), f"call to {name!r} ends before {CLOSE}", kind=DiagnosticKind.TRUNCATED
                    )
                repairs.append(f"ignored text outside <arg_key>/<arg_value> at offset {cursor}")
                cursor = close
                continue
            key_end = find_forward(text, KEY_END, cursor + len(KEY))
            if key_end == -1:
                return unreadable(self.name, text, pos, len(text), f"unclosed {KEY} in call to {name!r}", kind=DiagnosticKind.TRUNCATED)
            key = text[cursor + len(KEY) : key_end].strip()
            cursor = skip_space(text, key_end + len(KEY_END))
            if not text.startswith(VALUE, cursor):
                arguments[key] = None
                repairs.append(f"argument {key!r} has no <arg_value>")
                continue
            value_start = cursor + len(VALUE)
            value_end = find_forward(text, VALUE_END, value_start)
            if value_end == -1:
                return unreadable(
                    self.name, text, pos, len(text), f"unclosed {VALUE} for {key!r} in call to {name!r}", kind=DiagnosticKind.TRUNCATED
                )
            arguments[key] = typed_value(text[value_start:value_end], property_schema(tool, key), untyped="json")
            cursor = value_end + len(VALUE_END)
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=True)  # read up to </tool_call>

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        body = skip_space(text, pos + len(OPEN))
        return body < len(text) and text[body] in "<>{}[]\"'"

    def render(self, calls: Sequence[ToolCall]) -> str:
        blocks = []
        for call in calls:
            lines = [f"{OPEN}{call.name}"]
            for key, value in call.arguments.items():
                lines.append(f"{KEY}{key}{KEY_END}\n{VALUE}{render_value(value)}{VALUE_END}")
            lines.append(CLOSE)
            blocks.append("\n".join(lines))
        return "\n".join(blocks)
