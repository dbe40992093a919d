"""Calls in the notation of Gemini CLI's system prompt: ``[tool_call: read_file for absolute_path '/a.py']``.

Gemini CLI's system prompt (and those of its forks, Qwen Code among them)
shows the model its tools in use with lines such as::

    [tool_call: list_directory for path '.']
    [tool_call: run_shell_command for 'node server.js &' because it must run in the background]
    [tool_call: read_many_files for paths ['**/*.test.ts', 'src/**/*.spec.ts']]

A model served without native calls, or one that loses track of them, answers
in that notation, and the agent prints the line instead of running it (a Qwen
Code report: ``[tool_call: read_file for absolute_path 'requirements.txt']``).
The same bracket may hold a Python-style call of an offered tool,
``[tool_call: Bash(command="pwd")]`` (brynhild-harness reads this form).
The line is a call when it stands alone on its line and names an offered
tool: after ``for``, pairs of a parameter of that tool and a literal value
(a quoted string, a list, an object, a number, ``true``/``false``/``null`` or
Python's spellings), separated by ``,`` or
``and``; a first value without a key belongs to the tool's one required
parameter (or its one parameter). Words after the last value, up to the
closing bracket, are the model's comment ("because it must run in the
background") and are dropped. Anything else (a free-text description of the
call, a name no tool has, a key the tool does not take) leaves the line prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import make_call
from utp.parsers.pyliteral import LiteralError, parse_literal
from utp.parsers.pythoncalls import bracket_end, build_python_calls, offered_tool, read_calls
from utp.types import Tool, ToolCall

TRIGGER = "[tool_call:"
#: the tool's name and ``for``, or the name opening a Python-style call (scan lookahead after the trigger)
HEAD = r"[ \t]*+[A-Za-z_][\w.\-]{0,127}+(?:[ \t]++for[ \t]|\()"
_NAME = re.compile(r"[ \t]*([A-Za-z_][\w.\-]{0,127})[ \t]+for[ \t]+")
#: the same bracket holding a Python-style call: ``[tool_call: Bash(command="pwd")]``
_CALL_NAME = re.compile(r"[ \t]*+([A-Za-z_][\w.\-]{0,127}+)(?=\()")
#: a parameter's name before its value
_KEY = re.compile(r"([A-Za-z_]\w{0,127})[ \t]+(?=['\"\[{\d\-]|(?:true|false|null|True|False|None)\b)")
#: a value that is not a string, a list or an object: a number, JSON's or Python's constants
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+\-]?\d+)?\b|(?:true|false|null|True|False|None)\b")
#: between two arguments, tried in turn (a parameter may itself be named ``and``)
_SEPARATORS = (re.compile(r"[ \t]*,[ \t]*"), re.compile(r"[ \t]*,[ \t]*and[ \t]+"), re.compile(r"[ \t]+and[ \t]+"))
#: the model's comment after the last value, then the closing bracket ending the line
_TAIL = re.compile(r"(?:[ \t]+[^\]\n]{0,200}?)?[ \t]*\][ \t]*(?:\r?\n|\Z)")
#: a line is read only this long (a longer one is prose, and settles a stream)
_MAX_LINE = 4096


@register_family
class GeminiCliFamily(CallFamily):
    name = "gemini_cli"
    declared_triggers = static_triggers((TRIGGER,), {TRIGGER: HEAD})
    aliases = ("tool_call_for", "gemini_cli_notation")
    summary = "[tool_call: NAME for key 'value'] (the notation of Gemini CLI's system prompt)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        before = pos
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        if before > 0 and text[before - 1] != "\n":
            return None  # inside a sentence: the notation quoted, not used (only blanks are looked back over)
        named = _NAME.match(text, pos + len(TRIGGER))
        if named is None:
            return self._python_call(text, pos, ctx)
        tool = offered_tool(named.group(1), ctx)
        if tool is None:
            return None
        read = _arguments(text, named.end(), tool)
        if read is None:
            return None
        arguments, cursor = read
        end = _line_end(text, pos, cursor)
        if end < 0:
            return None
        return Extraction(end, [make_call(self.name, named.group(1), arguments, text[pos:end], pos)])

    def _python_call(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """``[tool_call: NAME(key="v", n=10)]``: the bracket around one Python-style call of an offered tool."""
        named = _CALL_NAME.match(text, pos + len(TRIGGER))
        if named is None or offered_tool(named.group(1), ctx) is None:
            return None
        close = bracket_end(text, named.end(), _MAX_LINE)
        if close < 0 or "\n" in text[named.end() : close]:
            return None
        end = _line_end(text, pos, close)
        if end < 0:
            return None
        try:
            raws, repairs, failures = read_calls(text[named.start(1) : close])
        except LiteralError:
            return None
        if failures or len(raws) != 1:
            return None
        calls, diagnostics = build_python_calls(self.name, raws, repairs, text[pos:end], pos, ctx)
        return Extraction(end, calls, diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Decided once the line is complete (or too long to be a call)."""
        return text.find("\n", pos, pos + _MAX_LINE) >= 0 or len(text) - pos >= _MAX_LINE

    def render(self, calls: Sequence[ToolCall]) -> str:
        """One line per call, values as JSON (a call without arguments cannot be written: the notation needs ``for``)."""
        return "\n".join(
            f"{TRIGGER} {call.name} for " + ", ".join(f"{key} {json.dumps(value, ensure_ascii=False)}" for key, value in call.arguments.items()) + "]"
            for call in calls
            if call.arguments
        )


def _line_end(text: str, pos: int, cursor: int) -> int:
    """Where the call's line ends after its closing bracket (the line break not included), or -1
    when anything but the model's comment stands between ``cursor`` and the bracket."""
    tail = _TAIL.match(text, cursor)
    if tail is None or tail.end() - pos > _MAX_LINE:
        return -1
    end = tail.end() - (1 if text[tail.end() - 1 : tail.end()] == "\n" else 0)
    return end - (1 if text[end - 1 : end] == "\r" else 0)


def _arguments(text: str, cursor: int, tool: Tool) -> tuple[dict[str, Any], int] | None:
    """The pairs after ``for``, and where they end; None unless every key is the tool's and every value a literal."""
    arguments: dict[str, Any] = {}
    properties = tool.properties
    while True:
        key_match = _KEY.match(text, cursor)
        if key_match is not None:
            key, value_at = key_match.group(1), key_match.end()
            if properties and key not in properties:
                return None
        elif not arguments:
            key, value_at = _sole_parameter(tool), cursor
            if key is None:
                return None
        else:
            return None
        read = _literal(text, value_at)
        if read is None or key in arguments:
            return None
        arguments[key], cursor = read
        following = next((at for separator in _SEPARATORS if (at := _next_key(separator, text, cursor)) >= 0), -1)
        if following < 0:
            return arguments, cursor
        cursor = following


def _next_key(separator: re.Pattern[str], text: str, cursor: int) -> int:
    """Where the next pair starts if ``separator`` and a key follow ``cursor``, else -1."""
    found = separator.match(text, cursor)
    return found.end() if found is not None and _KEY.match(text, found.end()) is not None else -1


def _sole_parameter(tool: Tool) -> str | None:
    """Where a value written without its key goes: the one required parameter, else the one parameter."""
    if len(tool.required) == 1:
        return tool.required[0]
    properties = list(tool.properties)
    return properties[0] if len(properties) == 1 else None


def _literal(text: str, at: int) -> tuple[Any, int] | None:
    """The literal value at ``at`` and where it ends: a quoted string, a list, an object, a number, a constant."""
    if text.startswith(("'", '"'), at):
        end = _string_end(text, at)
    elif text.startswith(("[", "{"), at):
        end = bracket_end(text, at, _MAX_LINE)
    else:
        scalar = _SCALAR.match(text, at)
        end = scalar.end() if scalar is not None else -1
    if end <= at:
        return None
    source = text[at:end]
    if "\n" in source:
        return None
    try:
        value, _ = parse_literal(source)
    except LiteralError:
        return None
    return value, end


def _string_end(text: str, at: int) -> int:
    """Past the quote closing the string opened at ``at`` (backslash escapes honoured); -1 if the line ends first."""
    quote, i = text[at], at + 1
    while i < len(text) and text[i] != "\n":
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return -1
