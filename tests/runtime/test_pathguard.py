import os
from pathlib import Path

import pytest

from utp.pathguard import EACH, PathGuard, PathPosition, PathViolation, path_positions


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print('a')\n")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("hunter2")
    return root, outside


def test_relative_path_resolves_against_first_root(tree):
    root, _ = tree
    guard = PathGuard([root])
    assert guard.resolve("src/a.py") == (root / "src" / "a.py").resolve()
    assert guard.relative("src/../src/a.py") == "src/a.py"


def test_absolute_path_inside_root_is_allowed(tree):
    root, _ = tree
    assert PathGuard([root]).resolve(str(root / "src" / "a.py")).read_text() == "print('a')\n"


def test_not_yet_existing_file_inside_root_is_allowed(tree):
    root, _ = tree
    assert PathGuard([root]).resolve("src/new/b.py") == (root / "src" / "new" / "b.py").resolve()


@pytest.mark.parametrize("path", ["../secret/key.txt", "src/../../secret/key.txt", "/etc/passwd", "..", "src/../../"])
def test_escapes_are_refused(tree, path):
    root, _ = tree
    with pytest.raises(PathViolation) as info:
        PathGuard([root]).resolve(path)
    assert info.value.reason == "outside the allowed directories"
    assert info.value.path == path


def test_symlink_leaving_the_root_is_refused(tree):
    root, outside = tree
    (root / "link").symlink_to(outside)
    (root / "keyfile").symlink_to(outside / "key.txt")
    guard = PathGuard([root])
    with pytest.raises(PathViolation):
        guard.resolve("link/key.txt")
    with pytest.raises(PathViolation):
        guard.resolve("keyfile")
    with pytest.raises(PathViolation):  # even for a file that does not exist yet behind the link
        guard.resolve("link/new.txt")


def test_symlink_staying_inside_the_root_is_allowed(tree):
    root, _ = tree
    (root / "alias").symlink_to(root / "src")
    assert PathGuard([root]).resolve("alias/a.py") == (root / "src" / "a.py").resolve()


def test_second_root_allows_its_own_absolute_paths(tree):
    root, outside = tree
    guard = PathGuard([root, outside])
    assert guard.resolve(str(outside / "key.txt")) == (outside / "key.txt").resolve()
    assert guard.is_allowed("../secret/key.txt")  # relative to the first root, lands in the second


def test_root_given_through_a_symlink(tree, tmp_path):
    root, _ = tree
    via = tmp_path / "via"
    via.symlink_to(root)
    assert PathGuard([via]).resolve("src/a.py") == (root / "src" / "a.py").resolve()


def test_symlink_loop_is_a_violation_not_a_crash(tree):
    root, _ = tree
    (root / "loop1").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop1")
    guard = PathGuard([root])
    # Python 3.11 resolves loops non-strictly without raising; either way nothing escapes.
    try:
        resolved = guard.resolve("loop1/x")
    except PathViolation as exc:
        assert exc.path == "loop1/x"
    else:
        assert resolved.is_relative_to(root.resolve())


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", 3, None, ["a"]])
def test_bad_values_are_violations(tree, bad):
    root, _ = tree
    with pytest.raises(PathViolation):
        PathGuard([root]).resolve(bad)


def test_needs_a_root():
    with pytest.raises(ValueError, match="at least one"):
        PathGuard([])


def test_pathlike_is_accepted(tree):
    root, _ = tree
    assert PathGuard([root]).resolve(Path("src") / "a.py").name == "a.py"


def test_violation_message_names_path_and_reason(tree):
    root, _ = tree
    with pytest.raises(PathViolation) as info:
        PathGuard([root]).resolve("../secret")
    text = str(info.value)
    assert "'../secret'" in text and "outside the allowed directories" in text and os.fspath(root.resolve()) in text


def test_path_positions_reads_schema_marks():
    schema = {"type": "object", "properties": {
        "path": {"type": "string", "format": "path"},
        "paths": {"type": "array", "items": {"type": "string", "format": "path"}},
        "maybe": {"anyOf": [{"type": "string", "format": "path"}, {"type": "null"}]},
        "query": {"type": "string"},
    }}
    assert path_positions(schema) == [PathPosition(("path",)), PathPosition(("paths", EACH)), PathPosition(("maybe",), strict=False)]
    assert path_positions({"type": "object"}) == []
