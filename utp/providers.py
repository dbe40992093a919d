"""Ways to get tools into a registry without writing a provider class.

:class:`FunctionToolProvider` turns plain Python functions into tools, their
JSON Schema read from type hints and their descriptions from docstrings, so
the definition a model sees cannot drift from the code that runs.
:class:`ProviderAdapter` lets a seed-002 style provider (a different
``Tool``/``ToolResult`` pair, parameters as ``{name: ToolParameter}``) plug
in unchanged.

Sync callables run on a daemon thread: a per-call timeout can then abandon a
stuck handler without the event loop (or interpreter exit) waiting for it.
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import inspect
import json
import os
import re
import threading
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from utp.pathguard import PATH_FORMAT
from utp.tooldefs import normalize_tool
from utp.types import ErrorKind, Tool, ToolResult, ToolTier


async def run_in_daemon_thread(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking callable off the event loop on a thread nobody has to join."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():  # cancelled by a timeout: nobody wants the value
            setter(value)

    def worker() -> None:
        try:
            outcome = context.run(func, *args, **kwargs)
        except BaseException as exc:  # handed to the awaiting task, not swallowed
            post(settle, future.set_exception, exc)
        else:
            post(settle, future.set_result, outcome)

    def post(*callback: Any) -> None:
        try:
            loop.call_soon_threadsafe(*callback)
        except RuntimeError:  # the loop closed while the abandoned call ran on
            pass

    name = getattr(func, "__name__", "call")
    threading.Thread(target=worker, name=f"utp-tool-{name}", daemon=True).start()
    return await future


async def call_maybe_async(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Await coroutine functions, run others on a daemon thread; await what they return if awaitable."""
    if _is_async_callable(func):
        result = func(*args, **kwargs)
    else:
        result = await run_in_daemon_thread(func, *args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


def _is_async_callable(func: Any) -> bool:
    while hasattr(func, "func") and not inspect.isfunction(func):  # functools.partial
        func = func.func
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(getattr(func, "__call__", None))


def to_tool_result(value: Any, *, call_id: str | None, tool_name: str) -> ToolResult:
    """What a handler returned, as a :class:`ToolResult` (seed-002 results included)."""
    if isinstance(value, ToolResult):
        value.call_id = value.call_id or call_id
        value.tool_name = value.tool_name or tool_name
        if value.error is not None and value.error_kind is None:
            value.error_kind = ErrorKind.EXECUTION_ERROR
        value.executed = True
        return value
    if _looks_like_foreign_result(value):
        success = bool(getattr(value, "success"))
        error = getattr(value, "error", None)
        if success:
            return ToolResult(call_id, tool_name, result=getattr(value, "result", None), executed=True)
        return ToolResult(
            call_id,
            tool_name,
            error=str(error) if error else "the tool reported failure without a message",
            error_kind=ErrorKind.EXECUTION_ERROR,
            executed=True,
        )
    return ToolResult(call_id, tool_name, result=value, executed=True)


def _looks_like_foreign_result(value: Any) -> bool:
    return not isinstance(value, (Mapping, str, bytes)) and hasattr(value, "success") and (
        hasattr(value, "result") or hasattr(value, "error")
    )


class ProviderAdapter:
    """Any object with async ``list_tools()`` / ``execute_tool(name, params)`` as a UTP provider.

    Tools are normalised to :class:`utp.types.Tool` (``tier`` overrides each
    tool's own tier when given); results become :class:`utp.types.ToolResult`.
    """

    def __init__(
        self,
        provider: Any,
        *,
        tier: ToolTier | str | int | None = None,
        requires_confirmation: bool | None = None,
    ):
        for method in ("list_tools", "execute_tool"):
            if not callable(getattr(provider, method, None)):
                raise TypeError(f"{type(provider).__name__} is not a tool provider: it has no {method}() method")
        self.provider = provider
        self.tier = ToolTier.parse(tier) if tier is not None else None
        self.requires_confirmation = requires_confirmation

    async def list_tools(self) -> list[Tool]:
        listed = await call_maybe_async(self.provider.list_tools)
        tools = []
        for index, item in enumerate(listed or []):
            tool = normalize_tool(item, where=f"{type(self.provider).__name__}.list_tools()[{index}]")
            changes: dict[str, Any] = {}
            if self.tier is not None:
                changes["tier"] = self.tier
            if self.requires_confirmation is not None:
                changes["requires_confirmation"] = self.requires_confirmation
            tools.append(_replace_tool(tool, **changes) if changes else tool)
        return tools

    async def execute_tool(self, tool_name: str, parameters: dict[str, Any]) -> ToolResult:
        value = await call_maybe_async(self.provider.execute_tool, tool_name, parameters)
        return to_tool_result(value, call_id=None, tool_name=tool_name)


def _replace_tool(tool: Tool, **changes: Any) -> Tool:
    fields = {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "tier": tool.tier,
        "requires_confirmation": tool.requires_confirmation,
    }
    fields.update(changes)
    return Tool(**fields)


class FunctionToolProvider:
    """Python callables as tools.

    >>> provider = FunctionToolProvider()
    >>> @provider.tool(tier="walk")
    ... def read_file(path: str) -> str:
    ...     '''Read a text file.'''
    ...     return open(path).read()
    >>> provider.get("read_file").parameters["required"]
    ['path']
    """

    def __init__(self, functions: Any = (), *, tier: ToolTier | str | int = ToolTier.CRAWL):
        self.default_tier = ToolTier.parse(tier)
        self._tools: dict[str, Tool] = {}
        self._functions: dict[str, Callable[..., Any]] = {}
        for func in functions:
            self.add(func)

    def add(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        tier: ToolTier | str | int | None = None,
        requires_confirmation: bool = False,
        parameters: Mapping[str, Any] | None = None,
    ) -> Tool:
        tool = tool_from_function(
            func,
            name=name,
            description=description,
            tier=self.default_tier if tier is None else tier,
            requires_confirmation=requires_confirmation,
            parameters=parameters,
        )
        if tool.name in self._tools:
            raise ValueError(f"FunctionToolProvider: tool {tool.name!r} is added twice")
        self._tools[tool.name] = tool
        self._functions[tool.name] = func
        return tool

    def tool(self, func: Callable[..., Any] | None = None, **options: Any) -> Any:
        """Decorator form of :meth:`add` (with or without arguments); returns the function unchanged."""

        def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
            self.add(f, **options)
            return f

        return decorate(func) if func is not None else decorate

    def get(self, name: str) -> Tool:
        return self._tools[name]

    def function(self, name: str) -> Callable[..., Any]:
        return self._functions[name]

    async def list_tools(self) -> list[Tool]:
        return list(self._tools.values())

    async def execute_tool(self, tool_name: str, parameters: dict[str, Any]) -> ToolResult:
        func = self._functions.get(tool_name)
        if func is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult(
                None, tool_name, error=f"no tool {tool_name!r} here (tools: {known})", error_kind=ErrorKind.UNKNOWN_TOOL
            )
        value = await call_maybe_async(func, **parameters)
        return to_tool_result(value, call_id=None, tool_name=tool_name)


# --------------------------------------------------------------------------- schema from signature


def tool_from_function(
    func: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    tier: ToolTier | str | int = ToolTier.CRAWL,
    requires_confirmation: bool = False,
    parameters: Mapping[str, Any] | None = None,
) -> Tool:
    """A :class:`Tool` whose schema comes from ``func``'s signature unless ``parameters`` is given."""
    tool_name = name or getattr(func, "__name__", None)
    if not tool_name or tool_name == "<lambda>":
        raise ValueError("tool_from_function: pass name= for a callable without a usable __name__")
    doc = inspect.getdoc(func) or ""
    summary, param_docs = _parse_docstring(doc)
    schema = dict(parameters) if parameters is not None else _signature_schema(func, param_docs)
    return Tool(
        name=tool_name,
        description=description if description is not None else summary,
        parameters=schema,
        tier=ToolTier.parse(tier),
        requires_confirmation=requires_confirmation,
    )


_ARGS_HEADER = re.compile(r"^(Args|Arguments|Parameters):\s*$", re.IGNORECASE)
_ARG_LINE = re.compile(r"^(\s+)\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """First paragraph, and Google-style ``Args:`` entries (continuation lines indented deeper)."""
    first = doc.strip().split("\n\n")[0] if doc.strip() else ""
    summary = "" if _ARGS_HEADER.match(first.splitlines()[0].strip() if first else "") else " ".join(first.split())
    params: dict[str, str] = {}
    in_args = False
    entry_indent: int | None = None
    current: str | None = None
    for line in doc.splitlines():
        if _ARGS_HEADER.match(line.strip()):
            in_args, entry_indent, current = True, None, None
            continue
        if not in_args or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            in_args = False  # the next section began
            continue
        match = _ARG_LINE.match(line)
        if match and (entry_indent is None or indent == entry_indent):
            entry_indent = indent
            current = match.group(2)
            params[current] = match.group(3).strip()
        elif current is not None:
            params[current] = f"{params[current]} {line.strip()}".strip()
    return summary, params


def _signature_schema(func: Callable[..., Any], param_docs: Mapping[str, str]) -> dict[str, Any]:
    signature = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # unresolvable forward references: fall back to no hints
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    extra_allowed = False
    for pname, param in signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            extra_allowed = True
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            continue  # a call's arguments arrive by name
        prop = _annotation_schema(hints.get(pname, param.annotation))
        if pname in param_docs and param_docs[pname]:
            prop["description"] = param_docs[pname]
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        elif _is_json_value(param.default):
            prop["default"] = param.default
        properties[pname] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not extra_allowed:
        schema["additionalProperties"] = False
    return schema


_SIMPLE_TYPES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    dict: {"type": "object"},
    list: {"type": "array"},
    tuple: {"type": "array"},
    type(None): {"type": "null"},
    os.PathLike: {"type": "string", "format": PATH_FORMAT},
}


def _annotation_schema(annotation: Any) -> dict[str, Any]:
    """JSON Schema for a type hint; unknown or missing hints accept anything."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return {"enum": [m.value for m in annotation]}
        if issubclass(annotation, os.PathLike):
            return {"type": "string", "format": PATH_FORMAT}
        for base, schema in _SIMPLE_TYPES.items():
            if isinstance(base, type) and annotation is base:
                return dict(schema)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [_annotation_schema(a) for a in args]
        simple = [o.get("type") for o in options if set(o) == {"type"} and isinstance(o.get("type"), str)]
        if len(simple) == len(options):
            return {"type": simple}
        return {"anyOf": options}
    if origin in (list, tuple, set, frozenset) or origin is typing.get_origin(typing.Sequence[int]):
        schema: dict[str, Any] = {"type": "array"}
        if args:
            schema["items"] = _annotation_schema(args[0])
        return schema
    if origin in (dict, typing.get_origin(typing.Mapping[str, int])):
        return {"type": "object"}
    return {}


def _is_json_value(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True

