"""What a team is shown of its own submission: its words as written, no server file, numbers
rounded as the pages show them."""

from __future__ import annotations

from tests.server.helpers import demo_predictions, encode, login, stop_predictions
from vlneval.server.services import admin
from vlneval.server.services.scoring import _sanitise
from vlneval.server.services.validation import ServerPaths


def test_a_viewpoint_the_submitter_wrote_as_a_path_is_shown_as_written(sqlite_server) -> None:
    """Only the server's own folders are secret: a slash in the submitter's text is no file of
    the server's, and the team must see which of its values is wrong."""
    srv = sqlite_server
    records = stop_predictions()
    records[0]["trajectory"].append(["/srv/data/x.json", 0.0, 0.0])
    records[1]["instr_id"] = "/home/me/x_0"
    r = srv.submit(srv.alpha, encode(records), name="slash.json")
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert got["messages"] == [
        "slash.json: 1 of 36 episodes have no prediction (first: 100_1); profile demo requires "
        "all of them: this phase scores complete files only; 1 record has an id not in "
        'the split: "/home/me/x_0" (an id of another type, or with spaces? ids match exactly, '
        'e.g. "100_1")',
        'slash.json: instr_id "100_0": trajectory[1]: viewpoint /srv/data/x.json is not in scan '
        "demoHouse0A",
    ]


def test_every_string_of_a_summary_names_a_server_file_as_server_file() -> None:
    """REVERIE's card names where its boxes lie (``object_boxes.source``): a server file."""
    summary = {
        "protocol": {"object_boxes": {"version": "v1", "source": "/srv/data/reverie/BBox.tar.gz"}},
        "profile_rules": {"notes": ["read from /srv/data/reverie, as given"]},
        "warnings": [],
    }
    out = _sanitise(summary, "preds.json", "/srv/up/p.json", ServerPaths(["/srv/data"]))
    assert out["protocol"] == {"object_boxes": {"version": "v1", "source": "[server file]"}}
    assert out["profile_rules"] == {"notes": ["read from [server file], as given"]}


def test_a_teams_own_result_is_rounded_as_the_pages_show_it(sqlite_server) -> None:
    """At full precision two submissions differing in one episode give its hidden score: the
    team sees its metrics, bounds and check numbers as the board rounds them (SPL 0.4708,
    NE 4.08); the organisers' database keeps the full values."""
    from vlneval.server.models import Result

    srv = sqlite_server
    r = srv.submit(srv.alpha, encode(demo_predictions()))
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()["result"]
    assert got["primary_value"] == 0.4708
    assert got["metrics"] == {
        "TL": 6.91, "NE": 4.08, "OSR": 0.5556, "SR": 0.5278, "SPL": 0.4708, "nDTW": 0.6059,
        "sDTW": 0.4739, "CLS": 0.5668,
    }  # fmt: skip
    assert got["summary"]["metrics"] == got["metrics"]
    assert got["summary"]["checks"][0] == {
        "name": "SR <= OSR", "holds": True, "detail": "SR 0.5278, OSR 0.5556"
    }  # fmt: skip
    for label, (low, high) in got["intervals"].items():
        assert (round(low, 4), round(high, 4)) == (low, high), label
    listed = srv.client.get(
        "/api/v1/submissions?challenge=demo&phase=val", headers=srv.auth(srv.alpha)
    ).json()
    assert listed[0]["result"] == got
    login(srv.client, srv.alpha)
    page = srv.client.get(f"/submissions/{r.json()['id']}").text
    assert '<td class="num">47.08</td>' in page and "0.470787" not in page
    with srv.db.read() as s:
        [stored] = s.query(Result).all()
        assert stored.metrics["SPL"] == 0.4707871688307103
        assert stored.summary["checks"][0]["detail"] == "SR 0.527778, OSR 0.555556"


def test_a_teams_own_checks_do_not_count_episodes_past_a_bound(sqlite_server) -> None:
    """How many episodes have an nDTW or CLS outside its bounds depends on the labels (an nDTW
    of 0 is a path far from the reference): two files differing in one episode would tell
    that episode's. The team is told whether there are any; the database keeps the count."""
    from vlneval.server.models import Result

    srv = sqlite_server
    r = srv.submit(srv.alpha, encode(demo_predictions()))
    srv.work()
    checks = srv.get(r.json()["id"], srv.alpha).json()["result"]["summary"]["checks"]
    shown = {c["name"]: c["detail"] for c in checks if "outside" in c["detail"]}
    assert shown == {"0 < nDTW <= 1": "no episode outside", "0 <= CLS <= 1": "no episode outside"}
    with srv.db.read() as s:
        [stored] = s.query(Result).all()
        kept = {c["name"]: c["detail"] for c in stored.summary["checks"] if c["name"] in shown}
    assert kept == {
        "0 < nDTW <= 1": "0 episode(s) outside",
        "0 <= CLS <= 1": "0 episode(s) outside",
    }


def test_a_touchdown_sdr_result_counts_the_pairs_asked_for_not_the_labelled_ones(
    sqlite_server, tmp_path
) -> None:
    """The fixture asks for 9 (route, panorama) pairs and scores the 3 labelled ones: the team
    and the board see 9, the count the team already knows."""
    from tests.tasks.touchdown.fixture import make_root

    srv = sqlite_server
    root = make_root(tmp_path / "root")
    admin.create_phase(srv.db, "demo", "sdr", task="touchdown-sdr", split="dev",
                       data_root=str(root), graphs=str(root / "touchdown" / "graph"))  # fmt: skip
    pairs = [(r, p) for r in (1, 2, 3) for p in ("main", "pre", "post")]
    full = [{"route_id": r, "pano": p, "x": 1840.0, "y": 400.0} for r, p in pairs]
    r = srv.submit(srv.alpha, encode(full), phase="sdr", name="all.json")
    srv.work()
    res = srv.get(r.json()["id"], srv.alpha).json()["result"]
    assert (res["n_episodes"], res["summary"]["n_episodes"], res["summary"]["n_expected"]) == (
        9,
        9,
        9,
    )
    assert (res["summary"]["protocol"]["episodes"], res["summary"]["protocol"]["n_expected"]) == (
        9,
        9,
    )
    [entry] = srv.client.get("/api/v1/challenges/demo/phases/sdr/leaderboard").json()["entries"]
    assert (entry["n_episodes"], entry["protocol"]["episodes"]) == (9, "9")
    # bounds on the 3 labelled rows would tell their count (SDR@40's Clopper-Pearson high end
    # 1 - 0.025 ** (1 / 3) = 0.7076): neither the team nor the board is given any
    assert res["intervals"] == {} and entry["intervals"] == {}


def test_a_reverie_phase_states_its_release_and_names_no_server_file(data_root, tmp_path, caplog):
    """The default release (v2) under a data root, scored with the v1 boxes (the v2 ones are on
    Google Drive only): the team's card says v2 as `vlneval score` does, names no server file,
    the board shows the data version beside the profile (JSON and HTML), and the organisers'
    log says the v2 episodes are scored with the v1 boxes."""
    import json
    import logging

    from tests.server.conftest import make_server

    caplog.set_level(logging.INFO)
    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    admin.create_phase(srv.db, "demo", "rev", task="reverie", split="val_unseen",
                       data_root=str(data_root))  # fmt: skip
    from vlneval.io import load_json

    eps = load_json(data_root / "reverie" / "data_v2" / "REVERIE_val_unseen.json.gz")
    records = [
        {"instr_id": f"{e['id']}_{k}", "trajectory": [[e["path"][0], 0.0, 0.0]], "predObjId": 1}
        for e in eps
        for k in range(len(e["instructions"]))
    ]
    r = srv.submit(srv.alpha, json.dumps(records).encode(), phase="rev", name="rev.json")
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    summary = got["result"]["summary"]
    assert (summary["data_version"], summary["protocol"]["data_version"]) == ("v2", "v2")
    assert summary["protocol"]["object_boxes"]["source"] == "[server file]"
    assert str(data_root) not in json.dumps(got) and "vlneval-public-" not in json.dumps(got)
    assert "scoring v2 episodes with the v1 boxes at " in caplog.text
    board = srv.client.get("/api/v1/challenges/demo/phases/rev/leaderboard").json()
    assert board["entries"][0]["protocol"]["profile"] == "reverie v1 (data v2)"
    assert "<dt>profile</dt><dd>reverie v1 (data v2)</dd>" in srv.client.get("/c/demo/rev").text
    srv.client.close()
    srv.db.dispose()


def test_a_file_that_cannot_give_the_phases_ranking_metric_is_refused_free(data_root, tmp_path):
    """A REVERIE phase ranks by RGSPL: a navigation-only file (no predObjId) could never be
    ranked, so it is refused before it costs quota, with the reason `vlneval validate` gives."""
    import json

    from tests.server.conftest import make_server
    from vlneval.io import load_json

    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    admin.create_phase(srv.db, "demo", "rev", task="reverie", split="val_unseen",
                       data_root=str(data_root))  # fmt: skip
    eps = load_json(data_root / "reverie" / "data_v2" / "REVERIE_val_unseen.json.gz")
    records = [
        {"instr_id": f"{e['id']}_{k}", "trajectory": [[e["path"][0], 0.0, 0.0]]}
        for e in eps
        for k in range(len(e["instructions"]))
    ]
    r = srv.submit(srv.alpha, json.dumps(records).encode(), phase="rev", name="nav.json")
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert (got["status"], got["error_kind"]) == ("failed", "invalid")
    assert got["messages"] == [
        "nav.json: this phase ranks by RGSPL: no predicted objects (predObjId) in the predictions "
        "file; give each record the id of the object it names as predObjId"
    ]
    quota = srv.client.get(
        "/api/v1/challenges/demo/phases/rev/quota", headers=srv.auth(srv.alpha)
    ).json()
    assert quota["used_today"] == 0
    srv.client.close()
    srv.db.dispose()


def test_a_reverie_phase_says_it_requires_complete_files_itself(data_root, tmp_path):
    """VLN-DUET's REVERIE scorer takes partial files: on a phase the task's own reader, on the
    public copy, refuses one in the phase's words, naming no profile (the message is built
    so)."""
    import json

    from tests.server.conftest import make_server
    from vlneval.io import load_json

    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    admin.create_phase(srv.db, "demo", "rev", task="reverie", split="val_unseen",
                       profile="reverie-duet", data_root=str(data_root))  # fmt: skip
    eps = load_json(data_root / "reverie" / "data_v2" / "REVERIE_val_unseen.json.gz")
    records = [
        {"instr_id": f"{e['id']}_{k}", "trajectory": [[e["path"][0], 0.0, 0.0]], "pred_objid": 1}
        for e in eps
        for k in range(len(e["instructions"]))
    ]
    r = srv.submit(srv.alpha, json.dumps(records[1:]).encode(), phase="rev", name="rev.json")
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert (got["status"], got["error_kind"]) == ("failed", "invalid")
    assert got["messages"] == [
        f"rev.json: 1 of {len(records)} episodes have no prediction (first: "
        f"{records[0]['instr_id']}); this phase scores complete files only"
    ]
    srv.client.close()
    srv.db.dispose()


def test_hidden_files_in_a_top_folder_are_server_files(caplog) -> None:
    """A phase's data may sit right in a top folder (``/hidden``): that folder, the episodes
    file and the boxes are the server's own; ``/`` and the temporary folder's root are not."""
    import logging
    import tempfile

    from vlneval.server.services.scoring import PhaseSpec, server_paths

    caplog.set_level(logging.INFO)
    spec = PhaseSpec(
        "reverie", "test", "reverie", "/hidden/REVERIE_test.json", None, None, "RGS",
        '{"bboxes": "/boxes.tar.gz"}',
    )  # fmt: skip
    paths = server_paths(spec)
    assert {"/hidden", "/hidden/REVERIE_test.json", "/boxes.tar.gz"} <= paths.folders
    assert not {"/", tempfile.gettempdir()} & paths.folders
    summary = {
        "warnings": ["scoring with the v1 boxes at /hidden/BBox.tar.gz", "2 ids ignored"],
        "unavailable": {"RGS": "no boxes in /boxes.tar.gz (read /hidden/REVERIE_test.json)"},
        "protocol": {"object_boxes": {"source": "/hidden/REVERIE_test.json"}},
    }
    out = _sanitise(summary, "preds.json", "/srv/up/p.json", paths)
    assert out["warnings"] == ["2 ids ignored"]
    assert out["unavailable"] == {"RGS": "no boxes in [server file] (read [server file])"}
    assert out["protocol"] == {"object_boxes": {"source": "[server file]"}}
    assert "/hidden/BBox.tar.gz" in caplog.text


def test_a_result_stored_before_redaction_is_redacted_when_shown(sqlite_server, tmp_path) -> None:
    """A summary stored by an earlier server may still name the phase's files: the team's
    result and the board show them as ``[server file]``."""
    from tests.server.helpers import DEMO_PREDICTIONS
    from tests.server.test_server_organiser import _hidden_phase
    from vlneval.server.models import Result

    srv = sqlite_server
    hidden = _hidden_phase(srv, tmp_path)
    uid = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes(), phase="h").json()["id"]
    srv.work()
    source = str(tmp_path / "BBox.tar.gz")
    with srv.db.write() as s:
        [stored] = s.query(Result).all()
        card = {**stored.summary["protocol"], "object_boxes": {"source": source}}
        stored.summary = {**stored.summary, "protocol": card, "notes": [f"read {hidden}"]}
    got = srv.get(uid, srv.alpha).json()["result"]["summary"]
    assert got["protocol"]["object_boxes"] == {"source": "[server file]"}
    assert got["notes"] == ["read [server file]"]
    board = srv.client.get("/api/v1/challenges/demo/phases/h/leaderboard").json()
    assert str(tmp_path) not in str(board)


def test_a_touchdown_sdr_phase_stored_with_its_labelled_count_is_repaired_at_start_up(
    sqlite_server, tmp_path, caplog
) -> None:
    """A phase created before the count was of the pairs asked for recorded the 3 labelled
    ones: the start-up repair counts the 9 asked for, once, and says so in one line."""
    import logging

    from tests.tasks.touchdown.fixture import make_root
    from vlneval.server.app import create_app
    from vlneval.server.models import Phase

    srv = sqlite_server
    caplog.set_level(logging.INFO)
    root = make_root(tmp_path / "root")
    admin.create_phase(srv.db, "demo", "sdr", task="touchdown-sdr", split="dev",
                       data_root=str(root), graphs=str(root / "touchdown" / "graph"))  # fmt: skip
    with srv.db.write() as s:
        s.query(Phase).filter(Phase.slug == "sdr").one().n_episodes = 3
    create_app(srv.cfg, db=srv.db)  # the server starting again
    assert caplog.text.count("phase demo/sdr: asks for 9 items, not 3") == 1
    assert admin.repair_item_counts(srv.db) == []
    with srv.db.read() as s:
        assert s.query(Phase).filter(Phase.slug == "sdr").one().n_episodes == 9
