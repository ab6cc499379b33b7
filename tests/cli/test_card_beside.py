"""``vlneval score`` of a file ``vlneval run`` wrote reads the card written beside it, so a
privileged run's summary says so without ``--protocol``; ``--protocol`` overrides it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlneval.cli.main import main


def _summary(argv: list[str], out: Path) -> dict[str, object]:
    assert main([*argv, "--json", str(out), "--quiet"]) == 0
    card: dict[str, object] = json.loads(out.read_text())["protocol"]
    return card


def test_score_reads_the_card_run_wrote_beside_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = tmp_path / "pv.json"
    assert (
        main(["run", "--task", "demo", "--agent", "shortest", "--out", str(preds), "--quiet"]) == 0
    )
    capsys.readouterr()
    score = ["score", "--task", "demo", "--predictions", str(preds)]
    card = _summary(score, tmp_path / "s.json")
    assert str(card["privileged"]).startswith("goals, reference path") and card["seeds"] == [0]
    beside = tmp_path / "pv.protocol.json"
    assert capsys.readouterr().err.splitlines()[0] == (
        f"note: {preds}: its card is {beside} (written by `vlneval run`); --protocol overrides"
    )
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"privileged": "none", "model": "m"}))
    card = _summary([*score, "--protocol", str(own)], tmp_path / "o.json")
    assert card["privileged"] == "none" and card["model"] == "m"
    assert "its card is" not in capsys.readouterr().err
