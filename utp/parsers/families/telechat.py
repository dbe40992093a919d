"""TeleChat calls: GLM's key/value markup with ``param`` tags.

ms-swift's TeleChat agent template writes::

    <tool_call>NAME<param_key>k</param_key><param_value>v</param_value></tool_call>

one block per call, back to back, under the ``<tool_call>`` opener Hermes and
GLM share (this family claims only a bare name followed by ``<param_key>`` or
the close). Values are raw text without the blanks around them (the
template's own reader strips them), typed by the tool's schema, read as JSON
when untyped and JSON.
"""

from __future__ import annotations

from utp.parsers.base import register_family
from utp.parsers.keyvalue import KeyValueFamily, KeyValueSyntax, name_pattern

OPEN, CLOSE = "<tool_call>", "</tool_call>"
KEY = "<param_key>"
SYNTAX = KeyValueSyntax(
    OPEN, CLOSE, KEY, "</param_key>", "<param_value>", "</param_value>", name_pattern(r"[ \t]*", KEY, CLOSE), strip_values=True
)


@register_family
class TeleChatFamily(KeyValueFamily):
    name = "telechat"
    syntax = SYNTAX
    #: right below glm on the shared <tool_call> (a bare name then <arg_key> is GLM's)
    priority = 64
    aliases = ("telechat2", "telechat_param")
    summary = "TeleChat: <tool_call>NAME<param_key>k</param_key><param_value>v</param_value></tool_call>"
