"""Moonshot Kimi K2: calls in a tool-calls section, each with an id ``functions.NAME:IDX``.

::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0
    <|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>

The id is kept as the call id; the name is the part between ``functions.``
and ``:IDX``. An id a client rewrote to OpenAI's id alphabet, ``functions_NAME_IDX``
(a Kimi model copies it from its history), names ``NAME`` the same way. (Grammar: the chat template and ``docs/tool_call_guidance.md`` of
moonshotai/Kimi-K2-Instruct; vLLM's ``kimi_k2_tool_parser`` reads the id as
``[^<]+:\\d+`` and the arguments as a JSON object.)

Two damaged shapes seen in the wild are read, each with a repair on the call:

* the argument token dropped (vLLM PR #31207, a Bedrock stream):
  ``<|tool_call_begin|> functions.get_weather:0 {"city": "Tokyo"} <|tool_call_end|>``.
  Only an id with its ``:IDX`` followed by a JSON object is read so.
* the opening tokens dropped (typeclaw PR #344):
  ``channel_reply:0<|tool_call_argument_begin|>{...}<|tool_calls_section_end|>``.
  ``<|tool_call_argument_begin|>`` is a special token, never prose, so it is a
  trigger too: the id right before it names the call (the extraction's
  ``start`` moves back over it, and over a section or call token before it),
  stray end tokens after the arguments go with it. Without an id the span (a
  run of such tokens and their arguments) is reported UNPARSEABLE once. Its head needs a JSON object (or the end of the text)
  after the token. Streaming cannot take back the id it already showed as
  prose, so a stream's content keeps it where a one-shot parse drops it.
* every special token stripped (a server that does not render them, which
  is why some Kimi K2.6 chat templates for llama.cpp and LM Studio switch to
  ``<tool_call>`` JSON): ``functions.get_weather:0{"city": "Tokyo"}``. Read
  only for an offered tool, with its ``:IDX`` and a JSON object after it, at
  a line start or right after the previous such call, and only when the line
  ends with the object (or the next such call follows).

An id under a namespace of the model's own instead of ``functions.``
(``ns.get_weather:0``, EasyDeL's Kimi tests) names the offered tool after the
namespace, when no offered tool has the whole name (recorded as a repair).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family, static_triggers
from utp.parsers.callshape import build_call, unparseable
from utp.parsers.familykit import closer_past_strings, ended_before, json_object_before_reopen, read_json_at, repaired, unfenced
from utp.parsers.jsonrepair import loads_lenient
from utp.parsers.textscan import blanks_before, find_forward, skip_blanks
from utp.parsers.names import namespace_dropped, offered_under_namespace
from utp.types import Diagnostic, DiagnosticKind, ToolCall

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
#: the singular spellings, read the same (vLLM's and llama.cpp's Kimi parsers accept both)
SINGULAR_SECTION_BEGIN = "<|tool_call_section_begin|>"
SINGULAR_SECTION_END = "<|tool_call_section_end|>"
_SECTION_BEGINS = (SECTION_BEGIN, SINGULAR_SECTION_BEGIN)
_SECTION_ENDS = (SECTION_END, SINGULAR_SECTION_END)
CALL_BEGIN = "<|tool_call_begin|>"
ARG_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
#: the id: ``functions.NAME:IDX``; clients that number calls their own way write ``:call_123``
_ID = re.compile(r"\s*(?:functions\.)?([^\s:<>]{1,200}?)(?::([\w\-]{1,64}))?\s*$")
#: the same id after a client rewrote it to OpenAI's id alphabet (``functions_NAME_IDX``), which
#: the model then copies from its history
_SANITIZED_ID = re.compile(r"\s*functions_([^\s:<>]{1,200}?)_(\d{1,9})\s*$")
#: an id with its index and then a JSON object: a call whose argument token was dropped
_BARE_ID = re.compile(r"\s*((?:functions\.)?([^\s:<>{}]{1,200}):\d{1,9})\s*(?=\{)")
#: scan lookahead for the section token. ``extract`` skips whitespace (``\s`` is ``str.isspace``)
#: after it and returns None unless a call token, the section end or the end of the text follows.
#: The call token gets no head: Kimi reads any ``<|tool_call_begin|>`` (a call, or an UNPARSEABLE
#: one without an argument token).
SECTION_HEAD = "\\s*+(?:\\Z|" + "|".join(re.escape(t) for t in (CALL_BEGIN, *_SECTION_ENDS)) + ")"
#: scan lookahead for an argument token no call token opened: arguments are a JSON object, so
#: ``extract`` returns None unless ``{`` or the end of the text follows the whitespace
ARG_HEAD = "\\s*+(?:\\{|\\Z)"
#: tokens that end the arguments of a call without its opening tokens (the next call's, too)
_BODY_ENDS = (CALL_END, *_SECTION_ENDS, CALL_BEGIN, ARG_BEGIN, *_SECTION_BEGINS)
#: the longest id read back from an argument token (``functions.`` plus a 200-character name)
_MAX_NAME = 210
_MAX_INDEX = 9
_DECODER = json.JSONDecoder()
_FUNCTIONS = "functions."
#: a stripped call's index and the blanks before its arguments
_STRIPPED_INDEX = re.compile(r"(\d{1,9})[ \t]*")
#: the scan lookahead of a stripped call's id (``functions.NAME:`` is the trigger)
_STRIPPED_HEAD = r"\d{1,9}+[ \t]*+\{"
#: an id or token right after one of these is being shown (inline code, a quoted string), not written
_QUOTES = "`\"'"


@register_family
class KimiK2Family(CallFamily):
    name = "kimi_k2"
    priority = 50
    aliases = ("kimi", "kimi_k2_instruct")
    declared_triggers = static_triggers((*_SECTION_BEGINS, CALL_BEGIN, ARG_BEGIN), {**dict.fromkeys(_SECTION_BEGINS, SECTION_HEAD), ARG_BEGIN: ARG_HEAD})
    summary = "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>..."

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Also ``functions.NAME:`` for each offered tool: a stripped call line, which opens with the
        namespace, never inside a word."""
        if ctx is None:
            return self.declared_triggers
        names = (name for name in ctx.by_name if name and ":" not in name and not any(c.isspace() for c in name))
        return (*self.declared_triggers, *(Trigger(f"{_FUNCTIONS}{name}:", _STRIPPED_HEAD, Start.WORD, from_tool_names=True) for name in names))

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == ARG_BEGIN:
            return self._orphan(text, pos)
        if trigger.startswith(_FUNCTIONS):
            return self._stripped(text, pos, trigger, ctx)
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        section = trigger in _SECTION_BEGINS
        cursor = _skip(text, pos + len(trigger)) if section else pos
        end, cursor = self._calls(text, cursor, calls, diagnostics)
        for call in calls:
            self._offered_under_namespace(call, ctx, diagnostics)
        if section and not calls and not diagnostics:
            if cursor >= len(text):
                return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended after the section token", text[pos:], self.name, pos)])
            # an empty section goes with its end token; a lone section token stays text
            return Extraction(end, [], []) if end > cursor else None
        if end <= pos:
            return None
        # the section's end token read after calls read cleanly: nothing after it changes them (a
        # repaired read may have taken a token quoted in a string the output is still writing)
        clean = not diagnostics and not any(call.repairs for call in calls)
        return Extraction(end, calls, diagnostics, final=clean and section and text.endswith(_SECTION_ENDS, 0, end))

    def _calls(self, text: str, cursor: int, calls: list[ToolCall], diagnostics: list[Diagnostic]) -> tuple[int, int]:
        """The calls from ``cursor`` on and the section end after them.

        Returns ``(end, cursor)``: just past what was read (``cursor`` when nothing was),
        and where reading stopped (whitespace after ``end`` skipped).
        """
        end = cursor
        while text.startswith(CALL_BEGIN, cursor):
            head_start = cursor + len(CALL_BEGIN)
            arg = find_forward(text, ARG_BEGIN, head_start)
            close = find_forward(text, CALL_END, head_start)
            following = find_forward(text, CALL_BEGIN, head_start)
            if 0 <= following < arg and (close < 0 or following < close):
                # call tokens with neither arguments nor end before the next one: the last of
                # them before the argument token is read, the run before it reported once
                last = text.rfind(CALL_BEGIN, following, arg)
                diagnostics.append(unparseable(self.name, f"a call with no arguments before the next {CALL_BEGIN} (skipped)", text[cursor:last], cursor))
                end = cursor = last
                continue
            if arg < 0 or (close >= 0 and arg > close):
                body_end = close if close >= 0 else len(text)
                if not self._without_arg_token(text, cursor, head_start, body_end, calls, diagnostics):
                    stop = close + len(CALL_END) if close >= 0 else len(text)
                    diagnostics.append(unparseable(self.name, "call without <|tool_call_argument_begin|>", text[cursor:stop], cursor))
                    if close < 0:
                        return len(text), len(text)
                    end = cursor = _skip(text, stop)
                    continue
            else:
                ident = _SANITIZED_ID.match(text, head_start, arg) or _ID.match(text[head_start:arg])
                close = closer_past_strings(text, arg + len(ARG_BEGIN), close, CALL_END)
                # the next call's begin token where this call's end token belongs: that one was left out
                following = find_forward(text, CALL_BEGIN, arg + len(ARG_BEGIN))
                cut_short = following >= 0 and (close < 0 or following < close) and _whole_json_before(text, arg + len(ARG_BEGIN), following)
                body_end = following if cut_short else close if close >= 0 else len(text)
                raw_args = text[arg + len(ARG_BEGIN) : body_end]
                read_before = len(calls)
                if ident is None:
                    diagnostics.append(unparseable(self.name, "unreadable function id", text[cursor:body_end], cursor))
                else:
                    noted = (f"missing {CALL_END} before the next {CALL_BEGIN}",) if cut_short else (ended_before(CALL_END),) if close < 0 else ()
                    self._add(ident.group(1), text[head_start:arg].strip(), raw_args, text[cursor:body_end], calls, diagnostics, noted)
                if cut_short:
                    end = cursor = following
                    continue
                if close < 0 and len(calls) > read_before:
                    return len(text), len(text)  # the call the output stopped in names the cut itself (run unless cut mid-value)
            if close < 0:
                diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended inside a call", text[cursor:][:300], self.name, cursor))
                return len(text), len(text)
            end = close + len(CALL_END)
            cursor = _skip(text, end)
        for token in _SECTION_ENDS:
            if text.startswith(token, cursor):
                end = cursor + len(token)
                break
        return end, cursor

    def _without_arg_token(self, text: str, cursor: int, head_start: int, body_end: int, calls: list[ToolCall], diagnostics: list[Diagnostic]) -> bool:
        """``<|tool_call_begin|>functions.f:0 {...}``: an id with its index, then only a JSON object."""
        ident = _BARE_ID.match(text, head_start, body_end)
        if ident is None:
            return False
        got = read_json_at(text, ident.end(), body_end)
        if got is None or type(got[0]) is not dict or _skip(text, got[1]) < body_end:
            return False
        value, _, repairs = got
        repairs = [f"missing {ARG_BEGIN} after the call id", *repairs]
        self._add_value(ident.group(2), ident.group(1), value, repairs, text[cursor:body_end], calls, diagnostics)
        return True

    def _orphan(self, text: str, pos: int) -> Extraction | None:
        """An argument token no call token opened: the id before it names the call.

        The span moves back over the id (and any section or call token right
        before it), so none of the leak stays in the content. A stream has
        already shown the id when the token arrives: its live content keeps it
        (a known difference, see :mod:`utp.parsers.streaming`); its calls and
        ``result()`` are the same.
        """
        body = _skip(text, pos + len(ARG_BEGIN))
        if body < len(text) and text[body] != "{":
            return None  # the head: Kimi's arguments are a JSON object
        ident = _id_before(text, pos)
        start = _tokens_before(text, ident[0] if ident else pos)
        if start > 0 and text[start - 1] in _QUOTES:
            return None  # syntax being shown: in inline code or a quoted string
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        if body >= len(text):
            what = f"the arguments of {ident[1]!r}" if ident else "arguments"
            diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended before {what}", text[start:], self.name, start))
            return Extraction(len(text), calls, diagnostics, start=start)
        got, end, cursor, body_end = _arguments(text, body, ident is not None)
        while ident is None and text.startswith(ARG_BEGIN, cursor):  # a run of stray tokens is one span
            after = _skip(text, cursor + len(ARG_BEGIN))
            if text.startswith(ARG_BEGIN, after):
                end = cursor = after
                continue
            if after < len(text) and text[after] != "{":
                break
            if after >= len(text):
                end = cursor = len(text)
                break
            _, end, cursor, _ = _arguments(text, after, False)
        raw = text[start:end]
        if ident is None:
            diagnostics.append(unparseable(self.name, f"{ARG_BEGIN} without a call id (functions.NAME:IDX) before it", raw, start))
        elif got is None:
            diagnostics.append(unparseable(self.name, f"arguments of {ident[1]!r}: {_why_unreadable(text[body:body_end])}", raw, start))
        else:
            value, _, repairs = got
            repairs = [f"missing {CALL_BEGIN} before the call id", *repairs]
            self._add_value(ident[1], ident[2], value, repairs, raw, calls, diagnostics)
        more, _ = self._calls(text, cursor, calls, diagnostics)  # later calls of the section, its end token
        if more > cursor:
            end = more
        return Extraction(end, calls, diagnostics, start=start)

    def _add(
        self, name: str, call_id: str, raw_args: str, raw: str, calls: list[ToolCall], diagnostics: list[Diagnostic], noted: tuple[str, ...] = ()
    ) -> None:
        """The call with arguments ``raw_args`` (lenient JSON); ``noted``: repairs already made around it."""
        try:
            body = unfenced(raw_args)
            arguments, repairs = loads_lenient(raw_args if body is None else body) if raw_args.strip() else ({}, [])
            if body is not None:
                repairs = ["arguments inside a Markdown fence", *repairs]
        except ValueError as exc:
            diagnostics.append(unparseable(self.name, f"arguments of {name!r}: {exc}", raw))
            return
        self._add_value(name, call_id, arguments, [*noted, *repairs], raw, calls, diagnostics)

    def _stripped(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """``functions.NAME:IDX{...}`` with every token around it stripped (see the module doc).

        The object is read no further than the same id written again.
        """
        name = trigger[len(_FUNCTIONS) : -1]
        if ctx.tool(name) is None:
            return None
        before = blanks_before(text, pos)
        if before > 0 and text[before - 1] not in "\n}":
            return None  # inside a sentence: a mention
        index = _STRIPPED_INDEX.match(text, pos + len(trigger))
        if index is None or not text.startswith("{", index.end()):
            return None
        got = json_object_before_reopen(text, index.end(), trigger)
        if got is None:
            return None
        value, end, repairs = got
        after = skip_blanks(text, end)
        if after < len(text) and text[after] not in "\r\n" and not text.startswith(_FUNCTIONS, after):
            return None  # the line goes on: prose around an example
        call_id = f"{_FUNCTIONS}{name}:{index.group(1)}"
        repairs = ["call tokens missing around the call id (stripped special tokens?)", *repairs]
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        self._add_value(name, call_id, value, repairs, text[pos:end], calls, diagnostics)
        return Extraction(end, calls, diagnostics)

    def _offered_under_namespace(self, call: ToolCall, ctx: ParseContext, diagnostics: list[Diagnostic]) -> None:
        """``ns.get_weather``: the offered tool after a namespace the model wrote where ``functions.`` belongs."""
        meant = offered_under_namespace(call.name, ctx)
        if meant is None:
            return
        repair = namespace_dropped(call.name)
        call.name, call.repairs = meant, [*call.repairs, repair]
        diagnostics.append(repaired(self.name, meant, [repair], str(call.raw)))

    def _add_value(self, name: str, call_id: str, arguments: object, repairs: list[str], raw: str, calls: list[ToolCall], diagnostics: list[Diagnostic]) -> None:
        call, diags = build_call(name, arguments, self.name, raw, repairs, call_id)
        diagnostics.extend(diags)
        if call is not None:
            calls.append(call)

    def render(self, calls: Sequence[ToolCall]) -> str:
        items = "".join(
            f"{CALL_BEGIN}functions.{c.name}:{i}{ARG_BEGIN}{json.dumps(c.arguments, ensure_ascii=False)}{CALL_END}"
            for i, c in enumerate(calls)
        )
        return f"{SECTION_BEGIN}{items}{SECTION_END}"


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _arguments(text: str, body: int, lenient: bool) -> tuple[tuple[object, int, list[str]] | None, int, int, int]:
    """The arguments at ``body`` (a ``{``): ``(value, end, repairs)`` or None, the span's end
    (past an end token right after them), where reading stopped, and where the body ends."""
    body_end = min((at for at in (find_forward(text, token, body) for token in _BODY_ENDS) if at >= 0), default=len(text))
    # without an id no call comes of it: the value only says where the span ends, and a
    # token ending the body bounds it well enough when the value is not valid JSON
    got = read_json_at(text, body, body_end) if lenient or body_end == len(text) else _valid_json(text, body, body_end)
    end = got[1] if got is not None else body_end
    if got is None and text.startswith(ARG_BEGIN, body_end):
        following = _id_before(text, body_end)  # the next call's id is not this call's text
        if following is not None and following[0] > body:
            end = following[0]
    cursor = _skip(text, end)
    if text.startswith(CALL_END, cursor):
        end = cursor + len(CALL_END)
        cursor = _skip(text, end)
    return got, end, cursor, body_end


def _whole_json_before(text: str, pos: int, end: int) -> bool:
    """Is ``text[pos:end]`` one whole JSON value (blanks around it)? Then a token at ``end`` is not inside a string."""
    got = _valid_json(text, _skip(text, pos), end)
    return got is not None and _skip(text, got[1]) >= end


def _valid_json(text: str, pos: int, end: int) -> tuple[object, int, list[str]] | None:
    try:
        value, stop = _DECODER.raw_decode(text[pos:end])
    except (ValueError, RecursionError):
        return None
    return value, pos + stop, []


def _why_unreadable(raw: str) -> str:
    try:
        loads_lenient(raw)
    except ValueError as exc:
        return str(exc)
    return "not a JSON object"


def _name_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_-."


def _id_before(text: str, pos: int) -> tuple[int, str, str] | None:
    """``(start, name, id)`` of a call id ``[functions.]NAME:IDX`` ending (whitespace aside) at ``pos``.

    Read backwards over at most a bounded number of characters, so a visit costs O(1).
    """
    end = pos
    while end > 0 and text[end - 1].isspace():
        end -= 1
    colon = end
    while colon > 0 and end - colon <= _MAX_INDEX and "0" <= text[colon - 1] <= "9":
        colon -= 1
    colon -= 1
    if colon == end - 1 or colon < 1 or text[colon] != ":":
        return None
    start = colon
    while start > 0 and colon - start <= _MAX_NAME and _name_char(text[start - 1]):
        start -= 1
    name = text[start:colon].removeprefix("functions.")
    if (start > 0 and _name_char(text[start - 1])) or not name or not (name[0].isalnum() or name[0] == "_"):
        return None
    return start, name, text[start:end]


def _tokens_before(text: str, start: int) -> int:
    """``start`` moved back over a section or call token (and whitespace) right before it."""
    while True:
        at = start
        while at > 0 and text[at - 1].isspace():
            at -= 1
        for token in (CALL_BEGIN, *_SECTION_BEGINS):
            if text.startswith(token, at - len(token)) and at >= len(token):
                start = at - len(token)
                break
        else:
            return start
