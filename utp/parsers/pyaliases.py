"""Python-style calls whose names Python cannot spell: hyphenated tool names and keyword-named arguments.

Tools are named ``weather-forecast`` (MCP servers often are) and take
arguments named ``from`` or ``class``; a model calling them Python-style
writes ``[weather-forecast(city="Oslo")]`` and ``book(from="SFO")``, which
``ast`` reads as a subtraction and a syntax error. :func:`aliased` renames
such names, outside string literals, to identifiers no one writes, and
:func:`restore` maps them back on the calls read, so the literal-only reader
stays the one judge of everything else.
"""

from __future__ import annotations

import keyword
import re

from utp.parsers.pycalls import RawCall

#: a call's name with a hyphen in it, where a call's name stands (not after a word, dot or hyphen)
_HYPHENATED_CALL = re.compile(r"(?<![\w.\-])([A-Za-z_]\w*(?:-\w+)+)(?=[ \t]*\()")
#: a keyword argument's name right after ``(`` or ``,``
_KEYWORD_ARGUMENT = re.compile(r"(?<=[(,])([ \t\n]*)([A-Za-z_]\w*)(?=[ \t]*=(?!=))")
_ALIAS = "_utp_alias_{}_"
#: a keyword argument named by a Python keyword, anywhere (strings included): the cheap test
#: that most call lists need no aliasing, so the string-aware pass runs only when one may
_KEYWORD_NAMED_ARGUMENT = re.compile(r"[(,][ \t\n]*+(?:%s)[ \t]*+=(?!=)" % "|".join(keyword.kwlist))
#: a single-quoted or double-quoted string's body, up to its closing quote or the line's end
_STRING_BODY = {quote: re.compile(r"(?:[^%s\\\n]|\\.)*" % quote, re.S) for quote in "'\""}


def aliased(source: str) -> tuple[str, dict[str, str]]:
    """``source`` with hyphenated call names and keyword-named arguments renamed, and alias -> original."""
    if ("-" not in source or _HYPHENATED_CALL.search(source) is None) and _KEYWORD_NAMED_ARGUMENT.search(source) is None:
        return source, {}
    names: dict[str, str] = {}
    out: list[str] = []
    at = 0
    for code_start, code_end, string_end in _segments(source):
        code = _HYPHENATED_CALL.sub(lambda m: _alias(m.group(1), names), source[code_start:code_end])
        code = _KEYWORD_ARGUMENT.sub(lambda m: m.group(1) + (_alias(m.group(2), names) if keyword.iskeyword(m.group(2)) else m.group(2)), code)
        out.append(code)
        out.append(source[code_end:string_end])
        at = string_end
    out.append(source[at:])
    return "".join(out), names


def restore(calls: list[RawCall], names: dict[str, str]) -> list[str]:
    """Put the original names back on ``calls`` (in place); the repairs to record."""
    if not names:
        return []
    for call in calls:
        call.name = names.get(call.name, call.name)
        call.keywords = {names.get(key, key): value for key, value in call.keywords.items()}
    hyphenated = sorted(original for original in names.values() if "-" in original)
    keywords = sorted(original for original in names.values() if "-" not in original)
    notes = [f"hyphenated name {name!r} read as one name" for name in hyphenated]
    return notes + [f"argument named by the Python keyword {name!r} read" for name in keywords]


def _alias(original: str, names: dict[str, str]) -> str:
    for alias, known in names.items():
        if known == original:
            return alias
    alias = _ALIAS.format(len(names))
    names[alias] = original
    return alias


def _segments(source: str) -> list[tuple[int, int, int]]:
    """``(code start, code end = string start, string end)`` for each run of code and the string after it."""
    segments = []
    at, n = 0, len(source)
    while at < n:
        quote = min((i for i in (source.find('"', at), source.find("'", at)) if i != -1), default=n)
        end = _string_end(source, quote) if quote < n else n
        segments.append((at, quote, end))
        at = end
    return segments


def _string_end(source: str, start: int) -> int:
    """Index just past the quoted string opening at ``start`` (or the text's end); a triple quote runs to its triple."""
    quote = source[start]
    triple = quote * 3
    if source.startswith(triple, start):
        close = source.find(triple, start + 3)
        return len(source) if close == -1 else close + 3
    body_end = _STRING_BODY[quote].match(source, start + 1).end()  # type: ignore[union-attr]
    return min(body_end + 1, len(source))  # past the closing quote or the line break
