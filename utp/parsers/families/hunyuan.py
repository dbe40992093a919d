"""Hunyuan (HY v4) calls: GLM's key/value markup with every tag carrying a suffix, ``:opensource`` in the release.

vLLM's HY v4 parser reads::

    <tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>k</arg_key:opensource><arg_value:opensource>v</arg_value:opensource></tool_call:opensource></tool_calls:opensource>

several calls back to back inside the group. HY v3's open-source release
writes the same tags with ``<tool_sep:opensource>`` between the name and the
first key (as HY v3 itself writes GLM's own tags with ``<tool_sep>``, which the
GLM family reads); the separator is optional. Values are raw text typed by the
tool's schema, read as JSON when untyped and JSON. HY v3's JSON variant writes
the arguments as one JSON object after the separator instead of key/value
tags (``<tool_call:opensource>NAME<tool_sep:opensource>{"k": "v"}</tool_call:opensource>``).

Served HY models put other words in the suffix (a call id: ``<tool_calls:abc123>``);
a call's tags all carry its opener's suffix. Hy3 served through OpenRouter
also writes each argument as a line ``parameter: KEY: VALUE`` under the name
instead of key/value tags (a line that does not start so continues the value).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from utp.parsers.base import Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import json_arguments_before, make_call, read_call_group
from utp.parsers.keyvalue import _NAME_HEAD, KeyValueFamily, KeyValueSyntax, cut_in_name, read_key_value_call, word_name_pattern
from utp.parsers.textscan import find_forward, skip_space
from utp.parsers.typedvalues import property_schema, typed_value
from utp.types import Diagnostic

SUFFIX = ":opensource"
#: the suffix a served model writes instead (a call id): a word of at most 64 characters
_ANY_SUFFIX = r"[A-Za-z0-9_\-]{1,64}+"
_SUFFIXED = re.compile(rf"<tool_call(s?)(:{_ANY_SUFFIX})>")
#: an argument line of Hy3's served form: ``parameter: path: docs/a.md``
_PARAMETER_LINE = re.compile(r"[ \t]*+parameter:[ \t]*+([^\s:<>]{1,128}+)[ \t]*+:[ \t]?([^\n]*)")


@lru_cache(maxsize=64)
def dialect(suffix: str) -> tuple[KeyValueSyntax, tuple[str, str], re.Pattern[str]]:
    """The tags of calls whose suffix is ``suffix``: their syntax, group, and the JSON variant's header."""
    call_open, call_close, key, separator = f"<tool_call{suffix}>", f"</tool_call{suffix}>", f"<arg_key{suffix}>", f"<tool_sep{suffix}>"
    syntax = KeyValueSyntax(
        call_open, call_close, key, f"</arg_key{suffix}>", f"<arg_value{suffix}>", f"</arg_value{suffix}>",
        word_name_pattern(key, call_close, separator), separator=separator,
    )
    json_header = re.compile(rf"""\s*+([^\s<>{{}}\[\]"']{{1,256}}+)\s*+{re.escape(separator)}\s*+(?=\{{)""")
    return syntax, (f"<tool_calls{suffix}>", f"</tool_calls{suffix}>"), json_header


#: the release's own tags (what ``render`` writes)
SYNTAX, GROUP, _ = dialect(SUFFIX)
#: a name on the opener's line, then the first ``parameter:`` line
_PARAMETERS_HEADER = re.compile(r"""[ \t]*+([^\s<>{}\[\]"']{1,256}+)[ \t]*+\r?\n(?=[ \t]*+parameter:)""")


@register_family
class HunyuanFamily(KeyValueFamily):
    name = "hunyuan"
    syntax = SYNTAX
    group = GROUP
    aliases = ("hy_v4", "hunyuan_v4", "hy_v3_opensource")
    declared_triggers = static_triggers(
        ("<tool_calls:", "<tool_call:"),
        {"<tool_call:": _ANY_SUFFIX + ">" + _NAME_HEAD, "<tool_calls:": _ANY_SUFFIX + r">\s*+(?:<tool_call:|\Z)"},
    )
    summary = "Hunyuan HY v4: <tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>k</arg_key:opensource><arg_value:opensource>v</arg_value:opensource>…"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """A group or a call under whatever suffix its opener carries."""
        opener = _SUFFIXED.match(text, pos)
        if opener is None:
            return None
        syntax, group, _ = dialect(opener.group(2))
        if not opener.group(1):
            return self._read_call(text, pos, ctx, opener.group(2))
        return read_call_group(
            self.name, text, pos, group, syntax.open,
            lambda t, at: self._read_call(t, at, ctx, opener.group(2)), lambda t, body: cut_in_name(t, body, syntax),
        )

    def read_call(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        return self._read_call(text, pos, ctx, SUFFIX)

    def _read_call(self, text: str, pos: int, ctx: ParseContext, suffix: str) -> Extraction | None:
        """The JSON variant when a JSON object follows the separator, argument lines when they follow
        the name, else the key/value tags."""
        syntax, _, json_header = dialect(suffix)
        body = pos + len(syntax.open)
        if (lines := _PARAMETERS_HEADER.match(text, body)) is not None:
            return self._parameter_lines(text, pos, lines, syntax, ctx)
        header = json_header.match(text, body)
        if header is None:
            return read_key_value_call(self.name, text, pos, ctx, syntax)
        name = header.group(1)
        read = json_arguments_before(self.name, text, pos, header.end(), syntax.close, name)
        if isinstance(read, Extraction):
            return read
        arguments, end, repairs = read
        after = skip_space(text, end)
        closed = text.startswith(syntax.close, after)
        if closed:
            end = after + len(syntax.close)
        else:
            repairs = [*repairs, f"missing {syntax.close}"]
        diagnostics: list[Diagnostic] = []
        return Extraction(end=end, calls=[make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)], diagnostics=diagnostics, final=closed)

    def _parameter_lines(self, text: str, pos: int, header: re.Match[str], syntax: KeyValueSyntax, ctx: ParseContext) -> Extraction | None:
        """``NAME`` then ``parameter: KEY: VALUE`` lines up to the call's closer; None when no closer
        follows (an unclosed call of this form is not read)."""
        close = find_forward(text, syntax.close, header.end())
        if close == -1:
            return None
        name = header.group(1)
        tool = ctx.tool(name)
        values: dict[str, list[str]] = {}
        key = None
        for line in text[header.end() : close].splitlines():
            argument = _PARAMETER_LINE.fullmatch(line)
            if argument is not None:
                key = argument.group(1)
                values[key] = [argument.group(2).rstrip()]
            elif key is not None:
                values[key].append(line.rstrip())
        arguments: dict[str, Any] = {
            k: typed_value("\n".join(lines).strip("\n"), property_schema(tool, k), untyped="json") for k, lines in values.items()
        }
        end = close + len(syntax.close)
        diagnostics: list[Diagnostic] = []
        return Extraction(end=end, calls=[make_call(self.name, name, arguments, text[pos:end], pos, [], diagnostics)], diagnostics=diagnostics)
