"""Command-line calls in a shell fence (seed 004): ```` ```bash\\nsearch -t Foo pkg/\\n``` ````.

Some agents teach the model to "run" tools as commands. A fenced ``bash`` /
``sh`` / ``shell`` block is a call only when *every* command in it starts with
an offered tool's name, and arguments are mapped onto that tool's JSON Schema:
``--key value``, ``--key=value`` and ``-k value`` set the matching property,
remaining words fill the required properties and then the others in schema
order, and each value is converted to its property's type. Without offered
tools nothing here is a call, and the family is opt-in (``allow_bash=True``)
because a real shell snippet in an answer must never be run as a tool.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, Trigger, register_family
from utp.parsers.familykit import make_call, unreadable
from utp.parsers.typedvalues import schema_types, typed_value
from utp.parsers.textscan import find_forward
from utp.types import Diagnostic, Tool, ToolCall

FENCE = "```"
LANGUAGES = ("bash", "sh", "shell")
#: the fence's opening line must end within this many characters of the label
_HEADER_LIMIT = 64
#: the scan lookahead: only whitespace, then the line break within ``_HEADER_LIMIT`` (``text.find``
#: below: at most 63 characters before it; ``\s`` is ``str.isspace``, as ``strip`` uses), then a body
#: with more than command separators in it before the closing fence or the end: a body of
#: spaces, tabs and line breaks splits into no command, which is never a call
_HEAD = rf"[^\S\n]{{0,{_HEADER_LIMIT - 1}}}+\n[ \t\r\n]*+(?!{FENCE}|\Z)"


class CommandSyntaxError(ValueError):
    """A quote left open in a command; the message says where."""


def split_commands(body: str) -> list[list[str]]:
    """POSIX-style words per command; unquoted newlines and ``;`` separate commands.

    ``shlex`` treats a newline as plain whitespace, which would merge two
    commands, so the splitting is done here (quotes, backslashes, comments).
    """
    commands: list[list[str]] = []
    words: list[str] = []
    word: list[str] = []
    in_word = False
    i, n = 0, len(body)

    def end_word() -> None:
        nonlocal in_word
        if in_word:
            words.append("".join(word))
            word.clear()
            in_word = False

    def end_command() -> None:
        end_word()
        if words:
            commands.append(list(words))
            words.clear()

    while i < n:
        ch = body[i]
        if ch == "'":
            close = body.find("'", i + 1)
            if close == -1:
                raise CommandSyntaxError(f"unclosed single quote at offset {i}")
            word.append(body[i + 1 : close])
            in_word = True
            i = close + 1
        elif ch == '"':
            i += 1
            while True:
                if i >= n:
                    raise CommandSyntaxError("unclosed double quote")
                c = body[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n and body[i + 1] in '"\\$`\n':
                    if body[i + 1] != "\n":
                        word.append(body[i + 1])
                    i += 2
                    continue
                word.append(c)
                i += 1
            in_word = True
        elif ch == "\\":
            if i + 1 < n and body[i + 1] == "\n":
                i += 2  # line continuation
                continue
            if i + 1 < n:
                word.append(body[i + 1])
                in_word = True
            i += 2
        elif ch in "\n;":
            end_command()
            i += 1
        elif ch in " \t\r":
            end_word()
            i += 1
        elif ch == "#" and not in_word:
            newline = body.find("\n", i)
            i = n if newline == -1 else newline
        else:
            word.append(ch)
            in_word = True
            i += 1
    end_command()
    return commands


def _match_property(flag: str, tool: Tool) -> str | None:
    properties = tool.properties
    if flag in properties:
        return flag
    underscored = flag.replace("-", "_")
    if underscored in properties:
        return underscored
    if len(flag) == 1:
        starting = [p for p in properties if p.startswith(flag)]
        if len(starting) == 1:
            return starting[0]
    return None


def arguments_from_words(words: list[str], tool: Tool, repairs: list[str]) -> dict[str, Any]:
    """Map command words onto ``tool``'s parameters (flags first, then positionals)."""
    properties = tool.properties
    arguments: dict[str, Any] = {}
    positionals: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            positionals.extend(words[i + 1 :])
            break
        if word.startswith("-") and len(word) > 1 and not _is_number(word):
            flag, has_value, inline = word.lstrip("-").partition("=")
            key = _match_property(flag, tool) or flag
            schema = properties.get(key)
            if has_value:
                value: str | None = inline
            elif "boolean" in schema_types(schema) and (i + 1 >= len(words) or words[i + 1].lower() not in ("true", "false")):
                arguments[key] = True
                i += 1
                continue
            elif i + 1 < len(words):
                value = words[i + 1]
                i += 1
            else:
                value = None
            if key not in properties:
                repairs.append(f"option {word!r} matches no parameter of {tool.name!r}")
            arguments[key] = None if value is None else typed_value(value, schema, untyped="string")
            i += 1
            continue
        positionals.append(word)
        i += 1
    free = [p for p in tool.required if p in properties and p not in arguments]
    free += [p for p in properties if p not in arguments and p not in free]
    for index, word in enumerate(positionals):
        if index < len(free):
            key = free[index]
            arguments[key] = typed_value(word, properties.get(key), untyped="string")
        elif free:
            last = free[-1]
            previous = arguments[last]
            if "array" in schema_types(properties.get(last)) and isinstance(previous, list):
                previous.append(word)
            else:
                arguments[last] = f"{previous} {word}" if isinstance(previous, str) else word
                repairs.append(f"extra word {word!r} joined into {last!r}")
        else:
            repairs.append(f"{tool.name!r} takes no more arguments; ignored {word!r}")
    return arguments


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


@register_family
class BashFamily(CallFamily):
    name = "bash"
    in_auto = False
    aliases = ("command_line", "shell")
    summary = "Command line in a ```bash fence: TOOL --key value positional (opt-in: allow_bash=True)"
    declared_triggers = tuple(Trigger(f"{FENCE}{lang}", _HEAD) for lang in LANGUAGES)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if not ctx.has_tools:
            return None
        header_end = pos + len(trigger)
        newline = text.find("\n", header_end, header_end + _HEADER_LIMIT)
        if newline == -1 or text[header_end:newline].strip():
            return None  # ```bashrc or ```shell-session: another language
        close = find_forward(text, FENCE, newline + 1)
        body_end = len(text) if close == -1 else close
        end = len(text) if close == -1 else close + len(FENCE)
        try:
            commands = split_commands(text[newline + 1 : body_end])
        except CommandSyntaxError as exc:
            first = text[newline + 1 : body_end].split(None, 1)
            if first and ctx.tool(first[0]) is not None:
                return unreadable(self.name, text, pos, end, str(exc))
            return None
        if not commands or any(ctx.tool(words[0]) is None for words in commands):
            return None
        diagnostics: list[Diagnostic] = []
        calls = []
        for words in commands:
            tool = ctx.tool(words[0])
            assert tool is not None
            repairs: list[str] = []
            arguments = arguments_from_words(words[1:], tool, repairs)
            calls.append(make_call(self.name, tool.name, arguments, text[pos:end], pos, repairs, diagnostics))
        return Extraction(end=end, calls=calls, diagnostics=diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        header_end = pos + len(trigger)
        newline = text.find("\n", header_end, header_end + _HEADER_LIMIT)
        if newline == -1:
            return len(text) - header_end >= _HEADER_LIMIT or bool(text[header_end:].strip())
        return text[header_end:newline].strip() != "" or find_forward(text, FENCE, newline + 1) != -1

    def render(self, calls: Sequence[ToolCall]) -> str:
        lines = []
        for call in calls:
            words = [shlex.quote(call.name)]
            for key, value in call.arguments.items():
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                words += [shlex.quote(f"--{key}"), shlex.quote(text)]
            lines.append(" ".join(words))
        return f"{FENCE}bash\n" + "\n".join(lines) + f"\n{FENCE}"
