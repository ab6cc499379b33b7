"""What an organiser is told and can do: complete files on every phase, the phase's settings
shown, internal failures found and scored again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.conftest import Server
from tests.server.helpers import demo_predictions, encode
from vlneval.cli.main import main
from vlneval.server.services import admin


def _admin(capsys: pytest.CaptureFixture[str], data: str, *args: str) -> str:
    assert main(["admin", "--data-dir", data, *args]) == 0
    return capsys.readouterr().out


def test_a_partial_profile_phase_refuses_a_one_record_file(sqlite_server: Server) -> None:
    """r2r-duet scores partial files; on a phase one record would score (and rank) one
    episode's hidden distances, so the phase refuses it as an incomplete file."""
    srv = sqlite_server
    admin.create_phase(srv.db, "demo", "duet", task="demo", profile="r2r-duet")
    first = demo_predictions()[0]
    uid = srv.submit(srv.alpha, encode([first]), phase="duet").json()["id"]
    srv.work()
    got = srv.get(uid, srv.alpha).json()
    assert (got["status"], got["error_kind"], got["result"]) == ("failed", "invalid", None)
    assert got["messages"] == [
        "preds.json: 35 of 36 episodes have no prediction (first: 100_1, 100_2, 101_0, 101_1, "
        "101_2); the official scorer requires all of them (this phase scores complete files only)"
    ]
    uid = srv.submit(srv.alpha, encode(demo_predictions()), phase="duet").json()["id"]
    srv.work()
    assert srv.get(uid, srv.alpha).json()["status"] == "finished"


def test_create_phase_says_a_partial_profile_takes_complete_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "srv")
    _admin(capsys, data, "create-challenge", "--slug", "demo", "--title", "Demo")
    out = _admin(
        capsys, data, "create-phase", "--challenge", "demo", "--slug", "duet", "--task", "demo",
        "--profile", "r2r-duet",
    )  # fmt: skip
    assert out.splitlines()[1] == (
        "note: profile r2r-duet scores partial files as its script does; this phase takes "
        "complete files only (a prediction for each of the 36 episodes), since one episode's "
        "numbers would show its hidden labels"
    )
    out = _admin(
        capsys, data, "create-phase", "--challenge", "demo", "--slug", "v", "--task", "demo"
    )
    assert "note:" not in out
