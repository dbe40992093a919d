"""GLM-4.5 / 4.6 / 4.7 calls: ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

The name is bare text right after ``<tool_call>`` (GLM-4.5/4.6 put a newline
after it, 4.7 does not); each argument is a key/value tag pair whose value is
raw text typed by the tool's schema, or read as JSON when it is JSON and the
schema does not say. The opener is shared with Hermes (``<tool_call>{json}``)
and Qwen3-Coder (``<tool_call><function=...>``): this family only claims a body
that is a bare name followed by ``<arg_key>`` or the close.

GLM-4 (glm-4-9b-chat, GLM-4-0414) calls a tool with a whole answer of two
parts: the tool's name on the first line, its arguments as a JSON object after
it (its template's ``<|assistant|>NAME\n{...}``; BFCL's GLM handler reads the
same). Read only for an offered tool and only when nothing else is in the
answer, so a line naming a tool before some JSON in prose stays prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from utp.parsers.base import Extraction, ParseContext, register_family
from utp.parsers.familykit import make_call, read_json_at
from utp.parsers.keyvalue import KeyValueFamily, KeyValueSyntax, name_pattern, render_key_value
from utp.parsers.reasoning import call_list_starts
from utp.parsers.textscan import skip_space
from utp.types import Diagnostic, ToolCall

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
KEY, KEY_END = "<arg_key>", "</arg_key>"
VALUE, VALUE_END = "<arg_value>", "</arg_value>"
#: Hunyuan (HY v3) writes this between the name and the first key, and groups its calls
SEPARATOR = "<tool_sep>"
GROUP_OPEN, GROUP_CLOSE = "<tool_calls>", "</tool_calls>"

SYNTAX = KeyValueSyntax(OPEN, CLOSE, KEY, KEY_END, VALUE, VALUE_END, name_pattern(r"[ \t]*", KEY, CLOSE, SEPARATOR), separator=SEPARATOR)
#: after the group opener, a call opener and a bare name's first character, or the end of the
#: text inside the name or the tag after it (truncated); Jamba's ``<tool_calls>[...]`` and
#: Hermes' ``<tool_call>{...}`` are not ours
_GROUP_HEAD = (
    r"\s*+" + re.escape(OPEN) + r"""(?:[ \t]*+[^\s<>{}\[\]"']|\s*+[^\s<>{}\[\]"']{0,256}+\s*+(?:<[^<>\s]{0,40}+)?\Z)"""
)


@register_family
class GlmFamily(KeyValueFamily):
    name = "glm"
    word_triggers = True  # GLM-4's answer line ``get_weather`` is the tool's name only as a word of its own
    syntax = SYNTAX
    group = (GROUP_OPEN, GROUP_CLOSE)
    triggers = (GROUP_OPEN, OPEN)
    #: between qwen3_coder and hermes on the shared <tool_call>
    priority = 65
    #: the bare name's first character (scan lookahead)
    trigger_heads = {OPEN: r"[ \t]*[^\s<>{}\[\]\"']", GROUP_OPEN: _GROUP_HEAD}
    aliases = ("glm4", "glm45", "glm47", "glm4_moe", "hunyuan_v3", "hy_v3")
    summary = "GLM-4.5+: <tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> (Hunyuan: NAME<tool_sep>, in <tool_calls>)"

    def context_triggers(self, ctx: ParseContext) -> tuple[str, ...]:
        """``NAME`` and a line break, for each offered tool: GLM-4's answer begins so."""
        return tuple(f"{name}\n" for name in ctx.by_name if name and not any(ch.isspace() for ch in name))

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger not in self.triggers:
            return self._name_line_answer(text, pos, trigger, ctx)
        return super().extract(text, pos, trigger, ctx)

    def _name_line_answer(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """GLM-4's ``NAME\n{...}``: the whole answer, for an offered tool."""
        if pos not in call_list_starts(text):
            return None
        body = skip_space(text, pos + len(trigger))
        if not text.startswith("{", body):
            return None
        got = read_json_at(text, body)
        if got is None or not isinstance(got[0], dict) or skip_space(text, got[1]) < len(text):
            return None  # the answer is more than the call: prose that starts with a tool's name
        value, _, repairs = got
        name = trigger[:-1]
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, value, text[pos:], pos, repairs, diagnostics)
        return Extraction(len(text), [call], diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger not in self.triggers:  # an answer of a name and JSON is decided by its end: hold it
            return pos not in call_list_starts(text)
        if trigger == GROUP_OPEN:  # Jamba's JSON group
            body = skip_space(text, pos + len(GROUP_OPEN))
            return body < len(text) and not OPEN.startswith(text[body : body + len(OPEN)])
        body = skip_space(text, pos + len(OPEN))
        return body < len(text) and text[body] in "<>{}[]\"'"

    def render(self, calls: Sequence[ToolCall]) -> str:
        return render_key_value(calls, SYNTAX)
