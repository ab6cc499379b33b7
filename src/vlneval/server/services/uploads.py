"""The checks every uploaded predictions file passes before it is stored or decoded.

An upload is refused, with one clear message naming the file and where, when it is empty or too
large, compressed in a way the scorer does not read, a gzip bomb (it would decompress past the
limit), not UTF-8, nests too deeply, holds too many values, has a huge number or string literal,
or is not JSON. The limits come from :class:`ServerConfig`. A UTF-8 byte-order mark is dropped,
as :mod:`vlneval.io` drops it.
"""

from __future__ import annotations

import codecs
import mmap
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from vlneval._jsonshape import ScanLimits, scan_json
from vlneval.errors import InvalidInputError
from vlneval.io import BOM, GZIP_MAGIC, TruncatedGzipError, decode_json, explain, gunzip, no_json
from vlneval.io import position as _position
from vlneval.server.core.config import MIB, ServerConfig
from vlneval.server.services.budget import StepBudget, check_steps, is_bomb, too_many_bytes

__all__ = ["UploadLimits", "check_upload", "check_stored", "gunzip_limited", "position"]

STEP = MIB  # bytes decompressed, decoded or copied at a time when checking a stored upload


def position(text: Any, offset: int) -> str:
    """``line L, column C (byte N)`` of an offset in bytes or in a memory-mapped file."""
    return _position(text if isinstance(text, bytes) else bytes(text[:offset]), offset)


OTHER_FORMATS = (
    (b"PK\x03\x04", "a ZIP archive"),
    (b"BZh", "a bzip2 file"),
    (b"\xfd7zXZ\x00", "an xz file"),
    (b"\x28\xb5\x2f\xfd", "a zstd file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
)


@dataclass(frozen=True)
class UploadLimits:
    """The size and shape limits of an upload.

    Example:
        >>> UploadLimits(max_upload_bytes=10).max_upload_bytes
        10
    """

    max_upload_bytes: int = ServerConfig.max_upload_bytes  # the server's defaults
    max_decompressed_bytes: int = ServerConfig.max_decompressed_bytes
    max_depth: int = ServerConfig.max_json_depth
    max_values: int = ServerConfig.max_json_values
    max_string: int = ServerConfig.max_string_bytes
    max_number: int = ServerConfig.max_number_chars
    depth_advice: str = "a predictions file needs 4"  # what the refused nesting should be

    @classmethod
    def from_config(cls, cfg: ServerConfig) -> UploadLimits:
        """The limits a server configuration sets."""
        return cls(
            cfg.max_upload_bytes,
            cfg.max_decompressed_bytes,
            cfg.max_json_depth,
            cfg.max_json_values,
            cfg.max_string_bytes,
            cfg.max_number_chars,
        )


def _size(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{n:,} bytes"


def gunzip_limited(raw: bytes, limit: int, name: str) -> bytes:
    """Decompresses gzip data (all members) without ever holding more than ``limit`` bytes
    (:func:`vlneval.io.gunzip`, with this server's message past the limit).

    Raises:
        InvalidInputError: not valid gzip, or it decompresses to more than ``limit`` bytes.

    Example:
        >>> import gzip
        >>> gunzip_limited(gzip.compress(b"[1]"), 100, "p.json.gz")
        b'[1]'
    """

    try:  # past the limit, the ratio is at least the limit's over the compressed size
        return gunzip(raw, name, limit, too_large=lambda: _bomb(limit, name, limit / len(raw)))
    except TruncatedGzipError:
        raise _truncated(name) from None


def _bomb(limit: int, name: str, ratio: float) -> InvalidInputError:
    """Past the server's limit: a gzip bomb only at a ``ratio`` no predictions file reaches."""
    if not is_bomb(ratio):
        return InvalidInputError(
            f"decompresses to more than {_size(limit)} of JSON; this server accepts at most that",
            source=name,
        )
    return InvalidInputError(
        f"decompresses to more than {_size(limit)} (the limit of this server); "
        "is it a gzip bomb? upload the predictions file itself",
        source=name,
    )


def _truncated(name: str) -> InvalidInputError:
    return InvalidInputError("the gzip data is truncated (the upload is incomplete)", source=name)


def _check_size(size: int, name: str, lim: UploadLimits) -> None:
    """Refuses an upload larger than the server accepts."""
    if size > lim.max_upload_bytes:
        raise InvalidInputError(
            f"is {_size(size)}; this server accepts uploads of at most "
            f"{_size(lim.max_upload_bytes)}",
            source=name,
        )


def _check_plain(
    head: bytes, size: int, name: str, lim: UploadLimits, phase: StepBudget | None = None
) -> None:
    """Refuses an upload that is not gzip and not JSON text of an accepted size (``head``: its
    first bytes, ``size``: its length; ``phase``: a budget below the server's limit)."""
    for magic, what in OTHER_FORMATS:
        if head.startswith(magic):
            raise InvalidInputError(
                f"is {what}; upload the JSON predictions file itself, plain or gzipped (.json.gz)",
                source=name,
            )
    if phase is not None and size > phase.max_bytes:  # gzip would not help: its words
        raise too_many_bytes(phase, name, size)
    if size > lim.max_decompressed_bytes:
        raise InvalidInputError(
            f"is {_size(size)}; this server accepts at most {_size(lim.max_decompressed_bytes)} "
            "of JSON (gzip it: predictions compress about tenfold)",
            source=name,
        )


def _check_text(text: bytes, name: str) -> None:
    if bytes(text[:2]) == GZIP_MAGIC:  # the text of a gzip file is gzip again
        raise InvalidInputError("is gzipped twice; gunzip it once", source=name)
    decoder = codecs.getincrementaldecoder("utf-8")()
    for base in range(0, max(len(text), 1), STEP):
        pending = len(decoder.getstate()[0])  # bytes of a character split by the last step
        try:
            decoder.decode(bytes(text[base : base + STEP]), final=base + STEP >= len(text))
        except UnicodeDecodeError as exc:
            at = max(base - pending + exc.start, 0)
            raise InvalidInputError(
                f"not UTF-8 text: byte 0x{text[at]:02x} at {position(text, at)} is "
                "not valid UTF-8; save the file as UTF-8",
                source=name,
            ) from None


def _check_shape(text: bytes, name: str, lim: UploadLimits) -> None:
    shape = scan_json(
        text, ScanLimits(lim.max_depth, lim.max_values, lim.max_string, lim.max_number)
    )
    where = position(text, shape.offset)
    reasons = {
        "depth": f"nests lists and objects more than {lim.max_depth} levels deep (at {where}); "
        + lim.depth_advice,
        "values": f"holds more than {lim.max_values:,} JSON values (counted up to {where}); "
        "this server accepts no more",
        "string": f"has a string of more than {lim.max_string:,} bytes (starting at {where}); "
        "ids and viewpoints are short strings",
        "number": f"has a number literal of more than {lim.max_number} characters (at {where}); "
        "numbers are limited to ordinary floats",
    }
    if shape.exceeded is not None:
        raise InvalidInputError(reasons[shape.exceeded], source=name)


EXPLAIN_BYTES = 16 * MIB  # a larger file is not decoded by the explaining pass (its cost)


def _check_syntax(text: Any, name: str) -> None:
    """Refuses text that is neither JSON nor JSON lines; NaN and Infinity pass in a file of
    at most ``EXPLAIN_BYTES``, a JSON list or JSON lines (the scorer names their record and
    field), nowhere else."""
    try:
        msgspec.json.decode(text, type=msgspec.Raw)
        return
    except msgspec.DecodeError as err:
        error = err
    small = len(text) <= EXPLAIN_BYTES
    lines = _json_lines(text)
    for start, line in lines or ():  # JSON lines (RxR's native form): each line is read alone
        try:
            msgspec.json.decode(line, type=msgspec.Raw)
        except msgspec.DecodeError as err:
            if not (small and _reads(line, name)):  # NaN/Infinity: the scorer names the field
                raise _not_json(text, start, len(line.rstrip()), err, name, big=False) from None
    if lines is not None:
        return
    if not small:
        raise _not_json(text, 0, len(text), error, name, big=True)
    try:
        decode_json(bytes(text), name)  # accepts NaN/Infinity: the scorer names their field
    except InvalidInputError as exc:
        prefix = f"{name}: "
        messages = [p.message.removeprefix(prefix) for p in exc.problems]
        raise InvalidInputError("; ".join(messages), source=name) from None


def _reads(line: bytes, name: str) -> bool:
    """Whether the explaining pass reads ``line`` (JSON but for a NaN or Infinity, say)."""
    try:
        explain(line, name)
    except InvalidInputError:
        return False
    return True


def _json_lines(text: Any) -> list[tuple[int, bytes]] | None:
    """The non-blank lines of ``text`` and their offsets if it looks like JSON lines (two or
    more lines, each opening an object), else None.

    Example:
        >>> _json_lines(b'{"a": 1}\\n\\n{"a": 2}\\n'), _json_lines(b'{"a": 1} x')
        ([(0, b'{"a": 1}\\n'), (10, b'{"a": 2}\\n')], None)
    """
    found, start = [], 0
    for line in bytes(text).splitlines(keepends=True):
        if line.strip():
            found.append((start, line))
        start += len(line)
    if len(found) < 2 or not all(line.lstrip().startswith(b"{") for _, line in found):
        return None
    return found


def _not_json(
    text: Any, start: int, length: int, err: Exception, name: str, *, big: bool
) -> InvalidInputError:
    """The refusal of ``text[start:start + length]``, which msgspec rejected with ``err``:
    where, and what in words a submitter can act on (NaN and Infinity by name); a file past
    ``EXPLAIN_BYTES`` (``big``) is told the limit and its size.

    Example:
        >>> err = ValueError("JSON is malformed: invalid character (byte 5)")
        >>> print(_not_json(b"[1, -Infinity]", 0, 14, err, "p.json", big=False))
        error: p.json: -Infinity at line 1, column 5 (byte 4) is not JSON: write every number as a finite number
    """
    found = re.search(r"\(byte (\d+)\)$", str(err))
    at = start + (int(found.group(1)) if found else length)
    token = next(
        (t for t in ("NaN", "Infinity") if bytes(text[at : at + len(t)]) == t.encode()), ""
    )
    if token == "Infinity" and at > 0 and bytes(text[at - 1 : at]) == b"-":
        token, at = "-Infinity", at - 1
    where, size = position(text, at), f"this file is {_size(len(text))} of JSON"
    if token:
        more = f" ({size}; this server names the record and field only in files of at most"
        return InvalidInputError(
            f"{token} at {where} is not JSON: write every number as a finite number"
            + (f"{more} {_size(EXPLAIN_BYTES)})" if big else ""),
            source=name,
        )
    reason = re.sub(r"^JSON is malformed: | \(byte \d+\)$", "", str(err))
    if reason == "invalid character":
        reason = f"unexpected {bytes(text[at : at + 4]).decode('utf-8', 'ignore')[:1]!r}"
    elif not found:
        reason = "the JSON ends early (is the file complete?)"
    more = f" ({size}; this server words an error as `vlneval score` does only in files of at most"
    return InvalidInputError(
        f"not valid JSON at {where}: {reason}" + (f"{more} {_size(EXPLAIN_BYTES)})" if big else ""),
        source=name,
    )


def check_upload(
    raw: bytes, name: str, limits: UploadLimits | None = None, budget: StepBudget | None = None
) -> bytes:
    """Checks an uploaded file; returns its JSON text (gunzipped when it was gzip). With a
    phase's ``budget``, the text is also measured against it (:func:`check_steps`), last.

    Raises:
        InvalidInputError: the file is refused; the message says why and where.

    Example:
        >>> check_upload(b'[{"instr_id": "1_0", "trajectory": []}]', "p.json")[:2]
        b'[{'
        >>> try:
        ...     check_upload(b"[" * 40 + b"]" * 40, "p.json")
        ... except InvalidInputError as e:
        ...     print(str(e)[:60])
        error: p.json: nests lists and objects more than 32 levels d
    """
    lim = limits or UploadLimits()
    _check_size(len(raw), name, lim)
    if raw[:2] == GZIP_MAGIC:
        text = gunzip_limited(raw, lim.max_decompressed_bytes, name)
    else:
        _check_plain(raw, len(raw), name, lim)
        text = raw
    text = text[len(BOM) :] if text[:3] == BOM else text  # dropped, as vlneval.io reads a file
    _check_json(text, name, lim, budget)
    return text


def _check_json(text: Any, name: str, lim: UploadLimits, budget: StepBudget | None = None) -> None:
    """The checks of JSON text (bytes or a memory-mapped file)."""
    if (why := no_json(text)) is not None:  # the words of the library's reader
        raise InvalidInputError(why, source=name)
    _check_text(text, name)
    _check_shape(text, name, lim)
    _check_syntax(text, name)
    if budget is not None:
        check_steps(text, name, budget)


def _gunzip_to(
    src: Path, dst: Path, limit: int, name: str, too_large: Callable[[float], InvalidInputError]
) -> None:
    """Decompresses the gzip file ``src`` (every member) into ``dst``, ``STEP`` bytes at a time,
    stopping past ``limit`` bytes (with ``too_large(ratio)``, the ratio of the bytes so far)."""
    total = 0
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    in_member = False
    with src.open("rb") as fin, dst.open("wb") as fout:
        for piece in iter(lambda: fin.read(STEP), b""):
            data = piece
            while data:
                in_member = True
                try:
                    out = d.decompress(data, STEP)
                except zlib.error as exc:
                    raise InvalidInputError(f"not a valid gzip file ({exc})", source=name) from None
                total += len(out)
                if total > limit:
                    raise too_large(total / max(fin.tell() - len(d.unconsumed_tail), 1))
                fout.write(out)
                if d.eof:
                    data = d.unused_data.lstrip(b"\x00")
                    d, in_member = zlib.decompressobj(16 + zlib.MAX_WBITS), False
                else:
                    data = d.unconsumed_tail
    if in_member:
        raise _truncated(name)


def check_stored(
    path: Path, name: str, limits: UploadLimits | None = None, budget: StepBudget | None = None
) -> None:
    """Checks an upload already written to ``path`` without holding its JSON text in memory:
    gzip is expanded to a file beside it a step at a time, and the text is read through a
    memory map (pages of a file, which the kernel may drop, not the process's own memory).

    Raises:
        InvalidInputError: the file is refused; the message says why and where.
    """
    lim = limits or UploadLimits()
    phase = budget if budget and budget.max_bytes < lim.max_decompressed_bytes else None
    if phase is not None:  # the phase's budget is the lower bound: it says so in its words
        lim = replace(lim, max_decompressed_bytes=phase.max_bytes)
    limit = lim.max_decompressed_bytes
    too_large: Callable[[float], InvalidInputError] = (
        partial(too_many_bytes, phase, name, None) if phase else partial(_bomb, limit, name)
    )
    size = path.stat().st_size
    _check_size(size, name, lim)
    with path.open("rb") as f:
        head = f.read(8)
    expanded = path.with_name(path.name + ".expanded")
    bare = path.with_name(path.name + ".text")
    try:
        if head[:2] == GZIP_MAGIC:
            _gunzip_to(path, expanded, limit, name, too_large)
            text_path = expanded
        else:
            _check_plain(head, size, name, lim, phase)
            text_path = path
        _check_mapped(_without_bom(text_path, bare), name, lim, budget)
    finally:
        expanded.unlink(missing_ok=True)
        bare.unlink(missing_ok=True)


def _without_bom(path: Path, copy: Path) -> Path:
    """``path``, or for text that starts with a UTF-8 byte-order mark, its ``copy`` without
    it: the mark is dropped as :func:`vlneval.io.json_text` drops it (one read rule)."""
    with path.open("rb") as fin:
        if fin.read(len(BOM)) != BOM:
            return path
        with copy.open("wb") as fout:
            for piece in iter(lambda: fin.read(STEP), b""):
                fout.write(piece)
    return copy


def _check_mapped(path: Path, name: str, lim: UploadLimits, budget: StepBudget | None) -> None:
    if path.stat().st_size == 0:  # nothing to map
        return _check_json(b"", name, lim, budget)
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as text:
        _check_json(text, name, lim, budget)
