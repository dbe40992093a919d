"""Write small, valid GGUF headers (metadata only) for tests of code that reads them.

Independent of the reader under test: it follows the GGUF layout directly
(magic, version 3, tensor count, key count, then typed key/value pairs).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _typed(value: Any) -> bytes:
    if isinstance(value, bool):
        return struct.pack("<I?", 7, value)
    if isinstance(value, int):
        return struct.pack("<Iq", 11, value)
    if isinstance(value, float):
        return struct.pack("<Id", 12, value)
    if isinstance(value, str):
        return struct.pack("<I", 8) + _string(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return struct.pack("<IIQ", 9, 8, len(value)) + b"".join(_string(v) for v in value)
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return struct.pack("<IIQ", 9, 5, len(value)) + b"".join(struct.pack("<i", v) for v in value)
    raise TypeError(f"no GGUF encoding for {value!r}")


def write_gguf(path: Path, metadata: dict[str, Any]) -> Path:
    body = b"".join(_string(key) + _typed(value) for key, value in metadata.items())
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(metadata)) + body)
    return path
