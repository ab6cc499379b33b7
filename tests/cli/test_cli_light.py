"""The score command stays light: it imports only what it needs, and what it skips gives the
same output (the one-command parser, the plain table, the versions of the protocol card)."""

from __future__ import annotations

import io
import random
import string
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from vlneval.cli.main import COMMANDS, SUBCOMMANDS, build_parser
from vlneval.reports import terminal
from vlneval.tasks.common import protocol

HEAVY = (
    "rich",
    "importlib.metadata",
    "email",
    "vlneval.cli.serve",
    "vlneval.cli.report",
    "logging",
)


SEQ = "predictions/r2r/seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_20000.json.gz"


def test_scoring_r2r_imports_no_heavy_module(data_root: Path) -> None:
    """The table of a file without notes (most files) is drawn without rich; the card's
    versions are read without importlib.metadata; no other command's module is imported
    (with a warm distance cache: computing the tables imports scipy, which imports more)."""
    argv = ["score", "--task", "r2r", "--split", "val_unseen", "--data-root", str(data_root),
            "--predictions", str(data_root / SEQ)]  # fmt: skip
    code = (
        "import sys\nfrom vlneval.cli.main import main\n"
        f"assert main({argv!r}) == 0\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)"
    )
    warm = [sys.executable, "-m", "vlneval", *argv, "--quiet"]
    subprocess.run(warm, capture_output=True, check=True)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "[]"
    assert out.stdout.splitlines()[-2].split() == [
        "│", "8.23", "│", "8.00", "│", "28.22", "│", "21.03", "│", "18.26", "│", "40.17", "│",
        "17.06", "│", "41.18", "│",
    ]  # fmt: skip


def test_every_command_has_its_module() -> None:
    full = build_parser()
    sub = next(a for a in full._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)  # type: ignore[arg-type]
    assert set(COMMANDS.values()) == set(SUBCOMMANDS)


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "--task", "r2r", "--split", "val_unseen", "--predictions", "a.json", "b.json"],
        ["validate", "--task", "ndh", "--predictions", "p.json", "--path-type", "planner_path"],
        ["tasks"],
    ],
)
def test_the_one_command_parser_parses_as_the_full_one(argv: list[str]) -> None:
    one = build_parser(COMMANDS[argv[0]]).parse_args(argv)
    full = build_parser().parse_args(argv)
    assert vars(one) == vars(full)


def _rich(title: str, header: list[str], rows: list[list[str]], align: str, width: int) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title))
    for name, a in zip(header, align, strict=True):
        table.add_column(Text(name), justify="left" if a == "l" else "right", no_wrap=a == "l")
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    console = Console(
        record=True, force_terminal=False, width=width, file=io.StringIO(), highlight=False
    )
    console.print(table)
    return console.export_text(styles=False)


def test_the_plain_table_is_the_rich_table() -> None:
    rng = random.Random(0)
    alphabet = string.ascii_letters + string.digits + " ._-()%·/"

    def word() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 2, 5, 8, 12, 20])))

    drawn = 0
    for _ in range(600):
        n = rng.randint(1, 12)
        header = [word() for _ in range(n)]
        rows = [[word() for _ in range(n)] for _ in range(rng.choice([1, 2, 5]))]
        align = "".join(rng.choice("lr") for _ in range(n))
        title, width = word() * rng.randint(0, 4), rng.choice([80, 120, 160])
        plain = terminal._plain_table(title, header, rows, align, width=width)
        if plain is not None:
            drawn += 1
            assert plain == _rich(title, header, rows, align, width)
    assert drawn > 100


def test_a_table_rich_must_wrap_is_left_to_rich() -> None:
    assert terminal._plain_table("t", ["x" * 200], [["1"]], "r", width=120) is None
    assert terminal._plain_table("t", ["名前"], [["1"]], "r", width=120) is None


def test_the_card_versions_are_importlib_metadata_versions() -> None:
    card = protocol.software_fingerprint()
    for pkg in ("vlneval", "numpy", "scipy", "numba", "msgspec"):
        assert card[pkg] == metadata.version(pkg)
    assert protocol._installed_version("no-such-dist-here", protocol._dist_folders()) == (
        "not installed"
    )
