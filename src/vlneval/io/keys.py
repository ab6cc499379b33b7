"""A top-level JSON object refused when it gives a key twice (:func:`unique_keys`)."""

from __future__ import annotations

from typing import Any

from vlneval.errors import InvalidInputError
from vlneval.io.text import clip


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
    import json  # here, not at the top: only the slow path needs it

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
