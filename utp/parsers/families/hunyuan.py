"""Hunyuan (HY v4) calls: GLM's key/value markup with every tag carrying the ``:opensource`` suffix.

vLLM's HY v4 parser reads::

    <tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>k</arg_key:opensource><arg_value:opensource>v</arg_value:opensource></tool_call:opensource></tool_calls:opensource>

several calls back to back inside the group. HY v3's open-source release
writes the same tags with ``<tool_sep:opensource>`` between the name and the
first key (as HY v3 itself writes GLM's own tags with ``<tool_sep>``, which the
GLM family reads); the separator is optional. Values are raw text typed by the
tool's schema, read as JSON when untyped and JSON.
"""

from __future__ import annotations

from utp.parsers.base import register_family
from utp.parsers.keyvalue import KeyValueFamily, KeyValueSyntax, word_name_pattern

SUFFIX = ":opensource"
OPEN, CLOSE = f"<tool_call{SUFFIX}>", f"</tool_call{SUFFIX}>"
GROUP_OPEN, GROUP_CLOSE = f"<tool_calls{SUFFIX}>", f"</tool_calls{SUFFIX}>"
KEY = f"<arg_key{SUFFIX}>"
SEPARATOR = f"<tool_sep{SUFFIX}>"
SYNTAX = KeyValueSyntax(
    OPEN, CLOSE, KEY, f"</arg_key{SUFFIX}>", f"<arg_value{SUFFIX}>", f"</arg_value{SUFFIX}>", word_name_pattern(KEY, CLOSE, SEPARATOR), separator=SEPARATOR
)


@register_family
class HunyuanFamily(KeyValueFamily):
    name = "hunyuan"
    syntax = SYNTAX
    group = (GROUP_OPEN, GROUP_CLOSE)
    aliases = ("hy_v4", "hunyuan_v4", "hy_v3_opensource")
    summary = "Hunyuan HY v4: <tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>k</arg_key:opensource><arg_value:opensource>v</arg_value:opensource>…"
