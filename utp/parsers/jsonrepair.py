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

# The reader and the repair names live in jsonlenient and jsonrepairnames; they are imported here
# so the families need one module for JSON.
from utp.parsers.jsonlenient import _OPEN_ENDS, _LenientReader, quoted_string_end  # noqa: F401  (re-exported)
from utp.parsers.jsonlenientstrings import WS as _WS
from utp.parsers.jsonrepairnames import (  # noqa: F401  (re-exported)
    BAD_SEPARATOR,
    CLOSED_TRUNCATED,
    COMMA_FOR_COLON,
    COMMENTS,
    CONTROL_CHARS,
    CUT_MID_VALUE,
    DOUBLED_BRACES,
    DOUBLE_ENCODED,
    ESCAPED_QUOTES,
    INNER_QUOTES,
    KEY_EQUALS,
    LIST_WRAPPED,
    LONG_NUMBER_AS_TEXT,
    LOOSE_NUMBER,
    MISSING_CLOSER,
    MISSING_COLON,
    MISSING_COMMA,
    PAIR_IN_ONE_STRING,
    PYTHON_LITERALS,
    PYTHON_TUPLE,
    SINGLE_QUOTES,
    TRAILING_COMMA,
    STRAY_CLOSER,
    TRAILING_GARBAGE,
    TYPOGRAPHIC_QUOTES,
    UNQUOTED_KEYS,
)

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


#: what a balanced scan steps over without looking: text with no bracket or quote, a whole
#: string (escapes honoured), and a ``'`` between two letters or digits (``don't``: no quote)
_INERT = re.compile(
    r"""(?:[^"'{}\[\]]+|(?<=[^\W_])'(?=[^\W_])|"[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')*""", re.S
)
_SCALAR_END = re.compile(r"[\s,}\]:]|$")


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
    value, stop, repairs = _decode_extent(text, pos, end, known_invalid)
    return past_stray_closer(text, pos, value, stop, end) or (value, stop, repairs)


#: what follows an object that one ``}`` too many closed early: a comma and the next member's key
_MEMBERS_AFTER = re.compile(r"""[ \t\r\n]*+,[ \t\r\n]*+(?:"[^"\\\n]{1,64}+"|'[^'\\\n]{1,64}+')[ \t\r\n]*+:""")
#: how far past the stray ``}`` the object's last members are looked for (a name, an id: short), so a
#: flood of such objects costs a bounded read each
_STRAY_WINDOW = 512


def past_stray_closer(text: str, pos: int, value: Any, stop: int, end: int | None) -> tuple[Any, int, list[str]] | None:
    """The object read at ``pos`` (``value``, ending at ``stop``) read again without its last ``}``, when
    members follow it (``{"arguments": {"a": 1}}}, "name": "f"}``: a brace too many ended it early);
    None when that is not it or does not read.

    The text is read again once, at most :data:`_STRAY_WINDOW` characters past the brace.
    """
    if type(value) is not dict or stop >= len(text) or text[stop - 1] != "}" or _MEMBERS_AFTER.match(text, stop) is None:
        return None
    limit = min(len(text) if end is None else end, stop + _STRAY_WINDOW)
    patched = text[pos : stop - 1] + " " + text[stop:limit]
    close = scan_json_value(patched, 0)
    if close < 0:
        return None
    try:
        value, repairs = _loads_repaired(patched[:close], allow_trailing=False)
    except (ValueError, RecursionError):
        return None
    if type(value) is not dict:
        return None
    return value, pos + close, [*repairs, STRAY_CLOSER]


def _decode_extent(text: str, pos: int, end: int | None, known_invalid: bool) -> tuple[Any, int, list[str]]:
    """:func:`decode_json_at` before its check for a stray closer."""
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
    if "{{" in text and (undone := _undoubled(text)) is not None:
        return undone, [DOUBLED_BRACES]
    reader = _LenientReader(text)
    try:
        value = reader.read_document(allow_trailing)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if CLOSED_TRUNCATED in reader.repairs and not reader.cut_between_items and text.rstrip(_WS).endswith(_OPEN_ENDS):
        reader.note(CUT_MID_VALUE)
    return value, reader.repairs


def _undoubled(text: str) -> dict[str, Any] | None:
    """An object written with its braces doubled, read with them undone; None when that is not it.

    A template that escapes braces for ``str.format`` shows the model its call
    format as ``{{"name": <function-name>, "arguments": <args-json-object>}}``
    (Qwen2.5's GGUF template does), and models copy it: the outer pair doubled
    (``{{"name": "f", "arguments": {"a": 1}}}``), only its opener, or every brace. No valid JSON
    holds ``{{`` outside a string, so this is tried only on text that failed to
    decode: the outer pair undone, then the opener alone, then every pair.
    """
    stripped = text.strip(_WS)
    candidates = [stripped[1:-1], stripped[1:]] if stripped.startswith("{{") else []  # the outer pair, or only its opener
    candidates.append(stripped.replace("{{", "{").replace("}}", "}"))
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


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
