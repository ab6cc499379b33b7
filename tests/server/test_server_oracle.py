"""The label-oracle probe and the wrong-split file.

The probe: a trajectory holding the string ``"q <viewpoint>"`` for candidate viewpoints, some on
a reference path (hidden labels) and some not. If the answer differed between the two kinds, one
refused file would tell which candidates are labels. Every candidate must be answered alike:
the messages, with the candidate replaced by a placeholder, are the same, and none says
``[hidden]``.
"""

from __future__ import annotations

import gzip
import json
import logging
import shutil

import pytest

from tests.server.conftest import make_server
from tests.server.helpers import demo_episodes, encode, hidden_values, stop_predictions
from vlneval.graph.store import GraphStore
from vlneval.server.services import admin
from vlneval.server.services.redact import Redactor, secrets_in_raw
from vlneval.tasks.common.root import demo_root

LABELS, STARTS = hidden_values()
DEMO_GRAPHS = demo_root() / "matterport3d" / "connectivity"


def _probe(records, episodes, graphs, n=50):
    """``records`` with ``n`` records probing one candidate each; the candidates and their kind."""
    on_path = sorted({v for ep in episodes for v in ep["path"][1:]})
    used = {v for ep in episodes for v in ep["path"]}
    off_path = sorted({v for ep in episodes for v in graphs.graph(ep["scan"]).ids if v not in used})
    starts = {f"{ep['path_id']}_0": ep["path"][0] for ep in episodes}
    n = min(n, len(starts))
    candidates = [(v, True) for v in on_path[: n // 2]] + [
        (v, False) for v in off_path[: n - n // 2]
    ]
    by_id = {r["instr_id"]: r for r in records}
    for (vp, _), eid in zip(candidates, list(starts)[:n], strict=False):
        by_id[eid]["trajectory"] = [[starts[eid], 0, 0], ["q " + vp, 0, 0]]
    return records, candidates


def _answered_alike(messages, candidates):
    assert len(messages) >= len(candidates)
    shapes = {}
    for vp, on in candidates:
        [m] = [m for m in messages if f"q {vp}" in m]
        shapes.setdefault(on, set()).add(_shape(m, vp))
    assert shapes[True] == shapes[False] and len(shapes[True]) <= 2  # one wording (and scans)
    assert not [m for m in messages if "[hidden]" in m]


def _shape(message, vp):
    import re

    text = message.replace(vp, "<vp>")
    text = re.sub(r'"\d+_\d+"', '"<id>"', text)
    return re.sub(r"scan \w+", "scan <scan>", text)


def test_the_probe_is_answered_alike_for_labels_and_non_labels(sqlite_server):
    eps = demo_episodes()
    records, candidates = _probe(stop_predictions(), eps, GraphStore(DEMO_GRAPHS), n=20)
    assert {on for _, on in candidates} == {True, False}
    r = sqlite_server.submit(sqlite_server.alpha, encode(records), name="probe.json")
    sqlite_server.work()
    got = sqlite_server.get(r.json()["id"], sqlite_server.alpha).json()
    assert got["status"] == "failed" and got["error_kind"] == "invalid"
    _answered_alike(got["messages"], candidates)


@pytest.fixture
def r2r(data_root, tmp_path):
    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    admin.create_phase(
        srv.db, "demo", "r2r-val-unseen", task="r2r", split="val_unseen",
        episodes_file=str(data_root / "r2r" / "R2R_val_unseen.json.gz"),
        graphs=str(data_root / "matterport3d" / "connectivity"),
    )  # fmt: skip
    yield srv, data_root
    srv.client.close()
    srv.db.dispose()


def _r2r(root, split):
    return json.loads(gzip.decompress((root / "r2r" / f"R2R_{split}.json.gz").read_bytes()))


def _stop(episodes):
    return [
        {"instr_id": f"{ep['path_id']}_{k}", "trajectory": [[ep["path"][0], 0.0, 0.0]]}
        for ep in episodes
        for k in range(len(ep["instructions"]))
    ]


def test_the_probe_on_real_r2r_val_unseen_reveals_nothing(r2r, caplog):
    srv, root = r2r
    caplog.set_level(logging.DEBUG)
    eps = _r2r(root, "val_unseen")
    graphs = GraphStore(root / "matterport3d" / "connectivity")
    records, candidates = _probe(_stop(eps), eps, graphs, n=50)
    r = srv.submit(srv.alpha, encode(records), phase="r2r-val-unseen", name="probe.json")
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert got["status"] == "failed" and got["error_kind"] == "invalid"
    _answered_alike(got["messages"], candidates)
    labels = {v for ep in eps for v in ep["path"]}
    assert [v for v in labels if v in caplog.text] == []


def test_a_val_seen_file_sent_to_val_unseen_is_told_its_split(r2r):
    srv, root = r2r
    records = _stop(_r2r(root, "val_seen"))
    r = srv.submit(srv.alpha, encode(records), phase="r2r-val-unseen", name="seen.json")
    assert r.status_code == 202
    assert srv.work() == 1
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert got["status"] == "failed" and got["error_kind"] == "invalid"
    assert got["messages"] == [
        "seen.json: no prediction matches an episode of r2r val_unseen (2,349 episodes); 1,020 "
        "of the file's 1,021 ids are episodes of r2r val_seen: this phase scores val_unseen, "
        "was the file made for val_seen?"
    ]


def test_a_bigger_split_s_file_past_the_record_limit_is_told_its_split_first(data_root, tmp_path):
    """A val_unseen file (2,349 records) sent to val_seen (at most 2,140): the record limit
    refuses it before its ids are read, and the split its records were made for is said first,
    counted over all of them (the API queues it: the worker holds the other splits' public
    ids)."""
    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    admin.create_phase(
        srv.db, "demo", "seen", task="r2r", split="val_seen", data_root=str(data_root)
    )
    r = srv.submit(srv.alpha, encode(_stop(_r2r(data_root, "val_unseen"))), phase="seen",
                   name="unseen.json")  # fmt: skip
    assert r.status_code == 202, r.text
    assert srv.work() == 1
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert (got["status"], got["error_kind"]) == ("failed", "invalid")
    assert got["messages"] == [
        "unseen.json: no prediction matches an episode of r2r val_seen (1,020 episodes); 2,349 "
        "of the file's 2,349 ids are episodes of r2r val_unseen: this phase scores val_seen, "
        "was the file made for val_unseen?",
        "unseen.json: holds 2,349 records; this phase has 1,020 episodes and accepts at most "
        "2,140 records",
    ]
    srv.client.close()
    srv.db.dispose()


def test_wrong_split_on_a_fixture_and_without_sibling_files(sqlite_server, tmp_path):
    """A phase whose hidden file has a public sibling split; then one without any."""
    srv = sqlite_server
    folder = tmp_path / "r2r"
    folder.mkdir()
    eps = demo_episodes()
    (folder / "R2R_val_unseen.json").write_text(json.dumps(eps))
    other = [{**ep, "path_id": ep["path_id"] + 5000} for ep in eps]
    (folder / "R2R_train.json").write_text(json.dumps(other))
    admin.create_phase(
        srv.db, "demo", "fixture", task="r2r", split="val_unseen",
        episodes_file=str(folder / "R2R_val_unseen.json"), graphs=str(DEMO_GRAPHS),
    )  # fmt: skip
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(folder / "R2R_val_unseen.json", lone / "R2R_val_unseen.json")
    admin.create_phase(
        srv.db, "demo", "lone", task="r2r", split="val_unseen",
        episodes_file=str(lone / "R2R_val_unseen.json"), graphs=str(DEMO_GRAPHS),
    )  # fmt: skip
    records = _stop(other)
    n = len(records)
    a = srv.submit(srv.alpha, encode(records), phase="fixture", name="t.json")
    b = srv.submit(srv.alpha, encode(records), phase="lone", name="t.json")
    assert srv.work() == 2
    [ma] = srv.get(a.json()["id"], srv.alpha).json()["messages"]
    [mb] = srv.get(b.json()["id"], srv.alpha).json()["messages"]
    assert ma == (
        f"t.json: no prediction matches an episode of r2r val_unseen ({n} episodes); {n} of the "
        f"file's {n} ids are episodes of r2r train: this phase scores val_unseen, was the file "
        "made for train?"
    )
    assert mb == "t.json: no prediction matches an episode of r2r val_unseen"


def test_a_scoring_bug_never_kills_the_worker(sqlite_server, monkeypatch):
    """Whatever raises inside scoring becomes an internal failure; the worker goes on."""
    from vlneval.server.services import validation

    def boom(*a, **k):
        raise ValueError("need at least one array to concatenate")

    monkeypatch.setattr("vlneval.server.services.scoring.public_problems", boom)
    r = sqlite_server.submit(sqlite_server.alpha, encode(stop_predictions()))
    assert sqlite_server.work() == 1
    got = sqlite_server.get(r.json()["id"], sqlite_server.alpha).json()
    assert got["status"] == "failed" and got["error_kind"] == "internal"
    assert validation.public_problems is not boom


def test_log_redaction_is_readable_and_covers_numbers():
    raw = [
        {"scan": "scanA", "path_id": 7, "path": ["goalviewpoint1"], "goal": [-3.21137, 0.5, 12.75]}
    ]
    strings, numbers = secrets_in_raw(raw)
    r = Redactor(strings, numbers)
    line = (
        "incident 1a2b: episode 7_0 in scanA: instructions ended at (-3.211, 0.50, 12.750) "
        "near goalviewpoint1 after 0.52 s"
    )
    assert r.strict(line) == (
        "incident 1a2b: episode 7_0 in scanA: instructions ended at ([hidden], 0.50, [hidden]) "
        "near [hidden] after 0.52 s"
    )


def test_one_teams_queue_does_not_starve_another(server):
    """alpha queues three files, then beta one: beta's is scored second, not fourth."""
    from vlneval.server.services.worker import Worker

    uids = [
        server.submit(server.alpha, encode(stop_predictions()), method=f"a{k}").json()["id"]
        for k in range(3)
    ]
    beta = server.submit(server.beta, encode(stop_predictions()), method="b").json()["id"]
    w = Worker(server.cfg, db=server.db, name="fair")
    order = []
    for _ in range(4):
        assert w.run_one()
        done = {
            u
            for u in [*uids, beta]
            if server.get(u, server.alpha if u != beta else server.beta).json()["status"]
            == "finished"
        }
        order.append(done)
    assert beta in order[1] and beta not in order[0]
