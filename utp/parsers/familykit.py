"""Small constructors every call family needs, so they all report the same way.

A call carries its family name and repairs; a repair is also a ``REPAIRED``
diagnostic; markup that looked like a call but could not be read becomes an
Extraction with no calls and an ``UNPARSEABLE`` (or ``TRUNCATED``) diagnostic
that consumes the span, so broken markup is reported instead of shown as prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from utp.parsers.base import Extraction, ParseContext
from utp.parsers.jsonrepair import CLOSED_TRUNCATED, decode_json_at
from utp.parsers.textscan import ends_inside, find_forward, nth_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, Tool, ToolCall

_DECODER = json.JSONDecoder()

#: a bracketed marker a client or planner writes on a call's line, before or after it
#: (``[ACTION] {...}``, ``[TOOL_REQUEST] f {...} [TOOL_REQUEST_END]``): markup, not prose
BRACKET_MARKER = r"\[[A-Z][A-Z0-9_]{0,40}+\]"

#: raw text kept on diagnostics is clipped; a 1 MB broken block helps nobody
_RAW_LIMIT = 2000

#: another attribute of a call tag (``id="call_1"``, ``type="function"``), before or after its name:
#: possessive, and never ``name`` itself (the lookahead), so the name is found where it stands
OTHER_ATTRIBUTE = r"""(?!name\s*+=)[A-Za-z_][\w\-]{0,32}+\s*+=\s*+(?:"[^"\n<>]{0,256}+"|'[^'\n<>]{0,256}+')"""
#: ``name="N">`` (or single quotes) ending an XML-style call tag (Claude's invoke, MiniCPM-4's
#: function, Hermes' attribute-named tag), other attributes allowed around it
#: (``<tool_call id="call_1" name="f">``); groups ``q`` and ``name``
NAME_ATTRIBUTE = (
    rf"""(?:{OTHER_ATTRIBUTE}\s++){{0,4}}+name\s*=\s*(?P<q>["'])(?P<name>[^"'\n<>]{{1,256}})(?P=q)(?:\s++{OTHER_ATTRIBUTE}){{0,4}}+\s*>"""
)
#: the same with the blanks before it, as a scan lookahead: no groups (heads are compiled into
#: one pattern), the quote pair spelled out instead of a back-reference, and possessive runs
#: (each stops at a character the next part cannot take, so the match is the same)
NAME_ATTRIBUTE_HEAD = (
    rf"""\s*+(?:{OTHER_ATTRIBUTE}\s++){{0,4}}+name\s*+=\s*+(?:"[^"'\n<>]{{1,256}}+"|'[^"'\n<>]{{1,256}}+')"""
    rf"""(?:\s++{OTHER_ATTRIBUTE}){{0,4}}+\s*+>"""
)


#: how a repair says the output stopped inside a call after a whole value (see ``ended_before``)
OUTPUT_ENDED = "output ended before "


def ended_before(closer: str) -> str:
    """The repair for a call the output stopped in right after a whole value, before ``closer``.

    Such a call is read as written (a model that stops there usually meant
    to; the stop token was its closer), unless the server says the output hit
    its length limit: see :func:`cut_by_output_end`.
    """
    return OUTPUT_ENDED + closer


def cut_by_output_end(call: ToolCall) -> bool:
    """Did the output stop inside this call (its closers supplied by a repair)?"""
    return any(repair == CLOSED_TRUNCATED or repair.startswith(OUTPUT_ENDED) for repair in call.repairs)


def clip(raw: str) -> str:
    return raw if len(raw) <= _RAW_LIMIT else raw[:_RAW_LIMIT] + f"... [{len(raw) - _RAW_LIMIT} more chars]"


def render_value(value: Any) -> str:
    """A value as markup with raw-text values carries it: strings as they are, everything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def declares_all(arguments: dict[str, Any], tool: Tool) -> bool:
    """Is every key one of ``tool``'s declared parameters (no keys only for a tool that declares none)?

    The evidence a call without markup of its own rests on: ``NAME {json}``, arguments under a key
    the model chose, a JSON body in a tool element.
    """
    return set(arguments) <= tool.properties.keys() and (bool(arguments) or not tool.properties)


def make_call(
    family: str,
    name: str,
    arguments: dict[str, Any],
    raw: str,
    offset: int,
    repairs: list[str] | None = None,
    diagnostics: list[Diagnostic] | None = None,
) -> ToolCall:
    """A ToolCall from ``family``; repairs are mirrored into ``diagnostics`` when given."""
    call = ToolCall(name=name, arguments=arguments, raw=raw, format=family, repairs=list(repairs or []))
    if call.repairs and diagnostics is not None:
        diagnostics.append(repaired(family, name, call.repairs, raw, offset))
    return call


def repaired(family: str, name: str, repairs: list[str], raw: str, offset: int | None = None) -> Diagnostic:
    """The ``REPAIRED`` diagnostic saying how ``family``'s call of ``name`` was read."""
    return Diagnostic(DiagnosticKind.REPAIRED, f"{family} call {name!r} read after repair: {'; '.join(repairs)}", clip(raw), family, offset)


def unreadable(
    family: str,
    text: str,
    start: int,
    end: int,
    reason: str,
    *,
    kind: DiagnosticKind = DiagnosticKind.UNPARSEABLE,
    calls: list[ToolCall] | None = None,
    diagnostics: list[Diagnostic] | None = None,
) -> Extraction:
    """Consume ``text[start:end]`` and report why it could not be read as calls."""
    found = list(diagnostics or [])
    found.append(Diagnostic(kind, f"{family}: {reason}", clip(text[start:end]), family, start))
    return Extraction(end=end, calls=list(calls or []), diagnostics=found)


def identifier_safe(name: str) -> str:
    """How Harmony-style renderers turn a tool name into an identifier (space, '-', '.' → '_')."""
    return name.replace(" ", "_").replace("-", "_").replace(".", "_")


#: valid JSON may carry the caller's closing token inside strings this many times
MAX_CLOSERS_INSIDE = 8


def closer_bound(text: str, closer: str, pos: int) -> int:
    """Where valid JSON at ``pos`` must end: before the ``MAX_CLOSERS_INSIDE``-th next ``closer``.

    A value may mention its own closing token in a string, so the first
    closer does not end it; but decoding from every opener of a text full of
    openers to the end would be quadratic. A bound a fixed number of closers
    ahead keeps the total linear; with fewer closers left, the whole text.
    """
    at = nth_forward(text, closer, pos, MAX_CLOSERS_INSIDE)
    return len(text) if at < 0 else at


def closers_bound(text: str, closers: tuple[str, ...], pos: int) -> int:
    """:func:`closer_bound` for a body several tokens can end: the nearest of their bounds.

    Only the tokens that really end the body count, so a value may mention
    other markup (another family's special tokens) in its strings as often as
    it likes, and each ending token up to ``MAX_CLOSERS_INSIDE - 1`` times.
    """
    return min(closer_bound(text, closer, pos) for closer in closers)


#: a double quote after an even number of backslashes (none included): it opens or closes a string
_UNESCAPED_QUOTE = re.compile(r'(?<!\\)(?:\\\\)*+"')


def string_open_at(text: str, start: int, at: int) -> bool:
    """Does JSON read from ``start`` stand inside a double-quoted string at ``at``?

    Counted, not parsed (an odd number of unescaped quotes): the cheap sign
    that a tag found at ``at`` is an argument's text rather than markup. A quote
    after an escaped backslash (``"\\\\"``) is unescaped: it closes its string.
    """
    if "\\" not in text[start:at]:
        return text.count('"', start, at) % 2 == 1
    return len(_UNESCAPED_QUOTE.findall(text, start, at)) % 2 == 1


def still_quoting(text: str, start: int, tag_at: int, bound: int) -> bool:
    """Does the text end inside a JSON string (begun at ``start``) that quotes the tag at ``tag_at``?

    Then the call is still being written: a stream waits instead of taking
    the tag for markup, and a response cut off there is truncated.
    """
    return tag_at >= 0 and string_open_at(text, start, tag_at) and json_end_within(text, start, bound) is None


def closer_past_strings(text: str, body: int, close: int, closer: str) -> int:
    """Where ``closer`` really ends the JSON that starts at or after ``body``: ``close``, unless
    that occurrence sits inside a string of valid JSON (an argument quoting the tag).

    An odd number of unescaped quotes before ``close`` is the cheap sign; only
    then is the JSON decoded, strictly and within :func:`closer_bound`. -1
    when the text ends inside that string (a stream has not seen the real
    closer yet; a response cut off there is truncated).
    """
    if close < 0 or not string_open_at(text, body, close):
        return close
    start = text.find("{", body, close)
    if start < 0:
        return close
    bound = closer_bound(text, closer, start)
    stop = json_end_within(text, start, bound)
    if stop is None:
        return -1  # valid so far and the text ends inside the string: the real closer is still to come
    if stop <= close:
        return close
    return find_forward(text, closer, stop)


def json_end_within(text: str, start: int, bound: int) -> int | None:
    """Where valid JSON at ``start`` ends within ``bound`` (-1: it is not valid JSON);
    None when it is valid as far as the text goes and the text ends first.

    None is the answer a stream needs: the value is still being written, so a
    tag seen inside it (in a string) must not end the call yet.
    """
    try:
        _, stop = _DECODER.raw_decode(text[start:bound])
    except json.JSONDecodeError as exc:
        ran_out = exc.pos >= bound - start - 1 or exc.msg.startswith("Unterminated string")
        return None if ran_out and bound == len(text) else -1
    except (ValueError, RecursionError):
        return -1
    return start + stop


def json_object_before_reopen(text: str, pos: int, opener: str) -> tuple[dict[str, Any], int, list[str]] | None:
    """The JSON object at ``pos`` (as :func:`read_json_at`), read no further than ``opener`` written again.

    For calls whose end nothing marks (special tokens stripped by a server):
    over a flood of openers the reads never overlap, so the cost stays linear.
    """
    again = find_forward(text, opener, pos)
    got = read_json_at(text, pos, again if again >= 0 else None)
    return got if got is not None and type(got[0]) is dict else None


def read_json_at(text: str, pos: int, end: int | None = None, bound: int | None = None) -> tuple[Any, int, list[str]] | None:
    """The JSON value starting exactly at ``pos`` (not past ``end``): ``(value, end, repairs)`` or None.

    Valid JSON goes through the C decoder within ``bound`` (default: ``end``;
    neither given: the whole text). A bound past ``end`` lets a value carry
    the caller's closing tag inside a string (an argument that *talks about*
    the tag) and still be read whole. The decode runs on the slice up to the
    bound, not on the text: a failing decode builds an error that counts the
    lines before its position, which over many openers in one text would be
    quadratic. Otherwise the lenient reader of :mod:`utp.parsers.jsonrepair`
    reads the value's extent within ``end``, so one broken quote costs a
    named repair, not the call.
    """
    limit = len(text) if bound is None and end is None else min(len(text), max(end or 0, bound or 0))
    try:
        if limit < len(text):
            value, stop = _DECODER.raw_decode(text[pos:limit])
            return value, pos + stop, []
        value, stop = _DECODER.raw_decode(text, pos)
        return value, stop, []
    except (ValueError, RecursionError):
        pass
    try:
        return decode_json_at(text, pos, end)
    except (ValueError, RecursionError):
        return None


def json_arguments_before(
    family: str, text: str, pos: int, body: int, closer: str, name: str
) -> tuple[dict[str, Any], int, list[str]] | Extraction:
    """The JSON object at ``body`` that a ``closer`` tag should end: ``(arguments, its end, repairs)``.

    Otherwise the report that consumes the call: TRUNCATED when the closer
    never comes (the output was cut off; a closer inside a string the text
    ends in is the argument's text), UNPARSEABLE when it does but no object
    stands before it. The caller checks what follows the object.
    """
    close = find_forward(text, closer, body)
    bound = closer_bound(text, closer, body)
    read = read_json_at(text, body, None if close == -1 else close, bound)
    if read is not None and read[2] and close != -1 and string_open_at(text, body, close):
        # the closer found stands in a string (an argument quoting the markup) and the text ends
        # before the value does: read on past it, within the few closers a value may quote
        read = read_json_at(text, body, bound, bound)
    if read is None or not isinstance(read[0], dict):
        if close == -1 or still_quoting(text, body, close, bound):  # (the closer found is quoted text)
            return unreadable(family, text, pos, len(text), f"arguments of {name!r} are not a complete JSON object", kind=DiagnosticKind.TRUNCATED)
        return unreadable(family, text, pos, close + len(closer), f"arguments of {name!r} are not a JSON object")
    return read


def read_call_group(
    family: str,
    text: str,
    pos: int,
    group: tuple[str, str],
    call_open: str,
    read_call: Callable[[str, int], Extraction | None],
    cut_in_call: Callable[[str, int], bool] | None = None,
) -> Extraction | None:
    """A group wrapper at ``pos`` holding calls back to back, each read by ``read_call`` at its opener.

    None when no call opener follows the group's; a group the output ends in
    right after its opener is TRUNCATED. A call that is not final (cut off)
    ends the group there. ``cut_in_call`` says whether a call ``read_call``
    declined was only cut off before it could be read (its body starts at the
    given index): the group is then TRUNCATED, not prose. Text cut off inside
    the next opener or the group's closer belongs to the group.
    """
    group_open, group_close = group
    cursor = skip_space(text, pos + len(group_open))
    if cursor >= len(text):
        return unreadable(family, text, pos, len(text), f"output ended after {group_open}", kind=DiagnosticKind.TRUNCATED)
    if not text.startswith(call_open, cursor):
        return None
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    end = cursor
    while text.startswith(call_open, cursor):
        found = read_call(text, cursor)
        if found is None:
            if cut_in_call is not None and cut_in_call(text, cursor + len(call_open)):
                return unreadable(
                    family, text, cursor, len(text), f"output ended inside a call in {group_open}",
                    kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics,
                )
            break
        calls.extend(found.calls)
        diagnostics.extend(found.diagnostics)
        end = found.end
        if not found.final:
            return Extraction(end=end, calls=calls, diagnostics=diagnostics)
        cursor = skip_space(text, end)
    if not calls and not diagnostics:
        return None
    after = skip_space(text, end)
    if text.startswith(group_close, after):
        return Extraction(end=after + len(group_close), calls=calls, diagnostics=diagnostics, final=True)
    if after < len(text) and ends_inside(text, after, group_close, call_open):
        return Extraction(end=len(text), calls=calls, diagnostics=diagnostics)  # cut off in the next tag
    return Extraction(end=end, calls=calls, diagnostics=diagnostics, closer=group_close)


def sole_parameter(ctx: ParseContext, name: str) -> str | None:
    """The one parameter of the offered tool ``name`` (None when it is not offered or has another count).

    Formats that hand a tool raw text (a code interpreter's code written as the
    call's body) can only mean that parameter.
    """
    tool = ctx.tool(name)
    if tool is None or len(tool.properties) != 1:
        return None
    return next(iter(tool.properties))


#: a Markdown fence around a whole value: an optional language label, the body, the closing fence
_FENCED_VALUE = re.compile(r"\s*```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)\r?\n?[ \t]*```\s*", re.DOTALL)


def unfenced(raw: str) -> str | None:
    """The body of ``raw`` when all of it is one Markdown-fenced block (```` ```json {...}``` ````), else None.

    Models trained on chat data fence JSON even where a format's own tokens
    already delimit it (Kimi K2's argument token).
    """
    if "```" not in raw:
        return None
    fenced = _FENCED_VALUE.fullmatch(raw)
    return None if fenced is None or "```" in fenced.group(1) else fenced.group(1)
