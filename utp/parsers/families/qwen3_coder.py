"""Qwen3-Coder's XML-ish calls: ``<function=NAME><parameter=KEY>value</parameter></function>``.

Values are raw text, not JSON: ``42`` is a number only if the tool's schema
says so, and a shell command full of ``&&`` and ``a < b`` is one string. That
is why this is a hand-written scan and not an XML parser (``&`` and ``<`` in
values would break one). Names and keys are everything up to ``>``, spaces and
non-ASCII included. Models drop ``</parameter>`` before ``</function>``,
``</function>`` before the next call's ``<function=`` (a call ends where the
next opens: the template never nests them) and sometimes the opening
``<tool_call>`` (leaving a stray ``</tool_call>``); all are read, and so is Anthropic's ``<parameter name="KEY">`` mixed in
for ``<parameter=KEY>``. A body with text but no parameter tag in it is
reported, not run with no arguments. ByteDance Seed-OSS writes the same calls in
``<seed:tool_call>…</seed:tool_call>`` (its chat template).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.pythoncalls import names_offered_tool
from utp.parsers.elements import child_elements
from utp.parsers.familykit import ended_before, make_call, read_json_at, render_value, unreadable
from utp.parsers.typedvalues import property_schema, typed_value
from utp.parsers.scanloop import call_span_limit
from utp.parsers.qwen3markup import (
    BENT_FUNCTION_END, BLOCKS, CLOSE, FUNCTION, FUNCTION_END, KEY_ELEMENT, MAX_NAME, NEXT_CALL, OPEN, PARAMETER, PARAMETER_END,
    TAGGED_PARAMETER, key_elements_closed_as_parameters, name_settled, quoted_at, read_name, read_parameters, read_unclosed_name,
)
from utp.parsers.textscan import find_forward, is_proper_prefix, skip_space, space_before
from utp.types import Diagnostic, DiagnosticKind, ToolCall

def _call_starts_between(text: str, start: int, end: int) -> bool:
    """Does another call open in ``text[start:end]``? Then a ``</tool_call>`` before it really closed the block."""
    opener = find_forward(text, FUNCTION, start)
    return opener != -1 and opener < end


def _inside_open_value(text: str, start: int, at: int) -> bool:
    """Is ``at`` inside a parameter value (tag after ``start``) whose ``</parameter>`` has not come by then?"""
    tag = text.rfind("<parameter", start, at)
    return tag != -1 and text.find(PARAMETER_END, tag, at) == -1


@register_family
class Qwen3CoderFamily(CallFamily):
    name = "qwen3_coder"
    #: above hermes and glm on the shared <tool_call>; above functionary on <function=
    priority = 70
    #: wrapped calls open with ``<function=`` (scan lookahead; the bare trigger needs none)
    #: a bare <function= is ours only with a name closed by '>' (no '<' or '{' in it) within
    #: MAX_NAME characters, then at most MAX_NAME whitespace and <parameter= (or Anthropic's
    #: <parameter name=, which MiniMax writes there), </function>, or an element named by one of the
    #: offered tool's parameters (``_bare_body_is_ours``); possessive runs, as the first '>' ends the name
    declared_triggers = static_triggers((*BLOCKS, FUNCTION), {
        **dict.fromkeys(BLOCKS, r"\s*<function="),
        FUNCTION: rf"[^<>{{]{{0,{MAX_NAME}}}+>\s{{0,{MAX_NAME}}}+(?:<parameter(?:=|\s+name\s*=)|</function>|<[A-Za-z_])",
    })
    aliases = ("qwen3_coder_xml", "qwen3-coder")
    summary = "Qwen3-Coder: <tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call>"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        closer = BLOCKS.get(trigger, "")
        wrapped = bool(closer)
        cursor = skip_space(text, pos + len(trigger), pos + len(trigger) + MAX_NAME) if wrapped else pos
        if not text.startswith(FUNCTION, cursor):
            return None
        if not wrapped and not self._bare_body_is_ours(text, cursor, ctx):
            return None
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        provisional = False
        limit = call_span_limit(ctx)
        while len(calls) < limit:  # one block of a model repeating itself is read to the response's limit
            outcome = self._read_function(text, cursor, closer, ctx, diagnostics)
            if isinstance(outcome, Extraction):
                outcome.calls[:0] = calls
                outcome.diagnostics[:0] = diagnostics
                outcome.end = max(outcome.end, cursor)
                outcome.provisional = outcome.provisional or provisional
                if outcome.end < len(text) and wrapped:
                    close = find_forward(text, closer, cursor)
                    outcome.end = len(text) if close == -1 else max(outcome.end, close + len(closer))
                return outcome
            call, cursor, closed_in_value = outcome
            calls.append(call)
            provisional = provisional or closed_in_value
            after = skip_space(text, cursor)
            if text.startswith(FUNCTION, after):
                cursor = after
                continue
            # read up to the block's closer (a bare call's stray one too): later text changes nothing,
            # unless that closer sat inside a value (then a </function> still to come overturns it)
            for block_end in (closer,) if wrapped else BLOCKS.values():
                if text.startswith(block_end, after):
                    return Extraction(end=after + len(block_end), calls=calls, diagnostics=diagnostics,
                                      final=not provisional, provisional=provisional)
            return Extraction(end=cursor, calls=calls, diagnostics=diagnostics, provisional=provisional)
        return Extraction(end=cursor, calls=calls, diagnostics=diagnostics, provisional=provisional)

    @staticmethod
    def _bare_body_is_ours(text: str, at: int, ctx: ParseContext) -> bool:
        """A bare ``<function=NAME>`` is ours only when parameters (or the close) follow.

        Functionary writes ``<function=NAME>{json}</function>`` and prose may
        mention ``<function=...>``; both are left to others. So is a "name"
        holding ``{``: that is Llama's ``<function=NAME{json}></function>``,
        the JSON glued to the name and the ``>`` after it (functionary's).
        The parameters may be elements named by their keys (``<path>a</path>``,
        as Qwen2.5-Coder writes them): then the name must be an offered tool's
        and the first element one of its parameters, or it is markup.
        """
        header = read_name(text, at + len(FUNCTION))
        if header is None or "{" in header[0]:
            return False
        body = skip_space(text, header[1], header[1] + MAX_NAME)
        if TAGGED_PARAMETER.match(text, body) is not None or text.startswith(FUNCTION_END, body):
            return True
        keyed = KEY_ELEMENT.match(text, body)
        tool = ctx.tool(header[0]) if keyed is not None else None
        return tool is not None and keyed.group(1) in tool.properties

    def _read_function(
        self, text: str, at: int, closer: str, ctx: ParseContext, diagnostics: list[Diagnostic]
    ) -> tuple[ToolCall, int, bool] | Extraction:
        """One ``<function=…>`` call at ``at``; ``closer`` is its block's closing tag ("" for a bare call).

        Returns the call, where it ends, and whether it was ended by a block closer inside
        a value still open there (a provisional reading: see :class:`Extraction`).
        """
        header = read_name(text, at + len(FUNCTION))
        repairs: list[str] = []
        if header is None and closer:  # inside the block a call is meant: a '>' left out is supplied
            header = read_unclosed_name(text, at + len(FUNCTION))
            body = skip_space(text, header[1]) if header is not None else -1
            if header is None or not text.startswith((PARAMETER, FUNCTION_END, closer), body):
                header = None
            elif ctx.has_tools and not names_offered_tool(header[0], ctx):
                header = None  # broken markup naming no offered tool: reported, not made a call
            else:
                repairs.append(f"'>' supplied after <function={header[0]}")
        if header is None:
            return unreadable(self.name, text, at, at + len(FUNCTION), "no function name closed by '>' after <function=")
        name, cursor = header
        if not text[at + len(FUNCTION)].isalnum() and quoted_at(text, at + len(FUNCTION)):
            repairs.append(f"quotes dropped around the name {name!r}")
        end = find_forward(text, FUNCTION_END, cursor)
        end_length = len(FUNCTION_END)
        # (looked for only up to the next call's opener: a flood of unclosed calls stays linear)
        if end == -1 and (bent := BENT_FUNCTION_END.search(text, cursor, _next_opener(text, cursor))) is not None:
            end, end_length = bent.start(), len(FUNCTION_END) - 1
            repairs.append(f"'>' supplied to {FUNCTION_END[:-1]}")
        # a bare call's </function> left out before a stray block closer: that closer ends it
        close = find_forward(text, closer or CLOSE, cursor) if closer or end == -1 else -1
        if close != -1 and end != -1 and close < end and not _call_starts_between(text, close, end):
            close = -1  # "</tool_call>" inside a value, not the end of this call
        closed_in_value = False
        # (searched up to the end of this call's </function>: a call opening there may be empty)
        following = NEXT_CALL.search(text, cursor, len(text) if end == -1 else end + end_length)
        if following is not None and (close == -1 or following.start() < close):
            end = after = following.start()  # the template never nests calls: this one's closers were left out
            repairs.append(f"missing {FUNCTION_END} before the next {FUNCTION}")
        elif end == -1 or (close != -1 and close < end):
            if close == -1:
                cut = self._cut_after_parameter(text, at, name, cursor, ctx, diagnostics)
                if cut is not None:
                    return cut
                return unreadable(
                    self.name, text, at, len(text), f"call to {name!r} ends before </function>", kind=DiagnosticKind.TRUNCATED
                )
            end, after = close, close
            repairs.append(f"missing </function> before {closer or CLOSE}")
            closed_in_value = _inside_open_value(text, cursor, close)
        else:
            after = end + end_length
        body_start = skip_space(text, cursor, end)
        if text.startswith("{", body_start):
            arguments = self._json_body(text, body_start, end, repairs)
            if arguments is None:
                return unreadable(self.name, text, at, after, f"arguments of {name!r} are neither parameters nor a JSON object")
        else:
            arguments = read_parameters(text, cursor, end, ctx.tool(name), repairs)
            if not arguments and (keyed := _elements_by_key(text[cursor:end], ctx.tool(name), repairs)):
                arguments = {k: typed_value(v, property_schema(ctx.tool(name), k), untyped="json") for k, v in keyed.items()}
            if not arguments and text[cursor:end].strip():
                return unreadable(self.name, text, at, after, f"the body of {name!r} holds text but no <parameter=...> tag")
        call = make_call(self.name, name, arguments, text[at:after], at, repairs, diagnostics)
        return call, after, closed_in_value

    def _cut_after_parameter(
        self, text: str, at: int, name: str, cursor: int, ctx: ParseContext, diagnostics: list[Diagnostic]
    ) -> tuple[ToolCall, int, bool] | None:
        """The output ended right after a whole parameter: the call as written, the cut said.

        As for a JSON call cut after a whole value: nothing written is lost or
        guessed. A value cut in half (no ``</parameter>`` last) is never run.
        """
        if not text.endswith(PARAMETER_END, cursor, space_before(text, len(text), cursor)):
            return None
        repairs: list[str] = []
        arguments = read_parameters(text, cursor, len(text), ctx.tool(name), repairs)
        if not arguments:
            return None
        repairs.append(ended_before(FUNCTION_END))
        return make_call(self.name, name, arguments, text[at:], at, repairs, diagnostics), len(text), False

    @staticmethod
    def _json_body(text: str, start: int, end: int, repairs: list[str]) -> dict[str, Any] | None:
        read = read_json_at(text, start, end)
        if read is None or not isinstance(read[0], dict) or read[1] > end:
            return None
        repairs.append("JSON object inside <function=...> instead of <parameter=...> tags")
        repairs.extend(read[2])
        return read[0]

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger in BLOCKS:
            body = skip_space(text, pos + len(trigger))
            return body < len(text) and not is_proper_prefix(text, body, FUNCTION)
        return name_settled(text, pos + len(FUNCTION))

    def render(self, calls: Sequence[ToolCall]) -> str:
        blocks = []
        for call in calls:
            lines = [OPEN, f"{FUNCTION}{call.name}>"]
            for key, value in call.arguments.items():
                lines += [f"{PARAMETER}{key}>", render_value(value), PARAMETER_END]
            lines += [FUNCTION_END, CLOSE]
            blocks.append("\n".join(lines))
        return "\n".join(blocks)


def _next_opener(text: str, cursor: int) -> int:
    """Where the next ``<function=`` opens after ``cursor`` (the text's end when none does)."""
    opener = find_forward(text, FUNCTION, cursor)
    return len(text) if opener == -1 else opener


def _elements_by_key(body: str, tool: Any, repairs: list[str]) -> dict[str, str] | None:
    """The raw values of a body written as elements named by the keys, not ``<parameter=...>`` tags:
    each closed by its own name (``<path>.</path>``) or by ``</parameter>`` (Qwen3.5); the reading said."""
    if keyed := child_elements(body, decode=False):
        repairs.append("arguments written as elements named by their keys, not <parameter=...> tags")
        return keyed
    if keyed := key_elements_closed_as_parameters(body, tool):
        repairs.append("arguments opened as elements named by their keys and closed with </parameter>")
        return keyed
    return None
