"""Keep file tools inside the directories they were given.

A model writes ``../../etc/passwd`` or a path through a symlink that points
out of the repository as readily as a real one, and the parser faithfully
hands it over. The guard resolves the path the way the operating system will
(symlinks followed, ``..`` collapsed) *before* comparing it with the allowed
roots, so the check and the later ``open()`` talk about the same file.

Which parameters are paths is declared, never guessed: a tool marks a
parameter with ``"format": "path"`` in its JSON Schema (an array of paths
marks its ``items``), or the registry is told with ``path_params``; see
:class:`utp.registry.ToolRegistry`. The mark counts wherever the schema puts
it: in an ``anyOf``/``oneOf`` branch (``Optional[Path]`` becomes one), in a
nested object, in the items of an array, behind a local ``$ref``
(:func:`path_positions`); :func:`guard_arguments` checks every value found there.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: JSON Schema ``format`` value that marks a parameter as a filesystem path
PATH_FORMAT = "path"


class PathViolation(Exception):
    """A path the guard refused; ``path`` is what the model asked for.

    ``reason`` is safe to show a model; ``detail`` adds where the path really
    led (absolute locations on this machine), for logs and transcripts.
    """

    def __init__(self, path: Any, reason: str, detail: str = "", where: str = ""):
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.detail = detail
        #: where in the arguments the path was (``files[1].path``), when known
        self.where = where

    def __str__(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return f"path {self.path!r} refused: {self.reason}{detail}"


class PathGuard:
    """Allowed roots for file tools.

    Relative paths are taken relative to the first root, because that is the
    directory a model is told it works in. Roots themselves are resolved once
    at construction so a root given through a symlink compares correctly.
    """

    def __init__(self, allowed_roots: Iterable[str | os.PathLike[str]]):
        roots = [Path(os.fspath(r)).expanduser().resolve(strict=False) for r in allowed_roots]
        if not roots:
            raise ValueError("PathGuard needs at least one allowed root")
        self.roots: tuple[Path, ...] = tuple(roots)

    def __repr__(self) -> str:
        return f"PathGuard({[str(r) for r in self.roots]!r})"

    def resolve(self, path: Any) -> Path:
        """The real location of ``path`` if it lies under an allowed root; else raise :class:`PathViolation`."""
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):
            raise PathViolation(path, f"expected a path string, got {type(path).__name__}")
        if not path.strip():
            raise PathViolation(path, "empty path")
        if "\x00" in path:
            raise PathViolation(path, "path contains a NUL byte")
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.roots[0] / candidate
        try:
            # strict=False: a file about to be created need not exist, but every
            # existing component (symlinks included) is still resolved.
            real = candidate.resolve(strict=False)
        except (OSError, RuntimeError) as exc:  # symlink loops, unreadable components
            raise PathViolation(path, "cannot be resolved", str(exc)) from None
        for root in self.roots:
            if real.is_relative_to(root):
                return real
        allowed = ", ".join(str(r) for r in self.roots)
        raise PathViolation(path, "outside the allowed directories", f"resolves to {real}; allowed: {allowed}")

    def anchored(self, path: str | os.PathLike[str]) -> str:
        """``path`` as written, made absolute against the first root (what :meth:`resolve` checked),
        so a handler opening it from another working directory opens the same file."""
        text = os.fspath(path)
        return text if os.path.isabs(text) else os.path.join(self.roots[0], text)  # joined as written, not normalised

    def is_allowed(self, path: Any) -> bool:
        try:
            self.resolve(path)
        except PathViolation:
            return False
        return True

    def relative(self, path: Any) -> str:
        """``path`` relative to the root that contains it (for messages and in-memory trees)."""
        real = self.resolve(path)
        for root in self.roots:
            if real.is_relative_to(root):
                return real.relative_to(root).as_posix() or "."
        raise PathViolation(path, "outside the allowed roots")  # unreachable: resolve() checked


class _Each:
    """A step into every item of an array (or every value of an object's ``additionalProperties``)."""

    def __repr__(self) -> str:
        return "[*]"


EACH = _Each()
#: how deep a schema is walked for path marks (a ``$ref`` cycle ends here)
_MAX_SCHEMA_DEPTH = 32


@dataclass(frozen=True)
class PathPosition:
    """Where arguments hold a path: property names and :data:`EACH` steps from the top.

    ``strict``: only a path may be there, so any other value is refused; in a
    union with other types (``anyOf: [path, integer]``) a non-string is left to
    schema validation, and null always means "no path".
    """

    steps: tuple[str | _Each, ...]
    strict: bool = True


def path_positions(schema: Mapping[str, Any]) -> list[PathPosition]:
    """Every position a schema marks ``format: path``, however nested or combined."""
    found: dict[tuple[Any, ...], bool] = {}

    def walk(node: Any, steps: tuple[Any, ...], strict: bool, depth: int) -> None:
        if not isinstance(node, Mapping) or depth > _MAX_SCHEMA_DEPTH:
            return
        if node.get("format") == PATH_FORMAT:
            found[steps] = found.get(steps, True) and strict
        ref = node.get("$ref")
        if isinstance(ref, str):
            walk(_local_ref(schema, ref), steps, strict, depth + 1)
        for key in ("anyOf", "oneOf", "allOf"):
            options = node.get(key)
            for option in options if isinstance(options, list) else ():
                walk(option, steps, strict and key == "allOf", depth + 1)
        properties = node.get("properties")
        for name, sub in properties.items() if isinstance(properties, Mapping) else ():
            walk(sub, (*steps, str(name)), strict, depth + 1)
        for key in ("items", "additionalProperties"):
            walk(node.get(key), (*steps, EACH), strict, depth + 1)

    walk(schema, (), True, 0)
    return [PathPosition(steps, strict) for steps, strict in found.items() if steps]


def _local_ref(root: Mapping[str, Any], ref: str) -> Any:
    """The schema a local ``#/…`` reference points at (None for any other reference)."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def guard_arguments(guard: PathGuard, arguments: Mapping[str, Any], positions: Iterable[PathPosition], *, rewrite: bool) -> dict[str, Any]:
    """``arguments`` with every path at ``positions`` checked; :class:`PathViolation` (with ``where``) for the first refused.

    ``rewrite``: each path becomes its resolved real location; otherwise the
    path as written, made absolute against the first root (:meth:`PathGuard.anchored`).
    """
    checked = copy.deepcopy(dict(arguments))
    for position in positions:
        _guard_at(guard, checked, position.steps, position.strict, "", rewrite)
    return checked


def _guard_at(guard: PathGuard, container: Any, steps: tuple[Any, ...], strict: bool, where: str, rewrite: bool) -> None:
    step, rest = steps[0], steps[1:]
    if step is EACH:
        keys: Iterable[Any] = range(len(container)) if isinstance(container, list) else list(container) if isinstance(container, dict) else ()
    else:
        keys = (step,) if isinstance(container, dict) and step in container else ()
    for key in keys:
        label = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key)
        value = container[key]
        if rest:
            _guard_at(guard, value, rest, strict, label, rewrite)
        elif value is not None and (strict or isinstance(value, (str, os.PathLike))):
            try:
                real = guard.resolve(value)
            except PathViolation as exc:
                exc.where = label
                raise
            container[key] = str(real) if rewrite else guard.anchored(value)
