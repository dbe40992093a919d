"""MeetKai Functionary before v3: v1's function-call tokens, v2's recipient headers.

v1 (``functionary-7b-v1``) writes a call as::

    <|START_OF_FUNCTION_CALL|>NAME:
    {json arguments}<|END_OF_FUNCTION_CALL|>

v2 (``functionary-small-v2.x``) writes every message with a header: the
recipient after ``<|recipient|>`` and the body after ``<|content|>``, ended by
``<|stop|>`` or by the next message's ``<|from|>``; a ``<|from|>assistant``
header before a recipient is markup too. Its Llama-3 build
(v2.5) writes ``<|reserved_special_token_249|>NAME`` and the body on the next
line instead, ended by the next such token or ``<|eot_id|>``. The recipient
``all`` is the user: that message is prose and stays content.

A body is the JSON object of arguments. Functionary's code interpreter
(``python``) takes its code as the raw body instead; generally, a body that is
not JSON goes whole to a tool that has exactly one parameter (the only place
it can belong), and is reported unreadable otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import json_arguments_before, make_call, sole_parameter, unreadable
from utp.parsers.textscan import find_first, skip_space
from utp.types import Diagnostic, ToolCall

V1_OPEN, V1_CLOSE = "<|START_OF_FUNCTION_CALL|>", "<|END_OF_FUNCTION_CALL|>"
RECIPIENT, CONTENT, STOP, FROM = "<|recipient|>", "<|content|>", "<|stop|>", "<|from|>"
LLAMA3_RECIPIENT, EOT = "<|reserved_special_token_249|>", "<|eot_id|>"
#: the user as recipient: that message is prose
TO_USER = "all"
_NAME = r"[A-Za-z_][\w.\-]{0,127}"
#: what follows each opener: the recipient (v1: and its colon), then the body's start
_HEADERS = {
    V1_OPEN: re.compile(rf"[ \t]*({_NAME})[ \t]*:?[ \t]*\r?\n?\s*(?=\{{)"),
    RECIPIENT: re.compile(rf"[ \t]*({_NAME})[ \t]*\r?\n[ \t]*{re.escape(CONTENT)}"),
    LLAMA3_RECIPIENT: re.compile(rf"({_NAME})[ \t]*\r?\n"),
    FROM: re.compile(rf"[ \t]*({_NAME})[ \t]*\r?\n[ \t]*(?={re.escape(RECIPIENT)})"),
}
#: where a body ends when nothing else does (each opener's own message ends)
_ENDS = {V1_OPEN: (V1_CLOSE,), RECIPIENT: (STOP, FROM, RECIPIENT), LLAMA3_RECIPIENT: (LLAMA3_RECIPIENT, EOT, "<|eom_id|>"), FROM: ()}
#: the token that ends a call's JSON body in each format (the others end raw bodies)
_CLOSER = {V1_OPEN: V1_CLOSE, RECIPIENT: STOP, LLAMA3_RECIPIENT: EOT}
#: scan lookaheads: the header must be there (a possessive name: nothing is given back)
_HEADS = {
    V1_OPEN: rf"[ \t]*+{_NAME}+[ \t]*+:?[ \t]*+\r?\n?\s*+\{{",
    RECIPIENT: rf"[ \t]*+{_NAME}+[ \t]*+\r?\n[ \t]*+{re.escape(CONTENT)}",
    LLAMA3_RECIPIENT: rf"{_NAME}+[ \t]*+\r?\n",
    FROM: rf"[ \t]*+{_NAME}+[ \t]*+\r?\n[ \t]*+{re.escape(RECIPIENT)}",
}


@register_family
class FunctionaryLegacyFamily(CallFamily):
    name = "functionary_legacy"
    priority = 50
    declared_triggers = static_triggers(tuple(_HEADERS), _HEADS)
    aliases = ("functionary_v1", "functionary_v2")
    summary = "Functionary v1 <|START_OF_FUNCTION_CALL|>NAME:\\n{json}<|END_OF_FUNCTION_CALL|>, v2 <|recipient|>NAME\\n<|content|>{json}"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        header = _HEADERS[trigger].match(text, pos + len(trigger))
        if header is None:
            return None
        if trigger == FROM:  # the sender's header: the message is read from its recipient on
            message = self.extract(text, header.end(), RECIPIENT, ctx)
            if message is None:
                return None
            return message
        name = header.group(1)
        body = header.end()
        stop, _ = find_first(text, _ENDS[trigger], body)
        stop = len(text) if stop < 0 else stop
        if name == TO_USER and trigger != V1_OPEN:
            return Extraction(end=body)  # the message to the user stays content
        diagnostics: list[Diagnostic] = []
        start = skip_space(text, body, stop)
        arguments: Any = None
        repairs: list[str] = []
        end = stop
        if text.startswith("{", start):
            # a JSON body ends where its object ends: its strings may quote the end tokens
            read = json_arguments_before(self.name, text, pos, start, _CLOSER[trigger], name)
            if isinstance(read, Extraction):
                return read
            arguments, end, repairs = read
        if arguments is None:
            arguments = _raw_body_arguments(ctx, name, text[body:stop])
            if arguments is None:
                return unreadable(self.name, text, pos, stop, f"the body of {name!r} is not a JSON object")
        if text.startswith(V1_CLOSE, skip_space(text, end)) or text.startswith(STOP, skip_space(text, end)):
            end = skip_space(text, end) + len(V1_CLOSE if text.startswith(V1_CLOSE, skip_space(text, end)) else STOP)
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"{FROM}assistant\n{RECIPIENT}{c.name}\n{CONTENT}{json.dumps(c.arguments, ensure_ascii=False)}\n" for c in calls) + STOP


def _raw_body_arguments(ctx: ParseContext, name: str, body: str) -> dict[str, Any] | None:
    """A body that is not JSON, for a tool with exactly one parameter: that parameter's value."""
    parameter, value = sole_parameter(ctx, name), body.strip()
    return {parameter: value} if parameter is not None and value else None
