"""Call objects in a shape of the model's own: arguments beside the name or under a key it chose.

``{"tool_name": "calculator", "expression": "2 * 3"}`` (Langroid's ``request``
key, an agent's ``action``) and ``{"action": "Search", "action_variables":
{...}}`` (Semantic Kernel's planner) carry a call without the arguments key
that makes call JSON recognisable, and ``{"action": {"name": NAME},
"arguments": ...}`` names the tool one level down. The evidence is the offered
tool: its name, and keys that are its parameters. A result the model made up
itself (``<tool_response>{"name": "f", "content": ...}``) is never one.
"""

from __future__ import annotations

import re

from utp.parsers.base import ParseContext
from utp.parsers.callshape import AGENT_ACTION_KEY, ARG_KEYS, FLAT_BESIDE, NAME_KEYS, PURPOSE_KEYS, build_call
from utp.parsers.familykit import declares_all
from utp.parsers.names import resolve_name
from utp.types import Diagnostic, Tool, ToolCall

#: Langroid's tool messages name the tool under ``request``, the arguments beside it
REQUEST_KEY = "request"
#: Home Assistant's models (home-llm) name the action under ``service``: ``{"service": "light.turn_on", "target_device": …}``
SERVICE_KEY = "service"
#: a key the model chose for the arguments, named as arguments are (``action_variables``, ``tool_params``)
_ARGUMENTS_WORD = re.compile(r"(?:\A|[_\-])(?:args?|arguments?|params?|parameters?|inputs?|variables|vars|kwargs)\Z", re.I)

#: the repair a call written flat records
FLAT_ARGUMENTS = "arguments written beside the name (no arguments key)"
#: the repair a call whose arguments sit under a key of the model's own choosing records
OWN_KEY_ARGUMENTS = "arguments under a key of the model's own"
#: the keys that name a flat call's tool
_FLAT_NAME_KEYS = (*NAME_KEYS, REQUEST_KEY, AGENT_ACTION_KEY, SERVICE_KEY)
#: the name keys that say "call this" (Langroid's request, an agent's action): with them a name alone is a call
_CALL_THIS_KEYS = frozenset({REQUEST_KEY, AGENT_ACTION_KEY})


#: what opens a tool result a model writes itself (``<tool_response>{"name": "f", "content": ...}``):
#: an object right after one is that (made-up) result, not a call written flat
_RESULT_OPENER = re.compile(r"(?:<(?:tool_response|tool_result|function_results?|result|observation|output)>|(?:Observation|Result|Output)\s*:)\s*\Z", re.I)


#: keys of a tool result's object (Hermes templates and UTP feed results back as ``{"name", "content"}``)
_RESULT_KEYS = frozenset({"content", "result", "output", "response", "error"})


def after_result_opener(text: str, pos: int) -> bool:
    return _RESULT_OPENER.search(text, max(0, pos - 64), pos) is not None


def flat_calls(value: object, family: str, raw: str, repairs: list[str], ctx: ParseContext, inline: bool = False) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """Calls whose arguments have no arguments key: beside the name (``{"tool_name": "calculator",
    "expression": "2 * 3"}``), or under a key the model chose (``{"action": "Search",
    "action_variables": {"input": "x"}}``, Semantic Kernel's planner). A call only when the name is
    an offered tool's and the keys read as arguments are its parameters (ids and the model's
    reasoning aside); a list counts when every item is one. ``inline`` (mid-sentence) admits only
    the second, under a key named as arguments are."""
    items = value if type(value) is list else [value]
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    for item in items:
        split = _flat_call(item, ctx, inline)
        if split is None:
            return None
        call, diags = build_call(split[0], split[1], family, raw, [*repairs, split[2]])
        if call is None:
            return None
        calls.append(call)
        diagnostics.extend(diags)
    return (calls, diagnostics) if calls else None


#: a key and value by which the object says what it is (wazir's ``{"action": "tool", "tool": "glob", …}``):
#: its kind, not an argument, unless the tool declares that key
_KIND_KEYS = frozenset({"action", "type"})
_KIND_WORDS = frozenset({"tool", "call", "tool_call", "function", "function_call", "tool_use"})


def _name_under(item: dict, key: str) -> str | None:
    """The tool name under ``key``: a string, or an object holding only that name (``{"name": NAME}``)."""
    value = item.get(key)
    if type(value) is dict and len(value) == 1:
        value = value.get("name")
    return value if type(value) is str else None


def _words_beside(key: str, value: object, tool: Tool) -> bool:
    """Why the model makes the call, in words, under a key the tool does not declare (``"explanation":
    "Installing tailwind"`` beside ``"command"``): said to the reader, not an argument."""
    return key in PURPOSE_KEYS and type(value) is str and key not in tool.properties


def _flat_call(item: object, ctx: ParseContext, inline: bool) -> tuple[str, object, str] | None:
    if type(item) is not dict:
        return None
    named = next(((key, name) for key in _FLAT_NAME_KEYS if (name := _name_under(item, key)) is not None), None)
    if named is None:
        return None
    name_key, name = named
    resolved = resolve_name(name, ctx)
    tool = ctx.tool(resolved.name) if resolved.known else None
    if tool is None:
        return None
    arguments = {
        key: val for key, val in item.items()
        if key != name_key and key not in FLAT_BESIDE and not (key in _KIND_KEYS and type(val) is str and val in _KIND_WORDS and key not in tool.properties)
        and not _words_beside(key, val, tool)
    }
    if arguments.keys() & _RESULT_KEYS and (name_key == "name" or not set(arguments) <= set(tool.properties)):
        # ``{"name": "f", "content": ...}`` is how results are fed back: a made-up result, not a call (under another
        # name key, a ``content`` the tool declares is its argument: ``{"tool": "fs.write", "path": …, "content": …}``)
        return None
    if len(arguments) == 1:
        key, inner = next(iter(arguments.items()))
        if type(inner) is dict and key not in tool.properties and (not inline or _ARGUMENTS_WORD.search(key)):
            if declares_all(inner, tool) or (key in ARG_KEYS and set(inner) <= set(tool.properties)):
                return name, inner, OWN_KEY_ARGUMENTS  # under ``arguments`` itself, no arguments is an answer too
    if inline or type(item[name_key]) is not str or not set(arguments) <= set(tool.properties) or not (arguments or name_key in _CALL_THIS_KEYS):
        return None  # a name alone is a call only where the key says "call this" (a bare "name" may be data)
    return name, arguments, FLAT_ARGUMENTS
