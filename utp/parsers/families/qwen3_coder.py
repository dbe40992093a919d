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

import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.pythoncalls import names_offered_tool
from utp.parsers.elements import child_elements
from utp.parsers.familykit import NAME_ATTRIBUTE, ended_before, make_call, read_json_at, render_value, unreadable
from utp.parsers.layout import unindented
from utp.parsers.typedvalues import property_schema, typed_value
from utp.parsers.scanloop import call_span_limit
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
#: where a parameter tag starts: ``<parameter=``, Anthropic's ``<parameter name=``, or a nameless ``<parameter>``
_PARAMETER_TAG = re.compile(r"<parameter(?:=|\s+name\s*=|[ \t]*>)")
#: the output ends inside ``<parameter name=`` (a stream must wait for the rest)
_NAMED_PARAMETER_SO_FAR = re.compile(r"<parameter\s{1,16}+(?:n(?:a(?:m(?:e\s{0,16}+)?)?)?)?\Z")
#: where a tagged parameter starts (a value runs to its close or to one of these: a nameless
#: ``<parameter>`` inside a value is the value's text, as the template never writes one)
_TAGGED_PARAMETER = re.compile(r"<parameter(?:=|\s+name\s*=)")
#: a parameter's close as written: ``</parameter>``, ``</parameter/>``, or ``</parameter`` missing its ``>``
_PARAMETER_CLOSE = re.compile(r"</parameter(?:[ \t]*/?>|(?=[\s<]|\Z))")
#: a key glued to its value by '=' (``<parameter=path=/tmp/x</parameter>``, ``<parameter>path=/tmp/x</parameter>``)
_KEY_EQUALS = re.compile(r"[ \t]*([A-Za-z_][\w.\-]{0,255}+)[ \t]*=")
#: the next call's opening tag inside this call's body: a name closed by '>', then a parameter tag or
#: the call's close (the shape the bare trigger requires); possessive, as the first '>' ends the name
_NEXT_CALL = re.compile(rf"<function=[^<>{{\n]{{1,{MAX_NAME}}}+>\s{{0,{MAX_NAME}}}+(?:<parameter(?:=|\s+name\s*=)|</function>)")
#: what a parameter key looks like when no tag says it is one
_KEY = re.compile(r"[A-Za-z_][\w.\-]{0,255}+")


def strip_one_newline(value: str) -> str:
    """The template writes one newline after ``<parameter=k>`` and one before the close: each is layout.

    Each is removed on its own, as the template writes each on its own (a
    model that glued the value to its tag still wrote the newline before the
    close); any further newline is the value's (a file's last line). This is
    also how the model vendor's reference parser reads values. A break may
    be written ``\r\n``: the whole break is layout, not a stray ``\r``. A value on
    one line with its tags (``<parameter=k> ls -la </parameter>``) was written
    with blanks where the template's line breaks go: they are removed.
    """
    if "\n" not in value:  # tags and value on one line: the blanks around it stand for the line breaks
        return value.strip(" \t")
    for line_break in ("\r\n", "\n"):  # a model that writes CRLF writes the template's breaks so too
        if value.startswith(line_break):
            value = value[len(line_break) :]
            break
    for line_break in ("\r\n", "\n"):
        if value.endswith(line_break):
            return value[: -len(line_break)]
    return value


def name_settled(text: str, start: int) -> bool:
    """Streaming: can more text still change what :func:`read_name` and the body check decide?"""
    header = read_name(text, start)
    if header is None:
        close = bounded_find(text, ">", start, MAX_NAME)
        partial = text[start : start + MAX_NAME]
        return close != -1 or len(text) - start > MAX_NAME or "\n" in partial or "<" in partial
    body = skip_space(text, header[1])
    if body < len(text) and _NAMED_PARAMETER_SO_FAR.match(text, body):
        return False  # ``<parameter nam``: may still become Anthropic's spelling of the tag
    return body < len(text) and not is_proper_prefix(text, body, PARAMETER) and not is_proper_prefix(text, body, FUNCTION_END)


def read_name(text: str, start: int) -> tuple[str, int] | None:
    """The name after ``<function=`` / ``<parameter=`` and the index past its ``>``."""
    close = bounded_find(text, ">", start, MAX_NAME)
    if close == -1:
        return None
    name = text[start:close].strip()
    if name[:1] in _QUOTES:
        name = unquoted(name)
    if not name or "\n" in name or "<" in name:
        return None
    return name, close + 1


def quoted_at(text: str, at: int) -> bool:
    """Does the name starting at ``at`` open with a quote (``<function="bash">``)?"""
    first = text[at : at + 1]
    if first.isspace():
        start = skip_space(text, at, at + MAX_NAME)
        first = text[start : start + 1]
    return first == '"' or first == "'"


def unquoted(name: str) -> str:
    """``"command"`` or ``'command'`` is the name ``command``: models quote the tag's value like an attribute."""
    if len(name) > 1 and name[0] == name[-1] and name[0] in "\"'":
        return name[1:-1].strip()
    return name


_QUOTES = ('"', "'")
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
    #: above hermes and glm on the shared <tool_call>; above functionary on <function=
    priority = 70
    #: wrapped calls open with ``<function=`` (scan lookahead; the bare trigger needs none)
    #: a bare <function= is ours only with a name closed by '>' (no '<' or '{' in it) within
    #: MAX_NAME characters, then at most MAX_NAME whitespace and <parameter= (or Anthropic's
    #: <parameter name=, which MiniMax writes there) or </function> (``_bare_body_is_ours``);
    #: possessive runs, as the first '>' ends the name
    declared_triggers = static_triggers((*BLOCKS, FUNCTION), {
        **dict.fromkeys(BLOCKS, r"\s*<function="),
        FUNCTION: rf"[^<>{{]{{0,{MAX_NAME}}}+>\s{{0,{MAX_NAME}}}+(?:<parameter(?:=|\s+name\s*=)|</function>)",
    })
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
        return _TAGGED_PARAMETER.match(text, body) is not None or text.startswith(FUNCTION_END, body)

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
        if not text[at + len(FUNCTION)].isalnum() and quoted_at(text, at + len(FUNCTION)):
            repairs.append(f"quotes dropped around the name {name!r}")
        end = find_forward(text, FUNCTION_END, cursor)
        # a bare call's </function> left out before a stray block closer: that closer ends it
        close = find_forward(text, closer or CLOSE, cursor) if closer or end == -1 else -1
        if close != -1 and end != -1 and close < end and not _call_starts_between(text, close, end):
            close = -1  # "</tool_call>" inside a value, not the end of this call
        closed_in_value = False
        # (searched up to the end of this call's </function>: a call opening there may be empty)
        following = _NEXT_CALL.search(text, cursor, len(text) if end == -1 else end + len(FUNCTION_END))
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
            after = end + len(FUNCTION_END)
        body_start = skip_space(text, cursor, end)
        if text.startswith("{", body_start):
            arguments = self._json_body(text, body_start, end, repairs)
            if arguments is None:
                return unreadable(self.name, text, at, after, f"arguments of {name!r} are neither parameters nor a JSON object")
        else:
            arguments = self._parameters(text, cursor, end, ctx.tool(name), repairs)
            if not arguments and (keyed := child_elements(text[cursor:end], decode=False)):  # ``<path>.</path>``
                arguments = {k: typed_value(v, property_schema(ctx.tool(name), k), untyped="json") for k, v in keyed.items()}
                repairs.append("arguments written as elements named by their keys, not <parameter=...> tags")
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
        reader = _ParameterReader(text, end, tool, repairs)
        while True:
            tag = _PARAMETER_TAG.search(text, cursor, end)
            if tag is None:
                return reader.arguments
            cursor = reader.nameless(tag.end()) if text[tag.end() - 1] == ">" else reader.tagged(tag.start(), tag.end())

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




class _ParameterReader:
    """The parameters of one call body, ``<parameter=KEY>value</parameter>`` and the ways models bend it.

    Bent shapes read: Anthropic's ``<parameter name="KEY">``, a quoted key
    (``<parameter="KEY">``), a ``'>'`` left out before the value's line break,
    a key glued to its value (``<parameter=KEY=value</parameter>``), a close
    written ``</parameter/>`` or missing its ``'>'``, a ``</parameter>`` left
    out before the next tag, and nameless elements: ``<parameter>KEY</parameter>``
    followed by the value (as text up to the next tag or close, or as the next
    nameless element) and ``<parameter>KEY=value</parameter>``. A nameless
    element is a key only when it looks like one and, when the tool lists its
    properties, names one of them; anything else is skipped and said.
    """

    def __init__(self, text: str, end: int, tool: Any, repairs: list[str]) -> None:
        self.text, self.end, self.tool, self.repairs = text, end, tool, repairs
        self.arguments: dict[str, Any] = {}
        #: a nameless key whose value is the next nameless element
        self.pending: str | None = None

    def tagged(self, start: int, tag_end: int) -> int:
        """A ``<parameter=`` or ``<parameter name=`` tag at ``start``; returns where reading goes on."""
        text = self.text
        header = self._header(start)
        if header is None:
            if text.startswith(PARAMETER, start):
                self.repairs.append(f"skipped a <parameter= tag without a closing '>' at offset {start}")
            return tag_end
        key, value_start, inline = header
        tag = _TAGGED_PARAMETER.search(text, value_start, self.end)
        limit = self.end if tag is None else tag.start()
        exact = find_forward(text, PARAMETER_END, value_start)
        if exact != -1 and exact <= limit:  # the template's close: no need for the pattern of bent ones
            raw = strip_one_newline(unindented(text[value_start:exact]))
            if inline is not None and not raw.strip():
                raw = inline
            self.arguments[key] = typed_value(raw, property_schema(self.tool, key), untyped="json")
            return exact + len(PARAMETER_END)
        close = _PARAMETER_CLOSE.search(text, value_start, limit)
        if close is None:
            self.repairs.append(f"missing </parameter> after parameter {key!r}")
            # the line breaks before the next tag are the template's layout around the
            # closing tags that were dropped (one per tag), not the value's
            raw = strip_one_newline(text[value_start:limit].rstrip("\r\n"))
            after = limit
        else:
            self._note_close(close, key)
            raw = strip_one_newline(unindented(text[value_start : close.start()]))
            after = close.end()
        if inline is not None and not raw.strip():
            raw = inline
        self._keep(key, raw)
        return after

    def _header(self, start: int) -> tuple[str, int, str | None] | None:
        """The key of the tag at ``start``, where its value starts, and a value written inside the tag."""
        text = self.text
        named = _NAMED_PARAMETER.match(text, start)
        if named is not None:
            key, quote = named.group("name"), named.group("q")
            self.repairs.append(f"<parameter name={quote}{key}{quote}> for <parameter={key}>")
            return key, named.end(), None
        at = start + len(PARAMETER)
        if (read := read_name(text, at)) is not None:
            if not text[at].isalnum() and quoted_at(text, at):
                self.repairs.append(f"quotes dropped around the key {read[0]!r}")
            return self._split_glued(*read) if "=" in read[0] else (read[0], read[1], None)
        if (read := read_unclosed_name(text, at)) is not None:  # the value starts with the template's line break
            self.repairs.append(f"'>' supplied after <parameter={read[0]}")
            return read[0], read[1], None
        glued = _KEY_EQUALS.match(text, at)
        if glued is not None and self._is_key(glued.group(1)):
            self.repairs.append(f"<parameter={glued.group(1)}=value for <parameter={glued.group(1)}>value")
            return glued.group(1), glued.end(), None
        return None

    def _split_glued(self, name: str, value_start: int) -> tuple[str, int, str | None]:
        """``<parameter=KEY=value>``: the key and the value it carries, when KEY is a key and the whole is not."""
        glued = _KEY_EQUALS.match(name)
        if glued is None or name in (getattr(self.tool, "properties", None) or {}) or not self._is_key(glued.group(1), strict=True):
            return name, value_start, None
        self.repairs.append(f"<parameter={name}> read as key {glued.group(1)!r} with its value")
        return glued.group(1), value_start, name[glued.end() :]

    def nameless(self, at: int) -> int:
        """A ``<parameter>`` element whose content starts at ``at``; returns where reading goes on."""
        text = self.text
        limit = self._next_tag(at)
        close = _PARAMETER_CLOSE.search(text, at, limit)
        if close is None:
            self.repairs.append(f"skipped a <parameter> element without its close at offset {at}")
            return limit
        content, after = text[at : close.start()], close.end()
        if self.pending is not None:
            key, self.pending = self.pending, None
            self.repairs.append(f"<parameter>{key}</parameter> then its value as the next <parameter> element")
            self._keep(key, strip_one_newline(unindented(content)))
            return after
        name = content.strip()
        glued = _KEY_EQUALS.match(content)
        if self._is_key(name):
            return self._value_after_key(name, after)
        if glued is not None and self._is_key(glued.group(1)):
            self.repairs.append(f"<parameter>{glued.group(1)}=value</parameter> read as a parameter")
            self._keep(glued.group(1), content[glued.end() :])
            return after
        self.repairs.append(f"skipped a <parameter> element naming no parameter at offset {at}")
        return after

    def _value_after_key(self, key: str, after: int) -> int:
        """``<parameter>KEY</parameter>`` then its value: the text up to the next tag or close, else the next element."""
        text = self.text
        limit = self._next_tag(after)
        close = _PARAMETER_CLOSE.search(text, after, limit)
        value_end = limit if close is None else close.start()
        if not text[after:value_end].strip():
            self.pending = key
            return after
        self.repairs.append(f"<parameter>{key}</parameter> followed by its value")
        raw = strip_one_newline(unindented(text[after:value_end]))
        if close is None:  # no close: the whitespace before the next tag is layout
            self._keep(key, raw.rstrip())
            return value_end
        self._keep(key, raw)
        return close.end()

    def _is_key(self, name: str, strict: bool = False) -> bool:
        """Does ``name`` look like a parameter key (and name a listed property, when the tool lists them)?

        ``strict``: only a listed property counts (splitting a tag's text needs that certainty).
        """
        if _KEY.fullmatch(name) is None:
            return False
        properties = getattr(self.tool, "properties", None)
        if properties:
            return name in properties
        return not strict

    def _next_tag(self, at: int) -> int:
        tag = _PARAMETER_TAG.search(self.text, at, self.end)
        return self.end if tag is None else tag.start()

    def _note_close(self, close: re.Match[str], key: str) -> None:
        if close.group() != PARAMETER_END:
            self.repairs.append(f"{close.group().strip()!r} read as </parameter> after parameter {key!r}")

    def _keep(self, key: str, raw: str) -> None:
        self.arguments[key] = typed_value(raw, property_schema(self.tool, key), untyped="json")
