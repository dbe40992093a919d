"""The path guard covers every schema position that admits a path, not only a top-level one.

A path may sit in an ``anyOf``/``oneOf`` (which is what ``Optional[Path]``
becomes when a function is registered with ``register_function``), in a
nested object, or in an array, of objects or of paths. Each attack here
(``..``, an absolute path out, a symlink out, ``~``) is sent through the real
registry to a recording handler: it must be refused before the handler runs,
or, for ``~``, reach the handler as a path inside the root.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import pytest

from utp.pathguard import PathGuard
from utp.registry import ToolRegistry
from utp.types import ErrorKind, Tool, ToolCall

from .doubles import Recorder

PATH = {"type": "string", "format": "path"}
#: tool name -> (parameters schema, how to place a path value into its arguments)
HAND_WRITTEN: dict[str, tuple[dict[str, Any], Any]] = {
    "any_of": ({"type": "object", "properties": {"p": {"anyOf": [PATH, {"type": "null"}]}}}, lambda v: {"p": v}),
    "one_of": ({"type": "object", "properties": {"p": {"oneOf": [PATH, {"type": "integer"}]}}}, lambda v: {"p": v}),
    "nested": ({"type": "object", "properties": {"opts": {"type": "object", "properties": {"target": PATH}}}}, lambda v: {"opts": {"target": v}}),
    "array_of_objects": (
        {"type": "object", "properties": {"files": {"type": "array", "items": {"type": "object", "properties": {"path": PATH}}}}},
        lambda v: {"files": [{"path": "ok.txt"}, {"path": v}]},
    ),
    "array_of_optional": ({"type": "object", "properties": {"ps": {"type": "array", "items": {"anyOf": [PATH, {"type": "null"}]}}}}, lambda v: {"ps": [None, v]}),
    "ref": ({"type": "object", "$defs": {"P": PATH}, "properties": {"p": {"$ref": "#/$defs/P"}}}, lambda v: {"p": v}),
}


def read_optional(path: Optional[Path] = None) -> str:
    """Read a file (the project's own register_function makes this an anyOf)."""
    return "read"


def read_union(path: Path | None = None, more: list[Path] | None = None) -> str:
    """Read files."""
    return "read"


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "repo", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    (outside / "key.txt").write_text("secret")
    (root / "ok.txt").write_text("ok")
    (root / "link").symlink_to(outside)
    return root, outside


def attacks(outside: Path) -> dict[str, str]:
    return {"dot-dot": "../outside/key.txt", "absolute": str(outside / "key.txt"), "etc": "/etc/passwd", "symlink out": "link/key.txt",
            "deep dot-dot": "ok.txt/../../outside/key.txt"}


def _run(registry: ToolRegistry, call: ToolCall) -> Any:
    return asyncio.run(registry.execute(call))


def _guarded(root: Path, tool_name: str, handler: Recorder, **options: Any) -> ToolRegistry:
    """A registry guarding ``root`` with the hand-written tool ``tool_name`` (registered as ``t``) run by ``handler``."""
    registry = ToolRegistry(path_guard=PathGuard([root]), **options)
    registry.register(Tool("t", "", HAND_WRITTEN[tool_name][0]), handler)
    return registry


@pytest.mark.parametrize("tool_name", list(HAND_WRITTEN))
@pytest.mark.parametrize("attack", ["dot-dot", "absolute", "etc", "symlink out", "deep dot-dot"])
def test_every_path_position_of_a_hand_written_schema_is_guarded(tree, tool_name: str, attack: str) -> None:
    root, outside = tree
    schema, place = HAND_WRITTEN[tool_name]
    handler = Recorder()
    registry = ToolRegistry(path_guard=PathGuard([root]))
    registry.register(Tool(tool_name, "", schema), handler)
    result = _run(registry, ToolCall(tool_name, place(attacks(outside)[attack])))
    assert result.error_kind is ErrorKind.PATH_VIOLATION, result.error
    assert handler.calls == []


@pytest.mark.parametrize("func", [read_optional, read_union])
@pytest.mark.parametrize("attack", ["dot-dot", "absolute", "etc", "symlink out", "deep dot-dot"])
def test_register_function_optional_paths_are_guarded(tree, func, attack: str) -> None:
    root, outside = tree
    seen = Recorder()
    registry = ToolRegistry(path_guard=PathGuard([root]))
    tool = registry.register_function(func)
    registry.unregister(tool.name)
    registry.register(tool, seen)  # the same generated schema, with a recording handler
    arguments = {"path": attacks(outside)[attack]}
    assert _run(registry, ToolCall(tool.name, arguments)).error_kind is ErrorKind.PATH_VIOLATION
    if func is read_union:
        arguments = {"path": "ok.txt", "more": ["ok.txt", attacks(outside)[attack]]}
        assert _run(registry, ToolCall(tool.name, arguments)).error_kind is ErrorKind.PATH_VIOLATION
    assert seen.calls == []


def test_allowed_paths_in_nested_positions_reach_the_handler_resolved(tree) -> None:
    root, _ = tree
    seen = Recorder()
    result = _run(_guarded(root, "array_of_objects", seen), ToolCall("t", HAND_WRITTEN["array_of_objects"][1]("sub/../ok.txt")))
    assert result.success, result.error
    assert seen.calls == [{"files": [{"path": str(root / "ok.txt")}, {"path": str(root / "ok.txt")}]}]


def test_a_refusal_names_where_the_path_was(tree) -> None:
    root, _ = tree
    result = _run(_guarded(root, "array_of_objects", Recorder()), ToolCall("t", HAND_WRITTEN["array_of_objects"][1]("/etc/passwd")))
    assert "files[1].path" in result.error and "'/etc/passwd'" in result.error


def test_a_non_path_branch_of_a_union_is_left_alone(tree) -> None:
    root, _ = tree
    seen = Recorder()
    assert _run(_guarded(root, "one_of", seen), ToolCall("t", {"p": 7})).success
    assert seen.calls == [{"p": 7}]


@pytest.mark.parametrize("rewrite", [True, False])
def test_a_home_directory_path_stays_inside_the_root(tree, rewrite: bool) -> None:
    """``~`` is not expanded: it names a directory ``~`` under the root, and the handler gets that."""
    root, _ = tree
    seen = Recorder()
    assert _run(_guarded(root, "nested", seen, rewrite_paths=rewrite), ToolCall("t", {"opts": {"target": "~/.ssh/id_rsa"}})).success
    received = Path(seen.calls[0]["opts"]["target"])
    assert received.is_absolute() and received.expanduser() == received and received.is_relative_to(root)


def test_without_rewriting_a_relative_path_is_made_absolute_against_the_first_root(tree, monkeypatch) -> None:
    """The guard checked ``root/x``; a handler opening the value from another working directory must get that file."""
    root, outside = tree
    monkeypatch.chdir(outside)
    seen = Recorder()
    assert _run(_guarded(root, "nested", seen, rewrite_paths=False), ToolCall("t", {"opts": {"target": "ok.txt"}})).success
    assert seen.calls == [{"opts": {"target": str(root / "ok.txt")}}]
    assert Path(seen.calls[0]["opts"]["target"]).read_text() == "ok"
