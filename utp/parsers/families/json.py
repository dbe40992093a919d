"""A bare JSON call in the content: ``{"name": ..., "arguments": {...}}`` or a list of them.

Llama 3.x writes ``{"name": ..., "parameters": {...}}`` with no wrapper when
its template asks for JSON; xLAM writes ``[{"name": ..., "arguments": ...}]``;
small models reply "Here is the revised tool call:" and then the JSON. But
JSON in an answer is often *not* a call: a final answer shaped like JSON
(``{"message": "Hello"}``), a hallucinated tool *result*, a code sample in an
explanation. So position and shape decide, before any full parse:

* the object is call-shaped (name + arguments keys, nothing else that would
  make it data), and
* it starts the content, or it follows prose ending in ``:`` ("Here is the
  call:", on the same line or the next) and nothing but more calls follows it
  (a model echoing its prompt's "reply exactly like this:\n{...}\nRules: ..."
  is not calling), or the tools offered include its name (or a close
  misspelling) and it stands on its own line.

A bare ``{"name": "x"}`` with no arguments key counts only when ``x`` is an
offered tool. Calls after the first may follow separated by ``;`` or lines.

Where the tools are offered, what names one of them settles more:

* a call object (or a list of them) in the middle of a sentence is a call when
  it reads as valid JSON (or a Python dict as ``repr`` prints it) with an
  arguments key and names an offered tool;
* an object with one key holding a list of calls (a "plan": ``{"plan":
  [{"name": ..., "arguments": ...}, ...]}``) is those calls when every one of
  them names an offered tool.

A list of calls that closes but holds one unreadable call keeps its readable
siblings (the bad one is reported).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family, static_triggers
from utp.parsers.callends import END_OF_TURN, past_orphan_closer
from utp.parsers.callshape import (
    AGENT_ACTION_KEY, AGENT_INPUT_KEY, CALL_LIST_KEYS, CALL_WRAPPER_KEYS, NAME_KEYS, ROUTING_KEYS, THOUGHT_KEYS, build_call, calls_from_value,
    definition_shaped_call, skip_ws, unparseable,
)
from utp.parsers.jsoncalllists import PLAN_HEAD, PLAN_START, offered, plan_calls, plan_may_start, salvaged_answer_list
from utp.parsers.taggedjson import salvage_list
from utp.parsers.codefences import inside_fence
from utp.parsers.flatcalls import REQUEST_KEY, SERVICE_KEY, after_result_opener, flat_calls
from utp.parsers.leadins import ends_with_colon, introduces_a_call
from utp.parsers.familykit import BRACKET_MARKER, MAX_CLOSERS_INSIDE, read_json_at
from utp.parsers.namekeyedcalls import listed_name_keyed, quoted_name_keyed
from utp.parsers.jsonrepairnames import PYTHON_LITERALS, SINGLE_QUOTES
from utp.parsers.jsonrepair import DOUBLED_BRACES, UnreadableJSON, decode_json_at, scan_json_value, strict_json_at
from utp.parsers.names import names_offered_tool_at
from utp.parsers.reasoning import REASONING_CLOSERS, call_list_starts
from utp.parsers.triggerscan import trie_pattern
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: (the quotes may be typographic: a Chinese input method writes ``{“tool”:“f”, …}``)
_OBJECT_START = re.compile(r"\{\s*\\?[\"'“]?([A-Za-z_][\w\-]*)")
_LIST_START = re.compile(r"\[\s*\{\s*[\"'“]?([A-Za-z_][\w\-]*)")
#: keys a call object (or a ``tool_calls`` wrapper: xLAM v1 puts its "thought" first, AutoGPT its
#: "thoughts" before the "command") may open with
_CALL_KEYS = frozenset(NAME_KEYS) | frozenset(CALL_LIST_KEYS) | frozenset(CALL_WRAPPER_KEYS) | ROUTING_KEYS | THOUGHT_KEYS | {"arguments", "parameters", "args", "input", "type", "id", "call_id", "tool_call_id", "role", "response"}
#: LangChain's agent blob opens with one of these, an echoed OpenAI message may with its "content",
#: an agent's envelope with its "response" beside its "actions", a schema-forced reply with its
#: "message" beside the call, an agent's "assistant_message" or "reply" beside its calls: only quoted
#: (``{Action: ...`` is ReAct prose)
_QUOTED_ONLY_KEYS = frozenset({AGENT_ACTION_KEY, AGENT_INPUT_KEY, REQUEST_KEY, SERVICE_KEY, "content", "response", "message", "assistant_message", "reply"})
#: ``_OBJECT_START`` with a call key, as a lookahead; the cheap character checks come first
#: because a flood of ``{`` must fail each position in a few regex steps
#: (the keys as a trie: a flat alternation of some thirty keys, tried at every ``{`` followed by a
#: letter, cost 200 ms for 1 MB of ``f{``)
#: what follows a call key: its quote, then a separator (or the text ends: a stream)
_AFTER_KEY = r"\\?+[\"'”]?+\s*+(?:[:=,>(\"'“]|\Z)"
_SEPARATOR_AFTER_KEY = re.compile(_AFTER_KEY)
_KEY_HEAD = (
    r"(?=[\s\\\"'“A-Za-z_])(?:(?=\s*+\\?+[\"'“]?+[A-Za-z_])\s*\\?[\"'“]?(?i:"
    + trie_pattern({key: "" for key in _CALL_KEYS}).pattern  # type: ignore[union-attr]
    + r")(?![\w\-])(?="
    + _AFTER_KEY
    + ")"
    + r"|\s*+\\?+[\"'“](?i:"
    + trie_pattern({key: "" for key in _QUOTED_ONLY_KEYS}).pattern  # type: ignore[union-attr]
    + r")[\"'”])"
)
#: ``_KEY_HEAD`` split after its first-character class, which also admits a plan's first key
_KEY_HEAD_FIRST = r"(?=[\s\\\"'“A-Za-z_])"
assert _KEY_HEAD.startswith(_KEY_HEAD_FIRST)
_KEY_HEAD_REST = _KEY_HEAD[len(_KEY_HEAD_FIRST) :]
#: an object opened with its braces doubled as the template that teaches it shows the call format
#: (``{{"name": <function-name>, …}}``), and the name's value after it (a scan lookahead)
DOUBLED_OPENER = '{{"name"'
_DOUBLED_KEY = r'\s*+:\s*+"'
_DOUBLED_NAME = re.compile(_DOUBLED_KEY)
#: a word character right before the JSON (an opener glued to a word); Chinese and Japanese write no
#: blanks between words, so their characters there are a sentence's, not a name's
_WORD_END = re.compile(r"(?![\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff])\w\Z")
#: a word of sequence between two call objects (``{..} then {..}``); the next one is read as any further call
_SEQUENCE_WORD = re.compile(r"(?:and\s++then|then|and|followed\s++by)[ \t]*+(?=\{)", re.IGNORECASE)
#: code before an inline object: the object is assigned (``data = {``) or passed (``print({``), not called
_CODE_BEFORE = re.compile(r"[=(]\s*+\Z")
#: a sentence leads into an inline call: its line holds a word (``(`` or ``-`` alone is code or a list)
_PROSE_WORD = re.compile(r"[^\W\d_]{2}")
#: a line that opens another call-shaped object: where a repaired read of this one stops looking
_CALL_LINE = re.compile(r"\n[ \t]*+\{" + _KEY_HEAD)
_LOOKBACK = 240
#: a lead-in is prose: a line holding these is JSON (``"function": {`` inside an object), not a sentence
_JSON_PUNCTUATION = re.compile(r"[{\[\"]")
#: a line holding nothing but a marker before the JSON: a bracketed one (``[ACTION] {...}``) or a label in
#: capitals a client's prompt asks for (``TOOL_CALL: {...}``, holmium's protocol), not a sentence's lead-in
_MARKER_LINE = re.compile(r"[ \t]*+(?:" + BRACKET_MARKER + r"|[A-Z][A-Z0-9_]{2,40}+:)[ \t]*+\Z")
#: such a label with an underscore in it (``TOOL_CALL:``), a protocol's token rather than a word, ending a
#: line after other text (``Done. TOOL_CALL: {...}``, holmium's agents write it so)
_PROTOCOL_LABEL_ENDS = re.compile(r"(?<![\w])[A-Z][A-Z0-9]{0,20}+_[A-Z0-9_]{1,20}+:[ \t]*+\Z")
#: what may still grow into a call-shaped start (streaming: wait for more text)
_GROWABLE = {"{": re.compile(r"\s*\\?[\"']?"), "[": re.compile(r"\s*(?:\{\s*[\"']?)?")}


@register_family
class JsonFamily(CallFamily):
    name = "json"
    priority = 10
    aliases = ("llama3_json", "xlam", "plain_json", "llama3", "json_object")
    summary = 'bare JSON call(s): {"name": ..., "arguments"|"parameters": {...}} or a list of them'
    #: what ``_placement`` requires first (a call key opens the object), as scan lookaheads
    #: (the object's head keeps its first-character class in front: a flood of ``{`` fails each
    #: position on that one class, see ``triggerscan.heads_guard``)
    #: (and ``{{"name"``: a template's escaped braces copied, see ``_read``)
    declared_triggers = static_triggers(
        ("{", "[", DOUBLED_OPENER),
        {"{": _KEY_HEAD_FIRST + f"(?:{_KEY_HEAD_REST}|{PLAN_HEAD})", "[": r"(?=[\s{])\s*+\{" + _KEY_HEAD, DOUBLED_OPENER: _DOUBLED_KEY},
    )

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Also ``{"NAME"`` for each offered tool: an answer that is ``{"get_weather": {...}}``, the tool's name as the key."""
        if ctx is None:
            return self.declared_triggers
        answers = (Trigger(f'{{"{name}"', start=Start.ANSWER, from_tool_names=True) for name in ctx.by_name if name and '"' not in name and "\\" not in name)
        return (*self.declared_triggers, *answers)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger not in _OWN:
            return self._name_keyed(text, pos, trigger)
        if trigger == DOUBLED_OPENER:  # the head, as a literal scan calls here without it
            return self._read(text, pos + 1, ctx, pos) if _DOUBLED_NAME.match(text, pos + len(trigger)) else None
        return self._read(text, pos, ctx, pos)

    def _read(self, text: str, pos: int, ctx: ParseContext, lead: int) -> Extraction | None:
        """The call JSON at ``pos``, placed where it is written from ``lead``: one brace before ``pos``
        when the braces are doubled (``{{"name": …}}}``, as Qwen2.5's GGUF template shows the call format
        escaped for ``str.format``; models copy it), the value's own closer then doubled too or left single."""
        doubled = lead < pos
        placement = self._placement(text, pos, ctx, lead)
        if placement is None:
            return None
        lenient_end = len(text)
        try:
            strict = strict_json_at(text, pos, len(text))
            if strict is None:
                lenient_end = _lenient_end(text, pos)
            value, end, repairs = (*strict, []) if strict is not None else decode_json_at(text, pos, lenient_end, known_invalid=True)
        except ValueError as exc:
            salvaged = salvage_list(self.name, text, pos, len(text), require_arguments=False) if text[pos] == "[" and placement != "inline" else None
            if salvaged is not None and (placement in ("start", "after_lead_in") or all(offered(call, ctx) for call in salvaged[0])):
                length = scan_json_value(text[pos:], 0)
                return Extraction(pos + (length if length >= 0 else len(text[pos:].rstrip())), *salvaged)
            if placement in ("start", "plan_start") or names_offered_tool_at(text, pos, ctx):
                cut = _cut_at_next_call(self.name, text, pos, not names_offered_tool_at(text, pos, ctx))
                if cut is not None:
                    return cut
                if isinstance(exc, UnreadableJSON):
                    # a value that never closed before the bound takes the rest of the text with it,
                    # as it would unbounded (so a flood of broken calls is one report, not one per bound)
                    stop = exc.end if exc.end < lenient_end else len(text)
                else:
                    stop = scan_json_value(text, pos)
                    stop = len(text) if stop < 0 else stop
                return Extraction(stop, [], [unparseable(self.name, f"call-shaped JSON that cannot be read: {exc}", text[pos:stop], pos)])
            return None
        if doubled:  # the object's closer doubled too, or left single (qwen2.5-coder-1.5b writes both)
            if text.startswith("}", end):
                end += 1
            repairs = [*repairs, DOUBLED_BRACES] if DOUBLED_BRACES not in repairs else repairs
        known = names_offered_tool_at(text, pos, ctx)
        if placement.startswith("plan"):
            found = plan_calls(value, self.name, text[pos:end], repairs, ctx)
            placement = placement[len("plan_") :]
        elif placement == "inline":
            found = calls_from_value(value, self.name, text[pos:end], repairs, require_arguments=True) if known and _as_written(repairs) else None
            if found is not None and not all(offered(call, ctx) for call in found[0]):
                return None
            if found is None and known and _as_written(repairs) and not after_result_opener(text, pos):
                found = flat_calls(value, self.name, text[pos:end], repairs, ctx, inline=True)
        else:
            found = calls_from_value(value, self.name, text[pos:end], repairs, require_arguments=not known)
            if found is None and placement != "inline" and type(value) is list:
                found = salvaged_answer_list(value, self.name, text[pos:end], repairs, ctx)
            if found is None and placement != "inline":
                found = listed_name_keyed(value, CALL_LIST_KEYS, self.name, text[pos:end], repairs, ctx)
        if found is None and known and placement != "inline" and not after_result_opener(text, pos):
            found = flat_calls(value, self.name, text[pos:end], repairs, ctx)  # weaker evidence: not mid-sentence, not a result
        if found is None and placement == "start" and skip_ws(text, end) >= len(text):
            found = _definition_shaped(value, self.name, text[pos:end], repairs) or quoted_name_keyed(value, self.name, text[pos:end], repairs, ctx)
        if found is None:
            return None
        calls, diagnostics = found
        end = past_orphan_closer(text, self._more_calls(text, end, calls, diagnostics, ctx))
        turn_end = END_OF_TURN.match(text, skip_ws(text, end))
        if turn_end is not None:
            end = turn_end.end()  # the answer ends with the call, whatever follows the token
        elif placement == "after_lead_in" and text[end:].strip() and not self._introduced(text, pos, end, calls, ctx):
            if not self._inline_after_lead_in(text, pos, value, end, repairs, ctx):
                return None  # JSON in the middle of an explanation, not the response's call
        elif placement == "own_line" and not _ends_line(text, end):
            return None
        if not calls and not any(d.kind is DiagnosticKind.TRUNCATED for d in diagnostics):
            return None  # call-shaped but unusable (e.g. "arguments": "none"): leave it as prose
        if skip_ws(text, end) >= len(text):
            end = len(text)  # whether more calls follow depends on text not yet seen (streaming)
        return Extraction(end, calls, diagnostics)

    def _inline_after_lead_in(self, text: str, pos: int, value: object, end: int, repairs: list[str], ctx: ParseContext) -> bool:
        """A lead-in where someone acts, on the call's own line, the sentence going on after the call
        (``Let me call this: {…} now.``): a call as one in the middle of a sentence is, an offered
        tool's written whole; after a sample's lead-in (``Example: {…} is how``) it stays a sample."""
        line = text[text.rfind("\n", 0, pos) + 1 : pos]
        if not line.strip() or not _inline_in_sentence(line) or not _as_written(repairs) or not introduces_a_call(text, pos):
            return False
        found = calls_from_value(value, self.name, text[pos:end], repairs, require_arguments=True)
        return found is not None and bool(found[0]) and all(offered(call, ctx) for call in found[0])

    @staticmethod
    def _introduced(text: str, pos: int, end: int, calls: list[ToolCall], ctx: ParseContext) -> bool:
        """Offered tools' calls after a lead-in where someone acts ("I will call two functions:"), ending
        their line or followed by a new sentence ("I will do this: {…} Done.")."""
        return (
            bool(calls) and all(offered(call, ctx) for call in calls)
            and (_ends_line(text, end) or _NEW_SENTENCE.match(text, end) is not None) and introduces_a_call(text, pos)
        )

    def _name_keyed(self, text: str, pos: int, trigger: str) -> Extraction | None:
        """``{"NAME": {arguments}}`` (or the arguments as a JSON string) as the whole answer, NAME an offered tool.

        Some models key the arguments by the tool's name (Ollama's own parser
        reads it). Only an answer that is nothing but that one-key object is a
        call: the same object inside prose or beside other keys is data.
        """
        if pos not in call_list_starts(text):
            return None
        read = read_json_at(text, pos)
        if read is None or skip_ws(text, read[1]) < len(text):
            return None
        value, _, repairs = read
        name = trigger[2:-1]
        if type(value) is not dict or len(value) != 1 or type(value.get(name)) not in (dict, str):
            return None
        call, diagnostics = build_call(name, value[name], self.name, text[pos:], repairs)
        return Extraction(len(text), [call] if call is not None else [], diagnostics)

    # -- placement: is this where a response's call would be?

    def _placement(self, text: str, pos: int, ctx: ParseContext, at: int) -> str | None:
        """Where the JSON at ``pos``, written from ``at``, stands: "start", "after_lead_in", "own_line" or
        "inline" (then only offered tools' calls), prefixed "plan_" for a plan object; None where it cannot be a call."""
        shape = (_OBJECT_START if text[pos] == "{" else _LIST_START).match(text, pos)
        if shape is None or not _call_key(text, shape):
            if text[pos] == "{" and ctx.has_tools and PLAN_START.match(text, pos + 1):
                where = self._position(text, pos, ctx, plan=True)
                return None if where is None else "plan_" + where
            return None
        return self._position(text, at, ctx)

    def _position(self, text: str, pos: int, ctx: ParseContext, plan: bool = False) -> str | None:
        before = text[max(0, pos - _LOOKBACK) : pos]
        if pos == 0 or (pos <= _LOOKBACK and before.isspace()) or _after_reasoning(before):
            return "start"
        line_start = before.rfind("\n")
        line = before[line_start + 1 :]
        labelled = _PROTOCOL_LABEL_ENDS.search(line) is not None  # (a comment in a code fence is code's)
        labelled = labelled and not (line_start >= 0 and inside_fence(text, pos - len(before) + line_start))
        if _MARKER_LINE.match(line) or labelled:
            if ctx.has_tools and (plan or names_offered_tool_at(text, pos, ctx, nested=True)):
                return "own_line"
            if not line.rstrip().endswith(":"):
                return None
            # a label in capitals that marks nothing here (no tools, or none named) leads in as a sentence's would
        if ends_with_colon(line) and not _JSON_PUNCTUATION.search(line):
            return "after_lead_in"  # "Here is the call: {...}" on one line of prose (must end the response)
        if line_start < 0 or before[line_start + 1 :].strip():
            if not ctx.has_tools:
                return None  # inline in a sentence: only an offered tool's name makes it a call
            if not _inline_in_sentence(line):
                return None
            return "inline" if plan or names_offered_tool_at(text, pos, ctx, nested=True) else None
        prose = before[:line_start].rstrip()
        if inside_fence(text, pos - len(before) + line_start):
            return None  # inside a code fence: the fenced family decides
        if ends_with_colon(prose):
            return "after_lead_in"
        if ctx.has_tools and (plan or names_offered_tool_at(text, pos, ctx, nested=True)):
            return "own_line"
        return None

    def _more_calls(self, text: str, end: int, calls: list[ToolCall], diagnostics: list, ctx: ParseContext) -> int:
        """Further calls separated by ``;``, ``,``, a word of sequence (``{..} then {..}``) or line breaks
        (Llama 3.2 writes ``{..}; {..}``), or lists of calls written one after another (``[{..}][{..}]``)."""
        while True:
            nxt = skip_ws(text, end)
            if nxt < len(text) and text[nxt] in ";,":
                nxt = skip_ws(text, nxt + 1)
            elif sequence := _SEQUENCE_WORD.match(text, nxt):
                nxt = sequence.end()
            if nxt >= len(text) or text[nxt] not in "{[":
                return end
            if text[nxt] == "[" and _LIST_START.match(text, nxt) is None:
                return end
            if scan_json_value(text, nxt) < 0:
                # A further object cut off by the end of the output: part of this block, reported.
                diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended inside a further call", text[nxt : nxt + 300], self.name, nxt))
                return len(text)
            if text[nxt] == "{" and _OBJECT_START.match(text, nxt) is None:
                return end
            try:
                value, stop, repairs = decode_json_at(text, nxt)
            except ValueError:
                return end
            found = calls_from_value(value, self.name, text[nxt:stop], repairs, require_arguments=not names_offered_tool_at(text, nxt, ctx))
            if found is None or not found[0]:
                return end
            calls.extend(found[0])
            diagnostics.extend(found[1])
            end = stop

    # -- streaming and rendering

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Final once the shape rules it out, it is inline prose, or the JSON value is complete."""
        if trigger not in _OWN:  # a name-keyed answer is decided by its end: hold it
            return pos not in call_list_starts(text)
        if trigger == DOUBLED_OPENER:  # braces doubled: decided as the object inside them is
            pos += 1
        shape = (_OBJECT_START if text[pos] == "{" else _LIST_START).match(text, pos)
        if shape is None:
            return _GROWABLE[text[pos]].fullmatch(text, pos + 1) is None
        if shape.end() >= len(text):
            return False
        if not _call_key(text, shape) and not (text[pos] == "{" and plan_may_start(text, pos + 1)):
            return True
        # wherever it stands, an object naming an offered tool may be a call: wait for its end
        end = scan_json_value(text, pos)
        if end < 0:
            return False
        after = skip_ws(text, end)
        if after < len(text) and text[after] in ";,":
            after = skip_ws(text, after + 1)
        return after < len(text)  # more calls may still follow until other text does

    def render(self, calls: Sequence[ToolCall]) -> str:
        items = [{"name": c.name, "arguments": c.arguments} for c in calls]
        return json.dumps(items[0] if len(items) == 1 else items, ensure_ascii=False)


def _call_key(text: str, shape: re.Match[str]) -> bool:
    """The object's first key is one a call opens with (an agent blob's only when quoted), a separator after it."""
    key = shape.group(1).lower()
    if key in _QUOTED_ONLY_KEYS:
        return text[shape.start(1) - 1] in "\"'“" and text[shape.end(1) : shape.end(1) + 1] in ("\"", "'", "”")
    return key in _CALL_KEYS and _SEPARATOR_AFTER_KEY.match(text, shape.end(1)) is not None


def _after_reasoning(before: str) -> bool:
    """Directly after a reasoning block counts as the start of what the model says."""
    return before.rstrip().endswith(REASONING_CLOSERS)


#: blanks, then a capital that opens a new sentence (not a word that goes on the one the call is in)
_NEW_SENTENCE = re.compile(r"[ \t]++[A-Z]")


def _ends_line(text: str, end: int) -> bool:
    nl = text.find("\n", end, end + _LOOKBACK)
    rest = text[end:nl] if nl >= 0 else text[end : end + _LOOKBACK]
    return not rest.strip() and (nl >= 0 or end + _LOOKBACK >= len(text))


def _cut_at_next_call(family: str, text: str, pos: int, require_arguments: bool) -> Extraction | None:
    """A call object that cannot be read, read up to the line where the next call-shaped object starts.

    ``{"name": "a", "arguments": {"x": 1}`` then ``{"name": "b", ...}`` on the next line: the
    first never closes, so read whole it swallows the second. Nothing in JSON lets a call
    object hold a line that opens another call object at its own top level, so the first
    ends there and is read with its closers supplied; the next is read on its own. None
    when no such line follows or the first still holds no call there (it is reported as
    unreadable JSON is).
    """
    following = _CALL_LINE.search(text, pos + 1)
    if following is None:
        return None
    piece = text[pos : following.start()].rstrip().rstrip(",")
    try:
        value, _, repairs = decode_json_at(piece, 0)
        found = calls_from_value(value, family, piece, [*repairs, "closed before the next call's line"], require_arguments)
    except ValueError:
        return None
    if found is None or not found[0]:
        return None
    return Extraction(following.start(), *found)


def _lenient_end(text: str, pos: int) -> int:
    """How far a repaired read of the object at ``pos`` may look: up to a few call-shaped lines on.

    Nothing marks where a bare object ends; broken JSON read leniently to the
    end of a text full of call-shaped lines would cost the rest of the text at
    each of them. A value may hold a few such lines (a pretty-printed list of
    named objects), so the bound is the ``MAX_CLOSERS_INSIDE``-th of them.
    """
    found = 0
    for match in _CALL_LINE.finditer(text, pos + 1):
        found += 1
        if found == MAX_CLOSERS_INSIDE:
            return match.start()
    return len(text)


#: the repair a call written in its definition's shape records
DEFINITION_SHAPED = "a call written in its definition's shape (values where the schema goes)"


def _definition_shaped(value: object, family: str, raw: str, repairs: list[str]) -> tuple[list[ToolCall], list[Diagnostic]] | None:
    """The whole answer is one call in its definition's shape (see ``definition_shaped_call``)."""
    split = definition_shaped_call(value)
    if split is None:
        return None
    call, diagnostics = build_call(split[0], split[1], family, raw, [*repairs, DEFINITION_SHAPED])
    return ([call], diagnostics) if call is not None else None


def _inline_in_sentence(line: str) -> bool:
    """May JSON after ``line`` (its line's text before it) be a call in the middle of a sentence?

    Only if it names an offered tool (checked once read), and not inside inline code (an odd
    number of backticks before it on its line: shown, not used), nor after other JSON on its
    line (a sentence leads into it, not data), nor glued to a word (``items[...]``, ``f{...}``:
    code), nor assigned or passed (``data = {...}``: code), and only after a word of prose.
    """
    return not (line.count("`") % 2 or _JSON_PUNCTUATION.search(line) or _WORD_END.search(line) or _CODE_BEFORE.search(line)) and _PROSE_WORD.search(line) is not None


def _as_written(repairs: list[str]) -> bool:
    """Read without a guess: valid JSON, or a Python dict literal as ``repr`` prints one (its quotes and literals)."""
    return all(repair in _PYTHON_REPR for repair in repairs)


#: the repairs that read a Python literal as printed, not a damaged value
_PYTHON_REPR = frozenset((SINGLE_QUOTES, PYTHON_LITERALS))
#: the triggers that are not an offered tool's name
_OWN = frozenset(t.text for t in JsonFamily.declared_triggers)
