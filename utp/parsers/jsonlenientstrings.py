"""How the repairing JSON reader reads strings: the quotes models get wrong.

A mixin of :class:`utp.parsers.jsonlenient._LenientReader` (its ``text``,
``i``, ``n`` and ``note``): a string's end when quotes inside it were not
escaped, a stray quote before its own, pieces joined with ``+``, typographic
quotes, quotes a model escaped that opened a nested object, JavaScript's
backticks. Each search is
bounded so that many strings in one document stay linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from utp.parsers.jsonrepairnames import (
    APOSTROPHE_ESCAPE, CONTROL_CHARS, INNER_QUOTES, SINGLE_QUOTES, STRAY_OPENING_QUOTE, STRING_CONCATENATION, TEMPLATE_LITERAL, TYPOGRAPHIC_QUOTES,
)
from utp.parsers.jsonstrings import decoded_string, quoted_string_end

TYPOGRAPHIC_OPEN, TYPOGRAPHIC_CLOSE = "\u201c", "\u201d"
WS = " \t\r\n\u00a0\ufeff"
WS_RUN = re.compile(r"[ \t\r\n\u00a0\ufeff]*")
#: what may follow a value's closing quote: a separator, a closer, the next string (missing comma)
VALUE_FOLLOWERS = ',}]"'
#: a double quote with no backslash before it
_UNESCAPED_QUOTE = re.compile(r'(?<!\\)"')
#: a ``+`` between a closed string and the next one opening (a long value written as pieces)
_CONCATENATION = re.compile(r'[ \t\r\n]*+\+[ \t\r\n]*+"')
#: a template literal's escapes: a character JavaScript names, four hex digits, or any character as itself
_TEMPLATE_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|(.))", re.DOTALL)
_TEMPLATE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
#: what follows a value's closing quote written right after an inner quote's (``"/c/x"",``)
_CLOSE_AFTER_QUOTE = re.compile(r'[ \t\r\n]*+(?:[,}\]]|\Z)')


class LenientStrings:
    """String reading for the lenient reader (see the module doc)."""

    # the reader's state and its recording of repairs, which these methods use
    text: str
    i: int
    n: int
    _no_value_end_from: int
    note: Callable[[str], None]
    note_cut_string: Callable[[], None]

    def read_string(self) -> str:
        self.past_stray_opening_quote(VALUE_FOLLOWERS)
        quote = self.text[self.i]
        if quote == "'":
            self.note(SINGLE_QUOTES)
        end = quoted_string_end(self.text, self.i)
        if end >= 0 and quote == '"' and _CONCATENATION.match(self.text, end):
            joined = self.read_concatenation(end)
            if joined is not None:
                return joined
        if end >= 0:
            inner_end = self.past_inner_quotes(end)
            if inner_end != end:  # (in a single-quoted string, an apostrophe: ``'Alison O'Brien'``)
                self.note(INNER_QUOTES)
                raw = self.text[self.i + 1 : inner_end - 1]
                raw = _UNESCAPED_QUOTE.sub(r'\\"', raw) if quote == '"' else raw
                self.i = inner_end
                return self.decode_string_body(raw, quote)
        if end < 0:  # unterminated: truncated output
            self.note_cut_string()
            raw = self.text[self.i + 1 :]
            self.i = self.n
        else:
            raw = self.text[self.i + 1 : end - 1]
            self.i = end
        return self.decode_string_body(raw, quote)

    def read_template_string(self) -> str:
        """A value in backticks, JavaScript's template literal: its text as written (line breaks and quotes
        included), its escapes decoded; ``${…}`` is kept as text, there being nothing to fill it with."""
        at = self.i + 1
        while True:
            close = self.text.find("`", at)
            if close < 0:  # unterminated: truncated output
                self.note(TEMPLATE_LITERAL)
                self.note_cut_string()
                raw, self.i = self.text[self.i + 1 :], self.n
                break
            backslashes = close - len(self.text[at:close].rstrip("\\")) - at
            if backslashes % 2 == 0:
                self.note(TEMPLATE_LITERAL)
                raw, self.i = self.text[self.i + 1 : close], close + 1
                break
            at = close + 1
        return _TEMPLATE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else _TEMPLATE_ESCAPES.get(m.group(2), m.group(2)), raw)

    def past_stray_opening_quote(self, followers: str) -> bool:
        """Past a quote written before a string's own (``""city":``, ``" "Paris"``), when it is one.

        It is when the "string" it opens holds only blanks and a word is glued to
        its close (no JSON has that), and the string opened by that close ends
        where a string may end (``followers``, after blanks).
        """
        text, at = self.text, self.i
        if not text.startswith('"', at) or at + 1 >= self.n or text[at + 1] not in WS + '"':
            return False  # the usual string: its first character is no blank or quote
        first = quoted_string_end(text, at)
        if first < 0 or first >= self.n or not (text[first].isalnum() or text[first] == "_") or text[at + 1 : first - 1].strip(WS):
            return False
        second = quoted_string_end(text, first - 1)
        follow = WS_RUN.match(text, second).end() if second >= 0 else self.n
        if second < 0 or (follow < self.n and text[follow] not in followers):
            return False
        self.note(STRAY_OPENING_QUOTE)
        self.i = first - 1
        return True

    def read_concatenation(self, end: int) -> str | None:
        """``"a\\n" + "b"``: the pieces joined, when each is a whole string and the last one is
        followed by what ends a value; else None (the quotes are then read as quotes inside one)."""
        text, start = self.text, self.i
        pieces: list[tuple[int, int]] = []  # each piece's body, decoded once all of them are known
        while True:
            pieces.append((start + 1, end - 1))
            joiner = _CONCATENATION.match(text, end)
            if joiner is None:
                break
            start = joiner.end() - 1
            end = quoted_string_end(text, start)
            if end < 0:
                return None
        follow = WS_RUN.match(text, end).end()
        if follow < self.n and text[follow] not in VALUE_FOLLOWERS:
            return None
        self.note(STRING_CONCATENATION)
        self.i = end
        return "".join(self.decode_string_body(text[a:b], '"') for a, b in pieces)

    def read_typographic_string(self) -> str:
        """``“text”``: the text as written up to the closing ``”`` (no escapes: no JSON encoder wrote it)."""
        self.note(TYPOGRAPHIC_QUOTES)
        close = self.text.find(TYPOGRAPHIC_CLOSE, self.i + 1)
        if close < 0:  # unterminated: truncated output
            self.note_cut_string()
            raw, self.i = self.text[self.i + 1 :], self.n
            return raw
        raw, self.i = self.text[self.i + 1 : close], close + 1
        return raw

    def past_inner_quotes(self, end: int) -> int:
        """Where a double-quoted value really ends, when quotes inside it were not escaped.

        A value's closing quote is followed (after blanks) by ``,``, ``}``,
        ``]``, another quote (a missing comma) or the end; a quote glued to the
        quote that closes an inner one (``"ls -la "/c/x"",``) is the value's own. A quote followed by
        anything else (``lang="en">``, a word) cannot end the value: code and
        HTML written into an argument carry such quotes. The value then runs to
        the first quote that can end it; when none can, nothing changes.
        """
        text, n = self.text, self.n
        at = end
        while True:
            follow = WS_RUN.match(text, at).end()
            if follow == at < n and text[at] == '"' and at > end and _CLOSE_AFTER_QUOTE.match(text, at + 1):
                return at + 1  # ``"ls "/c/x"",``: the inner quote's close, then the value's own
            if follow >= n or text[follow] in VALUE_FOLLOWERS:
                return at
            if at >= self._no_value_end_from:
                return end
            at = quoted_string_end(text, at - 1)  # the quote that did not end it opens the next stretch
            if at < 0:
                # Every quote from ``end`` on was walked in vain; a later string would walk the
                # same quotes again (quadratic over many strings), so remember where this began.
                self._no_value_end_from = min(self._no_value_end_from, end)
                return end

    def read_escaped_string(self) -> str:
        """A string opened with ``\\"`` (model escaped the quotes of a nested object)."""
        start = self.i + 2
        close = self.text.find('\\"', start)
        if close < 0:
            self.note_cut_string()
            raw = self.text[start:]
            self.i = self.n
        else:
            raw = self.text[start:close]
            self.i = close + 2
        return self.decode_string_body(raw, '"')

    def decode_string_body(self, raw: str, quote: str) -> str:
        text, escaped_controls = decoded_string(raw, quote)
        if escaped_controls:
            self.note(CONTROL_CHARS)
        if quote == '"' and "\\'" in raw:
            self.note(APOSTROPHE_ESCAPE)
        return text

    # -- objects
