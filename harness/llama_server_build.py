"""Build llama.cpp's ``llama-server`` from the source the llama-cpp-python sdist vendors.

``make llama-server`` runs this. The server is built from the same llama.cpp
the embedded engine runs (the sdist of the installed llama-cpp-python), with
portable CPU flags: a build for the build machine's CPU dies with SIGILL on
another one. Only the ``llama-server`` target is built, statically (one file
to cache), without curl, OpenSSL or the web UI (no network at build time).
The binary goes to ``~/.cache/utp/llama-server/bin/`` (XDG respected) with a
``build.json`` beside it saying what was built, from which source, and how
long it took; a binary built from the same source is kept.

    python -m harness.llama_server_build [--sdist PATH] [--jobs N]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from utp.backends.llama_server import cache_root
from utp.fileio import write_text_atomic

DEFAULT_VERSION = "0.3.36"
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",  # portable: no -march=native (SIGILL on other CPUs)
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
]


def _say(message: str) -> None:
    print(f"llama-server: {message}", file=sys.stderr, flush=True)


def installed_version() -> str:
    try:
        return importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        return DEFAULT_VERSION


def fetch_sdist(version: str, into: Path) -> Path:
    """The llama-cpp-python sdist of ``version``, through pip (its ordinary client)."""
    _say(f"downloading the llama-cpp-python {version} sdist (pip download)...")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                    "--dest", str(into), f"llama-cpp-python=={version}"], check=True)
    found = sorted(into.glob("llama_cpp_python-*.tar.gz"))
    if not found:
        raise SystemExit(f"llama-server: pip download left no llama_cpp_python-*.tar.gz in {into}")
    return found[0]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def extract_llama_cpp(sdist: Path, into: Path) -> Path:
    """The sdist's ``vendor/llama.cpp`` directory, extracted under ``into``."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if "/vendor/llama.cpp/" in m.name]
        if not members:
            raise SystemExit(f"llama-server: {sdist} has no vendor/llama.cpp (not a llama-cpp-python sdist?)")
        archive.extractall(into, members=members, filter="data")
    return next(into.glob("*/vendor/llama.cpp"))


def build(sdist: Path, jobs: int) -> dict[str, object]:
    """Configure and build; returns the record written to ``build.json``."""
    root = cache_root()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="utp-llama-server-") as work:
        source = extract_llama_cpp(sdist, Path(work))
        build_dir = Path(work) / "build"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(["cmake", "-S", str(source), "-B", str(build_dir), *generator, *CMAKE_FLAGS], check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "llama-server", "-j", str(jobs)], check=True)
        built = build_dir / "bin" / "llama-server"
        target = root / "bin" / "llama-server"
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(".llama-server.new")
        shutil.copy2(built, staging)
        os.replace(staging, target)  # never a half-copied binary where the harness looks
    return {
        "binary": str(target),
        "sdist": sdist.name,
        "sdist_sha256": sha256_of(sdist),
        "cmake_flags": CMAKE_FLAGS,
        "jobs": jobs,
        "build_seconds": round(time.monotonic() - started, 1),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.llama_server_build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", help="a llama-cpp-python sdist (.tar.gz); default: pip download the installed version's")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compile jobs (default: all cores)")
    parser.add_argument("--force", action="store_true", help="rebuild even if a binary from the same source exists")
    args = parser.parse_args(argv)
    record_path = cache_root() / "build.json"
    with tempfile.TemporaryDirectory(prefix="utp-sdist-") as download:
        sdist = Path(args.sdist) if args.sdist else fetch_sdist(installed_version(), Path(download))
        if not sdist.is_file():
            raise SystemExit(f"llama-server: --sdist {sdist} does not exist")
        try:
            previous = json.loads(record_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = {}
        binary = Path(str(previous.get("binary", "")))
        if not args.force and binary.is_file() and previous.get("sdist_sha256") == sha256_of(sdist):
            _say(f"already built from {sdist.name} ({previous.get('build_seconds')} s on {previous.get('built_at')}): {binary}")
            return 0
        _say(f"building from {sdist.name} with {args.jobs} job(s) (portable CPU flags; about 15-30 minutes on 2 cores)...")
        record = build(sdist, args.jobs)
    write_text_atomic(record_path, json.dumps(record, indent=1))
    _say(f"built in {record['build_seconds']} s: {record['binary']} (recorded in {record_path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
