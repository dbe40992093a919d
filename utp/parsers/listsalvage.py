"""A Python-style call list that is not valid Python as a whole, read item by item.

``[get_weather(city="Oslo"), search(q=@@)]``: one call the model botched must
not cost the calls written well beside it (vLLM's pythonic parsers keep the
readable siblings too). The list is split at its top-level commas (quotes and
brackets honoured) and each ``name(...)`` item is read alone; the broken ones
are returned as failures for the family to report. Only a list whose every item
has a call's shape is read this way.
"""

from __future__ import annotations

import re

from utp.parsers.pyliteral import CallFailure, LiteralError, RawCall, parse_calls

_BRACKET_OR_QUOTE_OR_COMMA = re.compile(r"[\"'()\[\]{},]")
_DOUBLE_BODY = re.compile(r'(?:[^"\\]|\\.)*', re.S)
_SINGLE_BODY = re.compile(r"(?:[^'\\]|\\.)*", re.S)


#: one item of a call list: ``name(`` ... ``)`` and nothing else
_CALL_ITEM = re.compile(r"\s*+[A-Za-z_][\w.]{0,255}+\s*+\(.*\)\s*+\Z", re.S)


def salvage_items(source: str) -> tuple[list[RawCall], list[str], list[CallFailure]] | None:
    """A call list that is not valid Python as a whole, read item by item: one broken call
    (``[f(a=1), g(b=@@)]``) does not cost its siblings. Only a list whose every item is shaped
    ``name(...)`` (split at its top-level commas, quotes honoured) is read so; None otherwise."""
    stripped = source.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    items = _top_level_items(stripped[1:-1])
    if items is None or len(items) < 2 or not all(_CALL_ITEM.match(item) for item in items):
        return None
    calls: list[RawCall] = []
    repairs: list[str] = []
    failures: list[CallFailure] = []
    for item in items:
        try:
            raws, fixes = parse_calls(f"[{item}]")
        except LiteralError as exc:
            failures.append(CallFailure(item.strip().split("(", 1)[0].strip(), item.strip(), str(exc)))
            continue
        calls.extend(raws)
        repairs.extend(fix for fix in fixes if fix not in repairs)
    return (calls, repairs, failures) if calls and failures else None


def _top_level_items(inner: str) -> list[str] | None:
    """``inner`` split at the commas outside every bracket and string; None if its brackets do not balance."""
    items: list[str] = []
    depth, start, i = 0, 0, 0
    while True:
        found = _BRACKET_OR_QUOTE_OR_COMMA.search(inner, i)
        if found is None:
            break
        i = found.start()
        ch = inner[i]
        if ch in "\"'":
            body = (_DOUBLE_BODY if ch == '"' else _SINGLE_BODY).match(inner, i + 1)
            i = body.end() + 1 if body else i + 1
            continue
        if ch == ",":
            if depth == 0:
                items.append(inner[start:i])
                start = i + 1
        else:
            depth += 1 if ch in "([{" else -1
            if depth < 0:
                return None
        i += 1
    if depth != 0:
        return None
    items.append(inner[start:])
    return [item for item in items if item.strip()]
