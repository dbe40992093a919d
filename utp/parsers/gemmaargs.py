"""Gemma's brace syntax for a call's arguments: ``{city:<|"|>Paris<|"|>,days:3}``.

FunctionGemma quotes strings with ``<escape>``, Gemma 4 with ``<|"|>``; keys
are bare words, numbers and booleans bare values, and models drift into JSON's
and Python's quotes, parenthesised arguments and bare text. :class:`ValueReader`
reads one object of it, each character once, recording what it had to repair;
:class:`Unreadable` says where it could not.
"""

from __future__ import annotations

import json
import re
from typing import Any

from utp.numbers import read_number
from utp.parsers.jsonrepair import quoted_string_end
from utp.parsers.pyliteral import LiteralError, parse_literal
from utp.parsers.textscan import find_forward, skip_space

ESCAPE = "<escape>"
GEMMA4_QUOTE = '<|"|>'
QUOTES = (ESCAPE, GEMMA4_QUOTE)
#: a bare call's keys: identifiers (a key with a blank in it is prose)
_BARE_KEY = re.compile(r"[\w.\-$@]+\Z")
#: a bare number/word ends at a separator or at any token (strings and call ends start with '<')
_SCALAR_END = re.compile(r"[,}\]<]")
#: the same inside parenthesised arguments, which a ')' closes
_PAREN_SCALAR_END = re.compile(r"[,)}\]<]")
#: a key and its separator right after a quoted value: the ',' between them was left out
_NEXT_KEY = re.compile(r"[A-Za-z_][\w.\-$@]{0,64}+\s*+[:=]")
#: what may follow a whole value: a separator, a closer, a string token or the call's end token
_AFTER_A_VALUE = re.compile(r'\s*+(?:[,)}\]]|<\|"\|>|<tool_call\|>|<end_function_call>|\Z)')
#: how far past a quote that closes nothing an apostrophe's string is looked for
_APOSTROPHE_REACH = 4096
APOSTROPHE_INSIDE = "an apostrophe inside a value in single quotes read as text"
#: nesting deeper than this is not a model's call; refuse rather than recurse
MAX_DEPTH = 64


class Unreadable(ValueError):
    """Arguments this reader cannot read; ``offset`` says where."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.offset = offset


class ValueReader:
    """Recursive-descent reader for the brace syntax; each character is read once."""

    def __init__(self, text: str, repairs: list[str], bare: bool = False, paren: bool = False) -> None:
        self.text = text
        self.repairs = repairs
        #: a bare call (one line, tokens stripped): keys must be identifiers
        self.bare = bare
        #: arguments in parentheses: ``)`` ends a bare value; a key ends at ``=`` in either (models drift
        #: into Python's keyword arguments inside the braces too: ``{command="ls"}``)
        self.scalar_end = _PAREN_SCALAR_END if paren else _SCALAR_END
        self.key_ends = ":,{}[]<=)" if paren else ":,{}[]<="

    def value(self, i: int, depth: int) -> tuple[Any, int]:
        text = self.text
        i = skip_space(text, i)
        if i >= len(text):
            raise Unreadable("output ended inside the arguments", i)
        for quote in QUOTES:
            if text.startswith(quote, i):
                close = find_forward(text, quote, i + len(quote))
                if close == -1:
                    raise Unreadable(f"string opened with {quote} is not closed", i)
                return text[i + len(quote) : close], close + len(quote)
        ch = text[i]
        if ch == "{":
            return self.object(i, depth + 1)
        if ch == "[":
            return self.array(i, depth + 1)
        if ch == '"':
            try:
                return json.JSONDecoder().raw_decode(text, i)
            except ValueError:
                raise Unreadable("bad double-quoted string", i) from None
        if ch == "'":
            end = quoted_string_end(text, i)
            if end == -1:
                raise Unreadable("string opened with ' is not closed", i)
            if not _AFTER_A_VALUE.match(text, end):
                return self.apostrophe_string(i)
            try:
                value, _ = parse_literal(text[i:end])
            except LiteralError:
                raise Unreadable("bad single-quoted string", i) from None
            return value, end
        return self.scalar(i)

    def apostrophe_string(self, i: int) -> tuple[str, int]:
        """``'Bob's note'``: the first quote closes nothing (a word follows it), so the value runs to
        the first later quote a separator or closer follows, taken as written (recorded)."""
        text, close = self.text, i
        limit = min(len(text), i + _APOSTROPHE_REACH)
        while (close := text.find("'", close + 1, limit)) != -1:
            if _AFTER_A_VALUE.match(text, close + 1):
                self.repairs.append(APOSTROPHE_INSIDE)
                return text[i + 1 : close], close + 1
        raise Unreadable("string opened with ' is not closed", i)

    def scalar(self, i: int) -> tuple[Any, int]:
        text = self.text
        stop = self.scalar_end.search(text, i)
        j = len(text) if stop is None else stop.start()
        word = text[i:j].strip()
        if not word:
            raise Unreadable("missing value", i)
        lowered = word.lower()
        if lowered in ("true", "false"):
            return lowered == "true", j
        if lowered in ("null", "none"):
            return None, j
        number = read_number(word)  # None past Python's int/str digit limit too: the text is kept
        if number is not None:
            return number, j
        self.repairs.append(f"unquoted string {word[:40]!r} read as text")
        return word, j

    def key(self, i: int) -> tuple[str, int]:
        text = self.text
        i = skip_space(text, i)
        for quote in QUOTES:
            if text.startswith(quote, i):
                close = find_forward(text, quote, i + len(quote))
                if close == -1:
                    raise Unreadable("key string is not closed", i)
                return text[i + len(quote) : close], close + len(quote)
        if text.startswith('"', i):
            try:
                key, end = json.JSONDecoder().raw_decode(text, i)
            except ValueError:
                raise Unreadable("bad double-quoted key", i) from None
            return str(key), end
        if text.startswith("'", i):  # ``{'city':'Berlin'}``: Python's quotes around a key
            end = quoted_string_end(text, i)
            if end == -1 or "'" in text[i + 1 : end - 1] or (self.bare and not _BARE_KEY.match(text[i + 1 : end - 1])):
                raise Unreadable("bad single-quoted key", i)
            self.repairs.append("single-quoted key read as its text")
            return text[i + 1 : end - 1], end
        j = i
        ends = self.key_ends
        while j < len(text) and text[j] not in ends:
            j += 1
        key = text[i:j].strip()
        if not key:
            raise Unreadable("missing key", i)
        if self.bare and not _BARE_KEY.match(key):
            raise Unreadable(f"key {key[:40]!r} is not an identifier", i)
        return key, j

    def object(self, i: int, depth: int, close: str = "}") -> tuple[dict[str, Any], int]:
        """The object opening at ``i``; ``close=")"`` reads parenthesised arguments. ``=`` may stand for ``:``
        (Python's keyword arguments; in braces a drift, recorded)."""
        if depth > MAX_DEPTH:
            raise Unreadable(f"arguments nested deeper than {MAX_DEPTH}", i)
        text = self.text
        out: dict[str, Any] = {}
        i = skip_space(text, i + 1)
        if text.startswith(close, i):
            return out, i + 1
        while True:
            key, i = self.key(i)
            i = skip_space(text, i)
            if i >= len(text) or text[i] not in ":=":
                raise Unreadable(f"expected ':' after key {key!r}", i)
            if text[i] == "=" and close == "}":
                self.repairs.append(f"'=' after key {key[:40]!r} read as ':'")
            value_start = skip_space(text, i + 1)
            quoted_as_python = text[value_start : value_start + 1] in "'\""
            quoted = quoted_as_python or text.startswith(QUOTES, value_start)
            out[key], i = self.value(i + 1, depth)
            i = skip_space(text, i)
            if quoted_as_python and (stray := self.stray_quote_token(i, close)) > i:
                i = stray  # ``'x'<|"|>``: the value quoted Python's way, then Gemma 4's closing token too
            if text.startswith(",", i):
                i = skip_space(text, i + 1)
                if text.startswith(close, i):
                    return out, i + 1
                continue
            if text.startswith(close, i):
                return out, i + 1
            if quoted and _NEXT_KEY.match(text, i):
                self.repairs.append(f"',' missing before key after {key[:40]!r}")  # ``city:<escape>Paris<escape>units:…``
                continue
            raise Unreadable(f"expected ',' or '{close}' in arguments", i)

    def stray_quote_token(self, i: int, close: str) -> int:
        """Past a ``<|"|>`` at ``i`` that closes nothing (a separator or the close right after it), recorded; else ``i``."""
        if not self.text.startswith(GEMMA4_QUOTE, i):
            return i
        after = skip_space(self.text, i + len(GEMMA4_QUOTE))
        if not self.text.startswith((",", close), after):
            return i
        self.repairs.append(f"dropped a stray {GEMMA4_QUOTE} after a quoted value")
        return after

    def array(self, i: int, depth: int) -> tuple[list[Any], int]:
        if depth > MAX_DEPTH:
            raise Unreadable(f"arguments nested deeper than {MAX_DEPTH}", i)
        text = self.text
        out: list[Any] = []
        i = skip_space(text, i + 1)
        if text.startswith("]", i):
            return out, i + 1
        while True:
            item, i = self.value(i, depth)
            out.append(item)
            i = skip_space(text, i)
            if text.startswith(",", i):
                i = i + 1
                continue
            if text.startswith("]", i):
                return out, i + 1
            raise Unreadable("expected ',' or ']' in a list", i)
