"""Every ``n/a`` of a graph task's terminal table says why on stderr, with the fix; a metric
that is n/a in one run is not silently dropped from ``compare``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.tasks.hanna.fixture import RUNS, make_root, predictions

from vlneval.cli.main import main

Capture = pytest.CaptureFixture[str]


def _na_labels(table: str) -> list[str]:
    """The column labels whose cell is n/a in a one-row rich table."""
    lines = [ln for ln in table.splitlines() if ln.startswith(("┃", "│"))]
    header = [c.strip() for c in lines[0].strip("┃").split("┃")]
    row = [c.strip() for c in lines[-1].strip("│").split("│")]
    return [h.split(" (")[0] for h, v in zip(header, row, strict=True) if v == "n/a"]


def _notes_cover(table: str, err: str) -> dict[str, str]:
    """Label -> the reason of its n/a, from the notes on stderr; every n/a must have one."""
    reasons: dict[str, str] = {}
    for m in re.finditer(r"^note: (.+?) (?:is|are) n/a: (.+)$", err, re.M):
        for label in m.group(1).split(", "):
            reasons[label] = m.group(2)
    labels = _na_labels(table)
    assert labels, table
    assert set(labels) <= set(reasons), (labels, err)
    return reasons


def _reverie_nav_only(data_root: Path, tmp: Path) -> Path:
    out = tmp / "nav.json"
    argv = ["run", "--task", "reverie", "--split", "val_seen", "--agent", "stop", "--out",
            str(out), "--limit", "3", "--quiet", "--data-root", str(data_root)]  # fmt: skip
    assert main(argv) == 0
    return out


def test_reverie_grounding_na_says_why_and_how(
    data_root: Path, tmp_path: Path, capsys: Capture
) -> None:
    preds = _reverie_nav_only(data_root, tmp_path)
    capsys.readouterr()
    argv = ["score", "--task", "reverie", "--split", "val_seen", "--subset", "--data-root",
            str(data_root), "--predictions", str(preds)]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    reasons = _notes_cover(out, err)
    assert set(_na_labels(out)) == {"RGS", "RGSPL", "J"}  # J = SR · RGS needs RGS
    assert "give each record the id of the object it names as predObjId" in reasons["RGS"]


def test_hanna_requests_na_says_why_and_how(tmp_path: Path, capsys: Capture) -> None:
    root = make_root(tmp_path / "root")
    preds = predictions(tmp_path, {k: (v, None) for k, (v, _) in RUNS.items()})
    argv = ["score", "--task", "hanna", "--split", "val_unseen", "--data-root", str(root),
            "--predictions", str(preds)]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    reasons = _notes_cover(out, err)
    assert "give each record agent_ask" in next(iter(reasons.values()))


def test_compare_says_why_a_metric_is_left_out(
    data_root: Path, tmp_path: Path, capsys: Capture
) -> None:
    a = _reverie_nav_only(data_root, tmp_path)
    b = tmp_path / "b.json"
    b.write_text(json.dumps(json.loads(a.read_text())))
    card = a.with_name(a.name.removesuffix(".json") + ".protocol.json")
    if card.is_file():  # the run's card beside A, beside its copy too: the cards agree
        b.with_name("b.protocol.json").write_text(card.read_text())
    capsys.readouterr()
    argv = ["compare", "--task", "reverie", "--split", "val_seen", "--subset", "--data-root",
            str(data_root), str(a), str(b)]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "RGS" not in out
    assert (
        "note: RGS, RGSPL, J are left out of the comparison: n/a in A (nav): no predicted objects "
        "(predObjId) in the predictions file; give each record the id of the object it names as "
        "predObjId" in err
    )
