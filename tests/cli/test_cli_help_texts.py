"""The help of ``score``, ``run`` and ``merge`` says what the options do."""

from __future__ import annotations

import pytest

from vlneval.cli.main import main


def _help(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_run_help_names_every_default_step_limit_and_stdout_rows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = _help("run", capsys)
    assert (
        "step limit per episode (default: 35 panoramic, 100 egocentric, 150 street; continuous: "
        "the action space's, 500 discrete steps)" in text
    )
    assert "with --score: .csv, .jsonl or .parquet, or - for stdout with --format csv|jsonl" in text


def test_an_option_of_several_tasks_keeps_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help("score", capsys)
    assert (
        "--unreachable {failure,exclude} episodes ending where the goal is unreachable: failure "
        "(the profile's default) or exclude (r2r-ce, r2r-twin)" in text
    )


def test_merge_help_names_the_card_fields_of_a_partial_merge(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The card of a partial merge has episodes, n_expected and partial (no 'partial: K of M')."""
    assert (
        "--allow-partial merge despite missing shards or episodes; the card then says partial: "
        "true (episodes K of n_expected M)" in _help("merge", capsys)
    )
