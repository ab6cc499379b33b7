"""``vlneval --help`` is drawn from the static table of cli/main.py (HELP), which must say what
the command modules register; it imports no command module, and each command's function is
loaded only when the command runs."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from vlneval.cli.main import COMMANDS, HELP, build_parser, command_function, listing_parser


def _commands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_the_help_table_is_what_the_modules_register() -> None:
    sub = _commands(build_parser())
    registered = {a.dest: a.help for a in sub._choices_actions}
    assert list(registered) == list(HELP)  # the names, in --help order
    assert registered == HELP  # and each one's line
    assert set(HELP) == set(COMMANDS)


def test_the_listing_is_the_full_parsers_help() -> None:
    assert listing_parser().format_help() == build_parser().format_help()
    assert listing_parser().format_usage() == build_parser().format_usage()


def test_help_and_version_import_no_command_module() -> None:
    code = (
        "import sys\nfrom vlneval.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m.startswith('vlneval.cli.') and m not in "
        "('vlneval.cli.main', 'vlneval.cli.common')], file=sys.stderr)"
    )
    for flag in ("--help", "--version"):
        out = subprocess.run(
            [sys.executable, "-c", code, flag], capture_output=True, text=True, check=True
        )
        assert out.stderr.strip().splitlines()[-1] == "[]", flag
        assert out.stdout.strip()


def test_a_command_help_imports_only_its_parser() -> None:
    code = (
        "import sys\nfrom vlneval.cli.main import main\n"
        "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('vlneval.cli.', 'vlneval.agents', "
        "'vlneval.envs', 'vlneval.distributed'))), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "--agent" in out.stdout
    assert out.stderr.strip().splitlines()[-1] == str(
        ["vlneval.cli.common", "vlneval.cli.main", "vlneval.cli.parsers", "vlneval.cli.parsers.run"]
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_names_a_function(name: str) -> None:
    sub = _commands(build_parser(COMMANDS[name]))
    parser = sub.choices[name]
    func = parser.get_default("func")
    if func is None:  # a command of subcommands (sweep, data, admin): each names its own
        inner = _commands(parser)
        funcs = [p.get_default("func") for p in inner.choices.values()]
    else:
        funcs = [func]
    assert funcs
    for f in funcs:
        assert isinstance(f, str) and f.startswith("vlneval.cli."), f
        assert callable(command_function(f))
