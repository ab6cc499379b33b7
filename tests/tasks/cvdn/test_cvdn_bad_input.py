"""Every bad NDH input gets one clear error naming the file, the inst_idx and the field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.cvdn.fixture import INSTANCES, TRAJECTORIES, instance, make_root
from vlneval.errors import InvalidInputError, UnknownNameError, VLNEvalError
from vlneval.evaluation import evaluate
from vlneval.tasks.cvdn.score import JUMP


def _run(tmp: Path, body: Any, instances: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
    root = make_root(tmp / "root", instances)
    path = tmp / "preds.json"
    path.write_text(json.dumps(body))
    return evaluate("ndh", "val_seen", path, root=root, **kw)


def _good(**change: Any) -> list[dict[str, Any]]:
    body = [
        {"inst_idx": k, "trajectory": [[v, 0.0, 0.0] for v in vps]}
        for k, vps in TRAJECTORIES.items()
    ]
    for rec in body:
        rec.update(change)
    return body


def _one_error(exc: pytest.ExceptionInfo[InvalidInputError]) -> str:
    assert len(exc.value.problems) == 1, exc.value.render()
    return str(exc.value)


def test_inst_idx_as_string_in_every_record(tmp_path: Path) -> None:
    body = [{**r, "inst_idx": str(r["inst_idx"])} for r in _good()]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    text = _one_error(exc)
    assert (
        "preds.json: inst_idx is a string in all 3 records (e.g. '1')" in text
        and "JSON number" in text
    )


def test_inst_idx_as_string_in_one_record(tmp_path: Path) -> None:
    body = _good()
    body[1]["inst_idx"] = "2"
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    assert "preds.json: record 1: inst_idx must be a JSON integer, got str '2'" in _one_error(exc)


def test_wrong_id_key_is_one_error(tmp_path: Path) -> None:
    body = [{"instr_id": r["inst_idx"], "trajectory": r["trajectory"]} for r in _good()]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    assert "no record has the field 'inst_idx'" in _one_error(exc) and "'instr_id'" in str(
        exc.value
    )
    assert str(exc.value) == (
        f"error: {tmp_path / 'preds.json'}: no record has the field 'inst_idx' (NDH predictions "
        "are keyed by the integer inst_idx of each instance); the records have 'instr_id'"
    )


def test_wrong_trajectory_key_is_one_error(tmp_path: Path) -> None:
    body = [{"inst_idx": r["inst_idx"], "traj": r["trajectory"]} for r in _good()]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    assert _one_error(exc) == (  # the form of every task's (FieldTally.problem)
        f"error: {tmp_path / 'preds.json'}: no record has the field 'trajectory' or 'path' or "
        "'pred_path' (the executed viewpoints); the records have 'inst_idx', 'traj' (to score "
        "the field 'traj', pass --trajectory-key traj)"
    )


def test_a_dialogue_list_is_not_suggested_as_the_trajectory(tmp_path: Path) -> None:
    body = [{"inst_idx": r["inst_idx"], "dialog_history": ["hi"]} for r in _good()]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    assert _one_error(exc) == (
        f"error: {tmp_path / 'preds.json'}: no record has the field 'trajectory' or 'path' or "
        "'pred_path' (the executed viewpoints); the records have 'dialog_history', 'inst_idx' "
        "(name the field with --trajectory-key)"
    )


def test_missing_trajectory_in_one_record(tmp_path: Path) -> None:
    body = _good()
    del body[2]["trajectory"]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    assert "inst_idx 3: missing field 'trajectory'" in _one_error(exc)


def test_duplicate_inst_idx(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, [*_good(), _good()[0]])
    assert "inst_idx 1: duplicate id" in _one_error(exc)


def test_jump_is_rejected_as_the_official_scorer(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, [{"inst_idx": 1, "trajectory": [["S", 0, 0], ["B", 0, 0]]}, *_good()[1:]])
    text = _one_error(exc)
    assert "inst_idx 1: trajectory[1]: viewpoint B is not a neighbour of A" not in text
    assert "inst_idx 1: trajectory[1]: viewpoint B is not a neighbour of S in scan lane" in text
    assert "official CVDN scorer" in text


def test_wrong_start_and_missing_episode_listed_together(tmp_path: Path) -> None:
    body = [{"inst_idx": 1, "trajectory": [["A", 0, 0], ["B", 0, 0]]}, _good()[1]]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    text = str(exc.value)
    assert (
        "inst_idx 1: trajectory[0]: the trajectory starts at A, not at the episode's start S"
        in text
    )
    assert "1 of 3 episodes have no prediction (first: 3)" in text and "--subset" in text


def test_unknown_viewpoint_and_nan_heading(tmp_path: Path) -> None:
    body = _good()
    body[0]["trajectory"] = [["S", 0.0, 0.0], ["nowhere", 0.0, 0.0]]
    body[1]["trajectory"] = [["S", float("nan"), 0.0]]
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(body))  # json writes NaN: the reader names the field
    root = make_root(tmp_path / "root")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("ndh", "val_seen", path, root=root)
    text = str(exc.value)
    assert "inst_idx 1: trajectory[1]: viewpoint nowhere is not in scan lane" in text
    assert "inst_idx 2: trajectory[0]: heading is nan" in text


def test_not_json(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    path = tmp_path / "preds.json"
    path.write_text("[{")
    with pytest.raises(InvalidInputError, match="preds.json: not valid JSON"):
        evaluate("ndh", "val_seen", path, root=root)


def test_unknown_path_type(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'trusted_path'"):
        _run(tmp_path, _good(), options={"path_type": "trusted"})


def test_option_of_another_task(tmp_path: Path) -> None:
    with pytest.raises(
        VLNEvalError,
        match=re.escape(
            "option data_version (--data-version) does not apply to task ndh (its options: path_type)"
        ),
    ):
        _run(tmp_path, _good(), options={"data_version": "v2"})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"end_panos": []}, "record 0.end_panos: field 'end_panos' must be a non-empty list"),
        ({"inst_idx": True}, "record 0.inst_idx: field 'inst_idx' must be an integer, got bool"),
        ({"start_pano": {"heading": 0.0}}, "start_pano must hold the start viewpoint id in 'pano'"),
        ({"scan": 7}, "record 0.scan: field 'scan' must be a string, got int"),
        (
            {"planner_path": "['S', 'A'"},
            "field 'planner_path' is the string \"['S', 'A'\", which does not read as a list",
        ),
        (
            {"dialog_history": [{"role": "guide", "message": "hi"}]},
            "dialog_history[0]: turn 0 must be",
        ),
        (
            {"planner_path": "['S', " + "x" * 10**6},
            "field 'planner_path' is the string \"['S', "
            + "x" * 53
            + "… (1,000,006 characters), which does not read as a list",
        ),
    ],
)
def test_malformed_episode_fields(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    bad = instance(1, ["S", "A", "B"], ["S", "A", "B", "C"], ["C", "D"], **change)
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, _good(), instances=[bad, *INSTANCES[1:]])
    assert message in str(exc.value) and "val_seen.json" in str(exc.value)


def test_missing_episode_field(tmp_path: Path) -> None:
    bad = instance(1, ["S", "A", "B"], ["S", "A", "B", "C"], ["C", "D"])
    del bad["player_path"]
    with pytest.raises(
        InvalidInputError, match=r"record 0.player_path: missing field 'player_path'"
    ):
        _run(tmp_path, _good(), instances=[bad, *INSTANCES[1:]])


def test_duplicate_instance_in_episodes(tmp_path: Path) -> None:
    with pytest.raises(
        InvalidInputError, match=r"record 3: duplicate inst_idx 1 \(also record 0\)"
    ):
        _run(tmp_path, _good(), instances=[*INSTANCES, INSTANCES[0]])


def test_literal_eval_never_runs_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    bad = {k: v if isinstance(v, str) else repr(v) for k, v in INSTANCES[0].items()}
    bad["end_panos"] = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    with pytest.raises(InvalidInputError, match="field 'end_panos' is the string"):
        _run(tmp_path, _good(), instances=[bad, *INSTANCES[1:]])
    assert not marker.exists()


def test_test_split_cannot_be_scored(tmp_path: Path) -> None:
    hidden = [
        {k: v for k, v in r.items() if k not in ("end_panos", "planner_path", "player_path")}
        for r in INSTANCES
    ]
    with pytest.raises(InvalidInputError, match="hidden test split"):
        _run(tmp_path, _good(), instances=hidden)


def test_jump_message_and_wrong_start_listed_together(tmp_path: Path) -> None:
    """The shared rule checks word NDH's jump as the CVDN scorer's rule, listed with the other
    problems of the file (a wrong start, a jump)."""
    body = [
        {"inst_idx": 1, "trajectory": [["S", 0, 0], ["B", 0, 0]]},
        {"inst_idx": 2, "trajectory": [["A", 0, 0], ["B", 0, 0]]},
        _good()[2],
    ]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    messages = [p.message for p in exc.value.problems]
    assert "viewpoint B is not a neighbour of S in scan lane (the official CVDN scorer rejects a move along no graph edge)" in messages  # fmt: skip
    assert any(
        m.startswith("the trajectory starts at A, not at the episode's start") for m in messages
    )
    assert not any("--profile" in m for m in messages)


def test_completeness_is_listed_before_many_jumps(tmp_path: Path) -> None:
    """With 25 jumping episodes the 20 problems shown still say that 5 episodes have no
    prediction: the completeness problem comes first, as in every task's rule checks."""
    instances = [instance(k, ["S", "A", "B"], ["S", "A", "B"], ["B"]) for k in range(1, 31)]
    body = [{"inst_idx": k, "trajectory": [["S", 0, 0], ["B", 0, 0]]} for k in range(1, 26)]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body, instances=instances)
    problems = exc.value.problems
    assert len(problems) == 26
    assert problems[0].message == (
        "5 of 30 episodes have no prediction (first: 26, 27, 28, 29, 30); profile cvdn requires "
        "all of them: score only the predicted ones with --subset (subset=True in Python), "
        "reported as partial"
    )
    shown = str(exc.value).splitlines()
    assert shown[0] == f"error: {tmp_path / 'preds.json'}: {problems[0].message}"
    assert shown[1].endswith("viewpoint B is not a neighbour of S in scan lane (" + JUMP + ")")
    assert shown[-1] == (
        f"error: {tmp_path / 'preds.json'}: 6 more problems not shown (--all-errors lists them all)"
    )


@pytest.mark.parametrize("subset", [False, True])
def test_a_file_matching_no_episode_is_said_so(tmp_path: Path, subset: bool) -> None:
    """A file none of whose ids is an episode of the split (one for another split) is the
    shared message, not a failure deep in the distance kernel."""
    body = [{"inst_idx": 99, "trajectory": [["S", 0, 0]]}]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body, subset=subset)
    assert str(exc.value) == (
        f"error: {tmp_path / 'preds.json'}: no prediction matches an episode of ndh val_seen"
    )


def test_a_non_integer_inst_idx_is_labelled_by_record_once(tmp_path: Path) -> None:
    body = _good()
    body[1]["inst_idx"] = [1]
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    assert _one_error(exc).endswith(
        "preds.json: record 1: inst_idx must be a JSON integer, got list [1]"
    )


def test_an_unknown_integer_id_is_advised_with_an_integer_example(tmp_path: Path) -> None:
    body = _good()
    body[2]["inst_idx"] = 99
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    assert _one_error(exc).endswith(
        "1 record has an id not in the split: 99 (an id of another type, or with spaces? ids "
        "match exactly, e.g. 3)"
    )


def test_a_null_trajectory_is_not_called_missing(tmp_path: Path) -> None:
    body = _good()
    body[2]["trajectory"] = None
    with pytest.raises(InvalidInputError) as exc:
        _run(tmp_path, body)
    assert _one_error(exc).endswith("inst_idx 3: trajectory: trajectory must be a list, got null")
