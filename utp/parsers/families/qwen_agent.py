"""Qwen-Agent's function-call prompt: ``✿FUNCTION✿: NAME`` then ``✿ARGS✿: {...}``.

Qwen-Agent's "qwen" function-calling prompt (``qwen_agent/llm/fncall_prompts/
qwen_fncall_prompt.py``, the format Qwen1.5 and Qwen2 were tuned on and the one
the framework teaches any model it drives) asks for lines ``✿FUNCTION✿: NAME``
and ``✿ARGS✿: INPUT`` inside the reply, one pair per call, and stops generation
at ``✿RESULT✿`` / ``✿RETURN✿`` (the framework writes the tool's result and the
model replies after ``✿RETURN✿``). Read as that prompt's own parser reads it:

* prose before the first marker is content;
* the name runs to the end of its line; several ``✿ARGS✿`` after one name are
  several calls of that tool; a name with no ``✿ARGS✿`` is a call without
  arguments;
* the input runs to the next marker: a JSON object (text after its closing
  brace is not part of it), or, for an offered tool with one parameter, text
  for that parameter (``code_interpreter`` takes a Markdown code block).

A server that does not know the stop words lets the model go on with a result
it invents (``✿RESULT✿: ...``) and an answer built on it (``✿RETURN✿: ...``);
that text is dropped from the content and reported, as the framework never
lets it exist.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import closers_bound, make_call, read_json_at, still_quoting, unreadable
from utp.parsers.jsonrepair import CLOSED_TRUNCATED
from utp.parsers.textscan import find_first, is_proper_prefix, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

FN_NAME = "✿FUNCTION✿"
FN_ARGS = "✿ARGS✿"
FN_RESULT = "✿RESULT✿"
FN_EXIT = "✿RETURN✿"
MARKERS = (FN_NAME, FN_ARGS, FN_RESULT, FN_EXIT)
#: after a marker: its colon (the reference splits on ``✿FUNCTION✿:``, so a marker named in
#: prose is not a call), then the rest of the line up to the next marker
_LINE = re.compile(r"[ \t]*+(:?)[ \t]*+([^\n✿]{0,256}+)")
#: the scan lookahead: a name on the marker's own line (its colon may be left out: then ``✿ARGS✿`` must follow)
_HEAD = r"[ \t]*+:?[ \t]*+[^\s✿]"
#: the repair a call whose markers lost their colons records
COLON_LEFT_OUT = "the colon after ✿FUNCTION✿ left out"
#: without the colon: the name glued to the marker, alone on its line, then ✿ARGS✿ on the next
_COLONLESS = re.compile(r"[A-Za-z_][\w.\-]{0,255}+[ \t]*+\r?\n")


@register_family
class QwenAgentFamily(CallFamily):
    name = "qwen_agent"
    priority = 50
    aliases = ("qwen_fncall", "qwen_agent_fncall", "qwen2_fncall")
    declared_triggers = static_triggers((FN_NAME,), {FN_NAME: _HEAD})
    summary = "✿FUNCTION✿: NAME\\n✿ARGS✿: {...} (Qwen-Agent's function-call prompt)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        line = _LINE.match(text, pos + len(FN_NAME))
        name = line.group(2).strip() if line is not None else ""
        if not name or line is None:
            return None
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        end = line.end()
        cursor = skip_space(text, end)
        if not line.group(1) and (not text.startswith(FN_ARGS, cursor) or _COLONLESS.fullmatch(text, pos + len(FN_NAME), cursor) is None):
            return None  # no colon: only ``✿FUNCTION✿read_file`` and ``✿ARGS✿`` on the next line (else a marker named in prose)
        while text.startswith(FN_ARGS, cursor) and _LINE.match(text, cursor + len(FN_ARGS)) is not None:
            read = self._input(text, pos, name, cursor, ctx, diagnostics)
            if isinstance(read, Extraction):
                read.calls[:0] = calls
                read.diagnostics[:0] = diagnostics
                return read
            if not line.group(1):
                read[0].repairs.insert(0, COLON_LEFT_OUT)
            calls.append(read[0])
            end = read[1]
            cursor = skip_space(text, end)
        if _undecided(text, cursor):
            # the text ends before the next marker is complete: a stream waits for it
            tool = ctx.tool(name)
            if not calls and cursor >= len(text) and tool is not None and not tool.properties:
                # an offered tool that takes nothing: its name alone is the whole call (AGENT8088's ``git_status``)
                return Extraction(len(text), [make_call(self.name, name, {}, text[pos:end], pos)], diagnostics, provisional=True)
            if not calls:
                return unreadable(self.name, text, pos, len(text), f"output ended before the input of {name!r}", kind=DiagnosticKind.TRUNCATED)
            return Extraction(len(text), calls, diagnostics)
        if not calls:  # the reference reads a name alone as a call without arguments
            calls.append(make_call(self.name, name, {}, text[pos:end], pos))
        if text.startswith((FN_RESULT, FN_EXIT), cursor):
            diagnostics.append(
                Diagnostic(
                    DiagnosticKind.REPAIRED,
                    f"{self.name}: text from {text[cursor : cursor + len(FN_RESULT)]} on dropped (a tool result and answer the model wrote itself)",
                    text[cursor : cursor + 300],
                    self.name,
                    cursor,
                )
            )
            end = len(text)
        return Extraction(end, calls, diagnostics)

    def _input(
        self, text: str, pos: int, name: str, at: int, ctx: ParseContext, diagnostics: list[Diagnostic]
    ) -> tuple[ToolCall, int] | Extraction:
        """One ``✿ARGS✿`` at ``at``: the call and where its input ends, or the report."""
        colon = _LINE.match(text, at + len(FN_ARGS))
        start = skip_space(text, colon.start(2)) if colon is not None else at + len(FN_ARGS)
        stop = find_first(text, MARKERS, start)[0]
        stop = len(text) if stop < 0 else stop
        raw = text[start:stop].rstrip()
        if not raw:
            if stop == len(text):  # nothing after the marker yet: cut off (a stream waits)
                return unreadable(self.name, text, pos, len(text), f"output ended before the input of {name!r}", kind=DiagnosticKind.TRUNCATED)
            return make_call(self.name, name, {}, text[pos:stop], pos), stop
        if raw[0] == "{":
            # a marker inside a JSON string is the argument's text: valid JSON is read a few markers on
            bound = closers_bound(text, MARKERS, start)
            if stop < len(text) and still_quoting(text, start, stop, bound):
                return unreadable(self.name, text, pos, len(text), f"output ended inside the input of {name!r}", kind=DiagnosticKind.TRUNCATED)
            got = read_json_at(text, start, stop, bound)
            if got is not None and CLOSED_TRUNCATED in got[2] and stop < len(text):
                return unreadable(self.name, text, pos, stop, f"input of {name!r} breaks off where the next marker begins")
            if got is not None and isinstance(got[0], dict):
                value, end, repairs = got
                return make_call(self.name, name, value, text[pos:end], pos, repairs, diagnostics), end
            return unreadable(self.name, text, pos, stop, f"input of {name!r} is not a JSON object")
        tool = ctx.tool(name)
        if tool is None or len(tool.properties) != 1:
            return unreadable(self.name, text, pos, stop, f"input of {name!r} is text, and no offered tool with one parameter takes it")
        (parameter,) = tool.properties
        arguments: dict[str, Any] = {parameter: raw}
        repairs = [f"text input given to the only parameter {parameter!r} of {name!r}"]
        return make_call(self.name, name, arguments, text[pos:stop], pos, repairs, diagnostics), stop

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Final once the marker's line ends with no name on it, or, its colon left out, once what
        follows the line cannot be ``✿ARGS✿`` (a marker named in prose)."""
        line = _LINE.match(text, pos + len(FN_NAME))
        assert line is not None  # (every part of it is optional)
        if line.end() >= len(text):
            return False  # the line is still arriving
        if not line.group(2).strip():
            return True
        cursor = skip_space(text, line.end())
        if line.group(1) or _COLONLESS.fullmatch(text, pos + len(FN_NAME), cursor) is None:
            return True
        return cursor < len(text) and not text.startswith(FN_ARGS, cursor) and not is_proper_prefix(text, cursor, FN_ARGS)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"{FN_NAME}: {c.name}\n{FN_ARGS}: {json.dumps(c.arguments, ensure_ascii=False)}" for c in calls)


def _undecided(text: str, cursor: int) -> bool:
    """Is the text at ``cursor`` nothing yet, or only the start of a marker?"""
    return cursor >= len(text) or any(is_proper_prefix(text, cursor, marker) for marker in MARKERS)
