"""The two sides of an episode: what the agent is given, and what only the scorer keeps.

An environment splits its episode table once, at construction (spec/protocol.md, "The
information boundary"): ground truth is reachable only through the privileged channel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["EpisodeInputs", "GroundTruth", "split_episodes", "InputsFn"]


@dataclass(frozen=True, slots=True)
class EpisodeInputs:
    """The task inputs of one episode: everything an agent may be told about it.

    Attributes:
        scan: the scan (house) id.
        start: the start viewpoint.
        heading: the start heading in radians, as the dataset gives it.
        instruction: the instruction text.
        extra: task-specific inputs (a dialog history, a target hint...) that sensors may add to
            observations; never ground truth.
    """

    scan: str
    start: str
    heading: float
    instruction: str
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


#: Builds the inputs of episode ``i`` of a table (tasks with extra inputs supply their own).
InputsFn = Callable[[EpisodeTable, int], EpisodeInputs]


def default_inputs(table: EpisodeTable, i: int) -> EpisodeInputs:
    """Scan, start, heading and instruction of row ``i``."""
    return EpisodeInputs(
        table.scans[i], table.paths[i][0], float(table.headings[i]), table.instructions[i]
    )


class GroundTruth:
    """Reference paths and goals: the scorer's side. Environments never put it in observations.

    Attributes:
        scorable: False for a split without goals (test): no privileged channel can exist.
    """

    __slots__ = ("_paths", "_goals", "scorable", "source")

    def __init__(self, table: EpisodeTable) -> None:
        self._paths = table.paths
        self._goals = table.goals
        self.scorable = table.scorable
        self.source = table.source

    def goals(self, i: int) -> tuple[str, ...]:
        """The goal viewpoints of episode ``i``."""
        return self._goals[i]

    def path(self, i: int) -> tuple[str, ...]:
        """The reference path of episode ``i``."""
        return self._paths[i]

    def __repr__(self) -> str:
        return f"GroundTruth(<{len(self._paths)} episodes, hidden>)"


def split_episodes(
    table: EpisodeTable, inputs: InputsFn | None = None
) -> tuple[list[str], list[EpisodeInputs], GroundTruth]:
    """Episode ids, the agent-side inputs and the hidden ground truth of ``table``.

    Example:
        >>> import numpy as np
        >>> t = EpisodeTable("r2r", "val", "x.json", "instr_id", ["1_0"], ["sc"],
        ...                  [("a", "b", "g")], [("g",)], np.array([0.5]), ["go"])
        >>> ids, ins, truth = split_episodes(t)
        >>> ins[0].start, ins[0].instruction, truth
        ('a', 'go', GroundTruth(<1 episodes, hidden>))
    """
    make = inputs or default_inputs
    return list(table.ids), [make(table, i) for i in range(len(table))], GroundTruth(table)
