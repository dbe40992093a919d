"""Python-style call lists that Python refuses, read the way the model meant them.

Models that write ``[f(a="x")]`` calls (LFM2, Llama 3.2, ToolACE-style
fine-tunes) do not escape what they quote: ``save(text='it's here')``,
``execute(code="d = {"k": "v"}")``, ``read(path="C:\\Users\\a.txt")``, and
now and then a bare word for a string (``mode=fast``). ``ast`` refuses all of
them, and the strict reader is right to: it is the one judge of valid Python.
This reader is the fallback after it, for calls a marker or an offered tool
name already says are calls:

* a string ends at the first of its quotes that what follows can continue
  from: in an argument list ``)`` closing the call (then the list's ``]``, the
  next call or the end) or ``, name=``; in a list ``]`` or ``,`` and the next
  item; in a dict ``}`` or ``,`` and the next key. Any other quote is the
  value's own;
* a string that is not valid Python (an unescaped quote inside, a ``\\U``
  that is no escape) is taken as written, backslashes included: a model that
  escaped nothing did not mean ``\\n`` in a code sample as a line break;
* a bare word as a keyword argument's value is that word as a string, and
  as a dict's key (``{a: 2}``, JavaScript's object literal) that word; so is
  unquoted text with no operator or bracket in it (``to=john.doe@example.com``,
  ``body=Let's meet at 10 AM``, ``path=~/data/a.nii``: Gemma 3 under BFCL's
  prompt writes such values), up to the next ``, name=`` or the call's end,
  and a token that opens as a number but is none (``zip=12345r``,
  ``date=2024-01-05``: ToolACE-8B in a tau-bench run);
* a keyword argument written ``name: value`` (Swift's and TypeScript's way,
  which small models bring into ``get_weather(city: "Paris")``) is
  ``name=value``, unless its value is a bare type name (``city: str`` is a
  signature, not a call).

Each of these is recorded as a repair. Anything else unreadable (an
operator, a name where a positional value belongs, an unclosed call) fails
as a whole: :func:`read_lenient_calls` returns None and the strict reader's
error stands.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from utp.numbers import read_number
from utp.parsers.pycalls import RawCall

#: the call's ``)`` after an argument, then what may follow a call: the list's end, the next call, the end
_CALL_ENDS = r",?\s*+\)\s*+(?:\Z|[\],]|\n\s*+[A-Za-z_][\w.\-]*+\s*+\()"
#: the next keyword argument's ``name=`` (or ``name:``)
_NEXT_KEYWORD = r"[A-Za-z_]\w*+[ \t]*+(?:=(?!=)|:(?!:))"
#: the start of a value (the next positional argument, list item or tuple element)
_VALUE_START = r"""['"\[{(\-\d]|True\b|False\b|None\b"""
#: what may follow the closing quote of a string in each place it can stand
_CONTINUES = {
    "argument": re.compile(rf"[ \t]*+(?:,\s*+{_NEXT_KEYWORD}|{_CALL_ENDS})"),
    "positional": re.compile(rf"[ \t]*+(?:,\s*+(?:{_NEXT_KEYWORD}|{_VALUE_START})|{_CALL_ENDS})"),
    "item": re.compile(rf"""\s*+(?:\]|,\s*+(?:\]|\.|[rRbBuU]{{1,2}}['"]|true\b|false\b|null\b|{_VALUE_START}))"""),
    "value": re.compile(r"""\s*+(?:\}|,\s*+(?:\}|['"]|[A-Za-z_]\w*+\s*+[:=]))"""),
    "key": re.compile(r"\s*+[:=]"),
    "element": re.compile(rf"\s*+(?:\)|,\s*+(?:\)|\.|{_VALUE_START}))"),
}
_NAME = re.compile(r"[A-Za-z_][\w\-]*(?:\.[A-Za-z_][\w\-]*)*")
_KEYWORD = re.compile(r"([A-Za-z_]\w*)[ \t]*(?:=(?!=)|(:)(?!:))")
#: bare words that, after ``name:``, make the text a signature's annotation rather than a call's value
_TYPE_NAMES = frozenset(("str", "string", "int", "integer", "float", "number", "bool", "boolean", "dict", "list", "object", "array", "Any", "any"))
_WORD = re.compile(r"[A-Za-z_]\w*")
#: unquoted text for a keyword's value (``to=john.doe@example.com``, ``body=Let's meet at 10``): no
#: operator Python code would use there, no brackets, quotes only inside words, on one line, not
#: opening as a number does (``1e999`` is no number, not text); it ends
#: where the next ``, name=`` or the call's end follows (lazily, so the first such place)
_BARE_TEXT = re.compile(r"""[^\s\d'"()\[\]{}=+*<>,;\\](?:[^\n()\[\]{}=+*<>,;"\\]|,(?![ \t]*+[A-Za-z_]\w*+[ \t]*+=)){0,500}?(?=[ \t]*+(?:,|\)))""")
#: an unquoted token that opens as a number does but goes on as no number can (``12345r``, ``2024-01-05``,
#: ``1.2.3``, ``10:30``): text, where a bare word may stand; no operator but the hyphen, no space
_DIGIT_LED_TEXT = re.compile(r"\d[\w.:/@\-]*+")
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_PREFIX = re.compile(r"[rRbBuUfF]{0,2}(?=['\"])")
_SPACE = re.compile(r"\s*")
_CONSTANTS = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}
#: deeper than any call a model writes; keeps hostile nesting from reaching Python's recursion limit
_MAX_DEPTH = 64

UNESCAPED_STRING = "a string with unescaped quotes or backslashes taken as written"
BARE_WORD = "a bare word read as a string"
BARE_TEXT = "unquoted text read as a string"
COLON_KEYWORD = "keyword arguments written name: value"
BARE_KEY = "dict keys written as bare words"


class _Refused(Exception):
    """This reader cannot read the source either."""


class _Reader:
    def __init__(self, source: str) -> None:
        self.text = source
        self.at = 0
        self.repairs: list[str] = []

    def space(self) -> None:
        self.at = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]

    def expect(self, char: str) -> None:
        self.space()
        if not self.text.startswith(char, self.at):
            raise _Refused
        self.at += 1

    def note(self, repair: str) -> None:
        if repair not in self.repairs:
            self.repairs.append(repair)

    # -- calls

    def calls(self, one_per_line: bool) -> list[RawCall]:
        calls: list[RawCall] = []
        self.space()
        while self.at < len(self.text):
            if self.text.startswith("[", self.at):
                self.at += 1
                calls.extend(self._call_list())
            else:
                calls.append(self.call())
            self.space()
            if self.text.startswith((",", ";"), self.at):
                self.at += 1
                self.space()
            elif not one_per_line and self.at < len(self.text):
                raise _Refused
        if not calls:
            raise _Refused
        return calls

    def _call_list(self) -> list[RawCall]:
        calls: list[RawCall] = []
        self.sequence("]", lambda: calls.append(self.call()))
        return calls

    def call(self) -> RawCall:
        self.space()
        name = _NAME.match(self.text, self.at)
        if name is None:
            raise _Refused
        self.at = name.end()
        self.expect("(")
        call = RawCall(name.group())

        def argument() -> None:
            keyword = _KEYWORD.match(self.text, self.at)
            if keyword is None:
                call.positional.append(self.value("positional", 0))
                return
            self.at = keyword.end()
            if keyword.group(2):
                self.space()
                word = _WORD.match(self.text, self.at)
                if word is not None and word.group() in _TYPE_NAMES:
                    raise _Refused  # ``city: str``: a signature, not a call
                self.note(COLON_KEYWORD)
            call.keywords[keyword.group(1)] = self.value("argument", 0, bare_word=True)

        self.sequence(")", argument)
        return call

    def sequence(self, closer: str, read_one: Callable[[], None]) -> None:
        """Items separated by commas (a trailing one allowed) up to ``closer``, which is consumed."""
        while True:
            self.space()
            if self.text.startswith(closer, self.at):
                self.at += 1
                return
            read_one()
            self.space()
            if self.text.startswith(",", self.at):
                self.at += 1
            elif not self.text.startswith(closer, self.at):
                raise _Refused

    # -- values

    def value(self, place: str, depth: int, bare_word: bool = False) -> Any:
        if depth > _MAX_DEPTH:
            raise _Refused
        self.space()
        text, at = self.text, self.at
        prefix = _PREFIX.match(text, at)
        if prefix is not None:
            self.at = prefix.end()
            return self.string(place, raw="r" in prefix.group().lower())
        head = text[at : at + 1]
        if head == "[":
            return self.container("]", "item", depth)
        if head == "(":
            return self.container(")", "element", depth)
        if head == "{":
            return self.mapping(depth)
        number = _NUMBER.match(text, at)
        if bare_word and number is not None and (token := _DIGIT_LED_TEXT.match(text, at)) is not None and token.end() > number.end():
            if _CONTINUES[place].match(text, token.end()) is not None:  # ``zip=12345r``, ``date=2024-01-05``: no number
                self.at = token.end()
                self.note(BARE_TEXT)
                return token.group()
        if number is not None and number.end() > at:
            value = read_number(number.group().replace("_", ""))
            if value is None:
                raise _Refused  # ``1e999``: no number JSON can hold, and no text either
            self.at = number.end()
            return value
        word = _WORD.match(text, at)
        if word is not None and word.group() in _CONSTANTS:
            self.at = word.end()
            return _CONSTANTS[word.group()]
        if word is not None and bare_word and _CONTINUES[place].match(text, word.end()) is not None:
            self.at = word.end()
            self.note(BARE_WORD)
            return word.group()
        bare = _BARE_TEXT.match(text, at) if bare_word else None
        if bare is None or _CONTINUES[place].match(text, bare.end()) is None:
            raise _Refused  # a name or an expression where a value belongs: code, not a call
        self.at = bare.end()
        self.note(BARE_TEXT)
        return bare.group()

    def string(self, place: str, raw: bool) -> str:
        text = self.text
        quote = text[self.at]
        if text.startswith(quote * 3, self.at):
            close = text.find(quote * 3, self.at + 3)
            if close == -1:
                raise _Refused
            body, self.at = text[self.at + 3 : close], close + 3
            return self._decoded(body, quote * 3, raw)
        start = self.at + 1
        follows = _CONTINUES[place]
        at = start
        while True:
            close = text.find(quote, at)
            if close == -1:
                raise _Refused
            if not _escaped(text, close) and follows.match(text, close + 1) is not None:
                break
            at = close + 1
        self.at = close + 1
        return self._decoded(text[start:close], quote, raw)

    def _decoded(self, body: str, quote: str, raw: bool) -> str:
        """Python's reading of the string when it is one, else the text as written (said so)."""
        if not _unescaped_quote(body, quote):
            if raw or "\\" not in body:
                return body
            # a line break written as is in an escaped string (``content="<html lang=\\"en\\">`` then a new line):
            # the escapes are meant, and so is the break, which Python spells ``\\n`` in such quotes
            spelled = body if len(quote) == 3 else body.replace("\n", "\\n")
            try:
                value = ast.literal_eval(quote + spelled + quote)
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                value = None
            if isinstance(value, str):
                return value
        self.note(UNESCAPED_STRING)
        return body

    def container(self, closer: str, place: str, depth: int) -> list[Any]:
        self.at += 1
        items: list[Any] = []
        self.sequence(closer, lambda: items.append(self.value(place, depth + 1)))
        return items

    def mapping(self, depth: int) -> dict[str, Any]:
        self.at += 1
        result: dict[str, Any] = {}

        def entry() -> None:
            word = _WORD.match(self.text, self.at)
            if word is not None and self.text[word.end() : word.end() + 1] in (":", "=", " ", "\t"):
                self.at = word.end()
                key: Any = word.group()
                self.note(BARE_KEY)
            else:
                key = self.value("key", depth + 1)
            self.space()
            if not self.text.startswith((":", "="), self.at):
                raise _Refused
            self.at += 1
            result[key if isinstance(key, str) else str(key)] = self.value("value", depth + 1, bare_word=True)

        self.sequence("}", entry)
        return result


def _escaped(text: str, at: int) -> bool:
    """Is the character at ``at`` escaped (an odd run of backslashes before it)?"""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _unescaped_quote(body: str, quote: str) -> bool:
    return any(not _escaped(body, i) for i in range(len(body)) if body[i] == quote)


def read_lenient_calls(source: str, *, one_per_line: bool = False) -> tuple[list[RawCall], list[str]] | None:
    """The calls in ``source`` read as described above, with the repairs made; None when it cannot."""
    reader = _Reader(source.strip())
    try:
        calls = reader.calls(one_per_line)
    except (_Refused, RecursionError):
        return None
    return calls, reader.repairs
