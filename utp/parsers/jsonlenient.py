"""The repairing JSON reader: one left-to-right pass that reads what a model almost wrote as JSON.

:func:`utp.parsers.jsonrepair.loads_lenient` hands it text strict JSON refused.
Every repair it makes has a stable name (:mod:`utp.parsers.jsonrepairnames`),
recorded on the call so scoring can tell clean output from repaired. Bounded work per
character, no backtracking regexes: hostile input stays linear.
"""

from __future__ import annotations

import json
import re
from typing import Any

from utp.numbers import too_long_digits
from utp.parsers.jsonlenientstrings import TYPOGRAPHIC_OPEN, WS, WS_RUN, LenientStrings
from utp.parsers.jsonrepairnames import (
    BAD_SEPARATOR, CLOSED_TRUNCATED, COMMA_FOR_COLON, COMMENTS, CUT_MID_VALUE, DOUBLED_BRACES, DOUBLE_ENCODED,
    ESCAPED_QUOTES, KEY_EQUALS, LIST_WRAPPED, LONG_NUMBER_AS_TEXT, LOOSE_NUMBER, MISSING_CLOSER, MISSING_COLON,
    MISSING_COMMA, PAIR_IN_ONE_STRING, PYTHON_LITERALS, PYTHON_TUPLE, SINGLE_QUOTES, TRAILING_COMMA, TRAILING_GARBAGE, UNQUOTED_KEYS,
)
from utp.parsers.jsonstrings import quoted_string_end


#: a text that stops on one of these stopped in the middle of writing a value
_OPEN_ENDS = ("{", "[", ",", ":")
#: a comment between tokens: to the line's end, or to ``*/`` (one that never closes is no comment)
_COMMENT = re.compile(r"//[^\n]*+|/\*(?:[^*]|\*(?!/))*+\*/")
#: what may follow a stray quote that never closes: only closers, so the object was written whole
_STRAY_QUOTE_TAIL = WS + "}])"
#: a sign may stand apart from its digits (``- 5``, as a GLM reply wrote it)
_NUMBER = re.compile(r"(?:[-+][ \t]?)?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_$][\w$\-]*")
#: a key that holds a whole pair (``function=webfetch``): the key and its value
_PAIR_IN_KEY = re.compile(r"([A-Za-z_][\w\-]{0,63})=([^=\s\"'{}\[\]][^\"{}\[\]]{0,255})")
#: what follows a pair: the object's close, or a comma and the next key with its colon
_PAIR_ENDS = re.compile(r'[ \t\r\n]*+(?:\}|,[ \t\r\n]*+"[^"\\\n]{1,256}+"[ \t\r\n]*+:)')
_LITERALS: dict[str, tuple[Any, bool]] = {
    "true": (True, False),
    "false": (False, False),
    "null": (None, False),
    "True": (True, True),
    "False": (False, True),
    "None": (None, True),
}


class _LenientReader(LenientStrings):
    """One left-to-right pass that fixes what it can name and rejects the rest."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.repairs: list[str] = []
        #: from here on no quote can end a string value (a walk found none): later walks stop at once
        self._no_value_end_from = self.n
        self.top = 0  # where the document's value starts
        #: the text stopped between the items of the document's list: every item read is whole
        self.cut_between_items = False
        #: containers open around the one being read: a closer of an enclosing kind ends this one
        self.lists_open = 0
        self.objects_open = 0
        #: the kinds of the containers being read, innermost last (``{`` or ``[``)
        self.open_kinds: list[str] = []

    # -- helpers

    def note(self, repair: str) -> None:
        if repair not in self.repairs:
            self.repairs.append(repair)

    def note_cut_string(self) -> None:
        """The text ended inside a string (or right after a key): closed, and marked half written."""
        self.note(CLOSED_TRUNCATED)
        self.note(CUT_MID_VALUE)

    def error(self, what: str) -> ValueError:
        snippet = self.text[max(0, self.i - 15) : self.i + 15]
        return ValueError(f"{what} at offset {self.i} (near {snippet!r})")

    def skip_ws(self) -> None:
        text = self.text
        i = WS_RUN.match(text, self.i).end()
        while text.startswith("/", i):  # models annotate their JSON: // … and /* … */
            comment = _COMMENT.match(text, i)
            if comment is None:
                break
            self.note(COMMENTS)
            i = WS_RUN.match(text, comment.end()).end()
        self.i = i

    def peek(self) -> str:
        return self.text[self.i] if self.i < self.n else ""

    # -- document

    def read_document(self, allow_trailing: bool) -> Any:
        self.skip_ws()
        self.top = self.i
        value = self.read_value()
        self.skip_ws()
        if self.i < self.n:
            if not allow_trailing:
                raise self.error("unexpected text after the JSON value")
            self.note(TRAILING_GARBAGE)
        return value

    def read_value(self) -> Any:
        self.skip_ws()
        ch = self.peek()
        if ch == "{":
            self.objects_open += 1
            self.open_kinds.append("{")
            try:
                return self.read_object()
            finally:
                self.objects_open -= 1
                self.open_kinds.pop()
        if ch == "[":
            self.lists_open += 1
            self.open_kinds.append("[")
            try:
                return self.read_array()
            finally:
                self.lists_open -= 1
                self.open_kinds.pop()
        if ch == '"' or ch == "'":
            return self.read_string()
        if ch == "(" and (self.lists_open or self.objects_open):
            return self.read_tuple()
        if ch == "\\" and self.text.startswith('\\"', self.i):
            self.note(ESCAPED_QUOTES)
            return self.read_escaped_string()
        if ch == TYPOGRAPHIC_OPEN:
            return self.read_typographic_string()
        if ch == "`" and (self.objects_open or self.lists_open) and not self.text.startswith("```", self.i):
            return self.read_template_string()  # a value in a container, not a Markdown fence
        if ch == "":
            raise self.error("expected a value, found end of text")
        return self.read_scalar()

    def read_scalar(self) -> Any:
        text, i = self.text, self.i
        ident = _IDENT.match(text, i)
        if ident:
            word = ident.group()
            if word in _LITERALS:
                value, pythonic = _LITERALS[word]
                if pythonic:
                    self.note(PYTHON_LITERALS)
                self.i = ident.end()
                return value
            raise self.error(f"unquoted word {word!r} is not a JSON value")
        number = _NUMBER.match(text, i)
        if number and number.end() > i:
            token = number.group()
            self.i = number.end()
            try:
                return json.loads(token)
            except ValueError:
                if too_long_digits(token):  # exactly as written, never rounded to inf
                    self.note(LONG_NUMBER_AS_TEXT)
                    return token
                self.note(LOOSE_NUMBER)
                cleaned = token.replace("_", "").replace(" ", "").replace("\t", "").lstrip("+")
                try:
                    as_float = float(cleaned)
                except ValueError:
                    raise self.error(f"bad number {token!r}") from None
                return int(as_float) if as_float.is_integer() and "." not in cleaned and "e" not in cleaned.lower() else as_float
        raise self.error(f"unexpected character {text[i]!r}")

    # -- strings

    def read_object(self) -> dict[str, Any]:
        self.i += 1  # '{'
        result: dict[str, Any] = {}
        expect_key = True
        while True:
            self.skip_ws()
            ch = self.peek()
            if ch == "":
                self.note(CLOSED_TRUNCATED)
                return result
            if ch == "}":
                self.i += 1
                return result
            if ch == "]" and self.lists_open:
                self.note(MISSING_CLOSER)
                return result  # the enclosing list's closer: this object's was left out
            if ch == ",":
                comma = self.i
                self.i += 1
                self.skip_ws()
                if self.peek() in ("}", ""):
                    if self.peek() == "}":
                        self.note(TRAILING_COMMA)
                elif self.peek() == "{" and self.open_kinds[-2:-1] == ["["]:
                    # ``[{"id": 1, "p": {…}, {"id": 2, …}]``: the item's closer was left out before the next item
                    self.note(MISSING_CLOSER)
                    self.i = comma
                    return result
                expect_key = True
                continue
            key_at = self.i
            key, value_starts_here = self.read_key()
            if key is None:  # a quote that never closes: a stray '"}', or the output cut inside a key
                if self.text[key_at + 1 :].strip(_STRAY_QUOTE_TAIL):
                    self.note_cut_string()  # `"arguments": {"pa`: the rest of the arguments never came
                else:
                    self.note(CLOSED_TRUNCATED)
                return result
            if not expect_key:
                self.note(MISSING_COMMA)
            pair = None if value_starts_here else self.pair_in_key(key)
            if pair is not None:
                result[pair[0]] = pair[1]
                expect_key = False
                continue
            if not value_starts_here:
                if not self.read_separator():
                    if self.i >= self.n:  # a key whose value never came: half written
                        self.note_cut_string()
                        return result
                    raise self.error(f"expected ':' after key {key!r}")
            self.skip_ws()
            if self.peek() == "":
                self.note(CLOSED_TRUNCATED)
                return result
            result[key] = self.read_value()
            expect_key = False

    def pair_in_key(self, key: str) -> tuple[str, str] | None:
        """``"function=webfetch"`` where a key belongs, the close or the next key right after it: a whole pair."""
        written = _PAIR_IN_KEY.fullmatch(key)
        if written is None or _PAIR_ENDS.match(self.text, self.i) is None:
            return None
        self.note(PAIR_IN_ONE_STRING)
        return written.group(1), written.group(2)

    def read_key(self) -> tuple[str | None, bool]:
        """Read a key; the flag says the value starts right here (separator was garbled)."""
        ch = self.peek()
        if ch == "\\" and self.text.startswith('\\"', self.i):
            self.note(ESCAPED_QUOTES)
            return self.read_escaped_string(), False
        if ch in "\"'":
            return self.read_quoted_key(ch)
        if ch == TYPOGRAPHIC_OPEN:
            return self.read_typographic_string(), False
        ident = _IDENT.match(self.text, self.i)
        if ident:
            self.note(UNQUOTED_KEYS)
            self.i = ident.end()
            return ident.group(), False
        number = _NUMBER.match(self.text, self.i)
        if number and number.end() > self.i:
            self.note(UNQUOTED_KEYS)
            self.i = number.end()
            return number.group(), False
        raise self.error(f"expected a key, found {ch!r}")

    def read_quoted_key(self, quote: str) -> tuple[str | None, bool]:
        """A quoted key, repairing a garbled separator written inside the quotes.

        ``"parameters>{``, ``"parameters={``, ``"parameters({``,
        ``"parameters':{'a'...`` and ``"parameters\\":{\\"a\\"...`` all
        mean ``"parameters": {``: the key's quote was never closed and the
        value opened inside it. A key never contains ``{`` or ``[``, so the
        first one inside the quotes ends the key.
        """
        if quote == "'":
            self.note(SINGLE_QUOTES)
        else:
            self.past_stray_opening_quote(":")
        start = self.i + 1
        text = self.text
        end = quoted_string_end(text, self.i)
        raw = text[start : end - 1] if end >= 0 else text[start:]
        cut = _first_of(raw, "{[")
        if cut >= 0:
            head = raw[:cut]
            key = head.rstrip(" \t>=(:\\\"'")
            if key and _IDENT.fullmatch(key.strip()):
                sep = head[len(key) :]
                if '\\"' in sep:
                    self.note(ESCAPED_QUOTES)
                self.note(BAD_SEPARATOR if sep.strip(" ") not in (":",) else MISSING_COLON)
                self.i = start + cut
                return key.strip(), True
        if end < 0:
            self.i = self.n
            return None, False
        self.i = end
        return self.decode_string_body(raw, quote), False

    def read_separator(self) -> bool:
        """Consume what stands between a key and its value; False if nothing usable."""
        self.skip_ws()
        ch = self.peek()
        if not ch:  # the text ended after the key ("" is in every string below)
            return False
        if ch == ":":
            self.i += 1
            return True
        if ch == "=":
            self.note(KEY_EQUALS)
            self.i += 1
            if self.peek() == ">":  # Ruby/Perl style =>
                self.i += 1
            return True
        if ch == ",":
            self.note(COMMA_FOR_COLON)
            self.i += 1
            return True
        if ch in ">(":
            self.note(BAD_SEPARATOR)
            self.i += 1
            return True
        if ch in "{[\"'":
            self.note(MISSING_COLON)
            return True
        return False

    # -- arrays

    def read_tuple(self) -> list[Any]:
        """``(0, 0)`` where a value belongs inside a container: Python's tuple, written by a model that
        mixes Python into its JSON (qwen2.5-0.5b's ``"vertices": [(0, 0), (2, 3)]``), as a list."""
        self.note(PYTHON_TUPLE)
        self.i += 1  # '('
        result: list[Any] = []
        while True:
            self.skip_ws()
            ch = self.peek()
            if ch == ")":
                self.i += 1
                return result
            if ch == "":
                self.note(CLOSED_TRUNCATED)
                return result
            if ch == ",":
                self.i += 1
                continue
            if ch in "]}":
                raise self.error(f"{ch!r} inside a tuple")
            result.append(self.read_value())

    def read_array(self) -> list[Any]:
        opened_at = self.i
        self.i += 1  # '['
        result: list[Any] = []
        expect_item = True
        while True:
            self.skip_ws()
            ch = self.peek()
            if ch == "":
                self.note(CLOSED_TRUNCATED)
                self.cut_between_items = opened_at == self.top
                return result
            if ch == "]":
                self.i += 1
                return result
            if ch == ",":
                self.i += 1
                self.skip_ws()
                if self.peek() == "]":
                    self.note(TRAILING_COMMA)
                expect_item = True
                continue
            if ch == "}":
                if self.objects_open:  # an enclosing object's closer: this list's was left out
                    self.note(MISSING_CLOSER)
                    return result
                raise self.error("'}' inside a list")
            if not expect_item:
                self.note(MISSING_COMMA)
            result.append(self.read_value())
            expect_item = False


def _first_of(text: str, chars: str) -> int:
    best = -1
    for ch in chars:
        k = text.find(ch)
        if k >= 0 and (best < 0 or k < best):
            best = k
    return best
