"""Raw-text values a model laid out like markup: which whitespace is layout, which is the value.

XML-style formats (Qwen3-Coder's ``<parameter=k>``, Claude-style and MiniMax
elements, GLM's ``<arg_value>``) carry values as raw text. Templates write a
value straight after its tag, or (Qwen3-Coder) on its own line between one
line break after the tag and one before the closing tag; either way the value's
own whitespace is data (a file's indentation, its last newline).

Models also pretty-print the markup: the value on its own lines, indented
deeper than the tags, the closing tag indented on its own line::

    <parameter=query>
          laptops
        </parameter>

That indentation belongs to the markup, not the value: when the value starts
on its own line and the closing tag is indented on its own line, the line
break after the opening tag and the closing tag's line are dropped and the
lines are dedented by their common indentation, so code keeps its indentation
relative to its first line; one line of text among blank lines is that line. Values written any other way are left to the
format's own rule.
"""

from __future__ import annotations

import html
import re

#: the line break right after the opening tag (blanks before it are layout too)
_OPENING_BREAK = re.compile(r"[ \t]*\r?\n")
_INDENT = re.compile(r"[ \t]*")


def _closing_line(raw: str) -> int:
    """Where the closing tag's own line starts (its line break), or -1: the text after the last
    line break must be spaces or tabs only, at least one. Reads only that last line."""
    last = raw.rfind("\n")
    tail = raw[last + 1 :]
    if last < 0 or not tail or tail.strip(" \t"):
        return -1
    return last - 1 if last > 0 and raw[last - 1] == "\r" else last


def pretty_printed(raw: str) -> bool:
    """Is ``raw`` a value laid out on its own lines, inside tags indented like markup?"""
    return raw[:1] in ("\n", "\r", " ", "\t") and _OPENING_BREAK.match(raw) is not None and _closing_line(raw) >= 0


def one_line_of_text(raw: str) -> bool:
    """Does ``raw`` hold text on one line only, the others blank (``\n   \n  term\n  \n``)? Lines
    of nothing but blanks around one line of text are the markup's layout, not the value's."""
    return sum(1 for line in raw.split("\n") if line.strip()) == 1


def unindented(raw: str) -> str:
    """A pretty-printed value without its layout (see the module docstring); other values unchanged."""
    if raw[-1:] not in (" ", "\t") or not pretty_printed(raw):  # the closing tag's indentation ends it
        return raw
    if one_line_of_text(raw):
        return raw.strip()
    opening = _OPENING_BREAK.match(raw)
    assert opening is not None
    lines = raw[opening.end() : max(opening.end(), _closing_line(raw))].split("\n")
    indents = [len(_INDENT.match(line).group()) for line in lines if line.strip()]  # type: ignore[union-attr]
    cut = min(indents, default=0)
    return "\n".join(line[cut:] if line.strip() else line.strip(" \t") for line in lines)


#: what follows ``&`` in the five XML entities and numeric references
_ENTITY_NAME = r"(?:lt|gt|amp|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});"
_ENTITY = re.compile("&" + _ENTITY_NAME)
#: what an escaped value cannot hold: markup characters, or an ampersand that starts no entity
_UNESCAPED = re.compile(f"[<>]|&(?!{_ENTITY_NAME})")


def markup_text(raw: str) -> str:
    """A value the model escaped as XML text (``x &lt; 10 &amp;&amp; y``), unescaped; others unchanged.

    Models that see tags around a value sometimes escape it as XML would.
    Only a value escaped throughout is read so: one that also holds a raw
    ``<``, ``>`` or a bare ``&`` is text that merely mentions an entity (HTML
    being written, a URL's query), and stays as written.
    """
    if "&" not in raw or _ENTITY.search(raw) is None or _UNESCAPED.search(raw) is not None:
        return raw
    return html.unescape(raw)
