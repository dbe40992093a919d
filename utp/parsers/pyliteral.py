"""Read Python-style literals and calls without ever running them.

Several families write arguments as Python source (``[f(a=1, b='x')]``) or as
raw text whose type only the tool's JSON Schema knows (``<parameter=n>42``, typed in
:mod:`utp.parsers.typedvalues` with this module's literal reader).
``ast.literal_eval`` is close to what is needed but refuses what real models
write (JSON's ``true``/``null``, ``{key=value}`` inside braces) and gives no
hook for call syntax, so this module walks the ``ast`` itself and accepts only
literal nodes: a call's arguments can never name a variable, call a function
or reach an attribute, and nothing is evaluated.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from dataclasses import dataclass
from typing import Any

from utp.numbers import int_too_long, integer_text
from utp.parsers.pyaliases import aliased, restore
from utp.parsers.pycalls import PRINT_REMOVED, RawCall, read_simple_calls

#: names a model may write for JSON constants in Python-style calls
_NAME_CONSTANTS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}

_IDENT_START = re.compile(r"[A-Za-z_]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: what every rewrite needs somewhere: an identifier after ``{`` or ``,`` (blanks between), then a
#: single ``=``. A source without it has nothing to fix, and is not walked character by character
_ASSIGNMENT_SHAPE = re.compile(r"[{,]\s*[A-Za-z_][A-Za-z0-9_]*[ \t]*=(?!=)")


class LiteralError(ValueError):
    """Source that is not a plain literal (or call of literals); says what and where."""

    #: the index of a closing bracket Python found no opener for (``[f(a=1))]``), when that is the error
    stray_closer_at: int | None = None


class UnrepresentableLiteral(LiteralError):
    """A Python literal no JSON value spells (bytes, complex, ``1e999``): a value, not code."""


def literal_value(node: ast.AST) -> Any:
    """The JSON value an expression node spells, or :class:`LiteralError`."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, int) and not isinstance(value, bool) and int_too_long(value):
            return integer_text(value)  # 0x + 3,600 digits: kept exactly, as text validation reports by length
        if value is None or isinstance(value, (str, bool, int)):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):  # 1e999: no JSON number spells it
                raise UnrepresentableLiteral(f"non-finite number at column {node.col_offset}")
            return value
        raise UnrepresentableLiteral(f"unsupported constant {type(value).__name__} at column {node.col_offset}")
    if isinstance(node, ast.Name):
        if node.id in _NAME_CONSTANTS:
            return _NAME_CONSTANTS[node.id]
        raise LiteralError(f"name {node.id!r} at column {node.col_offset} is not a literal")
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [literal_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:
                raise LiteralError(f"'**' unpacking at column {node.col_offset} is not a literal")
            key = literal_value(key_node)
            if isinstance(key, (dict, list)):
                raise LiteralError(f"unhashable dict key at column {key_node.col_offset}")
            out[key if isinstance(key, str) else json.dumps(key)] = literal_value(value_node)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = literal_value(node.operand)
        if isinstance(operand, bool) or not isinstance(operand, (int, float)):
            raise LiteralError(f"sign applied to a non-number at column {node.col_offset}")
        return -operand if isinstance(node.op, ast.USub) else operand
    raise LiteralError(f"{type(node).__name__} at column {getattr(node, 'col_offset', '?')} is not a literal")


def parse_expression(source: str, mode: str = "eval") -> ast.AST:
    """``source`` parsed by ``ast``; a model's ``'\\s+'`` (an escape Python does not know) stays text.

    Python warns about such escapes (a ``SyntaxWarning`` printed from 3.12, and
    under ``-W error`` the warning becomes a ``SyntaxError`` that would lose the
    call), so they are parsed with that warning silenced; only a source with a
    backslash can hold one, so only those pay for the filter.
    """
    try:
        if "\\" not in source:
            return ast.parse(source, mode=mode)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return ast.parse(source, mode=mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        where = f" (line {exc.lineno}, column {exc.offset})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        error = LiteralError(f"not valid Python literal syntax{where}: {getattr(exc, 'msg', exc)}")
        if isinstance(exc, SyntaxError) and exc.lineno and exc.offset and _STRAY_CLOSER.match(exc.msg or ""):
            error.stray_closer_at = sum(len(line) + 1 for line in source.split("\n")[: exc.lineno - 1]) + exc.offset - 1
        raise error from None


#: Python's words for a closing bracket that closes nothing open, or not the innermost opener
_STRAY_CLOSER = re.compile(r"closing parenthesis '[)\]}]' does not match|unmatched '[)\]}]'")
#: the repair dropping such brackets records
STRAY_CLOSER = "dropped a closing bracket that closes nothing"


def repair_brace_assignments(source: str) -> str | None:
    """Rewrite ``{key=value, ...}`` as ``{"key": value, ...}``; None when there is nothing to fix.

    Llama 3.2 writes nested objects that way inside pythonic calls. Only an
    identifier directly after ``{`` or ``,`` *inside braces* followed by a single
    ``=`` is rewritten, so keyword arguments in parentheses and ``==`` stay.
    """
    if _ASSIGNMENT_SHAPE.search(source) is None:
        return None
    out: list[str] = []
    stack: list[str] = []
    last_significant = ""
    changed = False
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch in "'\"":
            end = _string_end(source, i)
            out.append(source[i:end])
            i = end
            last_significant = ch
            continue
        if ch in "([{":
            stack.append(ch)
        elif ch in ")]}":
            if stack:
                stack.pop()
        elif stack and stack[-1] == "{" and last_significant in ("{", ",") and _IDENT_START.match(ch):
            match = _IDENT.match(source, i)
            assert match is not None
            j = match.end()
            k = j
            while k < n and source[k] in " \t":
                k += 1
            if k < n and source[k] == "=" and source[k + 1 : k + 2] != "=":
                out.append(json.dumps(match.group()) + ":")
                i = k + 1
                changed = True
                last_significant = ":"
                continue
            out.append(match.group())
            i = j
            last_significant = "a"
            continue
        out.append(ch)
        if not ch.isspace():
            last_significant = ch
        i += 1
    return "".join(out) if changed else None


def _string_end(source: str, start: int) -> int:
    """Index just past the quoted string opening at ``start`` (or the text's end)."""
    quote = source[start]
    i = start + 1
    n = len(source)
    while i < n:
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i + 1
        i += 1
    return n


def parse_literal(text: str) -> tuple[Any, list[str]]:
    """A JSON or Python literal; returns ``(value, repairs)`` or raises :class:`LiteralError`."""
    stripped = text.strip()
    try:
        return json.loads(stripped), []
    except (ValueError, RecursionError):
        pass
    try:
        return literal_value(parse_expression(stripped).body), []  # type: ignore[attr-defined]
    except LiteralError as first_error:
        fixed = repair_brace_assignments(stripped)
        if fixed is None:
            raise first_error
        value = literal_value(parse_expression(fixed).body)  # type: ignore[attr-defined]
        return value, ["key=value inside braces read as object entries"]
    except RecursionError:
        raise LiteralError("literal nested too deeply") from None


def dotted_name(node: ast.AST) -> str:
    """``module.fn`` from a Name/Attribute chain; anything else is not a function name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise LiteralError(f"call target at column {getattr(node, 'col_offset', '?')} is not a plain name")
    parts.append(node.id)
    return ".".join(reversed(parts))


#: functions a call may be wrapped in to show its result: Gemma's ```` ```tool_code ```` prompt
#: (and Gemini's) has the model write ``print(default_api.get_weather(city="Paris"))``
ECHO_WRAPPERS = frozenset({"print"})  # pycalls reads the same wrapper on its fast path


def _echoed(node: ast.AST) -> ast.AST | None:
    """What ``print(x)`` shows (its one argument); None for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ECHO_WRAPPERS and len(node.args) == 1 and not node.keywords:
        return node.args[0]
    return None


def _unwrapped(node: ast.AST) -> tuple[ast.AST, str | None]:
    """The call inside ``print(call)``, and the repair saying so; any other node as it is."""
    shown = _echoed(node)
    if isinstance(shown, ast.Call):
        return shown, PRINT_REMOVED
    return node, None


def _call_from_node(node: ast.AST) -> RawCall:
    node, unwrapped = _unwrapped(node)
    if not isinstance(node, ast.Call):
        raise LiteralError(f"expected a call like name(key=value), found {type(node).__name__}")
    call = RawCall(dotted_name(node.func))
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise LiteralError(f"'*' unpacking in call to {call.name!r}")
        call.positional.append(literal_value(arg))
    for keyword in node.keywords:
        if keyword.arg is None:
            raise LiteralError(f"'**' unpacking in call to {call.name!r}")
        call.keywords[keyword.arg] = literal_value(keyword.value)
    if unwrapped:
        call.repairs.append(unwrapped)
    return call


def _calls_from_tree(tree: ast.AST) -> list[RawCall]:
    if isinstance(tree, ast.Expression):
        body = tree.body
        items = body.elts if isinstance(body, (ast.List, ast.Tuple)) else [body]
        return [_call_from_node(item) for item in items]
    assert isinstance(tree, ast.Module)
    calls: list[RawCall] = []
    results: set[str] = set()  # names a call's result was assigned to
    for statement in tree.body:
        assigned = _assigned_call(statement)
        if assigned is not None:  # ``summary = read_file(...)``: Gemma's tool_code keeps the result
            call = _call_from_node(assigned.value)
            call.repairs.append(f"result assigned to {assigned.targets[0].id!r}")  # type: ignore[attr-defined]
            results.add(assigned.targets[0].id)  # type: ignore[attr-defined]
            calls.append(call)
            continue
        if not isinstance(statement, ast.Expr):
            raise LiteralError(f"line {statement.lineno}: expected a call, found a {type(statement).__name__} statement")
        value = statement.value
        if _prints_a_result(value, results):
            continue  # ``print(summary)``: shows what a call above returned
        read = [_call_from_node(item) for item in value.elts] if isinstance(value, (ast.List, ast.Tuple)) else [_call_from_node(value)]
        if any(call.name.partition(".")[0] in results for call in read):
            raise LiteralError(f"line {statement.lineno}: code working on a call's result, not a call")
        calls.extend(read)
    return calls


def _assigned_call(statement: ast.stmt) -> ast.Assign | None:
    """``name = call(...)``: one plain name assigned a call's result."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        if isinstance(statement.value, ast.Call):
            return statement
    return None


def _prints_a_result(value: ast.AST, results: set[str]) -> bool:
    """``print(name)`` of a name a call's result was assigned to above."""
    shown = _echoed(value)
    return isinstance(shown, ast.Name) and shown.id in results


def parse_calls(source: str, *, one_per_line: bool = False) -> tuple[list[RawCall], list[str]]:

    """Calls from ``[f(a=1), g()]`` (or ``f(a=1)\\ng(b=2)`` with ``one_per_line``).

    Returns ``(calls, repairs)``; raises :class:`LiteralError` naming what is wrong.
    """
    mode = "exec" if one_per_line else "eval"
    stripped = source.strip()
    simple = read_simple_calls(stripped, one_per_line)
    if simple is not None:
        return simple, []
    try:
        return _calls_from_tree(parse_expression(stripped, mode)), []
    except LiteralError as first_error:
        renamed, names = aliased(stripped)
        if names:  # ``weather-forecast(...)``, ``f(from="SFO")``: names Python cannot spell
            try:
                calls = _calls_from_tree(parse_expression(renamed, mode))
            except LiteralError:
                raise first_error from None
            return calls, restore(calls, names)
        fixed = repair_brace_assignments(stripped)
        if fixed is None:
            return _without_stray_closers(stripped, mode, first_error)
        try:
            calls = _calls_from_tree(parse_expression(fixed, mode))
        except LiteralError:
            raise first_error from None
        return calls, ["key=value inside braces read as object entries"]
    except RecursionError:
        raise LiteralError("call nested too deeply") from None


def _without_stray_closers(source: str, mode: str, first_error: LiteralError) -> tuple[list[RawCall], list[str]]:
    """The calls once one or two closing brackets that close nothing are dropped (``[f(a=1))]``,
    ``[f(a={…}])]``: small models' replies in BFCL runs), or ``first_error``."""
    error = first_error
    for _ in range(2):
        at = error.stray_closer_at
        if at is None or not 0 <= at < len(source) or source[at] not in ")]}":
            break
        source = source[:at] + source[at + 1 :]
        try:
            return _calls_from_tree(parse_expression(source, mode)), [STRAY_CLOSER]
        except LiteralError as again:
            error = again
    raise first_error


@dataclass
class CallFailure:
    """One call of a well-formed call list whose arguments are not JSON values (``b'x'``, ``1e999``)."""

    name: str
    source: str
    reason: str
    #: the arguments are literals JSON cannot hold (not code: no names, operators, unpacking)
    literal: bool = False


def _call_nodes(tree: ast.AST) -> list[ast.Call] | None:
    """The call nodes of a call list (or of call statements); None unless every item is ``name(...)``."""
    if isinstance(tree, ast.Expression):
        body = tree.body
        items = list(body.elts) if isinstance(body, (ast.List, ast.Tuple)) else [body]
    else:
        assert isinstance(tree, ast.Module)
        items = []
        for statement in tree.body:
            if not isinstance(statement, ast.Expr):
                return None
            value = statement.value
            items.extend(value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value])
    calls: list[ast.Call] = []
    for item in items:
        inner = _unwrapped(item)[0]
        if not isinstance(inner, ast.Call):
            return None
        try:
            dotted_name(inner.func)
        except LiteralError:
            return None
        calls.append(item)  # type: ignore[arg-type]  # a print(...) wrapper is undone when it is read
    return calls


def salvage_calls(source: str, *, one_per_line: bool = False) -> tuple[list[RawCall], list[str], list[CallFailure]] | None:
    """The readable calls of a call list :func:`parse_calls` refused because of *some* of its calls.

    Only a list that is valid Python and made of ``name(...)`` items only is
    salvaged (its shape is certain; only some arguments are not JSON values,
    as vLLM's pythonic parsers drop such a call and keep its siblings).
    Returns ``(calls, repairs, failures)``, or None when there is nothing to
    salvage (bad syntax, a non-call item, or no call readable).
    """
    mode = "exec" if one_per_line else "eval"
    stripped = source.strip()
    repairs: list[str] = []
    try:
        tree = parse_expression(stripped, mode)
    except LiteralError:
        fixed = repair_brace_assignments(stripped)
        if fixed is None:
            return None
        try:
            tree = parse_expression(fixed, mode)
        except LiteralError:
            return None
        stripped, repairs = fixed, ["key=value inside braces read as object entries"]
    nodes = _call_nodes(tree)
    if nodes is None:
        return None
    calls: list[RawCall] = []
    failures: list[CallFailure] = []
    for node in nodes:
        try:
            calls.append(_call_from_node(node))
        except (LiteralError, RecursionError) as exc:
            reason = str(exc) if isinstance(exc, LiteralError) else "call nested too deeply"
            segment = ast.get_source_segment(stripped, node) or ""
            failures.append(CallFailure(dotted_name(_unwrapped(node)[0].func), segment, reason, isinstance(exc, UnrepresentableLiteral)))
    if not calls or not failures:
        return None
    return calls, repairs, failures
