"""The common case of Python-style calls, read without ``ast``.

``[get_weather(city="Paris", days=3)]`` is what pythonic models write nearly
every time, and compiling it with ``ast.parse`` costs more than everything
else in parsing a response. :func:`read_simple_calls` recognises that common
case with one regular expression — keyword arguments whose values are plain
string literals (no escapes, no prefixes), decimal numbers or the constants
``True``/``False``/``None`` (and JSON's spellings) — and reads it with two
more. Anything else (nested values, positional arguments, escapes, comments)
it leaves alone: it returns ``None`` and :func:`utp.parsers.pyliteral.parse_calls`
takes the ``ast`` road, which decides every other case and every error. So
the answer is always the ``ast`` reader's answer, only sooner; the property
tests hold it to that.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from typing import Any

from utp.numbers import read_number, too_long_digits


@dataclass
class RawCall:
    """One ``name(args)`` read from source: keyword and positional arguments apart."""

    name: str
    keywords: dict[str, Any] = field(default_factory=dict)
    positional: list[Any] = field(default_factory=list)
    #: what was read past to get here (a ``print(...)`` around the call)
    repairs: list[str] = field(default_factory=list)


_CONSTANTS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*(?![^\x00-\x7f])"  # ASCII only: Python NFKC-normalises the rest
_NAME = rf"{_IDENT}(?:\.{_IDENT})*"
_STRING = r"\"[^\"\\\n\r\x00\ud800-\udfff]*\"(?![ \t]*[\"'])|'[^'\\\n\r\x00\ud800-\udfff]*'(?![ \t]*[\"'])"
_NUMBER = r"[-+]?[ \t]*(?:[1-9][0-9]*|0+)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?(?![\w.'\"])"
_FRACTION = r"[-+]?[ \t]*\.[0-9]+(?:[eE][-+]?[0-9]+)?(?![\w.'\"])"
_CONSTANT = r"(?:True|False|None|true|false|null)(?![\w'\"])"
_VALUE = rf"(?:{_STRING}|{_NUMBER}|{_FRACTION}|{_CONSTANT})"
_ARGUMENT = rf"(?P<key>{_IDENT})\s*=\s*(?P<value>{_VALUE})"
_ARGUMENTS = rf"(?:{_ARGUMENT}(?:\s*,\s*{_ARGUMENT})*\s*,?)?".replace("?P<key>", "?:").replace("?P<value>", "?:")
_CALL = rf"(?P<name>{_NAME})[ \t]*\(\s*(?P<args>{_ARGUMENTS})\s*\)"
_BARE_CALL = _CALL.replace("?P<name>", "?:").replace("?P<args>", "?:")
#: a call inside ``print(...)`` (Gemma's tool_code convention): read as the call, and said so
_PRINTED_CALL = rf"(?:print[ \t]*\(\s*{_BARE_CALL}\s*\)|{_BARE_CALL})"
_LIST = rf"\[\s*(?:{_PRINTED_CALL}(?:\s*,\s*{_PRINTED_CALL})*\s*,?\s*)?\]"
_STATEMENT = rf"(?:{_LIST}|{_PRINTED_CALL})"

#: one expression (``ast`` "eval" mode): a call or a list of calls
_EXPRESSION = re.compile(_STATEMENT)
#: statements on their own lines or after ``;`` (``ast`` "exec" mode); no indentation
_STATEMENTS = re.compile(rf"{_STATEMENT}(?:[ \t]*(?:;[ \t]*|\n(?:[ \t]*\n)*){_STATEMENT})*[ \t]*")
_CALLS = re.compile(_CALL)
_ARGUMENT_ITEMS = re.compile(_ARGUMENT)
_ZERO_PADDED = re.compile(r"[-+]?[ \t]*0+[0-9]")
_PRINT_BEFORE = re.compile(r"print[ \t]*\(\s*\Z")
#: what the ``ast`` reader records for a call it took out of ``print(...)``
PRINT_REMOVED = "print(...) around the call removed"


#: what :func:`_value` returns for a number past the float range
_BEYOND_FLOAT = object()


def _value(text: str) -> Any:
    head = text[0]
    if head in "\"'":
        return text[1:-1]
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    number = ("-" if head == "-" else "") + text.lstrip("+-").lstrip(" \t")
    value = read_number(number)
    if value is not None:
        return value
    # more digits than Python converts: kept exactly, as text validation reports by its length;
    # else past the float range (1e999), which the ast reader refuses and says where
    return number if too_long_digits(number) else _BEYOND_FLOAT


def read_simple_calls(source: str, one_per_line: bool = False) -> list[RawCall] | None:
    """The calls in ``source`` when it is the common case, else ``None`` (then ask ``ast``).

    ``one_per_line`` reads statements separated by newlines or ``;`` (the
    ``ast`` "exec" mode); otherwise one expression: a call or a list of calls.
    """
    shape = _STATEMENTS if one_per_line else _EXPRESSION
    if shape.fullmatch(source) is None:
        return None
    calls: list[RawCall] = []
    for found in _CALLS.finditer(source):
        name = found.group("name")
        if any(keyword.iskeyword(part) for part in name.split(".")):
            return None
        call = RawCall(name)
        if _PRINT_BEFORE.search(source, max(0, found.start() - 64), found.start()):
            call.repairs.append(PRINT_REMOVED)
        for argument in _ARGUMENT_ITEMS.finditer(source, found.start("args"), found.end("args")):
            key, value = argument.group("key"), argument.group("value")
            if keyword.iskeyword(key) or key == "__debug__" or key in call.keywords or _ZERO_PADDED.match(value):
                return None  # a SyntaxError in Python: ast says which
            parsed = _value(value)
            if parsed is _BEYOND_FLOAT:
                return None
            call.keywords[key] = parsed
        calls.append(call)
    return calls
