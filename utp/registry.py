"""Tools, the tiers that gate them, and the checks every call passes before it runs.

The registry is the single place a call becomes an action, so every safety
property lives here and holds whatever format the call was written in
(HLD §5.5): the parser only turns text into a :class:`~utp.types.ToolCall`;
this module decides. The pipeline, in order::

    known tool? → allowed at the current tier? → arguments valid (safe coercions first)
      → path arguments inside the allowed roots? → confirmation → execute with a timeout

Each refusal is a :class:`~utp.types.ToolResult` with an
:class:`~utp.types.ErrorKind` and a message the model can act on, and a
refused call is never executed.

Disclosure policy (progressive disclosure): an *unknown* name is answered with
the names of the tools available now, never with locked tools' names or
schemas. A locked tool the model names anyway (exactly, or differing only in
case, surrounding/inner whitespace or ``-``/``_``) is a TIER_VIOLATION that
says which tier it needs and which kind of request unlocks it; it does not
include the tool's schema. An available tool named with such a variant is
*not* executed (matching is exact after the parser's own name correction);
the UNKNOWN_TOOL message suggests the exact name.

Path parameters: a parameter is a path when its schema says
``"format": "path"`` (for an array, its ``items`` do), or when the registry's
``path_params`` names it (for tools whose schema you do not control, e.g. MCP
servers). The mark counts wherever the schema puts it (``Optional[Path]``'s
``anyOf``, nested objects, arrays). With a :class:`~utp.pathguard.PathGuard`
set, each such value must resolve inside the allowed roots and, with
``rewrite_paths`` (default), the handler receives the resolved absolute path,
so the file the guard checked is the file the handler opens; without it, the
path as written, made absolute against the first root (never left relative
to the process's working directory, which the guard did not check).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from utp.intent import DEFAULT_RULES, IntentRule, detect_intent_tier
from utp.pathguard import EACH, PathGuard, PathPosition, PathViolation, guard_arguments, path_positions
from utp.providers import ProviderAdapter, call_maybe_async, to_tool_result
from utp.tooldefs import normalize_tool
from utp.types import Decision, ErrorKind, Tool, ToolCall, ToolResult, ToolTier
from utp.validation import compile_schema, validate_arguments

#: ``confirm(tool, arguments) -> bool`` (sync or async): may this call run?
ConfirmCallback = Callable[[Tool, dict[str, Any]], "bool | Awaitable[bool]"]
#: the function behind a tool, called as ``handler(**arguments)``; sync or async
Handler = Callable[..., Any]

_NAME_NOISE = re.compile(r"[\s\-]+")


def normalise_tool_name(name: str) -> str:
    """The form two names share when they differ only in case, whitespace or ``-``/``_``."""
    return _NAME_NOISE.sub("_", name.strip()).casefold()


class ToolRegistrationError(ValueError):
    """A tool that cannot be registered (duplicate name, invalid schema...)."""


@dataclass
class CheckDecision:
    """The verdict on one call before anything runs.

    ``arguments`` are the coerced arguments (paths resolved when the guard
    rewrites them): exactly what the handler will receive.
    """

    allowed: bool
    error_kind: ErrorKind | None = None
    message: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    coercions: list[str] = field(default_factory=list)
    tool: Tool | None = None

    @property
    def decision(self) -> "Decision | str":
        """``"allowed"``, or the :class:`~utp.types.Decision` a refusal is recorded as."""
        return "allowed" if self.allowed else Decision.refused(self.error_kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "error_kind": self.error_kind.value if self.error_kind else None,
            "message": self.message,
            "arguments": self.arguments,
            "coercions": list(self.coercions),
        }


@dataclass
class _Entry:
    tool: Tool
    invoke: Callable[[dict[str, Any]], Awaitable[Any]]
    validator: Draft202012Validator
    path_positions: list[PathPosition]  # where its arguments hold paths


class ToolRegistry:
    """Registered tools, the session's tier, and the check-then-execute pipeline."""

    def __init__(
        self,
        *,
        tier: ToolTier | str | int = ToolTier.CRAWL,
        intent_rules: Sequence[IntentRule] = DEFAULT_RULES,
        path_guard: PathGuard | None = None,
        path_params: Mapping[str, Sequence[str]] | None = None,
        rewrite_paths: bool = True,
        confirm: ConfirmCallback | None = None,
        default_timeout_s: float | None = 30.0,
    ):
        self._start_tier = ToolTier.parse(tier)
        self._tier = self._start_tier
        self.intent_rules = tuple(intent_rules)
        self.path_guard = path_guard
        self._extra_path_params = {name: list(params) for name, params in (path_params or {}).items()}
        self.rewrite_paths = rewrite_paths
        self.confirm = confirm
        self.default_timeout_s = default_timeout_s
        self._entries: dict[str, _Entry] = {}
        self._by_normalised: dict[str, list[str]] = {}

    # ------------------------------------------------------------------ registration

    def register(
        self,
        tool: Tool | Mapping[str, Any] | Any,
        handler: Handler,
        *,
        path_params: Sequence[str] = (),
        replace: bool = False,
    ) -> Tool:
        """Add a tool (any shape :func:`utp.tooldefs.normalize_tool` accepts) run by ``handler(**arguments)``."""
        if not callable(handler):
            raise ToolRegistrationError(f"handler for {getattr(tool, 'name', tool)!r} is not callable")

        async def invoke(arguments: dict[str, Any]) -> Any:
            return await call_maybe_async(handler, **arguments)

        return self._add(normalize_tool(tool), invoke, path_params, replace)

    def register_function(self, func: Handler, **options: Any) -> Tool:
        """Register a Python function; schema and description come from its signature and docstring."""
        from utp.providers import tool_from_function

        path_params = options.pop("path_params", ())
        replace = options.pop("replace", False)
        tool = tool_from_function(func, **options)
        return self.register(tool, func, path_params=path_params, replace=replace)

    async def add_provider(
        self,
        provider: Any,
        *,
        tier: ToolTier | str | int | None = None,
        requires_confirmation: bool | None = None,
        replace: bool = False,
    ) -> list[Tool]:
        """Register every tool a provider lists (seed 002's protocol); ``tier`` overrides theirs."""
        adapter = provider if isinstance(provider, ProviderAdapter) else ProviderAdapter(
            provider, tier=tier, requires_confirmation=requires_confirmation
        )
        added = []
        for tool in await adapter.list_tools():

            async def invoke(arguments: dict[str, Any], _name: str = tool.name) -> Any:
                return await adapter.execute_tool(_name, arguments)

            added.append(self._add(tool, invoke, (), replace))
        return added

    def unregister(self, name: str) -> None:
        entry = self._entries.pop(name, None)
        if entry is None:
            raise KeyError(f"no tool {name!r} is registered")
        key = normalise_tool_name(name)
        self._by_normalised[key].remove(name)
        if not self._by_normalised[key]:
            del self._by_normalised[key]

    def _add(
        self,
        tool: Tool,
        invoke: Callable[[dict[str, Any]], Awaitable[Any]],
        path_params: Sequence[str],
        replace: bool,
    ) -> Tool:
        if tool.name in self._entries and not replace:
            raise ToolRegistrationError(f"tool {tool.name!r} is already registered (pass replace=True to swap it)")
        try:
            validator = compile_schema(tool.parameters, where=f"tool {tool.name!r} parameters")
        except ValueError as exc:
            raise ToolRegistrationError(str(exc)) from None
        paths = path_positions(tool.parameters)
        for name in [*self._extra_path_params.get(tool.name, ()), *path_params]:
            prop = tool.properties.get(name, {})
            is_array = isinstance(prop, Mapping) and prop.get("type") == "array"
            paths.append(PathPosition((name, EACH) if is_array else (name,)))
        if tool.name in self._entries:
            self.unregister(tool.name)
        self._entries[tool.name] = _Entry(tool, invoke, validator, paths)
        self._by_normalised.setdefault(normalise_tool_name(tool.name), []).append(tool.name)
        return tool

    # ------------------------------------------------------------------ tiers

    @property
    def current_tier(self) -> ToolTier:
        return self._tier

    def unlock(self, tier: ToolTier | str | int) -> ToolTier:
        """Raise the session's tier (never lowers it: trust only grows within a session)."""
        self._tier = max(self._tier, ToolTier.parse(tier))
        return self._tier

    def reset(self, tier: ToolTier | str | int | None = None) -> ToolTier:
        """Start a new session at ``tier`` (default: the tier the registry was created with)."""
        self._tier = self._start_tier if tier is None else ToolTier.parse(tier)
        return self._tier

    def apply_intent(self, text: str) -> ToolTier:
        """Unlock what the user's request asks for; returns the tier now in force."""
        return self.unlock(detect_intent_tier(text, self.intent_rules))

    # ------------------------------------------------------------------ lookup

    def all_tools(self) -> list[Tool]:
        return [e.tool for e in self._entries.values()]

    def available_tools(self) -> list[Tool]:
        """Tools at or below the current tier, in registration order (what the model is offered)."""
        return [e.tool for e in self._entries.values() if e.tool.tier <= self._tier]

    def is_tool_available(self, name: str) -> bool:
        entry = self._entries.get(name)
        return entry is not None and entry.tool.tier <= self._tier

    def get_tool(self, name: str) -> Tool | None:
        entry = self._entries.get(name)
        return entry.tool if entry else None

    def list_tool_names(self, available_only: bool = False) -> list[str]:
        tools = self.available_tools() if available_only else self.all_tools()
        return [t.name for t in tools]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    # ------------------------------------------------------------------ checks

    def check(self, call: ToolCall) -> CheckDecision:
        """Every check short of asking for confirmation; pure (nothing runs)."""
        entry = self._entries.get(call.name)
        if entry is None:
            return self._refuse_unknown(call)
        tool = entry.tool
        if tool.tier > self._tier:
            return self._refuse_tier(tool)
        outcome = validate_arguments(entry.validator, call.arguments)
        if not outcome.ok:
            return CheckDecision(
                False,
                ErrorKind.INVALID_ARGUMENTS,
                f"Invalid arguments for '{tool.name}': {outcome.summary()}. Expected: {describe_parameters(tool)}.",
                outcome.arguments,
                outcome.coercions,
                tool,
            )
        arguments = outcome.arguments
        if entry.path_positions and self.path_guard is not None:
            try:
                arguments = self._guard_paths(entry, arguments)
            except _PathRefusal as refusal:
                return CheckDecision(
                    False, ErrorKind.PATH_VIOLATION, refusal.message, outcome.arguments, outcome.coercions, tool
                )
        if tool.requires_confirmation and self.confirm is None:
            return CheckDecision(
                False,
                ErrorKind.CONFIRMATION_REQUIRED,
                f"Tool '{tool.name}' needs the user's confirmation and none can be asked for here; "
                "tell the user what you would do instead.",
                arguments,
                outcome.coercions,
                tool,
            )
        return CheckDecision(True, None, "", arguments, outcome.coercions, tool)

    def _refuse_unknown(self, call: ToolCall) -> CheckDecision:
        key = normalise_tool_name(call.name) if isinstance(call.name, str) else ""
        variants = [self._entries[n].tool for n in self._by_normalised.get(key, [])]
        locked = [t for t in variants if t.tier > self._tier]
        if locked:  # " Write_File " must not slip past a locked write_file as merely "unknown"
            return self._refuse_tier(locked[0], asked_as=call.name)
        available = self.list_tool_names(available_only=True)
        listing = ", ".join(available) if available else "none"
        hint = ""
        if variants:
            hint = f" Did you mean '{variants[0].name}'? Use the exact name."
        return CheckDecision(
            False,
            ErrorKind.UNKNOWN_TOOL,
            f"Unknown tool '{call.name}'.{hint} Available tools: {listing}.",
            dict(call.arguments) if isinstance(call.arguments, Mapping) else {},
        )

    def _refuse_tier(self, tool: Tool, asked_as: str | None = None) -> CheckDecision:
        named = f"'{tool.name}'" if asked_as in (None, tool.name) else f"'{asked_as}' ('{tool.name}')"
        return CheckDecision(
            False,
            ErrorKind.TIER_VIOLATION,
            f"Tool {named} needs the {tool.tier.name} tier; this session is at {self._tier.name}. "
            f"{self._unlock_hint(tool.tier)} Available tools: {', '.join(self.list_tool_names(True)) or 'none'}.",
            {},
            [],
            tool,
        )

    def _unlock_hint(self, tier: ToolTier) -> str:
        words: list[str] = []
        for rule in self.intent_rules:
            if rule.tier >= tier:
                words.extend(rule.examples)
        if not words:
            return f"No request unlocks {tier.name} in this session."
        shown = list(dict.fromkeys(words))[:10]
        return f"It unlocks when the user asks to {', '.join(shown)}."

    def _guard_paths(self, entry: _Entry, arguments: dict[str, Any]) -> dict[str, Any]:
        assert self.path_guard is not None
        try:
            return guard_arguments(self.path_guard, arguments, entry.path_positions, rewrite=self.rewrite_paths)
        except PathViolation as exc:
            raise _PathRefusal(
                f"Argument '{exc.where}' of '{entry.tool.name}': path {exc.path!r} is {exc.reason}. "
                "Use a path inside the project directory."
            ) from None

    # ------------------------------------------------------------------ execution

    async def execute(self, call: ToolCall, timeout_s: float | None = None) -> ToolResult:
        """Check, confirm, then run the handler under a timeout; a refusal never runs anything."""
        decision = self.check(call)
        return await self.execute_checked(call, decision, timeout_s)

    async def execute_checked(
        self, call: ToolCall, decision: CheckDecision, timeout_s: float | None = None
    ) -> ToolResult:
        """Run a call that :meth:`check` already decided on (the loop records the decision first)."""
        if not decision.allowed or decision.tool is None:
            return ToolResult(
                call.id,
                call.name,
                error=decision.message,
                error_kind=decision.error_kind,
                executed=False,
                coercions=list(decision.coercions),
            )
        tool = decision.tool
        entry = self._entries[tool.name]
        if tool.requires_confirmation:
            refusal = await self._ask_confirmation(tool, decision.arguments)
            if refusal is not None:
                return ToolResult(
                    call.id,
                    tool.name,
                    error=refusal,
                    error_kind=ErrorKind.CONFIRMATION_REQUIRED,
                    coercions=list(decision.coercions),
                )
        limit = self.default_timeout_s if timeout_s is None else timeout_s
        started = time.perf_counter()
        try:
            value = await asyncio.wait_for(entry.invoke(dict(decision.arguments)), timeout=limit)
        except asyncio.TimeoutError:
            result = ToolResult(
                call.id,
                tool.name,
                error=f"Tool '{tool.name}' did not finish within {limit:g} s and was abandoned.",
                error_kind=ErrorKind.TIMEOUT,
                executed=True,
            )
        except Exception as exc:  # the model gets the message; the traceback stays here
            result = ToolResult(
                call.id,
                tool.name,
                error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                error_kind=ErrorKind.EXECUTION_ERROR,
                executed=True,
            )
        else:
            result = to_tool_result(value, call_id=call.id, tool_name=tool.name)
            result.call_id = call.id
        result.duration_s = time.perf_counter() - started
        result.coercions = list(decision.coercions)
        return result

    async def _ask_confirmation(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """``None`` when confirmed, else the refusal message."""
        if self.confirm is None:
            return f"Tool '{tool.name}' needs the user's confirmation and none can be asked for here."
        try:
            confirmed = await call_maybe_async(self.confirm, tool, dict(arguments))
        except Exception as exc:
            return f"Confirmation for '{tool.name}' failed ({type(exc).__name__}: {exc}); the call was not run."
        if confirmed:
            return None
        return f"The user declined to run '{tool.name}' with these arguments; do not retry it unchanged."

    async def execute_all(self, calls: Iterable[ToolCall], timeout_s: float | None = None) -> list[ToolResult]:
        """Execute calls in order (later calls may depend on earlier side effects)."""
        return [await self.execute(call, timeout_s) for call in calls]


class _PathRefusal(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def describe_parameters(tool: Tool) -> str:
    """``city (string, required), days (integer)``: a signature short enough for an error message."""
    if not tool.properties:
        return "no arguments"
    required = set(tool.required)
    parts = []
    for name, prop in tool.properties.items():
        kind = prop.get("type", "any") if isinstance(prop, Mapping) else "any"
        if isinstance(kind, list):
            kind = "|".join(map(str, kind))
        if isinstance(prop, Mapping) and "enum" in prop:
            kind = "one of " + "/".join(map(str, prop["enum"]))
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts)
