"""Labelled model outputs: the files ``utp accuracy`` measures the parser on.

A labelled output is one model reply, exactly as the model wrote it, and the
calls a person (or another project's test) says it holds. The files are JSON
Lines, one reply a line::

    {"source": "acme_agent_tests", "output": "<tool_call>{...}</tool_call>",
     "expected": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
     "tools": ["get_weather"], "where": "tests/test_parse.py@1a2b3c", "note": "..."}

``tools`` may list names, full definitions (``{"name", "parameters"}``) or be
``null``. A tool given by name alone is offered with properties typed from
the arguments its expected calls carry across the whole source, and ``null``
offers every name the source expects: the parser sees what an agent would
declare, no more, and an output's own labels never hint at its own reading
beyond what the source's other outputs say too.

Labelled outputs usually come from other projects' tests and from public
issue reports, so they live outside this repository; this module only reads
them, and names the file, line and field of anything it cannot use.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class LabelledOutputError(ValueError):
    """A labelled-output file that cannot be used: the message names file, line and field."""


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class LabelledOutput:
    """One model reply and the calls it holds; ``tools`` as the file gives them (None: not given)."""

    source: str
    output: str
    expected: tuple[ExpectedCall, ...]
    tools: tuple[str | Mapping[str, Any], ...] | None
    where: str = ""
    note: str = ""
    #: ``file:line`` it was read from, for messages
    origin: str = ""


@dataclass
class _Location:
    path: Path
    line: int

    def fail(self, what: str) -> LabelledOutputError:
        return LabelledOutputError(f"{self.path}:{self.line}: {what}")


def _expected_calls(value: Any, at: _Location) -> tuple[ExpectedCall, ...]:
    if not isinstance(value, list):
        raise at.fail(f"field 'expected' must be a list of calls, got {type(value).__name__}")
    calls = []
    for index, call in enumerate(value):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            raise at.fail(f"field 'expected[{index}]' must be an object with a non-empty 'name'")
        arguments = call.get("arguments", {})
        if not isinstance(arguments, dict):
            raise at.fail(f"field 'expected[{index}].arguments' must be an object, got {type(arguments).__name__}")
        calls.append(ExpectedCall(call["name"], arguments))
    return tuple(calls)


def _tools(value: Any, at: _Location) -> tuple[str | Mapping[str, Any], ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise at.fail(f"field 'tools' must be a list or null, got {type(value).__name__}")
    for index, tool in enumerate(value):
        named = isinstance(tool, str) and tool or isinstance(tool, dict) and isinstance(tool.get("name"), str)
        if not named:
            raise at.fail(f"field 'tools[{index}]' must be a tool name or an object with a 'name'")
    return tuple(value)


def parse_line(text: str, at: _Location) -> LabelledOutput:
    try:
        item = json.loads(text)
    except ValueError as exc:
        raise at.fail(f"not a JSON object: {exc}") from None
    if not isinstance(item, dict):
        raise at.fail(f"not a JSON object: {type(item).__name__}")
    for key in ("source", "output"):
        if not isinstance(item.get(key), str):
            raise at.fail(f"field '{key}' missing or not a string")
    if "expected" not in item:
        raise at.fail("field 'expected' missing (use [] for an output that holds no call)")
    return LabelledOutput(
        source=item["source"],
        output=item["output"],
        expected=_expected_calls(item["expected"], at),
        tools=_tools(item.get("tools"), at),
        where=str(item.get("where") or ""),
        note=str(item.get("note") or ""),
        origin=f"{at.path}:{at.line}",
    )


def read_labelled_outputs(paths: Iterable[Path]) -> list[LabelledOutput]:
    """Every labelled output in ``paths`` (files, or directories of ``*.jsonl``), in file order."""
    items: list[LabelledOutput] = []
    for path in paths:
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        if not files:
            raise LabelledOutputError(f"{path}: no *.jsonl files in this directory")
        for file in files:
            try:
                lines = file.read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise LabelledOutputError(f"{file}: cannot read: {exc.strerror or exc}") from None
            except UnicodeDecodeError as exc:
                raise LabelledOutputError(f"{file}: not UTF-8 text: {exc.reason} at byte {exc.start}") from None
            for number, line in enumerate(lines, 1):
                if line.strip():
                    items.append(parse_line(line, _Location(file, number)))
    return items


# --------------------------------------------------------------------------- tools offered

#: JSON Schema type of an expected argument value (bool before int: a bool is an int in Python)
_VALUE_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"), (dict, "object"),
)


def _json_type(value: Any) -> str | None:
    return next((name for kind, name in _VALUE_TYPES if isinstance(value, kind)), None)


@dataclass
class _ToolShape:
    """What a source's expected calls say about one tool's parameters."""

    types: dict[str, set[str]] = field(default_factory=dict)

    def add(self, arguments: Mapping[str, Any]) -> None:
        for key, value in arguments.items():
            kind = _json_type(value)
            self.types.setdefault(key, set()).update([kind] if kind else [])

    def definition(self, name: str) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for key, kinds in self.types.items():
            if len(kinds) == 1:
                properties[key] = {"type": next(iter(kinds))}
            elif {"integer", "number"} == kinds:
                properties[key] = {"type": "number"}
            else:
                properties[key] = {}
        return {"name": name, "parameters": {"type": "object", "properties": properties}}


def offered_tools(items: Sequence[LabelledOutput]) -> dict[int, list[dict[str, Any]]]:
    """Each item's tool definitions (by index into ``items``), typed from its source's expected calls."""
    shapes: dict[tuple[str, str], _ToolShape] = {}
    expected_names: dict[str, list[str]] = {}
    for item in items:
        for call in item.expected:
            shapes.setdefault((item.source, call.name), _ToolShape()).add(call.arguments)
            names = expected_names.setdefault(item.source, [])
            if call.name not in names:
                names.append(call.name)
    offered: dict[int, list[dict[str, Any]]] = {}
    for index, item in enumerate(items):
        given = item.tools if item.tools is not None else tuple(expected_names.get(item.source, ()))
        definitions = []
        for tool in given:
            if isinstance(tool, str):
                definitions.append(shapes.get((item.source, tool), _ToolShape()).definition(tool))
            else:
                definitions.append(dict(tool))
        offered[index] = definitions
    return offered
