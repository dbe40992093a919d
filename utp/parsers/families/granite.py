"""IBM Granite 3.x and Phi-4-mini: ``<|tool_call|>[{"name": ..., "arguments": {...}}, ...]``.

Granite's chat template has the model write the special token and then a
JSON list of calls (one object is accepted too); nothing closes the block,
so the calls end where the JSON ends. Phi-4-mini writes the same and closes
it with ``<|/tool_call|>``, which is consumed when it follows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.taggedjson import TAGGED_JSON_HEAD, extract_tagged_json
from utp.types import ToolCall

TAG = "<|tool_call|>"
CLOSE = "<|/tool_call|>"


@register_family
class GraniteFamily(CallFamily):
    name = "granite"
    priority = 50
    aliases = ("granite3", "granite_tool_call")
    declared_triggers = static_triggers((TAG,), {TAG: TAGGED_JSON_HEAD})
    summary = '<|tool_call|>[{"name": ..., "arguments": {...}}] (Phi-4-mini: then <|/tool_call|>)'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        return extract_tagged_json(self.name, text, pos, pos + len(TAG), closers=(CLOSE,))

    def render(self, calls: Sequence[ToolCall]) -> str:
        return TAG + json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)
