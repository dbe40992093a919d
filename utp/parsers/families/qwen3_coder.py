"""Qwen3-Coder's XML-ish calls: ``<function=NAME><parameter=KEY>value</parameter></function>``.

Values are raw text, not JSON: ``42`` is a number only if the tool's schema
says so, and a shell command full of ``&&`` and ``a < b`` is one string. That
is why this is a hand-written scan and not an XML parser (``&`` and ``<`` in
values would break one). Names and keys are everything up to ``>``, spaces and
non-ASCII included. Models drop ``</parameter>`` before ``</function>`` and
sometimes the opening ``<tool_call>`` (leaving a stray ``</tool_call>``);
both are read, and so is Anthropic's ``<parameter name="KEY">`` mixed in
for ``<parameter=KEY>``. A body with text but no parameter tag in it is
reported, not run with no arguments. ByteDance Seed-OSS writes the same calls in
``<seed:tool_call>…</seed:tool_call>`` (its chat template).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.families.pythonic import names_offered_tool
from utp.parsers.familykit import NAME_ATTRIBUTE, ended_before, make_call, read_json_at, render_value, unreadable
from utp.parsers.layout import unindented
from utp.parsers.pyliteral import property_schema, typed_value
from utp.parsers.textscan import bounded_find, find_forward, is_proper_prefix, skip_space, space_before
from utp.types import Diagnostic, DiagnosticKind, ToolCall

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
#: block tags around the calls: Qwen3-Coder's and Seed-OSS's
BLOCKS = {OPEN: CLOSE, "<seed:tool_call>": "</seed:tool_call>"}
FUNCTION = "<function="
FUNCTION_END = "</function>"
PARAMETER = "<parameter="
PARAMETER_END = "</parameter>"
#: longest name or key read before giving up on finding its '>'
MAX_NAME = 256
#: Anthropic's spelling of a parameter tag, which models mix into Qwen3-Coder's calls
_NAMED_PARAMETER = re.compile(r"<parameter\s+" + NAME_ATTRIBUTE)
#: where a parameter tag of either spelling starts
_PARAMETER_TAG = re.compile(r"<parameter(?:=|\s+name\s*=)")


def strip_one_newline(value: str) -> str:
    """The template writes one newline after ``<parameter=k>`` and one before the close.

    Both or neither: a value written straight after the tag did not follow
    that layout, so a newline it ends with is its own (a file's last line).
    """
    if value.startswith("\n"):
        return value[1:-1] if value.endswith("\n") and len(value) > 1 else value[1:]
    return value


def name_settled(text: str, start: int) -> bool:
    """Streaming: can more text still change what :func:`read_name` and the body check decide?"""
    header = read_name(text, start)
    if header is None:
        close = bounded_find(text, ">", start, MAX_NAME)
        partial = text[start : start + MAX_NAME]
        return close != -1 or len(text) - start > MAX_NAME or "\n" in partial or "<" in partial
    body = skip_space(text, header[1])
    return body < len(text) and not is_proper_prefix(text, body, PARAMETER) and not is_proper_prefix(text, body, FUNCTION_END)


def read_name(text: str, start: int) -> tuple[str, int] | None:
    """The name after ``<function=`` / ``<parameter=`` and the index past its ``>``."""
    close = bounded_find(text, ">", start, MAX_NAME)
    if close == -1:
        return None
    name = text[start:close].strip()
    if not name or "\n" in name or "<" in name:
        return None
    return name, close + 1


#: a name whose '>' was left out: one word, then the end of its line (the template's line break)
_NAME_ENDING_LINE = re.compile(r"[ \t]*+([A-Za-z_][\w.\-]{0,255}+)[ \t]*+(?=\r?\n)")


def read_unclosed_name(text: str, start: int) -> tuple[str, int] | None:
    """The name after ``<function=`` / ``<parameter=`` when its ``>`` was left out, and where its line ends.

    Models drop that ``>`` now and then (``<function=read_file`` then a line
    break). One word ending the line is the name: the template puts a line
    break right after the tag, so nothing else can be meant.
    """
    match = _NAME_ENDING_LINE.match(text, start)
    return (match.group(1), match.end()) if match is not None else None


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
    triggers = (*BLOCKS, FUNCTION)
    #: above hermes and glm on the shared <tool_call>; above functionary on <function=
    priority = 70
    #: wrapped calls open with ``<function=`` (scan lookahead; the bare trigger needs none)
    #: a bare <function= is ours only with a name closed by '>' (no '<' or '{' in it) within
    #: MAX_NAME characters, then at most MAX_NAME whitespace and <parameter= or </function>
    #: (``_bare_body_is_ours``); possessive runs, as the first '>' ends the name
    trigger_heads = {
        **dict.fromkeys(BLOCKS, r"\s*<function="),
        FUNCTION: rf"[^<>{{]{{0,{MAX_NAME}}}+>\s{{0,{MAX_NAME}}}+(?:<parameter=|</function>)",
    }
    aliases = ("qwen3_coder_xml", "qwen3-coder")
    summary = "Qwen3-Coder: <tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call>"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        closer = BLOCKS.get(trigger, "")
        wrapped = bool(closer)
        cursor = skip_space(text, pos + len(trigger), pos + len(trigger) + MAX_NAME) if wrapped else pos
        if not text.startswith(FUNCTION, cursor):
            return None
        if not wrapped and not self._bare_body_is_ours(text, cursor):
            return None
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        provisional = False
        while True:
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

    @staticmethod
    def _bare_body_is_ours(text: str, at: int) -> bool:
        """A bare ``<function=NAME>`` is ours only when parameters (or the close) follow.

        Functionary writes ``<function=NAME>{json}</function>`` and prose may
        mention ``<function=...>``; both are left to others. So is a "name"
        holding ``{``: that is Llama's ``<function=NAME{json}></function>``,
        the JSON glued to the name and the ``>`` after it (functionary's).
        """
        header = read_name(text, at + len(FUNCTION))
        if header is None or "{" in header[0]:
            return False
        body = skip_space(text, header[1], header[1] + MAX_NAME)
        return text.startswith(PARAMETER, body) or text.startswith(FUNCTION_END, body)

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
            if header is None or not (text.startswith(PARAMETER, body) or text.startswith(FUNCTION_END, body)):
                header = None
            elif ctx.has_tools and not names_offered_tool(header[0], ctx):
                header = None  # broken markup naming no offered tool: reported, not made a call
            else:
                repairs.append(f"'>' supplied after <function={header[0]}")
        if header is None:
            return unreadable(self.name, text, at, at + len(FUNCTION), "no function name closed by '>' after <function=")
        name, cursor = header
        end = find_forward(text, FUNCTION_END, cursor)
        close = find_forward(text, closer, cursor) if closer else -1
        if close != -1 and end != -1 and close < end and not _call_starts_between(text, close, end):
            close = -1  # "</tool_call>" inside a value, not the end of this call
        closed_in_value = False
        if end == -1 or (close != -1 and close < end):
            if close == -1:
                cut = self._cut_after_parameter(text, at, name, cursor, ctx, diagnostics)
                if cut is not None:
                    return cut
                return unreadable(
                    self.name, text, at, len(text), f"call to {name!r} ends before </function>", kind=DiagnosticKind.TRUNCATED
                )
            end, after = close, close
            repairs.append(f"missing </function> before {closer}")
            closed_in_value = _inside_open_value(text, cursor, close)
        else:
            after = end + len(FUNCTION_END)
        body_start = skip_space(text, cursor, end)
        if text.startswith("{", body_start):
            arguments = self._json_body(text, body_start, end, repairs)
            if arguments is None:
                return unreadable(self.name, text, at, after, f"arguments of {name!r} are neither parameters nor a JSON object")
        else:
            arguments = self._parameters(text, cursor, end, ctx.tool(name), repairs)
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
        arguments = self._parameters(text, cursor, len(text), ctx.tool(name), repairs)
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

    @staticmethod
    def _parameters(text: str, cursor: int, end: int, tool: Any, repairs: list[str]) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        while True:
            tag = _PARAMETER_TAG.search(text, cursor, end)
            if tag is None:
                return arguments
            start = tag.start()
            named = _NAMED_PARAMETER.match(text, start)
            if named is not None:
                key, value_start, quote = named.group("name"), named.end(), named.group("q")
                repairs.append(f"<parameter name={quote}{key}{quote}> for <parameter={key}>")
            elif text.startswith(PARAMETER, start) and (key_read := read_name(text, start + len(PARAMETER))) is not None:
                key, value_start = key_read
            elif text.startswith(PARAMETER, start) and (key_read := read_unclosed_name(text, start + len(PARAMETER))) is not None:
                key, value_start = key_read  # the value starts with the template's line break
                repairs.append(f"'>' supplied after <parameter={key}")
            else:
                if text.startswith(PARAMETER, start):
                    repairs.append(f"skipped a <parameter= tag without a closing '>' at offset {start}")
                cursor = tag.end()
                continue
            value_end = find_forward(text, PARAMETER_END, value_start)
            next_tag = _PARAMETER_TAG.search(text, value_start, end)
            limit = end if next_tag is None else next_tag.start()
            if value_end == -1 or value_end > limit:
                value_end, cursor = limit, limit
                repairs.append(f"missing </parameter> after parameter {key!r}")
                # the line breaks before the next tag are the template's layout around the
                # closing tags that were dropped (one per tag), not the value's
                raw = strip_one_newline(text[value_start:value_end].rstrip("\r\n"))
            else:
                cursor = value_end + len(PARAMETER_END)
                raw = strip_one_newline(unindented(text[value_start:value_end]))
            arguments[key] = typed_value(raw, property_schema(tool, key), untyped="string")

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


