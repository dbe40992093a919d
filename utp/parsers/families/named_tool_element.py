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

The element is ``<tool>``, ``<function>``, ``<tool_call>``, ``<function_call>`` or
``<call>`` (PawnLogic's agent prompts ``<call name="run_shell"><command>…</command></call>``)
with a ``name`` attribute; its body is the arguments as elements: one element
per argument named by its key, the same inside a ``<parameters>`` (or
``<arguments>``, ``<args>``, …) wrapper, or Claude's ``<parameter name="k">v</parameter>``
elements, with or without the wrapper. Values are raw text typed by the
tool's schema (JSON when untyped and JSON); a value quoted as CDATA is its
text. The body may instead be one JSON object valid as written, the arguments
(``<tool name="read_json">{"file_path": "a.json"}</tool>``, a Chinese agent's
prompt format); inside ``<tool_call name="f">`` that is the Hermes family's.

Such an element is a call when it is closed and its body is nothing but those
elements; with tools offered the name must be one of them, and without tools
the body must use the arguments' vocabulary (a wrapper or ``<parameter name>``
elements), since ``<tool name="javac"><arg>…</arg></tool>`` is also a build
file's markup. Anything else (prose in the body, other markup) stays content.

The arguments may also be an attribute holding a JSON object, bare or quoted, the
element empty (Xiaomi MiMo asked for calls it has no template for writes
``<tool_invocation name="generate_image" arguments={"prompt": "a fox"} />``), under
``<tool_invocation>`` or ``<tool_use>``; the object must be valid JSON.
"""

from __future__ import annotations

import json
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

TAGS = ("tool", "function", "tool_call", "function_call", "call")
#: tags that name a call only with its arguments as an attribute
_ATTRIBUTE_ONLY_TAGS = ("tool_invocation", "tool_use")
_OPENERS = tuple(f"<{tag} " for tag in TAGS)
_ATTRIBUTE_OPENERS = tuple(f"<{tag} " for tag in _ATTRIBUTE_ONLY_TAGS)
#: (the element tags keep their one head: a second, for arguments as an attribute, on every ``<tool `` or
#: ``<function `` of a flood cost a sixth to a fifth more time in ``make bench``)
_OPEN = re.compile(r"<(?P<tag>" + "|".join(TAGS) + r")\s+" + NAME_ATTRIBUTE)
#: the opener's rest after ``<tag ``: the name attribute, then an element or a JSON object opening the body
_HEAD = NAME_ATTRIBUTE_HEAD + r"\s*+(?:<[A-Za-z_]|\{)"
#: the opener's rest when the arguments are an attribute: ``arguments=`` and an object, bare or quoted
#: (possessive, attribute by attribute: an opener of a flood fails at its first character that is no attribute)
_ARGUMENTS_ATTRIBUTE_HEAD = (
    r"""(?:[\w\-]{1,32}+\s*+=\s*+(?:"[^"<>\n]{0,256}+"|'[^'<>\n]{0,256}+')\s++){0,8}+"""
    r"""(?:arguments|args|parameters|input)\s*+=\s*+['"]?\{"""
)
_ATTRIBUTE_OPEN = re.compile(r"<(?P<tag>" + "|".join(_ATTRIBUTE_ONLY_TAGS) + r")\s")
#: one attribute's name and ``=``
_ATTRIBUTE_NAME = re.compile(r"\s*+([A-Za-z_][\w\-]{0,32}+)\s*+=\s*+")
_ARGUMENT_ATTRIBUTES = frozenset(("arguments", "args", "parameters", "input"))
#: an attribute's value written without quotes
_BARE_VALUE = re.compile(r"[^\s/>]++")
#: a wrapper around the arguments, named as JSON calls name their arguments key
_WRAPPER = re.compile(r"<(" + "|".join(ARGUMENT_ELEMENTS) + r")>(.*)</\1>", re.S)
#: Claude's parameter element
_PARAMETER = re.compile(r"""\s*+<parameter\s++name\s*+=\s*+(["'])([^"'<>\n]{1,128}+)\1\s*+>""")
_PARAMETER_END = "</parameter>"
#: the next parameter element's opener, which no value's own closer may lie beyond
_NEXT_PARAMETER = re.compile(_PARAMETER.pattern.removeprefix(r"\s*+"))
#: the longest element read
_MAX_ELEMENT = 65536
_DECODER = json.JSONDecoder()


@register_family
class NamedToolElementFamily(CallFamily):
    name = "named_tool_element"
    priority = 45
    declared_triggers = static_triggers(
        (*_OPENERS, *_ATTRIBUTE_OPENERS),
        {**{opener: _HEAD for opener in _OPENERS}, **{opener: _ARGUMENTS_ATTRIBUTE_HEAD for opener in _ATTRIBUTE_OPENERS}},
    )
    aliases = ("tool_name_attribute",)
    summary = '<tool name="f"><parameters><k>v</k></parameters></tool> (or <parameter name="k">v</parameter> elements)'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger in _ATTRIBUTE_OPENERS:
            return _attribute_call(self.name, text, pos, ctx)
        opener = _OPEN.match(text, pos)
        if opener is None:
            return None
        name, closer = opener.group("name").strip(), f"</{opener.group('tag')}>"
        close = find_forward(text, closer, opener.end())  # (remembered: a flood of openers costs one search)
        if close == -1 or close - pos > _MAX_ELEMENT or (ctx.has_tools and not names_offered_tool(name, ctx)):
            return None
        body = text[opener.end() : close]
        repairs: list[str] = []
        if body.lstrip().startswith("{"):
            arguments = _json_arguments(body) if opener.group("tag") != "tool_call" else None  # (Hermes reads that tag's)
        else:
            arguments = _arguments(body, ctx.tool(name), not ctx.has_tools, repairs)
        if arguments is None:
            return None
        end = close + len(closer)
        diagnostics: list[Diagnostic] = []
        return Extraction(end, [make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)], diagnostics, final=True)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Decided once the element closed (or grew too long to be read)."""
        if trigger in _ATTRIBUTE_OPENERS:
            return _attributes_end(text, pos + len(trigger)) is not None or len(text) - pos > _MAX_ELEMENT
        opener = _OPEN.match(text, pos)
        if opener is None:
            return text.find(">", pos, pos + 400) != -1 or len(text) - pos > 400
        body = skip_space(text, opener.end())
        if body < len(text) and text[body] not in "<{":
            return True  # prose after the tag: markup being shown
        return find_forward(text, f"</{opener.group('tag')}>", opener.end()) != -1 or len(text) - pos > _MAX_ELEMENT

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            f'<tool name="{call.name}">\n<parameters>\n'
            + "".join(f"<{key}>{render_value(value)}</{key}>\n" for key, value in call.arguments.items())
            + "</parameters>\n</tool>"
            for call in calls
        )


def _json_arguments(body: str) -> dict[str, Any] | None:
    """The body as one JSON object valid as written (``<tool name="read_json">{"file_path": "a"}</tool>``), else None."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return value if type(value) is dict else None


def _arguments(body: str, tool: Tool | None, vocabulary_needed: bool, repairs: list[str]) -> dict[str, Any] | None:
    """The arguments the body writes as elements, typed by ``tool``'s schema; None when it is not only those."""
    inner = body.strip()
    wrapper = _WRAPPER.fullmatch(inner)
    if wrapper is not None:
        inner = wrapper.group(2).strip()
    if not inner:
        return {} if wrapper is not None or not vocabulary_needed else None
    if _PARAMETER.match(inner):
        raw = _parameters(inner, repairs)
    elif wrapper is None and vocabulary_needed:
        return None
    else:
        raw = child_elements(inner, decode=False)
    if raw is None:
        return None
    return {key: typed_value(value, property_schema(tool, key), untyped="json") for key, value in raw.items()}


def _parameters(inner: str, repairs: list[str]) -> dict[str, str] | None:
    """``<parameter name="k">v</parameter>`` elements, nothing else between them: raw values by key.

    A value closed by its own key's tag instead (``<parameter name="content">…</content>``,
    codii's Gemma 4 test) ends there, recorded, when no ``</parameter>`` comes before the
    next parameter: the closer named after what it closes.
    """
    values: dict[str, str] = {}
    at = 0
    while at < len(inner):
        parameter = _PARAMETER.match(inner, at)
        if parameter is None:
            return None if inner[at:].strip() else values
        key, close, closer = parameter.group(2), inner.find(_PARAMETER_END, parameter.end()), _PARAMETER_END
        following = _NEXT_PARAMETER.search(inner, parameter.end())
        bound = len(inner) if following is None else following.start()
        own = inner.find(f"</{key}>", parameter.end(), bound) if close == -1 or bound < close else -1
        if own != -1:
            close, closer = own, f"</{key}>"
            repairs.append(f"{_PARAMETER_END} written as {closer} after parameter {key!r}")
        if close == -1 or key in values:
            return None
        values[key] = unwrap_cdata(unindented(inner[parameter.end() : close]).strip())
        at = close + len(closer)
    return values


def _attribute_call(family: str, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
    """``<tool_invocation name="f" arguments={…} />`` (or ``>`` and its closer): the call its attributes make."""
    tag = _ATTRIBUTE_OPEN.match(text, pos)
    read = _attributes_end(text, tag.end()) if tag is not None else None
    if tag is None or read is None:
        return None
    attributes, end = read
    name = attributes.get("name")
    arguments = next((attributes[k] for k in attributes if k in _ARGUMENT_ATTRIBUTES and type(attributes[k]) is dict), None)
    if type(name) is not str or not name.strip() or arguments is None or (ctx.has_tools and not names_offered_tool(name, ctx)):
        return None
    pending = ""
    if not text.startswith("/>", end - 2):  # ``>``: the element's closer may follow (or still be arriving)
        closer = f"</{tag.group('tag')}>"
        after = skip_space(text, end)
        end, pending = (after + len(closer), "") if text.startswith(closer, after) else (end, closer)
    diagnostics: list[Diagnostic] = []
    call = make_call(family, name.strip(), arguments, text[pos:end], pos, ["arguments written as an attribute"], diagnostics)
    return Extraction(end, [call], diagnostics, final=not pending, closer=pending)


def _attributes_end(text: str, at: int) -> tuple[dict[str, Any], int] | None:
    """The tag's attributes from ``at`` to its ``>`` or ``/>``: ``(values, end past it)``; None when they do not
    read so. A value is quoted, one bare word, or a JSON object (which may hold ``>``); a quoted object is decoded."""
    values: dict[str, Any] = {}
    for _ in range(16):
        at = skip_space(text, at)
        if text.startswith("/>", at):
            return values, at + 2
        if text.startswith(">", at):
            return values, at + 1
        attribute = _ATTRIBUTE_NAME.match(text, at)
        if attribute is None:
            return None
        at = attribute.end()
        if text.startswith("{", at):
            try:
                value, length = _DECODER.raw_decode(text[at : at + _MAX_ELEMENT])
            except ValueError:
                return None
            at += length
        elif text.startswith(('"', "'"), at):
            close = text.find(text[at], at + 1, at + _MAX_ELEMENT)
            if close == -1:
                return None
            value = text[at + 1 : close]
            if value.lstrip().startswith("{"):
                try:
                    value = json.loads(value)
                except ValueError:
                    pass
            at = close + 1
        else:
            word = _BARE_VALUE.match(text, at)
            if word is None:
                return None
            value, at = word.group(), word.end()
        values[attribute.group(1)] = value
    return None
