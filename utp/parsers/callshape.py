"""Which JSON objects are tool calls, and how to read one into a :class:`ToolCall`.

Every JSON-bodied family (hermes, json, fenced, mistral, granite, ...) meets
the same question: is ``{"name": ..., "arguments": ...}`` a call, a tool
*definition* the model echoed from its prompt, a final answer shaped like
JSON, or a fake tool result? Answering it once keeps the families agreeing.
"""

from __future__ import annotations

import re
from typing import Any

from utp.numbers import safe_repr
from utp.parsers.base import Extraction
from utp.parsers.jsonrepair import CLOSED_TRUNCATED, CUT_MID_VALUE, parse_arguments
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: keys that hold the tool name, in the order they are trusted
NAME_KEYS = ("name", "tool_name", "function_name", "tool", "function", "recipient_name")
#: keys that hold the arguments
ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input", "params", "kwargs", "argument", "tool_args", "tool_arguments", "function_args", "function_arguments")
#: keys that may sit next to name/arguments without making the object something else
_META_KEYS = {"id", "type", "index", "call_id", "tool_call_id"}
#: keys of an object that carries a list of calls: xLAM v1's ``{"thought": ..., "tool_calls": [...]}``,
#: a model echoing an OpenAI message (``{"role": "assistant", "tool_calls": [...]}``)
CALL_LIST_KEYS = ("tool_calls", "function_calls")
#: keys of an object that carries one call: OpenAI's legacy ``{"role": "assistant", "function_call":
#: {"name": ..., "arguments": "..."}}`` echoed into the content, and its singular ``tool_call``
CALL_WRAPPER_KEYS = ("function_call", "tool_call")
#: what may sit beside that list without making the object something else
_CALL_LIST_META = {"thought", "thoughts", "reasoning", "content", "role", "type", "id"}
#: LangChain's JSON agent blob ``{"action": NAME, "action_input": ARGS}`` (its JSON chat and
#: structured chat agents): a call only when both keys are there, as that parser requires
AGENT_ACTION_KEY, AGENT_INPUT_KEY = "action", "action_input"
_AGENT_KEYS = {AGENT_ACTION_KEY, AGENT_INPUT_KEY}
#: the pseudo-action LangChain agents use for "no call, here is the answer" (compared without case or spacing)
AGENT_FINAL_ANSWER = "finalanswer"
_NAME_KEY_SET = set(NAME_KEYS)
_WRAPPER_KEY_SET = frozenset(CALL_LIST_KEYS) | frozenset(CALL_WRAPPER_KEYS)
_ARG_KEY_SET = set(ARG_KEYS) | {AGENT_INPUT_KEY}


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
    ``{"function": "NAME", "arguments": ...}``, ``{"tool": ..., "args": ...}`` and
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
        return split_call_object(obj[inner_key], require_arguments)
    if AGENT_INPUT_KEY in keys and keys.keys() - _META_KEYS == _AGENT_KEYS:
        return _agent_action(obj[keys[AGENT_ACTION_KEY]], obj[keys[AGENT_INPUT_KEY]])
    if is_tool_definition(obj):
        return None
    name_key = next((keys[k] for k in NAME_KEYS if k in keys and type(obj[keys[k]]) is str), None)
    if name_key is None:
        return None
    arg_keys = [keys[k] for k in ARG_KEYS if k in keys]
    arg_key = _arguments_key(obj, arg_keys)
    for norm in keys:
        if norm not in _META_KEYS and keys[norm] is not name_key and keys[norm] not in arg_keys:
            return None
    if arg_key is None and arg_keys:
        return None  # two argument keys holding different values: which one the model meant is a guess
    if arg_key is None:
        return None if require_arguments else _checked_name(obj[name_key], {})
    return _checked_name(obj[name_key], obj[arg_key])


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
) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """Calls from a decoded JSON value (one object, a list of them, or a ``tool_calls`` wrapper); None if not calls.

    A list counts only when *every* item is call-shaped: a list that mixes
    calls and other things is data, not a batch of calls.
    """
    items = value if isinstance(value, list) else _call_list(value) or [value]
    if not items:
        return None
    shaped = []
    for item in items:
        split = split_call_object(item, require_arguments)
        if split is None:
            return None
        shaped.append((split, item))
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    truncated = bool(repairs) and CLOSED_TRUNCATED in repairs  # type: ignore[operator]
    if truncated and not _has_argument_key(items[-1]):
        # Cut off before the arguments began (often inside the name): not a call to run.
        diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{family}: output ended inside a call", _short(raw), family))
        shaped.pop()
        if not shaped:
            return calls, diagnostics
    # the cut fell in the last item: the ones before it were written whole
    whole = [r for r in repairs or () if r not in _CUT_REPAIRS] if truncated else repairs
    for index, ((name, raw_args), item) in enumerate(shaped):
        call_id = item.get("id")
        its_repairs = repairs if index == len(items) - 1 else whole
        call, diags = build_call(name, raw_args, family, raw, its_repairs, call_id if type(call_id) is str else None)
        if diags:
            diagnostics.extend(diags)
        if call is not None:
            calls.append(call)
    return calls, diagnostics


#: the repairs of a cut-off value: they belong to the last item of a list the cut fell in
_CUT_REPAIRS = frozenset((CLOSED_TRUNCATED, CUT_MID_VALUE))


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


def _has_argument_key(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    inner = obj.get("function")
    if isinstance(inner, dict):
        return _has_argument_key(inner)
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


#: ``resume_lines``: bad lines skipped (each reported) before the rest of the block is one report
MAX_SKIPPED_LINES = 16


#: the scan lookahead for a tag whose body :func:`extract_tagged_json` reads: it skips whitespace
#: (``\s`` in a str pattern is exactly ``str.isspace``), reports the end of the text as truncated,
#: and returns None unless ``{`` or ``[`` comes next, so nothing else after the tag is a call
TAGGED_JSON_HEAD = r"\s*+(?:[{\[]|\Z)"


def extract_tagged_json(
    family: str,
    text: str,
    pos: int,
    body_start: int,
    closers: tuple[str, ...] = (),
    require_arguments: bool = False,
    separators: str = ",;",
    resume_lines: bool = False,
) -> Extraction | None:
    """The common shape ``TAG <json call or list of calls>... [CLOSER]``.

    Reads one or more JSON values after ``body_start`` (separated by
    whitespace or ``separators``), then swallows one of ``closers`` if it
    follows. Not JSON at all → ``None`` (the tag stays content); JSON that is
    not call-shaped → ``None``; JSON that cannot be read → an UNPARSEABLE
    Extraction consuming up to the closer (or the end), so broken markup is
    reported instead of shown as prose.

    Valid JSON ends where it ends: a closer (or the tag itself) inside one of
    its strings is an argument's text. JSON that needs repairs is read no
    further than where the tag (the text from ``pos`` to ``body_start``) is
    written again; a value cut off there inside a string, or with no call in
    it, is unreadable rather than output cut short.

    ``resume_lines`` (bodies written one call per line, as MiniMax-M1's): after
    a value that cannot be read, reading goes on at the next line that starts
    outside every bracket the bad value opened (so a call nested in a broken
    call's arguments is never lifted out and run); the bad text is reported
    and values from then on are read one per line.
    """
    from utp.parsers.familykit import string_open_at
    from utp.parsers.jsonrepair import decode_json_at
    from utp.parsers.textscan import find_forward

    cursor = skip_ws(text, body_start)
    if cursor >= len(text):
        return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, f"{family}: output ended after the call tag", _short(text[pos:]), family, pos)])
    if text[cursor] not in "{[":
        return None
    opener = text[pos:body_start].strip()
    limit = _first_closer(text, closers, cursor)
    # JSON that needs repairs is read no further than where the tag opens again (found when
    # first needed): a lenient read over a flood of openers would otherwise span the rest of
    # the text at every one.
    reopened = -1
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    end = cursor
    # Repaired values with no reopening tag before the closer are decoded inside one copy of
    # the window up to the closer, made when first needed: decoding each on a fresh slice to
    # the closer would cost the window's length per value (quadratic in the number of values).
    window: str | None = None
    offset = 0
    recovering = False  # a value could not be read: from here on, one value per line
    skipped = 0
    while cursor < limit and text[cursor] in "{[":
        if calls and opener and text.startswith(opener, cursor):
            break  # the tag written again after a call (``[TOOL_CALLS]`` starts like a list): the next block's
        line_end = limit
        if recovering:
            line_end = find_forward(text, "\n", cursor)
            line_end = limit if line_end < 0 or line_end > limit else line_end
        try:
            if recovering:
                value, jend, repairs = decode_json_at(text[cursor:line_end], 0)
                jend += cursor
                if CLOSED_TRUNCATED in repairs and line_end < limit:
                    raise ValueError("value does not close on its line")
            elif (strict := _strict_value(text, cursor, limit, closers, opener)) is not None:
                (value, jend), repairs = strict, []
                if jend > limit:  # the closer was an argument's text: the block ends at a later one
                    limit, window = _first_closer(text, closers, jend), None
            else:
                if opener and reopened < cursor:
                    reopened = find_forward(text, opener, cursor)
                if cursor < reopened < limit:
                    value, jend, repairs = decode_json_at(text, cursor, reopened, known_invalid=True)
                else:
                    if window is None:
                        window, offset = (text[cursor:limit], cursor) if limit < len(text) else (text, 0)
                    value, jend, repairs = decode_json_at(window, cursor - offset, known_invalid=True)
                    jend += offset
                if cursor < reopened <= jend and CLOSED_TRUNCATED in repairs:
                    # The text goes on, so this is no output cut short. Inside a string, the tag
                    # is quoted (a stream that has seen part of the string waits for the rest
                    # instead of running half the arguments); with no call, the value is broken
                    # (a flood of openers is one unreadable span, not a read at every one).
                    if string_open_at(text, cursor, reopened) or calls_from_value(value, family, "", repairs, require_arguments) is None:
                        raise ValueError(f"the value runs into {opener} written again")
        except ValueError as exc:
            skipped += 1
            resume = _resume_point(text, cursor, limit) if resume_lines and skipped <= MAX_SKIPPED_LINES else -1
            if resume < 0:
                stop = limit
                for closer in closers:
                    if text.startswith(closer, stop):
                        stop += len(closer)
                        break
                if not recovering and text[cursor] == "[":
                    # no further than the tag written again: over a flood of openers, linear
                    bound = reopened if cursor < reopened < limit else limit
                    salvaged = salvage_list(family, text, cursor, bound, require_arguments)
                    if salvaged is not None:
                        calls.extend(salvaged[0])
                        diagnostics.extend(salvaged[1])
                        return Extraction(stop, calls, diagnostics)
                start = cursor if recovering else pos
                diagnostics.append(unparseable(family, f"unreadable JSON: {exc}", text[start:stop], start))
                return Extraction(stop, calls, diagnostics)
            diagnostics.append(unparseable(family, f"unreadable JSON (skipped): {exc}", text[cursor:resume].rstrip(), cursor))
            recovering = True
            cursor = end = resume
            continue
        if calls and not _CUT_REPAIRS.isdisjoint(repairs):
            # A further value cut off by the end of the output: undecidable, so it is
            # part of this block (reported), never left behind as half a call in prose.
            diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{family}: output ended inside a call", _short(text[cursor:limit]), family, cursor))
            end = limit
            break
        found = calls_from_value(value, family, text[cursor:jend], repairs, require_arguments)
        if found is None and recovering:
            skipped += 1
            resume = _resume_point(text, cursor, limit) if skipped <= MAX_SKIPPED_LINES else -1
            diagnostics.append(unparseable(family, "a line of the call block is not a call", text[cursor : limit if resume < 0 else resume].rstrip(), cursor))
            end = limit if resume < 0 else resume
            if resume < 0:
                break
            cursor = resume
            continue
        if found is None:
            if calls:
                break
            return None
        calls.extend(found[0])
        diagnostics.extend(found[1])
        end = jend
        nxt = skip_ws(text, jend, limit)
        if nxt < limit and text[nxt] in separators:
            nxt = skip_ws(text, nxt + 1, limit)
        cursor = nxt
    after = skip_ws(text, end)
    for closer in closers:
        if text.startswith(closer, after):
            end = after + len(closer)
            break
    return Extraction(end, calls, diagnostics)


def salvage_list(family: str, text: str, start: int, limit: int, require_arguments: bool) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """The calls of a list that cannot be read whole, one element at a time.

    One call with a broken value (``{"time": 15:30}``) must not cost the calls
    written well beside it (Ollama's Cohere parser reads them the same way); the
    broken element is reported. Each element's extent comes from the
    string-aware bracket scan, so the block is read once. An element that does
    not close before the next element opens a call object (``, {"name": ...``)
    ends there and is read with its closers supplied; such a list ends at the
    ``]`` that ends the text. None when no element is a call (the block is
    reported whole, as before).
    """
    from utp.parsers.jsonrepair import scan_json_value

    list_end = scan_json_value(text[start:limit], 0)
    if list_end < 0:
        list_end = _list_closing_the_text(text, start, limit)
        if list_end < 0:
            return None  # the list itself does not close: cut off, or not a list of calls
    block = text[start + 1 : start + list_end - 1]
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    at = 0
    while True:
        at = skip_ws(block, at)
        while at < len(block) and block[at] == ",":
            at = skip_ws(block, at + 1)
        if at >= len(block) or block[at] != "{":
            break
        end = scan_json_value(block, at)
        following = _NEXT_CALL_ELEMENT.search(block, at + 1)
        cut = following is not None and (end < 0 or end > following.start())
        if cut:
            end = following.start()  # type: ignore[union-attr]
        elif end < 0:
            diagnostics.append(unparseable(family, "a call in the list does not close", block[at:], start + 1 + at))
            break
        found = _element_calls(family, block[at:end], start + 1 + at, require_arguments, diagnostics, cut)
        if found is not None:
            calls.extend(found[0])
            diagnostics.extend(found[1])
        at = end
    return (calls, diagnostics) if calls else None


#: the next element of a call list that opens a call object: where an element left open ends
_NEXT_CALL_ELEMENT = re.compile(r',\s*+\{\s*+"(?:' + "|".join(NAME_KEYS) + r')"\s*+:')


def _list_closing_the_text(text: str, start: int, limit: int) -> int:
    """The length of a list at ``start`` whose brackets do not balance but whose ``]`` ends the text (else -1)."""
    last = len(text[start:limit].rstrip())
    return last if last > 1 and text[start + last - 1] == "]" else -1


def _element_calls(
    family: str, element: str, offset: int, require_arguments: bool, diagnostics: list[Diagnostic], cut: bool
) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """The calls of one list element (reported in ``diagnostics`` when it holds none)."""
    from utp.parsers.jsonrepair import decode_json_at

    try:
        value, _, repairs = decode_json_at(element.rstrip(), 0)
        if cut:
            repairs = [*repairs, "closed before the next call in the list"]
        found = calls_from_value(value, family, element, repairs, require_arguments)
    except ValueError as exc:
        found, reason = None, f"a call in the list cannot be read: {exc}"
    else:
        reason = "an element of the call list is not a call"
    if found is None:
        diagnostics.append(unparseable(family, reason, element, offset))
    return found


def _strict_value(text: str, cursor: int, limit: int, closers: tuple[str, ...], opener: str) -> tuple[Any, int] | None:
    """Valid JSON at ``cursor`` before the closer at ``limit``, or past it when that closer
    stands inside one of its strings (an argument that talks about the tag).

    The second decode runs only when the first was valid up to the closer; it reads
    at most a few closers or openers ahead (a fixed number, so over a flood of
    openers the reads stay linear).
    """
    from utp.parsers.familykit import MAX_CLOSERS_INSIDE, closers_bound
    from utp.parsers.jsonrepair import strict_json_at, strict_json_growing
    from utp.parsers.textscan import nth_forward

    got, ran_out = strict_json_growing(text, cursor, limit)
    if got is not None or not ran_out or limit >= len(text) or not closers:
        return got
    bound = closers_bound(text, closers, cursor)
    if opener:
        again = nth_forward(text, opener, cursor, MAX_CLOSERS_INSIDE)
        bound = bound if again < 0 else min(bound, again)
    return strict_json_at(text, cursor, bound)


def _first_closer(text: str, closers: tuple[str, ...], pos: int) -> int:
    """Where the nearest of ``closers`` at or after ``pos`` starts; the end of the text if none."""
    from utp.parsers.textscan import find_forward

    limit = len(text)
    for closer in closers:
        k = find_forward(text, closer, pos)
        if k >= 0:
            limit = min(limit, k)
    return limit


#: what moves the bracket depth of (possibly broken) JSON, line by line: a string never
#: crosses a line (JSON strings hold no raw newline), so a broken quote spoils one line only
_DEPTH_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|[{}\[\]\n]')


def _resume_point(text: str, start: int, limit: int) -> int:
    """The next line after ``start`` (before ``limit``) opening a JSON value outside every
    bracket opened since ``start``; -1 if none. Linear in the text scanned."""
    depth = 0
    for token in _DEPTH_TOKEN.finditer(text, start, limit):
        mark = token.group()
        if mark == "\n":
            if depth <= 0:
                nxt = skip_ws(text, token.end(), limit)
                if nxt < limit and text[nxt] in "{[":
                    return nxt
        elif mark[0] != '"':
            depth += 1 if mark in "{[" else -1
    return -1
