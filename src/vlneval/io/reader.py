"""A file's JSON text with bounded cost (:func:`read_bytes`, :func:`gunzip`) and its decoding
(:func:`decode_json`: msgspec, or the explaining pass).
"""

from __future__ import annotations

import io
import os
import select
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vlneval.errors import InvalidInputError, MissingDataError
from vlneval.io.explaining import explain
from vlneval.io.limits import MIB, Limits
from vlneval.io.text import PATH_CLIP, clip

BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
READ_STEP = 1 << 20
_WRITER_WAIT = 10.0  # seconds a FIFO or device may take to begin
GUNZIP_STEP = 16 << 20  # a bomb stops at most this far past the limit


class TruncatedGzipError(InvalidInputError):
    """A gzip stream that ends before its last member does (an incomplete upload, say)."""


def _size(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{n:,} bytes"


def _too_large(source: str, limit: int) -> InvalidInputError:
    return InvalidInputError(
        f"{source}: holds more than {_size(limit)} of JSON, the limit (set "
        "VLNEVAL_MAX_FILE_BYTES to read larger files)"
    )


def read_bytes(path: str | Path, limits: Limits | None = None) -> bytes:
    """The JSON text of ``path``: gunzipped when gzip, without a UTF-8 byte-order mark.

    Raises:
        MissingDataError: no such file.
        InvalidInputError: a folder, a damaged gzip stream, or more than ``max_bytes``.

    Example:
        >>> import gzip, tempfile
        >>> p = Path(tempfile.mkdtemp()) / "a.json.gz"
        >>> _ = p.write_bytes(gzip.compress(BOM + b"[1]"))
        >>> read_bytes(p)
        b'[1]'
    """
    path = Path(path)
    lim = limits or Limits.from_env()
    source = clip(str(path), PATH_CLIP)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise MissingDataError(f"{source}: no such file") from None
    except OSError as exc:
        raise InvalidInputError(f"{source}: cannot be read ({exc.strerror or exc})") from exc
    if stat.S_ISDIR(st.st_mode):
        raise InvalidInputError(f"{source}: is a folder, expected a JSON file")
    # A regular file may be large only when gzip; its compressed bytes are read whole.
    raw = _read_capped(path, lim.max_bytes, source, regular=stat.S_ISREG(st.st_mode))
    if raw[:2] != GZIP_MAGIC and len(raw) > lim.max_bytes:
        raise _too_large(source, lim.max_bytes)
    return json_text(raw, source, lim)


def json_text(raw: bytes, source: str, limits: Limits | None = None) -> bytes:
    """The JSON text of a file's bytes: gunzipped when gzip (by magic number, see
    :func:`gunzip`), without a UTF-8 byte-order mark.

    Example:
        >>> import gzip
        >>> json_text(gzip.compress(BOM + b"[1]"), "a.json.gz"), json_text(b"[2]", "b.json")
        (b'[1]', b'[2]')
    """
    if raw[:2] == GZIP_MAGIC:
        raw = gunzip(raw, source, (limits or Limits.from_env()).max_bytes)
    return raw[len(BOM) :] if raw[:3] == BOM else raw


def _read_capped(path: Path, limit: int, source: str, *, regular: bool) -> bytes:
    """All of a regular file; a pipe read up to one byte past ``limit``."""
    try:
        if regular:
            # Unbuffered: a buffered reader would join its buffer to the rest, a copy.
            with open(path, "rb", buffering=0) as fh:
                head = fh.read(2)
                if head != GZIP_MAGIC and os.fstat(fh.fileno()).st_size > limit:
                    raise _too_large(source, limit)
                fh.seek(0)  # one read: ``head + rest`` would copy the whole file again
                return fh.readall()
        with open(_waited(path, source), "rb") as fh, io.BytesIO() as buf:
            while part := fh.read(READ_STEP):
                buf.write(part)
                if buf.tell() > limit:
                    if buf.getbuffer()[:2] != GZIP_MAGIC:
                        raise _too_large(source, limit)
                    break  # gzip: the limit is on what it holds (a pipe is read up to it)
            return buf.getvalue()  # no copy: the buffer becomes the bytes
    except OSError as exc:
        raise InvalidInputError(f"{source}: cannot be read ({exc.strerror or exc})") from exc


def _waited(path: Path, source: str) -> int:
    """A descriptor of a FIFO or device, once it has something to read: opening a FIFO waits
    for a writer, which may never come, so it is opened without waiting and given
    :data:`_WRITER_WAIT` seconds to begin (or to close: then it is empty)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not select.select([fd], [], [], _WRITER_WAIT)[0]:
        os.close(fd)
        raise InvalidInputError(
            f"{source}: is not a regular file and gave nothing to read in {_WRITER_WAIT:g} s "
            "(a FIFO without a writer?), expected a JSON file"
        )
    os.set_blocking(fd, True)
    return fd


def gunzip(
    raw: bytes, source: str, limit: int, *, too_large: Callable[[], Exception] | None = None
) -> bytes:
    """Decompresses gzip data (every member) without ever holding more than ``limit`` bytes.

    Args:
        raw: the gzip bytes.
        source: the file, for messages.
        limit: most decompressed bytes.
        too_large: the error raised past ``limit`` (default: one that names the limit and
            its environment variable).

    Raises:
        TruncatedGzipError: the stream ends inside a member.
        InvalidInputError: not valid gzip, or past ``limit``.

    Example:
        >>> import gzip
        >>> gunzip(gzip.compress(b"[1]") + gzip.compress(b"[2]"), "a.json.gz", 100)
        b'[1][2]'
    """
    data = raw
    # One growing buffer, handed over as the bytes at the end: no list of pieces joined into a
    # second copy, and a bomb stops one piece past the limit, its buffer freed before the error.
    with io.BytesIO() as out:
        try:
            while data:
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                chunk = d.decompress(data, GUNZIP_STEP)
                while True:
                    if out.tell() + len(chunk) > limit:
                        out.close()
                        raise (too_large or (lambda: _too_large(source, limit)))()
                    out.write(chunk)
                    if d.eof or not d.unconsumed_tail:
                        break
                    chunk = d.decompress(d.unconsumed_tail, GUNZIP_STEP)
                if not d.eof:
                    raise TruncatedGzipError(f"{source}: not a valid gzip file (it is truncated)")
                data = d.unused_data.lstrip(b"\x00")
                if data and data[:2] != GZIP_MAGIC:  # zlib would say "incorrect header check"
                    raise InvalidInputError(
                        f"{source}: not a valid gzip file ({len(data):,} bytes follow the end "
                        "of its gzip data; the file was damaged or appended to)"
                    )
        except zlib.error as exc:
            raise InvalidInputError(f"{source}: not a valid gzip file ({exc})") from exc
        return out.getvalue()


def decode_json(raw: bytes, source: str, *, a_list: bool = False) -> Any:
    """``raw`` decoded by msgspec, or by the explaining pass when msgspec rejects it
    (``a_list``: the caller reads one JSON list only; see :func:`explain`).

    Example:
        >>> decode_json(b'{"a": [1, 2.5]}', "x.json")
        {'a': [1, 2.5]}
    """
    import msgspec

    try:
        return msgspec.json.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return explain(raw, source, a_list=a_list)


def load_json(path: str | Path) -> Any:
    """Reads a ``.json`` or ``.json.gz`` file with a clear error on failure."""
    return decode_json(read_bytes(path), str(path))
