"""The explaining pass over a file msgspec rejected: measured against :class:`Limits`, then
decoded leniently so that the caller can name the field at fault.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from vlneval.errors import InvalidInputError
from vlneval.io.limits import MIB, Limits
from vlneval.io.text import position


def no_json(text: Any) -> str | None:
    """Why ``text`` (bytes or a memory map, read a MiB at a time) holds no JSON; None if it does.

    Example:
        >>> no_json(b""), no_json(b" \\n"), no_json(b"[]")
        ('the file is empty', 'holds no JSON (only whitespace)', None)
    """
    if not len(text):
        return "the file is empty"
    if any(bytes(text[b : b + MIB]).strip() for b in range(0, len(text), MIB)):
        return None
    return "holds no JSON (only whitespace)"


def _utf16(raw: Any) -> str | None:
    """Why ``raw`` looks like UTF-16 text (a byte-order mark, or a NUL byte beside each of its
    first characters, as some Windows tools write JSON); None when it does not.

    Example:
        >>> _utf16('[{"a": 1}]'.encode("utf-16-le")), _utf16(b"[1]")
        ('is UTF-16 text (little-endian), not UTF-8: save it as UTF-8', None)
    """
    head = bytes(raw[:64])
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") and head[2:4] != b"\x00\x00":  # not UTF-32
        order = "little" if head[0] == 0xFF else "big"
    elif len(head) >= 4 and all(head[0::2]) and not any(head[1::2]):
        order = "little"
    elif len(head) >= 4 and all(head[1::2]) and not any(head[0::2]):
        order = "big"
    else:
        return None
    return f"is UTF-16 text ({order}-endian), not UTF-8: save it as UTF-8"


def explain(raw: bytes, source: str, limits: Limits | None = None, *, a_list: bool = False) -> Any:
    """The explaining pass: ``raw`` measured, then decoded leniently (NaN and Infinity read).
    ``a_list``: the caller reads one JSON list only, so JSON lines given there are told so.

    Only a file msgspec rejected comes here; the caller then checks the value and names every
    problem (file, id, field).

    Raises:
        InvalidInputError: empty, not UTF-8, past a :class:`Limits` bound, or not JSON; the
            message says where.

    Example:
        >>> explain(b'[1, NaN]', "p.json")
        [1, nan]
        >>> try:
        ...     explain(b'[1,\\n 2,]', "p.json")
        ... except InvalidInputError as e:
        ...     print(e)
        error: p.json: not valid JSON: Expecting value at line 2, column 4
    """
    import json  # here, not at the top: only a rejected file needs it

    from vlneval._jsonshape import ScanLimits, scan_json  # deferred: numpy (io imports no numpy)

    lim = limits or Limits.from_env()
    if (why := no_json(raw)) is not None:
        raise InvalidInputError(f"{source}: {why}")
    if (wide := _utf16(raw)) is not None:
        raise InvalidInputError(f"{source}: {wide}")
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
    whole = _sized(lim.max_number) if shape.exceeded == "number" else _whole
    try:
        return json.loads(text, parse_int=whole)
    except _TooLong as exc:
        raise InvalidInputError(
            f"{source}: a JSON value cannot be read: a number of more than "
            f"{lim.max_number} characters at {where} (VLNEVAL_MAX_NUMBER_CHARS raises the limit)"
        ) from exc
    except json.JSONDecodeError as exc:
        lines = a_list and exc.msg == "Extra data" and exc.colno == 1 and text.lstrip()[:1] == "{"
        raise InvalidInputError(
            f"{source}: not valid JSON: {exc.msg.removesuffix(' at')} at line {exc.lineno}, "
            f"column {exc.colno}"
            + (
                " (JSON lines, one record per line? this file must be one JSON list)"
                if lines
                else ""
            )
        ) from exc
    except RecursionError as exc:
        raise InvalidInputError(f"{source}: JSON nested too deeply") from exc


class _TooLong(Exception):
    """A number literal too long even to stand in for (:func:`_sized`)."""


class _Huge(int):
    """A JSON integer of more characters than the limit, standing in as the power of ten of its
    number of digits (and sign): cheap to build where converting its digits is not, and
    written by its size (``str`` and ``repr``), so that any message naming it reads.

    Example:
        >>> _Huge.of("-" + "7" * 5000), _Huge.of("7" * 5000) == 10**4999
        (an integer of 5,000 digits, True)
    """

    digits: int

    @classmethod
    def of(cls, digits: str) -> _Huge:
        """The stand-in of the integer ``digits`` writes."""
        n = len(digits.lstrip("-"))
        out = cls(-(10 ** (n - 1)) if digits[0] == "-" else 10 ** (n - 1))
        out.digits = n
        return out

    def __repr__(self) -> str:
        return f"an integer of {self.digits:,} digits"

    __str__ = __repr__


def _sized(limit: int) -> Callable[[str], int]:
    """The reader of JSON integers that stands in for each of more than ``limit`` characters
    (:class:`_Huge`), named by its size as an integer beyond a double's range is: the checks
    then name its record and field, as for records in memory. One of more than a MiB is
    refused (:class:`_TooLong`).

    Example:
        >>> read = _sized(400)
        >>> read("12"), read("9" * 401)
        (12, an integer of 401 digits)
    """

    def read(digits: str) -> int:
        if len(digits) <= limit:
            return _whole(digits)
        if len(digits) > MIB:
            raise _TooLong
        return _Huge.of(digits)

    return read


def _whole(digits: str) -> int:
    """A JSON integer of any length: ``int`` refuses text of more than 4,300 digits (Python's
    guard against slow conversions), which ``VLNEVAL_MAX_NUMBER_CHARS`` may allow; the reader
    then names such an id by its size, as any id beyond a double's range.

    Example:
        >>> len(str(_whole("7" * 5000) // 10**4990))
        10
    """
    try:
        return int(digits)
    except ValueError:
        return int(Decimal(digits))  # exact: no digit limit applies to a Decimal
