"""CWM / "Cursor-style" tool tags: ``<tool: function>\\nNAME ARGS\\n</tool>``.

Meta's Code World Model writes each call as a tag whose label is
informational; the body's first word is the tool and the rest its arguments
(vLLM's ``cwm`` tool parser)::

    <tool: function>
    terminal find . -name "*.py" | xargs grep -n "def bulk_create"
    </tool>

Arguments that are a JSON object are read as such; any other text is the
``command`` argument, as the reference does, or, for an offered tool without
a ``command`` parameter but with exactly one string parameter, that one (a
recorded repair). A tag must be closed by ``</tool>`` to be a call: an opener
alone is prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import closer_past_strings, make_call, unreadable
from utp.parsers.textscan import find_forward
from utp.types import Diagnostic, Tool, ToolCall

OPEN, CLOSE = "<tool:", "</tool>"
#: the label and the tag's end; the body follows
_LABEL = r"\s*+[^<>\s]{1,64}+\s*+>"
_LABEL_RE = re.compile(_LABEL)
#: the scan lookahead: the label, then the tool's name (no tag) or the closer of an empty body
_HEAD = _LABEL + r"\s*+(?:[^<\s]|</tool>)"
COMMAND = "command"


@register_family
class CwmFamily(CallFamily):
    name = "cwm"
    aliases = ("cursor_tags",)
    declared_triggers = static_triggers((OPEN,), {OPEN: _HEAD})
    summary = "<tool: function>\\nNAME ARGS\\n</tool> (Meta CWM; ARGS a JSON object or the command text)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        label = _LABEL_RE.match(text, pos + len(OPEN))
        if label is None:
            return None
        close = closer_past_strings(text, label.end(), find_forward(text, CLOSE, label.end()), CLOSE)
        if close < 0:
            return None  # an unclosed tag is prose (or a call still being written)
        end = close + len(CLOSE)
        words = text[label.end() : close].split(None, 1)  # the tool, then everything else
        name, rest = (words[0], words[1].strip() if len(words) > 1 else "") if words else ("", "")
        if name.startswith("<"):
            return None  # markup, not a tool's name
        if not name:
            return unreadable(self.name, text, pos, end, "tool tag without a tool name")
        repairs: list[str] = []
        arguments = _arguments(rest, ctx.tool(name), repairs)
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=True)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Streaming: ``None`` is final when the label is malformed (an unclosed tag may still close)."""
        after = text[pos + len(OPEN) : pos + len(OPEN) + 80]
        return ">" in after and _LABEL_RE.match(text, pos + len(OPEN)) is None

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"{OPEN} function>\n{call.name} {json.dumps(call.arguments, ensure_ascii=False)}\n{CLOSE}" for call in calls)


def _arguments(rest: str, tool: Tool | None, repairs: list[str]) -> dict[str, Any]:
    if rest.startswith("{"):
        try:
            value = json.loads(rest)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    if tool is not None and COMMAND not in tool.properties:
        strings = [key for key, schema in tool.properties.items() if isinstance(schema, dict) and schema.get("type") == "string"]
        if len(strings) == 1:
            repairs.append(f"command text given to {tool.name!r}'s only string parameter {strings[0]!r}")
            return {strings[0]: rest}
    return {COMMAND: rest}
