"""A split's scans are checked against its graphs once per open: ``Task.open`` checks every
scorer's, so the R2R family's scorer loads its split without a second check; ``load_split``
alone (runs, the server) still checks."""

from __future__ import annotations

from pathlib import Path

import pytest

import vlneval
from vlneval.tasks import get_profile, get_task
from vlneval.tasks.common import scoring


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    check = scoring.check_scans

    def counted(episodes: scoring.EpisodeTable, store: scoring.GraphStore) -> None:
        seen.append(episodes.split)
        check(episodes, store)

    monkeypatch.setattr(scoring, "check_scans", counted)
    return seen


def test_a_scorer_checks_the_scans_once(calls: list[str]) -> None:
    vlneval.Scorer("demo", "val")
    assert calls == ["val"]


def test_load_split_alone_checks_the_scans(calls: list[str]) -> None:
    scoring.load_split(get_task("demo"), "val", get_profile("demo"))
    assert calls == ["val"]


def test_an_unknown_scan_is_still_refused_when_the_scorer_opens(tmp_path: Path) -> None:
    from vlneval.tasks.common.root import demo_root

    source = demo_root() / "demo" / "DEMO_val.json"
    path = tmp_path / "DEMO_val.json"
    path.write_text(source.read_text().replace("demoHouse0A", "demoHouse0X", 1))
    with pytest.raises(vlneval.errors.InvalidInputError) as info:
        vlneval.Scorer("demo", "val", episodes=path)
    graphs = demo_root() / "matterport3d" / "connectivity"
    assert str(info.value) == (
        f"error: {path}: instr_id \"100_0\": scan: no connectivity file for scan 'demoHouse0X' "
        f"in {graphs}; did you mean 'demoHouse0A'? (3 episodes have this scan)"
    )
