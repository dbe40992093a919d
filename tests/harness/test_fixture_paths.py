"""File fixtures speak of paths as the model wrote them, whatever directory the checkout lives in."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.fixtures import FileTree, FixtureError


def test_a_path_the_guard_anchored_at_the_root_is_reported_relative_to_it(tmp_path: Path) -> None:
    tree = FileTree({"src/app.py": "x = 1\n"}, root=tmp_path)
    assert tree.read(str(tmp_path / "src" / "app.py")) == "x = 1\n"
    with pytest.raises(FixtureError) as missing:
        tree.read(str(tmp_path / "README.md"))
    assert str(missing.value) == "no such file: 'README.md'"  # no machine path reaches the model or a cassette
    with pytest.raises(FixtureError, match="no such directory: 'docs'"):
        tree.list(str(tmp_path / "docs"))
