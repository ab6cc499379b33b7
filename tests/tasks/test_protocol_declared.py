"""A declared card (``--protocol FILE``, an agent's ``protocol``) adds what vlneval cannot see;
it never replaces what the run or the scorer measured."""

from __future__ import annotations

from vlneval.tasks.common.protocol import UNDECLARED, protocol_card
from vlneval.tasks.profiles import get_profile


def _card(declared: dict[str, object], run: dict[str, object] | None = None) -> dict[str, object]:
    return protocol_card(
        task="r2r", split="val_unseen", profile=get_profile("r2r"), n_episodes=300,
        n_expected=2349, partial=True, declared=declared, run=run,
    )  # fmt: skip


def test_a_declared_card_cannot_rename_what_was_scored() -> None:
    card = _card({"task": "rxr", "split": "val_seen", "episodes": 2349, "model": "m"})
    assert (card["task"], card["split"], card["episodes"], card["n_expected"], card["partial"]) == (
        "r2r",
        "val_unseen",
        300,
        2349,
        True,
    )
    assert card["model"] == "m" and card["privileged"] == UNDECLARED
    assert card["declared_differently"] == {"task": "rxr", "split": "val_seen"}


def test_declared_episode_counts_are_dropped_as_the_scorer_measures_them() -> None:
    """A card written before the counts were numbers (``"partial: 5 of 36"``) is no claim."""
    card = _card({"episodes": "partial: 5 of 36", "n_expected": 5, "partial": False, "model": "m"})
    assert (card["episodes"], card["n_expected"], card["partial"], card["model"]) == (
        300,
        2349,
        True,
        "m",
    )
    assert "declared_differently" not in card


def test_what_a_run_measured_wins_over_the_declared_and_both_claims_are_kept() -> None:
    card = _card({"privileged": "none", "split": "test"}, run={"privileged": "goals", "seeds": [0]})
    assert card["privileged"] == "goals" and card["seeds"] == [0]
    assert card["declared_differently"] == {"privileged": "none", "split": "test"}


def test_an_honest_card_has_no_claims_apart() -> None:
    card = _card({"model": "m", "task": "r2r"}, run={"seeds": [1]})
    assert "declared_differently" not in card and card["seeds"] == [1]
