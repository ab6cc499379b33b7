"""What an organiser is told and can do: complete files on every phase, the phase's settings
shown, internal failures found and scored again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.server.conftest import Server
from tests.server.helpers import DEMO_PREDICTIONS, demo_predictions, encode
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError, UnknownNameError
from vlneval.server.services import admin
from vlneval.tasks.common.protocol import DECLARABLE


def _admin(capsys: pytest.CaptureFixture[str], data: str, *args: str) -> str:
    """``vlneval admin ...`` on the data folder ``data`` (ending in NUL: with its database URL
    ``sqlite:///<folder's parent>/server.sqlite3``, as the test servers have)."""
    where = ["--data-dir", data]
    if data.endswith("\0"):
        folder = Path(data[:-1])
        where = [
            "--data-dir",
            str(folder),
            "--database-url",
            f"sqlite:///{folder.parent / 'server.sqlite3'}",
        ]
    assert main(["admin", *where, *args]) == 0
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
        "101_2); this phase scores complete files only"
    ]  # r2r-duet's official scorer takes partial files: the phase, not it, requires them all
    uid = srv.submit(srv.alpha, encode(demo_predictions()), phase="duet").json()["id"]
    srv.work()
    assert srv.get(uid, srv.alpha).json()["status"] == "finished"


def test_a_phase_words_its_own_complete_file_rule() -> None:
    """The phase's profile says that the phase, not the script, requires every episode: the
    library builds the message in the phase's words, and nothing edits it afterwards."""
    from vlneval.server.services.validation import for_phase
    from vlneval.tasks.common.checks import incomplete

    duet = incomplete("1 of 2 episodes", ["1_0"], admin.phase_profile("r2r-duet"))
    assert str(duet) == (
        "1 of 2 episodes have no prediction (first: 1_0); score only the predicted ones with "
        "--subset (subset=True in Python), reported as partial"
    )
    assert for_phase(duet) == (
        "1 of 2 episodes have no prediction (first: 1_0); this phase scores complete files only"
    )
    r2r = incomplete("1 of 2 episodes", ["1_0"], admin.phase_profile("r2r"))
    assert for_phase(r2r) == (
        "1 of 2 episodes have no prediction (first: 1_0); profile r2r requires all of them: "
        "this phase scores complete files only"
    )


def test_create_phase_says_a_partial_profile_takes_complete_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "srv")
    _admin(capsys, data, "create-challenge", "--slug", "demo", "--title", "Demo")
    out = _admin(
        capsys, data, "create-phase", "--challenge", "demo", "--slug", "duet", "--task", "demo",
        "--profile", "r2r-duet",
    )  # fmt: skip
    assert out.splitlines()[2] == (
        "note: profile r2r-duet scores partial files as its script does; this phase takes "
        "complete files only (a prediction for each of the 36 episodes), since one episode's "
        "numbers would show its hidden labels"
    )
    out = _admin(
        capsys, data, "create-phase", "--challenge", "demo", "--slug", "v", "--task", "demo"
    )
    assert "note:" not in out


def _run_card(tmp_path: Path) -> str:
    """The protocol card ``vlneval run`` writes beside its predictions."""
    out = tmp_path / "run.json"
    argv = ["run", "--task", "demo", "--split", "val", "--agent", "random", "--seed", "0"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    return (tmp_path / "run.protocol.json").read_text()


def test_the_card_vlneval_run_writes_is_accepted_as_protocol_fields(
    sqlite_server: Server, tmp_path: Path
) -> None:
    srv, card = sqlite_server, _run_card(tmp_path)
    r = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes(), protocol=card)
    assert r.status_code == 202, r.text
    declared = r.json()["declared"]
    written = json.loads(card)
    assert declared == {k: v for k, v in written.items() if k in DECLARABLE}
    assert declared["action_space"]["field_of_view"]["image"] == [640, 480]
    assert {"task", "software", "agent", "vlneval_version"}.isdisjoint(declared)


def test_a_too_deep_protocol_field_is_told_what_a_field_holds(sqlite_server: Server) -> None:
    srv = sqlite_server
    r = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes(), protocol='{"seeds": [[[[1]]]]}')
    assert r.status_code == 422
    assert r.json() == {
        "detail": "the protocol fields were not accepted",
        "problems": [
            "protocol field seeds: expected a string, number, true/false, or a list or object of "
            "at most 20 of those, nested at most 3 deep"
        ],
    }
    deep = '{"seeds": ' + "[" * 9 + "]" * 9 + "}"
    r = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes(), protocol=deep)
    assert r.json()["problems"] == [
        "protocol: nests lists and objects more than 8 levels deep (at line 1, column 18 "
        "(byte 17)); each protocol field is a string, number, true/false, or a list or object "
        "of at most 20 of those, nested at most 3 deep"
    ]


def test_a_byte_order_mark_is_dropped_as_vlneval_io_drops_it(sqlite_server: Server) -> None:
    """`vlneval validate` reads a file with a UTF-8 BOM: the server reads it the same way, plain
    or gzipped, and scores it as the file without the mark."""
    import gzip

    from vlneval.io import BOM
    from vlneval.server.services.uploads import check_upload

    srv, plain = sqlite_server, DEMO_PREDICTIONS.read_bytes()
    assert check_upload(BOM + plain, "p.json") == plain
    uids = [
        srv.submit(srv.alpha, body).json()["id"]
        for body in (plain, BOM + plain, gzip.compress(BOM + plain))
    ]
    srv.work()
    got = [srv.get(uid, srv.alpha).json() for uid in uids]
    assert [g["status"] for g in got] == ["finished"] * 3
    assert got[1]["result"]["metrics"] == got[2]["result"]["metrics"] == got[0]["result"]["metrics"]


def test_create_phase_options_are_checked_in_the_words_of_the_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vlneval.tasks import get_task

    data = str(tmp_path / "srv")
    _admin(capsys, data, "create-challenge", "--slug", "demo", "--title", "Demo")
    argv = ["admin", "--data-dir", data, "create-phase", "--challenge", "demo", "--slug", "x"]
    assert main([*argv, "--task", "demo", "--option", "path_type=x"]) == 2
    assert capsys.readouterr().err == (
        "error: option path_type (--path-type) does not apply to task demo (its options: none)\n"
    )
    with pytest.raises(UnknownNameError) as exc:
        admin.task_options(get_task("ndh"), {"path_type": "planer_path"})
    assert str(exc.value) == (
        "unknown ndh path type 'planer_path'; did you mean 'planner_path'? "
        "(known: planner_path, player_path, trusted_path)"
    )


def _hidden_phase(srv: Server, tmp_path: Path, level: int = 6) -> Path:
    """Phase ``h`` of ``demo`` on a gzipped copy of the demo episodes."""
    import gzip

    from tests.server.helpers import DEMO_EPISODES
    from vlneval.tasks.common.root import demo_root

    hidden = tmp_path / "DEMO_hidden.json.gz"
    hidden.write_bytes(gzip.compress(DEMO_EPISODES.read_bytes(), level, mtime=1))
    graphs = str(demo_root() / "matterport3d" / "connectivity")
    admin.create_phase(srv.db, "demo", "h", task="demo", episodes_file=str(hidden), graphs=graphs)
    return hidden


def _scored(srv: Server) -> str:
    uid = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes(), phase="h").json()["id"]
    srv.work()
    got = srv.get(uid, srv.alpha).json()
    return f"{got['status']} {got['error_kind']}"


def test_a_failure_is_not_requeued_past_the_quota_its_team_has_since_used(
    sqlite_server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The team was told an internal failure does not count, and used its quota since: queued
    again it would count, so it is left failed and named, unless --force."""
    import gzip

    srv = sqlite_server
    hidden = _hidden_phase(srv, tmp_path)
    admin.update_phase(srv.db, "demo", "h", total_quota=1)
    good = hidden.read_bytes()
    hidden.write_bytes(gzip.compress(gzip.decompress(good).replace(b"4.29", b"4.3")))
    assert _scored(srv) == "failed internal"
    hidden.write_bytes(good)
    assert _scored(srv) == "finished None"
    data = f"{srv.cfg.data_dir}\0"
    [failed] = admin.requeue_internal(srv.db, "demo", "h")[1]
    out = _admin(capsys, data, "requeue", "--challenge", "demo", "--phase", "h", "--internal")
    assert out == (
        "phase demo/h: left failed 1 whose team has since used its quota (--force queues "
        f"them, counted): {failed}\n"
    )
    admin.update_phase(srv.db, "demo", "h", total_quota=None, daily_quota=1)
    with srv.db.read() as s:
        from sqlalchemy import select

        from vlneval.server.models import Submission

        day = s.scalar(select(Submission.created_at).where(Submission.uid == failed))
    with pytest.raises(InvalidInputError) as err:
        admin.requeue(srv.db, failed)
    assert str(err.value) == (
        f"error: submission {failed} was not counted against its team's quota, which has since "
        f"been used (1 on {day:%Y-%m-%d}); queuing it again would count it: add --force to do so"
    )
    where = ["--challenge", "demo", "--phase", "h", "--internal", "--force"]
    out = _admin(capsys, data, "requeue", *where)
    assert out == f"phase demo/h: queued again 1 internal failure(s): {failed}\n"


def test_the_hidden_file_checksum_is_over_its_content(
    sqlite_server: Server, tmp_path: Path
) -> None:
    """Gzipping the same episodes again does not stop the phase; a phase that recorded the
    file's bytes (before content hashes) still scores."""
    import gzip

    from tests.server.helpers import DEMO_EPISODES
    from vlneval.server.models import Phase
    from vlneval.server.services.storage import sha256_hex

    srv = sqlite_server
    hidden = _hidden_phase(srv, tmp_path)
    with srv.db.read() as s:
        assert admin.find_phase(s, "demo", "h").data_sha256 == sha256_hex(
            DEMO_EPISODES.read_bytes()
        )
    hidden.write_bytes(gzip.compress(DEMO_EPISODES.read_bytes(), 1, mtime=7))
    assert _scored(srv) == "finished None"
    with srv.db.write() as s:
        s.get(Phase, admin.find_phase(s, "demo", "h").id).data_sha256 = sha256_hex(
            hidden.read_bytes()
        )
    assert _scored(srv) == "finished None"


def test_internal_failures_are_listed_and_requeued_by_phase(
    sqlite_server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    srv = sqlite_server
    hidden = _hidden_phase(srv, tmp_path)
    srv.submit(srv.alpha, b"[]", phase="h")  # refused: not an internal failure
    srv.work()
    changed = gzip.decompress(hidden.read_bytes()).replace(b'"distance": 4.29', b'"distance": 4.3')
    hidden.write_bytes(gzip.compress(changed))
    assert [_scored(srv), _scored(srv)] == ["failed internal"] * 2
    with srv.db.read() as s:
        from sqlalchemy import select

        from vlneval.server.models import Submission

        uids = s.scalars(
            select(Submission.uid)
            .where(Submission.error_kind == "internal")
            .order_by(Submission.id)
        ).all()
    data = f"{srv.cfg.data_dir}\0"  # the test database: --database-url below
    listing = _admin(capsys, data, "list").splitlines()
    line = next(k for k, text in enumerate(listing) if text.startswith("  phase h:"))
    assert listing[line + 1] == (
        "    options none; quotas none a day, none in all; opens none, closes none"
    )
    assert listing[line + 2] == (
        f"    2 failed internally: {uids[0]}, {uids[1]} (score them again: vlneval admin requeue "
        "--challenge demo --phase h --internal)"
    )
    assert listing[-1] == "queue: 2 failed internally, 1 refused"
    admin.update_phase(srv.db, "demo", "h", rehash=True)
    out = _admin(capsys, data, "requeue", "--challenge", "demo", "--phase", "h", "--internal")
    assert out == f"phase demo/h: queued again 2 internal failure(s): {uids[0]}, {uids[1]}\n"
    srv.work()
    assert [srv.get(u, srv.alpha).json()["status"] for u in uids] == ["finished"] * 2
    out = _admin(capsys, data, "requeue", "--challenge", "demo", "--phase", "h", "--internal")
    assert out == "phase demo/h has no internal failures to score again\n"
    assert main(["admin", "--data-dir", data[:-1], "requeue", "--phase", "h"]) == 2
    assert capsys.readouterr().err == (
        "error: requeue takes --submission ID, or --challenge C --phase P --internal (every "
        "submission of the phase the server failed to score)\n"
    )


def test_a_doubly_gzipped_upload_is_told_to_gunzip_once(sqlite_server: Server) -> None:
    import gzip

    srv = sqlite_server
    twice = gzip.compress(gzip.compress(DEMO_PREDICTIONS.read_bytes()))
    r = srv.submit(srv.alpha, twice, name="preds.json.gz")
    assert r.status_code == 422
    assert r.json()["problems"] == ["preds.json.gz: is gzipped twice; gunzip it once"]


def test_phase_windows_quotas_and_no_op_updates_are_told(
    sqlite_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    srv = sqlite_server
    data = f"{srv.cfg.data_dir}\0"
    where = ["--challenge", "demo", "--phase", "val"]
    with pytest.raises(InvalidInputError) as exc:
        admin.create_phase(
            srv.db, "demo", "t2", task="demo", opens_at=admin.parse_time("2027-01-01"),
            closes_at=admin.parse_time("2026-01-01"),
        )  # fmt: skip
    assert str(exc.value) == (
        "error: the phase closes (2026-01-01T00:00:00Z) before it opens (2027-01-01T00:00:00Z): "
        "it would never take a submission"
    )
    out = _admin(capsys, data, "update-phase", *where, "--opens", "2027-01-01")
    assert out == "updated phase demo/val: opens_at none -> 2027-01-01T00:00:00Z\n"
    argv = ["admin", "--data-dir", str(srv.cfg.data_dir), "--database-url", srv.cfg.database_url]
    assert main([*argv, "update-phase", *where, "--closes", "2026-06-01"]) == 2
    assert capsys.readouterr().err == (
        "error: the phase closes (2026-06-01T00:00:00Z) before it opens (2027-01-01T00:00:00Z): "
        "it would never take a submission\n"
    )
    out = _admin(capsys, data, "update-phase", *where, "--opens", "none", "--daily-quota", "0")
    assert (
        out
        == "updated phase demo/val: daily_quota none -> 0; opens_at 2027-01-01T00:00:00Z -> none\n"
    )
    r = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes())
    assert (r.status_code, r.json()["detail"]) == (
        429,
        "phase val takes no submissions (its daily quota is 0)",
    )
    out = _admin(capsys, data, "update-phase", *where, "--daily-quota", "none")
    assert out == "updated phase demo/val: daily_quota 0 -> none\n"
    assert srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes()).status_code == 202
    out = _admin(capsys, data, "update-phase", *where, "--daily-quota", "none")
    assert out == "phase demo/val: nothing changed (its settings already had these values)\n"
    assert main([*argv, "update-phase", *where]) == 2
    assert capsys.readouterr().err == (
        "error: nothing to change in phase demo/val: give a setting (--title, --leaderboard, "
        "--daily-quota, --closes, ...) or --rehash\n"
    )
    assert main([*argv, "update-phase", *where, "--total-quota", "-1"]) == 2
    assert capsys.readouterr().err == (
        "error: --total-quota '-1': give a count of 0 or more, or none (no limit)\n"
    )
    assert main([*argv, "update-phase", *where, "--daily-quota", "²"]) == 2
    assert capsys.readouterr().err == (
        "error: --daily-quota '²': give a count of 0 or more, or none (no limit)\n"
    )


def test_a_phase_s_options_quotas_and_window_are_printed_as_stored() -> None:
    import datetime as dt
    from types import SimpleNamespace

    from vlneval.server.admin_cli import _phase_settings

    phase = SimpleNamespace(
        options={"path_type": "trusted_path", "data_version": "v2"}, daily_quota=5,
        total_quota=None, opens_at=dt.datetime(2026, 1, 1), closes_at=None,
    )  # fmt: skip
    assert _phase_settings(phase) == (
        "options data_version=v2, path_type=trusted_path; quotas 5 a day, none in all; "
        "opens 2026-01-01T00:00:00Z, closes none"
    )
