"""InternLM 2/2.5: ``<|action_start|><|plugin|>\\n{"name": ..., "parameters": {...}}<|action_end|>``.

The plugin channel carries one JSON call (``parameters`` or ``arguments``);
``<|action_start|><|interpreter|>`` is the code interpreter, read as a call
of ``interpreter(code=...)`` only when that tool is offered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.callshape import build_call
from utp.parsers.taggedjson import TAGGED_JSON_HEAD, extract_tagged_json
from utp.parsers.textscan import find_forward
from utp.types import ToolCall

START = "<|action_start|>"
PLUGIN = "<|plugin|>"
INTERPRETER = "<|interpreter|>"
END = "<|action_end|>"
#: the two tokens with a blank between (a client joining tokens with spaces; swift-lm-response-parser's second call)
SPACED_PLUGIN = START + " " + PLUGIN
#: scan lookaheads. Plugin: a tagged JSON body (``TAGGED_JSON_HEAD``). Interpreter: a call only
#: when the code before ``<|action_end|>`` (or the end) is not blank, i.e. the first non-space
#: character after the tag exists and does not open ``<|action_end|>``. Whether the interpreter tool is offered is left to ``extract`` (the scan
#: pattern is shared by every context), so a flood of bare interpreter tags is still visited:
#: with that tool, the next tag is code.
HEADS = {
    START + PLUGIN: TAGGED_JSON_HEAD,
    SPACED_PLUGIN: TAGGED_JSON_HEAD,
    START + INTERPRETER: r"\s*+(?!" + re.escape(END) + r")\S",
}


@register_family
class InternlmFamily(CallFamily):
    name = "internlm"
    priority = 50
    aliases = ("internlm2", "internlm2_5")
    declared_triggers = static_triggers((START + PLUGIN, SPACED_PLUGIN, START + INTERPRETER), HEADS)
    summary = '<|action_start|><|plugin|>{"name": ..., "parameters": {...}}<|action_end|>'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        body = pos + len(trigger)
        if trigger.endswith(PLUGIN):
            return extract_tagged_json(self.name, text, pos, body, (END,))
        if ctx.tool("interpreter") is None:
            return None
        close = find_forward(text, END, body)
        stop = close if close >= 0 else len(text)
        code = text[body:stop].strip()
        if not code:
            return None
        call, diagnostics = build_call("interpreter", {"code": code}, self.name, text[pos:stop])
        return Extraction(stop + (len(END) if close >= 0 else 0), [call] if call else [], diagnostics)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            f"{START}{PLUGIN}\n{json.dumps({'name': c.name, 'parameters': c.arguments}, ensure_ascii=False)}{END}\n"
            for c in calls
        ).rstrip("\n")
