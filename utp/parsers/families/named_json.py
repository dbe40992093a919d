"""An offered tool's name, then its arguments as a JSON object: ``list_directory {"path": "/home"}``.

With no call syntax to follow, models write the obvious one: the tool's name
and its arguments object on one line. Clients that print tool requests as
text put the same line between bracketed markers (``[TOOL_REQUEST]
list_directory {"path": "/home"} [TOOL_REQUEST_END]``). Such a line is read
only where it cannot be prose:

* the name is an offered tool's, written exactly, and starts its line: after
  blanks, a list bullet, a marker (on that line or the line before: a bracketed
  one, or an at-word a client's prompt asks for, ``@tool``; a ```` ```tool ````
  fence's opening line marks the lines in it),
  a short label ending in ``:`` ("Action:", "TOOL_CALL:"), a verb saying it calls (``invoke``,
  ``call``) and Markdown bold;
  or it follows a sentence on its line ("It is correct. str_replace{…}"),
  unmarked; an optional ``:`` and blanks stand between it and the object;
* the object is valid JSON as written, every key one of that tool's declared
  parameters (an empty object only for a tool that declares none);
* nothing but blanks and a bracketed marker follows the object on its line;
* without a marker, the call lines end the answer: after them only blanks or
  more such lines ("That is the call I would make." after it makes it an
  example). A stream therefore holds an unmarked line until the output ends.

Models that leak their reasoning (gpt-oss: "Need to do web_search. Use
web_search function.") also write the name in a sentence and the arguments
object alone after it. That object is read when it ends the answer, stands on
its own line, and its keys are declared parameters of exactly one offered tool
the line before it names.

Glued to the name (``set_timer{minutes: 10}``, ``run_command{'command': 'ls',}``), the
object may be written as Python or JavaScript writes one when nothing follows it: the
repair says so.

"Use search {"q": "x"} to look it up", an object with keys the tool does not
take, an object other text follows (on its line, or after it when nothing
marks it), or an object after prose naming no tool stay prose.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family
from utp.parsers.familykit import BRACKET_MARKER, declares_all, make_call, read_json_at
from utp.parsers.jsonrepair import CLOSED_TRUNCATED, scan_json_value, strict_json_at
from utp.parsers.names import tool_named_before
from utp.parsers.reasoning import opens_line_after_sentence
from utp.parsers.textscan import search_forward, skip_space
from utp.types import Diagnostic, Tool, ToolCall

#: Markdown bold around the name (``**get_weather**``; in backticks it is code being shown)
_EMPHASIS = r"(?:\*\*)?"
#: between the name and the object: emphasis closed, blanks and an optional colon
_GAP = re.compile(_EMPHASIS + r"[ \t]*+:?[ \t]*+")
#: the object's opening: a whole quoted first key, or the empty object's close
_OPENING = r"\s*+(?:\"(?:[^\"\\\n]|\\.){0,128}+\"\s*+:|\})"
#: glued to the name (``set_timer{``), the object may open as a Python dict or a JavaScript object:
#: a single-quoted or a bare first key
_OPENING_GLUED = r"\s*+(?:\"(?:[^\"\\\n]|\\.){0,128}+\"\s*+:|'[^'\\\n]{1,128}+'\s*+:|[A-Za-z_]\w{0,127}+\s*+:|\})"
_GLUED_OPEN = re.compile(r"""\{\s*+(?:'([^'\\\n]{1,128}+)'|([A-Za-z_]\w{0,127}+)|"([^"\\\n]{1,128}+)")\s*+:""")
#: the repair a glued call read leniently records
GLUED_LENIENT = "arguments glued to the tool's name, written as a Python or JavaScript object"

#: a labelled value's opening (``web_search: "…"`` ending its line, ``create_plan: [{…``): strict, as it
#: is looked for after every ``NAME:`` in a text
_SOLE_VALUE_HEAD = r"\"(?:[^\"\\\n]|\\.){0,4096}+\"[ \t]*+(?:\r?\n|\Z)|\[\s*+[\"{\[\d\-]"
#: each name's trigger is the name and the character after it, so a scan passes over the name used
#: in prose (``f(``, ``f"``) on that character alone; the rest of the gap and the opening are its head
_AFTER_NAME = {
    " ": r"[ \t]*+:?[ \t]*+\{" + _OPENING,
    "\t": r"[ \t]*+:?[ \t]*+\{" + _OPENING,
    ":": r"[ \t]*+(?:\{" + _OPENING + r"|" + _SOLE_VALUE_HEAD + r")",
    "{": _OPENING_GLUED,
    "*": r"\*[ \t]*+:?[ \t]*+\{" + _OPENING,
}
#: what marks a line as a call: a bracketed marker (``[TOOL_REQUEST]``) or an at-word a client's prompt
#: asks for (``@tool fs.read {"path": "a"}``)
AT_MARKS = ("@tool", "@call", "@function")
_CALL_MARK = r"(?:" + BRACKET_MARKER + r"|(?:" + "|".join(AT_MARKS) + r")(?![\w\-]))"
#: a fence opened for calls (``` ```tool ```, ``` ```tool_call ```): its lines are marked as the line after a marker is
_CALL_FENCE = r"```(?:tool|tool_call|function_call)[ \t]*+"
#: a list item's bullet or number, and a short label ending in a colon ("Action:", "TOOL_CALL:")
_BULLET = r"(?:[-*\u2022]|\d{1,3}[.)])[ \t]++"
_LABEL = r"[A-Za-z][A-Za-z _]{0,23}+:[ \t]*+"
#: a verb saying the line makes a call (``invoke write_file {…}``: gezel's Qwen captures)
_VERB = r"(?:[Ii]nvoke|INVOKE|[Cc]all|CALL)[ \t]++"
#: what may stand between a call line's marker and the name: a label, a verb, Markdown bold
_BEFORE_NAME = r"(?:" + _LABEL + r")?(?:" + _VERB + r")?" + _EMPHASIS
#: what may stand before the name on its line, looked for in a short window before it (group 1: a marker)
_LINE_PREFIX = re.compile(r"[ \t]*+(?:" + _BULLET + r")?(" + _CALL_MARK + r"[ \t]*+)?" + _BEFORE_NAME)
#: a line holding only a bracketed marker (the line before a call line it marks)
_MARKER_LINE = re.compile(r"[ \t]*+(?:" + _CALL_MARK + r"|" + _CALL_FENCE + r")[ \t]*+\r?")
_LOOKBACK = 96
#: a one-line call of this shape, names unchecked (the trailing run of call lines)
_CALL_LINE = re.compile(
    r"[ \t]*+(?:" + _BULLET + r")?(?:" + _CALL_MARK + r"[ \t]*+)?" + _BEFORE_NAME
    + r"[A-Za-z_][\w.\-]*+" + _GAP.pattern + r"\{.*\}[ \t]*+(?:" + BRACKET_MARKER + r")?[ \t]*+\r?"
)
#: what may follow the object on its line
_LINE_TAIL = re.compile(r"[ \t]*+(" + BRACKET_MARKER + r")?[ \t]*+")
#: the next call glued to this one's closing brace (``f{…}g{…}``: Mistral Small 3.2's
#: ``[TOOL_CALLS]f[ARGS]{…}[TOOL_CALLS]g[ARGS]{…}`` with its special tokens stripped), and such a name
#: still being written (a stream waits for it)
_GLUED_NEXT = re.compile(r"([A-Za-z_][\w.\-]{0,127}+)\{")
_GLUED_NEXT_SO_FAR = re.compile(r"[A-Za-z_][\w.\-]{0,127}+")
#: an object's opening as a call line writes it: a quoted key or nothing (a cheap test before a read)
_OBJECT_OPEN = re.compile(r'\{\s*+(?:("(?:[^"\\\n]|\\.){0,128}+")|\})')
#: a closing marker cut off by the text's end (a stream waits for the rest)
_MARKER_SO_FAR = re.compile(r"\[[A-Z0-9_]{0,41}+")
#: the longest object read
_MAX_OBJECT = 65536
#: an arguments object opening a line, its first key quoted (the second form's trigger; the head
#: looks back for the line break, so a scan stops only where a brace stops it already)
ARGUMENTS_LINE = '{"'
_ARGUMENTS_HEAD = r'(?<=\n\{")(?:[^"\\\n]|\\.){0,128}+"[ \t]*+:(?!(?s:.*?)\n\{")'


@register_family
class NamedJsonFamily(CallFamily):
    name = "named_json"
    #: below the families that read a name followed by their own syntax (GLM, Kimi, keyword_command)
    priority = 15
    aliases = ("name_json",)
    summary = 'NAME {"k": "v"} (an offered tool\'s name, then its arguments object, on a line of its own)'

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Each offered tool's name, where a word starts, with the character after it (scanners are
        cached by the names), and an object opening a line."""
        if ctx is None or not ctx.has_tools:
            return ()
        names = [name for name in ctx.by_name if name and not any(c.isspace() or c in "{}*:" for c in name)]
        named = (Trigger(name + after, head, Start.WORD, from_tool_names=True) for name in names for after, head in _AFTER_NAME.items())
        # an at-word marking the line (``@tool fs.read {…}``): the call's span takes the mark in
        at_marks = (Trigger(f"{mark} {name}", r"[ \t:*{]", from_tool_names=True) for mark in AT_MARKS for name in names)
        return (Trigger(ARGUMENTS_LINE, _ARGUMENTS_HEAD, offered_only=True), *named, *at_marks)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == ARGUMENTS_LINE:
            return _after_naming_prose(self.name, text, pos, ctx)
        if trigger.startswith(AT_MARKS):  # ``@tool NAME`` then one of _AFTER_NAME's characters (the head says so)
            name_at = pos + trigger.index(" ") + 1
            found = self.extract(text, name_at, text[name_at : pos + len(trigger) + 1], ctx)
            if found is not None and found.calls:
                found.start = pos
            return found
        name = trigger[:-1]  # without the character after it
        tool = ctx.tool(name)
        if tool is None:
            return None
        start = _GAP.match(text, pos + len(name)).end()  # type: ignore[union-attr]
        if trigger[-1] == ":" and text.startswith(('"', "["), start):
            return self._sole_value(text, pos, start, tool, ctx)
        opening = _OBJECT_OPEN.match(text, start)
        if opening is None and trigger[-1] == "{":
            return _glued_lenient(self.name, text, pos, start, tool)
        if opening is None or not _first_key_declared(opening.group(1), tool.properties):
            return None
        read = _line_value(text, pos, start, name, ctx)
        if read is None and trigger[-1] == "{":
            return _glued_lenient(self.name, text, pos, start, tool)  # JSON that needs a repair, glued to the name
        if read is None or type(read[0]) is not dict or not declares_all(read[0], tool):
            return None
        call = make_call(self.name, tool.name, read[0], text[pos : read[1]], pos)
        return Extraction(read[1], [call])

    def _sole_value(self, text: str, pos: int, start: int, tool: Tool, ctx: ParseContext) -> Extraction | None:
        """``web_search: "old kingdom dates"``, ``create_plan: [{…}, {…}]``: an offered tool of one
        parameter labelled with its name, that parameter's value written alone (a string or a list,
        as that parameter's type says), on a call line as an object would be (sessions-android's test)."""
        if len(tool.properties) != 1:
            return None
        key = next(iter(tool.properties))
        read = _line_value(text, pos, start, tool.name, ctx)
        if read is None or not _fits(read[0], tool.properties[key]):
            return None
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, tool.name, {key: read[0]}, text[pos : read[1]], pos, [SOLE_VALUE], diagnostics)
        return Extraction(read[1], [call], diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Final once the shape fails, or once a marked line has ended; an unmarked line, and an
        object after naming prose, are decided by what follows them (so by the output's end)."""
        if trigger.startswith(AT_MARKS):
            after = pos + len(trigger)
            if after >= len(text):
                return False  # the character after the name is still arriving
            name_at = pos + trigger.index(" ") + 1
            return text[after] not in _AFTER_NAME or self.settled(text, name_at, text[name_at : after + 1])
        if trigger == ARGUMENTS_LINE:
            if pos != _last_object_line(text):
                return True  # a later line opens an object: this one cannot end the answer
            end = scan_json_value(text, pos)
            if end < 0:
                return len(text) - pos > _MAX_OBJECT
            return skip_space(text, end) < len(text)
        name = trigger[:-1]
        marked = _line_start(text, pos)
        if marked is None:
            return True
        start = _GAP.match(text, pos + len(name)).end()  # type: ignore[union-attr]
        if start >= len(text) or text[start:] == "*":  # the gap, or the bold's closing, still arriving
            return False
        if text[start] != "{" and not (trigger[-1] == ":" and text[start] in '"['):
            return True
        following = search_forward(text, _next_call_line(name), start)
        if following is not None:  # the object cannot run past the next call line (linear, as in extract)
            inside = scan_json_value(text[start : following.start()], 0)
            if inside < 0:
                return True
            end = start + inside
        else:
            end = scan_json_value(text, start)
            if end < 0:
                return len(text) - start > _MAX_OBJECT
        tail = _LINE_TAIL.match(text, end)
        assert tail is not None
        if tail.end() >= len(text) or _MARKER_SO_FAR.fullmatch(text, tail.end()) or _GLUED_NEXT_SO_FAR.fullmatch(text, end):
            return False
        if _GLUED_NEXT.match(text, end):
            return True  # decided by the glued name: an offered tool's or not
        if text[tail.end()] not in "\r\n" or tail.group(1) is not None:
            return True
        return marked

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"{call.name} {json.dumps(call.arguments, ensure_ascii=False)}" for call in calls)


def _line_value(text: str, pos: int, start: int, name: str, ctx: ParseContext) -> tuple[object, int] | None:
    """The JSON value at ``start`` on the call line whose name is at ``pos``, and where the line's call ends;
    None unless the line is placed as a call line is (see the module docstring)."""
    marked = _line_start(text, pos)
    if marked is None:
        return None
    # read no further than the next line that opens with this name: over a flood of such lines
    # the reads never overlap, so the cost stays linear
    following = search_forward(text, _next_call_line(name), start)
    read = strict_json_at(text, start, min(len(text), start + _MAX_OBJECT, following.start() if following else len(text)))
    if read is None:
        return None
    tail = _LINE_TAIL.match(text, read[1])
    assert tail is not None
    if tail.end() < len(text) and text[tail.end()] not in "\r\n":
        glued = _GLUED_NEXT.match(text, read[1])
        return (read[0], read[1]) if glued is not None and ctx.tool(glued.group(1)) is not None else None
    if not marked and tail.group(1) is None and trailing_name_lines(text) > _next_line(text, tail.end()):
        return None  # unmarked, and prose follows: an example, not the answer's call
    return read[0], tail.end()


#: the repair a labelled value records
SOLE_VALUE = "the tool's one parameter written as a value after its name"


def _fits(value: object, schema: object) -> bool:
    """Is ``value`` a string or list the parameter's schema takes (a string where it says string, a list
    where it says array; an untyped parameter takes either)?"""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if type(value) is str:
        return kind in (None, "string")
    return type(value) is list and kind in (None, "array")


def _glued_lenient(family: str, text: str, pos: int, start: int, tool: Tool) -> Extraction | None:
    """``NAME{'key': 'v',}`` or ``NAME{key: "v"}`` ending the answer: an offered tool's name glued to
    its arguments written as Python or JavaScript writes an object (gemma-3-4b answers so; a Gemma 4
    call whose tokens and ``call:`` the server dropped reads so), or as JSON that needs a repair
    (``Bash{"command":"ls "/c/x"",…}``: quotes left unescaped), its line placed as a call line is.
    Only at the answer's end: elsewhere the same text is code."""
    opening = _GLUED_OPEN.match(text, start)
    if opening is None or (opening.group(1) or opening.group(2) or opening.group(3)) not in tool.properties or _line_start(text, pos) is None:
        return None
    read = read_json_at(text, start, min(len(text), start + _MAX_OBJECT))
    if read is None or type(read[0]) is not dict or skip_space(text, read[1]) < len(text) or not declares_all(read[0], tool):
        return None
    if CLOSED_TRUNCATED in read[2]:
        return None  # the output stopped inside the object: with no marker, a cut call is not read
    diagnostics: list[Diagnostic] = []
    call = make_call(family, tool.name, read[0], text[pos : read[1]], pos, [*read[2], GLUED_LENIENT], diagnostics)
    return Extraction(len(text), [call], diagnostics)


def _after_naming_prose(family: str, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
    """The arguments object at ``pos`` that ends the answer, for the one tool the line before names
    (in a fence, the fenced family asks the same of the line before the fence)."""
    if pos == 0 or text[pos - 1] != "\n" or pos != _last_object_line(text):
        return None  # the object opens the last line that opens one: only there can it end the answer
    read = strict_json_at(text, pos, len(text))
    if read is None or type(read[0]) is not dict or not read[0] or skip_space(text, read[1]) < len(text):
        return None
    arguments, end = read
    name = tool_named_before(text, pos - 1, set(arguments), ctx)
    if name is None:
        return None
    return Extraction(len(text), [make_call(family, name, arguments, text[pos:end], pos)])


def _first_key_declared(quoted_key: str | None, properties: dict) -> bool:
    """Is the object's first key one the tool declares (None: an empty object, only for a tool without
    parameters)? A cheap test before the object is read."""
    if quoted_key is None:
        return not properties
    if "\\" not in quoted_key:
        return quoted_key[1:-1] in properties
    try:
        return json.loads(quoted_key) in properties
    except ValueError:
        return False


def _line_start(text: str, pos: int) -> bool | None:
    """Does the name at ``pos`` start its line (None: no), and is the line marked (a bracketed marker
    before the name on its line, or alone on the line before)?"""
    if pos > 0 and text[pos - 1] == "}":
        return True  # glued to the object before it: the next call of a run (``f{…}g{…}``)
    low = max(0, pos - _LOOKBACK)
    newline = text.rfind("\n", low, pos)
    if newline < 0 and low > 0:
        return None  # a longer line: the name is inside it
    prefix = _LINE_PREFIX.fullmatch(text, newline + 1, pos)
    if prefix is None:  # after a sentence on its line ("It is correct. str_replace{…}"): unmarked
        return False if opens_line_after_sentence(text, pos) else None
    if prefix.group(1) is not None:
        return True
    if newline <= 0 or prefix.end() > prefix.start() and text[newline + 1 : pos].strip():
        return False
    before = text.rfind("\n", max(0, newline - _LOOKBACK), newline) + 1
    return _MARKER_LINE.fullmatch(text, before, newline) is not None


@functools.lru_cache(maxsize=256)
def _next_call_line(name: str) -> re.Pattern[str]:
    """A later line opening with ``name`` as a call line does (where a read from an earlier one stops)."""
    return re.compile(r"\n[ \t]*+(?:" + _BULLET + r")?(?:" + _CALL_MARK + r"[ \t]*+)?" + _BEFORE_NAME + re.escape(name) + r"[ \t{:*]")


def _last_object_line(text: str) -> int:
    """Where the text's last line opening with ``{"`` starts (-1: none), remembered for the last text."""
    cached = getattr(_trailing, "object_line", None)
    if cached is not None and cached[0] is text:
        return cached[1]
    found = text.rfind('\n{"')
    at = found + 1 if found >= 0 else -1
    _trailing.object_line = (text, at)
    return at


def _next_line(text: str, at: int) -> int:
    """The start of the line after the one ``at`` is on (the text's end on the last line)."""
    newline = text.find("\n", at)
    return len(text) if newline < 0 else newline + 1


_trailing = threading.local()


def trailing_name_lines(text: str) -> int:
    """Where the text's closing run of blank and one-line call lines begins (``len(text)`` when its
    last line is something else); remembered for the last text asked about, so every call line of
    one text costs one backward walk in all."""
    cached = getattr(_trailing, "entry", None)
    if cached is not None and cached[0] is text:
        return cached[1]
    start = end = len(text)
    while end >= 0:
        line_start = text.rfind("\n", 0, end) + 1
        line = text[line_start:end]
        if line.strip() and _CALL_LINE.fullmatch(line) is None:
            break
        start, end = line_start, line_start - 1
    _trailing.entry = (text, start)
    return start
