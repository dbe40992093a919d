"""DSPy's ChatAdapter field: ``[[ ## tool_calls ## ]]`` and the calls as JSON on the lines after it.

DSPy's ChatAdapter has the model answer field by field, each field opened by
``[[ ## NAME ## ]]`` on its own line. A signature whose output is
``dspy.ToolCalls`` gets a ``tool_calls`` field, whose value DSPy reads as
JSON or a Python literal: ``{"tool_calls": [{"name": ..., "args": {...}}]}``,
a list of ``{"name", "args"}`` calls, or one such call. The marker is exact
(DSPy's own pattern), so prose naming the field differently is not a call;
the value must open with ``{`` or ``[`` and be call-shaped, and the next field
marker (``[[ ## completed ## ]]``) stays content.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.taggedjson import extract_tagged_json
from utp.types import ToolCall

TAG = "[[ ## tool_calls ## ]]"
#: the scan lookahead: blanks, then the value's opening bracket (or the end: the value may still come)
_HEAD = r"\s*+(?:[{\[]|\Z)"


@register_family
class DspyFamily(CallFamily):
    name = "dspy"
    priority = 50
    aliases = ("dspy_chat_adapter",)
    summary = "[[ ## tool_calls ## ]] then [{\"name\": ..., \"args\": {...}}] (DSPy ChatAdapter's ToolCalls field)"
    declared_triggers = static_triggers((TAG,), {TAG: _HEAD})

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        return extract_tagged_json(self.name, text, pos, pos + len(TAG))

    def render(self, calls: Sequence[ToolCall]) -> str:
        return TAG + "\n" + json.dumps([{"name": c.name, "args": c.arguments} for c in calls], ensure_ascii=False)
