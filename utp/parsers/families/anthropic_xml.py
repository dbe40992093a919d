"""Claude-style XML calls: ``<function_calls><invoke name="N"><parameter name="K">v</parameter></invoke></function_calls>``.

Models prompted with Anthropic-shaped tool definitions (and models distilled
from Claude transcripts) write this, sometimes with ``antml:``-prefixed tags.
Parameter values are raw text typed by the tool's schema; without a schema a
value that is valid JSON (``{"a": 1}``, ``42``) is read as JSON. OLMo-3 also
wraps *pythonic* calls in ``<function_calls>``; that body is not an
``<invoke>``, so this family passes and the pythonic family reads it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.familykit import make_call, unreadable
from utp.parsers.pyliteral import property_schema, typed_value
from utp.parsers.textscan import bounded_find, find_forward, is_proper_prefix, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

from utp.parsers.families.qwen3_coder import render_value

#: Claude's namespaced tag prefix, spelled in two parts so the literal never looks like live markup
_NS = "antml" + ":"
_PREFIXES = ("", _NS)
_INVOKE = re.compile(r"<(antml:)?invoke\s+name\s*=\s*([\"'])([^\"'\n<>]{1,256})\2\s*>")
#: how much whitespace may sit between ``<function_calls>`` and the first ``<invoke``
_LEADING_SPACE = 256
#: ``_INVOKE`` after ``<invoke`` and its first whitespace, as a scan lookahead: no groups (it is
#: compiled into one pattern with every other head), the quote pair spelled out instead of a
#: back-reference, and possessive runs (each stops at a character the next part cannot take, so
#: the match is the same as ``_INVOKE``'s)
_INVOKE_TAIL = r"""\s*+name\s*+=\s*+(?:"[^"'\n<>]{1,256}+"|'[^"'\n<>]{1,256}+')\s*+>"""
#: the scan lookaheads: ``extract`` returns None unless ``_INVOKE`` matches at the invoke tag
#: itself, or after at most ``_LEADING_SPACE`` whitespace (``\s`` is ``str.isspace``) past the
#: wrapper; there is no truncation report at the end of the text, so nothing else can be read
_WRAPPED_HEAD = rf"\s{{0,{_LEADING_SPACE}}}+<(?:{re.escape(_NS)})?invoke\s{_INVOKE_TAIL}"
_PARAMETER = re.compile(r"<(antml:)?parameter\s+name\s*=\s*([\"'])([^\"'\n<>]{1,256})\2\s*>")


@register_family
class AnthropicXmlFamily(CallFamily):
    name = "anthropic_xml"
    triggers = ("<function_calls>", f"<{_NS}function_calls>", "<invoke ", f"<{_NS}invoke ")
    #: above pythonic, which shares <function_calls> (OLMo-3)
    priority = 60
    aliases = ("claude_xml", "anthropic")
    trigger_heads = {
        "<function_calls>": _WRAPPED_HEAD,
        f"<{_NS}function_calls>": _WRAPPED_HEAD,
        "<invoke ": _INVOKE_TAIL,
        f"<{_NS}invoke ": _INVOKE_TAIL,
    }
    summary = 'Claude-style XML: <function_calls><invoke name="N"><parameter name="K">v</parameter></invoke></function_calls>'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        wrapped = trigger.endswith("function_calls>")
        prefix = _NS if trigger.startswith(f"<{_NS}") else ""
        cursor = skip_space(text, pos + len(trigger), pos + len(trigger) + _LEADING_SPACE) if wrapped else pos
        if not _INVOKE.match(text, cursor):
            return None
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        while True:
            match = _INVOKE.match(text, cursor)
            if match is None:
                break
            outcome = self._read_invoke(text, match, ctx, diagnostics)
            if isinstance(outcome, Extraction):
                outcome.calls[:0] = calls
                outcome.diagnostics[:0] = diagnostics
                return outcome
            call, cursor = outcome
            calls.append(call)
            cursor = skip_space(text, cursor)
        if wrapped:
            for p in (prefix, *_PREFIXES):
                closing = f"</{p}function_calls>"
                if text.startswith(closing, cursor):  # read up to the closer: later text changes nothing
                    return Extraction(end=cursor + len(closing), calls=calls, diagnostics=diagnostics, final=True)
        return Extraction(end=cursor, calls=calls, diagnostics=diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        cursor = skip_space(text, pos + len(trigger)) if trigger.endswith("function_calls>") else pos
        if cursor >= len(text):
            return False
        if _INVOKE.match(text, cursor):
            return True
        if any(is_proper_prefix(text, cursor, f"<{p}invoke ") for p in _PREFIXES):
            return False
        head_end = bounded_find(text, ">", cursor, 300)
        return not text.startswith(("<invoke", f"<{_NS}invoke"), cursor) or head_end != -1 or len(text) - cursor > 300

    def _read_invoke(
        self, text: str, match: re.Match[str], ctx: ParseContext, diagnostics: list[Diagnostic]
    ) -> tuple[ToolCall, int] | Extraction:
        start = match.start()
        prefix = match.group(1) or ""
        name = match.group(3).strip()
        invoke_end = f"</{prefix}invoke>"
        parameter_end = f"</{prefix}parameter>"
        tool = ctx.tool(name)
        arguments: dict[str, object] = {}
        repairs: list[str] = []
        cursor = match.end()
        while True:
            cursor = skip_space(text, cursor)
            if text.startswith(invoke_end, cursor):
                after = cursor + len(invoke_end)
                break
            parameter = _PARAMETER.match(text, cursor)
            if parameter is None:
                close = find_forward(text, invoke_end, cursor)
                if close == -1:
                    return unreadable(
                        self.name, text, start, len(text), f"invoke of {name!r} ends before {invoke_end}",
                        kind=DiagnosticKind.TRUNCATED,
                    )
                repairs.append(f"ignored text that is not a <parameter> inside invoke at offset {cursor}")
                cursor = close
                continue
            key = parameter.group(3)
            value_start = parameter.end()
            value_end = find_forward(text, parameter_end, value_start)
            close = find_forward(text, invoke_end, value_start)
            if value_end == -1 or (close != -1 and close < value_end):
                if close == -1:
                    return unreadable(
                        self.name, text, start, len(text), f"parameter {key!r} of {name!r} is not closed",
                        kind=DiagnosticKind.TRUNCATED,
                    )
                value_end, cursor = close, close
                repairs.append(f"missing {parameter_end} after parameter {key!r}")
            else:
                cursor = value_end + len(parameter_end)
            arguments[key] = typed_value(text[value_start:value_end], property_schema(tool, key), untyped="json")
        return make_call(self.name, name, arguments, text[start:after], start, repairs, diagnostics), after

    def render(self, calls: Sequence[ToolCall]) -> str:
        lines = ["<function_calls>"]
        for call in calls:
            lines.append(f'<invoke name="{call.name}">')
            for key, value in call.arguments.items():
                lines.append(f'<parameter name="{key}">{render_value(value)}</parameter>')
            lines.append("</invoke>")
        lines.append("</function_calls>")
        return "\n".join(lines)
