"""A task's scorer reads its split through the task's own loader (``Task.loader``), the one
blind checks and the server use, so the two never read a file differently."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.test_registry_tasks import CASES
from vlneval.registry import load_entry_point
from vlneval.tasks import get_task
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.request import SplitRequest


@pytest.mark.parametrize("name", ["hanna", "soon"])
def test_the_scorer_reads_through_the_task_s_loader(name: str, tmp_path: Path) -> None:
    split, kw, _ = CASES[name](tmp_path)
    task = get_task(name)
    own, calls = load_entry_point(str(task.loader)), []

    def loader(path: Path, **options: Any) -> Any:
        calls.append((Path(path).name, options))
        return own(path, **options)

    wrapped = dataclasses.replace(task, loader=loader)
    profile = task.scoring_profile()
    scorer = wrapped.open(SplitRequest(wrapped, split, profile, root=kw["root"]))
    assert calls == [(Path(scorer.episodes.source).name, {"task": name, "split": split})]


def test_a_loader_of_another_kind_of_table_is_refused(tmp_path: Path) -> None:
    split, kw, _ = CASES["soon"](tmp_path)
    task = get_task("soon")
    own = load_entry_point(str(task.loader))

    def plain(path: Path, **options: Any) -> EpisodeTable:  # SOON's rows, not a SoonEpisodes
        table = own(path, **options)
        return EpisodeTable(
            **{f.name: getattr(table, f.name) for f in dataclasses.fields(EpisodeTable) if f.init}
        )

    other = dataclasses.replace(task, loader=plain)
    request = SplitRequest(other, split, task.scoring_profile(), root=kw["root"])
    with pytest.raises(
        TypeError, match="^task soon's loader gave a table of type EpisodeTable, not SoonEpisodes$"
    ):
        other.open(request)


def test_a_task_names_no_id_field_of_its_own() -> None:
    """The id field is the episode table's (``EpisodeTable.id_field``): a second one on the
    task could only disagree with it."""
    assert "id_field" not in {f.name for f in dataclasses.fields(get_task("rxr"))}
