"""Cline-style XML tool use: ``<read_file>\\n<path>src/app.py</path>\\n</read_file>``.

Cline, Roo Code and Kilo Code describe each tool to the model as an XML
element named after the tool, with one child element per parameter, and read
the reply for those elements. Local models that have seen such prompts, or
were tuned on their transcripts, write the same shape to agents expecting
native calls. Without the tools the shape is ordinary markup, so the offered
tools' names are the triggers (:meth:`CallFamily.tool_triggers`):
``<read_file>`` is watched for only while ``read_file`` is offered.

The body must be nothing but parameter elements, each closed by the first
closing tag of its name; values are raw text (trimmed, as Cline does), typed
by the tool's JSON Schema. Anything else in the element (prose, other markup)
means the element is being shown, not used, and it stays content. An element
the output ends inside is reported TRUNCATED, never run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.families.hermes import child_elements
from utp.parsers.familykit import make_call, unreadable
from utp.parsers.pyliteral import property_schema, typed_value
from utp.parsers.reasoning import REASONING_TAGS
from utp.parsers.textscan import find_forward
from utp.types import DiagnosticKind, ToolCall

#: a tool name that can be an element name (and so a trigger)
_ELEMENT_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,100}")
#: reasoning openers are never a tool's element: those tags always open reasoning
_RESERVED = frozenset(opener for opener, _ in REASONING_TAGS)
#: the body so far may still become parameter elements (blank, or an element opening)
_MAY_BE_PARAMETERS = re.compile(r"\s*+(?:<|\Z)")
#: a parameter element has begun (an element the output ends inside is a call cut off)
_PARAMETERS_BEGUN = re.compile(r"\s*+<[A-Za-z_]")


@register_family
class ClineXmlFamily(CallFamily):
    name = "cline_xml"
    triggers = ()
    priority = 10
    aliases = ("cline", "roo", "xml_tool_use")
    summary = "<TOOL_NAME><param>value</param></TOOL_NAME> for an offered tool (Cline / Roo Code XML tool use)"

    def tool_triggers(self, ctx: ParseContext) -> tuple[str, ...]:
        triggers = (f"<{name}>" for name in ctx.by_name if _ELEMENT_NAME.fullmatch(name))
        return tuple(t for t in triggers if t not in _RESERVED)

    def trigger_head(self, trigger: str) -> str | None:
        """Further on, the closer before the element opens again, or neither (a call cut off); and first
        blanks, then the element's own closer or a parameter element (the same element again is a flood).

        The second lookahead stops at the next ``<NAME>``, so the lookaheads of
        all occurrences read the text once between them: a flood of unclosed
        elements costs one regex pass, not one ``extract`` per element.
        """
        name = re.escape(trigger[1:-1])
        return rf"(?=[^<]*+(?:<(?!/?{name}>)[^<]*+)*+(?:</{name}>|\Z))\s*+(?:</{name}>|<(?!{name}>)[A-Za-z_])"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        name = trigger[1:-1]
        if ctx.tool(name) is None:
            return None
        body = pos + len(trigger)
        close = find_forward(text, f"</{name}>", body)
        reopened = find_forward(text, trigger, body)
        if close < 0 or 0 <= reopened < close:
            # never closed (before the element opens again): a call cut off, or a mention
            if close < 0 and reopened < 0 and _PARAMETERS_BEGUN.match(text, body):
                return unreadable(self.name, text, pos, len(text), f"output ended inside <{name}>", kind=DiagnosticKind.TRUNCATED)
            return None
        raw_arguments = child_elements(text[body:close], decode=False)
        if raw_arguments is None:
            return None  # prose or other markup inside: the element is shown, not used
        tool = ctx.tool(name)
        arguments: dict[str, Any] = {key: typed_value(raw, property_schema(tool, key), untyped="json") for key, raw in raw_arguments.items()}
        end = close + len(name) + 3
        return Extraction(end, [make_call(self.name, name, arguments, text[pos:end], pos)], final=True)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        body = pos + len(trigger)
        if find_forward(text, f"</{trigger[1:-1]}>", body) >= 0:
            return True
        return _MAY_BE_PARAMETERS.match(text, body) is None

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            f"<{call.name}>\n"
            + "".join(f"<{key}>{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}</{key}>\n" for key, value in call.arguments.items())
            + f"</{call.name}>"
            for call in calls
        )
