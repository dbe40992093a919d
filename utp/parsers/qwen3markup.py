"""Qwen3-Coder's markup: its tags, how a name is read, and the reader of a call's parameters.

The family (:mod:`utp.parsers.families.qwen3_coder`) finds the calls; this
module reads what one call says: the ``<function=NAME>`` header and each
``<parameter=KEY>value</parameter>``, with the ways models bend them. Values
are raw text, typed by the tool's schema.
"""

from __future__ import annotations

import re
from typing import Any

from utp.parsers.familykit import NAME_ATTRIBUTE
from utp.parsers.layout import unindented
from utp.parsers.textscan import bounded_find, find_forward, is_proper_prefix, skip_space
from utp.parsers.typedvalues import property_schema, typed_value

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
#: the same with the key unquoted (``<parameter name=path>``, bog-agents' tests): an identifier, then ``>``
_UNQUOTED_NAMED_PARAMETER = re.compile(r"<parameter\s++name\s*+=\s*+([A-Za-z_][\w.\-]{0,255}+)>")
#: where a parameter tag starts: ``<parameter=``, Anthropic's ``<parameter name=``, or a nameless ``<parameter>``
PARAMETER_TAG = re.compile(r"<parameter(?:=|\s+name\s*=|[ \t]*>)")
#: the output ends inside ``<parameter name=`` (a stream must wait for the rest)
_NAMED_PARAMETER_SO_FAR = re.compile(r"<parameter\s{1,16}+(?:n(?:a(?:m(?:e\s{0,16}+)?)?)?)?\Z")
#: where a tagged parameter starts (a value runs to its close or to one of these: a nameless
#: ``<parameter>`` inside a value is the value's text, as the template never writes one)
TAGGED_PARAMETER = re.compile(r"<parameter(?:=|\s+name\s*=)")
#: a parameter's close as written: ``</parameter>``, ``</parameter/>``, or ``</parameter`` missing its ``>``
_PARAMETER_CLOSE = re.compile(r"</parameter(?:[ \t]*/?>|(?=[\s<]|\Z))")
#: a key glued to its value by '=' (``<parameter=path=/tmp/x</parameter>``, ``<parameter>path=/tmp/x</parameter>``)
_KEY_EQUALS = re.compile(r"[ \t]*([A-Za-z_][\w.\-]{0,255}+)[ \t]*=")
#: the next call's opening tag inside this call's body: a name closed by '>', then a parameter tag or
#: the call's close (the shape the bare trigger requires); possessive, as the first '>' ends the name
NEXT_CALL = re.compile(rf"<function=[^<>{{\n]{{1,{MAX_NAME}}}+>\s{{0,{MAX_NAME}}}+(?:<parameter(?:=|\s+name\s*=)|</function>)")
#: what a parameter key looks like when no tag says it is one
_KEY = re.compile(r"[A-Za-z_][\w.\-]{0,255}+")
#: an element named by a parameter's key opening a bare call's body: ``<path>``
KEY_ELEMENT = re.compile(r"<([A-Za-z_][\w.\-]{0,255}+)>")
#: such an element the text ends inside
KEY_ELEMENT_SO_FAR = re.compile(r"<[A-Za-z_][\w.\-]{0,255}+\Z")


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
    if KEY_ELEMENT_SO_FAR.match(text, body):
        return False  # ``<pa``: may still become an element named by a parameter's key
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


def read_parameters(text: str, cursor: int, end: int, tool: Any, repairs: list[str]) -> dict[str, Any]:
    """The arguments the parameter tags between ``cursor`` and ``end`` write (the bent ones named in ``repairs``)."""
    reader = _ParameterReader(text, end, tool, repairs)
    while True:
        tag = PARAMETER_TAG.search(text, cursor, end)
        if tag is None:
            return reader.arguments
        cursor = reader.nameless(tag.end()) if text[tag.end() - 1] == ">" else reader.tagged(tag.start(), tag.end())


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
        tag = TAGGED_PARAMETER.search(text, value_start, self.end)
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
        if (unquoted := _UNQUOTED_NAMED_PARAMETER.match(text, start)) is not None:
            self.repairs.append(f"<parameter name={unquoted.group(1)}> for <parameter={unquoted.group(1)}>")
            return unquoted.group(1), unquoted.end(), None
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
        tag = PARAMETER_TAG.search(self.text, at, self.end)
        return self.end if tag is None else tag.start()

    def _note_close(self, close: re.Match[str], key: str) -> None:
        if close.group() != PARAMETER_END:
            self.repairs.append(f"{close.group().strip()!r} read as </parameter> after parameter {key!r}")

    def _keep(self, key: str, raw: str) -> None:
        self.arguments[key] = typed_value(raw, property_schema(self.tool, key), untyped="json")


#: ``</function`` with its ``>`` left out (Qwen3.5 under mlx-swift-lm closes nearly every call so),
#: followed by something other than the ``>``, a name character or ``=`` (so a stream that has
#: only seen ``</function`` so far waits for the next character)
BENT_FUNCTION_END = re.compile(r"</function(?=[^>\w=])")
#: one argument opened as an element named by its key and closed as a parameter: ``<path>a</parameter>``
_KEY_OPENED_PARAMETER_CLOSED = re.compile(r"\s*+<([A-Za-z_][\w.\-]{0,255}+)>([\s\S]*?)</parameter>")


def key_elements_closed_as_parameters(body: str, tool: Any) -> dict[str, str] | None:
    """``<path>\na.txt\n</parameter>``: each argument opened by its key as an element and closed with
    ``</parameter>`` (Qwen3.5 mixing the two spellings); None unless the body is only those and,
    where the tool lists its parameters, every key is one of them. Values are the raw text, trimmed."""
    values: dict[str, str] = {}
    at = skip_space(body, 0)
    while at < len(body):
        match = _KEY_OPENED_PARAMETER_CLOSED.match(body, at)
        if match is None or (tool is not None and tool.properties and match.group(1) not in tool.properties):
            return None
        values[match.group(1)] = match.group(2).strip()
        at = skip_space(body, match.end())
    return values or None
