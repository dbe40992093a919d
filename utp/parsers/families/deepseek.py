"""DeepSeek V3 / R1 / V3.1 calls between special tokens with full-width bars.

V3 and R1 (0528)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
    ```json
    {"arg": 1}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

V3.1 drops the type and the fence: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``;
V3's type and name with the fence dropped (``function<｜tool▁sep｜>NAME {...}``, the JSON on the
name's line or the next) is read too.
Inside the block a call whose begin token was left out (``NAME<｜tool▁sep｜>`` right
after the block opener or a call end) is read, the repair recorded, and so is one whose
separator was dropped, ``function`` and the name then on lines of their own.
R1 templates that offer a code interpreter fence its code instead (```` ```python ````): a
fenced body that is not JSON goes to an offered tool with exactly one parameter.
The bars are U+FF5C and the spaces U+2581; templates and detokenisers also
produce ASCII ``|`` bars (and ``_`` for ``▁``), so every spelling is read.

StepFun Step-3 writes the same tokens (``_`` spelling) around Claude-style
invokes with a ``steptml:`` prefix (its chat template; vLLM's and SGLang's
step3 parsers)::

    <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
    <steptml:parameter name="k">v</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>

``function<｜tool_sep｜>`` may be missing or followed by the name on its own
line, and a ``<｜tool_sep｜>`` may separate calls. Parameter values are raw
text typed by the tool's schema (JSON when untyped and JSON), read by
anthropic_xml's invoke reader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.families.anthropic_xml import SYNTAX as _CLAUDE_SYNTAX
from utp.parsers.families.anthropic_xml import InvokeSyntax, read_invoke_run
from utp.parsers.callshape import build_call, unparseable
from utp.parsers.familykit import closer_past_strings, sole_parameter, string_open_at
from utp.parsers.jsonrepair import loads_lenient
from utp.parsers.textscan import find_forward
from utp.types import Diagnostic, DiagnosticKind, ToolCall


def _spellings(words: str) -> tuple[str, ...]:
    """``tool calls begin`` → every bar / space-marker spelling of the token."""
    out = []
    for left, right in (("<｜", "｜>"), ("<|", "|>")):
        for space in ("▁", "_"):
            out.append(left + space.join(words.split()) + right)
    return tuple(out)


#: DeepSeek-R1's distilled models open the calls with ``<｜tool▁calls｜>`` (no ``begin``)
CALLS_BEGIN = _spellings("tool calls begin") + ("<｜tool▁calls｜>",)
CALLS_END = _spellings("tool calls end")
CALL_BEGIN = _spellings("tool call begin")
CALL_END = _spellings("tool call end")
SEP = _spellings("tool sep")
EOS = _spellings("end of sentence")
_TOKEN_ALTERNATION = "|".join(re.escape(t) for t in CALLS_BEGIN + CALLS_END + CALL_BEGIN + CALL_END + SEP + EOS)
#: ``function``, then the tool's name on a line of its own, with no separator token between them (a
#: call inside the call tokens written as ``function\nget_weather\n{…}``: the token was dropped)
_SEPARATOR_AS_LINE_BREAK = re.compile(r"\s*+function[ \t]*+\n[ \t]*+([^\s{}<>`]{1,256}+)[ \t]*+(?:\n|\Z)")
#: the repair such a call records
SEPARATOR_AS_LINE_BREAK = "a line break where <｜tool▁sep｜> belongs"
_TOKEN = re.compile(_TOKEN_ALTERNATION)
#: what keeps ``extract``'s loop going after a calls token (or ends the text there): anything else
#: makes that token a stray one, consumed alone
#: a call whose ``<｜tool▁call▁begin｜>`` was left out inside the block: its name glued to the separator
_UNOPENED_CALL = re.compile(r"[^\s<>{}\[\]\"'｜|]{1,256}+(?=" + "|".join(re.escape(t) for t in SEP) + ")")
_CONTINUES = re.compile(r"\s*+(?:" + "|".join(re.escape(t) for t in CALLS_END + EOS + CALL_BEGIN) + "|" + _UNOPENED_CALL.pattern + r"|\Z)")
#: a run of stray calls tokens after one (blanks between), each not continued: removed with it
#: as one span. Content is the same (the prose between two cuts is trimmed at both), but a
#: flood costs one visit per run instead of one per token. Capped, so that a stream re-reading
#: a growing span stays linear.
_STRAY_RUN = re.compile(
    r"(?:\s*+(?:" + "|".join(re.escape(t) for t in CALLS_BEGIN) + r")(?!" + _CONTINUES.pattern + r")){0,63}"
)
#: scan lookahead for a call token: ``extract`` returns None unless ``_separated``, i.e. unless
#: the first token after it (``_TOKEN.search``) is a separator. The loop walks exactly the text
#: that search skips: runs without ``<`` and any ``<`` that opens no token (no token is a prefix of
#: another, so the token at a ``<`` is unambiguous); possessive, so it stops at the first token
#: (or the end) without backtracking. A text of call tokens is thus checked token to token,
#: linear in all. The calls token gets no head: ``extract`` always consumes it, if only as a
#: stray token.
#: Step-3: a call token right before a ``<steptml:invoke`` (the other way ``extract`` reads one)
_STEP_INVOKE_HEAD = r"\s*+<steptml:invoke\s"
CALL_HEAD = (
    "(?:" + _STEP_INVOKE_HEAD + "|(?:[^<]++|(?!" + _TOKEN_ALTERNATION + ")<)*+(?:" + "|".join(re.escape(t) for t in SEP) + "))"
)
#: Step-3's invoke markup (``steptml:`` prefix on both tags)
STEP_SYNTAX = InvokeSyntax(
    re.compile(r"<(?P<prefix>steptml:)invoke\s+name\s*=\s*([\"'])(?P<name>[^\"'\n<>]{1,256})\2\s*>"),
    re.compile(r"<steptml:parameter\s+name\s*=\s*([\"'])(?P<key>[^\"'\n<>]{1,256})\1\s*>"),
    _CLAUDE_SYNTAX.value,
)
_STEP_INVOKE = STEP_SYNTAX.invoke
#: the optional name line between ``function<｜tool_sep｜>`` and a Step-3 invoke
_STEP_NAME_LINE = re.compile(r"[ \t]*+[^\s<>]{1,256}+[ \t]*+\n")


@register_family
class DeepseekFamily(CallFamily):
    name = "deepseek"
    priority = 50
    aliases = ("deepseek_v3", "deepseek_r1", "deepseek_v31", "deepseek_v3_1")
    declared_triggers = static_triggers(CALLS_BEGIN + CALL_BEGIN, dict.fromkeys(CALL_BEGIN, CALL_HEAD))
    summary = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME ```json {...}```<｜tool▁call▁end｜>..."

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger in CALLS_BEGIN and _CONTINUES.match(text, pos + len(trigger)) is None:
            # the loop below would stop at once: a stray calls token (no head can skip it, so a
            # flood of them comes here once per token; this keeps each visit cheap)
            return Extraction(_STRAY_RUN.match(text, pos + len(trigger)).end())  # type: ignore[union-attr]
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        cursor = pos + len(trigger) if trigger in CALLS_BEGIN else pos
        if trigger not in CALLS_BEGIN and not _separated(text, cursor + len(trigger)) and _step_invoke_at(text, cursor + len(trigger)) < 0:
            return None  # a bare call token with no tool separator: Kimi-K2's spelling, or no call
        end = cursor
        while True:
            token = _TOKEN.match(text, _skip(text, cursor))
            unopened = _UNOPENED_CALL.match(text, _skip(text, cursor)) if token is None and trigger in CALLS_BEGIN else None
            if unopened is not None:  # a call begin token left out inside the block: the call starts here
                cursor = self._read_one(text, pos, unopened.start(), calls, diagnostics, ctx, ["missing <｜tool▁call▁begin｜>"])
                if cursor < 0:
                    return Extraction(len(text), calls, diagnostics)
                end = cursor
                continue
            if token is None:
                break
            word = token.group()
            if word in CALLS_END or word in EOS:
                end = cursor = token.end()
                continue
            if word in SEP and calls:
                # Step-3 separates calls with a tool separator: go on only if a call follows
                following = _TOKEN.match(text, _skip(text, token.end()))
                if following is None or following.group() not in CALL_BEGIN:
                    break
                cursor = token.end()
                continue
            if word not in CALL_BEGIN:
                break
            cursor = self._read_one(text, pos, token.end(), calls, diagnostics, ctx)
            if cursor < 0:
                return Extraction(len(text), calls, diagnostics)
            end = cursor
        if end == pos + len(trigger) and trigger in CALLS_BEGIN and not calls:
            if _skip(text, end) >= len(text):
                return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended after the calls token", text[pos:], self.name, pos)])
        if end <= pos:
            return None
        return Extraction(end, calls, diagnostics)

    def _read_one(
        self, text: str, pos: int, body_start: int, calls: list[ToolCall], diagnostics: list[Diagnostic], ctx: ParseContext,
        repairs: list[str] | None = None,
    ) -> int:
        """The call whose body starts at ``body_start``: read into ``calls``; the index past its end token (-1: cut off)."""
        close = min((k for k in (find_forward(text, t, body_start) for t in CALL_END) if k >= 0), default=-1)
        if close >= 0:
            close = closer_past_strings(text, body_start, close, next(t for t in CALL_END if text.startswith(t, close)))
        following = min((k for k in (find_forward(text, t, body_start) for t in CALL_BEGIN) if k >= 0), default=-1)
        if following >= 0 and (close < 0 or following < close) and not string_open_at(text, body_start, following):
            # the next call's begin token where this call's end token belongs (outside any string): it was left out
            self._read_call(text[body_start:following], pos, calls, diagnostics, ctx, [*(repairs or []), "missing <｜tool▁call▁end｜> before the next call"])
            return following
        body_end = close if close >= 0 else len(text)
        self._read_call(text[body_start:body_end], pos, calls, diagnostics, ctx, repairs or [])
        if close < 0:
            diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended inside a call", text[body_start:][:300], self.name, pos))
            return -1
        return close + len(next(t for t in CALL_END if text.startswith(t, close)))

    def _read_call(
        self, body: str, pos: int, calls: list[ToolCall], diagnostics: list[Diagnostic], ctx: ParseContext, noted: list[str]
    ) -> None:
        sep = _TOKEN.search(body)
        step = _step_invoke_at(body, 0)
        if step < 0 and sep is not None and sep.group() in SEP and body[: sep.start()].strip() in ("function", ""):
            after = sep.end()
            line = _STEP_NAME_LINE.match(body, after)
            step = _step_invoke_at(body, after)
            if step < 0 and line is not None:
                step = _step_invoke_at(body, line.end())
        if step >= 0:
            self._read_step(body, step, pos, calls, diagnostics, ctx)
            return
        lost = None
        if sep is None or sep.group() not in SEP:
            lost = _SEPARATOR_AS_LINE_BREAK.match(body)
            if lost is None:
                diagnostics.append(unparseable(self.name, "call without a tool separator", body, pos))
                return
            # ``function`` and the name on lines of their own: the separator token was dropped
            noted = [*noted, SEPARATOR_AS_LINE_BREAK]
            head, tail = "function", body[lost.start(1) :]
        else:
            head, tail = body[: sep.start()].strip(), body[sep.end() :]
        fenced = _fenced_arguments(tail) if head in ("function", "") else None
        unfenced = _UNFENCED.match(tail) if fenced is None and lost is None and head == "function" else None
        if unfenced is not None:  # V3's type and name, the arguments without their fence (gemma-style replies drop it)
            name, raw_args = unfenced.group(1), tail[unfenced.end() :]
        else:
            name, raw_args = fenced if fenced is not None else _name_line(tail) if lost is not None else (head, tail)
        if not name:
            diagnostics.append(unparseable(self.name, "call without a name", body, pos))
            return
        try:
            arguments, repairs = loads_lenient(raw_args) if raw_args.strip() else ({}, [])
        except ValueError as exc:
            parameter = sole_parameter(ctx, name) if fenced is not None else None
            if parameter is None:
                diagnostics.append(unparseable(self.name, f"arguments of {name!r}: {exc}", body, pos))
                return
            # a fence of code (R1 templates write the code interpreter's code so) for a one-parameter tool
            arguments, repairs = {parameter: raw_args.strip("\r\n")}, []
        call, diags = build_call(name, arguments, self.name, body, [*noted, *repairs])
        diagnostics.extend(diags)
        if call is not None:
            calls.append(call)

    def _read_step(self, body: str, at: int, pos: int, calls: list[ToolCall], diagnostics: list[Diagnostic], ctx: ParseContext) -> None:
        """Step-3's ``<steptml:invoke>`` run at ``body[at:]`` (the rest of the call body)."""
        run = read_invoke_run(self.name, body, at, ctx, STEP_SYNTAX)
        if isinstance(run, Extraction):
            calls.extend(run.calls)
            diagnostics.extend(run.diagnostics)
            return
        found, diags, end = run
        calls.extend(found)
        diagnostics.extend(diags)
        if body[end:].strip():
            diagnostics.append(unparseable(self.name, "text after the invoke in a call", body[end:], pos))

    def render(self, calls: Sequence[ToolCall]) -> str:
        begin, end = CALLS_BEGIN[0], CALLS_END[0]
        items = "".join(
            f"{CALL_BEGIN[0]}function{SEP[0]}{c.name}\n```json\n{json.dumps(c.arguments, ensure_ascii=False)}\n```{CALL_END[0]}"
            for c in calls
        )
        return f"{begin}{items}{end}"


#: V3's body after ``function<｜tool▁sep｜>``: the name, then its JSON arguments unfenced, on its line or the next
_UNFENCED = re.compile(r"[ \t]*+([^\s{}<>`\[\]]{1,200}+)\s*+(?=[{\[])")


def _name_line(tail: str) -> tuple[str, str]:
    """``NAME`` on its line, then the arguments (or nothing)."""
    name, _, rest = tail.partition("\n")
    return name.strip(), rest


def _fenced_arguments(tail: str) -> tuple[str, str] | None:
    """V3/R1 body after the separator: ``NAME\n```json\n{...}\n```` → ``(NAME, "{...}")``."""
    newline = tail.find("\n")
    if newline < 0:
        return None
    name = tail[:newline].strip()
    rest = tail[newline + 1 :].strip()
    if not name or len(name) > 200 or not rest.startswith("```"):
        return None
    body_start = rest.find("\n")
    if body_start < 0:
        return None
    body = rest[body_start + 1 :]
    if body.rstrip().endswith("```"):
        body = body.rstrip()[:-3]
    return name, body


def _step_invoke_at(text: str, at: int) -> int:
    """Where a Step-3 invoke starts at ``text[at:]`` after blanks (-1 when none does)."""
    start = _skip(text, at)
    return start if _STEP_INVOKE.match(text, start) else -1


def _separated(text: str, body_start: int) -> bool:
    """Does the call opening at ``body_start`` have a tool separator before its end?"""
    token = _TOKEN.search(text, body_start)
    return token is not None and token.group() in SEP


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos
