"""What one submission may cost, derived from its phase: records, steps and bytes.

A small upload can still be expensive: one trajectory of four million steps fits in 514 KiB of
gzip. Before anything decodes a file into Python objects, its records are measured on the raw
JSON text (each record a zero-copy slice) and the file is refused when

- it holds more records than the split could need (twice its episodes, plus 100);
- one record holds more JSON values than a trajectory of ``max_steps`` steps needs (a step of
  the R2R form ``[viewpoint, heading, elevation]`` is 4 values; a continuous step
  ``{"position": [x, y, z], "heading": h, "stop": false}`` is 7, counted as 12);
- all records together hold more than ``mean_steps`` steps per episode of the split;
- its JSON text is larger than such a file could be (``bytes_per_step`` per step allowed).

A record is an element of the file's JSON list, a value of its JSON object (the VLN-CE form,
keyed by episode id) or a line of JSON lines (RxR); NaN and Infinity (which Python's ``json``
writes) count as numbers, and a file that is not JSON is left to the reader, which says where.
The counts are upper bounds (commas and brackets, in strings too), so an honest file, whose
trajectories are a few dozen steps, is never near them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from vlneval.errors import InvalidInputError, Problem
from vlneval.server.core.config import ServerConfig

__all__ = [
    "StepBudget", "check_steps", "too_many_bytes", "VALUES_PER_STEP", "RECORD_VALUES", "BOMB_RATIO",
    "is_bomb", "TooManyRecords",
]  # fmt: skip

VALUES_PER_STEP = 4
#: Decompressed over compressed size past which a gzip upload is called a bomb: predictions
#: files compress about tenfold (13 at most among the real R2R files), a file of spaces 1000.
BOMB_RATIO = 100.0
CONTINUOUS_VALUES_PER_STEP = 12  # a position triple, a heading, a stop flag and a few extra keys
RECORD_VALUES = 64  # the id, a few task fields (predicted object, help requests) and slack
BYTES_PER_RECORD = 4096
#: The fields a record names its episode by (R2R and most tasks, RxR, NDH, Touchdown, VLN-CE).
ID_FIELDS = ("instr_id", "instruction_id", "inst_idx", "route_id", "episode_id")


class TooManyRecords(InvalidInputError):
    """A file with more records than its phase's split could need: made for a bigger split,
    most often, which its ids would tell.

    Attributes:
        text: the file's JSON text itself (not a copy: the file is held once), for a check of
            its ids against the task's other splits; empty for a memory-mapped file, whose
            text must not outlive the check.
    """

    def __init__(self, message: str, *, source: str, text: bytes = b"") -> None:
        super().__init__(message, source=source)
        self.text = text


@dataclass(frozen=True)
class StepBudget:
    """The limits of one phase.

    Attributes:
        n_episodes: the episodes of the phase's split.
        max_steps: most steps in one trajectory.
        mean_steps: most steps per episode over the whole file.
        bytes_per_step: JSON bytes allowed per allowed step (ids are 32 characters).

    Example:
        >>> b = StepBudget(n_episodes=100, max_steps=500, mean_steps=64)
        >>> b.max_records, b.max_total_steps, b.scaled(VALUES_PER_STEP)
        (300, 6400, (2064, 44800))
    """

    n_episodes: int
    max_steps: int = ServerConfig.max_trajectory_steps  # the server's defaults
    mean_steps: int = ServerConfig.mean_trajectory_steps
    bytes_per_step: int = 200

    @property
    def max_records(self) -> int:
        """Most records a file may hold."""
        return 2 * self.n_episodes + 100

    @property
    def max_total_steps(self) -> int:
        """Most steps over the whole file."""
        return max(self.n_episodes, 1) * self.mean_steps

    def scaled(self, values_per_step: int) -> tuple[int, int]:
        """``(max_record_values, max_total_values)`` for steps of ``values_per_step`` values."""
        return (
            values_per_step * self.max_steps + RECORD_VALUES,
            values_per_step * self.max_total_steps + RECORD_VALUES * self.max_records,
        )

    @property
    def max_bytes(self) -> int:
        """Most bytes of JSON text."""
        return self.bytes_per_step * self.max_total_steps + BYTES_PER_RECORD * self.max_records

    @classmethod
    def of_phase(cls, n_episodes: int, cfg: Any) -> StepBudget:
        """The budget of a phase of ``n_episodes`` episodes under the server's limits."""
        return cls(
            n_episodes=int(n_episodes),
            max_steps=int(cfg.max_trajectory_steps),
            mean_steps=int(cfg.mean_trajectory_steps),
        )


Records = tuple[list[Any], list[str] | None]


def _records(text: Any) -> Records | None:
    """Zero-copy slices of the records of a JSON list, of the values of a JSON object (keyed
    by episode id, returned with its keys), or the lines of JSON lines; None when none of them
    (not JSON: the reader says what is wrong). NaN and Infinity, which msgspec refuses, are
    counted as numbers.

    Example:
        >>> records, keys = _records(b'{"4": [1, NaN], "9": []}')
        >>> [bytes(r) for r in records], keys
        ([b'[1, 0.0]', b'[]'], ['4', '9'])
    """
    records = _split(text)
    if records is None and len(text) < (1 << 31):  # a copy, NaN and Infinity as numbers
        strict = bytes(text).replace(b"NaN", b"0.0").replace(b"Infinity", b"1.000000")
        records = _split(strict, lines=True)
    return records


def _split(text: Any, *, lines: bool = False) -> Records | None:
    try:  # an object keyed by episode id (VLN-CE's r2r-ce form): its values are the records
        got = msgspec.json.decode(text, type=list[msgspec.Raw] | dict[str, msgspec.Raw])
        if isinstance(got, dict):
            return (list(got.values()), list(got)) if got else None
        return got, None
    except (msgspec.DecodeError, msgspec.ValidationError):
        rows = text.splitlines() if lines else []
    try:
        got = [msgspec.json.decode(row, type=msgspec.Raw) for row in rows if row.strip()]
    except msgspec.DecodeError:
        return None
    return (got, None) if got else None


def _values(record: Any) -> int:
    b = bytes(record)
    return b.count(b",") + b.count(b"[") + b.count(b"{") + 1


def _continuous(record: Any) -> bool:
    """Whether a record's steps are continuous positions (``"position"`` keys)."""
    return b'"position"' in bytes(record)


def is_bomb(ratio: float) -> bool:
    """Whether a gzip upload stopped past a limit at ``ratio`` times its compressed bytes is
    called a gzip bomb: ``ratio >= BOMB_RATIO``, which no predictions file reaches.

    Example:
        >>> is_bomb(13.0), is_bomb(BOMB_RATIO)
        (False, True)
    """
    return ratio >= BOMB_RATIO


def too_many_bytes(
    budget: StepBudget, name: str, size: int | None = None, ratio: float = 0.0
) -> InvalidInputError:
    """The refusal of a file of ``size`` bytes of JSON, more than ``budget`` allows (None: a
    gzip file stopped while decompressing past it, ``ratio`` times its compressed bytes so far;
    a gzip bomb only past ``BOMB_RATIO``, which no predictions file reaches).

    Example:
        >>> print(too_many_bytes(StepBudget(n_episodes=1), "p.json", 10**6))
        error: p.json: is 1,000,000 bytes of JSON; a file for the 1 episodes of this phase needs at most 430,592
        >>> print(too_many_bytes(StepBudget(n_episodes=1), "p.json.gz", None, 12.5))
        error: p.json.gz: decompresses to more than 430,592 bytes of JSON, the most a file for the 1 episodes of this phase needs
    """
    need = f"a file for the {budget.n_episodes:,} episodes of this phase needs"
    if size is None:
        bomb = " (is it a gzip bomb?)" if is_bomb(ratio) else ""
        return InvalidInputError(
            f"decompresses to more than {budget.max_bytes:,} bytes of JSON, the most {need}{bomb}",
            source=name,
        )
    return InvalidInputError(
        f"is {size:,} bytes of JSON; {need} at most {budget.max_bytes:,}", source=name
    )


def check_steps(text: Any, name: str, budget: StepBudget) -> None:
    """Refuses a file past its phase's budget (see the module docstring).

    Raises:
        InvalidInputError: the first limit crossed, with the limit; past the limit per
            trajectory, every record over it, by its id (``instr_id "1_0"``), else as
            ``record K`` (0-based, as the readers count records).

    Example:
        >>> b = StepBudget(n_episodes=1, max_steps=2, mean_steps=2)
        >>> check_steps(b'[{"instr_id": "1_0", "trajectory": [["a", 0, 0], ["b", 0, 0]]}]', "p.json", b)
        >>> try:
        ...     check_steps(b'[{"instr_id": "1_0", "trajectory": [' + b'["a", 0, 0], ' * 30 + b'["a", 0, 0]]}]', "p.json", b)
        ... except InvalidInputError as e:
        ...     print(e)
        error: p.json: instr_id "1_0": holds 127 JSON values, more than a trajectory of at most 2 steps needs (this phase's limit per trajectory; 1 of the file's records is over it)
    """
    if len(text) > budget.max_bytes:
        raise too_many_bytes(budget, name, len(text))
    records, keys = _records(text) or (None, None)
    if records is None:
        return  # not a list of records: the parser says what it is
    # counts only: no slice of ``text`` (a memory map) may outlive this frame's exceptions
    small = len(records) <= budget.max_records
    counts = [_values(rec) for rec in records] if small else []
    continuous = small and any(_continuous(rec) for rec in records[:10])
    n_records = len(records)
    per_record, per_file = budget.scaled(
        CONTINUOUS_VALUES_PER_STEP if continuous else VALUES_PER_STEP
    )
    over = [k for k, n in enumerate(counts) if n > per_record]
    labels = _labels(records, over[:SHOWN_OVER], keys) if over else []
    del records
    if n_records > budget.max_records:
        raise TooManyRecords(
            f"holds {n_records:,} records; this phase has {budget.n_episodes:,} episodes "
            f"and accepts at most {budget.max_records:,} records",
            source=name,
            text=text if isinstance(text, bytes) else b"",
        )
    if over:
        are = f"{len(over):,} of the file's records {'is' if len(over) == 1 else 'are'} over it"
        limit = f"at most {budget.max_steps:,} steps needs (this phase's limit per trajectory"
        problems = [
            Problem(
                name, f"holds {counts[k]:,} JSON values, more than a trajectory of {limit}; {are})",
                label,
            )
            for k, label in zip(over, labels, strict=False)  # the first SHOWN_OVER
        ]  # fmt: skip
        if len(over) > SHOWN_OVER:
            problems.append(Problem(name, f"{len(over) - SHOWN_OVER:,} more records are over it"))
        raise InvalidInputError(problems)
    if sum(counts) > per_file:
        raise InvalidInputError(
            f"holds {sum(counts):,} JSON values in its records, more than {budget.mean_steps} "
            f"steps per episode of this phase need ({per_file:,}; the limit per file)",
            source=name,
        )


#: Over-long records named one by one in a refusal (the count names them all).
SHOWN_OVER = 20


def _labels(records: list[Any], over: list[int], keys: list[str] | None) -> list[str]:
    """How the records ``over`` (0-based) are named: by their ``keys`` in a file keyed by
    episode id (VLN-CE's form: ``episode_id "12"``), by their id field (``instr_id "1_0"``),
    else as ``record K``; copies, no slice of the text."""
    return [f'episode_id "{keys[k]}"' if keys else _record_id(records[k], k) for k in over]


def _record_id(record: Any, k: int) -> str:
    """``instr_id "1_0"`` (the record's first id field, :data:`ID_FIELDS`), else ``record k``."""
    try:
        fields = msgspec.json.decode(record, type=dict[str, msgspec.Raw])
        ids = [(f, msgspec.json.decode(fields[f])) for f in ID_FIELDS if f in fields]
    except (msgspec.DecodeError, msgspec.ValidationError):
        ids = []
    for field, value in ids:
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return f'{field} "{value}"'
    return f"record {k}"
