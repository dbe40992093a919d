"""`make llama-server`'s build script: source extraction, the portable flags, and the skip when built."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from harness import llama_server_build as build


def make_tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_the_vendored_llama_cpp_is_extracted(tmp_path: Path) -> None:
    sdist = make_tar(tmp_path / "llama_cpp_python-9.9.9.tar.gz", {
        "llama_cpp_python-9.9.9/pyproject.toml": b"",
        "llama_cpp_python-9.9.9/vendor/llama.cpp/CMakeLists.txt": b"project(llama.cpp)",
    })
    source = build.extract_llama_cpp(sdist, tmp_path / "out")
    assert (source / "CMakeLists.txt").read_bytes() == b"project(llama.cpp)"
    assert not (tmp_path / "out" / "llama_cpp_python-9.9.9" / "pyproject.toml").exists()


def test_an_archive_without_llama_cpp_is_named(tmp_path: Path) -> None:
    sdist = make_tar(tmp_path / "other.tar.gz", {"other-1/setup.py": b""})
    with pytest.raises(SystemExit, match="no vendor/llama.cpp"):
        build.extract_llama_cpp(sdist, tmp_path / "out")


def test_the_flags_are_portable_and_offline() -> None:
    assert "-DGGML_NATIVE=OFF" in build.CMAKE_FLAGS and "-DLLAMA_CURL=OFF" in build.CMAKE_FLAGS
    assert "-DLLAMA_USE_PREBUILT_UI=OFF" in build.CMAKE_FLAGS  # no asset download at build time


def test_a_binary_built_from_the_same_source_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sdist = make_tar(tmp_path / "llama_cpp_python-9.9.9.tar.gz", {"x/vendor/llama.cpp/CMakeLists.txt": b""})
    binary = tmp_path / "cache" / "utp" / "llama-server" / "bin" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    (binary.parent.parent / "build.json").write_text(json.dumps({"binary": str(binary), "sdist_sha256": build.sha256_of(sdist)}))
    monkeypatch.setattr(build, "build", lambda *a: pytest.fail("rebuilt although the same source was built"))
    assert build.main(["--sdist", str(sdist)]) == 0
    assert "already built" in capsys.readouterr().err
