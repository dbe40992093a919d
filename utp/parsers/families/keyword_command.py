"""Command-style lines naming an offered tool: ``web_fetch url="https://example.com"``.

Agents that present tools as commands, and models imitating a client's
transcript, get answers written as a command line: the tool's name, then its
arguments as ``key=value`` words. Such a line is read only where it cannot be
anything else:

* it is the whole answer (after a lead-in such as "Tool call:"), or the whole
  answer is such lines, or they are the lines that end the answer after a
  sentence ("I'll fetch it.\n\nweb_fetch url=..."), as Python-style call lines are;
* the name is an offered tool's and every word after it is ``key=value``
  (or a long flag, ``--key value`` / ``--key=value``, as shell commands write
  them) with ``key`` one of that tool's declared parameters, each at most once.

A sentence ("run web_fetch url=... to see it"), a shell command with
positional words, or a usage example with prose around it is never such an
answer. A value is double- or single-quoted, or one bare word. Inside quotes a
backslash escapes only the quote (``\\"``); every other backslash is the
value's own (``file="C:\\Users\\me"``, as Windows paths are written). A quoted
value is text unless the property's schema types it (``limit="3"`` for an
integer is 3); a bare word is typed by the schema, or read as JSON without one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family
from utp.parsers.familykit import make_call, render_value
from utp.parsers.reasoning import begins_call_lines
from utp.parsers.textscan import skip_space
from utp.parsers.typedvalues import property_schema, schema_types, typed_value
from utp.types import Tool, ToolCall

#: a parameter's key and its ``=``, or a long flag named as the parameter (``--path x.md``, ``--path=x.md``)
_KEY = re.compile(r"(?:--)?+([A-Za-z_][\w.\-]{0,127}+)=|--([A-Za-z_][\w.\-]{0,127}+)[ \t]++(?!-)")
#: the blanks between words
_BLANKS = re.compile(r"[ \t]*+")
#: a bare value: one word
_BARE = re.compile(r"[^\s\"']\S{0,4095}+")
#: the first word after the name (settling a stream)
_FIRST_WORD = re.compile(r"[ \t]*+(\S*+)")
#: the longest quoted value read (a longer one is not a command line)
_MAX_VALUE = 65536


@register_family
class KeywordCommandFamily(CallFamily):
    name = "keyword_command"
    #: below the families whose triggers can share a position with these (a name-line answer)
    priority = 20
    summary = 'NAME key="value" ... (a whole answer of command lines naming an offered tool and its parameters)'

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """``NAME `` for each offered tool, where the answer begins (a function of the names alone:
        scanners are cached by them; a tool without declared parameters is refused when read)."""
        if ctx is None:
            return ()
        names = (name for name in ctx.by_name if name and not any(c.isspace() for c in name))
        return tuple(Trigger(f"{name} ", start=Start.ANSWER, from_tool_names=True) for name in names)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if not begins_call_lines(text, pos):
            return None  # the answer's start, or the lines that end it after a sentence (a stream watches everywhere)
        calls: list[ToolCall] = []
        at = pos
        while True:
            read = command_line(text, at, ctx)
            if read is None:
                return None
            name, arguments, end = read
            calls.append(make_call(self.name, name, arguments, text[at:end], at))
            at = skip_space(text, end)
            if at >= len(text):
                return Extraction(len(text), calls)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Final once the first whole word after the name is no ``key=`` or ``--key``: "search results show ..." streams on."""
        word = _FIRST_WORD.match(text, pos + len(trigger))
        assert word is not None
        if word.end() == len(text):
            return False  # the word may still be growing
        return _KEY.match(word.group(1)) is None and not word.group(1).startswith("--")  # (a flag's value follows a blank)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"{call.name} " + " ".join(f"{key}={_quoted(value)}" for key, value in call.arguments.items()) for call in calls)


def _quoted(value: Any) -> str:
    return '"' + render_value(value).replace('"', '\\"') + '"'


def command_line(text: str, at: int, ctx: ParseContext) -> tuple[str, dict[str, Any], int] | None:
    """One ``NAME key=value ...`` line from ``at``: the tool's name, its arguments and the line's end."""
    space = text.find(" ", at)
    if space < 0:
        return None
    tool = ctx.tool(text[at:space])
    if tool is None or not tool.properties:
        return None
    arguments: dict[str, Any] = {}
    cursor = _BLANKS.match(text, space).end()  # type: ignore[union-attr]
    while cursor < len(text) and text[cursor] not in "\r\n":
        key = _KEY.match(text, cursor)
        name = (key.group(1) or key.group(2)) if key is not None else None
        if name is None or name not in tool.properties or name in arguments:
            return None
        read = _value(text, key.end(), tool, name)  # type: ignore[union-attr]
        if read is None:
            return None
        arguments[name], cursor = read
        if cursor < len(text) and text[cursor] not in " \t\r\n":
            return None  # a word glued to the value: not this syntax
        cursor = _BLANKS.match(text, cursor).end()  # type: ignore[union-attr]
    if not arguments:
        return None
    return tool.name, arguments, cursor


#: a call tag's body written as a command line: the tool's name, then a blank (or the body's end)
_ATTRIBUTE_NAME = re.compile(r"([A-Za-z_][\w.\-]{0,127}+)(?:[ \t]|(?=\s*+(?:/?>|</|\Z)))")
#: the end of such a body (``shell command="date" />``), and a closing tag after it (``</tool_call>``,
#: or another model's ``</invoke>``), at most on the next line
_TAG_END = re.compile(r"[ \t]*/?>[ \t]*(?:\s*</[A-Za-z_][\w:\-]{0,40}>)?\s*\Z|\s*</[A-Za-z_][\w:\-]{0,40}>\s*\Z")
#: how far past the line such a closing tag may stand
_CLOSER_REACH = 64
#: a ``tool`` or ``name`` attribute, which the body drops where it repeats the tool's name
_NAME_ATTRIBUTE = re.compile(r"""[ \t]+(?:tool|name)=(["'])([^"'\n]*)\1(?=[ \t]|\Z)""")


def attribute_call(text: str, start: int, limit: int, ctx: ParseContext) -> tuple[str, dict[str, Any]] | None:
    """The call a call tag's body from ``start`` to ``limit`` writes as a command line, its
    arguments as attributes: ``shell command="date" />`` inside ``<tool_call>`` (seen in an
    OpenClaw report and zeroclaw's tests).

    The name must be an offered tool's and every attribute one of its parameters (none at all is a call
    without arguments: ``<tool_call>browser_snapshot`` before the next call tag), except a
    ``tool`` or ``name`` attribute repeating the name (``exec tool="exec" command="ls"``). The
    body is one line with no ``<`` in it; only a tag end and a closing tag may follow it (so
    a flood of unclosed tags costs each one a look up to the next ``<``).
    """
    named = _ATTRIBUTE_NAME.match(text, start, limit)
    if named is None or ctx.tool(named.group(1)) is None:
        return None
    closing = text.find("<", start, limit)  # a closing tag, or the next tag: the body ends before it
    if limit - (limit if closing < 0 else closing) > _CLOSER_REACH:
        return None
    body = text[start:limit]
    end = _TAG_END.search(body)
    line = body[: end.start() if end is not None else len(body)].strip()
    if "\n" in line:
        return None
    name = named.group(1)
    if line == name:
        return ctx.tool(name).name, {}  # type: ignore[union-attr]  # the name alone: a call without arguments
    line = _NAME_ATTRIBUTE.sub(lambda found: "" if found.group(2) == name else found.group(), line)
    read = command_line(line, 0, ctx)
    if read is None or read[2] != len(line):
        return None
    return read[0], read[1]


def _value(text: str, at: int, tool: Tool, key: str) -> tuple[Any, int] | None:
    """The value at ``at`` (quoted or one bare word), typed by the property's schema, and its end."""
    schema = property_schema(tool, key)
    if at < len(text) and text[at] in "\"'":
        quoted = _quoted_value(text, at)
        if quoted is None:
            return None
        raw, end = quoted
        types = schema_types(schema)
        return (raw if not types or "string" in types else typed_value(raw, schema)), end
    bare = _BARE.match(text, at)
    if bare is None:
        return None
    return typed_value(bare.group(), schema, untyped="json"), bare.end()


def _quoted_value(text: str, at: int) -> tuple[str, int] | None:
    """A quoted value's text and its end: the closing quote is the one a blank or the line's end follows."""
    quote = text[at]
    out: list[str] = []
    i = at + 1
    limit = min(len(text), at + _MAX_VALUE)
    while i < limit:
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] == quote:
            out.append(quote)
            i += 2
            continue
        if ch == quote and (i + 1 == len(text) or text[i + 1] in " \t\r\n"):
            return "".join(out), i + 1
        if ch == "\n" and quote == "'":
            return None  # single quotes stay on one line: an apostrophe in prose, not a value
        out.append(ch)
        i += 1
    return None
