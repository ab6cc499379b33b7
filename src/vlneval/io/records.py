"""The records of a JSON array or JSON-lines file, a chunk at a time."""

from __future__ import annotations

import gc
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from vlneval.errors import InvalidInputError
from vlneval.io.explaining import explain
from vlneval.io.limits import MIB
from vlneval.io.reader import decode_json

CHUNK = 8192


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
        block = parts[i : i + chunk]
        parts[i : i + chunk] = [None] * len(block)  # each slice is read once
        # The brackets go on the end elements: one copy of the chunk (the join), not three.
        block[0] = b"[" + block[0]
        block[-1] = b"".join((block[-1], b"]"))
        yield b",".join(block)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cycle collector paused (then restored as it was) while a file's records are
    decoded: they are many new containers and none is in a cycle, but each collection of the
    oldest generation would walk every one of them again (about 14 % of reading a
    200,000-episode split and its predictions). The collector is process-wide: overlapping
    pauses in several threads share it, and the one that found it on turns it back on.

    Example:
        >>> with gc_paused():
        ...     gc.isenabled()
        False
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
    raw: bytes,
    source: str,
    *,
    chunk: int = CHUNK,
    expected: str = "a JSON list",
    about: Callable[[dict[str, Any]], str] | None = None,
) -> Iterator[list[Any]]:
    """Top-level array elements of ``raw`` in chunks (decoded once, or explained; ``about``:
    as :func:`iter_records`'s).

    Raises:
        InvalidInputError: ``raw`` is not JSON, or not an array.

    Example:
        >>> list(iter_chunks(b'[1, 2, 3]', "x.json", chunk=2))
        [[1, 2], [3]]
    """
    value = decode_json(raw, source, a_list=True)  # JSON lines given here are told so
    if not isinstance(value, list):
        why = about(value) if about is not None and isinstance(value, dict) else ""
        raise InvalidInputError(f"{source}: expected {expected}, got a {_kind(value)}{why}")
    return (value[i : i + chunk] for i in range(0, len(value), chunk))


def iter_records(
    raw: bytes,
    source: str,
    *,
    expected: str = "a JSON list",
    about: Callable[[dict[str, Any]], str] | None = None,
) -> Iterator[list[Any]]:
    """Records of a JSON array or of a JSON-lines file, in chunks; ``about(value)`` ends the
    message refusing one JSON object (what it seems to be, how to give it).

    Example:
        >>> lines = b'{"a": 1}' + bytes([10]) + b'{"a": 2}'
        >>> list(iter_records(lines, "x.jsonl"))
        [[{'a': 1}, {'a': 2}]]
        >>> iter_records(b'{"a": NaN}', "x.json")
        Traceback (most recent call last):
        vlneval.errors.InvalidInputError: error: x.json: expected a JSON list, got a JSON object
    """
    import msgspec

    if raw.lstrip()[:1] == b"{":
        lines = source.endswith((".jsonl", ".jsonl.gz"))
        try:
            value = msgspec.json.decode(raw)
        except (msgspec.MsgspecError, RecursionError):
            rows = jsonl(raw, source)  # a NaN in it, say: read leniently
            if len(rows) != 1 or not isinstance(rows[0], dict) or lines:
                return iter([rows])
            value = dict(rows[0])  # refused as the same object without the NaN
        else:
            if isinstance(value, dict) and lines:
                return iter([[value]])  # a JSON-lines file of one record
        why = about(value) if about is not None and isinstance(value, dict) else ""
        raise InvalidInputError(f"{source}: expected {expected}, got a {_kind(value)}{why}")
    return iter_chunks(raw, source, expected=expected)


class LineRecord(dict[str, Any]):
    """A record of a JSON-lines file the explaining pass reads (msgspec rejected the file: a
    NaN in a line, say): the record, and its line for the caller's checks to name.

    Example:
        >>> rec = LineRecord({"a": 1}, line=3)
        >>> rec, rec.line
        ({'a': 1}, 3)
    """

    def __init__(self, value: dict[str, Any], line: int) -> None:
        super().__init__(value)
        self.line = line


class LineNumbers:
    """The 1-based line of each record of a JSON-lines text, told by the record's 0-based
    index (its place among the records a reader yields): the reader notes each record's line
    as it yields the record (:meth:`note`), so that blank lines, which hold none, are counted;
    for any other text (a JSON list, records in memory) nothing is noted and a record has no
    line (None).

    Example:
        >>> lines = LineNumbers()
        >>> lines.of(0) is None  # no JSON lines read (yet)
        True
        >>> for line in (1, 3, 4):  # line 2 is blank
        ...     lines.note(line)
        >>> lines.of(0), lines.of(1), lines.of(2)
        (1, 3, 4)
    """

    def __init__(self) -> None:
        self.lines = array("q")  # the line of each record yielded so far

    def note(self, line: int) -> None:
        """Notes that the next record is on line ``line`` (1-based)."""
        self.lines.append(line)

    def of(self, index: int) -> int | None:
        """The line of record ``index`` (0-based); None when the records are no JSON lines."""
        return self.lines[index] if index < len(self.lines) else None


def jsonl(raw: bytes, source: str) -> list[Any]:
    """The records of a JSON-lines text, one per non-blank line, an object as a
    :class:`LineRecord`, so that the caller names the line (not its place among the records:
    blank lines are skipped), the id and the field at fault. A line msgspec rejects is read by
    the explaining pass (NaN and Infinity read, as in a JSON list).

    Raises:
        InvalidInputError: a line that is not JSON, named by its number.

    Example:
        >>> jsonl(b'{"a": 1}' + bytes([10, 10]) + b'[2]', "x.jsonl")
        [{'a': 1}, [2]]
        >>> jsonl(b'[1]' + bytes([10]) + b'{"a": NaN}', "x.jsonl")[1].line
        2
    """
    import msgspec

    decoder = msgspec.json.Decoder()
    rows = []
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if line.strip():
            try:
                row = decoder.decode(line)
                rows.append(LineRecord(row, lineno) if isinstance(row, dict) else row)
            except (msgspec.MsgspecError, RecursionError) as exc:
                rows.append(_lenient_line(line, f"{source}: line {lineno}", exc, lineno))
    return rows


def _lenient_line(line: bytes, where: str, exc: Exception, lineno: int) -> Any:
    """One line msgspec rejected (``exc``), read by the explaining pass; a line that is not
    JSON keeps msgspec's reason."""
    try:
        value = explain(line, where)
    except InvalidInputError:
        raise InvalidInputError(f"{where}: not valid JSON ({exc})") from exc
    return LineRecord(value, lineno) if isinstance(value, dict) else value


def _kind(value: Any) -> str:
    names: dict[type, str] = {dict: "JSON object", list: "JSON list", str: "string", int: "number",
                              float: "number", bool: "boolean", type(None): "null value"}  # fmt: skip
    return names.get(type(value), "JSON value")
