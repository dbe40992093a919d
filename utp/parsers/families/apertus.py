"""Swiss AI Apertus: ``<|tools_prefix|>[{"NAME": {args}}, ...]<|tools_suffix|>``.

Apertus (8B / 70B, Instruct) writes its calls as one JSON list between two
special tokens; each item is an object whose *only key* is the tool's name and
whose value is the arguments object (vLLM's ``apertus`` tool parser and the
model's chat template). The reference parser also reads:

- a single object instead of a list (``<|tools_prefix|>{"NAME": {...}}``);
- a missing ``<|tools_suffix|>`` (the block ends with its JSON; text after it
  is content);
- a list cut off by the end of the output (a token limit): what was written
  is closed and read, recorded as a repair; an item cut off before its
  arguments began is reported TRUNCATED, not run.

An item in the common ``{"name": ..., "arguments": ...}`` shape is read too.
The prefix is a special token, so what follows it is certainly meant as a call:
a body that is not JSON, or JSON that is not calls, is reported UNPARSEABLE.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.callshape import CUT_REPAIRS, build_call, skip_ws, split_call_object
from utp.parsers.familykit import clip, closer_bound, read_json_at, still_quoting, unreadable
from utp.parsers.jsonrepair import CLOSED_TRUNCATED
from utp.parsers.textscan import find_forward
from utp.types import Diagnostic, DiagnosticKind, ToolCall

PREFIX = "<|tools_prefix|>"
SUFFIX = "<|tools_suffix|>"


@register_family
class ApertusFamily(CallFamily):
    name = "apertus"
    priority = 50
    aliases = ("apertus_json", "swiss_ai")
    summary = '<|tools_prefix|>[{"NAME": {...}}, ...]<|tools_suffix|>'
    #: extract reads a JSON value, or reports the end of the output right after the prefix
    #: (``\s`` is a superset of the whitespace ``skip_ws`` skips)
    declared_triggers = static_triggers((PREFIX,), {PREFIX: r"\s*+(?:[\[{]|\Z)"})

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        cursor = skip_ws(text, pos + len(PREFIX))
        if cursor >= len(text):
            return unreadable(self.name, text, pos, len(text), "output ended after the tools prefix", kind=DiagnosticKind.TRUNCATED)
        if text[cursor] not in "[{":
            return None
        close = find_forward(text, SUFFIX, cursor)
        reopened = find_forward(text, PREFIX, cursor)
        # valid JSON may mention either token in a string a few times; repairs stop at the suffix
        bound = min(closer_bound(text, SUFFIX, cursor), closer_bound(text, PREFIX, cursor))
        ends = [k for k in (close, reopened) if k >= 0]
        limit = min(ends) if ends else len(text)
        if still_quoting(text, cursor, reopened, bound):
            # the prefix is quoted in a string the text ends inside: the block is still being written
            return unreadable(self.name, text, pos, len(text), "output ended inside the tools block", kind=DiagnosticKind.TRUNCATED)
        read = read_json_at(text, cursor, limit, bound)
        if read is None:
            end = close + len(SUFFIX) if close >= 0 else len(text)
            return unreadable(self.name, text, pos, end, "unreadable JSON after the tools prefix")
        value, jend, repairs = read
        if CLOSED_TRUNCATED in repairs and reopened >= 0 and (close < 0 or reopened < close):
            # cut off by a new block, not by the end of the output: abandoned, so not run
            return unreadable(self.name, text, pos, reopened, "tools block cut off by another tools prefix")
        calls, diagnostics = self._calls(value, text[cursor:jend], repairs, cursor)
        after = skip_ws(text, jend)
        closed = text.startswith(SUFFIX, after)
        end = after + len(SUFFIX) if closed else jend
        if not calls and not diagnostics:
            diagnostics.append(Diagnostic(DiagnosticKind.UNPARSEABLE, f"{self.name}: no call in the tools block", clip(text[pos:end]), self.name, pos))
        # valid JSON ends where it ends: a suffix arriving later only extends the span
        return Extraction(end, calls, diagnostics, final=closed, closer="" if closed or repairs else SUFFIX)

    def _calls(self, value: Any, raw: str, repairs: list[str], offset: int) -> tuple[list[ToolCall], list[Diagnostic]]:
        items = value if isinstance(value, list) else [value]
        truncated = CLOSED_TRUNCATED in repairs
        whole = [r for r in repairs if r not in CUT_REPAIRS]  # the cut fell in the last item: the ones before were written whole
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        for index, item in enumerate(items):
            last = index == len(items) - 1
            shaped = _split(item)
            if shaped is None:
                if truncated and last:
                    diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended inside a call", clip(raw), self.name, offset))
                else:
                    diagnostics.append(Diagnostic(DiagnosticKind.UNPARSEABLE, f"{self.name}: item {index} is not {{\"NAME\": {{arguments}}}}", clip(raw), self.name, offset))
                continue
            call, found = build_call(shaped[0], shaped[1], self.name, raw, repairs if last else whole)
            diagnostics.extend(found)
            if call is not None:
                calls.append(call)
        return calls, diagnostics

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Streaming: ``None`` is final once the body plainly does not start with JSON."""
        cursor = skip_ws(text, pos + len(PREFIX))
        return cursor < len(text) and text[cursor] not in "[{"

    def render(self, calls: Sequence[ToolCall]) -> str:
        body = json.dumps([{c.name: c.arguments} for c in calls], ensure_ascii=False)
        return PREFIX + body + SUFFIX


def _split(item: Any) -> tuple[str, Any] | None:
    """``(name, arguments)`` from ``{"NAME": {args}}`` (or the name/arguments shape), else None."""
    if not isinstance(item, dict) or not item:
        return None
    if len(item) == 1:
        name, arguments = next(iter(item.items()))
        if isinstance(arguments, dict) or (isinstance(arguments, str) and arguments.lstrip().startswith("{")):
            name = name.strip()
            if name and len(name) <= 200 and "\n" not in name:
                return name, arguments
    return split_call_object(item, require_arguments=True)
