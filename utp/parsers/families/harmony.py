"""OpenAI Harmony (gpt-oss): messages made of header tokens, a channel and a recipient.

``<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>``
is a call; the recipient may also sit in the role position
(``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>``),
and generation usually starts after the ``<|start|>assistant`` prefill, so a
message may begin at ``<|channel|>``, or at the recipient the role position
holds (`` to=functions.NAME<|channel|>commentary json<|message|>{...}``): the
span then starts at the recipient, so it leaves no trace in the content (a
stream has shown it by the time ``<|channel|>`` arrives; its calls are the same). The ``analysis`` channel is reasoning
(returned as ``Extraction.thinking``); ``final`` is the answer, so only its
header is consumed and its text stays content. A message whose *role* is a
tool (``<|start|>functions.NAME to=assistant<|message|>...``) is a tool's
reply the model hallucinated, never a call. Harmony renders tool names as
identifiers (``my-tool`` → ``my_tool``); names are mapped back to the offered
tool they came from.

A server that decodes with special tokens skipped leaves the header words
glued together, ``analysis…assistantcommentary to=functions.NAME json{...}``
(SGLang's gpt-oss detector reads this "simplified format"). For an offered
tool, ``[assistant]commentary to=functions.NAME`` followed by the constraint
and a JSON object is read as that call, with a repair recorded; the glued
analysis text before it stays content, as nothing marks where it began. The
recipient may sit in the role position there too, as in the token form
(``assistant to=functions.NAME commentary json``), and a client that shows the
stripped text may break the line before the JSON. A header that kept its tokens
but lost ``<|message|>`` (``<|channel|>commentary to=functions.NAME
<|constrain|>json{...}``) is read the same way, its span starting at the opener.
Headers bent out of order (see ``_header_drift``) and ``<|call|>`` written
before a call instead of after it (``_called``) are read for offered tools. A
header closed before any message (``…to=functions.f<|end|>``) sends nothing:
the next message is read on its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family, static_triggers
from utp.parsers.callshape import ANNOUNCED_CALL, announced_call_arguments, calls_from_value
from utp.parsers.familykit import closer_past_strings, closers_bound, identifier_safe, json_object_before_reopen, make_call, read_json_at, unreadable
from utp.parsers.names import resolve_name
from utp.parsers.reasoning import begins_call_lines
from utp.parsers.textscan import bounded_find, find_first, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

START, CHANNEL, MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
CALL, END, RETURN = "<|call|>", "<|end|>", "<|return|>"
#: tokens that end a message body (a new header also ends it when the end token was dropped)
_BODY_ENDS = (CALL, END, RETURN, START, CHANNEL)
_STRAY_ENDS = (CALL, END, RETURN)
#: a header (role, channel, recipient, constraint) is short; longer means this is not one
MAX_HEADER = 512
#: the recipient: ``to=NAME``, perhaps spaced or quoted as an attribute (``to= "create_artifact"``)
_RECIPIENT = re.compile(r"\bto=[ \t]*+[\"']?+([^\s\"'<>]+)")
#: a tool's name as a call after ``<|call|>`` writes it (group 1), then blanks
_CALLED = r"(?:functions\.)?+([A-Za-z_][\w.\-]{0,255}+)[ \t]*+"
#: an offered tool's name after ``<|call|>`` written as an opener, then blanks and the object
_CALLED_NAME = re.compile(_CALLED + r"(?=\{)")
#: what may still become such a call as the text grows: a name so far, then the object's brace or the end
_CALLED_SO_FAR = re.compile(r"\s{0,16}+(?:" + _CALLED + r")?(?:\{|\Z)")
#: the channels a header names: written where the role belongs, the ``assistant`` role was left out
_CHANNELS = frozenset(("analysis", "commentary", "final"))
#: what ``<|constrain|>`` names: ``json``, or the recipient written in its place
_CONSTRAINT = re.compile(r"<\|constrain\|>[ \t]*+([^\s<>]+)")
#: a recipient of several words, up to the next header token or the constraint
_SPACED_RECIPIENT = re.compile(r"\bto=(\S+(?:[ \t]+(?!json\b)[^\s<>]+)+)")
_TOKEN = re.compile(r"<\|[a-z_]+\|>")
#: the constraint a header names before the message (``<|constrain|>json``)
_GLUED = "json"
#: more stray end tokens right after one (blanks between): removed with it as one span. Content
#: is the same (the prose between two cuts is trimmed at both, so blanks between them vanish
#: either way), but a flood costs one visit per run instead of one per token, which no head
#: can give (a stray end is always removed). Capped, so that a stream re-reading a growing
#: span stays linear. A ``<|call|>`` that opens a call (an object, or a name and one, after it) is
#: not part of the run: it is read on its own (only the run's last token can be followed by text).
_STRAY_RUN = re.compile(r"(?:\s*+<\|(?:end|call|return)\|>){0,63}")
#: what follows a ``<|call|>`` that opens a call: a name and an object, or an object
_OPENS_A_CALL = re.compile(r"\s{0,16}+(?:" + _CALLED + r")?\{")
#: what may stand between a stripped header's recipient and its JSON arguments: the
#: constraint (glued, spaced, with or without its token) and a surviving message token
_STRIPPED_TAIL = r"(?:[ \t]++commentary\b)?+[ \t]*+(?:json)?[ \t]*+(?:<\|constrain\|>[ \t]*+)?(?:json)?[ \t]*+(?:<\|message\|>)?+\s{0,16}+"
_STRIPPED_BODY = re.compile(_STRIPPED_TAIL + r"(?=\{)")
_RECIPIENT_PREFIX = "to=functions."
#: a stripped header up to the tool name: the recipient after the channel (glued to the text
#: before it or not), or in the role position (the channel then follows the name)
#: the constraint token after a recipient: with it, a header without ``<|message|>`` lost only that token
#: (without it, JSON glued to the name is no header gpt-oss writes: OVMS reads it as no call)
_CONSTRAINED = re.compile(r"[ \t]*+<\|constrain\|>")
#: a channel's recipient as the stripped reader's trigger spells it (see ``_message_token_dropped``)
_CHANNEL_RECIPIENT = re.compile(r"commentary to=functions\.[^\s<>{]+")
_STRIPPED_HEADS = ("commentary " + _RECIPIENT_PREFIX, "assistantcommentary " + _RECIPIENT_PREFIX, "assistant " + _RECIPIENT_PREFIX)
#: a recipient with nothing of the header around it, where an answer's call may begin
_BARE_HEADS = (_RECIPIENT_PREFIX, "to=")
#: recipients that address the reader, not a tool (Glimmer's answer goes ``to=user``)
TO_THE_READER = frozenset(("assistant", "user"))
#: a recipient in the role position right before ``<|channel|>`` once ``<|start|>assistant``
#: was the prefill: at the answer's start, a line's or after a token, optionally after the role
_ROLE_RECIPIENT = re.compile(r"(?:\A|(?<=[\s>]))(?:assistant[ \t]*)?to=([^\s<>]+)[ \t]*\Z")


def _header_head(trigger: str) -> str:
    """The scan lookahead for a header opener: ``<|message|>`` close enough, or the end near.

    ``extract`` returns None exactly when no ``<|message|>`` starts within
    ``MAX_HEADER`` characters of the trigger's start *and* the text runs on
    more than ``MAX_HEADER`` characters from there (otherwise it reads the
    message, or reports a header cut off by the end). ``<|message|>`` cannot
    overlap the trigger, so it starts 0..MAX_HEADER-len(trigger) characters
    after the head. The head looks for its
    ``m`` (two characters in) with a lookbehind for ``<|``: a dot-all run
    followed by a literal is a tight backwards scan in the regex engine with no
    attempt at the ``<`` of every other token, so a flood of ``<|start|>``
    costs a few hundred character steps per occurrence, and the end test
    ``(?!.{n})`` is a single length check.
    """
    room = MAX_HEADER - len(trigger)
    return rf"(?s:.){{2,{room + 2}}}m(?<=<\|m)essage\|>|(?!(?s:.){{{room + 1}}})"


@register_family
class HarmonyFamily(CallFamily):
    name = "harmony"
    #: header openers need <|message|> within a header's length (or the end that near); a
    #: stray end token is always removed, so it can have no head
    declared_triggers = static_triggers((START, CHANNEL, *_STRAY_ENDS), {START: _header_head(START), CHANNEL: _header_head(CHANNEL)})
    aliases = ("gpt-oss", "gpt_oss", "openai_harmony")
    summary = "gpt-oss Harmony: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>"

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Also the stripped header's recipient for each offered tool, glued to the text before it or not."""
        if ctx is None:
            return self.declared_triggers
        names = dict.fromkeys(n for tool in ctx.tools for n in (tool.name, identifier_safe(tool.name)) if n and not any(c.isspace() for c in n))
        stripped = (Trigger(f"{head}{name}", _STRIPPED_TAIL + r"\{", from_tool_names=True) for name in names for head in _STRIPPED_HEADS)
        # the recipient alone opening the answer (``to=search {"query": "x"}``): the role and channel stripped too
        bare = (Trigger(f"{head}{name}", _STRIPPED_TAIL + r"\{", Start.ANSWER, from_tool_names=True) for name in names for head in _BARE_HEADS)
        return (*self.declared_triggers, *stripped, *bare)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger.startswith(_BARE_HEADS):
            return self._stripped(text, pos, trigger, ctx) if begins_call_lines(text, pos) else None
        return self._header(text, pos, trigger, ctx)

    def _header(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if _RECIPIENT_PREFIX in trigger:
            return self._stripped(text, pos, trigger, ctx)
        if trigger in _STRAY_ENDS:
            if trigger == CALL and (called := self._called(text, pos, ctx)) is not None:
                return called
            run_end = _STRAY_RUN.match(text, pos + len(trigger)).end()  # type: ignore[union-attr]
            if run_end > pos + len(trigger) and text.endswith(CALL, 0, run_end) and _OPENS_A_CALL.match(text, run_end):
                run_end -= len(CALL)  # the run's last <|call|> opens a call (only the last is followed by text): read on its own
            stray = Extraction(end=run_end)
            # a call may still be arriving after it (``<|call|>f {"a"``): a stream reads it again as the text grows
            stray.provisional = text.endswith(CALL, 0, stray.end) and _CALLED_SO_FAR.match(text, stray.end) is not None
            return stray
        message_at = bounded_find(text, MESSAGE, pos, MAX_HEADER)
        if message_at == -1:
            dropped = self._message_token_dropped(text, pos, trigger, ctx)
            if dropped is not None:
                return dropped
            if len(text) - pos <= MAX_HEADER:
                return unreadable(self.name, text, pos, len(text), "output ended inside a message header", kind=DiagnosticKind.TRUNCATED)
            return None
        header = text[pos:message_at]
        closed = min((at for token in (*_STRAY_ENDS, START) if (at := header.find(token, len(trigger))) >= 0), default=-1)
        if closed >= 0:
            return Extraction(end=pos + closed)  # a header closed before any message (``…to=functions.f<|end|>``): nothing sent
        if trigger == START:
            role_part, _, channel_part = header[len(START) :].partition(CHANNEL)
            role = role_part.split()[0] if role_part.split() else ""
        else:
            role_part, channel_part, role = "", header[len(CHANNEL) :], "assistant"
        channel_words = _TOKEN.sub(" ", channel_part).split()
        channel = channel_words[0] if channel_words else ""
        recipient_match = _RECIPIENT.search(_TOKEN.sub(" ", header))
        recipient = recipient_match.group(1) if recipient_match else ""
        spaced = _SPACED_RECIPIENT.search(header) if ctx.has_tools and recipient else None
        if spaced is not None and resolve_name(spaced.group(1), ctx).known:
            recipient = spaced.group(1)  # an offered tool's name with a space in it (``to=Web Search``)
        role, channel, recipient, drift = _header_drift(header, role, channel, recipient, ctx)
        if recipient_match is not None and recipient == recipient_match.group(1) and not recipient_match.group().startswith(f"to={recipient}"):
            drift.append("the recipient spaced or quoted after to=")  # ``to= "create_artifact"``
        if not recipient and trigger == CHANNEL and channel != "final":  # the answer has no recipient
            before = _ROLE_RECIPIENT.search(text, max(0, pos - MAX_HEADER), pos)
            if before is not None:
                recipient, pos = before.group(1), before.start()
        body_start = message_at + len(MESSAGE)
        body_end, terminator = find_first(text, _BODY_ENDS, body_start)
        if body_end == -1:
            body_end = len(text)
        consumed = body_end + (len(terminator) if terminator in _STRAY_ENDS else 0)

        if role != "assistant":
            return Extraction(end=consumed)  # a tool's (or user's) message, not something to run
        if recipient and recipient not in TO_THE_READER:
            if (first := skip_space(text, body_start, body_end)) < body_end and text.startswith("<", first):
                return None  # markup, not JSON arguments: a dialect whose body another family reads (Glimmer's XML)
            found = self._call(text, pos, recipient, body_start, body_end, terminator, ctx, drift)
            found.start = pos
            return found
        if channel == "analysis":
            return Extraction(end=consumed, thinking=text[body_start:body_end])
        return Extraction(end=body_start)  # final/commentary prose: the body stays content

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        return len(text) - pos > MAX_HEADER  # None only when no <|message|> within a header's length

    def _stripped(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """``[assistant]commentary to=functions.NAME json{...}`` (or ``assistant to=functions.NAME commentary json``) with the header tokens stripped.

        The arguments are read no further than the same header written again.
        """
        opener = pos
        if text.endswith(CHANNEL, 0, pos) and _CONSTRAINED.match(text, pos + len(trigger)) and bounded_find(text, MESSAGE, pos, MAX_HEADER) == -1:
            opener = pos - len(CHANNEL)  # the header's tokens but no <|message|>: the span starts at its opener
        elif text.endswith("|>", 0, pos):
            return None  # a real token before it: a header the token reader declined
        name = _offered(trigger.rpartition(_RECIPIENT_PREFIX)[2] if _RECIPIENT_PREFIX in trigger else trigger.removeprefix(_BARE_HEADS[1]), ctx)
        body = _STRIPPED_BODY.match(text, pos + len(trigger))
        if name is None or body is None:
            return None
        read = json_object_before_reopen(text, body.end(), trigger)
        if read is None:
            return None
        arguments, end, repairs = read
        after = skip_space(text, end)
        token = _end_token_at(text, after)
        if token:
            end = after + len(token)
        missing = "header tokens missing (stripped special tokens?)" if opener == pos else f"{MESSAGE} left out after the header"
        repairs = [missing, *repairs]
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[opener:end], opener, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics, start=opener)

    def _called(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """``<|call|>f {…}<|end|>`` or ``<|call|>{"name": "f", "arguments": {…}}<|end|>``: the call token
        written before the call instead of after it (NanoTeams' logs of models trained on gpt-oss traces).

        Only a JSON object that an end token (or the output's end) closes,
        nothing between them; an outer brace left out before that token is
        supplied, as the token stands where it belongs. The name, when written, must be an offered tool's.
        """
        cursor = skip_space(text, pos + len(CALL), pos + len(CALL) + MAX_HEADER)
        named = _CALLED_NAME.match(text, cursor)
        name = _offered(named.group(1), ctx) if named is not None else None
        if named is not None and name is None:
            return None
        json_start = named.end() if named is not None else cursor
        if not text.startswith("{", json_start):
            return None
        body_end, terminator = find_first(text, _BODY_ENDS, json_start)
        if body_end == -1:  # the output's end (an end token there was set aside with the turn's frame)
            body_end = len(text)
        read = read_json_at(text, json_start, body_end, closers_bound(text, _BODY_ENDS, body_end))
        if read is None or type(read[0]) is not dict or skip_space(text, read[1], body_end) != body_end:
            return None
        value, _, repairs = read
        end = body_end + (len(terminator) if terminator in _STRAY_ENDS else 0)
        repairs = [f"{CALL} written before the call instead of after it", *repairs]
        diagnostics: list[Diagnostic] = []
        if name is not None:
            calls = [make_call(self.name, name, value, text[pos:end], pos, repairs, diagnostics)]
        else:
            found = calls_from_value(value, self.name, text[pos:end], repairs, require_arguments=True)
            if found is None or not found[0]:
                return None
            calls, diagnostics = found
        closed = terminator in _STRAY_ENDS
        # ended by the text's end: more text may still change the reading, so a stream reads it again as it grows
        return Extraction(end=end, calls=calls, diagnostics=diagnostics, final=closed, provisional=not terminator)

    def _message_token_dropped(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """``<|channel|>commentary to=functions.NAME <|constrain|>json{...}``: the header's tokens but no ``<|message|>``.

        gpt-oss drops that one token now and then; what follows the channel is
        then the stripped header's shape, read as it (an offered tool, its
        ``<|constrain|>`` token, a JSON object), the span starting at the header's opener.
        """
        channel_at = pos if trigger == CHANNEL else bounded_find(text, CHANNEL, pos, MAX_HEADER)
        if channel_at == -1:
            return None
        recipient = _CHANNEL_RECIPIENT.match(text, channel_at + len(CHANNEL))
        if recipient is None:
            return None
        found = self._stripped(text, recipient.start(), recipient.group(), ctx)
        if found is not None:
            found.start = pos
        return found

    def _call(
        self, text: str, pos: int, recipient: str, body_start: int, body_end: int, terminator: str, ctx: ParseContext,
        drift: Sequence[str] = (),
    ) -> Extraction:
        name, repairs = self._tool_name(recipient, ctx)
        repairs[:0] = drift
        json_start = skip_space(text, body_start, body_end)
        arguments: dict[str, Any] = {}
        if json_start == body_end:
            end = body_end
        else:
            if terminator and closer_past_strings(text, json_start, body_end, terminator) < 0:
                terminator = ""  # the text ends inside a string that quotes the token: still being written
            # a value naming a body-ending token in a string is still read whole
            read = read_json_at(text, json_start, body_end if terminator else None, closers_bound(text, _BODY_ENDS, body_end))
            if read is None or not isinstance(read[0], dict):
                end = body_end + (len(terminator) if terminator in _STRAY_ENDS else 0)
                kind = DiagnosticKind.TRUNCATED if not terminator else DiagnosticKind.UNPARSEABLE
                return unreadable(self.name, text, pos, end, f"arguments of {name!r} are not a JSON object", kind=kind)
            arguments, end, more = read[0], read[1], read[2]
            repairs.extend(more)
            inner = announced_call_arguments(arguments, name, ctx.tool(name))
            if inner is not None:  # ``to=f`` then ``{"name": "f", "arguments": {…}}``: the call written again
                arguments = inner
                repairs.append(ANNOUNCED_CALL)
        end = skip_space(text, end)
        token = _end_token_at(text, end)
        if token:
            end += len(token)
        elif end < len(text) and not text.startswith((START, CHANNEL), end):
            repairs.append("text after the JSON arguments ignored")
            # up to the token that ends the body; after arguments that quoted it, the next one
            later = find_first(text, _BODY_ENDS, end)[0] if end > body_end else body_end
            end = later if later >= 0 else len(text)
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics)

    @staticmethod
    def _tool_name(recipient: str, ctx: ParseContext) -> tuple[str, list[str]]:
        """The offered tool the recipient names, and the repairs that took.

        gpt-oss sometimes glues the ``json`` constraint to the recipient
        (``to=functions.shelljson<|message|>``, llama.cpp #15102): with tools
        offered, a name that is not one of them but is one once that suffix goes
        is read as that tool, and the repair recorded.
        """
        name = recipient[len("functions.") :] if recipient.startswith("functions.") else recipient
        offered = _offered(name, ctx)
        if offered is not None:
            return offered, []
        if name.endswith(_GLUED) and len(name) > len(_GLUED):
            offered = _offered(name[: -len(_GLUED)], ctx)
            if offered is not None:
                return offered, [f"split {_GLUED!r} glued to the recipient"]
        return name, []

    def render(self, calls: Sequence[ToolCall]) -> str:
        parts = []
        for index, call in enumerate(calls):
            prefix = "" if index == 0 else f"{START}assistant"
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            parts.append(f"{prefix}{CHANNEL}commentary to=functions.{call.name} <|constrain|>json{MESSAGE}{arguments}{CALL}")
        return "".join(parts)


def _header_drift(header: str, role: str, channel: str, recipient: str, ctx: ParseContext) -> tuple[str, str, str, list[str]]:
    """The role, channel and recipient a header written out of order means, and the repairs that took.

    gpt-oss and the models trained on its traces bend the header (NanoTeams'
    network logs): the channel where the role belongs (``<|start|>commentary
    to=read_file``), the tool as the role with no recipient (``<|start|>functions.f<|message|>``,
    which a tool's reply never writes without ``to=assistant``), and the tool
    named where the constraint belongs (``<|constrain|>create_artifact``). Each
    is read only for an offered tool, or, for the channel, as the channel.
    """
    repairs: list[str] = []
    if role in _CHANNELS:
        channel, role = role, "assistant"
        repairs.append("the channel written where the role belongs")
    if not recipient and role.startswith("functions.") and _offered(role[len("functions.") :], ctx) is not None:
        recipient, role = role, "assistant"
        repairs.append("the tool written where the role belongs, no recipient")
    if not recipient and (constraint := _CONSTRAINT.search(header)) is not None and _offered(constraint.group(1), ctx) is not None:
        recipient = constraint.group(1)
        repairs.append("the tool written where the constraint belongs")
    return role, channel, recipient, repairs


def _end_token_at(text: str, at: int) -> str:
    """The end token (``<|call|>``, ``<|end|>``, ``<|return|>``) that starts at ``at``, or ""."""
    return next((token for token in _STRAY_ENDS if text.startswith(token, at)), "")


def _offered(name: str, ctx: ParseContext) -> str | None:
    """The offered tool ``name`` means: itself, or the tool whose identifier-safe spelling it is."""
    if ctx.tool(name) is not None:
        return name
    for tool in ctx.tools:
        if identifier_safe(tool.name) == name:
            return tool.name
    return None
