"""Reading map images as brightness arrays: PGM/PPM natively, other formats with Pillow."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vlneval.errors import InvalidInputError, MissingDataError, VLNEvalError

__all__ = ["read_gray", "read_netpbm"]


def _tokens(data: bytes, count: int) -> tuple[list[int], int]:
    """The first ``count`` header integers of a Netpbm file and the offset after them."""
    out: list[int] = []
    pos = 2
    while len(out) < count:
        while pos < len(data) and data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        start = pos
        while pos < len(data) and not data[pos : pos + 1].isspace():
            pos += 1
        out.append(int(data[start:pos]))
    return out, pos + 1


def read_netpbm(data: bytes, source: str = "<bytes>") -> np.ndarray:
    """Brightness in [0, 1] of a PGM (P2, P5) or PPM (P3, P6) image, top row first.

    Example:
        >>> read_netpbm(b"P2 3 1 255 0 128 255").round(2).tolist()
        [[0.0, 0.5, 1.0]]
    """
    magic = data[:2]
    if magic not in (b"P2", b"P5", b"P3", b"P6"):
        raise InvalidInputError(f"not a PGM/PPM image (magic {magic!r})", source=str(source))
    try:
        (w, h, maxval), pos = _tokens(data, 3)
        channels = 3 if magic in (b"P3", b"P6") else 1
        n = w * h * channels
        if magic in (b"P2", b"P3"):
            values = np.array(data[pos:].split()[:n], dtype=np.float64)
        else:
            dtype = np.dtype(">u2") if maxval > 255 else np.dtype(np.uint8)
            values = np.frombuffer(data, dtype=dtype, count=n, offset=pos).astype(np.float64)
        img = values.reshape(h, w, channels).mean(axis=2) / maxval
    except (ValueError, IndexError) as exc:
        raise InvalidInputError(f"malformed PGM/PPM image ({exc})", source=str(source)) from None
    return img


def read_gray(path: Path) -> np.ndarray:
    """Brightness in [0, 1] of a map image, top row first."""
    if not path.exists():
        raise MissingDataError(f"{path}: no such file")
    data = path.read_bytes()
    if data[:2] in (b"P2", b"P5", b"P3", b"P6"):
        return read_netpbm(data, str(path))
    try:
        from PIL import Image
    except ImportError as exc:
        raise VLNEvalError(
            f"{path}: reading this image format needs Pillow (or use a .pgm map)"
        ) from exc
    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("L"), dtype=np.float64) / 255.0
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"not a readable image ({exc})", source=str(path)) from None
