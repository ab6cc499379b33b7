"""Real data: an R2R val_unseen phase whose hidden labels are R2R_val_unseen.json.gz.

Real prediction files from /work/shared/data/predictions/r2r are scored by the server exactly as
``vlneval score`` scores them; a refused real file is told why without a label in sight.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from tests.server.conftest import make_server
from vlneval.evaluation import evaluate
from vlneval.io import load_json
from vlneval.server.models import Result
from vlneval.server.services import admin
from vlneval.server.services.leaderboard import public_value

SEQ2SEQ = "seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_20000.json.gz"
NAVILLM = "navillm_sadanand1120/navillm_val_unseen_compact.json.gz"


@pytest.fixture
def r2r(data_root, tmp_path):
    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    episodes = data_root / "r2r" / "R2R_val_unseen.json.gz"
    admin.create_phase(
        srv.db, "demo", "r2r-val-unseen", task="r2r", split="val_unseen",
        episodes_file=str(episodes), graphs=str(data_root / "matterport3d" / "connectivity"),
    )  # fmt: skip
    labels = set()
    for ep in load_json(episodes):
        labels.update(ep["path"][1:])
    yield srv, data_root, labels
    srv.client.close()
    srv.db.dispose()


def test_real_r2r_file_scores_as_vlneval_score(r2r):
    srv, root, _ = r2r
    path = root / "predictions" / "r2r" / SEQ2SEQ
    r = srv.submit(srv.alpha, path.read_bytes(), phase="r2r-val-unseen", name=path.name)
    assert r.status_code == 202, r.text
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    direct = evaluate("r2r", "val_unseen", path, root=root).to_dict()
    assert got["status"] == "finished"
    assert got["result"]["metrics"] == {k: public_value(k, v) for k, v in direct["metrics"].items()}
    assert direct["metrics"]["SPL"] == 0.18258302875769822
    assert got["result"]["primary_value"] == 0.1826  # SPL, as vlneval score prints 18.26
    with srv.db.read() as s:  # the organisers keep every digit
        assert s.scalars(select(Result)).one().metrics == direct["metrics"]
    assert got["result"]["n_episodes"] == direct["n_episodes"] == 2349
    assert got["result"]["summary"]["warnings"] == direct["warnings"]


def test_real_refused_file_is_told_why_without_labels(r2r):
    srv, root, labels = r2r
    path = root / "predictions" / "r2r" / NAVILLM
    r = srv.submit(srv.alpha, path.read_bytes(), phase="r2r-val-unseen", name="navillm.json.gz")
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert got["status"] == "failed" and got["error_kind"] == "invalid"
    assert got["messages"][0].startswith("navillm.json.gz: record 0: missing field 'instr_id'")
    assert got["messages"][0].endswith("; remove that record from the file")
    text = json.dumps(got)
    assert [v for v in labels if v in text] == []
