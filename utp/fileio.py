"""Writing files so that an interrupted process never leaves half of one.

Cassettes, reports, tuned profiles and scenario files are all read by other
runs later; a crash or Ctrl-C mid-write must leave either the old file or the
new one. Hence: a temporary file in the same directory, fsync, then
``os.replace`` (atomic on POSIX and Windows).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: mkstemp creates files 0600; what we write is meant to be read by everyone
_MODE = 0o644


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8, ``\\n`` line ends) in one step; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, _MODE)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path
