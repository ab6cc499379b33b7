"""A wrong value of any task option (``--path-type``, ``--distance``...) is one line naming the
task and the choices, as the library says it, never argparse's whole usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlneval.cli.common import cli_task_options
from vlneval.cli.main import main

WITH_CHOICES = sorted(
    (name, declared[0][0], declared[0][1].choices)
    for name, declared in cli_task_options().items()
    if declared[0][1].choices
)


def test_ndh_path_type_typo_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["score", "--task", "ndh", "--split", "val_seen", "--predictions",
            str(tmp_path / "p.json"), "--path-type", "plannr"]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "error: unknown ndh path type 'plannr'; did you mean 'planner_path'? "
        "(known: planner_path, player_path, trusted_path)\n"
    )


@pytest.mark.parametrize("command", ["score", "validate", "run"])
@pytest.mark.parametrize(("name", "task", "choices"), WITH_CHOICES)
def test_every_task_option_error_is_one_line_with_the_choices(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    name: str,
    task: str,
    choices: tuple[str, ...],
) -> None:
    given = ["--out", str(tmp_path / "o.json"), "--agent", "stop"] if command == "run" else []
    given = given or ["--predictions", str(tmp_path / "p.json")]
    argv = [command, "--task", task, *given, "--" + name.replace("_", "-"), "zzz"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.lower().startswith(f"error: unknown {task} ")
    assert err.endswith(f"'zzz' (known: {', '.join(sorted(choices))})\n")


def test_aggregate_checks_task_options_before_reading_summaries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "s.json"  # never read: the options are checked first
    assert main(["aggregate", str(summary), str(summary), "--path-type", "bogus"]) == 2
    assert capsys.readouterr().err == "error: --path-type: a task option needs --task\n"
    argv = ["aggregate", str(summary), "--task", "ndh", "--path-type", "plannr"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "error: unknown ndh path type 'plannr'; did you mean 'planner_path'? "
        "(known: planner_path, player_path, trusted_path)\n"
    )
