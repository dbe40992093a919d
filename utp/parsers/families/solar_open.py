"""Solar Open calls: a name and key/value tokens between ``<|tool_call:start|>`` and ``<|tool_call:end|>``.

vLLM's Solar Open parser reads::

    <|tool_call:start|>NAME
    <|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>
    <|tool_call:end|>

one block per call, back to back. The value is everything between
``<|tool_arg:value|>`` and ``<|tool_arg:end|>``, spaces included, typed by the
tool's schema (read as JSON when untyped and JSON). The tags are special
tokens, so none can stand inside a key or a value: a closer the model left
out is repaired at the next tag (a key without its value is dropped, the
next call's opener ends the call). Reasoning comes in
``<|think:start|>…<|think:end|>`` (see ``reasoning.REASONING_TAGS``).
"""

from __future__ import annotations

from utp.parsers.base import register_family
from utp.parsers.keyvalue import KeyValueFamily, KeyValueSyntax, word_name_pattern

OPEN, CLOSE = "<|tool_call:start|>", "<|tool_call:end|>"
KEY = "<|tool_arg:start|>"
SYNTAX = KeyValueSyntax(
    OPEN, CLOSE, KEY, "<|tool_arg:value|>", "", "<|tool_arg:end|>", word_name_pattern(KEY, CLOSE), special_tokens=True
)


@register_family
class SolarOpenFamily(KeyValueFamily):
    name = "solar_open"
    syntax = SYNTAX
    aliases = ("solar", "solar_open2")
    summary = "Solar Open: <|tool_call:start|>NAME<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|><|tool_call:end|>"
