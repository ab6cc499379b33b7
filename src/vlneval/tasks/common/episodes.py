"""Episodes: the columnar table the scorer uses and the record an environment hands out.

A benchmark file becomes an :class:`EpisodeTable` (one row per scored id, viewpoint ids kept
as interned strings or as codes into one vocabulary).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, overload

import numpy as np

from vlneval.errors import HiddenSplitError
from vlneval.io import clip
from vlneval.metrics._kernels import reorder

__all__ = ["Episode", "EpisodeTable", "EpisodeBuilder", "PathColumn", "require_goals"]

_Table = TypeVar("_Table", bound="EpisodeTable")
#: The fields of an R2R-style file: the reference path in ``path``, the goal its last viewpoint.
_PATH_FIELDS = {"paths": "path", "goals": "path"}


def require_goals(scorable: bool, split: str, episodes_file: str | Path) -> None:
    """Every task scorer's one refusal of a split without goals (a hidden test split), whose
    labels only its benchmark's evaluation server holds.

    Raises:
        HiddenSplitError: not ``scorable`` (the episodes file as the problem's source).

    Example:
        >>> require_goals(False, "test", "R2R_test.json")
        Traceback (most recent call last):
        ...
        vlneval.errors.HiddenSplitError: error: R2R_test.json: split test has no goals (a hidden test split); it cannot be scored locally: submit it to an evaluation server (vlneval submit)
    """
    if not scorable:
        raise HiddenSplitError(
            f"split {split} has no goals (a hidden test split); it cannot be scored locally: "
            "submit it to an evaluation server (vlneval submit)",
            episodes_file=str(episodes_file),
        )


class PathColumn(Sequence[tuple[str, ...]]):
    """Viewpoint sequences stored as codes into a vocabulary, materialised on access.

    Row ``i`` is record ``rows[i]``'s sequence ``vocab[codes[offsets[r]:offsets[r + 1]]]``, so
    the three instructions of one R2R path share one stored path and a 200,000-episode split
    holds no Python string per viewpoint.

    Example:
        >>> col = PathColumn(["a", "b"], np.array([0, 1, 1]), np.array([0, 2, 3]), np.array([0, 0, 1]))
        >>> list(col), len(col)
        ([('a', 'b'), ('a', 'b'), ('b',)], 3)
    """

    def __init__(
        self, vocab: list[str], codes: np.ndarray, offsets: np.ndarray, rows: np.ndarray
    ) -> None:
        self.vocab, self.codes, self.offsets, self.rows = vocab, codes, offsets, rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> tuple[str, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[str, ...]]: ...
    def __getitem__(self, i: int | slice) -> tuple[str, ...] | list[tuple[str, ...]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        r = int(self.rows[i])
        vocab = self.vocab
        return tuple(vocab[c] for c in self.codes[self.offsets[r] : self.offsets[r + 1]].tolist())

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return (self[i] for i in range(len(self)))

    def lasts(self) -> PathColumn:
        """The column of each sequence's last element (a goal column from a path column)."""
        ends = self.offsets[1:] - 1
        return PathColumn(
            self.vocab, self.codes[ends], np.arange(len(ends) + 1, dtype=np.int64), self.rows
        )

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flat vocabulary codes and offsets of ``rows``."""
        rec = np.ascontiguousarray(self.rows[rows], dtype=np.int64)
        offsets = np.ascontiguousarray(self.offsets, dtype=np.int64)
        return reorder(self.codes, offsets, rec)


@dataclass(frozen=True, slots=True)
class Episode:
    """One episode as an environment needs it.

    Attributes:
        episode_id: the id predictions are keyed by (``instr_id``, ``instruction_id``, ...).
        scan: the scan (house) id.
        path: the reference path (viewpoint ids), start first. Hidden from agents.
        goals: the goal viewpoints (usually the last of ``path``). Hidden from agents.
        heading: the start heading in radians.
        instruction: the natural-language instruction.
    """

    episode_id: str
    scan: str
    path: tuple[str, ...]
    goals: tuple[str, ...]
    heading: float
    instruction: str

    @property
    def start(self) -> str:
        """The start viewpoint."""
        return self.path[0]


@dataclass
class EpisodeTable:
    """The episodes of one split, in columns.

    Attributes:
        task, split, source: what was loaded and from where.
        id_field: the name predictions use for the id (``instr_id``...).
        ids: episode ids in file order.
        scans, paths, goals, headings, instructions: one entry per episode.
        left_out: ids the profile leaves out of scoring (e.g. the R2R scorer's k = 0..2).
        scorable: False for splits without goals (test): they cannot be scored locally.
        int_ids: the benchmark writes ids as JSON integers (NDH ``inst_idx``, RxR
            ``instruction_id``); ``ids`` still holds their text.
        file_fields: the episode file's field each of ``paths`` and ``goals`` is read from,
            as messages about them name it (NDH ``planner_path``, HANNA ``paths[0]``); a
            reader whose file uses other names than ``path`` sets its own.
        data_version: the release of the benchmark the file belongs to (REVERIE ``v2``,
            Touchdown ``unseen``), None when it has one release or the file is not known to be
            one (given by name).
    """

    task: str
    split: str
    source: str
    id_field: str
    ids: list[str]
    scans: list[str]
    paths: Sequence[tuple[str, ...]]
    goals: Sequence[tuple[str, ...]]
    headings: np.ndarray
    instructions: Sequence[str]
    left_out: list[str] = field(default_factory=list)
    scorable: bool = True
    int_ids: bool = False
    file_fields: dict[str, str] = field(default_factory=lambda: dict(_PATH_FIELDS))
    data_version: str | None = None
    #: The fields holding one entry per episode (a subclass adds its own).
    ROW_COLUMNS: ClassVar[tuple[str, ...]] = (
        "ids", "scans", "paths", "goals", "headings", "instructions",
    )  # fmt: skip
    _index: dict[str, int] | None = field(init=False, repr=False, default=None, compare=False)
    _scan_codes: tuple[list[str], np.ndarray] | None = field(
        init=False, repr=False, default=None, compare=False
    )

    @property
    def index(self) -> dict[str, int]:
        """The row of each episode id (built on first use)."""
        if self._index is None:
            self._index = dict(zip(self.ids, range(len(self.ids)), strict=True))
        return self._index

    def record_id(self, i: int) -> str | int:
        """The id a prediction record writes for row ``i`` (a number where the benchmark's
        ids are JSON integers): the example of an id a completeness problem gives."""
        return int(self.ids[i]) if self.int_ids else self.ids[i]

    def submitted_ids(self) -> tuple[str, list[str]]:
        """The field a predictions file names the episodes by, and their ids in it: the
        episode ids here; a table whose records carry other ids (SOON, Touchdown SDR) says so.

        Example:
            >>> b = EpisodeBuilder()
            >>> b.add("4_0", "s", ("a",), ("a",), 0.0, "x")
            >>> b.build(task="t", split="s", source="f", id_field="instr_id").submitted_ids()
            ('instr_id', ['4_0'])
        """
        return self.id_field, self.ids

    def label(self, i: int) -> str:
        """How every message names row ``i``'s episode: its id as the benchmark's files write
        it, a JSON integer bare and text quoted (clipped when long).

        Example:
            >>> b = EpisodeBuilder()
            >>> b.add("108", "s", ("v",), None, 0.0, "")
            >>> t = b.build(task="t", split="s", source="f", id_field="inst_idx")
            >>> t.label(0), dataclasses.replace(t, int_ids=True).label(0)
            ('inst_idx "108"', 'inst_idx 108')
        """
        shown = clip(self.ids[i])
        return f"{self.id_field} {shown}" if self.int_ids else f'{self.id_field} "{shown}"'

    def scans_of(self, rows: np.ndarray) -> tuple[list[str], np.ndarray]:
        """The distinct scans of episodes ``rows``, sorted, and each row's position among them.

        Example:
            >>> t = EpisodeBuilder()
            >>> for i, scan in enumerate("bab"):
            ...     t.add(str(i), scan, ("v",), None, 0.0, "")
            >>> names, pos = t.build(task="t", split="s", source="f", id_field="id").scans_of(
            ...     np.array([2, 0]))
            >>> names, pos.tolist()
            (['b'], [0, 0])
        """
        if self._scan_codes is None:  # every episode's scan as a code, once
            names = sorted(set(self.scans))
            code = {s: k for k, s in enumerate(names)}
            of_row = np.fromiter(map(code.__getitem__, self.scans), np.int32, len(self.scans))
            self._scan_codes = names, of_row
        names, of_row = self._scan_codes
        codes = of_row[np.asarray(rows, dtype=np.int64)]
        used = np.flatnonzero(np.bincount(codes, minlength=len(names)))
        position = np.full(len(names), -1, dtype=np.int32)
        position[used] = np.arange(len(used), dtype=np.int32)
        return [names[k] for k in used.tolist()], position[codes]

    def __len__(self) -> int:
        return len(self.ids)

    def episode(self, i: int) -> Episode:
        """Row ``i`` as an :class:`Episode`."""
        return Episode(
            self.ids[i],
            self.scans[i],
            self.paths[i],
            self.goals[i],
            float(self.headings[i]),
            self.instructions[i],
        )

    def __iter__(self) -> Any:
        return (self.episode(i) for i in range(len(self)))

    def subset(self: _Table, keep: list[int]) -> _Table:
        """The rows ``keep``, in that order, as a table of the same class: every per-episode
        column (:attr:`ROW_COLUMNS`, a subclass's own included) is taken at ``keep``, the
        other fields are kept.

        Example:
            >>> b = EpisodeBuilder()
            >>> for i in range(3):
            ...     b.add(str(i), "s", ("v",), None, float(i), f"go {i}")
            >>> t = b.build(task="t", split="s", source="f", id_field="id").subset([2, 0])
            >>> t.ids, t.headings.tolist(), t.instructions
            (['2', '0'], [2.0, 0.0], ['go 2', 'go 0'])
        """
        rows = np.asarray(keep, dtype=np.int64)
        columns: dict[str, Any] = {}
        for name in self.ROW_COLUMNS:
            value = getattr(self, name)
            columns[name] = (
                value[rows] if isinstance(value, np.ndarray) else [value[i] for i in keep]
            )
        return dataclasses.replace(self, left_out=list(self.left_out), **columns)

    def instruction_words(self) -> np.ndarray:
        """Number of words of each instruction."""
        return np.array([len(s.split()) for s in self.instructions], dtype=np.int64)


class EpisodeBuilder:
    """Accumulates rows, interning viewpoint ids so that a large split stays small."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.scans: list[str] = []
        self.paths: list[tuple[str, ...]] = []
        self.goals: list[tuple[str, ...]] = []
        self.headings: list[float] = []
        self.instructions: list[str] = []

    def add(
        self,
        episode_id: str,
        scan: str,
        path: list[str],
        goals: list[str] | None,
        heading: float,
        instruction: str,
    ) -> None:
        """Appends one row."""
        intern = sys.intern
        p = tuple(map(intern, path))
        self.ids.append(episode_id)
        self.scans.append(intern(scan))
        self.paths.append(p)
        self.goals.append(tuple(map(intern, goals)) if goals else p[-1:])
        self.headings.append(heading)
        self.instructions.append(instruction)

    def build(
        self,
        *,
        task: str,
        split: str,
        source: str,
        id_field: str,
        scorable: bool = True,
        file_fields: dict[str, str] | None = None,
    ) -> EpisodeTable:
        """The finished table (``file_fields`` as :attr:`EpisodeTable.file_fields`, each
        column not named there read from ``path``)."""
        return EpisodeTable(
            task,
            split,
            source,
            id_field,
            self.ids,
            self.scans,
            self.paths,
            self.goals,
            np.asarray(self.headings, dtype=np.float64),
            self.instructions,
            scorable=scorable,
            file_fields={**_PATH_FIELDS, **(file_fields or {})},
        )
