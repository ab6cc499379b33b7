"""Real R2R data: analytic expectations, NaviLLM's own metrics, and golden summaries.

Provenance: predictions in ``<data>/predictions/r2r/`` (see ``SOURCES.md`` there); the golden
values below were produced by vlneval 0.1.0 profile ``r2r`` v1 and are kept so that any change to
the numbers is noticed.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from vlneval.evaluation import evaluate

P = "predictions/r2r/"
SEQ = P + "seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_{split}_iter_{it}.json.gz"

GOLDEN = {
    ("val_seen", 100): (
        1020,
        {
            "TL": 4.136196450288049,
            "NE": 9.930238260551855,
            "OSR": 0.07352941176470588,
            "SR": 0.04607843137254902,
            "SPL": 0.039018650848753,
            "nDTW": 0.27455558191210344,
            "sDTW": 0.0340329765489499,
            "CLS": 0.29202468103284895,
        },
    ),
    ("val_unseen", 100): (
        2349,
        {
            "TL": 2.909780996375089,
            "NE": 9.546874078616339,
            "OSR": 0.04555129842486164,
            "SR": 0.035759897828863345,
            "SPL": 0.03477404902300317,
            "nDTW": 0.27967392812976866,
            "sDTW": 0.029092835244383754,
            "CLS": 0.2854900166737919,
        },
    ),
    ("val_seen", 5000): (
        1020,
        {
            "TL": 9.459228935357073,
            "NE": 6.952232936519747,
            "OSR": 0.3637254901960784,
            "SR": 0.25,
            "SPL": 0.21049757912373465,
            "nDTW": 0.4704660984520752,
            "sDTW": 0.19633550828411284,
            "CLS": 0.4792857153484638,
        },
    ),
    ("val_unseen", 5000): (
        2349,
        {
            "TL": 7.6967014155526625,
            "NE": 7.918468930438452,
            "OSR": 0.24606215410813112,
            "SR": 0.1724137931034483,
            "SPL": 0.15234539817176557,
            "nDTW": 0.39804188142851593,
            "sDTW": 0.1364036931763786,
            "CLS": 0.4116169959681028,
        },
    ),
    ("val_seen", 20000): (
        1020,
        {
            "TL": 11.034342799439385,
            "NE": 6.0861048072203765,
            "OSR": 0.5127450980392156,
            "SR": 0.3813725490196078,
            "SPL": 0.3314378943079188,
            "nDTW": 0.5305421911902689,
            "sDTW": 0.3143840078007126,
            "CLS": 0.5329748339022107,
        },
    ),
    ("val_unseen", 20000): (
        2349,
        {
            "TL": 8.230151855941534,
            "NE": 7.997559874839925,
            "OSR": 0.2822477650063857,
            "SR": 0.21030225627926777,
            "SPL": 0.18258302875769822,
            "nDTW": 0.40172085144770686,
            "sDTW": 0.1706048522754949,
            "CLS": 0.41179824117057917,
        },
    ),
}


@pytest.mark.parametrize(("split", "it"), sorted(GOLDEN))
def test_seq2seq_golden(data_root: Path, split: str, it: int) -> None:
    r = evaluate("r2r", split, data_root / SEQ.format(split=split, it=it), root=data_root)
    n, metrics = GOLDEN[(split, it)]
    assert r.n_episodes == n
    assert r.metrics == pytest.approx(metrics, rel=1e-12, abs=1e-12)
    assert all(c["holds"] for c in r.to_dict()["checks"])
    if split == "val_seen":  # the official scorer's k = 0..2 quirk leaves path 757's fourth out
        assert any("left out: 757_3" in w for w in r.warnings)


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
def test_simple_agents(data_root: Path, split: str) -> None:
    folder = data_root / P / "simple_agents_sadanand1120"
    short = evaluate("r2r", split, folder / f"{split}_shortest_agent.json.gz", root=data_root)
    m = short.metrics
    assert (m["SR"], m["OSR"], m["SPL"], m["NE"]) == (1.0, 1.0, 1.0, 0.0)
    per = short.per_episode
    # nDTW = 1 wherever the agent's shortest path is the reference path. In val_unseen 8 reference
    # paths (24 instructions) are not the unique shortest path, so nDTW < 1 there: data, not a bug.
    differs = per["ndtw"] < 1 - 1e-12
    assert int(differs.sum()) == (0 if split == "val_seen" else 24)
    stop = evaluate("r2r", split, folder / f"{split}_stop_agent.json.gz", root=data_root)
    assert stop.metrics["SR"] == 0.0 and stop.metrics["TL"] == 0.0


def test_simulator_web_shortest_agent(data_root: Path) -> None:
    f = data_root / P / "matterport3dsimulator_web/val_unseen_shortest_agent.json.gz"
    m = evaluate("r2r", "val_unseen", f, root=data_root).metrics
    assert (m["SR"], m["OSR"], m["SPL"], m["NE"]) == (1.0, 1.0, 1.0, 0.0)


def test_navillm_val_seen_reproduces_its_own_metrics(data_root: Path) -> None:
    f = data_root / P / "navillm_sadanand1120/navillm_val_seen.json.gz"
    r = evaluate("r2r", "val_seen", f, root=data_root, profile="r2r-envdrop")
    own = {x["instr_id"]: x["metrics"] for x in json.loads(gzip.decompress(f.read_bytes()))}
    names = {
        "nav_error": "nav_error",
        "oracle_error": "oracle_error",
        "trajectory_length": "path_length",
        "shortest_path_length": "shortest_length",
        "success": "success",
        "oracle_success": "oracle_success",
        "spl": "spl",
    }
    rows = r.rows()
    assert len(rows) == 1021
    for row in rows:
        m = own[row["instr_id"]]
        for theirs, ours in names.items():
            assert row[ours] == pytest.approx(m[theirs], abs=1e-9), (row["instr_id"], theirs)


def test_navillm_val_unseen_compact_summary(data_root: Path, tmp_path: Path) -> None:
    f = data_root / P / "navillm_sadanand1120/navillm_val_unseen_compact.json.gz"
    records = json.loads(gzip.decompress(f.read_bytes()))
    summary, episodes = records[0], records[1:]  # element 0 is the file's own summary
    p = tmp_path / "navillm.json"
    p.write_text(json.dumps(episodes))
    r = evaluate(
        "r2r", "val_unseen", p, root=data_root, profile="r2r-envdrop", trajectory_key="pred_path"
    )
    m = r.metrics
    assert m["SR"] == pytest.approx(summary["success_rate"], abs=1e-12)
    assert m["OSR"] == pytest.approx(summary["oracle success_rate"], abs=1e-12)
    assert m["SPL"] == pytest.approx(summary["spl"], abs=1e-12)
    assert m["NE"] == pytest.approx(summary["nav_error"], abs=1e-12)
    assert m["TL"] == pytest.approx(summary["length"], abs=1e-12)
    own = {x["instr_id"]: x for x in episodes}
    assert all(row["success"] == own[row["instr_id"]]["success"] for row in r.rows())


def test_r4r_loads_and_scores_its_reference(data_root: Path, tmp_path: Path) -> None:
    eps = json.loads(gzip.decompress((data_root / "r4r/R4R_val_seen.json.gz").read_bytes()))
    preds = [
        {"instr_id": f"{e['path_id']}_{k}", "trajectory": [[v, 0, 0] for v in e["path"]]}
        for e in eps
        for k in range(len(e["instructions"]))
    ]
    p = tmp_path / "r4r.json"
    p.write_text(json.dumps(preds))
    for profile in ("r4r", "r4r-google"):
        m = evaluate("r4r", "val_seen", p, root=data_root, profile=profile).metrics
        assert m["nDTW"] == pytest.approx(1.0) and m["CLS"] == pytest.approx(1.0)
        assert m["SR"] == 1.0 and m["SPL"] == pytest.approx(1.0)
