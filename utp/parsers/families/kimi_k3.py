"""Kimi K3 calls: the ``tools`` channel of its XTML special tokens.

Kimi K3 writes its reply in channels opened and closed by special tokens
(SGLang's ``kimik3`` detector and format module)::

    <|open|>response<|sep|>Let me run it.<|close|>response<|sep|>
    <|open|>tools<|sep|>
      <|open|>call tool="python" index="1"<|sep|>
        <|open|>argument key="code" type="string"<|sep|>print(1)<|close|>argument<|sep|>
        <|open|>argument key="opts" type="object"<|sep|>{"a": 1}<|close|>argument<|sep|>
      <|close|>call<|sep|>
    <|close|>tools<|sep|>

A ``type="string"`` value is raw text; any other type is JSON, kept as text
when it is not (the reference does the same); an argument without a type is
typed by the tool's schema. Attribute values undo the template's ``&quot;``
and ``&amp;``. The ``response`` channel's markers and ``<|close|>message<|sep|>``
are removed from the content; the ``think`` channel is reasoning (see
:mod:`utp.parsers.reasoning`). A section the output ends in keeps its complete
calls, as the reference does, and reports the cut one TRUNCATED.

The arguments may also come as one JSON object,
``<|open|>json type="object"<|sep|>{...}<|close|>json<|sep|>``. Closing markers
a model leaves out are supplied where the next marker leaves no doubt (an
argument ended by ``<|close|>call<|sep|>``, a call by the next call or by the
section, response or message closing), and said so as a repair. A closing
marker counts only where another marker (or the end) follows it, so a value
that quotes ``<|close|>argument<|sep|>`` keeps it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import make_call, unreadable
from utp.parsers.typedvalues import property_schema, typed_value
from utp.parsers.textscan import find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall, json_type_name

SEP = "<|sep|>"
TOOLS_OPEN, TOOLS_CLOSE = "<|open|>tools" + SEP, "<|close|>tools" + SEP
CALL_OPEN, CALL_CLOSE = "<|open|>call", "<|close|>call" + SEP
ARG_OPEN, ARG_CLOSE = "<|open|>argument", "<|close|>argument" + SEP
RESPONSE_OPEN, RESPONSE_CLOSE = "<|open|>response" + SEP, "<|close|>response" + SEP
MESSAGE_CLOSE = "<|close|>message" + SEP
JSON_OPEN, JSON_CLOSE = "<|open|>json", "<|close|>json" + SEP
#: markers that close an argument's value: the argument's own, or one that closes what holds it
_VALUE_ENDS = (ARG_CLOSE, CALL_CLOSE, TOOLS_CLOSE, RESPONSE_CLOSE, MESSAGE_CLOSE)
#: markers after which a call with no ``<|close|>call<|sep|>`` certainly ended (not consumed with it)
_CALL_ENDS = (CALL_OPEN, TOOLS_CLOSE, RESPONSE_CLOSE, MESSAGE_CLOSE)
_CLOSE_PREFIX = "<|close|>"
_MARKER_START = "<|"
#: channel markers that carry no call: removed from the content where they stand
MARKERS = (RESPONSE_OPEN, RESPONSE_CLOSE, MESSAGE_CLOSE, TOOLS_CLOSE)

_ATTRS = r"""((?:\s++\w++="[^"]{0,4096}+")*+)\s*+"""
_CALL_HEAD = re.compile(re.escape(CALL_OPEN) + _ATTRS + re.escape(SEP))
_ARG_HEAD = re.compile(re.escape(ARG_OPEN) + _ATTRS + re.escape(SEP))
_JSON_HEAD = re.compile(re.escape(JSON_OPEN) + _ATTRS + re.escape(SEP))
_DECODER = json.JSONDecoder()
_ATTR = re.compile(r'(\w+)="([^"]*)"')
#: what a call opener needs after it: an attribute, the separator, or the end of the output
#: (the reference requires a blank or the separator)
_AFTER_CALL_OPEN = r"""(?:\s++\w++="|\s*+<\|sep\|>|\s*+\Z|\s++\w++=?\Z)"""
_AFTER_CALL_OPEN_RE = re.compile(_AFTER_CALL_OPEN)
#: the output cut off where a call or the section's end was being opened
_CUT_MARKER = r"(?=.{0,20}\Z)(?:" + "|".join(re.escape(m[:k]) for m in (CALL_OPEN, TOOLS_CLOSE) for k in range(len(m) - 1, 0, -1)) + r")?\Z"
#: more channel markers right after one: removed with it as one span (a flood costs one visit
#: per run); capped so that a stream re-reading a growing span stays linear
_MARKER_RUN = re.compile(r"(?:\s*+<\|(?:close\|>(?:response|message|tools)|open\|>response)<\|sep\|>){0,63}")


def _attributes(text: str) -> dict[str, str]:
    return {key: value.replace("&quot;", '"').replace("&amp;", "&") for key, value in _ATTR.findall(text)}


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;")


@register_family
class KimiK3Family(CallFamily):
    name = "kimi_k3"
    aliases = ("kimik3", "xtml")
    declared_triggers = static_triggers((TOOLS_OPEN, CALL_OPEN, *MARKERS), {
        TOOLS_OPEN: r"\s*+(?:" + re.escape(CALL_OPEN) + _AFTER_CALL_OPEN + "|" + re.escape(TOOLS_CLOSE) + "|" + _CUT_MARKER + ")",
        CALL_OPEN: _AFTER_CALL_OPEN,
    })
    summary = '<|open|>tools<|sep|><|open|>call tool="f"<|sep|><|open|>argument key="a" type="string"<|sep|>x<|close|>argument<|sep|><|close|>call<|sep|>…'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger in MARKERS:
            return Extraction(end=_MARKER_RUN.match(text, pos + len(trigger)).end())  # type: ignore[union-attr]
        if trigger == CALL_OPEN:
            return _read_call(self.name, text, pos, ctx)
        return self._section(text, pos, ctx)

    def _section(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        cursor = skip_space(text, pos + len(TOOLS_OPEN))
        if cursor >= len(text):
            return unreadable(self.name, text, pos, len(text), f"output ended after {TOOLS_OPEN}", kind=DiagnosticKind.TRUNCATED)
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        end = cursor
        while True:
            if text.startswith(TOOLS_CLOSE, cursor):
                return Extraction(end=cursor + len(TOOLS_CLOSE), calls=calls, diagnostics=diagnostics, final=True)
            if not text.startswith(CALL_OPEN, cursor):
                break
            found = _read_call(self.name, text, cursor, ctx)
            if found is None:
                break
            calls.extend(found.calls)
            diagnostics.extend(found.diagnostics)
            end = found.end
            if not found.final:  # the output ended inside this call
                return Extraction(end=end, calls=calls, diagnostics=diagnostics)
            cursor = skip_space(text, end)
        if not calls and not diagnostics:
            rest = text[cursor : cursor + len(TOOLS_CLOSE) + 1]
            if CALL_OPEN.startswith(rest) or TOOLS_CLOSE.startswith(rest):  # cut off while opening
                return unreadable(self.name, text, pos, len(text), f"output ended inside {TOOLS_OPEN}", kind=DiagnosticKind.TRUNCATED)
            return None
        # an unclosed section: its complete calls stand (the closing marker may still come)
        return Extraction(end=end, calls=calls, diagnostics=diagnostics, closer=TOOLS_CLOSE)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Streaming: ``None`` is final once what follows plainly opens no call."""
        after = pos + len(trigger)
        if trigger == CALL_OPEN:
            return after < len(text) and not text[after].isspace() and not SEP.startswith(text[after : after + len(SEP)])
        cursor = skip_space(text, after)
        rest = text[cursor : cursor + len(TOOLS_CLOSE)]
        return not (CALL_OPEN.startswith(rest) or TOOLS_CLOSE.startswith(rest) or rest.startswith(CALL_OPEN))

    def render(self, calls: Sequence[ToolCall]) -> str:
        parts = [TOOLS_OPEN]
        for index, call in enumerate(calls, start=1):
            parts.append(f'{CALL_OPEN} tool="{_escape(call.name)}" index="{index}"{SEP}')
            for key, value in call.arguments.items():
                kind, raw = ("string", value) if isinstance(value, str) else (json_type_name(value), json.dumps(value, ensure_ascii=False))
                parts.append(f'{ARG_OPEN} key="{_escape(key)}" type="{kind}"{SEP}{raw}{ARG_CLOSE}')
            parts.append(CALL_CLOSE)
        parts.append(TOOLS_CLOSE)
        return "".join(parts)


def _read_call(family: str, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
    """The call whose ``<|open|>call`` is at ``pos``, read through its ``<|close|>call<|sep|>``."""
    if _AFTER_CALL_OPEN_RE.match(text, pos + len(CALL_OPEN)) is None:
        return None  # "<|open|>callback", "<|open|>call x=1": not the call token's shape
    head = _CALL_HEAD.match(text, pos)
    if head is None:
        if find_forward(text, SEP, pos) < 0:
            return unreadable(family, text, pos, len(text), "output ended inside a call's opening marker", kind=DiagnosticKind.TRUNCATED)
        return None
    name = _attributes(head.group(1)).get("tool", "")
    if not name:
        return _broken(family, text, pos, head.end(), "call without a tool attribute")
    tool = ctx.tool(name)
    arguments: dict[str, Any] = {}
    repairs: list[str] = []
    cursor = head.end()
    final = True  # False: the read ends at the end of the text, where a closing marker may yet be quoted text
    while True:
        cursor = skip_space(text, cursor)
        if text.startswith(CALL_CLOSE, cursor):
            end, final = cursor + len(CALL_CLOSE), True
            break
        ender = next((marker for marker in _CALL_ENDS if text.startswith(marker, cursor)), None)
        if ender is not None:  # the call's closer left out: the next marker ends it
            end, final = cursor, True
            repairs.append(f"{CALL_CLOSE} supplied before {ender}")
            break
        if text.startswith(JSON_OPEN, cursor):
            block = _json_block(text, cursor)
            if isinstance(block, str):
                return _broken(family, text, pos, head.end(), f"{block} in the call to {name!r}")
            value, cursor = block
            arguments.update(value)
            continue
        arg = _ARG_HEAD.match(text, cursor)
        found = _value_end(text, arg.end()) if arg is not None else None
        if arg is None or found is None:
            return _broken(family, text, pos, head.end(), f"unreadable argument in the call to {name!r}")
        value_end, closer = found
        attrs = _attributes(arg.group(1))
        key = attrs.get("key", "")
        arguments[key] = _value(text[arg.end() : value_end], attrs.get("type"), property_schema(tool, key))
        final = value_end + len(closer) < len(text)  # at the end, the "marker" may yet go on as text
        if closer == ARG_CLOSE:
            cursor = value_end + len(closer)
            continue
        repairs.append(f"{ARG_CLOSE} supplied before {closer}")
        if closer == CALL_CLOSE:
            end = value_end + len(closer)
        else:  # the section, response or message closed around the call: theirs to consume
            end = value_end
            repairs.append(f"{CALL_CLOSE} supplied before {closer}")
        break
    diagnostics: list[Diagnostic] = []
    call = make_call(family, name, arguments, text[pos:end], pos, repairs, diagnostics)
    return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=final)


def _value_end(text: str, start: int) -> tuple[int, str] | None:
    """Where the value from ``start`` ends, and the marker that ends it (None: not in the text).

    A closing marker ends the value only where another marker or the end of
    the text follows it; elsewhere it is text the value quotes.
    """
    at = find_forward(text, _CLOSE_PREFIX, start)
    while at >= 0:
        closer = next((marker for marker in _VALUE_ENDS if text.startswith(marker, at)), None)
        if closer is not None:
            after = skip_space(text, at + len(closer))
            if after == len(text) or text.startswith(_MARKER_START, after):
                return at, closer
        at = find_forward(text, _CLOSE_PREFIX, at + 1)
    return None


def _json_block(text: str, pos: int) -> tuple[dict[str, Any], int] | str:
    """The arguments written as one JSON object at ``pos``, and where its block ends; or why not."""
    head = _JSON_HEAD.match(text, pos)
    if head is None:
        return "unreadable JSON block marker"
    try:
        value, stop = _DECODER.raw_decode(text, skip_space(text, head.end()))
    except ValueError:
        return "unreadable JSON arguments"
    after = skip_space(text, stop)
    if not text.startswith(JSON_CLOSE, after):
        return f"JSON arguments not closed by {JSON_CLOSE}"
    if not isinstance(value, dict):
        return f"JSON arguments are {json_type_name(value)}, not an object"
    return value, after + len(JSON_CLOSE)


def _broken(family: str, text: str, pos: int, body: int, reason: str) -> Extraction:
    """A call that cannot be read, consumed through its closer (TRUNCATED when the output ends first)."""
    close = find_forward(text, CALL_CLOSE, body)
    if close < 0:
        return unreadable(family, text, pos, len(text), reason, kind=DiagnosticKind.TRUNCATED)
    return unreadable(family, text, pos, close + len(CALL_CLOSE), reason)


def _value(raw: str, declared: str | None, schema: Any) -> Any:
    if declared is None:
        return typed_value(raw, schema)
    if declared == "string":
        return raw
    try:
        return json.loads(raw, parse_constant=_not_json)
    except ValueError:
        return raw


def _not_json(constant: str) -> Any:
    """``NaN`` and ``Infinity`` are Python's extension, not JSON: such a value stays text."""
    raise ValueError(f"{constant} is not a JSON number")
