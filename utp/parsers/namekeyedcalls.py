"""Calls keyed by the tool's name: ``{"get_weather": {"city": "Paris"}}`` where a call object stands.

Some models name the call by its key instead of a name field (Ollama's own
parser reads a whole answer so). Two places besides a whole answer hold such
objects: the string of an answer object (``{"content": "{\\"NAME\\": {…}}"}``,
a JSON-mode reply quoting its call) and the items of a call list
(``{"tool_calls": [{"grep_search": {"pattern": "x"}}]}``, localite's small Ollama
models). The evidence is the offered tool: its exact name as the key, and
arguments that are its parameters.
"""

from __future__ import annotations

from typing import Any

from utp.parsers.base import ParseContext
from utp.parsers.callshape import QUOTED_CALLS, build_call, quoted_calls
from utp.parsers.familykit import declares_all
from utp.types import Diagnostic, ToolCall

#: the repair a call list of name-keyed items records
NAME_KEYED_ITEMS = "each call keyed by its tool's name"


def quoted_name_keyed(value: Any, family: str, raw: str, repairs: list[str], ctx: ParseContext) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """A whole answer ``{"content": "{\\"NAME\\": {…}}"}``: an offered tool's name-keyed call quoted
    as the string of an answer object (see :data:`~utp.parsers.callshape.ANSWER_KEYS`)."""
    inner = quoted_calls(value)
    if type(inner) is not dict or len(inner) != 1:
        return None
    (name, arguments), = inner.items()
    if name not in ctx.by_name or type(arguments) is not dict:
        return None
    call, diagnostics = build_call(name, arguments, family, raw, [*repairs, QUOTED_CALLS])
    return ([call] if call is not None else []), diagnostics


def name_keyed_items(items: Any, family: str, raw: str, repairs: list[str], ctx: ParseContext) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """A call list whose every item is ``{"NAME": {arguments}}``, each NAME an offered tool whose
    parameters the arguments' keys are; anything else in the list leaves it data."""
    if type(items) is not list or not items:
        return None
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    for item in items:
        if type(item) is not dict or len(item) != 1:
            return None
        (name, arguments), = item.items()
        tool = ctx.tool(name)
        if tool is None or type(arguments) is not dict or not declares_all(arguments, tool):
            return None
        call, diags = build_call(name, arguments, family, raw, [*repairs, NAME_KEYED_ITEMS])
        if call is None:
            return None
        calls.append(call)
        diagnostics.extend(diags)
    return calls, diagnostics


def listed_name_keyed(value: Any, list_keys: tuple[str, ...], family: str, raw: str, repairs: list[str], ctx: ParseContext) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """``{"tool_calls": [{"NAME": {…}}]}``: one call-list key (or a plan's key) holding name-keyed items."""
    if type(value) is not dict or len(value) != 1:
        return None
    (key, items), = value.items()
    return name_keyed_items(items, family, raw, repairs, ctx) if key in list_keys else None
