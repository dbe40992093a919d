"""Keep file tools inside the directories they were given.

A model writes ``../../etc/passwd`` or a path through a symlink that points
out of the repository as readily as a real one, and the parser faithfully
hands it over. The guard resolves the path the way the operating system will
(symlinks followed, ``..`` collapsed) *before* comparing it with the allowed
roots, so the check and the later ``open()`` talk about the same file.

Which parameters are paths is declared, never guessed: a tool marks a
parameter with ``"format": "path"`` in its JSON Schema (an array of paths
marks its ``items``), or the registry is told with ``path_params``; see
:class:`utp.registry.ToolRegistry`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: JSON Schema ``format`` value that marks a parameter as a filesystem path
PATH_FORMAT = "path"


class PathViolation(Exception):
    """A path the guard refused; ``path`` is what the model asked for.

    ``reason`` is safe to show a model; ``detail`` adds where the path really
    led (absolute locations on this machine), for logs and transcripts.
    """

    def __init__(self, path: Any, reason: str, detail: str = ""):
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.detail = detail

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


def path_parameters(schema: Mapping[str, Any]) -> dict[str, bool]:
    """Top-level parameters a schema marks as paths: name → ``True`` for an array of paths."""
    found: dict[str, bool] = {}
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return found
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            continue
        if prop.get("format") == PATH_FORMAT:
            found[str(name)] = False
        items = prop.get("items")
        if isinstance(items, Mapping) and items.get("format") == PATH_FORMAT:
            found[str(name)] = True
    return found
