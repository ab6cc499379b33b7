"""JSON lines with every bad line named: the files of RxR and of VLN-CE's ``rxr-jsonl`` form,
and Touchdown's (:func:`decode_line`)."""

from __future__ import annotations

import contextlib
from typing import Any

from vlneval.errors import InvalidInputError, ProblemCollector
from vlneval.io import explain

__all__ = ["decode_line", "iter_jsonl"]


def decode_line(decoder: Any, line: bytes, *, lenient: bool = False) -> Any:
    """One JSON line decoded by ``decoder`` (a ``msgspec.json.Decoder``); ``lenient``
    (predictions, not episode files): a line msgspec rejects is read by the explaining pass,
    so that a NaN or Infinity reaches the caller's checks, which name the field.

    Raises:
        ValueError: the line is not JSON, or is nested too deeply to decode (msgspec's
            RecursionError, which would otherwise end the program); the message says which.

    Example:
        >>> import msgspec
        >>> try:
        ...     decode_line(msgspec.json.Decoder(), b"[" * 100_000)
        ... except ValueError as e:
        ...     print(e)
        JSON nested too deeply
    """
    import msgspec

    try:
        return decoder.decode(line)
    except msgspec.DecodeError as exc:
        if lenient:
            with contextlib.suppress(InvalidInputError):  # not JSON at all: the error below
                return explain(line, "line")
        raise ValueError(f"not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def iter_jsonl(raw: bytes, pc: ProblemCollector, *, lenient: bool = False) -> list[tuple[int, Any]]:
    """Decodes JSON lines; a bad line is recorded as a problem naming its line number.

    ``lenient``: as :func:`decode_line`'s; only a line that is not JSON at all is a problem.

    Example:
        >>> pc = ProblemCollector("p.jsonl")
        >>> iter_jsonl(b'{"a": NaN}', pc, lenient=True), len(pc.problems)
        ([(1, {'a': nan})], 0)
        >>> iter_jsonl(b'{"a": NaN}', pc), pc.problems[0].message[:24]
        ([], 'not valid JSON (JSON is ')
    """
    import msgspec

    decoder = msgspec.json.Decoder()
    rows: list[tuple[int, Any]] = []
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, decode_line(decoder, line, lenient=lenient)))
        except ValueError as exc:
            pc.add(str(exc), field=f"line {lineno}")
    return rows
