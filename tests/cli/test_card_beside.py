"""``vlneval score`` of a file ``vlneval run`` wrote reads the card written beside it, so a
privileged run's summary says so without ``--protocol``; ``--protocol`` overrides it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlneval.cli.main import main


def _summary(argv: list[str], out: Path, quiet: bool = True) -> dict[str, object]:
    assert main([*argv, "--json", str(out), *["--quiet"] * quiet]) == 0
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
    card = _summary(score, tmp_path / "s.json", quiet=False)
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
    assert _summary(score, tmp_path / "q.json")["seeds"] == [0]  # --quiet: read, not said
    assert "its card is" not in capsys.readouterr().err


def test_compare_refuses_a_privileged_run_by_the_cards_beside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for agent, out in (("shortest", a), ("stop", b)):
        assert main(["run", "--task", "demo", "--agent", agent, "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", "--task", "demo", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert (
        "error: refusing to compare results whose protocol cards differ (privileged: goals" in err
    )
    assert main(["compare", "--task", "demo", str(a), str(b), "--force"]) == 0


def test_a_file_beside_that_is_no_card_of_run_is_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = tmp_path / "c.json"
    assert main(["run", "--task", "demo", "--agent", "stop", "--out", str(preds), "--quiet"]) == 0
    (tmp_path / "c.protocol.json").write_text("[1, 2]")
    capsys.readouterr()
    card = _summary(["score", "--task", "demo", "--predictions", str(preds)], tmp_path / "s.json")
    assert card["seeds"] == "not declared (offline predictions file)"
    assert "its card is" not in capsys.readouterr().err


def test_an_old_card_beside_with_episodes_as_text_gives_no_claim(tmp_path: Path) -> None:
    """A card written before the episode counts were numbers (``"partial: 5 of 36"``): the
    scorer measures the counts itself, so the old text is not a claim declared differently."""
    preds = tmp_path / "d5.json"
    run = ["run", "--task", "demo", "--agent", "shortest", "--out", str(preds), "--limit", "5"]
    assert main([*run, "--quiet"]) == 0
    beside = tmp_path / "d5.protocol.json"
    old = json.loads(beside.read_text())
    del old["n_expected"], old["partial"]
    beside.write_text(json.dumps({**old, "episodes": "partial: 5 of 36"}))
    score = ["score", "--task", "demo", "--predictions", str(preds), "--subset"]
    card = _summary(score, tmp_path / "s.json")
    assert (card["episodes"], card["n_expected"], card["partial"]) == (5, 36, True)
    assert "declared_differently" not in card and card["seeds"] == [0]
