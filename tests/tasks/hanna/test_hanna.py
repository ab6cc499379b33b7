"""HANNA: several goals, 2.0 m inclusive, the last-goal tie rule, help requests, bad inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.hanna.fixture import RUNS, SQRT20, TASKS, make_root, predictions, record, task
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.tasks.hanna.format import load_hanna


def _score(tmp: Path, runs: Any = None, tasks: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
    root = make_root(tmp / "root", tasks)
    return evaluate("hanna", "val_unseen", predictions(tmp, runs), root=root, **kw)


def _rows(result: Any) -> dict[str, dict[str, Any]]:
    return {row["instr_id"]: row for row in result.rows()}


def test_loader_keeps_every_goal_in_order(tmp_path: Path) -> None:
    table = load_hanna(make_root(tmp_path) / "hanna" / "hanna_val_unseen.json")
    assert table.ids == ["10_0", "10_1", "11_0", "12_0"] and table.id_field == "instr_id"
    assert table.goals == [("D", "E"), ("D", "E"), ("E", "D"), ("C",)]
    assert table.paths[0] == ("S", "A", "B", "D") and table.instructions[1] == "look for the mug"


def test_hand_values(tmp_path: Path) -> None:
    r = _score(tmp_path)
    rows = _rows(r)
    # 10_0 ends on B, 2 m from both goals: exactly 2.0 succeeds (inclusive); the tie takes the
    # LAST goal E, so ℓ = d(S, E) = sqrt(20); TL = 8.
    assert rows["10_0"]["nav_error"] == 2 and rows["10_0"]["success"] == 1
    assert rows["10_0"]["shortest_length"] == pytest.approx(SQRT20)
    assert rows["10_0"]["spl"] == pytest.approx(SQRT20 / 8) and rows["10_0"]["help_requests"] == 2
    # 11_0: the same run with the goals listed the other way: ℓ = d(S, D) = 6.
    assert rows["11_0"]["shortest_length"] == 6 and rows["11_0"]["spl"] == pytest.approx(0.75)
    # 10_1 passes E (oracle success) and ends on A, 4 m from both goals: failure.
    assert rows["10_1"]["success"] == 0 and rows["10_1"]["oracle_success"] == 1
    assert rows["10_1"]["path_length"] == pytest.approx(2 * SQRT20 + 2)
    # 12_0 turns in place at the goal: the repeat adds 0 m; steps count every pose.
    assert (
        rows["12_0"]["path_length"] == 6 and rows["12_0"]["spl"] == 1 and rows["12_0"]["steps"] == 4
    )
    m = r.metrics
    assert list(m) == ["TL", "NE", "OSR", "SR", "SPL", "help_requests"]
    assert m["NE"] == 2.0 and m["SR"] == 0.75 and m["OSR"] == 1.0
    assert m["TL"] == pytest.approx((8 + 8 + 2 * SQRT20 + 2 + 6) / 4)
    assert m["SPL"] == pytest.approx((SQRT20 / 8 + 0.75 + 0 + 1) / 4)
    assert m["help_requests"] == 0.75 and r.units["help_requests"] == "count"
    assert r.protocol["scoring"]["comparison"] == "NE <= 2.0"
    assert all(c["holds"] for c in r.to_dict()["checks"])


def test_just_beyond_two_metres_fails(tmp_path: Path) -> None:
    tasks = [task(20, [["S", "E"]], ["x"])]  # from A, E is 4 m away; from B, 2 m
    r = _score(tmp_path, {"20_0": (["S", "A"], None)}, tasks=tasks)
    assert _rows(r)["20_0"]["success"] == 0
    r = _score(tmp_path / "b", {"20_0": (["S", "A", "B"], None)}, tasks=tasks)
    assert _rows(r)["20_0"]["success"] == 1


def test_start_on_the_goal_without_moving(tmp_path: Path) -> None:
    """ℓ = TL = 0: the script divides by zero; the profile gives 1 (the CVDN rule)."""
    r = _score(tmp_path, {"30_0": (["C"], [])}, tasks=[task(30, [["C"]], ["you are there"])])
    row = _rows(r)["30_0"]
    assert row["shortest_length"] == 0 and row["path_length"] == 0 and row["spl"] == 1


def test_jumps_are_scored_with_their_distance_and_counted(tmp_path: Path) -> None:
    runs = {**RUNS, "12_0": (["A", "D", "C"], [0, 0])}  # A -> D is not an edge (4 m by B)
    r = _score(tmp_path, runs)
    row = _rows(r)["12_0"]
    assert row["jumps"] == 1 and row["path_length"] == 6
    assert any("non-adjacent" in w for w in r.warnings)


def test_no_agent_ask_makes_help_requests_unavailable(tmp_path: Path) -> None:
    r = _score(tmp_path, {k: (v, None) for k, (v, _) in RUNS.items()})
    assert r.metrics["help_requests"] is None
    assert "agent_ask" in r.unavailable["help_requests"]
    assert r.metrics["SR"] == 0.75


def _bad(tmp: Path, body: Any) -> InvalidInputError:
    root = make_root(tmp / "root")
    path = tmp / "p.json"
    path.write_text(json.dumps(body))
    with pytest.raises(InvalidInputError) as exc:
        evaluate("hanna", "val_unseen", path, root=root)
    return exc.value


def _body(**change: Any) -> list[dict[str, Any]]:
    return [{**record(k, v, a), **change} for k, (v, a) in RUNS.items()]


def test_wrong_pose_key_is_one_error_with_a_hint(tmp_path: Path) -> None:
    body = [
        {"instr_id": r["instr_id"], "trajectory": r["agent_pose"], "agent_ask": r["agent_ask"]}
        for r in _body()
    ]
    err = _bad(tmp_path, body)
    assert len(err.problems) == 1 and "no record has the field 'agent_pose'" in str(err)
    assert "--trajectory-key trajectory" in str(err)
    assert err.problems[0].message == (  # the form of every task's (FieldTally.problem)
        "no record has the field 'agent_pose' (the executed poses); the records have "
        "'agent_ask', 'instr_id', 'trajectory' (to score the field 'trajectory', pass "
        "--trajectory-key trajectory)"
    )
    path = tmp_path / "p.json"
    r = evaluate("hanna", "val_unseen", path, root=tmp_path / "root", trajectory_key="trajectory")
    assert r.metrics["SR"] == 0.75


def test_wrong_id_key_is_one_error(tmp_path: Path) -> None:
    body = [{"id": r["instr_id"], "agent_pose": r["agent_pose"]} for r in _body()]
    err = _bad(tmp_path, body)
    assert len(err.problems) == 1 and "no record has the field 'instr_id'" in str(err)
    assert err.problems[0].message == (
        "no record has the field 'instr_id' (HANNA predictions are keyed by \"<path_id>_<k>\" "
        "as the agents write them); the records have 'id'"
    )


def test_a_list_field_that_is_not_a_trajectory_is_not_suggested(tmp_path: Path) -> None:
    body = [{"instr_id": r["instr_id"], "agent_nav": r["agent_pose"]} for r in _body()]
    assert _bad(tmp_path, body).problems[0].message == (
        "no record has the field 'agent_pose' (the executed poses); the records have "
        "'agent_nav', 'instr_id'"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"agent_ask": [0, 2, 0, 0]},
            "agent_ask must be a list of ask actions, 0 (do_nothing) or 1",
        ),
        ({"agent_ask": [0, 1]}, "agent_ask holds 2 actions for 4 steps"),
    ],
)
def test_bad_agent_ask(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    body = _body()
    body[0].update(change)
    err = _bad(tmp_path, body)
    assert 'instr_id "10_0": agent_ask: ' + message in str(err)


def test_a_record_of_an_id_not_in_the_split_is_the_readers_not_an_ask_problem(
    tmp_path: Path,
) -> None:
    stray = {**_body()[0], "instr_id": "99_0", "agent_ask": [2]}  # bad asks, but no episode
    root = make_root(tmp_path / "root")
    path = tmp_path / "p.json"
    path.write_text(json.dumps([*_body(), stray]))
    result = evaluate("hanna", "val_unseen", path, root=root)
    assert result.n_episodes == len(RUNS)
    assert any("99_0" in w for w in result.warnings)


def test_agent_ask_in_some_records_only(tmp_path: Path) -> None:
    body = _body()
    del body[3]["agent_ask"]
    err = _bad(tmp_path, body)
    assert [str(p).split(": ", 1)[1] for p in err.problems] == [
        "instr_id \"12_0\": missing field 'agent_ask' (other records have it: help requests are "
        "counted for all or none)"
    ]  # named by its id alone, as a missing trajectory is


def test_a_missing_agent_ask_hides_no_other_problem(tmp_path: Path) -> None:
    """A record without agent_ask is named beside the poses' problems of every record and the
    completeness problem (first), as the R2R reader names them."""
    body = _body()
    body[0]["agent_pose"][1][1] = float("nan")
    del body[0]["agent_ask"]
    body[1]["agent_pose"][1][0] = 12
    del body[2]
    err = _bad(tmp_path, body)
    assert [(p.episode, p.field, p.message.split(" (")[0]) for p in err.problems] == [
        (None, None, "1 of 4 episodes have no prediction"),
        ('instr_id "10_0"', None, "missing field 'agent_ask'"),
        ('instr_id "10_0"', "agent_pose[1]", "heading is nan"),
        (
            'instr_id "10_1"',
            "agent_pose[1]",
            "expected [viewpoint, heading, elevation], got [12, 0.5236, 0.0, 1]",
        ),
    ]


def test_duplicate_id_is_an_error(tmp_path: Path) -> None:
    body = _body()
    body[2] = dict(body[1])
    err = _bad(tmp_path, body)
    assert 'instr_id "10_1": duplicate id: the file has two predictions for it' in str(err)


def test_wrong_start_is_an_error(tmp_path: Path) -> None:
    body = _body()
    body[0]["agent_pose"][0][0] = "A"
    err = _bad(tmp_path, body)
    assert (
        'instr_id "10_0": agent_pose[0]: the trajectory starts at A, not at the episode\'s start S'
        in str(err)
    )


def test_missing_episode_is_an_error_unless_subset(tmp_path: Path) -> None:
    runs = {k: v for k, v in RUNS.items() if k != "11_0"}
    with pytest.raises(InvalidInputError, match="1 of 4 episodes have no prediction"):
        _score(tmp_path, runs)
    r = _score(tmp_path / "b", runs, subset=True)
    assert r.partial and r.n_episodes == 3


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (task(40, [["S", "E"], ["A", "B"]], ["x"]), "the paths start at 2 different viewpoints"),
        ({**task(40, [["S"]], ["x"]), "paths": []}, "field 'paths' must be a non-empty list"),
        (
            {k: v for k, v in task(40, [["S"]], ["x"]).items() if k != "scan"},
            "missing field 'scan'",
        ),
        ({**task(40, [["S"]], ["x"]), "heading": "north"}, "heading must be a finite number"),
    ],
)
def test_bad_episode_files(tmp_path: Path, bad: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match="hanna_val_unseen.json: record 3") as exc:
        _score(tmp_path, tasks=[*TASKS, bad])
    assert message in str(exc.value)


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_root(tmp_path / "root")
    args = [
        "--task",
        "hanna",
        "--data-root",
        str(root),
        "--predictions",
        str(predictions(tmp_path)),
    ]
    assert main(["score", *args]) == 0
    out = capsys.readouterr().out
    assert "help_requests (count)" in out and "SR (%)" in out
    assert main(["score", *args, "--path-type", "trusted_path"]) == 2
    assert (
        "option path_type (--path-type) does not apply to task hanna (its options: none)"
        in capsys.readouterr().err
    )


def test_pose_problems_name_agent_pose(tmp_path: Path) -> None:
    body = _body()
    body[1]["agent_pose"][1][0] = "nowhere"
    body[2]["agent_pose"][0][1] = float("nan")
    text = str(_bad(tmp_path, body))
    assert 'instr_id "10_1": agent_pose[1]: viewpoint nowhere is not in scan flat' in text
    assert 'instr_id "11_0": agent_pose[0]: heading is nan (must be finite)' in text
    assert "trajectory[" not in text


@pytest.mark.parametrize(
    ("poses", "message"),
    [
        ([], "agent_pose: empty trajectory (it must include the start viewpoint)"),
        (None, "agent_pose: agent_pose must be a list, got null"),
    ],
)
def test_an_empty_or_null_agent_pose_says_so(tmp_path: Path, poses: Any, message: str) -> None:
    body = _body()
    body[1]["agent_pose"] = poses
    body[1]["agent_ask"] = []
    err = _bad(tmp_path, body)
    assert len(err.problems) == 1 and str(err).endswith(f'instr_id "10_1": {message}')


def test_missing_data_says_where_hanna_comes_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vlneval cannot fetch HANNA: the hint names its release, not `vlneval data list`."""
    root = tmp_path / "data"
    root.mkdir()
    argv = ["score", "--task", "hanna", "--split", "val_unseen", "--data-root", str(root)]
    assert main([*argv, "--predictions", str(tmp_path / "p.json")]) == 2
    assert capsys.readouterr().err == (
        f"error: no hanna val_unseen episodes found: the data root {root} has no hanna/ folder "
        f"for task hanna (expected {root}/hanna/hanna_<split>.json); vlneval cannot fetch hanna: "
        "get its files from the khanhptnk/hanna repository on GitHub and put them there, or pass "
        "--data-root DIR that holds it\n"
    )
