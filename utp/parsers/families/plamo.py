"""PLaMo 3 calls: a name and JSON arguments between PLaMo's own special tokens.

vLLM's PLaMo 3 parser reads (one line here, no spaces in the output)::

    <|plamo:begin_tool_requests:plamo|>
      <|plamo:begin_tool_request:plamo|>
        <|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>
        <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{...}<|plamo:end_tool_arguments:plamo|>
      <|plamo:end_tool_request:plamo|>
      ...
    <|plamo:end_tool_requests:plamo|>

A group holds one request per call. The ``<|plamo:constrain|>json`` and
``<|plamo:msg|>`` tokens before the arguments are optional here, and a request
written without the group is read too. Like every family, a request the
output cut off after its whole arguments object is read (its closers are
named as missing); arguments cut in half are reported, not run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import ended_before, json_arguments_before, make_call, read_call_group, unreadable
from utp.parsers.textscan import ends_inside, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall


def _token(name: str) -> str:
    return f"<|plamo:{name}:plamo|>"


GROUP_OPEN, GROUP_CLOSE = _token("begin_tool_requests"), _token("end_tool_requests")
REQUEST_OPEN, REQUEST_CLOSE = _token("begin_tool_request"), _token("end_tool_request")
NAME_OPEN, NAME_CLOSE = _token("begin_tool_name"), _token("end_tool_name")
ARGUMENTS_OPEN, ARGUMENTS_CLOSE = _token("begin_tool_arguments"), _token("end_tool_arguments")
#: what may stand between the arguments token and the JSON (PLaMo's constrained-decoding header)
HEADER_TOKENS = ("<|plamo:constrain|>", "json", "<|plamo:msg|>")
#: the longest name read between the name tokens
MAX_NAME = 256


@register_family
class PlamoFamily(CallFamily):
    name = "plamo"
    #: a token (or the end: truncated) after either opener
    declared_triggers = static_triggers((GROUP_OPEN, REQUEST_OPEN), dict.fromkeys((GROUP_OPEN, REQUEST_OPEN), r"\s*+(?:<|\Z)"))
    aliases = ("plamo3", "plamo_3")
    summary = "PLaMo 3: <|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>…{…}…"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == REQUEST_OPEN:
            return self._request(text, pos)
        return read_call_group(self.name, text, pos, (GROUP_OPEN, GROUP_CLOSE), REQUEST_OPEN, self._request)

    def _request(self, text: str, pos: int) -> Extraction | None:
        """One request at ``pos`` (its opener): final when its closer was read."""
        cursor = skip_space(text, pos + len(REQUEST_OPEN))
        if not text.startswith(NAME_OPEN, cursor):
            if ends_inside(text, cursor, NAME_OPEN):  # cut off before or inside the name token
                return unreadable(self.name, text, pos, len(text), "output ended before the tool's name", kind=DiagnosticKind.TRUNCATED)
            return None
        name_start = cursor + len(NAME_OPEN)
        name_end = text.find(NAME_CLOSE, name_start, name_start + MAX_NAME + len(NAME_CLOSE))
        if name_end == -1:
            if len(text) - name_start <= MAX_NAME:
                return unreadable(self.name, text, pos, len(text), "output ended inside the tool's name", kind=DiagnosticKind.TRUNCATED)
            return None
        name = text[name_start:name_end].strip()
        if not name:
            return unreadable(self.name, text, pos, name_end + len(NAME_CLOSE), "a tool request with no name")
        cursor = skip_space(text, name_end + len(NAME_CLOSE))
        repairs: list[str] = []
        diagnostics: list[Diagnostic] = []
        if cursor >= len(text):
            return unreadable(self.name, text, pos, len(text), f"output ended before the arguments of {name!r}", kind=DiagnosticKind.TRUNCATED)
        whole = False  # a whole arguments object was read
        if text.startswith(ARGUMENTS_OPEN, cursor):
            body = skip_space(text, cursor + len(ARGUMENTS_OPEN))
            for token in HEADER_TOKENS:
                if text.startswith(token, body):
                    body = skip_space(text, body + len(token))
            read = json_arguments_before(self.name, text, pos, body, ARGUMENTS_CLOSE, name)
            if isinstance(read, Extraction):
                return read
            arguments, cursor, repairs = read
            repairs, whole = list(repairs), True
            cursor = skip_space(text, cursor)
            if text.startswith(ARGUMENTS_CLOSE, cursor):
                cursor = skip_space(text, cursor + len(ARGUMENTS_CLOSE))
            elif ends_inside(text, cursor, ARGUMENTS_CLOSE, REQUEST_CLOSE):
                cursor = len(text)  # cut off in a closer: only closers are missing
            else:
                return unreadable(self.name, text, pos, cursor, f"text after the arguments of {name!r}")
        elif ends_inside(text, cursor, ARGUMENTS_OPEN):
            return unreadable(self.name, text, pos, len(text), f"output ended before the arguments of {name!r}", kind=DiagnosticKind.TRUNCATED)
        else:
            arguments = {}
        if text.startswith(REQUEST_CLOSE, cursor):
            end = cursor + len(REQUEST_CLOSE)
            call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
            return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=True)
        if ends_inside(text, cursor, REQUEST_CLOSE) and whole:
            repairs.append(ended_before(REQUEST_CLOSE))
            call = make_call(self.name, name, arguments, text[pos:], pos, repairs, diagnostics)
            return Extraction(end=len(text), calls=[call], diagnostics=diagnostics)
        if ends_inside(text, cursor, REQUEST_CLOSE):
            return unreadable(self.name, text, pos, len(text), f"output ended inside the request for {name!r}", kind=DiagnosticKind.TRUNCATED)
        return unreadable(self.name, text, pos, cursor, f"request for {name!r} is not closed by {REQUEST_CLOSE}")

    def render(self, calls: Sequence[ToolCall]) -> str:
        requests = "".join(
            f"{REQUEST_OPEN}{NAME_OPEN}{call.name}{NAME_CLOSE}{ARGUMENTS_OPEN}<|plamo:constrain|>json<|plamo:msg|>"
            f"{json.dumps(call.arguments, ensure_ascii=False)}{ARGUMENTS_CLOSE}{REQUEST_CLOSE}"
            for call in calls
        )
        return f"{GROUP_OPEN}{requests}{GROUP_CLOSE}"
