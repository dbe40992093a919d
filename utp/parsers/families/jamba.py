"""AI21 Jamba (and Hunyuan): ``<tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>``.

One tag pair around a JSON list of calls; a single object is accepted, and
a missing closing tag at the end of output is tolerated. Llama-Nemotron
writes the same list between ``<TOOLCALL>`` and ``</TOOLCALL>``.

MiniMax-M1 writes ``<tool_calls>`` with one JSON object per line
(``{"name": ..., "arguments": {...}}``, its chat template and vLLM's
``minimax_tool_parser``, which reads the block line by line and skips a line
it cannot read). So a value that cannot be read does not cost its siblings:
it is reported and reading resumes at the next line that starts outside the
bad value's brackets (a call nested in a broken call is never lifted out).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.taggedjson import TAGGED_JSON_HEAD, extract_tagged_json
from utp.types import ToolCall

OPEN = "<tool_calls>"
CLOSE = "</tool_calls>"
#: opening tag -> closing tag (Jamba/Hunyuan, Llama-Nemotron)
PAIRS = {OPEN: CLOSE, "<TOOLCALL>": "</TOOLCALL>"}
#: a Python-style call list where the JSON list belongs
PYTHON_CALL_LIST = re.compile(r"\s*+\[\s*+[A-Za-z_][\w.\-]*+\s*+\(")
#: JSON call tags that may hold a Python-style call list instead, from models prompted Python-style:
#: these, and Hermes' ``<tool_call>[f(a=1), g()]</tool_call>`` (BFCL prompt-format replies); the
#: ``pythonic`` family reads such a list, the tag's own family passes it on
LISTED_TAGS = {**PAIRS, "<tool_call>": "</tool_call>"}


@register_family
class JambaFamily(CallFamily):
    name = "jamba"
    priority = 50
    aliases = ("hunyuan_a13b", "tool_calls_xml", "nemotron", "llama_nemotron")
    declared_triggers = static_triggers(tuple(PAIRS), dict.fromkeys(PAIRS, TAGGED_JSON_HEAD))
    summary = '<tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls> (Llama-Nemotron: <TOOLCALL>[...]</TOOLCALL>)'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if PYTHON_CALL_LIST.match(text, pos + len(trigger)):
            return None  # ``<TOOLCALL>[f(a=1)]``: a Python-style list, pythonic's
        return extract_tagged_json(self.name, text, pos, pos + len(trigger), (PAIRS[trigger],), resume_lines=True)

    def render(self, calls: Sequence[ToolCall]) -> str:
        body = json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)
        return f"{OPEN}\n{body}\n{CLOSE}"
