"""Reading JSON input files with bounded cost and clear errors; writing outputs atomically.

Every benchmark and predictions file is read here, in one way:

1. :func:`read_bytes` takes the file's bytes (gunzipped when gzip, by magic number; a UTF-8
   byte-order mark dropped), refusing a file past :attr:`Limits.max_bytes` *before* holding it:
   a plain file by its size, a gzip stream while it is decompressed (a gzip bomb stops at the
   limit, in bounded memory), a pipe while it is read.
2. The format's reader decodes it once with msgspec, typed where the format has a Struct
   (``vlneval.data.r2r``, ``vlneval.data.predictions``), untyped elsewhere.
3. Only a file msgspec rejects goes through :func:`explain`: the explaining pass measures it
   (nesting, string and number literals, see :class:`Limits`), decodes it leniently (NaN and
   Infinity literals, so that the caller's checks can name the field that holds them) and lets
   the caller name every problem with file, episode id and field.

msgspec bounds the typed pass by itself: its types fix the nesting, numbers must fit 64 bits and
strings cost their bytes; the explaining pass uses Python's ``json``, which needs the limits.

Limits are defaults; each can be raised with an environment variable (``VLNEVAL_MAX_FILE_BYTES``,
``VLNEVAL_MAX_JSON_DEPTH``, ``VLNEVAL_MAX_STRING_BYTES``, ``VLNEVAL_MAX_NUMBER_CHARS``) or by
passing a :class:`Limits`.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlneval.errors import InvalidInputError, MissingDataError, VLNEvalError

__all__ = [
    "Limits",
    "read_bytes",
    "gunzip",
    "decode_json",
    "explain",
    "load_json",
    "array_chunks",
    "typed_chunks",
    "iter_chunks",
    "iter_records",
    "unique_keys",
    "position",
    "clip",
    "atomic_write_bytes",
    "atomic_write_text",
]

MIB = 1 << 20
BOM = b"\xef\xbb\xbf"
READ_STEP = 1 << 20
GUNZIP_STEP = 16 << 20  # a usual file is one piece (nothing to join); a bomb stops near the limit
CHUNK = 8192


@dataclass(frozen=True)
class Limits:
    """What one input file may cost.

    Attributes:
        max_bytes: most bytes of JSON text (after gunzip), 512 MiB by default
            (``VLNEVAL_MAX_FILE_BYTES``); the largest public split files are far smaller.
        max_depth: deepest nesting of lists and objects the explaining pass decodes, 64
            (``VLNEVAL_MAX_JSON_DEPTH``); benchmark files need at most 6.
        max_string: longest string literal the explaining pass decodes, 1 MiB
            (``VLNEVAL_MAX_STRING_BYTES``).
        max_number: longest number literal the explaining pass decodes, 400 characters
            (``VLNEVAL_MAX_NUMBER_CHARS``): every finite double fits; a 5,000-digit integer
            does not.

    Example:
        >>> Limits().max_depth, Limits(max_bytes=10).max_bytes
        (64, 10)
    """

    max_bytes: int = 512 * MIB
    max_depth: int = 64
    max_string: int = MIB
    max_number: int = 400

    @classmethod
    def from_env(cls) -> Limits:
        """The defaults, each raised (or lowered) by its environment variable when set.

        Raises:
            VLNEvalError: a variable that is not a positive integer.
        """
        names = {
            "max_bytes": "VLNEVAL_MAX_FILE_BYTES",
            "max_depth": "VLNEVAL_MAX_JSON_DEPTH",
            "max_string": "VLNEVAL_MAX_STRING_BYTES",
            "max_number": "VLNEVAL_MAX_NUMBER_CHARS",
        }
        values: dict[str, int] = {}
        for attr, var in names.items():
            text = os.environ.get(var)
            if text:
                if not text.strip().isdigit() or int(text) < 1:
                    raise VLNEvalError(f"{var}={text!r}: expected a positive whole number")
                values[attr] = int(text)
        return cls(**values)


def _size(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{n:,} bytes"


def clip(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters for a message (a 1 MB id stays readable).

    Example:
        >>> clip("x" * 100, 10)
        'xxxxxxxxxx… (100 characters)'
    """
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def position(raw: bytes, offset: int) -> str:
    """``line L, column C (byte N)`` of a byte offset.

    Example:
        >>> position(b'[1,\\n 2]', 5)
        'line 2, column 2 (byte 5)'
    """
    line = raw.count(b"\n", 0, offset) + 1
    col = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {col} (byte {offset})"


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
    source = str(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise MissingDataError(f"{path}: no such file") from None
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if stat.S_ISDIR(st.st_mode):
        raise InvalidInputError(f"{path}: is a folder, expected a JSON file")
    # A regular file may be large only when gzip; its compressed bytes are read whole.
    raw = _read_capped(path, lim.max_bytes, source, regular=stat.S_ISREG(st.st_mode))
    if raw[:2] == b"\x1f\x8b":
        raw = gunzip(raw, source, lim.max_bytes)
    elif len(raw) > lim.max_bytes:
        raise _too_large(source, lim.max_bytes)
    return raw[3:] if raw[:3] == BOM else raw


def _read_capped(path: Path, limit: int, source: str, *, regular: bool) -> bytes:
    """All of a regular file; a pipe read up to one byte past ``limit``."""
    try:
        if regular:
            with open(path, "rb") as fh:
                head = fh.read(2)
                if head != b"\x1f\x8b" and os.fstat(fh.fileno()).st_size > limit:
                    raise _too_large(source, limit)
                return head + fh.read()
        with open(path, "rb") as fh:
            parts, total = [], 0
            while total <= limit and (part := fh.read(READ_STEP)):
                parts.append(part)
                total += len(part)
            return b"".join(parts)
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


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
        InvalidInputError: not valid gzip, truncated, or past ``limit``.

    Example:
        >>> import gzip
        >>> gunzip(gzip.compress(b"[1]") + gzip.compress(b"[2]"), "a.json.gz", 100)
        b'[1][2]'
    """
    out: list[bytes] = []
    total = 0
    data = raw
    try:
        while data:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk = d.decompress(data, GUNZIP_STEP)
            while True:
                total += len(chunk)
                if total > limit:
                    raise (too_large or (lambda: _too_large(source, limit)))()
                out.append(chunk)
                if d.eof or not d.unconsumed_tail:
                    break
                chunk = d.decompress(d.unconsumed_tail, GUNZIP_STEP)
            if not d.eof:
                raise InvalidInputError(f"{source}: not a valid gzip file (it is truncated)")
            data = d.unused_data.lstrip(b"\x00")
    except zlib.error as exc:
        raise InvalidInputError(f"{source}: not a valid gzip file ({exc})") from exc
    return out[0] if len(out) == 1 else b"".join(out)


def explain(raw: bytes, source: str, limits: Limits | None = None) -> Any:
    """The explaining pass: ``raw`` measured, then decoded leniently (NaN and Infinity read).

    Only a file msgspec rejected comes here; the caller then checks the value and names every
    problem (file, id, field).

    Raises:
        InvalidInputError: not UTF-8, past a :class:`Limits` bound, or not JSON; the message
            says where.

    Example:
        >>> explain(b'[1, NaN]', "p.json")
        [1, nan]
        >>> try:
        ...     explain(b'[1,\\n 2,]', "p.json")
        ... except InvalidInputError as e:
        ...     print(e)
        error: p.json: not valid JSON: Expecting value at line 2, column 4
    """
    from vlneval._jsonshape import ScanLimits, scan_json

    lim = limits or Limits.from_env()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{source}: not UTF-8 text (byte {exc.start})") from exc
    shape = scan_json(raw, ScanLimits(lim.max_depth, None, lim.max_string, lim.max_number))
    where = position(raw, shape.offset) if shape.exceeded else ""
    if shape.exceeded == "depth":
        raise InvalidInputError(f"{source}: JSON nested too deeply")
    if shape.exceeded == "string":
        raise InvalidInputError(
            f"{source}: a string of more than {lim.max_string:,} bytes starts at {where} "
            "(ids and viewpoints are short; VLNEVAL_MAX_STRING_BYTES raises the limit)"
        )
    if shape.exceeded == "number":
        raise InvalidInputError(
            f"{source}: a JSON value cannot be read: a number of more than "
            f"{lim.max_number} characters at {where} (VLNEVAL_MAX_NUMBER_CHARS raises the limit)"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from exc
    except RecursionError as exc:
        raise InvalidInputError(f"{source}: JSON nested too deeply") from exc


def decode_json(raw: bytes, source: str) -> Any:
    """``raw`` decoded by msgspec, or by the explaining pass when msgspec rejects it.

    Example:
        >>> decode_json(b'{"a": [1, 2.5]}', "x.json")
        {'a': [1, 2.5]}
    """
    import msgspec

    try:
        return msgspec.json.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return explain(raw, source)


def load_json(path: str | Path) -> Any:
    """Reads a ``.json`` or ``.json.gz`` file with a clear error on failure."""
    return decode_json(read_bytes(path), str(path))


def unique_keys(raw: bytes, source: str, *, what: str = "key") -> None:
    """Refuses a top-level JSON object of ``raw`` that gives a key twice (JSON decoders keep
    the last copy silently), naming the key.

    Each member's value is read as a zero-copy slice of ``raw`` (msgspec ``Raw``); in an object
    without repeats each one starts after the previous one ends, with only ``, "key":`` between
    them. Where that does not hold, Python's ``json`` lists the members to name the key.

    Raises:
        InvalidInputError: a key given twice.

    Example:
        >>> unique_keys(b'{"1": [1], "2": [2]}', "p.json")
        >>> try:
        ...     unique_keys(b'{"1": [1], "1": [2]}', "p.json", what="episode_id")
        ... except InvalidInputError as e:
        ...     print(e)
        error: p.json: episode_id "1" is given twice (JSON keeps only the last copy)
    """
    if _keys_are_unique(raw):
        return
    repeated: list[str] = []

    def members(items: list[tuple[str, Any]]) -> dict[str, Any]:
        # called innermost first: the last call is the top-level object
        keys = [k for k, _ in items]
        seen: set[str] = set()
        repeated[:] = [k for k in keys if k in seen or seen.add(k)][:1]  # type: ignore[func-returns-value]
        return dict(items)

    json.loads(raw, object_pairs_hook=members)
    if repeated:
        raise InvalidInputError(
            f'{source}: {what} "{clip(repeated[0])}" is given twice (JSON keeps only the last copy)'
        )


def _keys_are_unique(raw: bytes) -> bool:
    """True when the top-level object of ``raw`` has no repeated key (False when unsure)."""
    import msgspec
    import numpy as np

    try:
        members = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
    except (msgspec.MsgspecError, RecursionError):  # NaN, say: Python's json decides
        return False
    base = np.frombuffer(raw, np.uint8).ctypes.data
    end = raw.index(b"{")  # where the text before the next member starts
    opener = b"{"
    for key, part in members.items():
        start = np.frombuffer(part, np.uint8).ctypes.data - base
        gap = raw[end:start].strip()
        if start <= end or not (gap.startswith(opener) and gap.endswith(b":")):
            return False
        try:
            if msgspec.json.decode(gap[1:-1], type=str) != key:
                return False
        except msgspec.DecodeError:
            return False
        end, opener = start + len(part), b","
    return True


def array_chunks(raw: bytes, *, chunk: int = CHUNK, large: int = 8 * MIB) -> Iterator[bytes]:
    """The JSON array ``raw`` as it is, or, once past ``large`` bytes, as arrays of at most
    ``chunk`` of its elements, for typed decoding a chunk at a time.

    A large file is split into its elements first (msgspec ``Raw``: zero-copy slices of about
    40 bytes each), so that only one chunk of decoded records exists at a time: a
    200,000-episode file peaks at its bytes plus one chunk instead of every record's objects.

    Raises:
        msgspec.MsgspecError, RecursionError: ``raw`` is not a JSON array.

    Example:
        >>> list(array_chunks(b"[1, 2, 3]", chunk=2, large=0))
        [b'[1,2]', b'[3]']
    """
    import msgspec

    if len(raw) <= large:
        yield raw
        return
    parts: list[Any] = msgspec.json.decode(raw, type=list[msgspec.Raw])
    for i in range(0, len(parts), chunk):
        block = b"[" + b",".join(parts[i : i + chunk]) + b"]"
        parts[i : i + chunk] = [None] * len(parts[i : i + chunk])  # each slice is read once
        yield block


def typed_chunks(raw: bytes, decoder: Any) -> Iterator[list[Any]]:
    """The records of the JSON array ``raw``, decoded by ``decoder`` (a typed msgspec decoder
    of a list) a chunk at a time (see :func:`array_chunks`).

    Raises:
        msgspec.MsgspecError, RecursionError: the types reject ``raw`` (for the caller's
            explaining pass).

    Example:
        >>> import msgspec
        >>> list(typed_chunks(b"[1, 2, 3]", msgspec.json.Decoder(list[int])))
        [[1, 2, 3]]
    """
    for block in array_chunks(raw):
        yield decoder.decode(block)


def iter_chunks(
    raw: bytes, source: str, *, chunk: int = CHUNK, expected: str = "a JSON list"
) -> Iterator[list[Any]]:
    """Top-level array elements of ``raw`` in chunks (decoded once, or explained).

    Raises:
        InvalidInputError: ``raw`` is not JSON, or not an array.

    Example:
        >>> list(iter_chunks(b'[1, 2, 3]', "x.json", chunk=2))
        [[1, 2], [3]]
    """
    value = decode_json(raw, source)
    if not isinstance(value, list):
        raise InvalidInputError(f"{source}: expected {expected}, got a {_kind(value)}")
    return (value[i : i + chunk] for i in range(0, len(value), chunk))


def iter_records(raw: bytes, source: str, *, expected: str = "a JSON list") -> Iterator[list[Any]]:
    """Records of a JSON array or of a JSON-lines file, in chunks.

    Example:
        >>> lines = b'{"a": 1}' + bytes([10]) + b'{"a": 2}'
        >>> list(iter_records(lines, "x.jsonl"))
        [[{'a': 1}, {'a': 2}]]
    """
    import msgspec

    if raw.lstrip()[:1] == b"{":
        try:
            value = msgspec.json.decode(raw)
        except (msgspec.MsgspecError, RecursionError):
            return iter([jsonl(raw, source)])
        if isinstance(value, dict) and source.endswith((".jsonl", ".jsonl.gz")):
            return iter([[value]])  # a JSON-lines file of one record
        raise InvalidInputError(f"{source}: expected {expected}, got a {_kind(value)}")
    return iter_chunks(raw, source, expected=expected)


def jsonl(raw: bytes, source: str) -> list[Any]:
    """The records of a JSON-lines text, one per non-blank line.

    Raises:
        InvalidInputError: a line that is not JSON, named by its number.

    Example:
        >>> jsonl(b'{"a": 1}' + bytes([10, 10]) + b'[2]', "x.jsonl")
        [{'a': 1}, [2]]
    """
    import msgspec

    decoder = msgspec.json.Decoder()
    rows = []
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(decoder.decode(line))
            except (msgspec.MsgspecError, RecursionError) as exc:
                raise InvalidInputError(f"{source}: line {lineno}: not valid JSON ({exc})") from exc
    return rows


def _kind(value: Any) -> str:
    names: dict[type, str] = {dict: "JSON object", list: "JSON list", str: "string"}
    return names.get(type(value), "JSON value")


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
