"""``vlneval run --env``: an environment the task cannot run in is one error naming the task,
the environment and the ones that fit; messages name only the flags the user gave."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlneval.cli.main import main

GRAPH_OR_CONTINUOUS = (
    "graph-egocentric-v1, graph-panoramic-v1, continuous-r2r-ce-v1, continuous-rxr-ce-v1, "
    "continuous-velocity-v1 or continuous-waypoint-v1 (see `vlneval agents`)"
)


@pytest.mark.parametrize(
    ("task", "env", "message"),
    [
        (
            "demo",
            "street",
            "--env street-v1 is not a graph or continuous environment, and task demo runs in "
            f"one of those: use {GRAPH_OR_CONTINUOUS}",
        ),
        (
            "r2r",
            "street-v1",
            "--env street-v1 is not a graph or continuous environment, and task r2r runs in "
            f"one of those: use {GRAPH_OR_CONTINUOUS}",
        ),
        (
            "touchdown",
            "graph-panoramic",
            "--env graph-panoramic-v1 is not a street environment, and task touchdown runs in "
            "one: use street-v1 (see `vlneval agents`)",
        ),
        (
            "touchdown",
            "continuous-velocity",
            "--env continuous-velocity-v1 is not a street environment, and task touchdown runs "
            "in one: use street-v1 (see `vlneval agents`)",
        ),
        (
            "r2r-twin",
            "graph-egocentric",
            "--env graph-egocentric-v1 is not a continuous environment, and task r2r-twin runs in "
            "one: use continuous-r2r-ce-v1 (the default), continuous-rxr-ce-v1, "
            "continuous-velocity-v1 or continuous-waypoint-v1 (see `vlneval agents`)",
        ),
    ],
)
def test_env_of_another_family_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], task: str, env: str, message: str
) -> None:
    out = tmp_path / "p.json"
    code = main(["run", "--task", task, "--agent", "stop", "--env", env, "--out", str(out)])
    assert code == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--env", "street", "--action-space", "panoramic"], "--action-space"),
        (["--features", "f.tsv"], "--features"),
        (["--action-space", "egocentric", "--features", "f.tsv"], "--action-space and --features"),
    ],
)
def test_street_task_names_only_the_flags_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    args = ["run", "--task", "touchdown", "--agent", "stop", "--out", str(tmp_path / "p.json")]
    assert main([*args, *flags]) == 2
    assert capsys.readouterr().err == (
        "error: task touchdown runs in the street action space (forward, turn left/right, stop) "
        f"without features: drop {named}\n"
    )
