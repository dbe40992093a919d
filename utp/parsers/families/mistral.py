"""Mistral's ``[TOOL_CALLS]``: a JSON list, or ``NAME[ARGS]{json}`` per call.

Older templates (v3) write ``[TOOL_CALLS] [{"name": ..., "arguments": ...}]``,
sometimes closed by ``[/TOOL_CALLS]``; newer ones (Mistral Small 3.2,
Magistral, Devstral, Ministral 3) write ``[TOOL_CALLS]NAME[ARGS]{json}`` and
repeat the tag for each call, optionally with ``[CALL_ID]id`` before
``[ARGS]``; some models drop ``[ARGS]`` (``[TOOL_CALLS]NAME{json}``). Text
before the tag is content (trailing whitespace, NBSP included, trimmed);
text after the arguments is content too. ``NAME[ARGS]`` right before the
end-of-sequence token ``</s>`` or the next ``[TOOL_CALLS]`` is a call that
takes no arguments (the model wrote none and ended the call). For an offered
tool, ``NAME[ARGS]{json}`` without the ``[TOOL_CALLS]`` before it (a server that
skips special tokens keeps ``[ARGS]`` when the tokenizer spells it as text) is
read the same way, the repair recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family, static_triggers
from utp.parsers.callshape import build_call, skip_ws, unparseable
from utp.parsers.familykit import ended_before, identifier_safe
from utp.parsers.textscan import find_forward
from utp.parsers.taggedjson import extract_tagged_json
from utp.parsers.jsonrepair import decode_json_at
from utp.types import Diagnostic, DiagnosticKind, ToolCall

TAG = "[TOOL_CALLS]"
CLOSE = "[/TOOL_CALLS]"
ARGS = "[ARGS]"
_NAMED = re.compile(r"\s*([A-Za-z_][\w.\-]{0,127})\s*(?:\[CALL_ID\]\s*([\w\-]{1,64})\s*)?(?:\[ARGS\])?\s*(?=\{)")
#: all that is left when the output stops inside a named call (``NAME[ARG``): reported as truncated.
#: Possessive: each run is followed only by characters it cannot take (``[A-Z_]`` then ``]``, ``\s``
#: or more ``[\w\-]``, which the last run reads the same), so giving back never helps and a long
#: word costs one pass instead of a quadratic backtrack
#: ``NAME[ARGS]`` with no arguments before the end-of-sequence token, the next call or the output's end
#: (there the stop token was its closer: read as written, withheld when the length limit stopped it)
_NO_ARGUMENTS = r"\s*+([A-Za-z_][\w.\-]{0,127}+)\s*+(?:\[CALL_ID\]\s*+([\w\-]{1,64}+)\s*+)?\[ARGS\]\s*+(?=</s>|\[TOOL_CALLS\]|(\Z))"
_NO_ARGUMENTS_RE = re.compile(_NO_ARGUMENTS)
_TRUNCATED = r"\s*+[\w.\-]*+(?:\[[A-Z_]*+\]?)?\s*+[\w\-]*+"
_TRUNCATED_RE = re.compile(_TRUNCATED)
#: the scan lookahead: what ``extract`` reads after the tag. JSON (``[`` or ``{`` after whitespace, as
#: ``skip_ws`` skips it: ``\s`` is ``str.isspace``), ``_NAMED`` (here possessive: each run stops at a
#: character the next part cannot take, so the match is the same), or the truncated tail to ``\Z``.
#: Anything else makes ``extract`` return None, so those positions are never visited.
_HEAD = (
    r"\s*+(?:[\[{]"
    r"|[A-Za-z_][\w.\-]{0,127}+\s*+(?:\[CALL_ID\]\s*+[\w\-]{1,64}+\s*+)?(?:\[ARGS\])?\s*+\{"
    rf"|{_TRUNCATED}\Z"
    r"|[A-Za-z_][\w.\-]{0,127}+\s*+(?:\[CALL_ID\]\s*+[\w\-]{1,64}+\s*+)?\[ARGS\]\s*+(?:</s>|\[TOOL_CALLS\]|\Z))"
)


@register_family
class MistralFamily(CallFamily):
    name = "mistral"
    priority = 50
    aliases = ("mistral_tool_calls", "ministral", "magistral", "devstral", "mistral_TOOL_CALLS")
    summary = '[TOOL_CALLS][{"name": ..., "arguments": {...}}] or [TOOL_CALLS]NAME[ARGS]{...}'
    declared_triggers = static_triggers((TAG,), {TAG: _HEAD})

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Also an offered tool's ``NAME[ARGS]`` where a word starts (its ``[TOOL_CALLS]`` stripped)."""
        if ctx is None:
            return self.declared_triggers
        names = dict.fromkeys(n for tool in ctx.tools for n in (tool.name, identifier_safe(tool.name)) if n and not any(c.isspace() for c in n))
        return (*self.declared_triggers, *(Trigger(f"{name}{ARGS}", r"\s*+\{", Start.WORD, from_tool_names=True) for name in names))

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger != TAG:
            return self._stripped(text, pos, trigger)
        body = pos + len(TAG)
        start = skip_ws(text, body)
        if start < len(text) and text[start] in "[{":
            found = extract_tagged_json(self.name, text, pos, start, (CLOSE,))
            if found is not None:
                return found
        named = _NAMED.match(text, body)
        if named is None and (bare := _NO_ARGUMENTS_RE.match(text, body)) is not None:
            repairs = ["no arguments after [ARGS]", *([ended_before("{")] if bare.group(3) is not None else [])]
            call, diagnostics = build_call(bare.group(1), {}, self.name, text[pos : bare.end()], repairs, bare.group(2))
            return Extraction(bare.end(), [call] if call else [], diagnostics)
        if named is None:
            if skip_ws(text, body) >= len(text) or _TRUNCATED_RE.fullmatch(text, body):
                return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended inside a call", text[pos:][:300], self.name, pos)])
            return None
        try:
            value, end, repairs = decode_json_at(text, named.end())
        except ValueError as exc:
            return Extraction(len(text), [], [unparseable(self.name, f"arguments of {named.group(1)!r}: {exc}", text[pos:], pos)])
        call, diagnostics = build_call(named.group(1), value, self.name, text[pos:end], repairs, named.group(2))
        after = skip_ws(text, end)
        if text.startswith(CLOSE, after):
            end = after + len(CLOSE)
        return Extraction(end, [call] if call else [], diagnostics)

    def _stripped(self, text: str, pos: int, trigger: str) -> Extraction | None:
        """``NAME[ARGS]{json}`` with no ``[TOOL_CALLS]`` before it, read no further than the same trigger again."""
        start = skip_ws(text, pos + len(trigger))
        again = find_forward(text, trigger, start)
        try:
            value, end, repairs = decode_json_at(text, start, len(text) if again < 0 else again)
        except ValueError:
            return None
        if type(value) is not dict:
            return None
        call, diagnostics = build_call(trigger[: -len(ARGS)], value, self.name, text[pos:end], [f"{TAG} missing before {ARGS}", *repairs])
        return Extraction(end, [call] if call else [], diagnostics)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"{TAG}{c.name}[ARGS]{json.dumps(c.arguments, ensure_ascii=False)}" for c in calls)
