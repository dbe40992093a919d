"""Arguments written as XML child elements: ``<city>Tokyo</city><days>3</days>``.

Hermes-style tags holding ``<name>f</name><arguments>...`` or a tool element,
and Cline's tool elements, write each argument as an element named by the key.
"""

from __future__ import annotations

import json
import re
from typing import Any

from utp.parsers.jsonrepair import loads_lenient
from utp.parsers.layout import unindented
from utp.parsers.typedvalues import json_or_text, typed_value
from utp.parsers.textscan import find_forward, skip_space

#: an element's opening tag: ``<city>``
OPEN_ELEMENT = re.compile(r"<([A-Za-z_][\w.\-]{0,100})>")
_CHILD_OPEN = re.compile(r"\s*<([A-Za-z_][\w.\-]{0,100})>")
#: XML's quoting of text that may hold markup (``<code><![CDATA[if a < b: ...]]></code>``): the text is the value
_CDATA_OPEN, _CDATA_CLOSE = "<![CDATA[", "]]>"


def unwrap_cdata(raw: str) -> str:
    """``<![CDATA[text]]>`` → ``text`` (stripped); any other text as it is."""
    if raw.startswith(_CDATA_OPEN) and raw.endswith(_CDATA_CLOSE):
        return raw[len(_CDATA_OPEN) : -len(_CDATA_CLOSE)].strip()
    return raw


def cdata_text(raw: str) -> str | None:
    """The text of a value that is one CDATA section and nothing else (blanks around it aside), the
    line breaks next to its markers dropped as layout; None for any other value."""
    stripped = raw.strip()
    if not (stripped.startswith(_CDATA_OPEN) and stripped.endswith(_CDATA_CLOSE)):
        return None
    inner = stripped[len(_CDATA_OPEN) : -len(_CDATA_CLOSE)]
    if _CDATA_CLOSE in inner:
        return None  # several sections, or text between them: not one quoted value
    return inner.strip("\r\n")


def child_elements(inner: str, decode: bool = True) -> dict[str, Any] | None:
    """``<city>Tokyo</city> <days>3</days>`` → ``{"city": "Tokyo", "days": 3}``; None unless only elements.

    Values are raw text (stripped), decoded when they are JSON (``3``,
    ``true``, ``[1]``) unless ``decode`` is off (the caller types them); a
    value quoted as CDATA is its text, never decoded.
    Each element is closed by the first closing tag of its name (a value may
    hold other markup); text between elements makes the whole not arguments.
    """
    out: dict[str, Any] = {}
    at = 0
    while True:
        opening = _CHILD_OPEN.match(inner, at)
        if opening is None:
            return out if not inner[at:].strip() else None
        key = opening.group(1)
        close = inner.find(f"</{key}>", opening.end())
        if close < 0 or key in out:
            return None
        raw = unindented(inner[opening.end() : close]).strip()
        if raw.startswith(_CDATA_OPEN) and raw.endswith(_CDATA_CLOSE):  # markup-free text, as XML quotes it
            out[key] = unwrap_cdata(raw)
        elif decode and (items := item_list(raw)) is not None:
            out[key] = items
        else:
            out[key] = json_or_text(raw) if decode else raw
        at = close + len(key) + 3


_ITEM_OPEN, _ITEM_CLOSE = "<item>", "</item>"


def item_list(raw: str) -> list[Any] | None:
    """``<item>a</item><item>b</item>`` → ``["a", "b"]``, XML's way to write an array (Obsidian
    Copilot's tool format); an item of elements is an object. None unless ``raw`` is only items."""
    if not raw.startswith(_ITEM_OPEN):
        return None
    items: list[Any] = []
    at = 0
    while at < len(raw):
        if not raw.startswith(_ITEM_OPEN, at):
            return None
        close = raw.find(_ITEM_CLOSE, at + len(_ITEM_OPEN))
        if close < 0:
            return None
        body = unindented(raw[at + len(_ITEM_OPEN) : close]).strip()
        fields = child_elements(body) if body.startswith("<") else None
        items.append(fields if fields else json_or_text(body))
        at = skip_space(raw, close + len(_ITEM_CLOSE))
    return items


#: an argument element's opening tag, maybe with attributes: ``<replicas type="int">``
_ARGUMENT_OPEN = re.compile(r"<([A-Za-z_][\w.\-]{0,100})((?:\s+[\w.:\-]{1,64}\s*=\s*(?:\"[^\"<>\n]{0,100}\"|'[^'<>\n]{0,100}'))*)\s*>")
_TYPE_ATTRIBUTE = re.compile(r"""\btype\s*=\s*["']([\w]{1,32})["']""")
#: how deep elements inside elements are read as objects (deeper stays text)
_MAX_NESTING = 8


def elements_to_dict(inner: str, depth: int = 0) -> dict[str, Any]:
    """``<city>Tokyo</city><days>3</days>`` → ``{"city": "Tokyo", "days": 3}`` (JSON values decoded).

    An arguments wrapper holding only elements is an object (``<args><k>v</k></args>``),
    a generic argument element's ``name`` attribute is its key (``<arg name="city">``),
    and a ``type`` attribute types a leaf (``<replicas type="int">1</replicas>``),
    as XML-minded clients write structured arguments; other markup in a value is its text.
    Closing tags are found with remembered forward searches, so a body of
    many unclosed elements is still read in linear time.
    """
    out: dict[str, Any] = {}
    pos = 0
    while True:
        opening = _ARGUMENT_OPEN.search(inner, pos)
        if opening is None:
            return out
        tag = opening.group(1)
        close = find_forward(inner, f"</{tag}>", opening.end())
        if close < 0:
            pos = opening.end()
            continue
        out[_named_key(tag, opening.group(2)) or tag] = _element_value(tag, inner[opening.end() : close], opening.group(2), depth)
        pos = close + len(tag) + 3


#: generic argument elements whose ``name`` attribute is the key: ``<arg name="city" type="string">Paris</arg>``
#: (a BFCL prompt format's XML calls, as models wrote them)
_NAMED_ARGUMENT_TAGS = frozenset(("arg", "argument", "param", "parameter"))
_NAME_ATTRIBUTE = re.compile(r"""\bname\s*=\s*(["'])([^"'<>\n]{1,100})\1""")


def _named_key(tag: str, attributes: str) -> str | None:
    """The key a generic argument element names by attribute (``<arg name="city">``), else None."""
    if tag not in _NAMED_ARGUMENT_TAGS or not attributes:
        return None
    named = _NAME_ATTRIBUTE.search(attributes)
    return named.group(2) if named is not None else None


def _element_value(tag: str, body: str, attributes: str, depth: int) -> Any:
    """An argument element's value: an object when it is an arguments wrapper (``<args>``) holding only
    elements, else its text (markup an argument holds, ``<content><p>Hi</p></content>``, stays text),
    typed by a ``type`` attribute or read as JSON."""
    raw = body.strip()
    if tag in ARGUMENT_ELEMENTS and raw.startswith("<") and depth < _MAX_NESTING and _only_elements(raw):
        return elements_to_dict(raw, depth + 1)
    if (items := item_list(raw)) is not None:
        return items
    declared = _TYPE_ATTRIBUTE.search(attributes) if attributes else None
    if declared is not None:
        return typed_value(raw, {"type": declared.group(1)})
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _only_elements(body: str) -> bool:
    """Is ``body`` (stripped) nothing but whole elements, one after another?"""
    at = 0
    while at < len(body):
        opening = _ARGUMENT_OPEN.match(body, at)
        if opening is None:
            return False
        closer = f"</{opening.group(1)}>"
        close = body.find(closer, opening.end())
        if close < 0:
            return False
        at = close + len(closer)
        while at < len(body) and body[at].isspace():
            at += 1
    return True


def without_wrapper(arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Arguments wrapped once more in an arguments element (``<arguments><args>…</args></arguments>``)
    unwrapped, with the repair that says so."""
    if len(arguments) == 1:
        (key, value), = arguments.items()
        if key in ARGUMENT_ELEMENTS and isinstance(value, dict):
            return value, [f"arguments wrapped again in <{key}>"]
    return arguments, []


#: the elements that name the tool in a call tag's body (``<name>f</name>``; Langroid's ``<request>``)
NAME_ELEMENTS = ("name", "tool_name", "function_name", "invoke_name", "function", "request")


def element_names_pattern(names: tuple[str, ...]) -> str:
    """The names as alternatives, each ``_`` also written ``-`` (``<tool-name>``, as in a
    ``<tool-use>`` a prompt spelt with hyphens; its closer may be spelt either way)."""
    return "|".join(name.replace("_", "[_\\-]") for name in names)


_CHILD_NAME = re.compile(r"\s*<(" + element_names_pattern(NAME_ELEMENTS) + r")>\s*([^<]{1,200}?)\s*</(" + element_names_pattern(NAME_ELEMENTS) + r")>", re.S)
#: the elements that hold the arguments after the name, named as JSON calls name their arguments key
ARGUMENT_ELEMENTS = ("arguments", "parameters", "args", "input", "params", "tool_arguments", "tool_args", "function_arguments")
_CHILD_ARGS = re.compile(r"\s*<(" + element_names_pattern(ARGUMENT_ELEMENTS) + r")>", re.S)
#: the name element bent toward Qwen3-Coder's ``<function=NAME>``: ``<name=NAME</name>``, ``<name=NAME>``,
#: ``<function=NAME</function>``; read only where an arguments element follows (a ``<function=NAME>``
#: with ``<parameter=…>`` children is Qwen3-Coder's own call)
_BENT_NAME = re.compile(r"\s*<(" + "|".join(NAME_ELEMENTS) + r")=\s*([^<>\n]{1,200}?)\s*(?:</\1>|>)")
#: the repair such a name records
BENT_NAME_ELEMENT = "name element written as <name=NAME>"
#: GLM's key/value pairs after the name element: another family's body
_KEY_VALUE_PAIRS = re.compile(r"\s*+<arg_key>")


def _closer_either_way(text: str, element: str, start: int, limit: int) -> int:
    """Where ``</element>`` first stands, its ``_`` or ``-`` written either way (-1: nowhere before ``limit``)."""
    found = [text.find(f"</{spelling}>", start, limit) for spelling in {element, element.replace("-", "_"), element.replace("_", "-")}]
    return min((at for at in found if at >= 0), default=-1)


def named_element_call(text: str, cursor: int, limit: int, body_end: int) -> tuple[str, Any, list[str]] | None:
    """``<name>f</name><arguments>{json}</arguments>`` (or elements inside ``<arguments>``, or one element
    per argument beside the name) at ``cursor``: ``(name, arguments, repairs)``; None when no name element
    opens the body. Arguments that cannot be read raise ``ValueError`` naming the tool: a body beside the
    name that is not whole elements is not read as no arguments."""
    named = _CHILD_NAME.match(text, cursor, limit)
    if named is not None and named.group(1).replace("-", "_") != named.group(3).replace("-", "_"):
        named = None  # closed by another element
    repaired: list[str] = []
    if named is None:
        named = _BENT_NAME.match(text, cursor, limit)
        if named is None or _CHILD_ARGS.match(text, named.end(), limit) is None:
            return None
        repaired = [BENT_NAME_ELEMENT]
    name, at = named.group(2).strip(), named.end()
    args_open = _CHILD_ARGS.match(text, at, limit)
    if args_open is None:
        if _KEY_VALUE_PAIRS.match(text, at, limit) is not None:
            return None  # GLM's ``<arg_key>k</arg_key><arg_value>v</arg_value>`` pairs: the glm family's call
        elements = child_elements(text[at:body_end])
        if elements is None:
            raise ValueError(f"arguments of {name!r} are not whole elements")
        return name, elements, []
    arg_close = _closer_either_way(text, args_open.group(1), args_open.end(), limit)
    inner = text[args_open.end() : arg_close if arg_close >= 0 else limit]
    inner = unwrap_cdata(inner.strip())  # the JSON perhaps quoted as CDATA
    if not inner.strip().startswith(("{", "[")):
        arguments, unwrapped = without_wrapper(elements_to_dict(inner))
        return name, arguments, [*repaired, *unwrapped]
    try:
        arguments, repairs = loads_lenient(inner)
    except ValueError as exc:
        raise ValueError(f"arguments of {name!r}: {exc}") from None
    return name, arguments, [*repaired, *repairs]
