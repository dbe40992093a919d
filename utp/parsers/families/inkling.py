"""Inkling: ``<|content_invoke_tool_json|>{"name": ..., "args": {...}}<|end_message|>``.

An Inkling reply is a run of messages, each ``<|message_model|>`` then a
content kind: ``<|content_text|>`` is prose for the user, and
``<|content_invoke_tool_json|>`` holds one JSON call object (its arguments
under ``args``) closed by ``<|end_message|>``; the recipient written between
``<|message_model|>`` and the content kind repeats the name. Only the JSON
kind is read: ``<|content_invoke_tool_text|>`` is free text addressed to a
tool, which names no arguments and stays content. A frame whose JSON cannot be
read is reported and does not cost the frames after it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.taggedjson import TAGGED_JSON_HEAD, extract_tagged_json
from utp.types import ToolCall

TAG = "<|content_invoke_tool_json|>"
CLOSE = "<|end_message|>"
#: a message's header: the recipient written before a JSON call is markup too
MESSAGE = "<|message_model|>"
_RECIPIENT = r"[^\s<>]{1,128}+"


_HEADER = re.compile(_RECIPIENT + re.escape(TAG))


@register_family
class InklingFamily(CallFamily):
    name = "inkling"
    priority = 50
    aliases = ("inkling_json",)
    declared_triggers = static_triggers((TAG, MESSAGE), {TAG: TAGGED_JSON_HEAD, MESSAGE: _RECIPIENT + re.escape(TAG) + TAGGED_JSON_HEAD})
    summary = '<|content_invoke_tool_json|>{"name": ..., "args": {...}}<|end_message|> (Inkling)'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == MESSAGE:
            header = _HEADER.match(text, pos + len(MESSAGE))
            return None if header is None else extract_tagged_json(self.name, text, pos, header.end(), closers=(CLOSE,))
        return extract_tagged_json(self.name, text, pos, pos + len(TAG), closers=(CLOSE,))

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<|message_model|>{c.name}{TAG}{json.dumps({'name': c.name, 'args': c.arguments}, ensure_ascii=False)}{CLOSE}" for c in calls)
