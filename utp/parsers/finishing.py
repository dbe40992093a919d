"""The finishing steps every reading of a response ends with, one-shot or streamed.

Once calls are found: a content call identical to a native one is dropped with
a ``DUPLICATE`` diagnostic (servers sometimes parse the call *and* leave its
text behind), and so is one restating an earlier content call in another
notation (shown in a fence, then made in the model's markup), names are resolved against the offered tools
(:mod:`utp.parsers.names`: corrected, or flagged unknown), and a known tool's
arguments written under one wrapping key are unwrapped. One-shot parsing
(:mod:`utp.parsers.composite`) and streams (:mod:`utp.parsers.streaming`) both
call these, so the two readings cannot drift apart.
"""

from __future__ import annotations

from utp.numbers import safe_repr
from utp.parsers.base import ParseContext
from utp.parsers.names import ID_AS_NAME, is_generated_id, resolve_name, tool_fitting
from utp.parsers.pyliteral import LiteralError, parse_literal
from utp.types import Diagnostic, DiagnosticKind, Tool, ToolCall


def duplicate_of_native(call: ToolCall, raw: str | None = None) -> Diagnostic:
    """The report for a content call that repeats a native one (kept once, as the native call)."""
    shown = raw if raw is not None else call.raw if isinstance(call.raw, str) else safe_repr(call.raw)
    return Diagnostic(
        DiagnosticKind.DUPLICATE,
        f"{call.name!r} appears both as a native call and in content ({call.format}); kept once",
        shown,
        call.format,
    )


def merge_native_and_content(native: list[ToolCall], content: list[ToolCall], diagnostics: list[Diagnostic]) -> list[ToolCall]:
    """Native calls, then the content calls that are not one of them again."""
    if not native or not content:
        return native + content
    seen = {call.canonical_key() for call in native}
    merged = list(native)
    for call in content:
        if call.canonical_key() in seen:
            diagnostics.append(duplicate_of_native(call))
            continue
        merged.append(call)
    return merged


def restatement(call: ToolCall, earlier_format: str | None) -> Diagnostic | None:
    """The report for a content call repeating, in another notation, one read earlier in the same answer.

    A model that shows its call (a Markdown fence, a display line) and then
    makes it in its own markup, or writes it once per format it was told of,
    means one call: run twice, a tool with effects acts twice. The same call
    written twice in the *same* notation is two calls, as models that mean to
    repeat one write it (and their evaluations count it so).
    """
    if earlier_format is None or earlier_format == call.format:
        return None
    return Diagnostic(
        DiagnosticKind.DUPLICATE,
        f"{call.name!r} written again as {call.format} after {earlier_format}: one call, kept once",
        call.raw if isinstance(call.raw, str) else safe_repr(call.raw),
        call.format,
    )


def without_restatements(calls: list[ToolCall], diagnostics: list[Diagnostic]) -> list[ToolCall]:
    """The content calls, each restated in another notation kept once (see :func:`restatement`)."""
    if len(calls) < 2:
        return calls
    formats: dict[tuple[str, str], str | None] = {}
    kept = []
    for call in calls:
        key = call.canonical_key()
        repeated = restatement(call, formats.get(key))
        if repeated is not None:
            diagnostics.append(repeated)
            continue
        formats.setdefault(key, call.format)
        kept.append(call)
    return kept


def check_names(calls: list[ToolCall], ctx: ParseContext, diagnostics: list[Diagnostic]) -> None:
    """Resolve each call's name against the offered tools (in place); no tools, no check."""
    if ctx.has_tools:
        for call in calls:
            check_name(call, ctx, diagnostics)


def check_name(call: ToolCall, ctx: ParseContext, diagnostics: list[Diagnostic]) -> ToolCall:
    """One call's name resolved (corrected, or flagged unknown) and a known tool's arguments unwrapped."""
    match = resolve_name(call.name, ctx)
    if not match.known and (dispatched(call, ctx, diagnostics) or named_by_arguments(call, ctx, diagnostics)):
        match = resolve_name(call.name, ctx)
    call.known = match.known
    if match.how in ("normalized", "corrected"):
        note = f"tool name {call.name!r} -> {match.name!r}"
        call.repairs.append(note)
        diagnostics.append(
            Diagnostic(
                DiagnosticKind.NAME_CORRECTED,
                f"{note} ({'misspelling within 2 edits' if match.how == 'corrected' else 'case/spacing/prefix'})",
                call.name,
                call.format,
            )
        )
        call.name = match.name
    if match.known:
        unwrap_arguments(call, ctx.tool(call.name), diagnostics)
    else:
        offered = ", ".join(sorted(ctx.by_name)[:20])
        diagnostics.append(
            Diagnostic(
                DiagnosticKind.UNKNOWN_TOOL,
                f"{call.name!r} is not an offered tool (offered: {offered})",
                call.name,
                call.format,
            )
        )
    return call


#: the argument a call to a generic dispatcher names the real tool with (``call:tool{tool: "shell", …}``)
_DISPATCH_NAME_KEYS = ("tool", "tool_name", "name", "function")


def dispatched(call: ToolCall, ctx: ParseContext, diagnostics: list[Diagnostic]) -> bool:
    """A call to a name no tool has, whose arguments name an offered tool and hold its arguments, is that tool's call.

    A model that knows only that it calls "a tool" writes ``tool{tool: "shell",
    input: {"command": "ls"}}`` (a Gemma 4 call through a wrapper's protocol) or
    ``run{name: "shell", command: "ls"}``. The inner name must be an offered
    tool's as written and every inner argument one of its parameters, so a
    misspelt tool with a ``name`` parameter stays as it is.
    """
    arguments = call.arguments
    key = next((k for k in _DISPATCH_NAME_KEYS if type(arguments.get(k)) is str), None)
    tool = ctx.tool(arguments[key]) if key is not None else None
    if tool is None:
        return False
    rest = {k: v for k, v in arguments.items() if k != key}
    if len(rest) == 1 and next(iter(rest)) in _WRAPPING_KEYS and isinstance(next(iter(rest.values())), dict):
        rest = next(iter(rest.values()))
    if not set(rest) <= tool.properties.keys() or (not rest and tool.required):
        return False
    note = f"the call to {call.name!r} names {tool.name!r} in its arguments: read as that tool's call"
    call.name, call.arguments = tool.name, rest
    call.repairs.append(note)
    diagnostics.append(Diagnostic(DiagnosticKind.REPAIRED, note, call.name, call.format))
    return True


def named_by_arguments(call: ToolCall, ctx: ParseContext, diagnostics: list[Diagnostic]) -> bool:
    """A call whose "name" is a generated call id is the call of the one offered tool its arguments fit.

    The id says nothing about the tool, the arguments do: every key a
    parameter of that tool, its required ones all given, and no other tool
    fitting as well (:func:`utp.parsers.names.tool_fitting`). Otherwise the
    id stays as written and is flagged unknown.
    """
    if not is_generated_id(call.name):
        return False
    name = tool_fitting(call.arguments, ctx)
    if name is None:
        return False
    note = f"{ID_AS_NAME}: {call.name!r} -> {name!r}"
    call.name = name
    call.repairs.append(note)
    diagnostics.append(Diagnostic(DiagnosticKind.REPAIRED, note, call.name, call.format))
    return True


#: the one argument some models put all arguments under (DeepSeek V3.2 ``arguments``/``input``,
#: MiniCPM ``properties``), for a tool that declares no parameter of that name
_WRAPPING_KEYS = frozenset({"arguments", "parameters", "input", "properties", "args", "kwargs"})


def unwrap_arguments(call: ToolCall, tool: Tool | None, diagnostics: list[Diagnostic]) -> None:
    """``{"arguments": {"city": ...}}`` for a tool whose parameters are ``city``...: the inner object is the arguments.

    Only when the wrapping key is not a parameter of the tool and every inner
    key is one, so a tool that takes an ``input`` keeps it.
    """
    if tool is None or len(call.arguments) != 1:
        return
    (key, inner), = call.arguments.items()
    declared = tool.properties
    if key not in _WRAPPING_KEYS or key in declared or not declared:
        return
    if isinstance(inner, str):  # written as text: JSON, or a Python dict (MiniCPM's raw values)
        try:
            inner, _ = parse_literal(inner)
        except LiteralError:
            return
    if not isinstance(inner, dict) or not inner or not set(inner) <= set(declared):
        return
    note = f"arguments unwrapped from the single {key!r} argument"
    call.arguments = inner
    call.repairs.append(note)
    diagnostics.append(Diagnostic(DiagnosticKind.REPAIRED, f"{call.name!r}: {note}", call.name, call.format))
