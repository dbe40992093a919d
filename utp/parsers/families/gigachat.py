"""Sber GigaChat 3 / 3.1: a call is a role turn or a special token followed by one JSON call.

GigaChat 3 (GigaChat3-702B-A36B, GigaChat3-10B-A1.8B) opens a new message
with the role ``function call``::

    <|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": ..., "arguments": {...}}</s>

GigaChat 3.1 writes one special token instead::

    <|function_call|>{"name": ..., "arguments": {...}}

(vLLM's ``gigachat3`` tool parser reads both: the JSON after ``function
call<|role_sep|>\\n`` or ``<|function_call|>``, a trailing ``</s>`` dropped,
``name`` and an ``arguments`` object required.) The role marker is also read
without the ``<|message_sep|>`` before it, as the reference does. Text before
the marker is content. These markers are special tokens, never prose, so JSON
after one that is not a call is reported UNPARSEABLE.

A server that drops special tokens leaves the role glued to the call,
``function call{"name": ..., "arguments": {...}}`` (EasyDeL's GigaChat 3 parser
reads it). Those are ordinary words, so the role is read only at the start of a
line with the object right after it, and only when that object is a whole call
with its arguments; anything else there is prose.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family, static_triggers
from utp.parsers.callshape import calls_from_value, skip_ws
from utp.parsers.familykit import closer_bound, read_json_at, still_quoting, unreadable
from utp.parsers.jsonrepair import CLOSED_TRUNCATED
from utp.parsers.textscan import find_forward
from utp.types import DiagnosticKind, ToolCall

MESSAGE_SEP = "<|message_sep|>"
ROLE = "function call<|role_sep|>"
TOKEN = "<|function_call|>"
#: the role with its special tokens stripped, glued to the call's object
STRIPPED_ROLE = "function call"
_STRIPPED_HEAD = r"[ \t]*+\{"
EOS = "</s>"
#: a JSON value, or the end of the output (reported TRUNCATED); ``\s`` covers what skip_ws skips
_BODY = r"\s*+(?:[\[{]|\Z)"


@register_family
class GigaChatFamily(CallFamily):
    name = "gigachat"
    priority = 50
    aliases = ("gigachat3", "gigachat3.1", "gigachat31")
    summary = '<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": ..., "arguments": {...}} or <|function_call|>{...}'
    declared_triggers = static_triggers((MESSAGE_SEP, ROLE, TOKEN), {
        MESSAGE_SEP: r"\s*+" + r"function call<\|role_sep\|>" + _BODY,
        ROLE: _BODY,
        TOKEN: _BODY,
    }) + (Trigger(STRIPPED_ROLE, _STRIPPED_HEAD, Start.WORD),)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == STRIPPED_ROLE:
            return self._stripped(text, pos)
        body = pos + len(trigger)
        if trigger == MESSAGE_SEP:  # a new message: a call only when its role is ``function call``
            role = skip_ws(text, body)
            if not text.startswith(ROLE, role):
                return None
            body = role + len(ROLE)
        cursor = skip_ws(text, body)
        if cursor >= len(text):
            return unreadable(self.name, text, pos, len(text), "output ended after the function-call marker", kind=DiagnosticKind.TRUNCATED)
        if text[cursor] not in "[{":
            return None
        # valid JSON may mention a marker in a string a few times; repairs stop at the next marker
        marker = TOKEN if trigger == TOKEN else ROLE
        reopened = find_forward(text, marker, cursor)
        limit = len(text) if reopened < 0 else reopened
        bound = closer_bound(text, marker, cursor)
        if still_quoting(text, cursor, reopened, bound):
            # the marker is quoted in a string the text ends inside: the call is still being written
            return unreadable(self.name, text, pos, len(text), "output ended inside the call", kind=DiagnosticKind.TRUNCATED)
        read = read_json_at(text, cursor, limit, bound)
        if read is None:
            return unreadable(self.name, text, pos, limit, "unreadable JSON after the function-call marker")
        value, jend, repairs = read
        if CLOSED_TRUNCATED in repairs and reopened >= 0:
            # cut off by the next marker, not by the end of the output: abandoned, so not run
            return unreadable(self.name, text, pos, reopened, "call cut off by the next function-call marker")
        found = calls_from_value(value, self.name, text[cursor:jend], repairs, require_arguments=True)
        if found is None:
            return unreadable(self.name, text, pos, jend, "JSON after the function-call marker is not a call")
        calls, diagnostics = found
        after = skip_ws(text, jend)
        closed = text.startswith(EOS, after)
        end = after + len(EOS) if closed else jend
        # valid JSON ends where it ends: an end-of-sequence token arriving later only extends the span
        return Extraction(end, calls, diagnostics, final=closed, closer="" if closed or repairs else EOS)

    def _stripped(self, text: str, pos: int) -> Extraction | None:
        """``function call{…}`` starting a line: the role whose tokens were stripped, then one whole call."""
        if pos > 0 and text[text.rfind("\n", 0, pos) + 1 : pos].strip():
            return None  # in a sentence: the words, not the role
        cursor = skip_ws(text, pos + len(STRIPPED_ROLE))
        read = read_json_at(text, cursor)
        if read is None or read[2]:
            return None  # only JSON valid as written: these are ordinary words
        value, jend, repairs = read
        found = calls_from_value(value, self.name, text[cursor:jend], repairs, require_arguments=True)
        if found is None:
            return None
        after = skip_ws(text, jend)
        closed = text.startswith(EOS, after)
        return Extraction(after + len(EOS) if closed else jend, *found, final=closed, closer="" if closed else EOS)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Streaming: ``None`` is final once the role is another one or the body plainly not JSON."""
        if trigger == STRIPPED_ROLE:  # decided once the object is whole, or plainly no object the text is still writing
            read = read_json_at(text, skip_ws(text, pos + len(STRIPPED_ROLE)))
            return read is None or CLOSED_TRUNCATED not in read[2]
        body = pos + len(trigger)
        if trigger == MESSAGE_SEP:
            role = skip_ws(text, body)
            if role >= len(text):
                return False
            if not text.startswith(ROLE, role):
                return not ROLE.startswith(text[role : role + len(ROLE)])
            body = role + len(ROLE)
        cursor = skip_ws(text, body)
        return cursor < len(text) and text[cursor] not in "[{"

    def render(self, calls: Sequence[ToolCall]) -> str:
        # GigaChat 3.1's token; one call per marker (the reference reads one JSON object after each)
        return "".join(TOKEN + json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) for c in calls)
