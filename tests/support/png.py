"""Read a PNG's pixels with the standard library (and numpy), so the rendering test needs no imaging package.

Handles what Chromium writes: 8-bit, non-interlaced RGB or RGBA.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}  # colour type → bytes per pixel at 8 bits


def _paeth_row(line: bytearray, prev: bytes, bpp: int) -> None:
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF


def _average_row(line: bytearray, prev: bytes, bpp: int) -> None:
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF


def read_png(path: Path) -> np.ndarray:
    """The image as a (height, width, channels) uint8 array."""
    data = path.read_bytes()
    if not data.startswith(SIGNATURE):
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = 8, bytearray(), None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if header is None:
        raise ValueError(f"{path}: no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"{path}: only 8-bit non-interlaced RGB/RGBA is read (got depth {depth}, type {colour})")
    bpp = CHANNELS[colour]
    raw = zlib.decompress(bytes(idat))
    stride = width * bpp
    rows = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=start + 1)
        if kind == 0:
            out = line.copy()
        elif kind == 1:
            out = (np.cumsum(line.reshape(-1, bpp), axis=0, dtype=np.uint64) % 256).astype(np.uint8).reshape(-1)
        elif kind == 2:
            out = line + prev
        else:
            buf = bytearray(line.tobytes())
            (_average_row if kind == 3 else _paeth_row)(buf, prev.tobytes(), bpp)
            out = np.frombuffer(bytes(buf), dtype=np.uint8)
        rows[y] = out
        prev = out
    return rows.reshape(height, width, bpp)
