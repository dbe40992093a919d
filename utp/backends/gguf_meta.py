"""Read a GGUF file's metadata keys without loading the model.

The embedded server must know whether a model's chat template can render
tools before it decides how to answer a request with ``tools`` (Ollama
decides this from the model's template, not from the request), and tests
must check that decision on small files made in a temporary directory.
Loading a model for that would cost seconds and need llama.cpp; the GGUF
header is a plain key/value list at the start of the file.

Format (GGUF v2/v3, little-endian): ``b"GGUF"``, uint32 version, uint64
tensor count, uint64 key/value count, then each pair as a string key, a
uint32 value type and the value. Strings are a uint64 length plus UTF-8
bytes; arrays are a uint32 element type, a uint64 count and the elements.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any, BinaryIO

CHAT_TEMPLATE_KEY = "tokenizer.chat_template"

#: value type -> struct format of a fixed-size scalar
_SCALARS: dict[int, str] = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a GGUF this reader understands; the message says where it failed."""


def _read(handle: BinaryIO, size: int, what: str) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise GGUFError(f"truncated at byte {handle.tell()} while reading {what}")
    return data


def _unpack(handle: BinaryIO, fmt: str, what: str) -> Any:
    return struct.unpack(fmt, _read(handle, struct.calcsize(fmt), what))[0]


def _length(handle: BinaryIO, what: str, unit: int = 1) -> int:
    """A count of ``unit``-byte items that must fit in the rest of the file."""
    count = _unpack(handle, "<Q", what)
    position = handle.tell()
    end = handle.seek(0, 2)
    handle.seek(position)
    if count * unit > end - position:
        raise GGUFError(f"{what} claims {count:,} items at byte {position}, more than the file holds")
    return count


def _string(handle: BinaryIO, what: str) -> str:
    return _read(handle, _length(handle, what), what).decode("utf-8", "replace")


def _value(handle: BinaryIO, kind: int, key: str, keep: bool) -> Any:
    """Read (``keep``) or skip one value; skipped arrays are not materialised."""
    if kind in _SCALARS:
        return _unpack(handle, _SCALARS[kind], key)
    if kind == _STRING:
        if keep:
            return _string(handle, key)
        handle.seek(_length(handle, key), 1)
        return None
    if kind == _ARRAY:
        element = _unpack(handle, "<I", key)
        width = struct.calcsize(_SCALARS[element]) if element in _SCALARS else 8
        count = _length(handle, key, width)  # every element takes at least `width` bytes
        if element in _SCALARS and not keep:
            handle.seek(width * count, 1)
            return None
        items = [_value(handle, element, key, keep) for _ in range(count)]
        return items if keep else None
    raise GGUFError(f"key {key!r} has unknown value type {kind}")


def read_metadata(path: str | Path, keys: set[str] | None = None) -> dict[str, Any]:
    """The metadata pairs of ``path`` (only ``keys`` when given; others are skipped)."""
    path = Path(path)
    found: dict[str, Any] = {}
    with path.open("rb") as handle:
        if _read(handle, 4, "the magic") != b"GGUF":
            raise GGUFError(f"{path}: not a GGUF file (no GGUF magic)")
        version = _unpack(handle, "<I", "the version")
        if version < 2:
            raise GGUFError(f"{path}: GGUF version {version} is not supported (2 or later)")
        _unpack(handle, "<Q", "the tensor count")
        pairs = _unpack(handle, "<Q", "the key count")
        try:
            for _ in range(pairs):
                key = _string(handle, "a key")
                kind = _unpack(handle, "<I", f"the type of {key!r}")
                wanted = keys is None or key in keys
                value = _value(handle, kind, key, wanted)
                if wanted:
                    found[key] = value
                    if keys is not None and keys <= found.keys():
                        break
        except GGUFError as exc:
            raise GGUFError(f"{path}: {exc}") from None
    return found


def chat_template(path: str | Path) -> str:
    """The GGUF's ``tokenizer.chat_template`` ("" when it ships none or the header is unreadable:
    llama.cpp's own load then reports what is wrong with the file)."""
    try:
        value = read_metadata(path, {CHAT_TEMPLATE_KEY}).get(CHAT_TEMPLATE_KEY)
    except GGUFError:
        return ""
    return value if isinstance(value, str) else ""


_JINJA_TOOLS = re.compile(r"\{[{%][^}]*?\btools\b")


def template_renders_tools(template: str) -> bool:
    """Whether a Jinja chat template uses the ``tools`` variable in an expression or statement.

    This is what makes a template able to put tool definitions in front of
    the model (``{%- if tools %}`` … ``{{ tool | tojson }}``); a template that
    never reads ``tools`` drops them, so a server must refuse them instead.
    """
    return bool(_JINJA_TOOLS.search(template))
