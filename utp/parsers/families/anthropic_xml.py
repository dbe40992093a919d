"""Claude-style XML calls: ``<function_calls><invoke name="N"><parameter name="K">v</parameter></invoke></function_calls>``.

Models prompted with Anthropic-shaped tool definitions (and models distilled
from Claude transcripts) write this, sometimes with ``antml:``-prefixed tags.
MiniMax-M2 writes the same invokes inside ``<minimax:tool_call>…</minimax:tool_call>``
(its chat template's tool-call block), and Glimmer writes them with ``atem:``
prefixes (``<atem:function_calls><atem:invoke name="N"><atem:parameter …>``, the
body of a message addressed ``to=N``, as Ollama's Glimmer parser reads it).
Parameter values are raw text typed by the tool's schema; without a schema a
value that is valid JSON (``{"a": 1}``, ``42``) is read as JSON. DeepSeek's
``string="true|false"`` attribute is honoured here too, for its markup
written without the DSML token. OLMo-3 also
wraps *pythonic* calls in ``<function_calls>``; that body is not an
``<invoke>``, so this family passes and the pythonic family reads it.

Claude 2.1's tool use (Anthropic's legacy function-calling prompt, still in
agent prompts and in models distilled from it) wrote the same wrapper with the
name and arguments as elements: ``<invoke><tool_name>N</tool_name>
<parameters><K>v</K></parameters></invoke>``; inside ``<function_calls>`` that
is read too, values typed the same way.

The invoke / parameter reading is shared: :class:`InvokeSyntax` says how a
dialect spells the two tags and types a value, and :func:`read_invoke_run`
reads a run of invokes in it (DeepSeek's DSML, ``deepseek_dsml``, is the same
markup with another tag prefix and a ``string`` attribute).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.families.harmony import MAX_HEADER, MESSAGE, TO_THE_READER
from utp.parsers.familykit import NAME_ATTRIBUTE_HEAD, OTHER_ATTRIBUTE, closer_bound, ended_before, make_call, read_json_at, unreadable
from utp.parsers.elements import cdata_text
from utp.parsers.flatcalls import after_result_opener
from utp.parsers.jsonrepair import loads_lenient
from utp.parsers.layout import markup_text, unindented
from utp.parsers.qwen3markup import strip_one_newline
from utp.parsers.nestedelements import ElementMarkup, ElementsBroken, ElementsCut, as_object, read_elements
from utp.parsers.typedvalues import property_schema, schema_types, typed_value
from utp.parsers.textscan import find_forward, is_proper_prefix, skip_space
from utp.types import Diagnostic, DiagnosticKind, Tool, ToolCall

from utp.parsers.familykit import render_value

#: Claude's namespaced tag prefix, spelled in two parts so the literal never looks like live markup
_NS = "antml" + ":"
#: Glimmer's prefix for the same tags
_ATEM = "atem:"
_PREFIXES = ("", _NS, _ATEM)
_PREFIX_GROUP = "|".join(re.escape(p) for p in _PREFIXES if p)
#: a special token sampled inside the name attribute (``name="re<|message|>ad"``, Glimmer): no name holds
#: one, so it is removed from the name (and recorded)
_TOKEN = r"<\|[a-z_]{1,32}\|>"
#: an attribute value left unquoted, as HTML allows (``<invoke name=get_fact>``, MiniMax behind Modular's MAX)
_BARE_VALUE = r"""[^\s"'<>=/]{1,256}"""
#: attributes beside the name (``<invoke displayname="Wetter" name="get_weather">``, chuk_chat's tests), before and after it
_BEFORE_NAME = rf"(?:{OTHER_ATTRIBUTE}\s++){{0,4}}+"
_AFTER_NAME = rf"(?:\s++{OTHER_ATTRIBUTE}){{0,4}}+"
_INVOKE = re.compile(
    rf"<(?P<prefix>{_PREFIX_GROUP})?invoke\s+{_BEFORE_NAME}"
    + rf"""name\s*=\s*(?P<q>["'])?(?P<name>(?(q)(?:[^"'\n<>]|{_TOKEN}){{1,256}}|{_BARE_VALUE}))(?(q)(?P=q)){_AFTER_NAME}\s*>"""
)
#: how much whitespace may sit between ``<function_calls>`` and the first ``<invoke``
_LEADING_SPACE = 256
#: an invoke's name attribute without special tokens, as a scan lookahead (DeepSeek's DSML shares it)
_INVOKE_TAIL = NAME_ATTRIBUTE_HEAD
#: ``_INVOKE`` after ``<invoke`` and its first whitespace, as a scan lookahead
#: (quoted: an unquoted name is read only inside a wrapper, where it cannot be HTML in prose)
_QUOTED_NAME = rf""""(?:[^"'\n<>]|{_TOKEN}){{1,256}}+"|'(?:[^"'\n<>]|{_TOKEN}){{1,256}}+'"""
_INVOKE_NAME_TAIL = rf"""\s*+{_BEFORE_NAME}name\s*+=\s*+(?:{_QUOTED_NAME}){_AFTER_NAME}\s*+>"""
_WRAPPED_NAME_TAIL = rf"""\s*+{_BEFORE_NAME}name\s*+=\s*+(?:{_QUOTED_NAME}|{_BARE_VALUE}+){_AFTER_NAME}\s*+>"""
#: a message that ended before the block (Glimmer's ``<|eot|>``, Harmony's end tokens)
_MESSAGE_ENDS = ("<|eot|>", "<|end|>", "<|call|>", "<|return|>")
#: how far back the header of the message a block sits in is looked for
_MESSAGE_REACH = 8192
#: the recipient a message header ends with, right before ``<|message|>``
_HEADER_RECIPIENT = re.compile(r"\bto=([^\s<>]+)\s*\Z")
_SPECIAL_TOKEN = re.compile(_TOKEN)
#: the ``>`` that ends a tag, not a special token's
_HEAD_END = re.compile(r"(?<!\|)>")
#: the scan lookaheads: ``extract`` returns None unless ``_INVOKE`` matches at the invoke tag
#: itself, or after at most ``_LEADING_SPACE`` whitespace (``\s`` is ``str.isspace``) past the
#: wrapper; there is no truncation report at the end of the text, so nothing else can be read
_WRAPPED_HEAD = rf"\s{{0,{_LEADING_SPACE}}}+<(?:(?:{_PREFIX_GROUP})?invoke\s{_WRAPPED_NAME_TAIL}|invoke>\s*+<tool_name>)"
#: Claude 2.1's invoke: the tool's name as an element, then (optionally) ``<parameters>``
_LEGACY_INVOKE = re.compile(r"<invoke>\s*<tool_name>\s*(?P<name>[^<>\n]{1,256}?)\s*</tool_name>\s*")
_LEGACY_OPEN = "<invoke>"
#: one argument inside ``<parameters>``: an element named after the parameter
_LEGACY_ARGUMENT = re.compile(r"<(?P<key>[A-Za-z_][\w.\-]{0,255})>")
#: an argument written as an element named after its key straight inside the invoke (MiniMax-M3's markup)
_ARGUMENT_ELEMENT = re.compile(r"<(?!parameter>|parameters>|tool_name>)[A-Za-z_][\w.\-]{0,255}>")
#: wrapper tag -> the closers that end it (a model may prefix one and not the other)
_FUNCTION_CALLS_CLOSERS = tuple(f"</{p}function_calls>" for p in _PREFIXES)
_WRAPPERS = {
    "<function_calls>": _FUNCTION_CALLS_CLOSERS,
    f"<{_NS}function_calls>": _FUNCTION_CALLS_CLOSERS,
    f"<{_ATEM}function_calls>": _FUNCTION_CALLS_CLOSERS,
    "<minimax:tool_call>": ("</minimax:tool_call>",),  # (``_MINIMAX_BLOCK``)
}
#: DeepSeek's ``string="true|false"`` attribute (``{n}``: which of the two places it stands in), its
#: value also left unquoted as HTML allows (``string=true``: sugar-crush's DSML tests)
STRING_ATTRIBUTE = r"\s+string\s*=\s*(?P<q{n}>[\"'])?(?P<string{n}>(?(q{n})[^\"'\n<>]{{0,16}}|[A-Za-z]{{1,16}}))(?(q{n})(?P=q{n}))"
#: a parameter's declared type (``<parameter name="timeout" type="integer">30</parameter>``), as
#: the tool's schema spells types
_TYPE_ATTRIBUTE = r"\s+type\s*=\s*(?P<tq>[\"'])(?P<declared>[A-Za-z]{1,16})(?P=tq)"
#: ``name`` and an optional ``string`` attribute before or after it, then perhaps a ``type`` (DSML markup written without
#: its token: ``<invoke name="f"><parameter name="a" string="true">``)
#: an attribute beside a parameter's name that neither names nor types it (``displayname="Ort"``)
_OTHER_PARAMETER_ATTRIBUTE = rf"(?:\s++(?!string\s*+=|type\s*+=){OTHER_ATTRIBUTE}){{0,4}}+"
_PARAMETER = re.compile(
    rf"<({_PREFIX_GROUP})?parameter(?:{STRING_ATTRIBUTE.format(n=1)})?{_OTHER_PARAMETER_ATTRIBUTE}\s+name\s*=\s*(?P<kq>[\"'])?(?P<key>(?(kq)[^\"'\n<>]{{1,256}}|{_BARE_VALUE}))(?(kq)(?P=kq))"
    rf"(?:{STRING_ATTRIBUTE.format(n=2)})?(?:{_TYPE_ATTRIBUTE})?{_OTHER_PARAMETER_ATTRIBUTE}\s*>"
)


@register_family
class AnthropicXmlFamily(CallFamily):
    name = "anthropic_xml"
    #: above pythonic, which shares <function_calls> (OLMo-3)
    priority = 60
    aliases = ("claude_xml", "anthropic")
    declared_triggers = static_triggers((*_WRAPPERS, *(f"<{p}invoke " for p in _PREFIXES)), {
        **dict.fromkeys(_WRAPPERS, _WRAPPED_HEAD),
        **{f"<{p}invoke ": _INVOKE_NAME_TAIL for p in _PREFIXES},
    })
    summary = 'Claude-style XML: <function_calls><invoke name="N"><parameter name="K">v</parameter></invoke></function_calls>'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if addressed_to_reader(text, pos):
            return None  # markup shown to the reader (Glimmer's ``to=user`` message), not a call
        closers = _WRAPPERS.get(trigger, ())
        wrapped = bool(closers)
        cursor = skip_space(text, pos + len(trigger), pos + len(trigger) + _LEADING_SPACE) if wrapped else pos

        def closed_at(at: int) -> int:
            return next((at + len(closing) for closing in closers if text.startswith(closing, at)), -1)

        if wrapped and _LEGACY_INVOKE.match(text, cursor):
            return _read_legacy_block(self.name, text, cursor, ctx, closed_at)
        if not wrapped and (bare := _INVOKE.match(text, cursor)) is not None and bare.group("q") is None:
            return None  # an unquoted name only inside a wrapper: alone it may be HTML in prose
        if not wrapped and after_result_opener(text, pos):
            return None  # ``<function_result> <invoke …>``: a result the model made up, not a call
        return read_invoke_block(self.name, text, cursor, ctx, MINIMAX_SYNTAX if trigger == _MINIMAX_BLOCK else SYNTAX, closed_at)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        cursor = skip_space(text, pos + len(trigger)) if trigger in _WRAPPERS else pos
        if cursor >= len(text):
            return False
        if _INVOKE.match(text, cursor):
            return True
        if trigger in _WRAPPERS and (text.startswith(_LEGACY_OPEN, cursor) or is_proper_prefix(text, cursor, _LEGACY_OPEN)):
            # Claude 2.1's invoke: undecided until its tool_name element has closed
            return find_forward(text, "</tool_name>", cursor) != -1 or len(text) - cursor > 300
        if any(is_proper_prefix(text, cursor, f"<{p}invoke ") for p in _PREFIXES):
            return False
        head_end = _HEAD_END.search(text, cursor, cursor + 300)  # a special token's ``|>`` is inside the name
        return not text.startswith(tuple(f"<{p}invoke" for p in _PREFIXES), cursor) or head_end is not None or len(text) - cursor > 300

    def render(self, calls: Sequence[ToolCall]) -> str:
        lines = ["<function_calls>"]
        for call in calls:
            lines.append(f'<invoke name="{call.name}">')
            for key, value in call.arguments.items():
                lines.append(f'<parameter name="{key}">{render_value(value)}</parameter>')
            lines.append("</invoke>")
        lines.append("</function_calls>")
        return "\n".join(lines)


def addressed_to_reader(text: str, pos: int) -> bool:
    """Does ``pos`` sit in the prose of a message whose header addresses the reader (`` to=user<|message|>``)?

    Glimmer heads every message with its recipient: a tool's name for a call,
    ``user`` for the answer. Call markup the answer's prose leads into is
    shown, not run; a message that *is* a call block is a call with a wrong
    header (its body has nothing else to be).
    """
    at = text.rfind(MESSAGE, max(0, pos - _MESSAGE_REACH), pos)
    if at == -1 or not text[at + len(MESSAGE) : pos].strip() or any(text.find(end, at, pos) != -1 for end in _MESSAGE_ENDS):
        return False
    recipient = _HEADER_RECIPIENT.search(text, max(0, at - MAX_HEADER), at)
    return recipient is not None and recipient.group(1) in TO_THE_READER


@dataclass(frozen=True)
class InvokeSyntax:
    """How one XML-call dialect spells ``<invoke name=...>`` and ``<parameter name=...>``.

    ``invoke`` has groups ``prefix`` (the tag prefix, may be None) and ``name``;
    ``parameter`` has the group ``key``. The closers are ``</{prefix}invoke>``
    and ``</{prefix}parameter>`` with the invoke's own prefix. ``value`` turns a
    parameter's raw text (with its tag's match and the tool, None when unknown)
    into ``(value, repair or None)``. ``body``, when given, may read a whole
    invoke body that is not parameter tags (a JSON object, say): called with the
    text, the index of the body's first non-blank character and the invoke
    closer, it returns ``(arguments, index where the closer is expected,
    repairs)`` or None to read parameters as usual.
    """

    invoke: re.Pattern[str]
    parameter: re.Pattern[str]
    value: Callable[[str, re.Match[str], Tool | None], tuple[Any, str | None]]
    body: Callable[[str, int, str, Tool | None], tuple[dict[str, Any], int, list[str]] | None] | None = None


#: DeepSeek's ``string`` attribute written after its tag's ``>``, at the value's start (WeaverCode's tests)
_LEAKED_STRING_ATTRIBUTE = re.compile(r"""string=["']?(true|false)["']?>""", re.IGNORECASE)


def flagged_value(raw: str, parameter: re.Match[str], tool: Tool | None) -> tuple[Any, str | None]:
    """A parameter's value: typed by the tool's schema (JSON when it has none and the text is JSON).

    DeepSeek's ``string="true"`` marks text written as is: kept verbatim
    unless the schema types the property otherwise (``42`` for an integer:
    the tool's contract decides); ``string="false"`` marks a JSON value. The
    attribute written after the tag closed, at the value's start
    (``<parameter name="k">string="true">v``), is read as the attribute.
    """
    key = parameter.group("key")
    groups = parameter.groupdict()  # a dialect's parameter tag may have no string attribute at all
    flag = (groups.get("string1") or groups.get("string2") or "").strip().lower()
    leaked = _LEAKED_STRING_ATTRIBUTE.match(raw) if not flag else None
    if leaked is not None:  # ``<parameter name="k">string="true">v``: the attribute written after the tag closed
        flag, raw = leaked.group(1).lower(), raw[leaked.end() :]
    quoted = cdata_text(raw)  # XML's quoting of text that holds markup: the text inside, never decoded
    raw = markup_text(raw) if quoted is None else quoted
    schema = property_schema(tool, key)
    if not schema and groups.get("declared"):  # no schema to type by: the model's own attribute does
        schema = {"type": groups["declared"].lower()}
    if flag == "true":
        types = schema_types(schema)
        if not types or "string" in types:
            return raw, None
        return typed_value(raw, schema), None
    if flag != "false":
        return typed_value(raw, schema, untyped="json"), None
    try:
        return json.loads(raw), None
    except (ValueError, RecursionError):
        pass
    try:
        value, fixes = loads_lenient(raw)
    except (ValueError, RecursionError):
        return typed_value(raw, schema), f'parameter {key!r} is marked string="false" but is not JSON: read as text'
    return value, f"parameter {key!r} is JSON after repair ({'; '.join(fixes)})" if fixes else None


def json_invoke_body(text: str, at: int, invoke_end: str, tool: Tool | None = None) -> tuple[dict[str, Any], int, list[str]] | None:
    """A JSON object written straight inside the invoke instead of parameter tags.

    SGLang's "format 2" for DeepSeek's DSML, and what models write when they
    mix Claude's invoke tag with JSON arguments (``<invoke name="f">{"a": 1}</invoke>``).
    """
    if not text.startswith("{", at):
        return None
    close = find_forward(text, invoke_end, at)
    if close == -1:
        return None  # the parameter reading reports the invoke as cut off
    read = read_json_at(text, at, close, closer_bound(text, invoke_end, at))
    if read is None or not isinstance(read[0], dict) or not text.startswith(invoke_end, skip_space(text, read[1])):
        return None
    value, end, repairs = read
    return value, end, list(repairs)


def element_invoke_body(text: str, at: int, invoke_end: str, tool: Tool | None = None) -> tuple[dict[str, Any], int, list[str]] | None:
    """A JSON object, or MiniMax-M3's argument elements (``<city>Paris</city>``) written without its marker token.

    MiniMax's block ``<minimax:tool_call><invoke name="f"><city>Paris</city></invoke>``
    is M3's markup as a server prints it with special tokens dropped; the
    elements nest (objects, repeated keys as lists) as :mod:`utp.parsers.nestedelements` reads them.
    """
    whole = json_invoke_body(text, at, invoke_end)
    if whole is not None or _ARGUMENT_ELEMENT.match(text, at) is None:
        return whole
    schema = tool.parameters if tool is not None else None
    try:
        pairs, end = read_elements(ElementMarkup("", invoke_end), text, at, invoke_end, schema)
    except (ElementsCut, ElementsBroken):
        return None
    return as_object(pairs, schema), end - len(invoke_end), []


SYNTAX = InvokeSyntax(_INVOKE, _PARAMETER, flagged_value, element_invoke_body)


def framed_value(raw: str, parameter: re.Match[str], tool: Tool | None) -> tuple[Any, str | None]:
    """A value in MiniMax's block: the line break on each side of it is layout, not text (MiniMax's
    reference parser and its chat template's multi-line values), then typed as any other."""
    return flagged_value(strip_one_newline(raw), parameter, tool)


#: the invokes of MiniMax-M2's ``<minimax:tool_call>`` block
MINIMAX_SYNTAX = InvokeSyntax(_INVOKE, _PARAMETER, framed_value, element_invoke_body)
_MINIMAX_BLOCK = "<minimax:tool_call>"


def read_invoke_block(
    family: str, text: str, cursor: int, ctx: ParseContext, syntax: InvokeSyntax, closed_at: Callable[[int], int]
) -> Extraction | None:
    """The invokes at ``cursor`` and the block's closer after them (``closed_at``: its end, or -1).

    None when no invoke starts there. With the closer read, later text cannot
    change the result, so the extraction is final.
    """
    if not syntax.invoke.match(text, cursor):
        return None
    return _invoke_block(family, text, cursor, syntax.invoke, lambda match, diagnostics: read_invoke(family, text, match, ctx, diagnostics, syntax), closed_at)


def _invoke_block(
    family: str, text: str, cursor: int, invoke: re.Pattern[str], read_one: "_InvokeReader", closed_at: Callable[[int], int],
    head_unfinished: Callable[[int], bool] = lambda at: False,
) -> Extraction:
    """The run of invokes at ``cursor`` and the closer after it; TRUNCATED when ``head_unfinished``
    says the text ends inside the head of one more invoke (a stream must wait for it)."""
    run = _invoke_run(text, cursor, invoke, read_one)
    if isinstance(run, Extraction):
        return run
    calls, diagnostics, cursor = run
    end = closed_at(cursor)
    if end >= 0:
        return Extraction(end=end, calls=calls, diagnostics=diagnostics, final=True)
    if head_unfinished(cursor):
        return unreadable(family, text, cursor, len(text), "output ended inside an invoke", kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics)
    return Extraction(end=cursor, calls=calls, diagnostics=diagnostics)


def read_invoke_run(
    family: str, text: str, cursor: int, ctx: ParseContext, syntax: InvokeSyntax
) -> tuple[list[ToolCall], list[Diagnostic], int] | Extraction:
    """The invokes starting at ``cursor``, whitespace between and after them: ``(calls, diagnostics, end)``.

    An Extraction instead when one of them cannot be read (it reports the calls
    read before it too): that ends the run.
    """
    return _invoke_run(text, cursor, syntax.invoke, lambda match, diagnostics: read_invoke(family, text, match, ctx, diagnostics, syntax))


#: reads the invoke whose opening ``match`` it is given, adding notes to the diagnostics it is
#: given: the call and the index past it, or the Extraction that reports it unreadable
_InvokeReader = Callable[[re.Match[str], list[Diagnostic]], "tuple[ToolCall, int] | Extraction"]


def _invoke_run(text: str, cursor: int, invoke: re.Pattern[str], read_one: _InvokeReader) -> tuple[list[ToolCall], list[Diagnostic], int] | Extraction:
    calls: list[ToolCall] = []
    diagnostics: list[Diagnostic] = []
    while (match := invoke.match(text, cursor)) is not None:
        outcome = read_one(match, diagnostics)
        if isinstance(outcome, Extraction):
            outcome.calls[:0] = calls
            outcome.diagnostics[:0] = diagnostics
            return outcome
        call, cursor = outcome
        calls.append(call)
        cursor = skip_space(text, cursor)
    return calls, diagnostics, cursor


def read_invoke(
    family: str, text: str, match: re.Match[str], ctx: ParseContext, diagnostics: list[Diagnostic], syntax: InvokeSyntax
) -> tuple[ToolCall, int] | Extraction:
    """One invoke whose opening tag is ``match``: the call and the index past its closer."""
    start = match.start()
    prefix = match.group("prefix") or ""
    written = match.group("name")
    name = _SPECIAL_TOKEN.sub("", written).strip()
    invoke_end = f"</{prefix}invoke>"
    parameter_end = f"</{prefix}parameter>"
    tool = ctx.tool(name)
    arguments: dict[str, object] = {}
    repairs: list[str] = [f"special token removed from the name {written!r}"] if name != written.strip() else []
    cursor = match.end()
    if syntax.body is not None:
        whole = syntax.body(text, skip_space(text, cursor), invoke_end, tool)
        if whole is not None:
            arguments, cursor, repairs = whole
    while True:
        cursor = skip_space(text, cursor)
        if text.startswith(invoke_end, cursor):
            after = cursor + len(invoke_end)
            break
        parameter = syntax.parameter.match(text, cursor)
        closing_other = text.startswith("</", cursor) and not text.startswith(parameter_end, cursor)
        if parameter is None and arguments and (closing_other or syntax.invoke.match(text, cursor)):
            # the block's closer, or the next invoke, where this one's closer belongs: it ends here
            repairs.append(f"missing {invoke_end}")
            after = cursor
            break
        if parameter is None and arguments and cursor >= len(text):
            # cut right after a whole parameter: read, and said (a value cut in half is not)
            repairs.append(ended_before(invoke_end))
            after = cursor
            break
        if parameter is None:
            close = find_forward(text, invoke_end, cursor)
            if close == -1:
                return unreadable(
                    family, text, start, len(text), f"invoke of {name!r} ends before {invoke_end}",
                    kind=DiagnosticKind.TRUNCATED,
                )
            repairs.append(f"ignored text that is not a <parameter> inside invoke at offset {cursor}")
            cursor = close
            continue
        key = parameter.group("key")
        value_start = parameter.end()
        value_end = find_forward(text, parameter_end, value_start)
        close = _next_tag(text, value_start, value_end, invoke_end, syntax)
        if value_end == -1 or (close != -1 and close < value_end):
            if close == -1:
                return unreadable(
                    family, text, start, len(text), f"parameter {key!r} of {name!r} is not closed",
                    kind=DiagnosticKind.TRUNCATED,
                )
            # the line breaks before the tag are the layout around the closer left out, not the value's
            value_end, cursor = value_start + len(text[value_start:close].rstrip("\r\n")), close
            stray = _STRAY_CLOSER.search(text, value_start, value_end)
            if stray is not None and f"<{stray.group(1)}" not in text[value_start : stray.start()]:
                # another element's closer where this one's belongs (``a.txt</content>``): not the value's text
                value_end = stray.start()
                repairs.append(f"{parameter_end} written as </{stray.group(1)}> after parameter {key!r}")
            else:
                repairs.append(f"missing {parameter_end} after parameter {key!r}")
        else:
            cursor = value_end + len(parameter_end)
        value, repair = syntax.value(unindented(text[value_start:value_end]), parameter, tool)
        if repair is not None:
            repairs.append(repair)
        arguments[key] = value
    return make_call(family, name, arguments, text[start:after], start, repairs, diagnostics), after


#: a closing tag ending a value whose own closer was left out
_STRAY_CLOSER = re.compile(r"</([A-Za-z_][\w.\-]{0,40}+)>[ \t]*+\Z")


def _next_tag(text: str, value_start: int, value_end: int, invoke_end: str, syntax: InvokeSyntax) -> int:
    """Where the invoke's closer, the next parameter tag or the next invoke tag comes after a value (-1: none).

    One of them before the value's ``</parameter>`` means that closer was left
    out: the template never writes a tag inside a value, so the value ends at
    the tag (as a Qwen3-Coder value ends at the next ``<parameter=``).
    """
    limit = len(text) if value_end == -1 else value_end
    found = [find_forward(text, invoke_end, value_start)]
    for tag in (syntax.parameter, syntax.invoke):
        match = tag.search(text, value_start, limit)
        found.append(-1 if match is None else match.start())
    return min((at for at in found if at != -1), default=-1)


def _read_legacy_block(family: str, text: str, cursor: int, ctx: ParseContext, closed_at: Callable[[int], int]) -> Extraction:
    """Claude 2.1's invokes at ``cursor`` (``_LEGACY_INVOKE`` matches there) and the wrapper's closer."""

    def head_unfinished(at: int) -> bool:
        # the name element is long enough that a stream would settle the block before it
        opening = text.startswith(_LEGACY_OPEN, at) or is_proper_prefix(text, at, _LEGACY_OPEN)
        return opening and find_forward(text, "</tool_name>", at) == -1

    def read_one(match: re.Match[str], diagnostics: list[Diagnostic]) -> tuple[ToolCall, int] | Extraction:
        return _read_legacy_invoke(family, text, match, ctx, diagnostics)

    return _invoke_block(family, text, cursor, _LEGACY_INVOKE, read_one, closed_at, head_unfinished)


def _read_legacy_invoke(
    family: str, text: str, match: re.Match[str], ctx: ParseContext, diagnostics: list[Diagnostic]
) -> tuple[ToolCall, int] | Extraction:
    """``<invoke><tool_name>N</tool_name><parameters><K>v</K>…</parameters></invoke>``: the call and its end."""
    start, name = match.start(), match.group("name").strip()
    close = find_forward(text, "</invoke>", match.end())
    if close == -1:
        return unreadable(family, text, start, len(text), f"invoke of {name!r} ends before </invoke>", kind=DiagnosticKind.TRUNCATED)
    tool = ctx.tool(name)
    arguments: dict[str, Any] = {}
    cursor = match.end()
    if text.startswith("<parameters>", cursor):
        cursor = skip_space(text, cursor + len("<parameters>"))
        while not text.startswith("</parameters>", cursor):
            element = _LEGACY_ARGUMENT.match(text, cursor, close)
            value_end = find_forward(text, f"</{element.group('key')}>", element.end()) if element else -1
            if element is None or value_end == -1 or value_end > close:
                return unreadable(family, text, start, close + len("</invoke>"), f"arguments of {name!r} are not <KEY>value</KEY> elements")
            key = element.group("key")
            arguments[key] = typed_value(unindented(text[element.end() : value_end]), property_schema(tool, key), untyped="json")
            cursor = skip_space(text, value_end + len(key) + 3)
        cursor = skip_space(text, cursor + len("</parameters>"))
    if cursor != close:
        return unreadable(family, text, start, close + len("</invoke>"), f"text inside the invoke of {name!r} that is not its <parameters>")
    end = close + len("</invoke>")
    return make_call(family, name, arguments, text[start:end], start, [], diagnostics), end
