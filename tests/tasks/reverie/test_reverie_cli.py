"""``vlneval score`` / ``validate`` on REVERIE and SOON fixtures: options, exit codes, outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tasks.reverie.reverie_fixtures import dump, rev_preds, reverie_root
from tests.tasks.reverie.test_reverie_scoring import HAND
from tests.tasks.soon.soon_fixtures import soon_preds, soon_root
from vlneval.cli.main import main


def test_score_reverie_v1_writes_summary_and_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = reverie_root(tmp_path / "root")
    p = dump(tmp_path / "p.json", rev_preds(HAND))
    out, rows = tmp_path / "s.json", tmp_path / "rows.csv"
    code = main(["score", "--task", "reverie", "--split", "val", "--data-root", str(root),
                 "--data-version", "v1", "--predictions", str(p), "--json", str(out),
                 "--per-episode", str(rows)])  # fmt: skip
    assert code == 0
    s = json.loads(out.read_text())
    assert s["data_version"] == "v1" and s["metrics"]["RGSPL"] == 0.375
    assert "RGSPL (%)" in capsys.readouterr().out
    header = rows.read_text().splitlines()[0].split(",")
    assert header[:2] == ["instr_id", "scan"] and "grounding_spl" in header


def test_validate_and_bad_input_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = reverie_root(tmp_path / "root")
    p = dump(tmp_path / "p.json", rev_preds(HAND))
    base = ["--task", "reverie", "--split", "val", "--data-root", str(root)]
    assert main(["validate", *base, "--predictions", str(p)]) == 0
    assert "scoring v2 episodes with the v1 boxes" in capsys.readouterr().err
    bad = dump(tmp_path / "bad.json", [{"instrId": k, **{kk: vv for kk, vv in r.items() if kk != "instr_id"}}
                                       for k, r in zip(HAND, rev_preds(HAND), strict=True)])  # fmt: skip
    assert main(["score", *base, "--predictions", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "records need the field 'instr_id'" in err and "Traceback" not in err
    assert main(["score", *base, "--data-version", "v9", "--predictions", str(p)]) == 2
    assert "unknown reverie data version 'v9'" in capsys.readouterr().err


def test_score_soon_with_angle_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = soon_root(tmp_path / "root")
    p = dump(tmp_path / "p.json", soon_preds())
    out = tmp_path / "s.json"
    base = ["score", "--task", "soon", "--split", "val", "--data-root", str(root),
            "--predictions", str(p)]  # fmt: skip
    assert main([*base, "--profile", "soon-wrap", "--json", str(out)]) == 0
    s = json.loads(out.read_text())
    assert s["profile"]["name"] == "soon-wrap" and s["metrics"]["det_SR"] == pytest.approx(0.6)
    assert main([*base, "--angle-units", "radians", "--json", str(out)]) == 0
    assert "radians" in json.loads(out.read_text())["protocol"]["angle_units"]
    records = soon_preds()
    records[0]["trajectory"] = records[0]["trajectory"][0]
    bad = dump(tmp_path / "bad.json", records)
    capsys.readouterr()
    assert main([*base[:-1], str(bad)]) == 2
    assert "trajectory must be a list with one entry per start path" in capsys.readouterr().err


def test_validate_refuses_a_file_a_leaderboard_cannot_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A navigation-only file (no predObjId) leaves RGSPL, the metric a REVERIE leaderboard
    ranks by, n/a: the server refuses it, and so does validate, with the same reason."""
    root = reverie_root(tmp_path / "root")
    p = dump(tmp_path / "nav.json", [{k: v for k, v in r.items() if k != "predObjId"}
                                     for r in rev_preds(HAND)])  # fmt: skip
    base = ["--task", "reverie", "--split", "val", "--data-root", str(root)]
    assert main(["validate", *base, "--predictions", str(p)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {p}: not a valid submission: a leaderboard ranks reverie by RGSPL: no predicted "
        "objects (predObjId) in the predictions file; give each record the id of the object it "
        "names as predObjId"
    )
    assert main(["score", *base, "--predictions", str(p)]) == 0  # scoring it is fine
