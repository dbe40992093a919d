"""Which JSON objects are tool calls, and how to read one into a :class:`ToolCall`.

Every JSON-bodied family (hermes, json, fenced, mistral, granite, ...) meets
the same question: is ``{"name": ..., "arguments": ...}`` a call, a tool
*definition* the model echoed from its prompt, a final answer shaped like
JSON, or a fake tool result? Answering it once keeps the families agreeing.
"""

from __future__ import annotations

import json
from typing import Any

from utp.numbers import safe_repr
from utp.parsers.jsonrepair import CLOSED_TRUNCATED, CUT_MID_VALUE, parse_arguments
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: keys that hold the tool name, in the order they are trusted
#: (a small Gemma 4 writes the name under ``tool_call``, the key its prompt used for the whole call)
NAME_KEYS = ("name", "tool_name", "function_name", "tool", "function", "recipient_name", "tool_call", "tool_call_name")
#: keys that hold the arguments
ARG_KEYS = (
    "arguments", "parameters", "args", "input", "tool_input", "params", "kwargs", "argument", "tool_args", "tool_arguments", "function_args",
    "function_arguments", "tool_call_arguments", "tool_call_args",
)
#: keys that may sit next to name/arguments without making the object something else
_META_KEYS = {"id", "type", "index", "call_id", "tool_call_id"}
#: the model's reasoning written into the call object (ReAct-style JSON agents): beside a name and
#: its arguments it is still a call; beside a name alone it may be any object, so it is not
THOUGHT_KEYS = frozenset({"thought", "thoughts", "reasoning"})
#: what the model says to the user beside a call it makes (a schema that forces
#: ``{"message", "tool_name", "tool_arguments"}``): with an arguments key, and as text, it is still a call
_MESSAGE_KEYS = frozenset({"message", "content", "response", "text", "answer"})
#: why the model makes the call, in its words (amiagi's ``{"tool": f, "args": {…}, "intent": "inspect"}``,
#: refio's ``"intent": "implementation"`` beside its actions): a string beside a name and its arguments
#: (or a list of calls) that runs nothing, as the words to the user do
PURPOSE_KEYS = frozenset({"intent", "reason", "rationale", "purpose", "explanation", "justification"})
#: what may sit beside a flat call's name and arguments (``{"name": "f", "id": 1, "a": 2}``)
FLAT_BESIDE = frozenset(_META_KEYS | THOUGHT_KEYS)
#: which MCP server (or module) the tool lives on: camel-ai's MCP agent writes ``server_idx`` before
#: ``tool_name`` and ``tool_args``, a Rust Ollama client's models ``"module": "math"`` beside the name;
#: routing, not an argument, so it may sit beside them as the ids do
ROUTING_KEYS = frozenset({"server_idx", "server_id", "server_name", "module"})
_META_KEYS |= ROUTING_KEYS
#: what may sit beside a name and an arguments key
_BESIDE_NAME_AND_ARGUMENTS = frozenset(_META_KEYS | THOUGHT_KEYS | _MESSAGE_KEYS | PURPOSE_KEYS)
#: the keys beside a call whose value must be words, not data
_WORDS_KEYS = _MESSAGE_KEYS | PURPOSE_KEYS
#: the keys that make an object a JSON Schema rather than argument values
_SCHEMA_KEYS = frozenset({"type", "properties", "required", "$schema"})
#: ``"type"`` values by which an object says it is a call: then a name alone is a call without arguments
CALL_TYPES = frozenset({"tool_call", "function_call", "tool_use"})
#: keys of an object that carries a list of calls: xLAM v1's ``{"thought": ..., "tool_calls": [...]}``,
#: a model echoing an OpenAI message (``{"role": "assistant", "tool_calls": [...]}``), an agent's
#: ``{"actions": [...], "response": "…"}`` (every item must still be call-shaped)
CALL_LIST_KEYS = ("tool_calls", "function_calls", "actions")
#: keys of an object that carries one call: OpenAI's legacy ``{"role": "assistant", "function_call":
#: {"name": ..., "arguments": "..."}}`` echoed into the content, its singular ``tool_call``, and the
#: ``command`` of agents' JSON replies (SWE-agent's ``{"thought": ..., "command": {call}}``), and the
#: ``tool_request`` mcp-client-for-ollama asks its models for (``{"thoughts": ..., "tool_request": {call}}``),
#: and Gemini's ``functionCall`` (keys compare lower-cased), and its ``toolCall`` as UI-TARS' Tarko engine asks for it
CALL_WRAPPER_KEYS = ("function_call", "functioncall", "tool_call", "toolcall", "command", "tool_request")
#: what may sit beside that list without making the object something else (the words to the user
#: under any of the keys agents give them: ``{"assistant_message": "On it.", "tool_calls": […]}``)
_CALL_LIST_META = {
    "thought", "thoughts", "reasoning", "content", "answer", "response", "message", "assistant_message", "reply", "text",
    "role", "type", "id", *PURPOSE_KEYS,
}
#: Text Generation Inference's tool grammar makes the model write ``{"function": {"_name": NAME,
#: **arguments}}`` (its "_name" cannot clash with an argument called "name")
TGI_NAME_KEY = "_name"
#: the pseudo-tool TGI adds to that grammar for "no call, here is the answer" (its ``content``)
TGI_NO_TOOL = "no_tool"
#: LangChain's JSON agent blob ``{"action": NAME, "action_input": ARGS}`` (its JSON chat and
#: structured chat agents): a call only when both keys are there, as that parser requires
AGENT_ACTION_KEY, AGENT_INPUT_KEY = "action", "action_input"
_AGENT_KEYS = {AGENT_ACTION_KEY, AGENT_INPUT_KEY}
#: the pseudo-action LangChain agents use for "no call, here is the answer" (compared without case or spacing)
AGENT_FINAL_ANSWER = "finalanswer"
_WRAPPER_KEY_SET = frozenset(CALL_LIST_KEYS) | frozenset(CALL_WRAPPER_KEYS)
_ARG_KEY_SET = set(ARG_KEYS) | {AGENT_INPUT_KEY}


#: a key whose value says what the object is, and the values by which it says "a call": a router's
#: ``{"action": "call", "tool": NAME, "arguments": {…}}`` (beside ``{"action": "delegate", …}``)
DISCRIMINATOR_KEYS = frozenset({"action", "kind", "mode", "intent", "decision"})
CALL_WORDS = frozenset({"call", "tool_call", "function_call", "call_tool", "use_tool", "tool_use", "invoke", "tool", "function"})


def _says_call(norm_key: str, value: Any) -> bool:
    """Is this member the object's own word that it is a call (``"action": "call"``)?"""
    return norm_key in DISCRIMINATOR_KEYS and type(value) is str and value.strip().lower() in CALL_WORDS


def _norm_key(key: Any) -> str:
    return key.strip().lower() if isinstance(key, str) else ""


def is_tool_definition(obj: dict[str, Any]) -> bool:
    """A tool *definition* (the model echoing its prompt), not a call."""
    if obj.get("type") == "function" and isinstance(obj.get("function"), dict):
        return is_tool_definition(obj["function"])
    params = obj.get("parameters", obj.get("input_schema", obj.get("inputSchema")))
    if isinstance(params, dict) and (params.get("type") == "object" and "properties" in params):
        return "arguments" not in obj
    return False


def split_call_object(obj: Any, require_arguments: bool = False) -> tuple[str, Any] | None:
    """``(name, raw_arguments)`` when ``obj`` is shaped like one call, else ``None``.

    Accepted: ``{"name", "arguments"|"parameters"|...}``, the OpenAI item
    ``{"type": "function", "function": {...}}``, ``{"function": {"name", ...}}``,
    ``{"function": "NAME", "arguments": ...}``, TGI's ``{"function": {"_name": NAME, **arguments}}``,
    ``{"tool": ..., "args": ...}`` and
    LangChain's agent blob ``{"action": NAME, "action_input": ...}`` (whose
    ``"Final Answer"`` action is an answer, not a call). Extra keys besides ids
    and types make it something else (an answer that happens to have a
    ``name``). ``require_arguments`` refuses a bare ``{"name": ...}`` where an
    argument key is needed to be sure.
    """
    if type(obj) is not dict or not obj:
        return None
    # Fast path: the shape nearly every model writes.
    if len(obj) <= 2:
        name = obj.get("name")
        if type(name) is str and name:
            if len(obj) == 1:
                return None if require_arguments else _checked_name(name, {})
            if "arguments" in obj:
                return _checked_name(name, obj["arguments"])
            params = obj.get("parameters")
            if params is not None and not (type(params) is dict and params.get("type") == "object" and "properties" in params):
                return _checked_name(name, params)
    keys = {(k.strip().lower() if type(k) is str else ""): k for k in obj}
    inner_key = keys.get("function")
    if inner_key is not None and type(obj[inner_key]) is dict and len(keys.keys() - _META_KEYS) == 1:
        inner = obj[inner_key]
        if type(inner.get(TGI_NAME_KEY)) is str:  # TGI's grammar: the arguments beside the name
            if inner[TGI_NAME_KEY] == TGI_NO_TOOL:
                return None
            return _checked_name(inner[TGI_NAME_KEY], {k: v for k, v in inner.items() if k != TGI_NAME_KEY})
        return split_call_object(inner, require_arguments)
    if AGENT_INPUT_KEY in keys and keys.keys() - _META_KEYS - THOUGHT_KEYS == _AGENT_KEYS:
        return _agent_action(obj[keys[AGENT_ACTION_KEY]], obj[keys[AGENT_INPUT_KEY]])
    if AGENT_ACTION_KEY in keys and len(rest := keys.keys() - _META_KEYS - THOUGHT_KEYS - {AGENT_ACTION_KEY}) == 1 and rest <= _ARG_KEY_SET:
        # the blob with its input under an arguments key (``{"action": "f", "params": {...}}``)
        return _agent_action(obj[keys[AGENT_ACTION_KEY]], obj[keys[rest.pop()]])
    if is_tool_definition(obj):
        return None
    name_key = next((keys[k] for k in NAME_KEYS if k in keys and type(obj[keys[k]]) is str), None)
    if name_key is None:
        return None
    arg_keys = [keys[k] for k in ARG_KEYS if k in keys]
    arg_key = _arguments_key(obj, arg_keys)
    says_call = any(_says_call(norm, obj[key]) for norm, key in keys.items())
    # with an arguments key, or the object's own word that it is a call, words and reasons may sit beside the name
    beside = _BESIDE_NAME_AND_ARGUMENTS if arg_keys or says_call else _META_KEYS
    for norm in keys:
        if norm in NAME_KEYS and obj[keys[norm]] == obj[name_key]:
            continue  # the name written again under another name key (``"name": "f", "tool": "f"``)
        if norm not in beside and keys[norm] is not name_key and keys[norm] not in arg_keys and not _says_call(norm, obj[keys[norm]]):
            return None
        if norm in _WORDS_KEYS and obj[keys[norm]] is not None and type(obj[keys[norm]]) is not str:
            return None  # ``"content": {"status": …}`` beside the call: a result the model made up, not words to the user
    if arg_key is None and arg_keys:
        return None  # two argument keys holding different values: which one the model meant is a guess
    if arg_key is None:
        declared = says_call or obj.get(keys.get("type", "type")) in CALL_TYPES
        return None if require_arguments and not declared else _checked_name(obj[name_key], {})
    return _checked_name(obj[name_key], obj[arg_key])


def announced_call_arguments(value: Any, name: str, tool: Any) -> dict[str, Any] | None:
    """The arguments when the object where ``name``'s arguments belong is the whole call again.

    Formats that name the tool outside the object (GLM-4's ``NAME`` line,
    gpt-oss's ``to=NAME`` recipient) get ``{"name": NAME, "arguments": {...}}``
    (an id beside it maybe) from models used to JSON calls: unless ``tool``
    itself takes a ``name``, that object is the call, not its arguments.
    """
    if type(value) is not dict or value.get("name") != name or not set(value) <= {"name", "arguments", "parameters", *_META_KEYS}:
        return None
    arguments = value.get("arguments", value.get("parameters"))
    if type(arguments) is not dict:
        return None
    return None if tool is not None and "name" in tool.properties else arguments


#: the repair a call object unwrapped to its arguments records
ANNOUNCED_CALL = "the call object written where its arguments belong, unwrapped to its arguments"


def definition_shaped_call(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` of a call written in its definition's shape, else None.

    ``{"name": "file_ticket", "description": "...", "parameters": {"summary": "wifi down"}}`` (or
    inside ``{"type": "function", "function": ...}``): the model filled the schema's place with
    values. Only the caller knows whether the object is the whole answer, which this needs to be a
    call: among echoed definitions the same line is a garbled echo.
    """
    if type(obj) is dict and obj.get("type") == "function" and type(obj.get("function")) is dict and obj.keys() <= {"type", "function"}:
        obj = obj["function"]
    if type(obj) is not dict or not obj.keys() <= {"name", "description", "parameters", "arguments"} or "description" not in obj:
        return None
    name, values = obj.get("name"), obj.get("parameters", obj.get("arguments"))
    if type(name) is not str or type(values) is not dict or not values or _SCHEMA_KEYS & values.keys():
        return None
    if any(type(value) is dict and _SCHEMA_KEYS & value.keys() for value in values.values()):
        return None  # values that are schemas themselves: a garbled definition
    return _checked_name(name, values)


def _arguments_key(obj: dict[Any, Any], present: list[Any]) -> Any:
    """The one argument key to read among those present (None: none, or no single one).

    Templates and models sometimes write an empty ``"parameters": {}`` beside
    the real ``"arguments"``: empty values say nothing, so the one holding
    something is read (equal values are one). Two that disagree are left
    unread rather than guessed between.
    """
    if len(present) <= 1:
        return present[0] if present else None
    meant = [key for key in present if obj[key] not in (None, "", "{}", {}, [])]
    if not meant:
        return present[0]
    if all(obj[key] == obj[meant[0]] for key in meant[1:]):
        return meant[0]
    return None


def _agent_action(action: Any, action_input: Any) -> tuple[str, Any] | None:
    """A LangChain agent blob's call; None for its ``Final Answer`` (the agent is done) or a non-string action."""
    if type(action) is not str or "".join(action.split()).lower() == AGENT_FINAL_ANSWER:
        return None
    return _checked_name(action, action_input)


def _checked_name(name: str, arguments: Any) -> tuple[str, Any] | None:
    name = name.strip()
    if not name or len(name) > 200 or "\n" in name:
        return None
    return name, arguments


def build_call(
    name: str,
    raw_arguments: Any,
    family: str,
    raw: Any,
    repairs: list[str] | None = None,
    call_id: str | None = None,
) -> tuple[ToolCall | None, list[Diagnostic]]:
    """A :class:`ToolCall` with its arguments decoded; or a diagnostic saying why not."""
    if type(raw_arguments) is dict:
        arguments, more = raw_arguments, ()
    else:
        try:
            arguments, more = parse_arguments(raw_arguments)
        except ValueError as exc:
            return None, [
                Diagnostic(DiagnosticKind.UNPARSEABLE, f"{family}: arguments of {name!r}: {exc}", _short(raw), family)
            ]
    fixes = list(repairs) if repairs else []
    for repair in more:
        if repair not in fixes:
            fixes.append(repair)
    call = ToolCall(name, arguments, call_id, raw, family, fixes)
    return call, (repaired_diagnostics(call) if fixes else [])


def repaired_diagnostics(call: ToolCall) -> list[Diagnostic]:
    if not call.repairs:
        return []
    return [
        Diagnostic(
            DiagnosticKind.REPAIRED,
            f"{call.format}: read {call.name!r} after: {', '.join(call.repairs)}",
            _short(call.raw),
            call.format,
        )
    ]


def calls_from_value(
    value: Any,
    family: str,
    raw: str,
    repairs: list[str] | None = None,
    require_arguments: bool = False,
    salvage: bool = False,
) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """Calls from a decoded JSON value (one object, a list of them, or a ``tool_calls`` wrapper); None if not calls.

    A list counts only when *every* item is call-shaped: a list that mixes
    calls and other things is data, not a batch of calls. With ``salvage``
    (the list stands inside a call marker, so the model said these are calls)
    the items that are not calls are reported and their siblings kept: one
    unreadable call must not cost the ones written well beside it. A
    ``tool_calls`` key is such a marker written in JSON.
    """
    if (quoted := quoted_calls(value)) is not None:
        value, repairs = quoted, [*(repairs or ()), QUOTED_CALLS]
    wrapped = None if isinstance(value, list) else _call_list(value)
    salvage = salvage or wrapped is not None
    items = value if isinstance(value, list) else wrapped or [value]
    if not items:
        return None
    items, moved = _names_put_back(items, inside_marker=salvage)
    if moved:
        repairs = [*(repairs or ()), *moved]
    truncated = bool(repairs) and CLOSED_TRUNCATED in repairs  # type: ignore[operator]
    shaped = []
    skipped: list[Diagnostic] = []
    for index, item in enumerate(items):
        split = split_call_object(item, require_arguments)
        if split is None:
            if not salvage or len(items) < 2:
                return None
            cut = truncated and index == len(items) - 1
            kind, what = (DiagnosticKind.TRUNCATED, "ended inside") if cut else (DiagnosticKind.UNPARSEABLE, "is not a call in")
            skipped.append(Diagnostic(kind, f"{family}: item {index + 1} {what} the call list (skipped; the others are read)", _short(item), family))
            continue
        shaped.append((split, item))
    if not shaped:
        return None
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = skipped
    if truncated and shaped[-1][1] is items[-1] and not has_argument_key(items[-1]):
        # Cut off before the arguments began (often inside the name): not a call to run.
        diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{family}: output ended inside a call", _short(raw), family))
        shaped.pop()
        if not shaped:
            return calls, diagnostics
    # the cut fell in the last item: the ones before it were written whole
    whole = [r for r in repairs or () if r not in CUT_REPAIRS] if truncated else repairs
    for (name, raw_args), item in shaped:
        call_id = item.get("id")
        its_repairs = repairs if item is items[-1] else whole
        call, diags = build_call(name, raw_args, family, raw, its_repairs, call_id if type(call_id) is str else None)
        if diags:
            diagnostics.extend(diags)
        if call is not None:
            calls.append(call)
    return calls, diagnostics


#: the repairs a call whose name was written out of place records
NAME_AS_QUOTED_CALL = "the name written as a quoted call object, read from inside it"
NAME_AMONG_ARGUMENTS = "the name written among the arguments, moved out of them"


def _names_put_back(items: list[Any], inside_marker: bool) -> tuple[list[Any], list[str]]:
    """The call objects with a name written out of place put back where it belongs, and the repairs said.

    A model that double-encodes writes the name as a quoted call object (``"name": "{\"name\": \"todo\",
    \"arguments\": {…}}"``): its name, and its arguments when the outer ones are empty. Inside a call
    marker, an object with nothing but arguments holding the name (``{"arguments": {…, "name": "task"}}``)
    or holding the whole call (``{"arguments": {"name": "f", "arguments": {…}}}``) is that call: the
    marker says a call is there, and no other key could name it. Outside one, such an object is data.
    """
    out, repairs = [], []
    for item in items:
        fixed, repair = _name_put_back(item, inside_marker) if type(item) is dict else (item, None)
        out.append(fixed)
        if repair is not None and repair not in repairs:
            repairs.append(repair)
    return (out, repairs) if repairs else (items, [])


def _name_put_back(obj: dict[Any, Any], inside_marker: bool) -> tuple[Any, str | None]:
    name = obj.get("name")
    if type(name) is str and name.startswith("{") and set(obj) <= {"name", "arguments", *_META_KEYS}:
        try:
            inner = json.loads(name)
        except ValueError:
            return obj, None
        if type(inner) is not dict or type(inner.get("name")) is not str or not set(inner) <= {"name", "arguments"}:
            return obj, None
        arguments = obj.get("arguments") or inner.get("arguments", {})
        return {"name": inner["name"], "arguments": arguments}, NAME_AS_QUOTED_CALL
    if not inside_marker or "name" in obj:
        return obj, None
    arg_key = next((k for k in ("arguments", "parameters") if k in obj), None)
    inner = obj.get(arg_key) if arg_key is not None else None
    if type(inner) is not dict or not set(obj) - {arg_key} <= _META_KEYS or type(inner.get("name")) is not str:
        return obj, None
    if set(inner) <= {"name", "arguments", "parameters"} and len(inner) == 2:
        return inner, NAME_AMONG_ARGUMENTS  # the whole call written where its arguments belong
    return {"name": inner["name"], "arguments": {k: v for k, v in inner.items() if k != "name"}}, NAME_AMONG_ARGUMENTS


#: the repairs of a cut-off value: they belong to the last item of a list the cut fell in
CUT_REPAIRS = frozenset((CLOSED_TRUNCATED, CUT_MID_VALUE))


#: the keys under which a model asked for a JSON answer writes its whole reply (Ollama's ``format:
#: "json"``): ``{"content": "{\"name\": …}"}``, the call quoted as a string
ANSWER_KEYS = frozenset({"content", "response", "answer", "text"})
#: the repair that says so
QUOTED_CALLS = "call JSON quoted as a string under an answer key"


def quoted_calls(obj: Any) -> Any | None:
    """The JSON value quoted as the one string of an answer object (``{"content": "{…}"}``), when
    that string is a JSON object or list; None otherwise (the callers still ask whether it holds calls)."""
    if type(obj) is not dict or len(obj) != 1:
        return None
    (key, inner), = obj.items()
    if _norm_key(key) not in ANSWER_KEYS or type(inner) is not str or inner.lstrip()[:1] not in ("{", "["):
        return None
    try:
        decoded = json.loads(inner)
    except ValueError:
        return None
    return decoded if type(decoded) in (dict, list) else None


def _call_list(obj: Any) -> list[Any] | None:
    """The calls under ``tool_calls`` / ``function_calls`` (a list) or ``function_call`` /
    ``tool_call`` (one object) when ``obj`` is only such a wrapper."""
    if type(obj) is not dict or len(obj) > len(_CALL_LIST_META) + 1:
        return None
    keys = {_norm_key(k): k for k in obj}
    for wrapper in keys.keys() & _WRAPPER_KEY_SET:
        inner = obj[keys[wrapper]]
        if not inner or not keys.keys() - {wrapper} <= _CALL_LIST_META:
            continue
        if type(inner) is list and wrapper in CALL_LIST_KEYS:
            return inner
        if type(inner) is dict and wrapper in CALL_WRAPPER_KEYS:
            return [inner]
    return None


def has_argument_key(obj: Any) -> bool:
    """Does ``obj`` (or the object under its ``function`` key) carry an arguments key: shaped like a call?"""
    if not isinstance(obj, dict):
        return False
    inner = obj.get("function")
    if isinstance(inner, dict):
        return has_argument_key(inner)
    return any(_norm_key(k) in _ARG_KEY_SET for k in obj)


def _short(raw: Any, limit: int = 300) -> str:
    text = raw if isinstance(raw, str) else safe_repr(raw)
    return text if len(text) <= limit else text[:limit] + "…"


def unparseable(family: str, reason: str, raw: str, offset: int | None = None) -> Diagnostic:
    return Diagnostic(DiagnosticKind.UNPARSEABLE, f"{family}: {reason}", _short(raw), family, offset)


def skip_ws(text: str, pos: int, limit: int | None = None) -> int:
    end = len(text) if limit is None else limit
    while pos < end and text[pos].isspace():
        pos += 1
    return pos
