"""AI21 Jamba (and Hunyuan): ``<tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>``.

One tag pair around a JSON list of calls; a single object is accepted, and
a missing closing tag at the end of output is tolerated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.callshape import extract_tagged_json
from utp.types import ToolCall

OPEN = "<tool_calls>"
CLOSE = "</tool_calls>"


@register_family
class JambaFamily(CallFamily):
    name = "jamba"
    triggers = (OPEN,)
    priority = 50
    aliases = ("hunyuan", "hunyuan_a13b", "tool_calls_xml")
    summary = '<tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        return extract_tagged_json(self.name, text, pos, pos + len(OPEN), (CLOSE,))

    def render(self, calls: Sequence[ToolCall]) -> str:
        body = json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)
        return f"{OPEN}\n{body}\n{CLOSE}"
