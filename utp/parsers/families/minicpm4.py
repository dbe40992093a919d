"""MiniCPM-4 XML calls: ``<function name="N"><param name="K">v</param>…</function>``.

OpenBMB MiniCPM-4 (its V3 tool schema chat template; SGLang's
``minicpm4_xml`` detector) writes each call as a bare ``<function>`` element
whose ``name`` attribute is the tool and whose ``<param name=...>`` children
are the arguments, several calls one after another. A value is raw text,
trimmed, or a ``<![CDATA[...]]>`` section kept verbatim; it is typed by the
tool's schema, and read as JSON when untyped and JSON. A call without its
``</function>`` is not run (the reference drops it): at the end of the output
it is reported TRUNCATED.

Models that half-remember the format write Anthropic's ``<parameter name=...>``
children instead, or the arguments as one JSON object
(``<function name="f">{"a": 1}</function>``, or inside ``<arguments>``); all are
read, the JSON with the same repairs as everywhere else.

The same elements inside ``<tool_call>…</tool_call>`` (Qwen3-Coder's block,
a model mixing the two formats) are read with the block, so no stray tag is
left in the content.

``<function=NAME>`` is Qwen3-Coder's / Functionary's; this family's trigger is
``<function`` followed by whitespace and a quoted ``name`` attribute, and the
opening tag must be followed by a parameter element, a JSON object or
``</function>`` (or the end of the output), so prose mentioning
``<function name="x">`` stays content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import NAME_ATTRIBUTE, NAME_ATTRIBUTE_HEAD, ended_before, json_arguments_before, make_call, unreadable
from utp.parsers.typedvalues import property_schema, typed_value
from utp.parsers.textscan import bounded_find, find_forward, is_proper_prefix, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

from utp.parsers.familykit import render_value

TRIGGERS = ("<function ", "<function\n")
CLOSE = "</function>"
#: a block around the elements (Qwen3-Coder's) and its closer
BLOCK, BLOCK_END = "<tool_call>", "</tool_call>"
PARAM_END = "</param>"
CDATA, CDATA_END = "<![CDATA[", "]]>"
_FUNCTION = re.compile(r"<function\s+" + NAME_ATTRIBUTE)
_PARAM = re.compile(r"<(?P<element>param|parameter)\s+" + NAME_ATTRIBUTE.replace("(?P<name>", "(?P<key>"))
#: what may follow the opening tag: a parameter, a JSON object, the closer, or the end of the output
_BODY_HEAD = r"\s*+(?:<param(?:eter)?+\s|<(?:arguments|parameters)>\s*+\{|\{|</function>|\Z)"
#: the arguments object inside an element of its own (``<arguments>{…}</arguments>``)
_ARGUMENTS_ELEMENT = re.compile(r"<(arguments|parameters)>\s*+(?=\{)")
#: the scan lookahead after ``<function`` + one whitespace: ``_FUNCTION``'s rest, then ``_BODY_HEAD``
_HEAD = NAME_ATTRIBUTE_HEAD + _BODY_HEAD
_BODY = re.compile(_BODY_HEAD)
#: the block's lookahead: whitespace, then a function element
_BLOCK_HEAD = r"\s*+<function\s" + _HEAD
_ELEMENT_OPEN = re.compile(r"<function\s")


def _raw_value(text: str, start: int, closer: str = PARAM_END) -> tuple[str, int, bool] | None:
    """The value after a parameter tag: ``(raw, index of its closer, from CDATA)``; None if unclosed."""
    lead = skip_space(text, start)
    if text.startswith(CDATA, lead):
        cdata_end = find_forward(text, CDATA_END, lead + len(CDATA))
        if cdata_end != -1:
            after = skip_space(text, cdata_end + len(CDATA_END))
            if text.startswith(closer, after):
                return text[lead + len(CDATA) : cdata_end], after, True
    end = find_forward(text, closer, start)
    if end == -1:
        return None
    return text[start:end].strip(), end, False


@register_family
class MiniCpm4XmlFamily(CallFamily):
    name = "minicpm4"
    aliases = ("minicpm4_xml", "minicpm")
    declared_triggers = static_triggers((*TRIGGERS, BLOCK), {**dict.fromkeys(TRIGGERS, _HEAD), BLOCK: _BLOCK_HEAD})
    summary = 'MiniCPM-4 XML: <function name="N"><param name="K">v</param></function>'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == BLOCK:
            return self._block(text, pos, ctx)
        return self._function(text, pos, ctx)

    def _block(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """``<tool_call>`` around one or more function elements, to its ``</tool_call>``."""
        cursor = skip_space(text, pos + len(BLOCK))
        if _FUNCTION.match(text, cursor) is None:
            return None
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        while True:
            found = self._function(text, cursor, ctx)
            if found is None:
                return None if not calls else Extraction(end=cursor, calls=calls, diagnostics=diagnostics)
            calls.extend(found.calls)
            diagnostics.extend(found.diagnostics)
            cursor = skip_space(text, found.end)
            if not found.final or _FUNCTION.match(text, cursor) is None:
                break
        if found.final and text.startswith(BLOCK_END, cursor):
            return Extraction(end=cursor + len(BLOCK_END), calls=calls, diagnostics=diagnostics, final=True)
        return Extraction(end=found.end, calls=calls, diagnostics=diagnostics)

    def _function(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        match = _FUNCTION.match(text, pos)
        if match is None or _BODY.match(text, match.end()) is None:
            return None
        name = match.group("name").strip()
        tool = ctx.tool(name)
        arguments: dict[str, Any] = {}
        repairs: list[str] = []
        diagnostics: list[Diagnostic] = []
        cursor = match.end()
        if text.startswith("{", skip_space(text, cursor)):
            return self._json_body(text, pos, skip_space(text, cursor), name)
        if (element := _ARGUMENTS_ELEMENT.match(text, skip_space(text, cursor))) is not None:
            return self._json_body(text, pos, element.end(), name, f"</{element.group(1)}>")
        while True:
            cursor = skip_space(text, cursor)
            if text.startswith(CLOSE, cursor):
                end = cursor + len(CLOSE)
                break
            param = _PARAM.match(text, cursor)
            if param is None and arguments and cursor >= len(text):
                # cut right after a whole parameter: read, and said (a value cut in half is not)
                repairs.append(ended_before(CLOSE))
                call = make_call(self.name, name, arguments, text[pos:], pos, repairs, diagnostics)
                return Extraction(end=cursor, calls=[call], diagnostics=diagnostics)
            if param is None:
                close = find_forward(text, CLOSE, cursor)
                if close == -1:
                    return unreadable(self.name, text, pos, len(text), f"call to {name!r} ends before {CLOSE}", kind=DiagnosticKind.TRUNCATED)
                repairs.append(f"ignored text that is not a <param> inside <function> at offset {cursor}")
                cursor = close
                continue
            key, closer = param.group("key"), f"</{param.group('element')}>"
            found = _raw_value(text, param.end(), closer)
            if found is None:
                return unreadable(self.name, text, pos, len(text), f"parameter {key!r} of {name!r} is not closed", kind=DiagnosticKind.TRUNCATED)
            raw, value_end, _ = found
            arguments[key] = typed_value(raw, property_schema(tool, key), untyped="json")
            cursor = value_end + len(closer)
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=True)

    def _json_body(self, text: str, pos: int, body: int, name: str, element_close: str = "") -> Extraction:
        """``<function name="f">{"a": 1}</function>``: the arguments as one JSON object (or inside
        an element of their own, ``<arguments>{…}</arguments>``, whose closer ``element_close`` is)."""
        read = json_arguments_before(self.name, text, pos, body, element_close or CLOSE, name)
        if isinstance(read, Extraction):
            return read
        arguments, end, repairs = read
        after = skip_space(text, end)
        if element_close and text.startswith(element_close, after):
            after = skip_space(text, after + len(element_close))
        if not text.startswith(CLOSE, after):
            close = find_forward(text, CLOSE, after)
            if close == -1:
                return unreadable(self.name, text, pos, len(text), f"call to {name!r} ends before {CLOSE}", kind=DiagnosticKind.TRUNCATED)
            return unreadable(self.name, text, pos, close + len(CLOSE), f"text after the arguments of {name!r} before {CLOSE}")
        end = after + len(CLOSE)
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=True)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger == BLOCK:  # decided as the element after it is
            body = skip_space(text, pos + len(BLOCK))
            if body == len(text) or is_proper_prefix(text, body, TRIGGERS[0]):
                return False
            return _ELEMENT_OPEN.match(text, body) is None or self.settled(text, body, TRIGGERS[0])
        match = _FUNCTION.match(text, pos)
        if match is None:
            # the tag is decided once its '>' is written (a name holds none), or once it is too long
            return bounded_find(text, ">", pos, 300) != -1 or len(text) - pos > 300
        body = skip_space(text, match.end())
        for element in ("<arguments>", "<parameters>"):  # may still become the element holding the JSON
            if is_proper_prefix(text, body, element) or (text.startswith(element, body) and skip_space(text, body + len(element)) == len(text)):
                return False
        return len(text) - body >= len(CLOSE) or (body < len(text) and text[body] != "<")

    def render(self, calls: Sequence[ToolCall]) -> str:
        lines = []
        for call in calls:
            params = "".join(f'<param name="{key}">{_render(value)}</param>' for key, value in call.arguments.items())
            lines.append(f'<function name="{call.name}">{params}</function>')
        return "\n".join(lines)


def _render(value: Any) -> str:
    text = render_value(value)
    if text != text.strip() or "<" in text:
        return f"{CDATA}{text}{CDATA_END}"
    return text
