"""``EpisodeTable.subset`` keeps a subclass's class and its per-episode columns."""

from __future__ import annotations

from pathlib import Path

from tests.tasks.reverie.reverie_fixtures import reverie_root
from tests.tasks.soon.soon_fixtures import soon_root
from vlneval.tasks.reverie.format import ReverieEpisodes, load_reverie
from vlneval.tasks.soon.format import SoonEpisodes, load_soon


def test_reverie_subset_keeps_objects_and_release(tmp_path: Path) -> None:
    root = reverie_root(tmp_path)
    table = load_reverie(root / "reverie" / "REVERIE_val.json", split="val", data_version="v1")
    sub = table.subset([3, 0])
    assert isinstance(sub, ReverieEpisodes)
    assert sub.ids == [table.ids[3], table.ids[0]]
    assert sub.object_ids == [table.object_ids[3], table.object_ids[0]] == ["9", "7"]
    assert sub.data_version == "v1" and sub.split == "val" and sub.scorable
    assert sub.headings.tolist() == [table.headings[3], table.headings[0]]
    assert sub.index == {table.ids[3]: 0, table.ids[0]: 1}
    assert len(table) == 4 and table.object_ids == ["7", "7", "9", "9"]  # the table is unchanged


def test_soon_subset_renumbers_instructions(tmp_path: Path) -> None:
    table = load_soon(soon_root(tmp_path) / "soon" / "val.json", split="val")
    sub = table.subset([4, 1, 0])
    assert isinstance(sub, SoonEpisodes)
    assert sub.instr_ids == ["4", "1", "1"] and sub.start_index == [0, 1, 0]
    assert sub.boxes == [table.boxes[4], table.boxes[1], table.boxes[0]]
    assert sub.by_instruction == {"4": [0], "1": [1, 2]}
    assert table.by_instruction["1"] == [0, 1]
