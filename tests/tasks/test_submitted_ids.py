"""The ids a predictions file names a split by are the table's to say
(``EpisodeTable.submitted_ids``): shared code knows no task's columns."""

from __future__ import annotations

import dataclasses

from vlneval.tasks.common.blind import submitted_ids
from vlneval.tasks.common.episodes import EpisodeBuilder, EpisodeTable


@dataclasses.dataclass
class _Goals(EpisodeTable):
    """A new task's table whose records name a goal, not an episode."""

    goal_ids: list[str] = dataclasses.field(default_factory=list)

    def submitted_ids(self) -> tuple[str, list[str]]:
        return "goal_id", self.goal_ids


def test_a_table_names_its_own_submitted_ids() -> None:
    b = EpisodeBuilder()
    b.add("1#0", "s", ("a",), ("a",), 0.0, "x")
    plain = b.build(task="t", split="s", source="f", id_field="episode_id")
    table = _Goals(**{f.name: getattr(plain, f.name) for f in dataclasses.fields(plain) if f.init})
    table.goal_ids = ["g1"]
    assert submitted_ids(plain) == ("episode_id", ["1#0"])
    assert submitted_ids(table) == ("goal_id", ["g1"])
