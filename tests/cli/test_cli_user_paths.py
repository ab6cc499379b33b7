"""The CLI's folder options expand a leading ``~``, which the shell leaves as written after
``=`` (``--data-root=~/vln``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlneval.cli.main import build_parser


@pytest.mark.parametrize(
    ("argv", "dest"),
    [
        (["score", "--task", "r2r", "--predictions", "p.json", "--data-root=~/vln"], "data_root"),
        (["score", "--task", "r2r", "--predictions", "p.json", "--graphs=~/vln/g"], "graphs"),
        (["run", "--task", "r2r", "--agent", "random", "--out", "o", "--data-root=~/vln"],
         "data_root"),
        (["data", "list", "--data-root=~/vln"], "data_root"),
        (["data", "fetch", "r2r", "--data-root=~/vln"], "data_root"),
    ],
)  # fmt: skip
def test_folder_options_expand_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], dest: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    args = build_parser().parse_args(argv)
    expected = tmp_path / "vln" / ("g" if dest == "graphs" else "")
    assert getattr(args, dest) == expected


def test_an_unset_folder_option_stays_unset() -> None:
    args = build_parser().parse_args(["score", "--task", "r2r", "--predictions", "p.json"])
    assert args.data_root is None and args.graphs is None


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "--task", "r2r", "--predictions", "p.json", "--data-root", "", "--graphs", ""],
        ["data", "list", "--data-root", ""],
    ],
)
def test_an_empty_folder_option_is_no_folder(argv: list[str]) -> None:
    """``--data-root ""`` (a script's unset variable) falls back to the default as when the
    option is left out, not to the current folder."""
    args = build_parser().parse_args(argv)
    assert args.data_root is None and getattr(args, "graphs", None) is None
