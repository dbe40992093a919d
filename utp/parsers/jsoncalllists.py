"""Lists of calls a bare-JSON answer may hold: a list with one broken item, and a "plan" object.

Where the json family finds a list of call objects that does not read whole,
or one object whose single key holds a list of calls, these decide whether the
calls are the response's: only when every call read names an offered tool, and
(for a plan) the key does not call the list results, history or examples.
"""

from __future__ import annotations

import re

from utp.parsers.base import ParseContext
from utp.parsers.callshape import calls_from_value, has_argument_key
from utp.parsers.namekeyedcalls import name_keyed_items
from utp.parsers.names import resolve_name
from utp.types import Diagnostic, ToolCall

#: an object whose one key holds a list of objects (a plan of calls), as a scan lookahead and a pattern
PLAN_HEAD = r"""\s*+"[A-Za-z_][\w\-]{0,40}+"\s*+:\s*+\[\s*+\{"""
PLAN_START = re.compile(PLAN_HEAD)


def offered(call: ToolCall, ctx: ParseContext) -> bool:
    """Does ``call`` name an offered tool?"""
    return ctx.has_tools and resolve_name(call.name, ctx).known


def all_offered(calls: list[ToolCall], ctx: ParseContext) -> bool:
    """Does every one of ``calls`` name an offered tool (there being some)?"""
    return bool(calls) and all(offered(call, ctx) for call in calls)


def salvaged_answer_list(value: list, family: str, raw: str, repairs: list[str], ctx: ParseContext) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """A list where calls stand (the answer's start, after a lead-in or a marker, on a line of its
    own), every item shaped like a call (an arguments key) but one that cannot be read
    (``"name": 123``): the others, when every one of them calls an offered tool (the unreadable
    one reported). A list mixing calls with records stays data."""
    if not all(has_argument_key(item) for item in value):
        return None
    found = calls_from_value(value, family, raw, repairs, salvage=True)
    if found is None or not all_offered(found[0], ctx):
        return None
    return found


#: a plan's key that names its list as what came back or what was once done (``{"results": [...]}``,
#: ``{"history": [...]}``), or a sample: calls recorded, not calls to make
NOT_A_PLAN_KEY = re.compile(r"(?:results?|outputs?|responses?|observations?|history|examples?|samples?)", re.IGNORECASE)


def plan_calls(value: object, family: str, raw: str, repairs: list[str], ctx: ParseContext) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """The calls of a plan object (one key, a list of calls), when every one names an offered tool
    and the key does not call them results, history or examples."""
    if type(value) is not dict or len(value) != 1 or NOT_A_PLAN_KEY.fullmatch(next(iter(value))):
        return None
    items = next(iter(value.values()))
    found = calls_from_value(items, family, raw, repairs, require_arguments=False) if type(items) is list else None
    found = found or name_keyed_items(items, family, raw, repairs, ctx)
    if found is None or not all_offered(found[0], ctx):
        return None
    return found


#: a plan object's start as far as written (streaming: hold it while it may still become one)
PLAN_SO_FAR = re.compile(r"""\s*(?:"(?:[A-Za-z_][\w\-]{0,40}(?:"\s*(?::\s*(?:\[\s*(?:\{)?)?)?)?)?)?""")


def plan_may_start(text: str, pos: int) -> bool:
    """Is a plan object's start at ``pos`` (whole, or cut off by the text's end)?"""
    if PLAN_START.match(text, pos):
        return True
    partial = PLAN_SO_FAR.match(text, pos)
    return partial is not None and partial.end() == len(text)
