"""Phi-4-mini / FireFunction: ``functools[{"name": ..., "arguments": {...}}, ...]``.

The word ``functools`` directly followed by a JSON list of calls (vLLM's
Phi-4-mini parser and FireFunction v2 use it). Only the exact ``functools[``
triggers, so the Python module name in prose does not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, register_family, static_triggers
from utp.parsers.taggedjson import extract_tagged_json
from utp.types import ToolCall

TAG = "functools"
#: the scan lookahead (read at the end of ``functools[``). The JSON list starts at the trigger's own
#: ``[``, so almost any text after it is either decoded or reported as unreadable; only two
#: cases are certainly nothing: the word glued to an identifier before it (``extract`` checks
#: that character; ``\w`` is ``str.isalnum`` plus ``_``) and an empty list ``[]`` (JSON
#: whitespace only: the strict decoder reads it as ``[]``, which holds no call)
_HEAD = r"(?<![\w.]functools\[)(?![ \t\n\r]*+\])"


@register_family
class FunctoolsFamily(CallFamily):
    name = "functools"
    priority = 50
    aliases = ("phi4", "phi4_mini", "firefunction", "firefunction_v2")
    summary = 'functools[{"name": ..., "arguments": {...}}]'
    declared_triggers = static_triggers((TAG + "[",), {TAG + "[": _HEAD}, Start.WORD)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] in "_."):
            return None  # part of a longer identifier (mod.functools[...])
        return extract_tagged_json(self.name, text, pos, pos + len(TAG))

    def render(self, calls: Sequence[ToolCall]) -> str:
        return TAG + json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)
