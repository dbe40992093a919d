"""A call headed by a bracketed tool label: ``[TOOL: aircp_send]``, then its arguments.

Agents that give a model without native calls a script-style text protocol ask
for a header line naming the tool, then one ``key: value`` (or ``key = value``)
line per argument, up to a blank line, a line of other text or the next header::

    [TOOL: aircp_send]
    room: #general
    message: Hello from fallback mode!

The label is ``TOOL`` in any case, with or without a blank after its colon.
The arguments may also be a JSON object after the header (on its line or the
next), or inside the bracket after a second colon, ``[TOOL:terminal:{"command":
"ls"}]``; that form may stand inside a sentence, as its object and closing
bracket delimit it. A header with no argument lines under it is a call without
arguments.

A value is the rest of its line. Quotes around it delimit it (a double-quoted
value is read as a JSON string); the tool's schema types it (``limit: 10`` for
an integer is 10, a value the type cannot take stays text for validation to
report); with no schema, an unquoted JSON scalar, list or object is read as
one. Only keys that are the tool's parameters make arguments (any identifier
when it declares none), so a sentence under the header ends them.

The evidence is the bracket: the header starts its line, nothing but the
arguments after it. "The [TOOL: x] header" in a sentence, a label without
brackets, and ``[TOOL:x:{…}`` left unclosed are prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import make_call, read_json_at, unreadable
from utp.parsers.jsonrepair import CLOSED_TRUNCATED
from utp.parsers.names import resolve_name
from utp.parsers.typedvalues import property_schema, typed_value
from utp.types import Diagnostic, DiagnosticKind, Tool, ToolCall

TRIGGERS = ("[TOOL:", "[Tool:", "[tool:")
#: the tool's name after the label, then the bracket's close or the colon before a JSON object
_NAME = re.compile(r"[ \t]*+([A-Za-z_][\w.\-]{0,127}+)[ \t]*+(\]|:(?=[ \t]*+\{))")
_HEAD = r"[ \t]*+[A-Za-z_][\w.\-]{0,127}+[ \t]*+(?:\]|:[ \t]*+\{)"
#: only blanks between the line's start and the header
_LINE_START = re.compile(r"(?:\A|\n)[ \t]*+\Z")
#: a JSON object after the header: on its line, or alone on the next
_OBJECT_AFTER = re.compile(r"[ \t]*+(?:\r?\n[ \t]*+)?(?=\{)")
#: one argument line: an identifier, ``:`` or ``=``, the value to the line's end
_ARGUMENT_LINE = re.compile(r"[ \t]*+([A-Za-z_][\w.\-]{0,100}+)[ \t]*+[:=][ \t]*+([^\r\n]{0,65536}?)[ \t]*+(?=\r?\n|\Z)")
#: the line break before the next argument line
_BREAK = re.compile(r"\r?\n")
#: blanks on a line, and the inline form's closing bracket after its object
_BLANKS = re.compile(r"[ \t]*+")
_CLOSE = re.compile(r"[ \t]*+\]")
#: what may follow a header on its line: blanks to the line's end
_HEADER_ENDS = re.compile(r"[ \t]*+(?:\r?\n|\Z)")


@register_family
class ToolHeaderFamily(CallFamily):
    name = "tool_header"
    priority = 40
    declared_triggers = static_triggers(TRIGGERS, dict.fromkeys(TRIGGERS, _HEAD))
    aliases = ("bracketed_tool_label",)
    summary = "[TOOL: NAME] then key: value lines (or a JSON object; [TOOL:NAME:{json}] inline)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        named = _NAME.match(text, pos + len(trigger))
        if named is None:
            return None
        name = named.group(1)
        if named.group(2) == ":":
            return self._inline_object(text, pos, name, named.end())
        if _LINE_START.search(text, max(0, pos - 200), pos) is None:
            return None  # a header named in a sentence
        after = _OBJECT_AFTER.match(text, named.end())
        if after is not None:
            return self._object_after(text, pos, name, after.end())
        if _HEADER_ENDS.match(text, named.end()) is None:
            return None  # words after the header on its line: prose about it
        arguments, end = _argument_lines(text, named.end(), ctx.tool(resolve_name(name, ctx).name))
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[pos:end], pos, diagnostics=diagnostics)
        return Extraction(end, [call], diagnostics, provisional=_more_lines_may_come(text, end))

    def _inline_object(self, text: str, pos: int, name: str, at: int) -> Extraction | None:
        """``[TOOL:NAME:{json}]``: the object, then the bracket's close."""
        read = read_json_at(text, _BLANKS.match(text, at).end())
        if read is None or type(read[0]) is not dict:
            return None
        arguments, stop, repairs = read
        close = _CLOSE.match(text, stop) if CLOSED_TRUNCATED not in repairs else None
        if close is None:
            return None  # the bracket left open: a call still being written, or broken
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[pos : close.end()], pos, repairs, diagnostics)
        return Extraction(close.end(), [call], diagnostics, final=True)

    def _object_after(self, text: str, pos: int, name: str, at: int) -> Extraction | None:
        """``[TOOL: NAME]`` then a JSON object, glued, on its line or the next: the object ends the call."""
        read = read_json_at(text, at)
        if read is None or type(read[0]) is not dict:
            return None
        arguments, stop, repairs = read
        if CLOSED_TRUNCATED in repairs:
            return unreadable(self.name, text, pos, len(text), f"output ended inside the arguments of {name!r}", kind=DiagnosticKind.TRUNCATED)
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[pos:stop], pos, repairs, diagnostics)
        return Extraction(stop, [call], diagnostics, final=True)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n\n".join(_rendered(call) for call in calls)


def _argument_lines(text: str, at: int, tool: Tool | None) -> tuple[dict[str, Any], int]:
    """The ``key: value`` lines under a header: the arguments and where the last one ends."""
    arguments: dict[str, Any] = {}
    end = at
    declared = tool.properties if tool is not None else {}
    while True:
        line_break = _BREAK.match(text, end)
        line = _ARGUMENT_LINE.match(text, line_break.end()) if line_break is not None else None
        if line is None:
            return arguments, end
        key, raw = line.group(1), line.group(2)
        if key in arguments or (declared and key not in declared):
            return arguments, end  # a key given twice, or a sentence's first word: the arguments ended
        arguments[key] = _value(raw, property_schema(tool, key))
        end = line.end()


def _value(raw: str, schema: Any) -> Any:
    """A line's value: quotes delimit it (a quoted value is text unless the schema types it)."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        inner = raw[1:-1]
        if raw[0] == '"':
            try:
                inner = json.loads(raw)
            except ValueError:
                pass
        return typed_value(inner, schema) if schema is not None else inner
    return typed_value(raw, schema, untyped="json")


def _more_lines_may_come(text: str, end: int) -> bool:
    """Does the reading rest on the text after ``end`` being no argument line (a stream still writing it)?"""
    line_break = _BREAK.match(text, end)
    if end >= len(text) or (text[end] == "\r" and line_break is None):
        return True
    return line_break is not None and text.find("\n", line_break.end()) < 0


def _rendered(call: ToolCall) -> str:
    """Key lines when every key is an identifier, else the JSON object under the header."""
    if all(re.fullmatch(r"[A-Za-z_][\w.\-]{0,100}", key) for key in call.arguments):
        lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in call.arguments.items()]
        return "\n".join([f"[TOOL: {call.name}]", *lines])
    return f"[TOOL: {call.name}]\n{json.dumps(call.arguments, ensure_ascii=False)}"
