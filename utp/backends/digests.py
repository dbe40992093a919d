"""sha256 of model files, remembered beside them.

Provenance names the exact weights of every run by their sha256; hashing a
GGUF of hundreds of megabytes on each run would cost seconds, so a digest is
kept in a small JSON keyed by the file's size and mtime.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from utp.fileio import write_text_atomic


def _digest_cache_path(path: Path) -> Path:
    beside = path.with_name(path.name + ".sha256.json")
    if os.access(path.parent, os.W_OK):
        return beside
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "utp" / "digests"
    return home / (hashlib.sha256(str(path).encode()).hexdigest()[:16] + ".json")


def file_sha256(path: str | Path) -> str:
    """sha256 of a (large) file, cached in a JSON beside it keyed by size and mtime.

    Hashing a 250 MB GGUF takes about a second; provenance needs it on every
    run, so it is computed once per file version.
    """
    path = Path(path)
    stat = path.stat()
    key = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    cache = _digest_cache_path(path)
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(cached, dict) and all(cached.get(k) == v for k, v in key.items()) and isinstance(cached.get("sha256"), str):
            return cached["sha256"]
    except (OSError, ValueError):
        pass
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    record_sha256(path, value)
    return value


def record_sha256(path: str | Path, value: str) -> None:
    """Remember a digest computed while the file was written (no second read)."""
    path = Path(path)
    stat = path.stat()
    try:
        write_text_atomic(
            _digest_cache_path(path),
            json.dumps({"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "path": str(path), "sha256": value}, indent=1),
        )
    except OSError:
        pass  # a read-only location only costs a re-hash next time
