"""The key/value call markup GLM-4.5 introduced, and the families that spell it with their own tags.

A call is an opener, the tool's bare name, then one key tag and one value tag
per argument, then a closer::

    <tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>

GLM writes exactly this; LongCat, K2-V3, Hunyuan, IQuest-Coder and Solar Open
write the same structure under other tags, some inside a group wrapper
(``<tool_calls>…</tool_calls>``). Values are raw text typed by the tool's
schema, or read as JSON when the schema does not say and the text is JSON.

:class:`KeyValueFamily` is such a family given its tags: a subclass names its
:class:`KeyValueSyntax` (and group wrapper, if any) and registers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from utp.parsers.base import CallFamily, Extraction, ParseContext, Trigger
from utp.parsers.familykit import ended_before, make_call, read_call_group, render_value, unreadable
from utp.parsers.names import resolve_name
from utp.parsers.layout import unindented
from utp.parsers.typedvalues import property_schema, schema_types, typed_value
from utp.parsers.textscan import ends_inside, find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall


def name_pattern(lead: str, key: str, close: str, separator: str = "") -> re.Pattern[str]:
    """The bare name after ``lead`` space: no tag, bracket, parenthesis or quote, at most 256 characters on one line.

    (A parenthesis makes it a Python-style call, ``get_weather('Paris')``, which hermes reads.)
    ``separator`` is a tag a dialect writes between the name and the first key (Hunyuan's ``<tool_sep>``).
    """
    after = rf"(?:{re.escape(separator)}\s*)?" if separator else ""
    return re.compile(
        rf"{lead}([^\s<>{{}}\[\]()\"'][^\n<>{{}}\[\]()\"]{{0,255}}?)\s*{after}(?={re.escape(key)}|{re.escape(close)})"
    )


def word_name_pattern(key: str, close: str, separator: str = "") -> re.Pattern[str]:
    """The bare name as one word (no blank, tag, brace or quote) of at most 256 characters.

    For a dialect whose tags are its own tokens: a sentence between its opener
    and closer in prose is no name.
    """
    after = rf"(?:{re.escape(separator)}\s*+)?" if separator else ""
    return re.compile(r"""\s*+([^\s<>{}\[\]"']{1,256}+)\s*+""" + after + f"(?={re.escape(key)}|{re.escape(close)})")


@dataclass(frozen=True)
class KeyValueSyntax:
    """How one dialect spells its tags.

    ``name`` matches the bare name after the opener (group 1). ``value`` may be
    empty: Solar Open's value starts right after the key's closing token.
    ``type_tag``, when given, is an optional ``(open, close)`` pair between a
    key and its value naming the value's type (used when the tool's schema
    gives none).
    """

    open: str
    close: str
    key: str
    key_end: str
    value: str
    value_end: str
    name: re.Pattern[str]
    type_tag: tuple[str, str] | None = None
    #: a tag the dialect writes between the name and the first key (``name`` must allow it)
    separator: str = ""
    #: whether the tags are special tokens, which no key or value can hold: a key or value
    #: then ends at the next of the call's tags even where its own closer is missing
    special_tokens: bool = False
    #: whether the blanks around a value are the dialect's layout, not the value's (its own parser strips them)
    strip_values: bool = False
    #: whether the blanks around a one-line value are layout (a value of several lines keeps them, as code does)
    strip_one_line: bool = False

    @property
    def stops(self) -> tuple[str, ...]:
        return (self.open, self.close, self.key) if self.special_tokens else ()


def _first_stop(text: str, start: int, end: int, stops: tuple[str, ...]) -> int:
    """The earliest of ``stops`` in ``text[start:end]`` (``end`` -1: to the end), or -1.

    ``find_forward`` remembers each stop's next place, so the calls of a long
    text looking for a stop none of them has cost one pass, not one each.
    """
    limit = len(text) if end < 0 else end
    found = [at for stop in stops if 0 <= (at := find_forward(text, stop, start)) < limit]
    return min(found, default=-1)


def _words_not_a_name(name: str, text: str, after: int, syntax: KeyValueSyntax, ctx: ParseContext) -> bool:
    """A spaced "name" no offered tool has and no key follows is words (prose in the tags), not a call."""
    return (
        any(ch.isspace() for ch in name)
        and not text.startswith(syntax.key, skip_space(text, after))
        and not (ctx.has_tools and resolve_name(name, ctx).known)
    )


def _key_start(text: str, cursor: int, syntax: KeyValueSyntax, repairs: list[str]) -> tuple[int, int | None]:
    """Where the key at ``cursor`` starts (-1: no key there), and where it ends when its opener was left out."""
    if text.startswith(syntax.key, cursor):
        return cursor + len(syntax.key), None
    lost = _key_without_opener(text, cursor, syntax)
    if lost is None:
        return -1, None
    repairs.append(f"{syntax.key} supplied before the key {text[cursor:lost]!r}")  # ``limit</arg_key>``
    return cursor, lost


def _key_without_opener(text: str, cursor: int, syntax: KeyValueSyntax) -> int | None:
    """Where the key at ``cursor`` ends when it was written without its opening tag (``limit</arg_key>``,
    GLM's pairs in TensorFold's tests): one word, then the key's closer and a value's opener."""
    if not syntax.value:
        return None
    word = _BARE_KEY.match(text, cursor)
    if word is None or not text.startswith(syntax.key_end, word.end()) or not text.startswith(syntax.value, skip_space(text, word.end() + len(syntax.key_end))):
        return None
    return word.end()


#: a key written bare: one word of a key's characters
_BARE_KEY = re.compile(r"""[^\s<>{}\[\]"'=]{1,256}+""")


def _call_ends(text: str, cursor: int, after_value: bool, syntax: KeyValueSyntax, repairs: list[str]) -> tuple[int, bool] | None:
    """Does the call end at ``cursor``: ``(end, final)``? Its closer; the output's end right after a
    whole value (a repair: only the closer is missing); or the next call's opener where this call's
    key or closer belongs (no call holds another: the closer was left out)."""
    if text.startswith(syntax.close, cursor):
        return cursor + len(syntax.close), True
    if after_value and ends_inside(text, cursor, syntax.close):  # the output ended at or in the closer
        repairs.append(ended_before(syntax.close))
        return len(text), False
    if text.startswith(syntax.open, cursor):
        repairs.append(f"missing {syntax.close} before the next call")
        return cursor, True
    return None


def _value_opening(text: str, at: int, key: str, schema: Any, syntax: KeyValueSyntax, repairs: list[str]) -> tuple[int, int, Any] | None:
    """After a key's closer at ``at``: ``(cursor, value start or -1 for no value, schema)``; None for an unclosed type tag.

    Read past the key's closer written twice and an inline type tag (which types
    the value when the tool's schema does not); the value opens with its tag, or
    without it when only its closer follows (:func:`_value_without_opener`).
    """
    cursor = skip_space(text, at)
    doubled = 0
    while doubled < 8 and text.startswith(syntax.key_end, cursor):  # the closer written twice
        cursor = skip_space(text, cursor + len(syntax.key_end))
        doubled += 1
    if doubled:
        repairs.append(f"ignored a repeated {syntax.key_end} after {key!r}")
    if syntax.type_tag is not None and text.startswith(syntax.type_tag[0], cursor):
        type_end = find_forward(text, syntax.type_tag[1], cursor + len(syntax.type_tag[0]))
        if type_end == -1:
            return None
        inline = text[cursor + len(syntax.type_tag[0]) : type_end].strip()
        if inline and not schema_types(schema):
            schema = {"type": inline}
        cursor = skip_space(text, type_end + len(syntax.type_tag[1]))
    if text.startswith(syntax.value, cursor):
        return cursor, cursor + len(syntax.value), schema
    if syntax.value and (opener := _value_opener_after_stray_text(text, cursor, syntax)) >= 0:
        repairs.append(f"ignored {text[cursor:opener]!r} between {key!r} and its value")
        return opener, opener + len(syntax.value), schema
    if _value_without_opener(text, cursor, syntax):
        repairs.append(f"missing {syntax.value} before the value of {key!r}")
        return cursor, cursor, schema
    return cursor, -1, schema


#: how much stray text may stand between a key's closer and its value's opener
_STRAY_BEFORE_VALUE = 16


def _value_opener_after_stray_text(text: str, start: int, syntax: KeyValueSyntax) -> int:
    """Where the value's opener stands after a few stray characters that hold no tag (a line break
    written as the two characters ``\\n``, a stray quote), or -1."""
    at = text.find(syntax.value, start, start + _STRAY_BEFORE_VALUE + len(syntax.value))
    return at if at > start and "<" not in text[start:at] else -1


def _value_without_opener(text: str, start: int, syntax: KeyValueSyntax) -> bool:
    """Is a value written at ``start`` with its closing tag but not its opening one?

    GLM-4.7 models drop ``<arg_value>`` now and then (``<arg_key>q</arg_key>text</arg_value>``):
    text, then the value's closer before any other tag of the call, is that value.
    """
    closer = find_forward(text, syntax.value_end, start)
    if closer <= start:
        return False
    return all(text.find(tag, start, closer) == -1 for tag in (syntax.key, syntax.value, syntax.close, syntax.open))


def _typed(raw: str, schema: Any, syntax: KeyValueSyntax) -> Any:
    """A value's raw text typed by its schema (JSON when untyped and JSON), stripped where the dialect says.

    With ``strip_one_line``, a one-line value padded with blanks (``<arg_value>  Beijing  </arg_value>``)
    is that line; a value of several lines keeps its whitespace, as code does.
    """
    if syntax.strip_values:
        raw = raw.strip()
    elif syntax.strip_one_line and (raw[:1].isspace() or raw[-1:].isspace()):
        line = raw.strip()
        if line and "\n" not in line and "\r" not in line:
            raw = line
    return typed_value(raw, schema, untyped="json")


def _without_layout_tail(raw: str) -> str:
    """A value whose closer was left out, without the line breaks (and indentation) before the next tag.

    The template puts a line break after each closer: with the closer gone, that
    break is layout, not the value's (as for a Qwen3-Coder value).
    """
    kept = raw.rstrip(" \t\r\n")
    return kept if "\n" in raw[len(kept) :] else raw


def _unclosed_value_end(text: str, value_start: int, value_end: int, syntax: KeyValueSyntax) -> int:
    """Where a value whose closer is missing ends (-1: it is closed): at the next of the call's
    tags where they are special tokens, else as :func:`_closer_dropped_at` says."""
    if syntax.special_tokens:
        return _first_stop(text, value_start, value_end, syntax.stops)
    return _closer_dropped_at(text, value_start, value_end, syntax)


def _closer_dropped_at(text: str, value_start: int, value_end: int, syntax: KeyValueSyntax) -> int:
    """Where a value whose closer the model left out ends, or -1 when it is closed.

    A key tag inside a value with no call opener before it (so not quoted
    markup) is the next argument: the value ends there. A value no closer
    follows at all ends at the next key tag or the call's closer.
    """
    stop = _first_stop(text, value_start, -1, (syntax.key, syntax.close)) if value_end == -1 else text.find(syntax.key, value_start, value_end)
    return stop if stop != -1 and text.find(syntax.open, value_start, stop) == -1 else -1


#: the opening of an element a name may be written in, before the first key (a model mixing in
#: Hermes-style markup): ``<function>bash</function>``, ``<name>bash</name>``
NAME_ELEMENT_HEAD = r"\s*+<(?:function|name|tool_name|function_name)>"
_NAME_ELEMENT = re.compile(r"\s*+<(?P<tag>function|name|tool_name|function_name)>\s*+(?P<name>[^\s<>{}\[\]\"']{1,256}+)\s*+</(?P=tag)>\s*+")
#: the repair that says so
NAME_AS_ELEMENT = "the name written in an element of its own"


def _read_name(text: str, at: int, syntax: KeyValueSyntax, repairs: list[str]) -> tuple[str, int] | None:
    """The call's name after its opener at ``at`` and where it ends: bare, or written in an element of its own."""
    match = syntax.name.match(text, at)
    if match is not None:
        return match.group(1).strip(), match.end()
    match = _NAME_ELEMENT.match(text, at)
    if match is None or not text.startswith((syntax.key, syntax.close), match.end()):
        return None
    repairs.append(NAME_AS_ELEMENT)  # ``<tool_call><function>bash</function><arg_key>…``
    return match.group("name"), match.end()


def read_key_value_call(family: str, text: str, pos: int, ctx: ParseContext, syntax: KeyValueSyntax) -> Extraction | None:
    """The call whose opener is at ``pos``: ``OPEN NAME (KEY k KEY_END [TYPE t TYPE_END] VALUE v VALUE_END)* CLOSE``.

    None when no bare name follows the opener. Output that ends inside the call
    is a TRUNCATED report, except right after a whole value: then only the
    closer is missing, and the call is read with that repair recorded (as a JSON
    call cut after a whole value is). A value cut in half is never run. Where
    the tags are special tokens (``syntax.special_tokens``) a missing closer is
    repaired at the next tag: a value ends there and a key with no value is
    dropped. In every dialect the next call's opener ends this call.
    """
    repairs: list[str] = []
    named = _read_name(text, pos + len(syntax.open), syntax, repairs)
    if named is None:
        return None
    name, cursor = named
    tool = ctx.tool(name)
    if tool is None and _words_not_a_name(name, text, cursor, syntax, ctx):
        return None  # "<tool_call>not valid json</tool_call>": words, not a name (a spaced one must be offered or take arguments)
    arguments: dict[str, Any] = {}
    diagnostics: list[Diagnostic] = []
    after_value = False
    final = True
    provisional = False  # a value ended where its closer is missing, resting on none coming later
    while True:
        cursor = skip_space(text, cursor)
        ending = _call_ends(text, cursor, after_value, syntax, repairs)
        if ending is not None:
            end, final = ending
            break
        after_value = False
        key_start, lost = _key_start(text, cursor, syntax, repairs)
        if key_start < 0:
            close = find_forward(text, syntax.close, cursor)
            if close == -1:
                return unreadable(
                    family, text, pos, len(text), f"call to {name!r} ends before {syntax.close}", kind=DiagnosticKind.TRUNCATED
                )
            repairs.append(f"ignored text outside {syntax.key}/{syntax.value} at offset {cursor}")
            cursor = close
            continue
        key_end = lost if lost is not None else find_forward(text, syntax.key_end, key_start)
        if syntax.special_tokens and (stop := _first_stop(text, key_start, key_end, syntax.stops)) >= 0:
            repairs.append(f"dropped the unfinished key {text[key_start:stop].strip()!r}")
            cursor = stop
            continue
        if key_end == -1:
            return unreadable(family, text, pos, len(text), f"unclosed {syntax.key} in call to {name!r}", kind=DiagnosticKind.TRUNCATED)
        key = text[key_start:key_end].strip()
        schema = property_schema(tool, key)
        if not syntax.value:  # the value is the text up to its closer, leading space included
            value_start = key_end + len(syntax.key_end)
        else:
            opened = _value_opening(text, key_end + len(syntax.key_end), key, schema, syntax, repairs)
            if opened is None:
                return unreadable(
                    family, text, pos, len(text), f"unclosed {syntax.type_tag[0]} in call to {name!r}", kind=DiagnosticKind.TRUNCATED  # type: ignore[index]
                )
            cursor, value_start, schema = opened
            if value_start < 0:
                arguments[key] = None
                repairs.append(f"argument {key!r} has no {syntax.value}")
                continue
        value_end = find_forward(text, syntax.value_end, value_start)
        if (stop := _unclosed_value_end(text, value_start, value_end, syntax)) >= 0:
            repairs.append(f"missing {syntax.value_end} after {key!r}")
            arguments[key] = _typed(text[value_start:stop] if syntax.special_tokens else _without_layout_tail(unindented(text[value_start:stop])), schema, syntax)
            provisional = provisional or (value_end == -1 and not syntax.special_tokens)
            cursor = stop
            continue
        if value_end == -1:
            why = f"unclosed {syntax.value or syntax.key_end} for {key!r} in call to {name!r}"
            return unreadable(family, text, pos, len(text), why, kind=DiagnosticKind.TRUNCATED)
        arguments[key] = _typed(unindented(text[value_start:value_end]), schema, syntax)
        cursor = value_end + len(syntax.value_end)
        after_value = True
    call = make_call(family, name, arguments, text[pos:end], pos, repairs, diagnostics)
    return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=final and not provisional, provisional=provisional)


def render_key_value(calls: Sequence[ToolCall], syntax: KeyValueSyntax) -> str:
    blocks = []
    for call in calls:
        lines = [f"{syntax.open}{call.name}"]
        for key, value in call.arguments.items():
            joint = "\n" if syntax.value else ""
            lines.append(f"{syntax.key}{key}{syntax.key_end}{joint}{syntax.value}{render_value(value)}{syntax.value_end}")
        lines.append(syntax.close)
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


class KeyValueFamily(CallFamily):
    """A family writing the key/value markup under its own tags, optionally grouped.

    A subclass sets ``syntax`` and, when its calls come in a wrapper, ``group``
    (opener, closer). Unless it says otherwise, its ``triggers`` are the group
    opener and the call opener, and their scan lookaheads ask for a bare name's
    first character after the call opener, and for the call opener (or the end
    of the text: truncated) after the group's. A group is read call by call up
    to its closer; a call cut off while its name or the tag after it is being
    written makes the group TRUNCATED, not prose.
    """

    syntax: ClassVar[KeyValueSyntax]
    group: ClassVar[tuple[str, str] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        syntax = cls.__dict__.get("syntax")
        if syntax is None:
            return
        group = cls.__dict__.get("group")
        if "declared_triggers" not in cls.__dict__:
            opener = Trigger(syntax.open, _NAME_HEAD)
            cls.declared_triggers = (Trigger(group[0], rf"\s*+(?:{re.escape(syntax.open)}|\Z)"), opener) if group else (opener,)

    def read_call(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """One call at ``pos`` (the call opener); a dialect with a second body syntax overrides this."""
        return read_key_value_call(self.name, text, pos, ctx, self.syntax)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if self.group is None or trigger != self.group[0]:
            return self.read_call(text, pos, ctx)
        return read_call_group(
            self.name, text, pos, self.group, self.syntax.open, lambda t, at: self.read_call(t, at, ctx), self._cut_in_name
        )

    def _cut_in_name(self, text: str, body: int) -> bool:
        return cut_in_name(text, body, self.syntax)

    def render(self, calls: Sequence[ToolCall]) -> str:
        body = render_key_value(calls, self.syntax)
        return f"{self.group[0]}\n{body}\n{self.group[1]}" if self.group is not None else body


def cut_in_name(text: str, body: int, syntax: KeyValueSyntax) -> bool:
    """Does the text end while a call's name (its body starts at ``body``), or the tag after it, is still being written?"""
    cursor = _NAME_SO_FAR.match(text, body).end()  # type: ignore[union-attr]  # (it matches anywhere)
    if syntax.separator and text.startswith(syntax.separator, cursor):
        cursor = skip_space(text, cursor + len(syntax.separator))
    return ends_inside(text, cursor, syntax.key, syntax.close, syntax.separator)


#: a bare name's first character after a call opener, or the element a name may be written in (the
#: default scan lookahead)
_NAME_HEAD = r"""\s*+[^\s<>{}\[\]"']|""" + NAME_ELEMENT_HEAD
#: a call's bare name as far as it was written (then a tag may be cut: ``<tool_call>get_time\n</tool``)
_NAME_SO_FAR = re.compile(r"""\s*+[^\s<>{}\[\]"']{0,256}+\s*+""")
