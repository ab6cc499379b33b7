"""A continuous phase (r2r-ce) ranks by what the organiser measures, never by what a file says:
the distance to the goal on the twin worlds, not the file's ``distance_to_goal``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import make_server
from tests.server.helpers import encode
from vlneval.errors import InvalidInputError
from vlneval.server.models import Phase
from vlneval.server.services import admin

CE = Path("vlnce") / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
REFUSED = (
    "error: task option distance={}: a phase measures the distance to the goal itself, on the twin "
    "worlds (distance=twin, the default; they need --graphs DIR or --data-root DIR), never from "
    "the file it ranks: with carried (auto carries it when the file does) a file would rank by "
    "the distance_to_goal it writes"
)


@pytest.fixture
def srv(tmp_path: Path) -> Any:
    s = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    yield s
    s.client.close()
    s.db.dispose()


def _episodes(data_root: Path) -> list[dict[str, Any]]:
    return json.loads(gzip.decompress((data_root / CE / "val_unseen.json.gz").read_bytes()))[
        "episodes"
    ]


@pytest.mark.parametrize("given", ["auto", "carried", "none"])
def test_a_phase_refuses_a_distance_source_other_than_its_own(
    srv: Any, data_root: Path, given: str
) -> None:
    with pytest.raises(InvalidInputError) as exc:
        admin.create_phase(
            srv.db, "demo", "ce", task="r2r-ce", split="val_unseen", data_root=str(data_root),
            options={"distance": given},
        )  # fmt: skip
    assert str(exc.value) == REFUSED.format(given)


def test_a_phase_without_graphs_is_refused(srv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    from tests.tasks.vlnce.helpers import write_split

    monkeypatch.delenv("VLNEVAL_DATA", raising=False)
    (tmp_path / "split").mkdir()
    with pytest.raises(InvalidInputError) as exc:
        admin.create_phase(
            srv.db, "demo", "ce", task="r2r-ce", split="val",
            episodes_file=str(write_split(tmp_path / "split")[0]),
        )  # fmt: skip
    assert str(exc.value) == (
        "error: distance=twin needs the connectivity graphs: pass --graphs DIR or --data-root DIR"
    )


def test_a_file_that_writes_its_own_distances_is_scored_on_the_twin(
    srv: Any, data_root: Path
) -> None:
    """The stop-at-the-start file that writes ``distance_to_goal: 0`` everywhere ranked first
    with SR and SPL 100 % when the phase read them (distance auto); on the twin it fails."""
    admin.create_phase(
        srv.db, "demo", "ce", task="r2r-ce", split="val_unseen", data_root=str(data_root)
    )
    with srv.db.read() as s:
        assert admin.find_phase(s, "demo", "ce").options == {"distance": "twin"}
    cheat = {
        str(e["episode_id"]): [
            {"position": e["start_position"], "heading": 0.0, "stop": True, "distance_to_goal": 0.0}
        ]
        for e in _episodes(data_root)
    }
    r = srv.submit(srv.alpha, encode(cheat), phase="ce", name="cheat.json")
    assert r.status_code == 202, r.text
    assert srv.work() == 1
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert got["status"] == "finished", got["messages"]
    assert got["result"]["metrics"]["SR"] == 0.0 and got["result"]["metrics"]["SPL"] == 0.0


def test_a_stored_phase_that_read_the_files_distances_is_repaired(
    srv: Any, data_root: Path
) -> None:
    admin.create_phase(
        srv.db, "demo", "ce", task="r2r-ce", split="val_unseen", data_root=str(data_root)
    )
    with srv.db.write() as s:  # as stored before phases measured distances themselves
        admin.find_phase(s, "demo", "ce").options = {"distance": "auto"}
        s.add(Phase(**_copy_fields(admin.find_phase(s, "demo", "ce"), slug="old", graphs_dir=None)))
        gone = str(data_root / "no-such-graphs")  # a folder moved since: its results stay
        s.add(
            Phase(**_copy_fields(admin.find_phase(s, "demo", "ce"), slug="moved", graphs_dir=gone))
        )
    flagged = [
        f"phase demo/{slug}: distance=auto ranks files by the distance_to_goal they write, and it "
        "has no graphs folder for distance=twin: recreate it with --graphs DIR"
        for slug in ("old", "moved")
    ]
    assert admin.repair_distance_sources(srv.db) == [
        "phase demo/ce: distance=auto is now distance=twin; 0 finished submission(s) queued to "
        "be scored again",
        *flagged,
    ]
    with srv.db.read() as s:
        assert admin.find_phase(s, "demo", "ce").options == {"distance": "twin"}
        assert admin.find_phase(s, "demo", "moved").options == {"distance": "auto"}
    assert admin.repair_distance_sources(srv.db) == flagged


def _copy_fields(ph: Phase, **changes: Any) -> dict[str, Any]:
    keep = ("challenge_id", "task", "split", "profile", "episodes_file", "data_sha256",
            "n_episodes", "primary_metric", "higher_is_better", "options")  # fmt: skip
    return {**{k: getattr(ph, k) for k in keep}, "title": "old", **changes}


def test_the_ranking_metric_s_reason_drops_the_option_hints() -> None:
    """The refusal ``this phase ranks by SPL: ...`` puts the library's hints for the phase: the
    CLI's ``--distance twin`` advice is not shown to a team, which cannot choose options."""
    from vlneval.errors import hinted
    from vlneval.server.services.scoring import _na
    from vlneval.tasks.vlnce.summary import NO_DISTANCE

    assert _na([hinted("SPL will be n/a: ", NO_DISTANCE)], "SPL") == [
        "no distance source: the predictions carry no distance_to_goal; carry it per step (as a "
        "Habitat run measures it)"
    ]


def _gt(data_root: Path) -> dict[str, Any]:
    return json.loads(gzip.decompress((data_root / CE / "val_unseen_gt.json.gz").read_bytes()))


def test_a_phase_refuses_a_teleport_by_default(srv: Any, data_root: Path) -> None:
    """The reference paths, one of them cut to its two ends: the jump is shorter than the
    walk, and a phase that scored it would rank it above the reference on SPL."""
    import numpy as np

    admin.create_phase(
        srv.db, "demo", "ce", task="r2r-ce", split="val_unseen", data_root=str(data_root)
    )
    with srv.db.read() as s:
        assert admin.find_phase(s, "demo", "ce").profile == "vlnce-strict"
    gt = _gt(data_root)
    walks = {
        str(e["episode_id"]): [
            {"position": p, "heading": 0.0, "stop": k == len(path) - 1} for k, p in enumerate(path)
        ]
        for e in _episodes(data_root)
        for path in [gt[str(e["episode_id"])]["locations"]]
    }
    first = next(iter(walks))
    walks[first] = [walks[first][0], walks[first][-1]]
    jump = np.linalg.norm(np.subtract(walks[first][1]["position"], walks[first][0]["position"]))
    r = srv.submit(srv.alpha, encode(walks), phase="ce", name="tele.json")
    assert r.status_code == 202, r.text
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert (got["status"], got["error_kind"]) == ("failed", "invalid")
    assert got["messages"] == [
        f'tele.json: episode_id "{first}": [1].position: moves {jump:.2f} m from the previous '
        "position: one action moves at most 1 m (profile vlnce-strict refuses such moves)"
    ]


def test_create_phase_says_how_a_teleport_is_treated(
    srv: Any, data_root: Path, tmp_path: Path, capsys: Any
) -> None:
    from vlneval.cli.main import main

    data = str(tmp_path / "cli")
    assert main(["admin", "--data-dir", data, "migrate"]) == 0
    assert main(["admin", "--data-dir", data, "create-challenge", "--slug", "c"]) == 0
    capsys.readouterr()
    for slug, profile in (("strict", []), ("exact", ["--profile", "vlnce-exact"])):
        argv = ["create-phase", "--challenge", "c", "--slug", slug, "--task", "r2r-ce"]
        argv += ["--split", "val_unseen", "--data-root", str(data_root), *profile]
        assert main(["admin", "--data-dir", data, *argv]) == 0
        out = capsys.readouterr().out
        assert "options distance=twin;" in out
        assert out.splitlines()[-1] == (
            "note: profile vlnce-strict refuses a file with a logged move longer than one action "
            "allows (a teleport)"
            if slug == "strict"
            else "note: profile vlnce-exact scores a logged move longer than one action allows "
            "(a teleport) with a warning and ranks the file; --profile vlnce-strict refuses it"
        )
