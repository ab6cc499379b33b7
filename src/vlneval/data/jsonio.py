"""Reading JSON input files with clear errors, and writing outputs atomically.

Large prediction and episode files are split into their top-level elements first (msgspec's
``Raw``: zero-copy slices of the buffer) and decoded a chunk at a time, so that the full Python
object tree of a 200,000-episode file never exists at once.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vlneval.errors import InvalidInputError, MissingDataError, VLNEvalError

__all__ = [
    "read_bytes",
    "decode_json",
    "iter_chunks",
    "iter_records",
    "load_json",
    "atomic_write_bytes",
    "atomic_write_text",
]

CHUNK = 8192


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path``, gunzipped when the file is gzip (detected by magic number)."""
    if not path.exists():
        raise MissingDataError(f"{path}: no such file")
    if path.is_dir():
        raise InvalidInputError(f"{path}: is a folder, expected a JSON file")
    return gunzipped(path.read_bytes(), str(path))


def gunzipped(raw: bytes, source: str) -> bytes:
    """``raw`` decompressed when it is gzip (detected by its magic number), else as it is.

    Raises:
        InvalidInputError: a damaged gzip stream, named by ``source``.

    Example:
        >>> gunzipped(gzip.compress(b"[1]"), "a.json.gz"), gunzipped(b"[2]", "b.json")
        (b'[1]', b'[2]')
    """
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InvalidInputError(f"{source}: not a valid gzip file ({exc})") from exc
    return raw


def _diagnose(raw: bytes, source: str) -> Any:
    """Explains why strict decoding failed; returns the lenient parse when only NaN/inf did."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{source}: not UTF-8 text (byte {exc.start})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from exc
    except RecursionError as exc:
        raise InvalidInputError(f"{source}: JSON nested too deeply") from exc
    except ValueError as exc:  # e.g. an integer literal of thousands of digits
        raise InvalidInputError(f"{source}: a JSON value cannot be read ({exc})") from exc


def decode_json(raw: bytes, source: str) -> Any:
    """Decodes JSON strictly; NaN/Infinity literals are decoded leniently so that the caller's
    validation can name the field that holds them."""
    import msgspec

    try:
        return msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return _diagnose(raw, source)


def load_json(path: str | Path) -> Any:
    """Reads a ``.json`` or ``.json.gz`` file with a clear error on failure."""
    path = Path(path)
    return decode_json(read_bytes(path), str(path))


def iter_chunks(
    raw: bytes, source: str, *, chunk: int = CHUNK, expected: str = "a JSON list"
) -> Iterator[list[Any]]:
    """Top-level array elements of ``raw`` in decoded chunks.

    Raises:
        InvalidInputError: ``raw`` is not JSON, or not an array.

    Example:
        >>> list(iter_chunks(b'[1, 2, 3]', "x.json", chunk=2))
        [[1, 2], [3]]
    """
    import msgspec

    if raw.lstrip()[:1] != b"[":
        value = decode_json(raw, source)
        if not isinstance(value, list):
            raise InvalidInputError(f"{source}: expected {expected}, got a {_kind(value)}")
        return _slices(value, chunk)
    try:
        parts = msgspec.json.decode(raw, type=list[msgspec.Raw])
    except (msgspec.DecodeError, RecursionError):
        return _slices(_diagnose(raw, source), chunk)
    return _decode_parts(parts, chunk, source)


def iter_records(raw: bytes, source: str, *, expected: str = "a JSON list") -> Iterator[list[Any]]:
    """Records of a JSON array or of a JSON-lines file, in decoded chunks.

    Example:
        >>> lines = b'{"a": 1}' + bytes([10]) + b'{"a": 2}'
        >>> list(iter_records(lines, "x.jsonl"))
        [[{'a': 1}, {'a': 2}]]
    """
    import msgspec

    if raw.lstrip()[:1] == b"{":
        try:
            value = msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            return iter([_jsonl(raw, source)])
        if isinstance(value, dict) and source.endswith((".jsonl", ".jsonl.gz")):
            return iter([[value]])  # a JSON-lines file of one record
        raise InvalidInputError(f"{source}: expected {expected}, got a {_kind(value)}")
    return iter_chunks(raw, source, expected=expected)


def _jsonl(raw: bytes, source: str) -> list[Any]:
    import msgspec

    decoder = msgspec.json.Decoder()
    rows = []
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(decoder.decode(line))
            except (msgspec.DecodeError, RecursionError) as exc:
                raise InvalidInputError(f"{source}: line {lineno}: not valid JSON ({exc})") from exc
    return rows


def _kind(value: Any) -> str:
    names: dict[type, str] = {dict: "JSON object", list: "JSON list", str: "string"}
    return names.get(type(value), "JSON value")


def _slices(values: list[Any], chunk: int) -> Iterator[list[Any]]:
    for i in range(0, len(values), chunk):
        yield values[i : i + chunk]


def _decode_parts(parts: list[Any], chunk: int, source: str) -> Iterator[list[Any]]:
    import msgspec

    decoder = msgspec.json.Decoder()
    for i in range(0, len(parts), chunk):
        block = b"[" + b",".join(bytes(p) for p in parts[i : i + chunk]) + b"]"
        try:
            yield decoder.decode(block)
        except (msgspec.MsgspecError, RecursionError):
            # Valid JSON that msgspec will not hold (an integer beyond 64 bits, say): the
            # lenient decoder reads it, or names what cannot be read.
            yield _diagnose(block, source)
        for k in range(i, min(i + chunk, len(parts))):
            parts[k] = None


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` atomically (temporary file in the same folder, then rename)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise VLNEvalError(f"{path}: cannot write the file ({exc.strerror or exc})") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise VLNEvalError(f"{path}: cannot write the file ({exc.strerror or exc})") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Writes UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))
