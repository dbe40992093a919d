"""A call list whose calls are strings: ``['find_hotel(location="Miami", pet_friendly=True)']``.

Models asked for a Python list of calls sometimes quote each call, as if
writing the list of source lines a program would evaluate (BFCL's
prompt-mode replies of 2024 models, recorded in BFCL-Result). Such a list is
read only as the whole answer, with tools offered, when every item is a
string holding exactly one call of an offered tool; the repair says so.
Anything else (a note among the items, a name nobody offered, text after the
list) is a list of strings, data.
"""

from __future__ import annotations

from utp.parsers.base import ParseContext
from utp.parsers.pyliteral import LiteralError, RawCall, parse_literal
from utp.parsers.pythoncalls import MAX_SPAN, bracket_end, names_offered_tool, read_calls

#: the repair such a list records
QUOTED_CALLS = "each call written as a string in the list"


def quoted_calls(text: str, pos: int, ctx: ParseContext) -> tuple[int, list[RawCall], list[str]] | None:
    """The list at ``pos`` that ends the answer, as calls: ``(end, calls, repairs)``; else None."""
    if not ctx.has_tools:
        return None
    end = bracket_end(text, pos, MAX_SPAN)
    if end < 0 or text[end:].strip():
        return None
    try:
        items = parse_literal(text[pos:end])[0]
    except LiteralError:
        return None
    if type(items) is not list or not items or not all(type(item) is str for item in items):
        return None
    raws: list[RawCall] = []
    repairs = [QUOTED_CALLS]
    for item in items:
        try:
            read, more, failures = read_calls(item, lenient=lambda name: names_offered_tool(name, ctx))
        except LiteralError:
            return None
        if failures or len(read) != 1 or not names_offered_tool(read[0].name, ctx):
            return None
        raws.extend(read)
        repairs.extend(more)
    return end, raws, repairs
