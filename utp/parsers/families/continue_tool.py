"""Continue's tool code blocks, for models without native tool calling.

Continue (the coding agent) describes each tool in its system message and
has the model call one with a fenced block::

    ```tool
    TOOL_NAME: read_file
    BEGIN_ARG: filepath
    src/app.py
    END_ARG
    ```

The fence's label, ``TOOL_NAME:`` and the argument markers are read without
regard to case, as Continue reads them (``ToOl``, ``tool_name:``,
``begin_arg:``). Every case of the labelled fence is a trigger of its own, so
a flood of bare fences is not this family's to look at. A
value is every line between ``BEGIN_ARG: NAME`` and ``END_ARG``, trimmed,
then typed by the tool's schema; without a type it is JSON when it reads as
JSON (Continue parses it, allowing raw line breaks inside JSON strings) and
text otherwise. Anything else in the block means it is being shown, not used;
a block the output ends inside is reported TRUNCATED, never run.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import make_call, render_value, unreadable
from utp.parsers.typedvalues import property_schema, schema_types, typed_value
from utp.types import DiagnosticKind, ToolCall

FENCE = "```"
#: the fence with its label, in every case
TRIGGERS = tuple(FENCE + "".join(letters) for letters in itertools.product("tT", "oO", "oO", "lL"))
#: the fence's label and the name line (scan lookahead after the fence)
_HEADER = re.compile(r"(?i:tool)[ \t]*\r?\n[ \t]*(?i:tool_?name)[ \t]*:[ \t]*([^\s`]{1,128})[ \t]*\r?\n")
HEAD = r"(?i:tool)[ \t]*+\r?\n[ \t]*+(?i:tool_?name)[ \t]*+:"
#: what must follow a trigger (the label already read)
_AFTER_LABEL = r"[ \t]*+\r?\n[ \t]*+(?i:tool_?name)[ \t]*+:"
_HEAD = re.compile(HEAD)
#: streaming: how far past the fence a header must have shown itself (its two lines, or this many characters)
_HEADER_WINDOW = 160
#: one argument: its name line, its value lines, its end line (non-greedy: the first END_ARG ends it)
_ARGUMENT = re.compile(r"[ \t]*(?i:begin_?arg)[ \t]*:[ \t]*([^\s`]{1,128})[ \t]*\r?\n(.*?)^[ \t]*(?i:end_?arg)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
#: the closing fence, alone on its line
_CLOSE = re.compile(r"[ \t]*```[ \t]*(?:\r?\n|\Z)")
#: blank lines between arguments
_BLANKS = re.compile(r"(?:[ \t]*\r?\n)*")


@register_family
class ContinueToolFamily(CallFamily):
    name = "continue_tool"
    #: above the fenced-JSON family, which would not read this body anyway
    priority = 25
    declared_triggers = static_triggers(TRIGGERS, dict.fromkeys(TRIGGERS, _AFTER_LABEL))
    aliases = ("continue", "tool_codeblock")
    summary = "```tool\\nTOOL_NAME: NAME\\nBEGIN_ARG: key\\nvalue\\nEND_ARG\\n``` (Continue's tool code blocks)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        header = _HEADER.match(text, pos + len(FENCE))
        if header is None:
            return None
        name, cursor = header.group(1), header.end()
        raw_arguments: dict[str, str] = {}
        while True:
            cursor = _BLANKS.match(text, cursor).end()  # type: ignore[union-attr]
            argument = _ARGUMENT.match(text, cursor)
            if argument is None:
                break
            raw_arguments[argument.group(1)] = argument.group(2)
            cursor = argument.end()
        close = _CLOSE.match(text, cursor)
        if close is None:
            if cursor >= len(text) or re.match(r"[ \t]*(?i:begin_?arg)", text[cursor:]):
                return unreadable(self.name, text, pos, len(text), "output ended inside a tool code block", kind=DiagnosticKind.TRUNCATED)
            return None  # something else in the block: shown, not used
        tool = ctx.tool(name)
        arguments = {key: _typed(raw.strip(), property_schema(tool, key)) for key, raw in raw_arguments.items()}
        end = close.end()
        return Extraction(end, [make_call(self.name, name, arguments, text[pos:end], pos)])

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """A fence without the header is settled once the header's two lines could have arrived."""
        if _HEAD.match(text, pos + len(FENCE)):
            return False  # a block: ``extract`` decides once it closes (or the output ends)
        after = text[pos + len(FENCE) : pos + len(FENCE) + _HEADER_WINDOW]
        return after.count("\n") >= 2 or len(after) >= _HEADER_WINDOW

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            f"{FENCE}tool\nTOOL_NAME: {call.name}\n"
            + "".join(f"BEGIN_ARG: {key}\n{render_value(value)}\nEND_ARG\n" for key, value in call.arguments.items())
            + FENCE
            for call in calls
        )


def _typed(value: str, schema: Any) -> Any:
    """A value typed by its schema; JSON containers may hold raw line breaks inside their strings."""
    types = schema_types(schema)
    if value[:1] in "[{" and (not types or "array" in types or "object" in types):
        try:
            return json.loads(value, strict=False)
        except (ValueError, RecursionError):
            pass
    return typed_value(value, schema, untyped="json")
