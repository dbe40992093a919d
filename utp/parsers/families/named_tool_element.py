"""A call element naming its tool by attribute, its arguments as elements: ``<tool name="f"><parameters><k>v</k></parameters></tool>``.

Clients that describe tools to the model in XML (TelegramSearchBot's MCP
prompt, agents written against Claude's ``<invoke name=…>`` but with their own
tag) get replies such as::

    <tool name="search_web">
      <parameters>
        <query>weather in Suzhou</query>
        <count>5</count>
      </parameters>
    </tool>

The element is ``<tool>``, ``<function>``, ``<tool_call>`` or ``<function_call>``
with a ``name`` attribute; its body is the arguments as elements: one element
per argument named by its key, the same inside a ``<parameters>`` (or
``<arguments>``, ``<args>``, …) wrapper, or Claude's ``<parameter name="k">v</parameter>``
elements, with or without the wrapper. Values are raw text typed by the
tool's schema (JSON when untyped and JSON); a value quoted as CDATA is its
text. A JSON body inside ``<tool_call name="f">`` is the Hermes family's.

Such an element is a call when it is closed and its body is nothing but those
elements; with tools offered the name must be one of them, and without tools
the body must use the arguments' vocabulary (a wrapper or ``<parameter name>``
elements), since ``<tool name="javac"><arg>…</arg></tool>`` is also a build
file's markup. Anything else (prose in the body, other markup) stays content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.elements import ARGUMENT_ELEMENTS, child_elements, unwrap_cdata
from utp.parsers.familykit import NAME_ATTRIBUTE, NAME_ATTRIBUTE_HEAD, make_call, render_value
from utp.parsers.layout import unindented
from utp.parsers.pythoncalls import names_offered_tool
from utp.parsers.textscan import find_forward, skip_space
from utp.parsers.typedvalues import property_schema, typed_value
from utp.types import Diagnostic, Tool, ToolCall

TAGS = ("tool", "function", "tool_call", "function_call")
_OPENERS = tuple(f"<{tag} " for tag in TAGS)
_OPEN = re.compile(r"<(?P<tag>" + "|".join(TAGS) + r")\s+" + NAME_ATTRIBUTE)
#: the opener's rest after ``<tag ``: the name attribute, then an element opening the body
_HEAD = NAME_ATTRIBUTE_HEAD + r"\s*+<[A-Za-z_]"
#: a wrapper around the arguments, named as JSON calls name their arguments key
_WRAPPER = re.compile(r"<(" + "|".join(ARGUMENT_ELEMENTS) + r")>(.*)</\1>", re.S)
#: Claude's parameter element
_PARAMETER = re.compile(r"""\s*+<parameter\s++name\s*+=\s*+(["'])([^"'<>\n]{1,128}+)\1\s*+>""")
_PARAMETER_END = "</parameter>"
#: the longest element read
_MAX_ELEMENT = 65536


@register_family
class NamedToolElementFamily(CallFamily):
    name = "named_tool_element"
    priority = 45
    declared_triggers = static_triggers(_OPENERS, {opener: _HEAD for opener in _OPENERS})
    aliases = ("tool_name_attribute",)
    summary = '<tool name="f"><parameters><k>v</k></parameters></tool> (or <parameter name="k">v</parameter> elements)'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        opener = _OPEN.match(text, pos)
        if opener is None:
            return None
        name, closer = opener.group("name").strip(), f"</{opener.group('tag')}>"
        close = find_forward(text, closer, opener.end())  # (remembered: a flood of openers costs one search)
        if close == -1 or close - pos > _MAX_ELEMENT or (ctx.has_tools and not names_offered_tool(name, ctx)):
            return None
        arguments = _arguments(text[opener.end() : close], ctx.tool(name), vocabulary_needed=not ctx.has_tools)
        if arguments is None:
            return None
        end = close + len(closer)
        diagnostics: list[Diagnostic] = []
        return Extraction(end, [make_call(self.name, name, arguments, text[pos:end], pos, [], diagnostics)], diagnostics, final=True)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Decided once the element closed (or grew too long to be read)."""
        opener = _OPEN.match(text, pos)
        if opener is None:
            return text.find(">", pos, pos + 400) != -1 or len(text) - pos > 400
        body = skip_space(text, opener.end())
        if body < len(text) and text[body] != "<":
            return True  # prose after the tag: markup being shown
        return find_forward(text, f"</{opener.group('tag')}>", opener.end()) != -1 or len(text) - pos > _MAX_ELEMENT

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            f'<tool name="{call.name}">\n<parameters>\n'
            + "".join(f"<{key}>{render_value(value)}</{key}>\n" for key, value in call.arguments.items())
            + "</parameters>\n</tool>"
            for call in calls
        )


def _arguments(body: str, tool: Tool | None, vocabulary_needed: bool) -> dict[str, Any] | None:
    """The arguments the body writes as elements, typed by ``tool``'s schema; None when it is not only those."""
    inner = body.strip()
    wrapper = _WRAPPER.fullmatch(inner)
    if wrapper is not None:
        inner = wrapper.group(2).strip()
    if not inner:
        return {} if wrapper is not None or not vocabulary_needed else None
    if _PARAMETER.match(inner):
        raw = _parameters(inner)
    elif wrapper is None and vocabulary_needed:
        return None
    else:
        raw = child_elements(inner, decode=False)
    if raw is None:
        return None
    return {key: typed_value(value, property_schema(tool, key), untyped="json") for key, value in raw.items()}


def _parameters(inner: str) -> dict[str, str] | None:
    """``<parameter name="k">v</parameter>`` elements, nothing else between them: raw values by key."""
    values: dict[str, str] = {}
    at = 0
    while at < len(inner):
        parameter = _PARAMETER.match(inner, at)
        if parameter is None:
            return None if inner[at:].strip() else values
        close = inner.find(_PARAMETER_END, parameter.end())
        if close == -1 or parameter.group(2) in values:
            return None
        values[parameter.group(2)] = unwrap_cdata(unindented(inner[parameter.end() : close]).strip())
        at = close + len(_PARAMETER_END)
    return values
