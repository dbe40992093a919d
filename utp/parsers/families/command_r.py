"""Cohere Command R / R+ / A: a JSON list of ``{"tool_name": ..., "parameters": {...}}``.

Command R+ (tool-use prompt) writes ``Action: ```json\\n[...]\\n```;``
Command R7B and Command A write ``<|START_ACTION|>[...]<|END_ACTION|>``.
Items name the tool with ``tool_name`` (``name`` is accepted too). The
``directly_answer`` pseudo-tool means "no call": it is dropped.

LangChain's JSON agents write the same ``Action:`` with a fenced
``{"action": NAME, "action_input": ...}`` blob; models drop the fence and
write the object straight after ``Action:`` (on its line or the next). That
object is read when it is call-shaped; anything else after ``Action:`` stays
ReAct's (``Action: NAME``) or prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.jsonrepair import scan_json_value
from utp.parsers.taggedjson import TAGGED_JSON_HEAD, extract_tagged_json
from utp.parsers.textscan import find_forward
from utp.types import ToolCall

START = "<|START_ACTION|>"
END = "<|END_ACTION|>"
ACTION = "Action:"
#: what follows ``Action:`` before the JSON (possessive: giving back a blank, or ``json``,
#: would leave it where the next part cannot match, so the language is the same)
_FENCE_TAIL = r"[ \t]*+\n?[ \t]*+```(?:json)?+[ \t]*+\n"
_ACTION_FENCE = re.compile("Action:" + _FENCE_TAIL)
#: an object written straight after ``Action:``, without the fence
_INLINE_TAIL = r"[ \t]*+\n?[ \t]*+(?=\{)"
_ACTION_INLINE = re.compile("Action:" + _INLINE_TAIL)
#: the scan lookahead of ``Action:``: the fence's or the inline object's, their shared blanks matched once
_ACTION_HEAD = r"[ \t]*+\n?[ \t]*+(?:```(?:json)?+[ \t]*+\n" + TAGGED_JSON_HEAD + r"|(?=\{))"
NO_CALL = "directly_answer"
#: what may still grow into ``_FENCE_TAIL`` (streaming: the fence is still arriving)
_FENCE_TAIL_ARRIVING = re.compile(r"[ \t]*(?:\n[ \t]*)?(?:`(?:`(?:`(?:j(?:s(?:o(?:n)?)?)?)?[ \t]*)?)?)?\Z")


@register_family
class CommandRFamily(CallFamily):
    name = "command_r"
    priority = 50
    #: scan lookahead: the Action fence (else no read at all), then where JSON must start
    declared_triggers = static_triggers((START, ACTION), {START: TAGGED_JSON_HEAD, ACTION: _ACTION_HEAD})
    aliases = ("cohere", "command_r_plus", "command_a", "command_r7b")
    summary = '<|START_ACTION|>[{"tool_name": ..., "parameters": {...}}]<|END_ACTION|> or Action: ```json [...]```'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == START:
            found = extract_tagged_json(self.name, text, pos, pos + len(START), (END,))
        else:
            fence = _ACTION_FENCE.match(text, pos)
            if fence is None:
                return self._inline(text, pos)
            found = extract_tagged_json(self.name, text, pos, fence.end(), ("```",))
        if found is not None:
            found.calls = [c for c in found.calls if c.name != NO_CALL]
        return found

    def _inline(self, text: str, pos: int) -> Extraction | None:
        """``Action: {...}`` without the fence: the object when it is a call, else nothing (no report:
        with no closer to stop at, a broken object is not told from prose)."""
        inline = _ACTION_INLINE.match(text, pos)
        if inline is None:
            return None
        found = extract_tagged_json(self.name, text, pos, inline.end(), require_arguments=True, separators="")
        return found if found is not None and found.calls else None

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """``Action:`` is decided once the text after it cannot become the fence, or the fence closed.

        (ReAct's ``Action: NAME`` shares the trigger: without this a stream would
        hold every ReAct step back until the end.)
        """
        if trigger == START:
            return False
        fence = _ACTION_FENCE.match(text, pos)
        if fence is None:
            inline = _ACTION_INLINE.match(text, pos)
            if inline is not None:
                return scan_json_value(text, inline.end()) != -1
            return _FENCE_TAIL_ARRIVING.match(text, pos + len(ACTION)) is None
        return find_forward(text, "```", fence.end()) >= 0

    def render(self, calls: Sequence[ToolCall]) -> str:
        body = json.dumps([{"tool_name": c.name, "parameters": c.arguments} for c in calls], ensure_ascii=False)
        return f"{START}{body}{END}"
