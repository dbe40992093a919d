"""IQuest-Coder calls: GLM's key/value markup inside ``<iquestcoder_tool_call>``.

vLLM's IQuest-Coder v2 parser reads::

    <iquestcoder_tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></iquestcoder_tool_call>

one block per call, back to back. Values are raw text typed by the tool's
schema, read as JSON when untyped and JSON.
"""

from __future__ import annotations

from utp.parsers.base import register_family
from utp.parsers.keyvalue import KeyValueFamily, KeyValueSyntax, word_name_pattern

OPEN, CLOSE = "<iquestcoder_tool_call>", "</iquestcoder_tool_call>"
KEY = "<arg_key>"
SYNTAX = KeyValueSyntax(OPEN, CLOSE, KEY, "</arg_key>", "<arg_value>", "</arg_value>", word_name_pattern(KEY, CLOSE))


@register_family
class IQuestCoderFamily(KeyValueFamily):
    name = "iquest_coder"
    syntax = SYNTAX
    aliases = ("iquestcoder", "iquest_coder_v2")
    summary = "IQuest-Coder: <iquestcoder_tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></iquestcoder_tool_call>"
