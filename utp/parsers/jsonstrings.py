"""The strings of almost-JSON: where one ends, and what its body says.

Shared by the lenient reader (:mod:`utp.parsers.jsonlenient`) and the scans
that must step over strings without decoding them (:mod:`utp.parsers.jsonrepair`,
Gemma's arguments). A body is decoded as JSON decodes it, except what models
write that JSON refuses: single quotes, raw control characters, ``\\'`` for an
apostrophe, lone backslashes (a Windows path written unescaped).
"""

from __future__ import annotations

import json
import re

_STRING_BODY = {
    '"': re.compile(r'(?:[^"\\]|\\.)*', re.S),
    "'": re.compile(r"(?:[^'\\]|\\.)*", re.S),
}
_SINGLE_TO_DOUBLE = re.compile(r"\\(.)|\"", re.S)
_CONTROL = re.compile(r"[\x00-\x1f]")


def quoted_string_end(text: str, pos: int) -> int:
    """Index past the ``"`` or ``'`` string opening at ``pos`` (escapes honoured), or -1 if it never closes."""
    quote = text[pos]
    body = _STRING_BODY[quote].match(text, pos + 1)
    end = body.end() if body else pos + 1
    if end < len(text) and text[end] == quote:
        return end + 1
    return -1


def _requote(match: re.Match[str]) -> str:
    """Inside a single-quoted string: ``\\'`` is a plain quote, a bare ``"`` needs escaping."""
    escaped = match.group(1)
    if escaped is None:
        return '\\"'
    return "'" if escaped == "'" else "\\" + escaped


#: one escape in a double-quoted body: ``\\'`` is JavaScript's and Python's apostrophe, which JSON
#: refuses (one of them would make the whole string read as raw text, its ``\\n`` kept as written)
_ESCAPE = re.compile(r"\\(.)", re.S)


def _apostrophe(match: re.Match[str]) -> str:
    return "'" if match.group(1) == "'" else match.group(0)


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def decoded_string(raw: str, quote: str) -> tuple[str, bool]:
    """The text of a string body written between ``quote`` quotes, and whether raw control
    characters in it had to be escaped first."""
    if "\\" not in raw and not has_control(raw):
        return raw, False
    escaped = _SINGLE_TO_DOUBLE.sub(_requote, raw) if quote == "'" else _ESCAPE.sub(_apostrophe, raw) if "\\'" in raw else raw
    controls = has_control(escaped)
    if controls:
        escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    try:
        return json.loads(f'"{escaped}"'), controls
    except ValueError:
        # Lone backslashes (Windows paths written unescaped): keep them literally.
        return (raw if quote == "'" else _ESCAPE.sub(_apostrophe, raw)).replace('\\"', '"'), controls
