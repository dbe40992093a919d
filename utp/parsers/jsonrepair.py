"""Lenient JSON for text a model wrote by hand.

Small models get JSON *almost* right: a ``>`` or ``=`` where ``":`` belongs
after a key, single quotes, Python's ``True``/``None``, a trailing comma, a
stray ``"}`` after the last brace, an object cut off by the token limit. The
intent is still unambiguous, and refusing the call costs a whole round trip,
so :func:`loads_lenient` reads it and *names* every repair it made; callers
record those names on the call so scoring can tell clean output from repaired.

Strict :func:`json.loads` runs first, so valid JSON costs nothing extra. The
repairing reader is a single left-to-right pass with a bounded amount of work
per character (no backtracking regexes), so hostile input stays linear.
"""

from __future__ import annotations

import json
import re
from typing import Any

from utp.numbers import too_long_digits

__all__ = [
    "UnreadableJSON",
    "decode_json_at",
    "strict_json_at",
    "strict_json_growing",
    "loads_lenient",
    "parse_arguments",
    "scan_json_value",
]

_DECODER = json.JSONDecoder()

# Repair names: stable strings, recorded in ToolCall.repairs and reports.
TRAILING_COMMA = "removed trailing comma"
SINGLE_QUOTES = "single quotes to double"
PYTHON_LITERALS = "Python literals (True/False/None) to JSON"
UNQUOTED_KEYS = "quoted bare keys"
KEY_EQUALS = "key=value to key: value"
BAD_SEPARATOR = "malformed separator after key"
MISSING_COLON = "inserted missing colon"
COMMA_FOR_COLON = "comma where colon belongs"
ESCAPED_QUOTES = "unescaped backslash-escaped quotes"
CLOSED_TRUNCATED = "closed truncated JSON"
#: noted with CLOSED_TRUNCATED when the cut fell inside a string, or right after ``{``, ``[``,
#: ``,`` or ``:`` (more was clearly coming): the value is half written, so a call holding it is
#: reported, never run (:func:`utp.parsers.scanloop.try_extract`). A cut after a whole value
#: (``{"city": "Paris"``) only lost closing brackets, and is read.
CUT_MID_VALUE = "closed a value the text cut off mid-way"
TRAILING_GARBAGE = "ignored text after the JSON value"
MISSING_COMMA = "inserted missing comma"
DOUBLE_ENCODED = "decoded double-encoded JSON string"
LIST_WRAPPED = "unwrapped single-object list"
CONTROL_CHARS = "escaped control characters in strings"
LOOSE_NUMBER = "normalised number literal"
#: more digits than Python converts to a number: kept as its text, which validation reports
LONG_NUMBER_AS_TEXT = "kept a number too long to read as its text"
INNER_QUOTES = "kept unescaped quotes inside a string"
COMMENTS = "removed comments"

_WS = " \t\r\n\u00a0\ufeff"
#: a text that stops on one of these stopped in the middle of writing a value
_OPEN_ENDS = ("{", "[", ",", ":")
#: a comment between tokens: to the line's end, or to ``*/`` (one that never closes is no comment)
_COMMENT = re.compile(r"//[^\n]*+|/\*(?:[^*]|\*(?!/))*+\*/")
_WS_RUN = re.compile(r"[ \t\r\n\u00a0\ufeff]*")
#: what may follow a value's closing quote: a separator, a closer, the next string (missing comma)
_VALUE_FOLLOWERS = ',}]"'
#: a double quote with no backslash before it
_UNESCAPED_QUOTE = re.compile(r'(?<!\\)"')
_STRING_BODY = {
    '"': re.compile(r'(?:[^"\\]|\\.)*', re.S),
    "'": re.compile(r"(?:[^'\\]|\\.)*", re.S),
}
#: what a balanced scan steps over without looking: text with no bracket or quote, a whole
#: string (escapes honoured), and a ``'`` between two letters or digits (``don't``: no quote)
_INERT = re.compile(
    r"""(?:[^"'{}\[\]]+|(?<=[^\W_])'(?=[^\W_])|"[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')*""", re.S
)
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SCALAR_END = re.compile(r"[\s,}\]:]|$")
_IDENT = re.compile(r"[A-Za-z_$][\w$\-]*")
_LITERALS: dict[str, tuple[Any, bool]] = {
    "true": (True, False),
    "false": (False, False),
    "null": (None, False),
    "True": (True, True),
    "False": (False, True),
    "None": (None, True),
}


class UnreadableJSON(ValueError):
    """JSON that even the lenient reader could not read; ``end`` is where its value ends.

    The extent was already scanned to attempt the read, so callers that
    consume the broken span take it from here instead of scanning again.
    """

    def __init__(self, message: str, end: int) -> None:
        super().__init__(message)
        self.end = end


# ---------------------------------------------------------------- scanning


def scan_json_value(text: str, pos: int) -> int:
    """Index just past the one JSON value starting at ``text[pos]``, or -1.

    Balanced scan for ``{``/``[`` (braces inside strings, single- or
    double-quoted, do not count; backslash escapes are honoured); strings and
    scalars end where their token ends. -1 means the value is not complete in
    ``text`` (truncated, or unbalanced). Linear: each character is examined a
    bounded number of times, and one compiled regex steps over prose and whole
    strings in C, so Python sees only the brackets.
    """
    n = len(text)
    if pos < 0 or pos >= n:
        return -1
    first = text[pos]
    if first in "{[":
        return _scan_container(text, pos)
    if first in "\"'":
        end = quoted_string_end(text, pos)
        return end
    match = _SCALAR_END.search(text, pos + 1)
    if match is None:
        return n
    return match.start() if match.start() > pos else -1


def quoted_string_end(text: str, pos: int) -> int:
    """Index past the ``"`` or ``'`` string opening at ``pos`` (escapes honoured), or -1 if it never closes."""
    quote = text[pos]
    body = _STRING_BODY[quote].match(text, pos + 1)
    end = body.end() if body else pos + 1
    if end < len(text) and text[end] == quote:
        return end + 1
    return -1


def _scan_container(text: str, pos: int) -> int:
    if text.find("}", pos) < 0 and text.find("]", pos) < 0:
        return -1  # nothing could ever close it (a flood of openers): no need to walk it
    depth = 0
    i = pos
    n = len(text)
    skip = _INERT.match
    while True:
        i = skip(text, i).end()  # prose, whole strings and apostrophes, in C
        if i >= n:
            return -1
        ch = text[i]
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        else:
            return -1  # a quote that opens no complete string
        i += 1


def strict_json_at(text: str, pos: int, bound: int) -> tuple[Any, int] | None:
    """Valid JSON starting at ``pos`` and ending by ``bound``: ``(value, end)``, or None.

    Within a bound short of the end the slice is decoded, not the text: a
    failing decode builds an error that counts the lines before its position,
    which over many positions of one long text would be quadratic.
    """
    try:
        if bound < len(text):
            value, stop = _DECODER.raw_decode(text[pos:bound])
            return value, pos + stop
        return _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return None


def strict_json_growing(text: str, pos: int, limit: int) -> tuple[tuple[Any, int] | None, bool]:
    """Valid JSON (an object or array) at ``pos`` ending by ``limit``: ``((value, end) or None, ran_out)``.

    Decoded in slices that grow fourfold from a few hundred characters, so the
    work is proportional to how far the value, or its first error, reaches, not
    to ``limit - pos``: over many openers before one far closer, a decode of the
    whole window at each would be quadratic. ``ran_out``: valid as far as
    ``limit``, so the value may go on past it.
    """
    size = _FIRST_SLICE
    while True:
        end = min(limit, pos + size)
        try:
            value, stop = _DECODER.raw_decode(text[pos:end])
            return (value, pos + stop), False
        except json.JSONDecodeError as exc:
            # Before the limit, an error in the slice's last few characters may be the cut itself
            # (inside an escape, a literal, a number); an unterminated string also means the
            # slice ended before the value did.
            margin = 1 if end >= limit else _CUT_MARGIN
            if not (exc.pos >= end - pos - margin or exc.msg.startswith("Unterminated string")):
                return None, False
            if end >= limit:
                return None, True
        except (ValueError, RecursionError):
            return None, False
        size *= 4


#: the first slice :func:`strict_json_growing` decodes (most calls fit)
_FIRST_SLICE = 512
#: how close to a slice's end an error may be the cut rather than the text (``\ud83d\ude00`` is 12)
_CUT_MARGIN = 16


def decode_json_at(text: str, pos: int, end: int | None = None, *, known_invalid: bool = False) -> tuple[Any, int, list[str]]:
    """Decode the JSON value at ``pos``: ``(value, end, repairs)``; raises ValueError
    (:class:`UnreadableJSON`, with the value's extent, when the lenient read failed).

    Valid JSON goes through the C decoder. Otherwise the value's extent comes
    from :func:`scan_json_value` (or runs to ``end`` / the end of the text when
    it never closes: truncation) and the slice is read leniently.
    """
    limit = len(text) if end is None else end
    windowed = limit < len(text)
    # known_invalid: the caller's strict decode of the text from ``pos`` failed, so one
    # within a window would too (a value that completes in it completes in the text)
    if not known_invalid:
        try:
            # Within a window, decode the slice: a failing raw_decode builds a JSONDecodeError
            # that counts the newlines before the error (O(pos)), which would make decoding at
            # many positions of one long text quadratic.
            value, stop = _DECODER.raw_decode(text[pos:limit]) if windowed else _DECODER.raw_decode(text, pos)
            if windowed:
                stop += pos
            if stop <= limit:
                return value, stop, []
        except ValueError:
            pass
        except RecursionError:
            raise ValueError(f"JSON nested too deeply at offset {pos}") from None
    if end is not None and end < len(text):
        # scan only the allowed window: slicing text[:end] would copy everything before pos
        # too, which is quadratic when a family decodes at many positions of one text
        stop = scan_json_value(text[pos:limit], 0)
        stop = limit if stop < 0 else pos + stop
    else:
        stop = scan_json_value(text, pos)
        stop = limit if stop < 0 else stop
    try:
        value, repairs = _loads_repaired(text[pos:stop], allow_trailing=False)
    except ValueError as exc:
        raise UnreadableJSON(str(exc), stop) from None
    return value, stop, repairs


# ---------------------------------------------------------------- loading


def loads_lenient(text: str) -> tuple[Any, list[str]]:
    """Parse JSON as a model meant it: ``(value, repairs)``; ValueError when unreadable.

    ``repairs`` is empty for valid JSON, else names each fix (see the module
    constants). Only unambiguous fixes are made; anything else is an error
    that says what was found and where.
    """
    if not isinstance(text, str):
        raise ValueError(f"expected JSON text, got {type(text).__name__}")
    stripped = text.strip(_WS)
    if not stripped:
        raise ValueError("empty text is not JSON")
    try:
        return json.loads(stripped), []
    except ValueError:
        pass
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    return _loads_repaired(stripped, allow_trailing=True)


def _loads_repaired(text: str, allow_trailing: bool) -> tuple[Any, list[str]]:
    reader = _LenientReader(text)
    try:
        value = reader.read_document(allow_trailing)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if CLOSED_TRUNCATED in reader.repairs and not reader.cut_between_items and text.rstrip(_WS).endswith(_OPEN_ENDS):
        reader.note(CUT_MID_VALUE)
    return value, reader.repairs


def parse_arguments(value: Any) -> tuple[dict[str, Any], list[str]]:
    """Arguments as a dict from whatever a model or server put there; ValueError if impossible.

    Accepts a dict, a JSON (or almost-JSON) object string, a string that
    encodes such a string again (double encoding), ``None``/empty (no
    arguments), and a list holding exactly one object (``"parameters": [{...}]``).
    """
    repairs: list[str] = []
    for _ in range(4):  # dict, or up to three layers of string encoding
        if value is None:
            return {}, repairs
        if isinstance(value, dict):
            return value, repairs
        if isinstance(value, list):
            if len(value) == 1 and isinstance(value[0], dict):
                repairs.append(LIST_WRAPPED)
                return value[0], repairs
            if not value:
                return {}, repairs
            raise ValueError(f"arguments are a list of {len(value)} items, expected one object")
        if isinstance(value, str):
            if not value.strip(_WS):
                return {}, repairs
            decoded, more = loads_lenient(value)
            repairs.extend(r for r in more if r not in repairs)
            if isinstance(decoded, str):
                repairs.append(DOUBLE_ENCODED)
            value = decoded
            continue
        raise ValueError(f"arguments must be an object, got {type(value).__name__}")
    raise ValueError("arguments are encoded as a string too many times")


# ---------------------------------------------------------------- the reader


class _LenientReader:
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

    # -- helpers

    def note(self, repair: str) -> None:
        if repair not in self.repairs:
            self.repairs.append(repair)

    def note_cut_string(self) -> None:
        """The text ended inside a string: closed, and marked half written."""
        self.note(CLOSED_TRUNCATED)
        self.note(CUT_MID_VALUE)

    def error(self, what: str) -> ValueError:
        snippet = self.text[max(0, self.i - 15) : self.i + 15]
        return ValueError(f"{what} at offset {self.i} (near {snippet!r})")

    def skip_ws(self) -> None:
        text = self.text
        i = _WS_RUN.match(text, self.i).end()
        while text.startswith("/", i):  # models annotate their JSON: // … and /* … */
            comment = _COMMENT.match(text, i)
            if comment is None:
                break
            self.note(COMMENTS)
            i = _WS_RUN.match(text, comment.end()).end()
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
            return self.read_object()
        if ch == "[":
            return self.read_array()
        if ch == '"' or ch == "'":
            return self.read_string()
        if ch == "\\" and self.text.startswith('\\"', self.i):
            self.note(ESCAPED_QUOTES)
            return self.read_escaped_string()
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
                cleaned = token.replace("_", "").lstrip("+")
                try:
                    as_float = float(cleaned)
                except ValueError:
                    raise self.error(f"bad number {token!r}") from None
                return int(as_float) if as_float.is_integer() and "." not in cleaned and "e" not in cleaned.lower() else as_float
        raise self.error(f"unexpected character {text[i]!r}")

    # -- strings

    def read_string(self) -> str:
        quote = self.text[self.i]
        if quote == "'":
            self.note(SINGLE_QUOTES)
        end = quoted_string_end(self.text, self.i)
        if end >= 0 and quote == '"':
            inner_end = self.past_inner_quotes(end)
            if inner_end != end:
                self.note(INNER_QUOTES)
                raw = _UNESCAPED_QUOTE.sub(r'\\"', self.text[self.i + 1 : inner_end - 1])
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

    def past_inner_quotes(self, end: int) -> int:
        """Where a double-quoted value really ends, when quotes inside it were not escaped.

        A value's closing quote is followed (after blanks) by ``,``, ``}``,
        ``]``, another quote (a missing comma) or the end. A quote followed by
        anything else (``lang="en">``, a word) cannot end the value: code and
        HTML written into an argument carry such quotes. The value then runs to
        the first quote that can end it; when none can, nothing changes.
        """
        text, n = self.text, self.n
        at = end
        while True:
            follow = _WS_RUN.match(text, at).end()
            if follow >= n or text[follow] in _VALUE_FOLLOWERS:
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
        if "\\" not in raw and not _has_control(raw):
            return raw
        escaped = _SINGLE_TO_DOUBLE.sub(_requote, raw) if quote == "'" else raw
        if _has_control(escaped):
            self.note(CONTROL_CHARS)
            escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        try:
            return json.loads(f'"{escaped}"')
        except ValueError:
            # Lone backslashes (Windows paths written unescaped): keep them literally.
            return raw.replace('\\"', '"')

    # -- objects

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
            if ch == ",":
                self.i += 1
                self.skip_ws()
                if self.peek() in ("}", ""):
                    if self.peek() == "}":
                        self.note(TRAILING_COMMA)
                expect_key = True
                continue
            key, value_starts_here = self.read_key()
            if key is None:  # a quote that never closes: cut-off output or a stray '"}'
                self.note(CLOSED_TRUNCATED)
                return result
            if not expect_key:
                self.note(MISSING_COMMA)
            if not value_starts_here:
                if not self.read_separator():
                    if self.i >= self.n:
                        self.note(CLOSED_TRUNCATED)
                        return result
                    raise self.error(f"expected ':' after key {key!r}")
            self.skip_ws()
            if self.peek() == "":
                self.note(CLOSED_TRUNCATED)
                return result
            result[key] = self.read_value()
            expect_key = False

    def read_key(self) -> tuple[str | None, bool]:
        """Read a key; the flag says the value starts right here (separator was garbled)."""
        ch = self.peek()
        if ch == "\\" and self.text.startswith('\\"', self.i):
            self.note(ESCAPED_QUOTES)
            return self.read_escaped_string(), False
        if ch in "\"'":
            return self.read_quoted_key(ch)
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
            if ch == "}":  # stray closer inside a list
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


_SINGLE_TO_DOUBLE = re.compile(r"\\(.)|\"", re.S)


def _requote(match: re.Match[str]) -> str:
    """Inside a single-quoted string: ``\\'`` is a plain quote, a bare ``"`` needs escaping."""
    escaped = match.group(1)
    if escaped is None:
        return '\\"'
    return "'" if escaped == "'" else "\\" + escaped


_CONTROL = re.compile(r"[\x00-\x1f]")


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None
