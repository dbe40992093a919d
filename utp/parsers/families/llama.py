"""Llama 3.1+ ``<|python_tag|>`` calls: JSON call(s), or a built-in tool's ``.call(...)``.

Meta's format: after ``<|python_tag|>`` the model writes either a JSON call
(``{"name": ..., "parameters": ...}``, several separated by ``;``) or a call
of a built-in tool, ``brave_search.call(query="...")`` /
``wolfram_alpha.call(query="...")``, and ends with ``<|eom_id|>`` or
``<|eot_id|>``. Llama 3.2 also writes python-style calls there
(``get_weather(city="Paris")`` or a ``[...]`` list of them), read like the
pythonic family's (with tools offered, every name must be one of them).
Built-in and python-style calls are read with :mod:`ast` as literals only:
nothing is evaluated. ``<|python_tag|>`` followed by ordinary code is the
code-interpreter mode: a call of ``code_interpreter(code=...)`` only when that
tool is offered; otherwise, like JSON that is not a call (a final answer or a
hallucinated tool result), it is not a call and stays content.
Stray ``<|eom_id|>``/``<|eot_id|>`` end-of-turn tokens are removed. Without
one, python-style calls may end at a blank line, or at the end of the call
lines that open the body, prose following them on the next line.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.callshape import build_call, skip_ws
from utp.parsers.taggedjson import extract_tagged_json
from utp.parsers.pythoncalls import MAX_SPAN, build_python_calls, names_offered_tool
from utp.parsers.names import names_offered_tool_at
from utp.parsers.pyliteral import LiteralError, parse_calls, parse_expression
from utp.parsers.textscan import find_forward
from utp.types import ToolCall

TAG = "<|python_tag|>"
TRAILERS = ("<|eom_id|>", "<|eot_id|>")
#: more stray trailers right after one (blanks between): removed with it as one span. Content is
#: the same (the prose between two cuts is trimmed at both), but a flood costs one visit per
#: run, not per token (no head can help: a stray trailer is always removed). Capped, so that
#: a stream re-reading a growing span stays linear.
_TRAILER_RUN = re.compile(r"(?:\s*+<\|eo[mt]_id\|>){0,63}")
#: Llama 3.1's built-in tools, called as ``NAME.call(...)``
BUILTINS = frozenset({"brave_search", "wolfram_alpha", "photogen"})
CODE_TOOL = "code_interpreter"
#: with no tools to check names against, a call of one of these is code, not a tool call
_PYTHON_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
#: a list of python-style calls rather than JSON: ``[name(``
_PYTHON_LIST = re.compile(r"\[\s*[A-Za-z_]")
#: scan lookahead after the tag: ``extract`` returns None when only whitespace, then the end,
#: a trailer or the next tag follow (the code before them is empty). Anything else may be a
#: call: with ``code_interpreter`` offered, any non-empty code is one.
TAG_HEAD = r"\s*+(?!<\|(?:eom_id|eot_id|python_tag)\|>)\S"


@register_family
class LlamaFamily(CallFamily):
    name = "llama"
    priority = 50
    #: trailers are always removed, so only the tag has a head
    declared_triggers = static_triggers((TAG, *TRAILERS), {TAG: TAG_HEAD})
    aliases = ("llama31", "llama32", "python_tag", "llama_python_tag")
    summary = '<|python_tag|>{"name": ..., "parameters": {...}} or <|python_tag|>brave_search.call(query="...")'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger in TRAILERS:
            return Extraction(_TRAILER_RUN.match(text, pos + len(trigger)).end())  # type: ignore[union-attr]
        body = pos + len(TAG)
        start = skip_ws(text, body)
        if start < len(text) and text[start] in "{[" and _PYTHON_LIST.match(text, start) is None:
            # a bare {"name": ...} is a call only for an offered tool (else a hallucinated tool result)
            bare_name_ok = names_offered_tool_at(text, start, ctx)
            found = extract_tagged_json(self.name, text, pos, start, TRAILERS, require_arguments=not bare_name_ok)
            return found if found is None or found.calls or found.diagnostics else None
        stop, trailer = _body_end(text, start)
        code = text[start:stop].strip()
        if not code:
            return None
        end = stop + len(trailer)
        if "(" not in code and ctx.tool(CODE_TOOL) is None:
            return None  # built-in and python-style calls are all call syntax: no "(", no call
        builtin = _builtin_call(code)
        if builtin is not None:
            return self._builtin(text, pos, end, builtin, ctx)
        python = self._python_calls(text, pos, end, code, ctx)
        if python is None and trailer == "" and (blank := code.find("\n\n")) > 0:
            # no end-of-turn token: the calls may end at a blank line, prose after them
            python = self._python_calls(text, pos, start + blank, code[:blank], ctx)
        if python is None and trailer == "" and (lines := _call_lines_before_prose(code)) > 0:
            # or at the end of the call lines, prose on the next line (PeakUI's Llama replies)
            return self._leading_calls(text, pos, start + lines, code[:lines], ctx)
        if python is not None:
            return python
        if ctx.tool(CODE_TOOL) is not None:
            call, diagnostics = build_call(CODE_TOOL, {"code": code}, self.name, text[pos:end])
            return Extraction(end, [call] if call else [], diagnostics)
        return None

    def _python_calls(self, text: str, pos: int, end: int, code: str, ctx: ParseContext) -> Extraction | None:
        """``get_weather(city="Paris")`` or ``[f(), g()]`` after the tag; None for other code."""
        if len(code) > MAX_SPAN:
            return None
        try:
            raws, repairs = parse_calls(code, one_per_line=True)
        except LiteralError:
            return None
        if not raws:
            return None
        if ctx.has_tools and not all(names_offered_tool(raw.name, ctx) for raw in raws):
            return None  # code for an interpreter, not calls of the offered tools
        if not ctx.has_tools and any(raw.name in _PYTHON_BUILTINS or "." in raw.name for raw in raws):
            return None  # print(...), robot.parse(...): code-interpreter input, not a tool call
        calls, diagnostics = build_python_calls(self.name, raws, repairs, text[pos:end], pos, ctx)
        return Extraction(end, calls, diagnostics)

    def _leading_calls(self, text: str, pos: int, end: int, code: str, ctx: ParseContext) -> Extraction | None:
        """The call lines that open the body, a built-in's ``.call(...)`` or python-style calls."""
        builtin = _builtin_call(code) if "\n" not in code.strip() else None
        if builtin is not None:
            return self._builtin(text, pos, end, builtin, ctx)
        return self._python_calls(text, pos, end, code, ctx)

    def _builtin(self, text: str, pos: int, end: int, builtin: tuple[str, dict[str, Any]], ctx: ParseContext) -> Extraction:
        """A built-in's ``NAME.call(...)``: an offered tool named with the ``.call`` itself (``api.call``) is that tool."""
        name = f"{builtin[0]}.call" if ctx.tool(f"{builtin[0]}.call") is not None else builtin[0]
        call, diagnostics = build_call(name, builtin[1], self.name, text[pos:end])
        return Extraction(end, [call] if call else [], diagnostics)

    def render(self, calls: Sequence[ToolCall]) -> str:
        parts = []
        for c in calls:
            if c.name in BUILTINS and all(isinstance(v, (str, int, float, bool)) or v is None for v in c.arguments.values()):
                args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in c.arguments.items())
                parts.append(f"{c.name}.call({args})")
            else:
                parts.append(json.dumps({"name": c.name, "parameters": c.arguments}, ensure_ascii=False))
        return TAG + "; ".join(parts)


def _body_end(text: str, start: int) -> tuple[int, str]:
    """Where the code after a tag ends: a trailer, the next tag, or the end of the text.

    Stopping at the next tag keeps bodies disjoint, so a text of many tags
    costs linear time in total.
    """
    best, which = len(text), ""
    for trailer in TRAILERS:
        k = find_forward(text, trailer, start)
        if 0 <= k < best:
            best, which = k, trailer
    k = find_forward(text, TAG, start)
    if 0 <= k < best:
        best, which = k, ""
    return best, which


#: a line holding one call and nothing else: a dotted name, then ``(`` … ``)`` to the line's end
_CALL_LINE = re.compile(r"[ \t]*+[A-Za-z_][\w.]*+\(.*\)[ \t\r]*+")


def _call_lines_before_prose(code: str) -> int:
    """How long the run of call lines opening ``code`` is, when prose follows it on the next line (else 0)."""
    end = 0
    for line in code.splitlines(keepends=True):
        if _CALL_LINE.fullmatch(line.rstrip("\n")) is None:
            return end if end and line.strip() else 0
        end += len(line)
    return 0  # every line a call line: the body is calls, read whole above


def _builtin_call(code: str) -> tuple[str, dict[str, Any]] | None:
    """``brave_search.call(query="x")`` → ``("brave_search", {"query": "x"})``; literals only.

    Llama 3.1 also writes this built-in syntax for tools of its own
    (``get_weather.call(city="x")``): after the tag it is a call whatever the
    name, and the name check flags one that is not offered.
    """
    if ".call(" not in code or len(code) > 20000:
        return None
    try:
        tree = parse_expression(code)
    except LiteralError:
        return None
    node = tree.body  # type: ignore[attr-defined]
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "call"):
        return None
    owner = node.func.value
    if not isinstance(owner, ast.Name) or node.args:
        return None
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return None
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None
    return owner.id, arguments
