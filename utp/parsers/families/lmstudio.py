"""LM Studio's default tool format: ``[TOOL_REQUEST]{"name": ..., "arguments": {...}}[END_TOOL_REQUEST]``.

LM Studio asks a model whose chat template knows no tools to write its calls
so (the "default" tool-use support of lmstudio.ai/docs/advanced/tool-use) and
turns the blocks into ``tool_calls`` itself. The same model behind Ollama or
llama.cpp, or prompted by an agent that copied LM Studio's instructions,
leaves the markers in content. One JSON call per block (a list of calls is
read too); an end marker missing at the end of the output is tolerated.

Models also drift to naming the tool in the opening bracket,
``[get_weather]{"city": "Paris"}[END_TOOL_REQUEST]`` (OpenClaw's provider
notes report it from local models). That form is read only for an offered
tool and only when the end marker follows the JSON object, so a Markdown
reference ``[name]`` before a brace in prose stays prose.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Trigger, register_family, static_triggers
from utp.parsers.callshape import build_call, split_call_object
from utp.parsers.taggedjson import TAGGED_JSON_HEAD, extract_tagged_json
from utp.parsers.familykit import read_json_at
from utp.parsers.textscan import find_forward, skip_space
from utp.types import ToolCall

OPEN = "[TOOL_REQUEST]"
CLOSE = "[END_TOOL_REQUEST]"
#: a bracketed tool name is a call only with a JSON object right after it
_NAMED_HEAD = r"\s*+\{"


@register_family
class LmStudioFamily(CallFamily):
    name = "lmstudio"
    priority = 50
    aliases = ("lm_studio", "tool_request")
    declared_triggers = static_triggers((OPEN,), {OPEN: TAGGED_JSON_HEAD})
    summary = '[TOOL_REQUEST]{"name": ..., "arguments": {...}}[END_TOOL_REQUEST] (LM Studio\'s default tool use)'

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Also ``[NAME]`` for each offered tool, followed by its JSON arguments."""
        if ctx is None:
            return self.declared_triggers
        names = (name for name in ctx.by_name if name and "]" not in name and name != OPEN[1:-1])
        return (*self.declared_triggers, *(Trigger(f"[{name}]", _NAMED_HEAD, from_tool_names=True) for name in names))

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == OPEN:
            return extract_tagged_json(self.name, text, pos, pos + len(OPEN), (CLOSE,))
        return self._named(text, pos, trigger, ctx)

    def _named(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """``[NAME]{...}[END_TOOL_REQUEST]``: the object is the arguments (or the whole call, same name).

        The end marker must come before the same bracketed name opens again,
        so the objects read across a flood of openers never overlap: linear.
        """
        name = trigger[1:-1]
        if ctx.tool(name) is None:
            return None
        body = skip_space(text, pos + len(trigger))
        if not text.startswith("{", body):
            return None
        close = find_forward(text, CLOSE, body)
        reopened = find_forward(text, trigger, body)
        if close == -1 or 0 <= reopened < close:
            return None
        got = read_json_at(text, body, close)
        if got is None or type(got[0]) is not dict or skip_space(text, got[1]) != close:
            return None
        value, _, repairs = got
        split = split_call_object(value, False)
        raw_arguments = split[1] if split is not None and split[0] == name else value
        end = close + len(CLOSE)
        repairs = [f"tool name {name!r} in brackets instead of {OPEN}", *repairs]
        call, diagnostics = build_call(name, raw_arguments, self.name, text[pos:end], repairs)
        return Extraction(end, [call] if call else [], diagnostics, final=True)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        body = skip_space(text, pos + len(trigger))
        if body >= len(text):
            return False
        if trigger == OPEN:
            return text[body] not in "{["
        return text[body] != "{" or find_forward(text, CLOSE, body) != -1 or find_forward(text, trigger, body) != -1

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            f"{OPEN}{json.dumps({'name': c.name, 'arguments': c.arguments}, ensure_ascii=False)}{CLOSE}" for c in calls
        )
