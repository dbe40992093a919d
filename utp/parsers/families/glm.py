"""GLM-4.5 / 4.6 / 4.7 calls: ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

The name is bare text right after ``<tool_call>`` (GLM-4.5/4.6 put a newline
after it, 4.7 does not); each argument is a key/value tag pair whose value is
raw text typed by the tool's schema, or read as JSON when it is JSON and the
schema does not say. The opener is shared with Hermes (``<tool_call>{json}``)
and Qwen3-Coder (``<tool_call><function=...>``): this family only claims a body
that is a bare name followed by ``<arg_key>`` or the close.

GLM-4 (glm-4-9b-chat, GLM-4-0414) calls a tool with a whole answer of two
parts: the tool's name on the first line, its arguments as a JSON object after
it (its template's ``<|assistant|>NAME\n{...}``; BFCL's GLM handler reads the
same). Read only for an offered tool and only when nothing else is in the
answer, so a line naming a tool before some JSON in prose stays prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.familykit import make_call, read_json_at, unreadable
from utp.parsers.reasoning import call_list_starts
from utp.parsers.pyliteral import property_schema, schema_types, typed_value
from utp.parsers.textscan import find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

from utp.parsers.families.qwen3_coder import render_value

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
KEY, KEY_END = "<arg_key>", "</arg_key>"
VALUE, VALUE_END = "<arg_value>", "</arg_value>"


def name_pattern(lead: str, key: str, close: str) -> re.Pattern[str]:
    """The bare name after ``lead`` space: no tag, bracket, parenthesis or quote, at most 256 characters on one line.

    (A parenthesis makes it a Python-style call, ``get_weather('Paris')``, which hermes reads.)
    """
    return re.compile(
        rf"{lead}([^\s<>{{}}\[\]()\"'][^\n<>{{}}\[\]()\"]{{0,255}}?)\s*(?={re.escape(key)}|{re.escape(close)})"
    )


@dataclass(frozen=True)
class KeyValueSyntax:
    """How one dialect of the GLM markup spells its tags (GLM's own, K2-V3's ``<ifm|...>``).

    ``name`` matches the bare name after the opener (group 1). ``type_tag``,
    when given, is an optional ``(open, close)`` pair between a key and its
    value naming the value's type (used when the tool's schema gives none).
    """

    open: str
    close: str
    key: str
    key_end: str
    value: str
    value_end: str
    name: re.Pattern[str]
    type_tag: tuple[str, str] | None = None


SYNTAX = KeyValueSyntax(OPEN, CLOSE, KEY, KEY_END, VALUE, VALUE_END, name_pattern(r"[ \t]*", KEY, CLOSE))
#: the bare name: no tag, brace or quote, at most 256 characters on one line
_NAME = SYNTAX.name


def read_key_value_call(family: str, text: str, pos: int, ctx: ParseContext, syntax: KeyValueSyntax = SYNTAX) -> Extraction | None:
    """The call whose opener is at ``pos``: ``OPEN NAME (KEY k KEY_END [TYPE t TYPE_END] VALUE v VALUE_END)* CLOSE``.

    None when no bare name follows the opener; a TRUNCATED report when the
    output ends inside the call.
    """
    match = syntax.name.match(text, pos + len(syntax.open))
    if match is None:
        return None
    name = match.group(1).strip()
    tool = ctx.tool(name)
    if tool is None and any(ch.isspace() for ch in name) and not text.startswith(syntax.key, skip_space(text, match.end())):
        return None  # "<tool_call>not valid json</tool_call>": words, not a name (a spaced one must be offered or take arguments)
    arguments: dict[str, Any] = {}
    repairs: list[str] = []
    diagnostics: list[Diagnostic] = []
    cursor = match.end()
    while True:
        cursor = skip_space(text, cursor)
        if text.startswith(syntax.close, cursor):
            end = cursor + len(syntax.close)
            break
        if not text.startswith(syntax.key, cursor):
            close = find_forward(text, syntax.close, cursor)
            if close == -1:
                return unreadable(
                    family, text, pos, len(text), f"call to {name!r} ends before {syntax.close}", kind=DiagnosticKind.TRUNCATED
                )
            repairs.append(f"ignored text outside {syntax.key}/{syntax.value} at offset {cursor}")
            cursor = close
            continue
        key_end = find_forward(text, syntax.key_end, cursor + len(syntax.key))
        if key_end == -1:
            return unreadable(family, text, pos, len(text), f"unclosed {syntax.key} in call to {name!r}", kind=DiagnosticKind.TRUNCATED)
        key = text[cursor + len(syntax.key) : key_end].strip()
        cursor = skip_space(text, key_end + len(syntax.key_end))
        doubled = 0
        while doubled < 8 and text.startswith(syntax.key_end, cursor):  # the closer written twice
            cursor = skip_space(text, cursor + len(syntax.key_end))
            doubled += 1
        if doubled:
            repairs.append(f"ignored a repeated {syntax.key_end} after {key!r}")
        schema = property_schema(tool, key)
        if syntax.type_tag is not None and text.startswith(syntax.type_tag[0], cursor):
            type_end = find_forward(text, syntax.type_tag[1], cursor + len(syntax.type_tag[0]))
            if type_end == -1:
                return unreadable(
                    family, text, pos, len(text), f"unclosed {syntax.type_tag[0]} in call to {name!r}", kind=DiagnosticKind.TRUNCATED
                )
            inline = text[cursor + len(syntax.type_tag[0]) : type_end].strip()
            if inline and not schema_types(schema):
                schema = {"type": inline}
            cursor = skip_space(text, type_end + len(syntax.type_tag[1]))
        if not text.startswith(syntax.value, cursor):
            arguments[key] = None
            repairs.append(f"argument {key!r} has no {syntax.value}")
            continue
        value_start = cursor + len(syntax.value)
        value_end = find_forward(text, syntax.value_end, value_start)
        if value_end == -1:
            return unreadable(
                family, text, pos, len(text), f"unclosed {syntax.value} for {key!r} in call to {name!r}", kind=DiagnosticKind.TRUNCATED
            )
        arguments[key] = typed_value(text[value_start:value_end], schema, untyped="json")
        cursor = value_end + len(syntax.value_end)
    call = make_call(family, name, arguments, text[pos:end], pos, repairs, diagnostics)
    return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=True)  # read up to the closer


def render_key_value(calls: Sequence[ToolCall], syntax: KeyValueSyntax = SYNTAX) -> str:
    blocks = []
    for call in calls:
        lines = [f"{syntax.open}{call.name}"]
        for key, value in call.arguments.items():
            lines.append(f"{syntax.key}{key}{syntax.key_end}\n{syntax.value}{render_value(value)}{syntax.value_end}")
        lines.append(syntax.close)
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


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

    def context_triggers(self, ctx: ParseContext) -> tuple[str, ...]:
        """``NAME`` and a line break, for each offered tool: GLM-4's answer begins so."""
        return tuple(f"{name}\n" for name in ctx.by_name if name and not any(ch.isspace() for ch in name))

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger != OPEN:
            return self._name_line_answer(text, pos, trigger, ctx)
        return read_key_value_call(self.name, text, pos, ctx)

    def _name_line_answer(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """GLM-4's ``NAME\n{...}``: the whole answer, for an offered tool."""
        if pos not in call_list_starts(text):
            return None
        body = skip_space(text, pos + len(trigger))
        if not text.startswith("{", body):
            return None
        got = read_json_at(text, body)
        if got is None or not isinstance(got[0], dict) or skip_space(text, got[1]) < len(text):
            return None  # the answer is more than the call: prose that starts with a tool's name
        value, _, repairs = got
        name = trigger[:-1]
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, value, text[pos:], pos, repairs, diagnostics)
        return Extraction(len(text), [call], diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger != OPEN:  # an answer of a name and JSON is decided by its end: hold it
            return pos not in call_list_starts(text)
        body = skip_space(text, pos + len(OPEN))
        return body < len(text) and text[body] in "<>{}[]\"'"

    def render(self, calls: Sequence[ToolCall]) -> str:
        return render_key_value(calls)
