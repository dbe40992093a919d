"""JSON calls inside a family's tags: ``TAG <json call or list of calls>... [CLOSER]``, read once for all.

Most JSON-bodied families (hermes-style tags, Mistral's ``[TOOL_CALLS]``,
Granite, Jamba, Command R, Llama's ``<|python_tag|>``...) write one or more
JSON values after a tag. :func:`extract_tagged_json` reads them: valid JSON
ends where it ends, repaired JSON is read no further than the tag written
again, a value that cannot be read is reported (and, for bodies written one
call per line, skipped). :func:`salvage_list` reads a call list that cannot be
read whole element by element, so one broken call does not cost its siblings.
Which JSON is a call is :mod:`utp.parsers.callshape`'s question.
"""

from __future__ import annotations

import json
import re
from typing import Any

from utp.parsers.base import Extraction
from utp.parsers.callshape import NAME_KEYS, CUT_REPAIRS, _short, calls_from_value, skip_ws, unparseable
from utp.parsers.jsonrepair import CLOSED_TRUNCATED, past_stray_closer
from utp.parsers.textscan import find_forward
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: ``resume_lines``: bad lines skipped (each reported) before the rest of the block is one report
MAX_SKIPPED_LINES = 16


#: the scan lookahead for a tag whose body :func:`extract_tagged_json` reads: it skips whitespace
#: (``\s`` in a str pattern is exactly ``str.isspace``), reports the end of the text as truncated,
#: and returns None unless ``{`` or ``[`` comes next, so nothing else after the tag is a call
TAGGED_JSON_HEAD = r"\s*+(?:[{\[]|\Z)"


def extract_tagged_json(
    family: str,
    text: str,
    pos: int,
    body_start: int,
    closers: tuple[str, ...] = (),
    require_arguments: bool = False,
    separators: str = ",;",
    resume_lines: bool = False,
) -> Extraction | None:
    """The common shape ``TAG <json call or list of calls>... [CLOSER]``.

    Reads one or more JSON values after ``body_start`` (separated by
    whitespace or ``separators``), then swallows one of ``closers`` if it
    follows. Not JSON at all → ``None`` (the tag stays content); JSON that is
    not call-shaped → ``None``; JSON that cannot be read → an UNPARSEABLE
    Extraction consuming up to the closer (or the end), so broken markup is
    reported instead of shown as prose.

    Valid JSON ends where it ends: a closer (or the tag itself) inside one of
    its strings is an argument's text. JSON that needs repairs is read no
    further than where the tag (the text from ``pos`` to ``body_start``) is
    written again; a value cut off there inside a string, or with no call in
    it, is unreadable rather than output cut short.

    ``resume_lines`` (bodies written one call per line, as MiniMax-M1's): after
    a value that cannot be read, reading goes on at the next line that starts
    outside every bracket the bad value opened (so a call nested in a broken
    call's arguments is never lifted out and run); the bad text is reported
    and values from then on are read one per line.
    """
    cursor = skip_ws(text, body_start)
    if cursor >= len(text):
        return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, f"{family}: output ended after the call tag", _short(text[pos:]), family, pos)])
    if text[cursor] not in "{[":
        return None
    return _TaggedJson(family, text, pos, body_start, cursor, closers, require_arguments, separators, resume_lines).read()


#: what reading a value's calls decided: go on with the next value, stop reading, or no calls at all
_NEXT, _STOP, _NONE = "next", "stop", "none"


class _TaggedJson:
    """The state of one :func:`extract_tagged_json` read: where it is, what it found, how it recovers."""

    def __init__(
        self, family: str, text: str, pos: int, body_start: int, cursor: int,
        closers: tuple[str, ...], require_arguments: bool, separators: str, resume_lines: bool,
    ) -> None:
        self.family, self.text, self.pos, self.closers = family, text, pos, closers
        self.require_arguments, self.separators, self.resume_lines = require_arguments, separators, resume_lines
        self.opener = text[pos:body_start].strip()
        self.cursor = self.end = cursor
        self.limit = _first_closer(text, closers, cursor)
        # JSON that needs repairs is read no further than where the tag opens again (found when
        # first needed): a lenient read over a flood of openers would otherwise span the rest of
        # the text at every one.
        self.reopened = -1
        self.calls: list[ToolCall] = []
        self.diagnostics: list[Diagnostic] = []
        # Repaired values with no reopening tag before the closer are decoded inside one copy of
        # the window up to the closer, made when first needed: decoding each on a fresh slice to
        # the closer would cost the window's length per value (quadratic in the number of values).
        self.window: str | None = None
        self.offset = 0
        self.recovering = False  # a value could not be read: from here on, one value per line
        self.skipped = 0

    def read(self) -> Extraction | None:
        text = self.text
        while self.cursor < self.limit and text[self.cursor] in "{[":
            if self.calls and self.opener and text.startswith(self.opener, self.cursor):
                break  # the tag written again after a call (``[TOOL_CALLS]`` starts like a list): the next block's
            try:
                value, jend, repairs = self._value()
            except ValueError as exc:
                given_up = self._unreadable(exc)
                if given_up is not None:
                    return given_up
                continue
            decided = self._take(value, jend, repairs)
            if decided == _NONE:
                return None
            if decided == _STOP:
                break
        after = skip_ws(text, self.end)
        for closer in self.closers:
            if text.startswith(closer, after):
                self.end = after + len(closer)
                break
        return Extraction(self.end, self.calls, self.diagnostics)

    def _value(self) -> tuple[Any, int, list[str]]:
        """The JSON value at the cursor: ``(value, end, repairs)``; ValueError when it cannot be read."""
        from utp.parsers.familykit import string_open_at
        from utp.parsers.jsonrepair import decode_json_at

        text, cursor = self.text, self.cursor
        if self.recovering:
            line_end = find_forward(text, "\n", cursor)
            line_end = self.limit if line_end < 0 or line_end > self.limit else line_end
            value, jend, repairs = decode_json_at(text[cursor:line_end], 0)
            if CLOSED_TRUNCATED in repairs and line_end < self.limit:
                raise ValueError("value does not close on its line")
            return value, jend + cursor, repairs
        strict = _strict_value(text, cursor, self.limit, self.closers, self.opener)
        if strict is not None:
            if strict[1] > self.limit:  # the closer was an argument's text: the block ends at a later one
                self.limit, self.window = _first_closer(text, self.closers, strict[1]), None
            return past_stray_closer(text, cursor, strict[0], strict[1], self.limit) or (strict[0], strict[1], [])
        if self.opener and self.reopened < cursor:
            self.reopened = find_forward(text, self.opener, cursor)
        reopened = self.reopened
        if cursor < reopened < self.limit:
            value, jend, repairs = decode_json_at(text, cursor, reopened, known_invalid=True)
        else:
            if self.window is None:
                self.window, self.offset = (text[cursor : self.limit], cursor) if self.limit < len(text) else (text, 0)
            value, jend, repairs = decode_json_at(self.window, cursor - self.offset, known_invalid=True)
            jend += self.offset
        if cursor < reopened <= jend and CLOSED_TRUNCATED in repairs:
            # The text goes on, so this is no output cut short. Inside a string, the tag
            # is quoted (a stream that has seen part of the string waits for the rest
            # instead of running half the arguments); with no call, the value is broken
            # (a flood of openers is one unreadable span, not a read at every one).
            if string_open_at(text, cursor, reopened) or calls_from_value(value, self.family, "", repairs, self.require_arguments) is None:
                raise ValueError(f"the value runs into {self.opener} written again")
        return value, jend, repairs

    def _unreadable(self, exc: ValueError) -> Extraction | None:
        """A value that cannot be read: skip to the next line that may hold a call, or end the block here."""
        text, cursor, family = self.text, self.cursor, self.family
        self.skipped += 1
        resume = _resume_point(text, cursor, self.limit) if self.resume_lines and self.skipped <= MAX_SKIPPED_LINES else -1
        if resume >= 0:
            self.diagnostics.append(unparseable(family, f"unreadable JSON (skipped): {exc}", text[cursor:resume].rstrip(), cursor))
            self.recovering = True
            self.cursor = self.end = resume
            return None
        stop = self.limit
        for closer in self.closers:
            if text.startswith(closer, stop):
                stop += len(closer)
                break
        if not self.recovering and text[cursor] == "[":
            # no further than the tag written again: over a flood of openers, linear
            bound = self.reopened if cursor < self.reopened < self.limit else self.limit
            salvaged = salvage_list(family, text, cursor, bound, self.require_arguments)
            if salvaged is not None:
                self.calls.extend(salvaged[0])
                self.diagnostics.extend(salvaged[1])
                return Extraction(stop, self.calls, self.diagnostics)
        start = cursor if self.recovering else self.pos
        self.diagnostics.append(unparseable(family, f"unreadable JSON: {exc}", text[start:stop], start))
        return Extraction(stop, self.calls, self.diagnostics)

    def _take(self, value: Any, jend: int, repairs: list[str]) -> str:
        """The calls of one value read: keep them and move on, or decide the block ends (or holds none)."""
        text, cursor, family, limit = self.text, self.cursor, self.family, self.limit
        if self.calls and not CUT_REPAIRS.isdisjoint(repairs):
            # A further value cut off by the end of the output: undecidable, so it is
            # part of this block (reported), never left behind as half a call in prose.
            self.diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{family}: output ended inside a call", _short(text[cursor:limit]), family, cursor))
            self.end = limit
            return _STOP
        found = calls_from_value(value, family, text[cursor:jend], repairs, self.require_arguments, salvage=True)
        if found is None and self.recovering:
            self.skipped += 1
            resume = _resume_point(text, cursor, limit) if self.skipped <= MAX_SKIPPED_LINES else -1
            self.diagnostics.append(unparseable(family, "a line of the call block is not a call", text[cursor : limit if resume < 0 else resume].rstrip(), cursor))
            self.end = limit if resume < 0 else resume
            if resume < 0:
                return _STOP
            self.cursor = resume
            return _NEXT
        if found is None:
            return _STOP if self.calls else _NONE
        self.calls.extend(found[0])
        self.diagnostics.extend(found[1])
        self.end = jend
        nxt = skip_ws(text, jend, limit)
        if nxt < limit and text[nxt] in self.separators:
            nxt = skip_ws(text, nxt + 1, limit)
        self.cursor = nxt
        return _NEXT


def salvage_list(family: str, text: str, start: int, limit: int, require_arguments: bool) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """The calls of a list that cannot be read whole, one element at a time.

    One call with a broken value (``{"time": 15:30}``) must not cost the calls
    written well beside it (Ollama's Cohere parser reads them the same way); the
    broken element is reported. Each element's extent comes from the
    string-aware bracket scan, so the block is read once. An element that does
    not close before the next element opens a call object (``, {"name": ...``)
    ends there and is read with its closers supplied; such a list ends at the
    ``]`` that ends the text. None when no element is a call (the block is
    reported whole, as before).
    """
    from utp.parsers.jsonrepair import scan_json_value

    list_end = scan_json_value(text[start:limit], 0)
    if list_end < 0:
        list_end = _list_closing_the_text(text, start, limit)
        if list_end < 0:
            return None  # the list itself does not close: cut off, or not a list of calls
    block = text[start + 1 : start + list_end - 1]
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    at = 0
    while True:
        at = skip_ws(block, at)
        while at < len(block) and block[at] == ",":
            at = skip_ws(block, at + 1)
        if at >= len(block) or block[at] != "{":
            break
        end = scan_json_value(block, at)
        following = _NEXT_CALL_ELEMENT.search(block, at + 1)
        cut = following is not None and (end < 0 or end > following.start())
        if cut:
            end = following.start()  # type: ignore[union-attr]
        elif end < 0:
            diagnostics.append(unparseable(family, "a call in the list does not close", block[at:], start + 1 + at))
            break
        found = _element_calls(family, block[at:end], start + 1 + at, require_arguments, diagnostics, cut)
        if found is not None:
            calls.extend(found[0])
            diagnostics.extend(found[1])
        at = end
    return (calls, diagnostics) if calls else None


#: the next element of a call list that opens a call object: where an element left open ends
_NEXT_CALL_ELEMENT = re.compile(r',\s*+\{\s*+"(?:' + "|".join(NAME_KEYS) + r')"\s*+:')


def _list_closing_the_text(text: str, start: int, limit: int) -> int:
    """The length of a list at ``start`` whose brackets do not balance but whose ``]`` ends the text (else -1)."""
    last = len(text[start:limit].rstrip())
    return last if last > 1 and text[start + last - 1] == "]" else -1


def _element_calls(
    family: str, element: str, offset: int, require_arguments: bool, diagnostics: list[Diagnostic], cut: bool
) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """The calls of one list element (reported in ``diagnostics`` when it holds none)."""
    from utp.parsers.jsonrepair import decode_json_at

    try:
        value, _, repairs = decode_json_at(element.rstrip(), 0)
        if cut:
            repairs = [*repairs, "closed before the next call in the list"]
        found = calls_from_value(value, family, element, repairs, require_arguments)
    except ValueError as exc:
        found, reason = None, f"a call in the list cannot be read: {exc}"
    else:
        reason = "an element of the call list is not a call"
    if found is None:
        diagnostics.append(unparseable(family, reason, element, offset))
    return found


def _strict_value(text: str, cursor: int, limit: int, closers: tuple[str, ...], opener: str) -> tuple[Any, int] | None:
    """Valid JSON at ``cursor`` before the closer at ``limit``, or past it when that closer
    stands inside one of its strings (an argument that talks about the tag).

    The second decode runs only when the first was valid up to the closer; it reads
    at most a few closers or openers ahead (a fixed number, so over a flood of
    openers the reads stay linear).
    """
    from utp.parsers.familykit import MAX_CLOSERS_INSIDE, closers_bound
    from utp.parsers.jsonrepair import strict_json_at, strict_json_growing
    from utp.parsers.textscan import nth_forward

    got, ran_out = strict_json_growing(text, cursor, limit)
    if got is not None or not ran_out or limit >= len(text) or not closers:
        return got
    bound = closers_bound(text, closers, cursor)
    if opener:
        again = nth_forward(text, opener, cursor, MAX_CLOSERS_INSIDE)
        bound = bound if again < 0 else min(bound, again)
    return strict_json_at(text, cursor, bound)


def _first_closer(text: str, closers: tuple[str, ...], pos: int) -> int:
    """Where the nearest of ``closers`` at or after ``pos`` starts; the end of the text if none."""
    from utp.parsers.textscan import find_forward

    limit = len(text)
    for closer in closers:
        k = find_forward(text, closer, pos)
        if k >= 0:
            limit = min(limit, k)
    return limit


#: what moves the bracket depth of (possibly broken) JSON, line by line: a string never
#: crosses a line (JSON strings hold no raw newline), so a broken quote spoils one line only
_DEPTH_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|[{}\[\]\n]')


def _resume_point(text: str, start: int, limit: int) -> int:
    """The next line after ``start`` (before ``limit``) opening a JSON value outside every
    bracket opened since ``start``; -1 if none. Linear in the text scanned."""
    depth = 0
    for token in _DEPTH_TOKEN.finditer(text, start, limit):
        mark = token.group()
        if mark == "\n":
            if depth <= 0:
                nxt = skip_ws(text, token.end(), limit)
                if nxt < limit and text[nxt] in "{[":
                    return nxt
        elif mark[0] != '"':
            depth += 1 if mark in "{[" else -1
    return -1


_DECODER = json.JSONDecoder()


def valid_json_before(text: str, cursor: int, bound: int, close: int) -> tuple[tuple[Any, int] | None, bool]:
    """Valid JSON at ``cursor`` ending before ``bound``: ``((value, end), False)``.

    ``(None, True)`` when the text is valid JSON up to its end and the first
    closer sits inside a string that has not ended yet; ``(None, False)`` otherwise,
    also for an object whose last members follow a stray ``}`` (see
    :func:`~utp.parsers.jsonrepair.past_stray_closer`).

    In valid JSON a closing tag can only sit inside a string, so a closer
    before the decoded end is an argument's text, not the end of the call (a
    model that writes ``"</tool_call>"`` in an argument means the characters).
    The slice is decoded, not the whole text: a failing decode builds a
    JSONDecodeError that counts the lines before its position.
    """
    window = text[cursor:bound]
    try:
        value, end = _DECODER.raw_decode(window)
    except json.JSONDecodeError as exc:
        if bound < len(text) or close < 0:
            return None, False
        unfinished_string = exc.msg.startswith("Unterminated string") and cursor + exc.pos < close
        return None, unfinished_string or (exc.pos >= len(window) and bound > close)
    except (ValueError, RecursionError):
        return None, False
    if past_stray_closer(text, cursor, value, cursor + end, bound) is not None:
        return None, False  # a brace too many closed it before its last members: the repairing read takes it
    return (value, cursor + end), False
