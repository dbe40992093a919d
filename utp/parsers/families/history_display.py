"""A call written the way a chat client displays past calls: ``[Calling tool: f({"a": 1})]``.

Clients that show the model its earlier tool use as text (the history of an
agent run rendered for a model without native calls) write each call as a
bracketed line, and models continue the conversation by imitating it. The
line is a call: the tool's name, its arguments in parentheses (a JSON object,
or Python-style keywords), the closing bracket. Python-style arguments are
read as the pythonic family reads them, typed by the offered tool.

Also ``[Tool call: f({"a": 1})]``, the display ``[Calling tool: f with arguments: {"a": 1}]`` (or, in the
past tense a proxy records calls in, ``[assistant called tool: f with arguments: {…}]``), whose object a
client may print with typographic quotes (``{“a”: “x”}``: read as quotes), and
OpenClaw's ``[Tool Call: f (ID: call_1)] Arguments: {"a": 1}`` (the id is the
client's, not an argument), and an agent's lines ``Tool call: f (path: main.go)`` (or ``Tool call: `f(a=1)` ``) for offered tools,
where an answer's calls may start, one below another (the arguments as ``key: value`` pairs,
keywords or a JSON object).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family, static_triggers
from utp.parsers.pythoncalls import MAX_SPAN, bracket_end, build_python_calls, read_calls
from utp.parsers.familykit import make_call, read_json_at, unreadable
from utp.parsers.pyliteral import LiteralError
from utp.parsers.textscan import skip_space
from utp.parsers.yamlarguments import keyed_arguments
from utp.types import Diagnostic, DiagnosticKind, ToolCall

TRIGGER = "[Calling tool:"
#: the bracketed displays read alike: the name, then its arguments in parentheses (MLXFoundationModel's
#: tests write ``[Tool call: f({"a": 1})]``), or after ``with arguments:`` (a proxy's record of what the
#: assistant did, in the past tense: ``[assistant called tool: f with arguments: {…}]``, qoder-bridge's)
BRACKETED = (TRIGGER, "[Tool call:", "[assistant called tool:", "[Called tool:")
#: the name and the opening parenthesis after the trigger
_NAME = re.compile(r"[ \t]*([A-Za-z_][\w.\-]{0,127})[ \t]*(?=\(|with arguments:)")
HEAD = r"[ \t]*+[A-Za-z_][\w.\-]{0,127}+[ \t]*+(?:\(|with arguments:)"
#: the other display: ``[Calling tool: f with arguments: {"a": 1}]``
_WITH_ARGUMENTS = re.compile(r"with arguments:[ \t]*(?=\{)")
#: OpenClaw's display: ``[Tool Call: f (ID: call_1)] Arguments: {"a": 1}``
TOOL_CALL_TRIGGER = "[Tool Call:"
_TOOL_CALL_LINE = r"[ \t]*+([A-Za-z_][\w.\-]{0,127}+)[ \t]*+(?:\(ID:[^()\n]{0,128}+\)[ \t]*+)?\][ \t]*+Arguments:[ \t]*+(?=\{)"
_TOOL_CALL = re.compile(_TOOL_CALL_LINE)
#: a line of its own naming one call: ``Tool call: read_file (path: main.go)`` (an agent's text protocol,
#: the arguments as ``key: value`` pairs, keywords or a JSON object); the line ends after the ``)``
LINE_TRIGGER = "Tool call:"
#: watched for only as ``Tool call: NAME`` where an answer's call lines may start (its first line, after a
#: lead-in, its last lines): a literal opening with ``T`` (or a line break) anywhere would stop the scan at
#: every capital T (or line break) of every text, a flood of them read several times slower
#: (the call may stand in inline code, ``Tool call: `f(a=1)` ``, as gemma-4-e2b writes it under LM Studio)
_CALL_LINE_RE = re.compile(r"[ \t]*+(`?+)([A-Za-z_][\w.\-]{0,127}+)[ \t]*+\(([^\n]{0,4096})\)\1[ \t]*+(?=\r?\n|\Z)")
_CALL_LINE_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,127}")
#: what follows ``Tool call: NAME`` on its line (the scan lookahead)
_CALL_LINE_REST = r"[ \t]*+\([^\n]{0,4096}\)`?+[ \t]*+(?=\r?\n|\Z)"


@register_family
class HistoryDisplayFamily(CallFamily):
    name = "history_display"
    priority = 50
    declared_triggers = static_triggers(
        (*BRACKETED, TOOL_CALL_TRIGGER),
        {**dict.fromkeys(BRACKETED, HEAD), TOOL_CALL_TRIGGER: _TOOL_CALL_LINE.replace("(", "(?:", 1)},
    )
    aliases = ("calling_tool",)
    summary = '[Calling tool: f({"a": 1})] (a client\'s display of past calls, imitated)'

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Also ``Tool call: NAME`` for each offered tool, where an answer starts (a call line opening it)."""
        if ctx is None or not ctx.has_tools:
            return self.declared_triggers
        names = [name for name in ctx.by_name if _CALL_LINE_NAME.fullmatch(name)]
        lines = (Trigger(f"{LINE_TRIGGER} {quote}{name}", _CALL_LINE_REST, Start.ANSWER, from_tool_names=True) for name in names for quote in ("", "`"))
        return (*self.declared_triggers, *lines)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == TOOL_CALL_TRIGGER:
            return self._tool_call_line(text, pos)
        if trigger.startswith(LINE_TRIGGER):
            return self._call_lines(text, pos, ctx)
        named = _NAME.match(text, pos + len(trigger))
        if named is None:
            return None
        name, paren = named.group(1), named.end()
        labelled = _WITH_ARGUMENTS.match(text, paren)
        if labelled is not None:
            return self._labelled(text, pos, name, labelled.end())
        if not text.startswith("(", paren):
            return None
        close = bracket_end(text, paren, MAX_SPAN)
        if close == -1:
            return unreadable(self.name, text, pos, len(text), f"output ended inside the call to {name!r}", kind=DiagnosticKind.TRUNCATED)
        after = skip_space(text, close) if close > 0 else -1
        if close < 0 or not text.startswith("]", after):
            return None  # not the display's bracketed line
        end = after + 1
        inner = skip_space(text, paren + 1, close)
        if text.startswith("{", inner):  # the display's own shape: the arguments object
            read = read_json_at(text, inner, close - 1)
            if read is not None and isinstance(read[0], dict) and skip_space(text, read[1], close) == close - 1:
                diagnostics: list[Diagnostic] = []
                call = make_call(self.name, name, read[0], text[pos:end], pos, read[2], diagnostics)
                return Extraction(end, [call], diagnostics, final=True)
        try:
            raws, repairs, failures = read_calls(f"[{name}{text[paren:close]}]")
        except LiteralError as exc:
            return unreadable(self.name, text, pos, end, f"the arguments of {name!r} cannot be read: {exc}")
        if failures or len(raws) != 1:
            return unreadable(self.name, text, pos, end, f"the arguments of {name!r} are not literal values")
        calls, diagnostics = build_python_calls(self.name, raws, repairs, text[pos:end], pos, ctx)
        return Extraction(end, calls, diagnostics, final=True)

    def _labelled(self, text: str, pos: int, name: str, brace: int) -> Extraction | None:
        """``[Calling tool: f with arguments: {...}]``: the object, then the closing bracket."""
        close = bracket_end(text, brace, MAX_SPAN)
        if close == -1:
            return unreadable(self.name, text, pos, len(text), f"output ended inside the call to {name!r}", kind=DiagnosticKind.TRUNCATED)
        read = read_json_at(text, brace, close) if close > 0 else None
        if read is None or not isinstance(read[0], dict) or not text.startswith("]", skip_space(text, read[1])):
            return None  # not the display's bracketed line
        end = skip_space(text, read[1]) + 1
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, read[0], text[pos:end], pos, read[2], diagnostics)
        return Extraction(end, [call], diagnostics, final=True)

    def _tool_call_line(self, text: str, pos: int) -> Extraction | None:
        """``[Tool Call: f (ID: x)] Arguments: {...}``: the object ends the call."""
        line = _TOOL_CALL.match(text, pos + len(TOOL_CALL_TRIGGER))
        if line is None:
            return None
        read = read_json_at(text, line.end(), len(text))
        if read is None or not isinstance(read[0], dict):
            return None
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, line.group(1), read[0], text[pos : read[1]], pos, read[2], diagnostics)
        return Extraction(read[1], [call], diagnostics)

    def _call_lines(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """The call line at ``pos`` and the call lines right below it (one extraction: only the first
        starts where the scan looks for them)."""
        found = self._call_line(text, pos, ctx)
        while found is not None and text.startswith(LINE_TRIGGER, below := found.end + 1) and text.startswith("\n", found.end):
            more = self._call_line(text, below, ctx)
            if more is None:
                break
            found = Extraction(more.end, [*found.calls, *more.calls], [*found.diagnostics, *more.diagnostics], final=more.final)
        return found

    def _call_line(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """``Tool call: f (k: v, k2: v2)`` on a line of its own, for an offered tool."""
        line = _CALL_LINE_RE.match(text, pos + len(LINE_TRIGGER))
        tool = ctx.tool(line.group(2)) if line is not None else None
        if tool is None or text[text.rfind("\n", 0, pos) + 1 : pos].strip():
            return None  # no offered tool, or the label inside a sentence
        inner = line.group(3).strip()
        arguments: dict | None = {} if not inner else None
        if inner.startswith("{"):
            read = read_json_at(inner, 0)
            arguments = read[0] if read is not None and isinstance(read[0], dict) and read[1] == len(inner) else None
        elif inner:
            arguments = keyed_arguments(inner, tool)
        if arguments is None:
            try:
                raws, repairs, failures = read_calls(f"[{tool.name}({inner})]")
            except LiteralError:
                return None
            if failures or len(raws) != 1:
                return None
            calls, diagnostics = build_python_calls(self.name, raws, repairs, text[pos : line.end()], pos, ctx)
            return Extraction(line.end(), calls, diagnostics, final=True)
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, tool.name, arguments, text[pos : line.end()], pos, [], diagnostics)
        return Extraction(line.end(), [call], diagnostics, final=True)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger.startswith(LINE_TRIGGER):
            return text.find("\n", pos + 1) >= 0  # the call line is decided once it ends
        return super().settled(text, pos, trigger)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"{TRIGGER} {c.name}({json.dumps(c.arguments, ensure_ascii=False)})]" for c in calls)
