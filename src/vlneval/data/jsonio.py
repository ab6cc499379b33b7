"""The former home of the file reader, kept so that other modules' imports keep working: every
name here is :mod:`vlneval.io`'s (import it from there)."""

from __future__ import annotations

from vlneval.io import (
    Limits,
    atomic_write_bytes,
    atomic_write_text,
    decode_json,
    gunzip,
    iter_chunks,
    iter_records,
    load_json,
    read_bytes,
)

__all__ = [
    "read_bytes",
    "gunzipped",
    "decode_json",
    "iter_chunks",
    "iter_records",
    "load_json",
    "atomic_write_bytes",
    "atomic_write_text",
]


def gunzipped(raw: bytes, source: str) -> bytes:
    """``raw`` decompressed (within :class:`~vlneval.io.Limits`) when it is gzip, else as it is.

    Example:
        >>> import gzip
        >>> gunzipped(gzip.compress(b"[1]"), "a.json.gz"), gunzipped(b"[2]", "b.json")
        (b'[1]', b'[2]')
    """
    if raw[:2] == b"\x1f\x8b":
        return gunzip(raw, source, Limits.from_env().max_bytes)
    return raw
