"""Linear-time text searches for call families.

The composite asks a family to ``extract`` at *every* trigger position. A
family that looks for its closing tag with a plain ``str.find`` scans to the
end of the text each time the tag is missing, so ``<tag>`` repeated n times
costs n² work. :func:`find_forward` remembers the answer of the last search for
each needle in the same text: a later search that starts inside the range the
previous one already covered gets the same answer without scanning again, and
because the composite moves left to right, all searches for one needle over
one text cost O(len(text)) together.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left

_local = threading.local()


def _cache() -> dict[str, tuple[str, int, int]]:
    cache = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = {}
    return cache


def find_forward(text: str, needle: str, pos: int) -> int:
    """``text.find(needle, pos)``, amortised linear across left-to-right calls."""
    try:
        cache = _local.cache
    except AttributeError:
        cache = _local.cache = {}
    hit = cache.get(needle)
    if hit is not None:
        cached_text, start, found = hit
        if cached_text is text and start <= pos and (found == -1 or pos <= found):
            return found
    found = text.find(needle, pos)
    cache[needle] = (text, pos, found)
    return found


def nth_forward(text: str, needle: str, pos: int, n: int) -> int:
    """Index of the ``n``-th non-overlapping ``needle`` at or after ``pos`` (-1 if fewer).

    For a needle that cannot overlap itself (every tag), as ``str.find`` repeated ``n`` times.

    Occurrences found are remembered per needle for the same text, so asking
    at each opener in turn, left to right, costs one pass over the text in all.
    The record starts where the first question about a text starts (a stream
    asks about a fresh, longer text at each read, always near its end, so
    starting at 0 would rescan everything before the span every time).
    """
    table = getattr(_local, "occurrences", None)
    if table is None:
        table = _local.occurrences = {}
    entry = table.get(needle)
    if entry is None or entry[0] is not text or pos < entry[3]:
        entry = table[needle] = (text, [], [pos], pos)
    _, found, scanned, _ = entry
    # the list holds every hit at or after the record's start, in order (a needle that cannot
    # overlap itself has the same hits wherever the search starts)
    index = bisect_left(found, pos)
    while len(found) < index + n and scanned[0] >= 0:
        at = text.find(needle, scanned[0])
        if at < 0:
            scanned[0] = -1
            break
        found.append(at)
        scanned[0] = at + len(needle)
        if at < pos:
            index = len(found)
    return found[index + n - 1] if len(found) >= index + n else -1


def find_first(text: str, needles: tuple[str, ...], pos: int) -> tuple[int, str]:
    """The earliest of several needles at or after ``pos``: ``(index, needle)`` or ``(-1, "")``."""
    best, which = -1, ""
    for needle in needles:
        at = find_forward(text, needle, pos)
        if at != -1 and (best == -1 or at < best):
            best, which = at, needle
    return best, which


def skip_space(text: str, pos: int, limit: int | None = None) -> int:
    """Index of the first non-whitespace character at or after ``pos`` (bounded by ``limit``)."""
    end = len(text)
    if limit is not None and limit < end:
        end = limit
    while pos < end and text[pos].isspace():
        pos += 1
    return pos


def skip_blanks(text: str, pos: int) -> int:
    """``pos`` moved forward over spaces and tabs (not line breaks: the line's end still counts)."""
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def space_before(text: str, pos: int, floor: int = 0) -> int:
    """``pos`` moved back over whitespace, not below ``floor``: where the text before it ends."""
    while pos > floor and text[pos - 1].isspace():
        pos -= 1
    return pos


def blanks_before(text: str, pos: int) -> int:
    """``pos`` moved back over spaces and tabs: where a marker's line indentation begins."""
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos


def bounded_find(text: str, needle: str, pos: int, max_distance: int) -> int:
    """``needle`` within ``max_distance`` characters of ``pos``, else -1 (constant work)."""
    return text.find(needle, pos, pos + max_distance + len(needle))


def search_forward(text: str, pattern: re.Pattern[str], pos: int) -> re.Match[str] | None:
    """``pattern.search(text, pos)``, amortised linear across left-to-right calls, as :func:`find_forward`."""
    cache = getattr(_local, "matches", None)
    if cache is None:
        cache = _local.matches = {}
    hit = cache.get(pattern)
    if hit is not None:
        cached_text, start, found = hit
        if cached_text is text and start <= pos and (found is None or pos <= found.start()):
            return found
    found = pattern.search(text, pos)
    cache[pattern] = (text, pos, found)
    return found


def clear_cache() -> None:
    """Drop remembered searches (they hold a reference to the last text)."""
    _cache().clear()
    getattr(_local, "occurrences", {}).clear()
    getattr(_local, "matches", {}).clear()


def is_proper_prefix(text: str, pos: int, literal: str) -> bool:
    """Is ``text[pos:]`` a proper prefix of ``literal`` (so more input could still complete it)?"""
    rest = len(text) - pos
    return rest < len(literal) and literal.startswith(text[pos:])


def ends_inside(text: str, pos: int, *literals: str) -> bool:
    """Does the text end at ``pos``, or part-way into one of ``literals`` written there (cut off)?"""
    return any(is_proper_prefix(text, pos, literal) for literal in literals if literal)
