"""Moves no action makes: a logged step longer than the action space allows (a teleport).

A continuous trajectory logs one position per action (VLN-CE's ``inference.py``, vlneval's
environments). A move between two logged positions longer than the profile's ``max_step``
is not one action: a 707 m one-step teleport would otherwise be scored as a straight line. The
profile says what it gets: ``warn`` (scored; each episode's count in the ``jumps`` column and
the first ones named, with their step and length, in a warning) or ``refuse`` (bad input, every
one named by file, episode and field).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlneval.errors import ProblemCollector, hint, hinted
from vlneval.tasks.vlnce.episodes import ContinuousEpisodes
from vlneval.tasks.vlnce.predictions import ContinuousPredictions
from vlneval.tasks.vlnce.profiles import ContinuousProfile

__all__ = ["LongSteps", "long_steps", "check_moves"]

#: Long steps named in a warning (the per-episode ``jumps`` column counts them all).
SHOWN = 5


@dataclass(frozen=True)
class LongSteps:
    """The moves longer than a profile's ``max_step``.

    Attributes:
        per_episode: ``(k,)`` how many each predicted episode has (the ``jumps`` column).
        rows, steps, lengths: for each long move, the predicted episode's row, the index of
            the position it moves to (the file's step index) and its length in metres.
    """

    per_episode: np.ndarray
    rows: np.ndarray
    steps: np.ndarray
    lengths: np.ndarray


def long_steps(preds: ContinuousPredictions, max_step: float | None) -> LongSteps:
    """The moves of ``preds`` longer than ``max_step`` metres (none when it is None).

    Example:
        >>> p = ContinuousPredictions("p.json", "r2r-ce", np.array([0]),
        ...     np.array([[0.0, 0, 0], [0.25, 0, 0], [500.25, 500, 0]]), np.array([0, 3]),
        ...     np.array([True]), None)
        >>> s = long_steps(p, 1.0)
        >>> s.per_episode.tolist(), s.steps.tolist(), round(float(s.lengths[0]), 2)
        ([1.0], [2], 707.11)
    """
    k = len(preds.episodes)
    pos, off = preds.positions, preds.offsets
    with np.errstate(over="ignore", invalid="ignore"):
        length = np.sqrt((np.diff(pos, axis=0) ** 2).sum(axis=1)) if len(pos) > 1 else np.zeros(0)
    first = off[:-1]  # a trajectory's start is no move from the previous one's end
    move = np.ones(len(length), dtype=np.bool_)
    move[(first[1:] - 1)[first[1:] >= 1]] = False
    long = move & ~(length <= max_step) if max_step is not None else np.zeros(len(length), bool)
    idx = np.flatnonzero(long)
    rows = np.searchsorted(off, idx + 1, side="right") - 1
    steps = idx + 1 - off[rows]
    counts = np.bincount(rows, minlength=k).astype(np.float64)
    return LongSteps(counts, rows, steps, length[idx])


def _label(episodes: ContinuousEpisodes, preds: ContinuousPredictions, row: int) -> str:
    i = int(preds.episodes[row])
    if preds.form == "rxr-jsonl":
        return f'instruction_id "{episodes.instruction_ids[i]}"'
    return f'episode_id "{episodes.ids[i]}"'


def _field(preds: ContinuousPredictions, step: int) -> str:
    return f"path[{step}]" if preds.form == "rxr-jsonl" else f"[{step}].position"


def check_moves(
    episodes: ContinuousEpisodes, preds: ContinuousPredictions, profile: ContinuousProfile
) -> tuple[np.ndarray, list[str]]:
    """The ``jumps`` column and the warnings of the long moves, by the profile's rule.

    Raises:
        InvalidInputError: ``long_steps="refuse"`` and some move is longer than ``max_step``;
            every one is named (file, episode, field, length).
    """
    found = long_steps(preds, profile.max_step)
    n = len(found.rows)
    if n == 0:
        return found.per_episode, []
    limit = f"{profile.max_step:g} m"
    if profile.long_steps == "refuse":
        pc = ProblemCollector(preds.source)
        for r, j, d in zip(found.rows, found.steps, found.lengths, strict=True):
            pc.add(
                hinted(
                    f"moves {d:.2f} m from the previous position: one action moves at most "
                    f"{limit} (profile {profile.name} refuses such moves",
                    hint("--profile", "--profile vlnce scores them with a warning"),
                    ")",
                ),
                episode=_label(episodes, preds, int(r)),
                field=_field(preds, int(j)),
            )
        pc.raise_if_any()
    shown = "; ".join(
        f"{_label(episodes, preds, int(r))} {_field(preds, int(j))} moves {d:.2f} m"
        for r, j, d in zip(
            found.rows[:SHOWN], found.steps[:SHOWN], found.lengths[:SHOWN], strict=True
        )
    )
    more = f"; {n - SHOWN} more (the jumps column counts them)" if n > SHOWN else ""
    episodes_hit = int((found.per_episode > 0).sum())
    return found.per_episode, [
        hinted(
            f"{n} move(s) in {episodes_hit} episode(s) are longer than one action allows "
            f"({limit}, profile {profile.name}): {shown}{more}; TL counts each as a straight line",
            hint("--profile", "--profile vlnce-strict refuses such files", aside=True),
        )
    ]
