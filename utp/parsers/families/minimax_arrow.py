"""MiniMax's text calls: ``[TOOL_CALL]{tool => "NAME", args => {--key "value"}}[/TOOL_CALL]``.

MiniMax models (M2 to M2.7, served where their chat template's XML is not
applied: LM Studio, OpenAI-compatible proxies, MLX) write calls as a
Perl-style hash between bracket tags, one block per call::

    [TOOL_CALL]
    {tool => "file_read", args => {
      --path "/tmp/test.txt"
      --description "Read test file"
    }}
    [/TOOL_CALL]

as quoted in public reports (NousResearch/hermes-agent#35935,
lmstudio-ai/lmstudio-bug-tracker#1177) and read by the agents that
handle it (zeroclaw's ``parse_perl_style_tool_calls``, openclaw's
``TOOL_CALL`` stripping). Variants written in the same blocks:
``--key: "value"``; ``key => value`` pairs; ``args => {...}`` holding a JSON
object; a JSON body (``{"tool": ..., "args": {...}}``); a stray extra ``}``.

A value is a JSON string (escapes decoded), a JSON array or object, or a
bare word up to the end of its line or the next ``--key`` (typed by the
tool's schema, read as JSON when untyped and JSON). ``[/TOOL_CALL]`` is optional at the end of the
output; a block the output ends inside is reported TRUNCATED, one that
cannot be read UNPARSEABLE, never shown as prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from json.decoder import scanstring
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.taggedjson import extract_tagged_json
from utp.parsers.familykit import closer_bound, make_call, read_json_at, unreadable
from utp.parsers.typedvalues import property_schema, typed_value
from utp.parsers.textscan import find_first, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

from utp.parsers.pythoncalls import bracket_end

OPEN = "[TOOL_CALL]"
CLOSE = "[/TOOL_CALL]"
#: a block's value or call may not run past this many characters (a value is read whole before use)
MAX_VALUE = 256 * 1024
#: ``{tool => "NAME"`` or ``{tool => NAME``, then an optional comma
_TOOL = re.compile(r"""\{\s*+["']?tool["']?\s*+=>\s*+(?:"((?:[^"\\\n]|\\.){1,256}+)"|'([^'\n]{1,256}+)'|([\w.:/-]{1,256}+))\s*+,?\s*+""")
_ARGS = re.compile(r"""["']?args["']?\s*+=>\s*+""")
#: one argument's key: ``--key``, ``--key:``, ``key =>``, ``"key" =>``, ``"key":``
_KEY = re.compile(
    r"""--([\w.-]{1,256}+)\s*+:?[ \t]*+"""
    r"""|"((?:[^"\\\n]|\\.){0,256}+)"\s*+(?:=>|:)\s*+"""
    r"""|([A-Za-z_][\w.-]{0,255}+)\s*+(?:=>|:)\s*+"""
)
#: a bare value: the rest of its line, up to a comma, the closing brace, a block tag or the
#: next ``--key`` on the same line
_BARE = re.compile(r"""(?:(?!\[/?TOOL_CALL\])[^\s,}])(?:(?!\[/?TOOL_CALL\]|[ \t]--)[^\n,}])*+""")
_DOUBLE_STRING = re.compile(r'"((?:[^"\\]|\\.)*+)"', re.S)
_SEPARATORS = re.compile(r"[\s,]*+")
#: after the opener: the end of the output (truncated), or a brace opening a hash (``tool =>``)
#: or a JSON object (a quote)
_HEAD = r"""\s*+(?:\Z|\{\s*+(?:["']|tool\s*+=>))"""
_BRACE_OR_END = re.compile(r"\s*+(?:\{|\Z)")
#: JSON body: ``{"`` (a ``tool``/``name`` key follows), else the Perl-style hash
_JSON_BODY = re.compile(r"""\{\s*+["']""")
_HASH_BODY = re.compile(r"""\{\s*+["']?tool["']?\s*+=>""")
_HASH_PREFIX = re.compile(r"""\{\s*+(?:["']?(?:t(?:o(?:o(?:l(?:["']?\s*+=?)?)?)?)?)?)?\Z""")


class _Unreadable(Exception):
    """Why a block's hash could not be read, and where reading stopped (reported, the block consumed)."""

    def __init__(self, reason: str, at: int) -> None:
        super().__init__(reason)
        self.at = at


@register_family
class MiniMaxArrowFamily(CallFamily):
    name = "minimax_arrow"
    aliases = ("tool_call_arrow", "perl_style", "minimax_text")
    declared_triggers = static_triggers((OPEN,), {OPEN: _HEAD})
    summary = '[TOOL_CALL]{tool => "NAME", args => {--key "value"}}[/TOOL_CALL] (MiniMax without its template)'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        body = skip_space(text, pos + len(OPEN))
        if body >= len(text):
            return unreadable(self.name, text, pos, len(text), f"output ended after {OPEN}", kind=DiagnosticKind.TRUNCATED)
        if _HASH_BODY.match(text, body):
            return self._hash_block(text, pos, body, ctx)
        if _JSON_BODY.match(text, body):
            return extract_tagged_json(self.name, text, pos, body, closers=(CLOSE,))
        return None

    def _hash_block(self, text: str, pos: int, body: int, ctx: ParseContext) -> Extraction:
        # a string value may quote the closer a few times; no read runs past the 8th one
        limit = closer_bound(text, CLOSE, body)
        try:
            name, arguments, repairs, end = _read_hash(text, body, limit, ctx)
        except _Unreadable as problem:
            return self._reported(text, pos, problem)
        diagnostics: list[Diagnostic] = []
        after = skip_space(text, end)
        closed = text.startswith(CLOSE, after)
        end = after + len(CLOSE) if closed else end
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics, final=closed, closer="" if closed else CLOSE)

    def _reported(self, text: str, pos: int, problem: _Unreadable) -> Extraction:
        """The broken block, consumed through its closer, or up to the next block (or the end)."""
        close, found = find_first(text, (CLOSE, OPEN), max(problem.at, pos + len(OPEN)))
        if close < 0:
            return unreadable(self.name, text, pos, len(text), str(problem), kind=DiagnosticKind.TRUNCATED)
        end = close + len(CLOSE) if found == CLOSE else close
        return unreadable(self.name, text, pos, end, str(problem))

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Streaming: ``None`` is final once the body plainly opens neither a hash nor JSON."""
        body = skip_space(text, pos + len(OPEN))
        if body >= len(text):
            return False
        if _BRACE_OR_END.match(text, pos + len(OPEN)) is None:
            return True
        if _JSON_BODY.match(text, body):
            return False  # JSON: decided when it closes; holding to the end is always correct
        return _HASH_BODY.match(text, body) is None and _HASH_PREFIX.match(text, body) is None

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(_render_call(call) for call in calls)


def _read_hash(text: str, body: int, limit: int, ctx: ParseContext) -> tuple[str, dict[str, Any], list[str], int]:
    """``{tool => NAME, args => {...}}`` from ``body``: name, arguments, repairs and the end."""
    head = _TOOL.match(text, body, limit)
    if head is None:
        raise _Unreadable("tool name after 'tool =>' is not readable", body)
    quoted, single, bare = head.groups()
    name = _json_string(quoted) if quoted is not None else (single if single is not None else bare)
    tool = ctx.tool(name)
    repairs: list[str] = []
    arguments: dict[str, Any] = {}
    cursor = head.end()
    args = _ARGS.match(text, cursor, limit)
    if args is not None:
        cursor = args.end()
        if cursor >= limit or text[cursor] != "{":
            raise _Unreadable(f"arguments of {name!r} are not a {{...}} block", cursor)
        cursor = _hash_arguments(text, cursor + 1, limit, tool, name, arguments)
    cursor = _SEPARATORS.match(text, cursor, limit).end()
    if cursor >= limit or text[cursor] != "}":
        raise _Unreadable(f"call to {name!r} is not closed with '}}'", cursor)
    cursor += 1
    extra = cursor
    while extra < limit and extra - cursor < 8 and text[extra] == "}":
        extra += 1
    if extra > cursor:
        repairs.append(f"ignored {extra - cursor} extra '}}' after the call")
    return name, arguments, repairs, extra


def _hash_arguments(text: str, cursor: int, limit: int, tool: Any, name: str, arguments: dict[str, Any]) -> int:
    """Read ``--key value`` / ``key => value`` pairs up to the closing brace; its index + 1."""
    while True:
        cursor = _SEPARATORS.match(text, cursor, limit).end()
        if cursor >= limit:
            raise _Unreadable(f"arguments of {name!r} end before their closing '}}'", cursor)
        if text[cursor] == "}":
            return cursor + 1
        key_match = _KEY.match(text, cursor, limit)
        if key_match is None:
            raise _Unreadable(f"expected '--key value' in the arguments of {name!r}", cursor)
        dashed, quoted, word = key_match.groups()
        key = dashed if dashed is not None else (_json_string(quoted) if quoted is not None else word)
        arguments[key], cursor = _value(text, key_match.end(), limit, property_schema(tool, key), key, name)


def _value(text: str, cursor: int, limit: int, schema: Any, key: str, name: str) -> tuple[Any, int]:
    if cursor >= limit:
        raise _Unreadable(f"argument {key!r} of {name!r} has no value", cursor)
    first = text[cursor]
    if first == '"':
        try:
            value, end = scanstring(text, cursor + 1, False)
        except ValueError:  # a bad escape: the raw text between the quotes
            raw = _DOUBLE_STRING.match(text, cursor, limit)
            if raw is None:
                raise _Unreadable(f"string value of {key!r} in the call to {name!r} is not closed", limit) from None
            value, end = raw.group(1), raw.end()
        if end > limit:
            raise _Unreadable(f"string value of {key!r} in the call to {name!r} is not closed", limit)
        return value, end
    if first in "[{":
        end = bracket_end(text, cursor, min(MAX_VALUE, limit - cursor))
        if end < 0:  # everything scanned belongs to the unclosed value
            raise _Unreadable(f"value of {key!r} in the call to {name!r} is not closed", min(limit, cursor + MAX_VALUE))
        read = read_json_at(text, cursor, end)
        if read is None:
            raise _Unreadable(f"value of {key!r} in the call to {name!r} is not JSON", end)
        return read[0], read[1]
    bare = _BARE.match(text, cursor, limit)
    if bare is None:
        raise _Unreadable(f"argument {key!r} of {name!r} has no value", cursor)
    return typed_value(bare.group().strip(), schema, untyped="json"), bare.end()


def _json_string(body: str) -> str:
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return body


_DASHED_KEY = re.compile(r"[A-Za-z_][\w.-]*")


def _render_call(call: ToolCall) -> str:
    pairs = []
    for key, value in call.arguments.items():
        head = f"--{key}" if _DASHED_KEY.fullmatch(key) else f"{json.dumps(key, ensure_ascii=False)} =>"
        pairs.append(f"  {head} {json.dumps(value, ensure_ascii=False)}\n")
    return f'{OPEN}\n{{tool => {json.dumps(call.name, ensure_ascii=False)}, args => {{\n{"".join(pairs)}}}}}\n{CLOSE}'
