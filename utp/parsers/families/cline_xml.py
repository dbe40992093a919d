"""Cline-style XML tool use: ``<read_file>\\n<path>src/app.py</path>\\n</read_file>``.

Cline, Roo Code and Kilo Code describe each tool to the model as an XML
element named after the tool, with one child element per parameter, and read
the reply for those elements. Local models that have seen such prompts, or
were tuned on their transcripts, write the same shape to agents expecting
native calls. Without the tools the shape is ordinary markup, so the offered
tools' names are the triggers (:meth:`CallFamily.triggers_for`):
``<read_file>`` is watched for only while ``read_file`` is offered.

The body must be nothing but parameter elements. A parameter ends at the
first closing tag of its name that the next parameter or the end of the body
follows, so a file's text may hold that closing tag itself (Roo Code reads a
file's content up to its last closer). Values are raw text typed by the
tool's JSON Schema, laid out as Cline and Roo Code read them: a value on one
line is trimmed; a value written on lines of its own keeps its indentation and
blank edges, only the line break after the opening tag and the one before the
closing tag being layout (Cline's rule for file content). Agents that describe tools in YAML (Orchestrator-
style prompts, the yaml-xml protocol of AI SDK middlewares) have the model
write the arguments as a YAML mapping inside the same element
(``<get_weather>\nlocation: Paris\n</get_weather>``); such a body is read
when it is a mapping whose keys are the tool's parameters (any identifiers
when its schema lists none). A body that is one JSON object valid as written
(``<get_weather>{"location": "Paris"}</get_weather>``) is read when its keys
are the tool's declared parameters. A tool of one parameter may get its value
as the element's text (``<search>capital of France</search>``: Search-R1-style
agents offer such tools and read such tags). A tool called without arguments
may be one self-closing element (``<get_location/>``, ``<get_location />``), and one with arguments may write
them as the element's attributes (``<run_command command="ls -l" />``, as qwen2.5-coder
does after JSX-like prompts; closed at once by ``</run_command>`` or self-closing; every
attribute one of the tool's parameters, on the tag's one line). Anything else in the
element (prose for a tool of several parameters, other markup) means the
element is being shown, not used, and it stays content. An element the output
ends inside is reported TRUNCATED, never run.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, Trigger, register_family
from utp.parsers.callshape import ANNOUNCED_CALL, announced_call_arguments
from utp.parsers.familykit import declares_all, make_call, unreadable
from utp.parsers.elements import cdata_text
from utp.parsers.layout import one_line_of_text
from utp.parsers.typedvalues import property_schema, typed_value
from utp.parsers.reasoning import REASONING_TAGS
from utp.parsers.textscan import find_forward, skip_space
from utp.parsers.yamlarguments import YAML_KEY, YAML_START, yaml_arguments
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: a tool name that can be an element name (and so a trigger)
_ELEMENT_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,100}")
#: reasoning openers are never a tool's element: those tags always open reasoning
_RESERVED = frozenset(opener for opener, _ in REASONING_TAGS)
#: the body so far may still become parameter elements (blank, or an element opening)
_MAY_BE_PARAMETERS = re.compile(r"\s*+(?:<|\{|\Z)")
#: a parameter element has begun (an element the output ends inside is a call cut off)
_PARAMETERS_BEGUN = re.compile(r"\s*+<[A-Za-z_]")
#: a parameter element's opening tag (blanks before it are layout)
_PARAMETER_OPEN = re.compile(r"\s*+<([A-Za-z_][\w.\-]{0,100})>")
#: the line break right after a parameter's opening tag, and the one right before its closer
_LEADING_BREAK = re.compile(r"\A\r?\n")
_TRAILING_BREAK = re.compile(r"\r?\n\Z")
#: the longest text value read from a one-parameter tool's element (a longer one is prose)
MAX_TEXT_VALUE = 4096
#: HTML's text elements: with a tool of such a name offered, ``<code>x</code>`` in prose is still markup
_HTML_TEXT_ELEMENTS = frozenset("a abbr b blockquote cite code dd del dfn div dt em h1 h2 h3 h4 h5 h6 i ins kbd label li mark p pre q s samp small span strong sub summary sup td th title u var".split())
#: a YAML body's first key as far as written (streaming: it may still become one)
_YAML_SO_FAR = re.compile(r"\s*+(?:[A-Za-z_][\w\-]{0,100}+(?:[ \t]*+:?)?)?\Z")

#: an element's arguments as attributes, on the tag's line, up to the tag's end (``/>`` or ``>``); none at
#: all is a call without arguments, as ``<NAME/>`` is (``<list_projects />``, gezel's Qwen captures)
_ATTRIBUTES = r"""(?:[ \t]*+[A-Za-z_][\w\-]{0,100}+[ \t]*+=[ \t]*+(?:"[^"\n]{0,4096}+"|'[^'\n]{0,4096}+'))*+[ \t]*+/?>"""
_ATTRIBUTES_TAG = re.compile(_ATTRIBUTES)
_ONE_ATTRIBUTE = re.compile(r"""([A-Za-z_][\w\-]{0,100}+)[ \t]*+=[ \t]*+(?:"([^"\n]*+)"|'([^'\n]*+)')""")


def _element_head(name: str) -> str:
    """Further on, the closer before the element opens again, or neither (a call cut off); and first
    blanks, then the element's own closer or a parameter element (the same element again is a flood).

    The second lookahead stops at the next ``<NAME>``, so the lookaheads of
    all occurrences read the text once between them: a flood of unclosed
    elements costs one regex pass, not one ``extract`` per element.
    """
    name = re.escape(name)
    return rf"(?=[^<]*+(?:<(?!/?{name}>)[^<]*+)*+(?:</{name}>|\Z))\s*+(?:</{name}>|<(?!{name}>)[A-Za-z_]|{YAML_KEY}|\{{|[^<]{{1,{MAX_TEXT_VALUE}}}+</{name}>)"


@register_family
class ClineXmlFamily(CallFamily):
    name = "cline_xml"
    priority = 10
    aliases = ("cline", "roo", "xml_tool_use")
    summary = "<TOOL_NAME><param>value</param></TOOL_NAME> for an offered tool (Cline / Roo Code XML tool use)"

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """``<NAME>`` and ``<NAME/>`` for each offered tool named like an element (no other triggers)."""
        if ctx is None:
            return ()
        names = [name for name in ctx.by_name if _ELEMENT_NAME.fullmatch(name)]
        opened = [Trigger(f"<{name}>", _element_head(name), from_tool_names=True) for name in names]
        closed = [Trigger(f"<{name}/>", from_tool_names=True) for name in names]  # a self-closing element is the whole call
        attributed = [Trigger(f"<{name} ", _ATTRIBUTES, from_tool_names=True) for name in names]
        return tuple(t for t in (*opened, *closed, *attributed) if t.text[:-1] + ">" not in _RESERVED)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger.endswith(" "):
            return self._attributes(text, pos, trigger, ctx)
        if trigger.endswith("/>"):
            name, end = trigger[1:-2], pos + len(trigger)
            return Extraction(end, [make_call(self.name, name, {}, trigger, pos)], final=True) if ctx.tool(name) else None
        name = trigger[1:-1]
        if ctx.tool(name) is None:
            return None
        body = pos + len(trigger)
        close = find_forward(text, f"</{name}>", body)
        reopened = find_forward(text, trigger, body)
        if close < 0 or 0 <= reopened < close:
            # never closed (before the element opens again): a call cut off, or a mention
            if close < 0 and reopened < 0 and (_PARAMETERS_BEGUN.match(text, body) or YAML_START.match(text, body)):
                return unreadable(self.name, text, pos, len(text), f"output ended inside <{name}>", kind=DiagnosticKind.TRUNCATED)
            return None
        tool = ctx.tool(name)
        raw_arguments = parameter_elements(text[body:close])
        repairs: list[str] = []
        if raw_arguments is None:
            mapping = yaml_arguments(text[body:close], tool)
            if mapping is None:
                mapping = json_arguments(text[body:close], tool, repairs)
            if mapping is None:
                mapping = text_argument(text[body:close], tool)
            if mapping is None:
                return None  # prose or other markup inside: the element is shown, not used
            arguments = mapping
        else:
            arguments = {key: typed_value(raw, property_schema(tool, key), untyped="json") for key, raw in raw_arguments.items()}
        end = close + len(name) + 3
        diagnostics: list[Diagnostic] = []
        return Extraction(end, [make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)], diagnostics, final=True)

    def _attributes(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """``<NAME k="v" />`` (or ``<NAME k="v"></NAME>``): the attributes are the arguments, and a body
        adds the rest (see :func:`body_arguments`)."""
        name, tool = trigger[1:-1], ctx.tool(trigger[1:-1])
        tag = _ATTRIBUTES_TAG.match(text, pos + len(trigger))
        if tool is None or tag is None:
            return None
        body = close = end = tag.end()
        if not tag.group().endswith("/>"):  # closed later, before the element opens again (a flood: one search each)
            close, reopened = find_forward(text, f"</{name}>", body), find_forward(text, trigger, body)
            if close < 0 or 0 <= reopened < close:
                return None
            end = close + len(name) + 3  # past ``</NAME>``
        arguments: dict[str, Any] = {}
        for attribute in _ONE_ATTRIBUTE.finditer(tag.group()):
            key, raw = attribute.group(1), html.unescape(attribute.group(2) if attribute.group(2) is not None else attribute.group(3))
            if key not in tool.properties or key in arguments:
                return None
            arguments[key] = typed_value(raw, property_schema(tool, key), untyped="json")
        if text[body:close].strip():
            added = body_arguments(text[body:close], tool, arguments)
            if added is None:
                return None  # prose or other markup in the body: the element is shown, not used
            arguments.update(added)
        return Extraction(end, [make_call(self.name, name, arguments, text[pos:end], pos)], final=True)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        body = pos + len(trigger)
        if trigger.endswith(" "):  # decided once the tag's line or the tag (and a closer right after it) is written
            tag = _ATTRIBUTES_TAG.match(text, body)
            if tag is None:
                return any(mark in text[body : body + 2 * 4096 + 512] for mark in ">\n")
            if tag.group().endswith("/>") or find_forward(text, f"</{trigger[1:-1]}>", tag.end()) >= 0:
                return True
            # a body may still become parameter elements or the text of the parameter left unset
            return _MAY_BE_PARAMETERS.match(text, tag.end()) is None and not _text_may_close(text, tag.end(), trigger[1:-1])
        if trigger.endswith("/>") or find_forward(text, f"</{trigger[1:-1]}>", body) >= 0:
            return True
        if _text_may_close(text, body, trigger[1:-1]):
            return False
        return _MAY_BE_PARAMETERS.match(text, body) is None and not YAML_START.match(text, body) and not _YAML_SO_FAR.match(text, body)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            f"<{call.name}>\n"
            + "".join(f"<{key}>{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}</{key}>\n" for key, value in call.arguments.items())
            + f"</{call.name}>"
            for call in calls
        )


def parameter_elements(body: str) -> dict[str, str] | None:
    """``<path>a.py</path><content>...</content>`` as raw values; None unless only parameter elements."""
    values: dict[str, str] = {}
    at = 0
    while True:
        opening = _PARAMETER_OPEN.match(body, at)
        if opening is None:
            return values if not body[at:].strip() else None
        key = opening.group(1)
        closer = re.compile(rf"</{re.escape(key)}>(?=\s*+(?:<[A-Za-z_][\w.\-]{{0,100}}>|\Z))")
        close = closer.search(body, opening.end())
        if close is None or key in values:
            return None
        values[key] = block_value(body[opening.end() : close.start()])
        at = close.end()


def block_value(raw: str) -> str:
    """A parameter's text as Cline reads it: several lines keep their layout but the first and last
    line break; one line is trimmed, also among blank lines a pretty-printer put around it; a value
    quoted as one CDATA section is its text."""
    quoted = cdata_text(raw)
    if quoted is not None:
        return quoted
    inner = _LEADING_BREAK.sub("", raw, count=1)
    inner = _TRAILING_BREAK.sub("", inner, count=1)
    return inner if "\n" in inner and not one_line_of_text(inner) else raw.strip()


def json_arguments(body: str, tool: Any, repairs: list[str]) -> dict[str, Any] | None:
    """A body that is one JSON object, valid as written, whose keys are the tool's declared parameters
    (``<get_weather>{"city": "Paris"}</get_weather>``: the element's name is the call, the JSON its arguments),
    or the whole call object again (``<hangup_call>{"name": "hangup_call", "arguments": {…}}``, unwrapped,
    the repair noted in ``repairs``)."""
    stripped = body.strip()
    if not stripped.startswith("{") or tool is None or not tool.properties:
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    unwrapped = announced_call_arguments(value, tool.name, tool)
    if unwrapped is not None:
        repairs.append(ANNOUNCED_CALL)
        value = unwrapped
    if not isinstance(value, dict) or not declares_all(value, tool):
        return None
    return value


def text_argument(body: str, tool: Any) -> dict[str, Any] | None:
    """A one-parameter tool's element holding only text: that parameter's value, laid out as a
    parameter element's is (``<search>capital of France</search>``, the tag protocol of
    Search-R1-style agents, whose tools take one query or program). Not for a tool named like
    HTML's text elements (``<code>``), whose text in prose is markup."""
    if tool is None or len(tool.properties) != 1 or tool.name in _HTML_TEXT_ELEMENTS:
        return None
    if "<" in body or not body.strip() or len(body) > MAX_TEXT_VALUE:
        return None
    key = next(iter(tool.properties))
    return {key: typed_value(block_value(body), property_schema(tool, key), untyped="json")}


def body_arguments(body: str, tool: Any, given: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments an attributed element's body adds: its parameter elements
    (``<edit_file path='a'><search>x</search><replace>y</replace></edit_file>``), or as text the one
    declared parameter the attributes leave unset (``<write_file path='a'>text</write_file>``, a
    desktop agent's Llama prompt format), laid out as a parameter element's. None when it is neither."""
    elements = parameter_elements(body)
    if elements is not None:
        if any(key not in tool.properties or key in given for key in elements):
            return None
        return {key: typed_value(raw, property_schema(tool, key), untyped="json") for key, raw in elements.items()}
    unset = [key for key in tool.properties if key not in given]
    if len(unset) != 1 or tool.name in _HTML_TEXT_ELEMENTS or "<" in body or len(body) > MAX_TEXT_VALUE:
        return None
    return {unset[0]: typed_value(block_value(body), property_schema(tool, unset[0]), untyped="json")}


def _text_may_close(text: str, body: int, name: str) -> bool:
    """Streaming: is the body so far text without markup that ``</name>`` may still close?"""
    lt = text.find("<", body, body + MAX_TEXT_VALUE + 1)
    if lt < 0:
        return len(text) - body <= MAX_TEXT_VALUE
    closer = f"</{name}>"
    return len(text) - lt < len(closer) and closer.startswith(text[lt:])
