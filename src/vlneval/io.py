"""Reading JSON input files with bounded cost and clear errors; writing outputs atomically
(:func:`write_outputs`: stdout as ``-``, symlinks followed, FIFOs and devices written in place,
several outputs replaced together, no temporary file left behind).

Every benchmark and predictions file is read here, in one way:

1. :func:`read_bytes` takes the file's bytes (gunzipped when gzip, by magic number; a UTF-8
   byte-order mark dropped), refusing a file past :attr:`Limits.max_bytes` *before* holding it:
   a plain file by its size, a gzip stream while it is decompressed (a gzip bomb stops at the
   limit, in bounded memory), a pipe while it is read.
2. The format's reader decodes it once with msgspec, typed where the format has a Struct
   (``vlneval.tasks.r2r.format``, ``vlneval.tasks.common.predictions``), untyped elsewhere.
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

import contextlib
import json
import os
import re
import signal
import stat
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

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
    "STDOUT",
    "Output",
    "resolve_output",
    "check_outputs",
    "write_outputs",
    "clean_stale_temps",
    "atomic_write_bytes",
    "atomic_write_text",
    "to_json_bytes",
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
                fh.seek(0)  # one read: ``head + rest`` would copy the whole file again
                return fh.read()
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


# ----- writing -------------------------------------------------------------------------------
#
# Every output (summary JSON, per-episode table, predictions, protocol card, HTML report) is
# written by :func:`write_outputs`:
#
# - ``-`` is stdout; so is a path that is the process's stdout (``/dev/stdout``, or the file
#   stdout is redirected to); ``/dev/stderr`` likewise.
# - A symlink is followed: its target is written, atomically in the target's folder.
# - A file that is not a regular file (a FIFO, a device, an open descriptor ``/dev/fd/N``) is
#   written in place, never renamed over.
# - A missing folder is an error naming it (library callers may ask for it to be made).
# - Outputs given together are replaced together: every new file is written first, then each
#   is renamed into place in the given order, the last (the summary) last; an old last file
#   is moved aside first, so that a kill in between leaves the new files without a summary,
#   never beside the old one.
# - No temporary file survives: where the filesystem allows it the data goes to an anonymous
#   file (``O_TMPFILE``, invisible until it is linked under a dot-name and renamed at once);
#   elsewhere to a dot-named file ``.NAME.vlneval-tmp-HOST-PID-RANDOM``. Either is removed on
#   any exception, on SIGINT and on SIGTERM/SIGHUP; one left by a SIGKILL (which cannot be
#   caught) is removed by the next write of the same file, once its process is gone.

STDOUT = "-"
TEMP_MARK = ".vlneval-tmp-"
_STALE_SECONDS = 24 * 3600  # a temporary file of another host is old after a day
_PROC_FD = re.compile(r"^/proc/(self|\d+)/fd/(\d+)$")


@dataclass(frozen=True)
class Output:
    """Where one output goes, resolved before anything is written (see :func:`resolve_output`).

    Attributes:
        given: the name as given (for messages).
        kind: ``"file"`` (replaced atomically), ``"stream"`` (written in place: a FIFO, a
            device), ``"fd"`` (an open descriptor of this process, ``/dev/fd/N``),
            ``"stdout"`` or ``"stderr"``.
        path: the file written (a symlink's target); None for stdout and stderr.
        fd: the descriptor of kind ``"fd"``.

    Example:
        >>> resolve_output("-").kind
        'stdout'
    """

    given: str
    kind: str
    path: Path | None = None
    fd: int | None = None

    @property
    def is_stdout(self) -> bool:
        """True when this output is the process's stdout."""
        return self.kind == "stdout"


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived while outputs were being written."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _same_as_fd(st: os.stat_result, fd: int) -> bool:
    try:
        return os.path.samestat(st, os.fstat(fd))
    except OSError:
        return False


def _proc_fd(p: Path) -> int | None:
    """N when ``p`` is this process's ``/proc/self/fd/N`` (or ``/proc/PID/fd/N``)."""
    m = _PROC_FD.match(p.as_posix())
    if m is None or m.group(1) not in ("self", str(os.getpid())):
        return None
    return int(m.group(2))


def _walk_links(path: Path) -> Path:
    """``path`` with its folders resolved and its symlinks followed, stopping at a
    ``/proc/PID/fd/N`` link (the open file it names is written in place)."""
    p = Path(os.path.realpath(path.parent)) / path.name
    for _ in range(40):  # the kernel's own limit on a symlink chain
        if _PROC_FD.match(p.as_posix()) or not p.is_symlink():
            return p
        link = Path(os.readlink(p))
        q = link if link.is_absolute() else p.parent / link
        p = Path(os.path.realpath(q.parent)) / q.name
    raise VLNEvalError(f"{path}: too many levels of symbolic links")


def resolve_output(path: str | Path, *, what: str = "output", make_parents: bool = False) -> Output:
    """Where writing ``path`` goes (see the rules above this function's source).

    Args:
        path: a file name, or ``-`` for stdout.
        what: the option or role, for messages (``--json``).
        make_parents: create a missing folder instead of refusing.

    Raises:
        VLNEvalError: a folder, a missing folder, or a symlink loop; the message names it.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> (d / "link.json").symlink_to(d / "real.json")
        >>> resolve_output(d / "link.json").path == d / "real.json"
        True
        >>> try:
        ...     resolve_output(d / "nowhere" / "s.json", what="--json")
        ... except VLNEvalError as e:
        ...     print(str(e).replace(str(d), "D"))
        --json D/nowhere/s.json: the folder D/nowhere does not exist (create it first)
    """
    given = str(path)
    if given == STDOUT:
        return Output(given, "stdout")
    target = _walk_links(Path(path))
    fd = _proc_fd(target)
    if fd is not None:
        return Output(given, {1: "stdout", 2: "stderr"}.get(fd, "fd"), target, fd)
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    except NotADirectoryError as exc:
        raise VLNEvalError(
            f"{what} {given}: cannot write the file ({_file_in_path(target)} is a file, not a "
            "folder)"
        ) from exc
    except OSError as exc:
        raise VLNEvalError(
            f"{what} {given}: cannot write the file ({exc.strerror or exc})"
        ) from exc
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise VLNEvalError(f"{what} {given}: is a folder; give a file name")
        if _same_as_fd(st, 1):
            return Output(given, "stdout")
        if _same_as_fd(st, 2):
            return Output(given, "stderr")
        if not stat.S_ISREG(st.st_mode):
            return Output(given, "stream", target)
        return Output(given, "file", target)
    folder = target.parent
    if not folder.is_dir():
        if make_parents:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise VLNEvalError(
                    f"{what} {given}: cannot create the folder {folder} ({exc.strerror or exc})"
                ) from exc
        else:
            via = "" if target == Path(os.path.abspath(path)) else f" (the target of {given})"
            raise VLNEvalError(
                f"{what} {given}: the folder {folder}{via} does not exist (create it first)"
            )
    return Output(given, "file", target)


def _file_in_path(target: Path) -> Path:
    """The first folder of ``target``'s path that is a file."""
    for parent in reversed(target.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return target.parent


def check_outputs(outputs: Mapping[str, Output]) -> None:
    """Refuses two outputs to stdout, or two outputs that are one file.

    Args:
        outputs: option name (``--json``) -> its resolved output.

    Raises:
        VLNEvalError: naming both options.

    Example:
        >>> try:
        ...     check_outputs({"--json": resolve_output("-"), "--per-episode": resolve_output("-")})
        ... except VLNEvalError as e:
        ...     print(e)
        --json and --per-episode both write to stdout; send one of them to a file
    """
    seen: dict[Any, str] = {}
    for name, out in outputs.items():
        key: Any = out.kind if out.kind in ("stdout", "stderr") else out.path
        if key in seen:
            where = "stdout" if key == "stdout" else ("stderr" if key == "stderr" else str(key))
            raise VLNEvalError(
                f"{seen[key]} and {name} both write to {where}; send one of them to "
                + ("a file" if key in ("stdout", "stderr") else "another file")
            )
        seen[key] = name


def _host_tag() -> str:
    import hashlib
    import socket

    return hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]


def _temp_name(target: Path) -> Path:
    import secrets

    tag = f"{TEMP_MARK}{_host_tag()}-{os.getpid()}-{secrets.token_hex(4)}"
    return target.with_name(f".{target.name}{tag}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def clean_stale_temps(target: Path) -> list[Path]:
    """Removes the temporary files of ``target`` that a killed run left (same host: its
    process is gone; another host: older than a day); returns them.

    Example:
        >>> import tempfile
        >>> t = Path(tempfile.mkdtemp()) / "s.json"
        >>> left = t.with_name(".s.json" + TEMP_MARK + _host_tag() + "-999999999-abcd")
        >>> _ = left.write_bytes(b"{")
        >>> [p.name == left.name for p in clean_stale_temps(t)], left.exists()
        ([True], False)
    """
    import time

    prefix, host, removed = f".{target.name}{TEMP_MARK}", _host_tag(), []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        parts = entry.name[len(prefix) :].split("-")
        try:
            mine = len(parts) == 3 and parts[0] == host
            stale = (mine and not _alive(int(parts[1]))) or (
                time.time() - entry.stat(follow_symlinks=False).st_mtime > _STALE_SECONDS
            )
            if stale:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except (OSError, ValueError):
            continue
    return removed


@dataclass
class _Pending:
    """One file output between its writing and its rename."""

    out: Output
    data: bytes
    mode: int | None = None  # permission bits of the file replaced (kept)
    fd: int | None = None  # the anonymous (O_TMPFILE) file, until linked
    temp: Path | None = None  # the named temporary file, once there is one

    @property
    def target(self) -> Path:
        return cast(Path, self.out.path)

    def prepare(self) -> None:
        """Writes the data to an anonymous file (or a dot-named one) beside the target."""
        clean_stale_temps(self.target)
        try:
            self.mode = stat.S_IMODE(self.target.stat().st_mode)
        except OSError:
            self.mode = None
        flag = getattr(os, "O_TMPFILE", 0)
        if flag and os.path.isdir("/proc/self/fd"):
            try:
                self.fd = os.open(self.target.parent, flag | os.O_WRONLY | os.O_CLOEXEC, 0o666)
            except OSError:  # the filesystem has no O_TMPFILE: a named file instead
                self.fd = None
        if self.fd is None:
            self._write_named()
        else:
            self._fill(self.fd)

    def _fill(self, fd: int) -> None:
        view = memoryview(self.data)
        while view:
            view = view[os.write(fd, view) :]
        if self.mode is not None:
            os.fchmod(fd, self.mode)
        os.fsync(fd)

    def _write_named(self) -> None:
        self.temp = _temp_name(self.target)
        fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            self._fill(fd)
        finally:
            os.close(fd)

    def commit(self) -> None:
        """Renames the new file over the target (an anonymous one is linked first)."""
        if self.fd is not None:
            self.temp = _temp_name(self.target)
            try:
                os.link(f"/proc/self/fd/{self.fd}", self.temp, follow_symlinks=True)
            except OSError:  # no linkat through /proc here: write it again, named
                self._write_named()
            os.close(self.fd)
            self.fd = None
        os.replace(cast(Path, self.temp), self.target)
        self.temp = None

    def discard(self) -> None:
        """Removes what is left of the new file."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.temp is not None:
            self.temp.unlink(missing_ok=True)
            self.temp = None


def _write_stream(out: Output, data: bytes) -> None:
    """Writes to stdout, stderr, an open descriptor or a non-regular file, in place."""
    if out.kind in ("stdout", "stderr"):
        stream = sys.stdout if out.kind == "stdout" else sys.stderr
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:  # a text stream without bytes underneath (an embedding host's)
            stream.write(data.decode("utf-8"))
            stream.flush()
        return
    fd = out.fd if out.kind == "fd" else os.open(cast(Path, out.path), os.O_WRONLY | os.O_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(cast(int, fd), view) :]
    finally:
        if out.kind != "fd":
            os.close(cast(int, fd))


class _SignalGuard:
    """While outputs are written, SIGTERM and SIGHUP raise (so that ``finally`` removes the
    temporary files), then act as they would have."""

    SIGNALS = ("SIGTERM", "SIGHUP")

    def __init__(self) -> None:
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _SignalGuard:
        import threading

        if threading.current_thread() is not threading.main_thread():
            return self  # only the main thread may set handlers; its own signals still work
        for name in self.SIGNALS:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            old = signal.getsignal(signum)
            if old is signal.SIG_IGN or old is None:
                continue
            self.previous[signum] = old
            signal.signal(signum, self._raise)
        return self

    @staticmethod
    def _raise(signum: int, frame: Any) -> None:
        raise _Terminated(signum)

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        for signum, old in self.previous.items():
            signal.signal(signum, old)
        if isinstance(exc, _Terminated):
            signal.raise_signal(exc.signum)  # the default action ends the process here
            raise SystemExit(128 + exc.signum)  # a handler of the caller's returned


def write_outputs(
    items: Sequence[tuple[Output | str | Path, bytes]], *, make_parents: bool = False
) -> None:
    """Writes each ``(output, data)`` and replaces the files together, the last one last.

    Args:
        items: outputs (resolved or names) and their bytes, the summary last.
        make_parents: create missing folders (library callers); the CLI refuses them.

    Raises:
        VLNEvalError: an output cannot be resolved or written (nothing is replaced when the
            new files cannot be written).

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> write_outputs([(d / "rows.csv", b"a\\n1\\n"), (d / "s.json", b"{}")])
        >>> sorted(p.name for p in d.iterdir())
        ['rows.csv', 's.json']
    """
    outs = [
        o if isinstance(o, Output) else resolve_output(o, make_parents=make_parents)
        for o, _ in items
    ]
    check_outputs({o.given: o for o in outs})
    pending = [_Pending(o, d) for o, (_, d) in zip(outs, items, strict=True) if o.kind == "file"]
    by_output = {id(p.out): p for p in pending}
    aside: tuple[Path, Path] | None = None
    done = 0
    with _SignalGuard():
        try:
            for p in pending:
                _guarded(p.out, p.prepare)
            last = outs[-1]
            if len(pending) > 1 and last.kind == "file" and cast(Path, last.path).is_file():
                aside = (cast(Path, last.path), _temp_name(cast(Path, last.path)))
                _guarded(last, partial(os.replace, *aside))
            for out, (_, data) in zip(outs, items, strict=True):
                job = by_output.get(id(out))
                _guarded(out, job.commit if job is not None else partial(_write_stream, out, data))
                done += 1
        except BaseException:
            if aside is not None:
                with contextlib.suppress(OSError):
                    if done == 0:  # nothing new is in place: the old summary goes back
                        os.replace(aside[1], aside[0])
                    else:
                        os.unlink(aside[1])
            raise
        finally:
            for p in pending:
                p.discard()
        if aside is not None:
            with contextlib.suppress(OSError):
                os.unlink(aside[1])


def _guarded(out: Output, step: Callable[[], Any]) -> None:
    try:
        step()
    except OSError as exc:
        raise VLNEvalError(f"{out.given}: cannot write the file ({exc.strerror or exc})") from exc


def atomic_write_bytes(path: str | Path, data: bytes, *, make_parents: bool = True) -> None:
    """Writes ``data`` to ``path`` as :func:`write_outputs` does (``-`` is stdout; symlinks
    followed; a FIFO or device written in place); makes a missing folder unless told not to.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "sub" / "a.txt"
        >>> atomic_write_bytes(p, b"hi")
        >>> p.read_bytes(), [q.name for q in p.parent.iterdir()]
        (b'hi', ['a.txt'])
    """
    write_outputs([(path, data)], make_parents=make_parents)


def atomic_write_text(path: str | Path, text: str, *, make_parents: bool = True) -> None:
    """Writes UTF-8 ``text`` to ``path`` as :func:`atomic_write_bytes` does."""
    atomic_write_bytes(path, text.encode("utf-8"), make_parents=make_parents)


def to_json_bytes(obj: Any, *, indent: bool = True) -> bytes:
    """Strict JSON: NaN and infinity become null (a summary says why in ``unavailable``).

    msgspec writes a non-finite float as ``null`` itself, so the value is encoded as it is
    (no walk over every value first).

    Example:
        >>> to_json_bytes({"TL": float("inf"), "SR": 0.5}, indent=False)
        b'{"TL":null,"SR":0.5}'
    """
    import msgspec

    raw = msgspec.json.encode(obj)
    return msgspec.json.format(raw, indent=2) + b"\n" if indent else raw
