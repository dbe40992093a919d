"""Deterministic tool behaviours for scenarios.

A scenario's tools must answer the same way on every run, or a change in a
score could come from the fixture instead of the model. The handlers built here
are registered on a fresh :class:`utp.registry.ToolRegistry` per run, so the
real check pipeline (unknown names, tiers, JSON Schema, path checks) stands
between the model and every fixture, exactly as it would in an agent.
"""

from __future__ import annotations

import copy
import os
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utp.types import canonical_json

from harness.scenario_model import UNKNOWN_FILE_KIND, FixtureSpec, Scenario, file_kind_for

#: a text file larger than this is left out of a ``files: {root: ...}`` tree
MAX_FILE_BYTES = 256_000
#: search results past this many lines are cut (a model reads them all)
MAX_SEARCH_HITS = 50


class FixtureError(Exception):
    """The tool 'failed': the registry turns this into an execution_error result."""


Handler = Callable[..., Any]


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Accept ``handler(**arguments)`` and ``handler(arguments)`` alike."""
    if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
        return dict(args[0])
    if args:
        raise FixtureError("fixture handlers take keyword arguments")
    return dict(kwargs)


def _normalise_numbers(value: Any) -> Any:
    """3 and 3.0 are the same argument; JSON from different models writes either."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise_numbers(v) for v in value]
    return value


def _same(a: Any, b: Any) -> bool:
    return canonical_json(_normalise_numbers(a)) == canonical_json(_normalise_numbers(b))


# --------------------------------------------------------------------------- simple kinds


def _fixed(spec: FixtureSpec, state: "RunState") -> Handler:
    result = spec.config["result"]

    def handler(*args: Any, **kwargs: Any) -> Any:
        _arguments(args, kwargs)
        return copy.deepcopy(result)

    return handler


def _error(spec: FixtureSpec, state: "RunState") -> Handler:
    message = spec.config["error"]

    def handler(*args: Any, **kwargs: Any) -> Any:
        _arguments(args, kwargs)
        raise FixtureError(message)

    return handler


def _by_args(spec: FixtureSpec, state: "RunState") -> Handler:
    cases = spec.config["by_args"]
    has_default = "default" in spec.config
    default = spec.config.get("default")

    def handler(*args: Any, **kwargs: Any) -> Any:
        arguments = _arguments(args, kwargs)
        for case in cases:
            when = case["when"]
            if all(key in arguments and _same(arguments[key], value) for key, value in when.items()):
                if "error" in case:
                    raise FixtureError(case["error"])
                return copy.deepcopy(case["result"])
        if has_default:
            return copy.deepcopy(default)
        raise FixtureError(f"no result for arguments {canonical_json(arguments)}")

    return handler


def _sequence(spec: FixtureSpec, state: "RunState") -> Handler:
    items = spec.config["sequence"]
    position = {"next": 0}

    def handler(*args: Any, **kwargs: Any) -> Any:
        _arguments(args, kwargs)
        index = min(position["next"], len(items) - 1)
        position["next"] += 1
        return copy.deepcopy(items[index])

    return handler


# --------------------------------------------------------------------------- file tree


@dataclass
class FileTree:
    """A small in-memory project: what read/list/search/write tools see during one run."""

    files: dict[str, str] = field(default_factory=dict)
    #: the directory the path guard confines file tools to: with ``rewrite_paths=False`` the
    #: guard hands over a relative path joined to it, which :meth:`as_written` takes off again
    root: Path | None = None

    def as_written(self, path: Any) -> Any:
        """The path as the model wrote it: without the root the path guard joined it to."""
        prefix = f"{self.root}{os.sep}" if self.root is not None else None
        return path[len(prefix):] if prefix and isinstance(path, str) and path.startswith(prefix) else path

    @staticmethod
    def normalise(path: Any) -> str:
        if not isinstance(path, str):
            raise FixtureError(f"path must be a string, got {type(path).__name__}")
        text = path.strip().replace("\\", "/")
        if text.startswith("/"):
            raise FixtureError(f"absolute path {path!r} is outside the project")
        clean = posixpath.normpath(text) if text else "."
        if clean == ".." or clean.startswith("../"):
            raise FixtureError(f"path {path!r} leaves the project")
        return "" if clean == "." else clean

    def is_dir(self, path: str) -> bool:
        prefix = f"{path}/" if path else ""
        return any(name.startswith(prefix) for name in self.files)

    def read(self, path: Any) -> str:
        path = self.as_written(path)
        key = self.normalise(path)
        if key in self.files:
            return self.files[key]
        if self.is_dir(key):
            raise FixtureError(f"{path!r} is a directory")
        raise FixtureError(f"no such file: {path!r}")

    def list(self, path: Any = "") -> list[str]:
        path = self.as_written(path)
        key = self.normalise(path if path is not None else "")
        if key in self.files:
            raise FixtureError(f"{path!r} is a file, not a directory")
        if not self.is_dir(key):
            raise FixtureError(f"no such directory: {path!r}")
        prefix = f"{key}/" if key else ""
        entries: set[str] = set()
        for name in self.files:
            if name.startswith(prefix):
                rest = name[len(prefix):]
                head, sep, _ = rest.partition("/")
                entries.add(head + "/" if sep else head)
        return sorted(entries)

    def search(self, query: Any, path: Any = "") -> list[dict[str, Any]]:
        if not isinstance(query, str) or not query.strip():
            raise FixtureError("search needs a non-empty query string")
        path = self.as_written(path)
        key = self.normalise(path if path is not None else "")
        prefix = f"{key}/" if key and key not in self.files else key
        needle = query.strip().lower()
        hits: list[dict[str, Any]] = []
        for name in sorted(self.files):
            if prefix and not (name == prefix or name.startswith(prefix)):
                continue
            for number, line in enumerate(self.files[name].splitlines(), start=1):
                if needle in line.lower():
                    hits.append({"path": name, "line": number, "text": line.strip()})
                    if len(hits) >= MAX_SEARCH_HITS:
                        return hits
        return hits

    def write(self, path: Any, content: Any) -> dict[str, Any]:
        path = self.as_written(path)
        key = self.normalise(path)
        if not key or self.is_dir(key):
            raise FixtureError(f"cannot write {path!r}: it is a directory")
        if not isinstance(content, str):
            raise FixtureError(f"content must be a string, got {type(content).__name__}")
        self.files[key] = content
        return {"path": key, "bytes": len(content.encode("utf-8")), "written": True}


def load_tree(root: Path) -> dict[str, str]:
    """Text files under ``root`` keyed by POSIX relative path (binary and huge files skipped)."""
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            continue
        if any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(root).parts):
            continue
        try:
            files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return files


PATH_ARGS = ("path", "file_path", "filepath", "file", "filename", "dir", "directory", "dir_path", "folder")
QUERY_ARGS = ("query", "pattern", "q", "regex", "search", "term", "text", "keyword")
CONTENT_ARGS = ("content", "contents", "text", "data", "body")


def _pick(arguments: dict[str, Any], explicit: str | None, names: Iterable[str], *, exclude: Iterable[str] = ()) -> Any:
    if explicit:
        return arguments.get(explicit)
    for name in names:
        if name in arguments and name not in exclude:
            return arguments[name]
    return None


def _file_reader(config: dict[str, Any], tree: FileTree) -> Handler:
    def handler(*args: Any, **kwargs: Any) -> Any:
        arguments = _arguments(args, kwargs)
        path = _pick(arguments, config.get("path_arg"), PATH_ARGS)
        if path is None:
            raise FixtureError("missing the file path argument")
        return tree.read(path)

    return handler


def _file_lister(config: dict[str, Any], tree: FileTree) -> Handler:
    def handler(*args: Any, **kwargs: Any) -> Any:
        arguments = _arguments(args, kwargs)
        return tree.list(_pick(arguments, config.get("path_arg"), PATH_ARGS) or "")

    return handler


def _file_searcher(config: dict[str, Any], tree: FileTree) -> Handler:
    def handler(*args: Any, **kwargs: Any) -> Any:
        arguments = _arguments(args, kwargs)
        query = _pick(arguments, config.get("query_arg"), QUERY_ARGS)
        return tree.search(query, _pick(arguments, config.get("path_arg"), PATH_ARGS) or "")

    return handler


def _file_writer(config: dict[str, Any], tree: FileTree) -> Handler:
    def handler(*args: Any, **kwargs: Any) -> Any:
        arguments = _arguments(args, kwargs)
        path = _pick(arguments, config.get("path_arg"), PATH_ARGS)
        content = _pick(arguments, config.get("content_arg"), CONTENT_ARGS)
        if path is None:
            raise FixtureError("missing the file path argument")
        return tree.write(path, content)

    return handler


#: file behaviour by kind (the scenario's ``kind:``, or the kind its tool's name implies)
FILE_HANDLERS: dict[str, Callable[[dict[str, Any], FileTree], Handler]] = {
    "write": _file_writer,
    "search": _file_searcher,
    "list": _file_lister,
    "read": _file_reader,
}


def _files(spec: FixtureSpec, state: "RunState", tool_name: str = "") -> Handler:
    config = spec.config["files"]
    kind = file_kind_for(tool_name, config.get("kind"))
    if kind is None:
        raise FixtureError(f"tool {tool_name!r}: {UNKNOWN_FILE_KIND}")
    return FILE_HANDLERS[kind](config, state.tree)


# --------------------------------------------------------------------------- per-run state


@dataclass
class RunState:
    """Mutable fixture state for ONE run: sequences restart, written files vanish."""

    tree: FileTree


def initial_tree(scenario: Scenario) -> FileTree:
    """One shared tree per run: what a write tool writes, a read tool then reads."""
    files: dict[str, str] = {}
    for spec in scenario.tools:
        config = spec.fixture.config.get("files") if spec.fixture.kind == "files" else None
        if not config:
            continue
        if "root" in config:
            files.update(load_tree(Path(spec.fixture.base_dir or ".") / config["root"]))
        else:
            files.update(config["tree"])
    return FileTree(files, root=_file_root(scenario))


FIXTURE_BUILDERS: dict[str, Callable[..., Handler]] = {
    "result": _fixed,
    "by_args": _by_args,
    "error": _error,
    "sequence": _sequence,
}


def build_handlers(scenario: Scenario) -> dict[str, Handler]:
    """Fresh handlers (fresh state) for one run of ``scenario``."""
    state = RunState(tree=initial_tree(scenario))
    handlers: dict[str, Handler] = {}
    for spec in scenario.tools:
        if spec.fixture.kind == "files":
            handlers[spec.tool.name] = _files(spec.fixture, state, spec.tool.name)
        else:
            handlers[spec.tool.name] = FIXTURE_BUILDERS[spec.fixture.kind](spec.fixture, state)
    return handlers


def _file_root(scenario: Scenario) -> Path:
    """The directory the path guard confines file tools to.

    ``files: {root: dir}`` confines to that directory; an in-memory ``tree``
    confines to the scenarios directory, which is enough for the guard to
    refuse absolute paths and ``..`` escapes exactly as it would in an agent.
    """
    for spec in scenario.tools:
        config = spec.fixture.config.get("files") if spec.fixture.kind == "files" else None
        if config and "root" in config:
            return (Path(spec.fixture.base_dir or ".") / config["root"]).resolve()
    base = next((spec.fixture.base_dir for spec in scenario.tools if spec.fixture.base_dir), None)
    return Path(base or ".").resolve()


def _path_params(spec: Any) -> list[str]:
    config = spec.fixture.config["files"]
    declared = spec.tool.properties
    explicit = config.get("path_arg")
    if explicit:
        return [explicit] if explicit in declared else []
    return [name for name in PATH_ARGS if name in declared][:1]


def build_registry(scenario: Scenario) -> Any:
    """A fresh ``ToolRegistry`` with the scenario's tools, at its starting tier.

    File tools get the registry's real path guard (paths are checked but not
    rewritten, since the tree they read is in memory).
    """
    from utp.pathguard import PathGuard
    from utp.registry import ToolRegistry

    file_tools = [spec for spec in scenario.tools if spec.fixture.kind == "files"]
    guard = PathGuard([_file_root(scenario)]) if file_tools else None
    registry = ToolRegistry(
        tier=scenario.tier,
        path_guard=guard,
        path_params={spec.tool.name: _path_params(spec) for spec in file_tools},
        rewrite_paths=False,
    )
    handlers = build_handlers(scenario)
    for spec in scenario.tools:
        registry.register(spec.tool, handlers[spec.tool.name])
    return registry
