"""FunctionGemma and Gemma 4 calls: ``call:NAME{key:<escape>text<escape>,n:42}`` between call tokens.

FunctionGemma (Gemma 3 270M) writes ``<start_function_call>call:NAME{...}<end_function_call>``
with every string wrapped in the ``<escape>`` token; Gemma 4 writes
``<|tool_call>call:NAME{...}<tool_call|>`` with strings wrapped in ``<|"|>``.
Inside the braces keys are bare words, numbers/booleans/null are bare, and
arrays and objects nest the same way. Strings are delimited by a token rather
than quotes precisely so that braces, commas and quotes inside them need no
escaping, so the reader here never looks inside a delimited string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.familykit import make_call, unreadable
from utp.parsers.pyliteral import NUMBER_TEXT, INTEGER_TEXT
from utp.parsers.textscan import find_first, find_forward, is_proper_prefix, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

ESCAPE = "<escape>"
GEMMA4_QUOTE = '<|"|>'
_QUOTES = (ESCAPE, GEMMA4_QUOTE)
#: opening token → closing token
_BLOCKS = {"<start_function_call>": "<end_function_call>", "<|tool_call>": "<tool_call|>"}
_CALL_PREFIX = "call:"
#: how much whitespace ``extract`` skips between the block opener and ``call:``
_LEADING_SPACE = 64
#: the scan lookahead: ``extract`` skips at most that much whitespace (``\s`` is ``str.isspace``) and
#: returns None unless ``call:`` is next, at the end of the text too (no truncation report there)
_HEAD = rf"\s{{0,{_LEADING_SPACE}}}+{re.escape(_CALL_PREFIX)}"
_NAME = re.compile(r"[^\s{}<>:,\[\]]{1,256}")
#: a bare number/word ends at a separator or at any token (strings and call ends start with '<')
_SCALAR_END = re.compile(r"[,}\]<]")
_SAFE_KEY = re.compile(r"[^\s:,{}\[\]<>\"]+\Z")
#: nesting deeper than this is not a model's call; refuse rather than recurse
MAX_DEPTH = 64


class _Unreadable(ValueError):
    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.offset = offset


class _ValueReader:
    """Recursive-descent reader for the brace syntax; each character is read once."""

    def __init__(self, text: str, repairs: list[str]) -> None:
        self.text = text
        self.repairs = repairs

    def value(self, i: int, depth: int) -> tuple[Any, int]:
        text = self.text
        i = skip_space(text, i)
        if i >= len(text):
            raise _Unreadable("output ended inside the arguments", i)
        for quote in _QUOTES:
            if text.startswith(quote, i):
                close = find_forward(text, quote, i + len(quote))
                if close == -1:
                    raise _Unreadable(f"string opened with {quote} is not closed", i)
                return text[i + len(quote) : close], close + len(quote)
        ch = text[i]
        if ch == "{":
            return self.object(i, depth + 1)
        if ch == "[":
            return self.array(i, depth + 1)
        if ch == '"':
            try:
                return json.JSONDecoder().raw_decode(text, i)
            except ValueError:
                raise _Unreadable("bad double-quoted string", i) from None
        return self.scalar(i)

    def scalar(self, i: int) -> tuple[Any, int]:
        text = self.text
        stop = _SCALAR_END.search(text, i)
        j = len(text) if stop is None else stop.start()
        word = text[i:j].strip()
        if not word:
            raise _Unreadable("missing value", i)
        lowered = word.lower()
        if lowered in ("true", "false"):
            return lowered == "true", j
        if lowered in ("null", "none"):
            return None, j
        try:
            if INTEGER_TEXT.match(word):
                return int(word), j
            if NUMBER_TEXT.match(word):
                return float(word), j
        except ValueError:  # beyond Python's int/str digit limit: keep the text
            pass
        self.repairs.append(f"unquoted string {word[:40]!r} read as text")
        return word, j

    def key(self, i: int) -> tuple[str, int]:
        text = self.text
        i = skip_space(text, i)
        for quote in _QUOTES:
            if text.startswith(quote, i):
                close = find_forward(text, quote, i + len(quote))
                if close == -1:
                    raise _Unreadable("key string is not closed", i)
                return text[i + len(quote) : close], close + len(quote)
        if text.startswith('"', i):
            try:
                key, end = json.JSONDecoder().raw_decode(text, i)
            except ValueError:
                raise _Unreadable("bad double-quoted key", i) from None
            return str(key), end
        j = i
        while j < len(text) and text[j] not in ":,{}[]<":
            j += 1
        key = text[i:j].strip()
        if not key:
            raise _Unreadable("missing key", i)
        return key, j

    def object(self, i: int, depth: int) -> tuple[dict[str, Any], int]:
        if depth > MAX_DEPTH:
            raise _Unreadable(f"arguments nested deeper than {MAX_DEPTH}", i)
        text = self.text
        out: dict[str, Any] = {}
        i = skip_space(text, i + 1)
        if text.startswith("}", i):
            return out, i + 1
        while True:
            key, i = self.key(i)
            i = skip_space(text, i)
            if not text.startswith(":", i):
                raise _Unreadable(f"expected ':' after key {key!r}", i)
            out[key], i = self.value(i + 1, depth)
            i = skip_space(text, i)
            if text.startswith(",", i):
                i = skip_space(text, i + 1)
                if text.startswith("}", i):
                    return out, i + 1
                continue
            if text.startswith("}", i):
                return out, i + 1
            raise _Unreadable("expected ',' or '}' in arguments", i)

    def array(self, i: int, depth: int) -> tuple[list[Any], int]:
        if depth > MAX_DEPTH:
            raise _Unreadable(f"arguments nested deeper than {MAX_DEPTH}", i)
        text = self.text
        out: list[Any] = []
        i = skip_space(text, i + 1)
        if text.startswith("]", i):
            return out, i + 1
        while True:
            item, i = self.value(i, depth)
            out.append(item)
            i = skip_space(text, i)
            if text.startswith(",", i):
                i = i + 1
                continue
            if text.startswith("]", i):
                return out, i + 1
            raise _Unreadable("expected ',' or ']' in a list", i)


@register_family
class FunctionGemmaFamily(CallFamily):
    name = "functiongemma"
    triggers = tuple(_BLOCKS)
    aliases = ("function_gemma", "gemma4")
    summary = "FunctionGemma / Gemma 4: <start_function_call>call:NAME{key:<escape>v<escape>}<end_function_call>"
    trigger_heads = dict.fromkeys(_BLOCKS, _HEAD)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        closing = _BLOCKS[trigger]
        cursor = skip_space(text, pos + len(trigger), pos + len(trigger) + _LEADING_SPACE)
        if not text.startswith(_CALL_PREFIX, cursor):
            return None
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        while True:
            call_start = cursor
            name_match = _NAME.match(text, cursor + len(_CALL_PREFIX))
            if name_match is None:
                return self._unreadable(text, pos, closing, "no function name after 'call:'", calls, diagnostics)
            name = name_match.group()
            cursor = skip_space(text, name_match.end())
            repairs: list[str] = []
            if text.startswith("{", cursor):
                try:
                    arguments, cursor = _ValueReader(text, repairs).object(cursor, 1)
                except _Unreadable as exc:
                    return self._unreadable(text, pos, closing, f"arguments of {name!r}: {exc} (offset {exc.offset})", calls, diagnostics)
                except RecursionError:
                    return self._unreadable(text, pos, closing, f"arguments of {name!r} nested too deeply", calls, diagnostics)
            else:
                arguments = {}
                repairs.append(f"call to {name!r} has no '{{...}}' arguments")
            calls.append(make_call(self.name, name, arguments, text[call_start:cursor], call_start, repairs, diagnostics))
            cursor = skip_space(text, cursor)
            if text.startswith(",", cursor):
                cursor = skip_space(text, cursor + 1)
            if text.startswith(_CALL_PREFIX, cursor):
                continue
            for token in (closing, *_BLOCKS.values()):
                if text.startswith(token, cursor):
                    return Extraction(end=cursor + len(token), calls=calls, diagnostics=diagnostics)
            if cursor >= len(text):
                return Extraction(end=cursor, calls=calls, diagnostics=diagnostics)
            return self._unreadable(text, pos, closing, f"unexpected text after the call to {name!r}", calls, diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        cursor = skip_space(text, pos + len(trigger))
        return cursor < len(text) and not is_proper_prefix(text, cursor, _CALL_PREFIX)

    def _unreadable(
        self, text: str, pos: int, closing: str, reason: str, calls: list[ToolCall], diagnostics: list[Diagnostic]
    ) -> Extraction:
        end, token = find_first(text, (closing, *_BLOCKS.values()), pos)
        if end == -1:
            return unreadable(self.name, text, pos, len(text), reason, kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics)
        return unreadable(self.name, text, pos, end + len(token), reason, calls=calls, diagnostics=diagnostics)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            f"<start_function_call>{_CALL_PREFIX}{call.name}{render_value(call.arguments)}<end_function_call>" for call in calls
        )


def render_value(value: Any) -> str:
    if isinstance(value, str):
        return f"{ESCAPE}{value}{ESCAPE}"
    if isinstance(value, dict):
        items = ",".join(f"{render_key(k)}:{render_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ",".join(render_value(v) for v in value) + "]"
    return json.dumps(value)


def render_key(key: str) -> str:
    return key if _SAFE_KEY.match(key) else f"{ESCAPE}{key}{ESCAPE}"
