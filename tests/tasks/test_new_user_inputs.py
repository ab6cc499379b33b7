"""What a new user's mistakes are told: a record whose id is of another type or has a stray
space is named in the completeness problem; ``--task cvdn`` is NDH."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import vlneval
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError
from vlneval.registry import Registry
from vlneval.server.services.validation import for_phase
from vlneval.tasks import TASKS, get_task
from vlneval.tasks.common.root import demo_root

COMPLETE = (
    "error: <records>: 1 of 36 episodes have no prediction (first: 100_0); profile demo requires "
    "all of them: score only the predicted ones with --subset (subset=True in Python), reported "
    "as partial"
)


def _demo() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(
        (demo_root() / "demo" / "predictions_val.json").read_text()
    )
    return records


@pytest.mark.parametrize(
    ("bad", "shown"), [(100, "100"), ("100_0 ", '"100_0 "'), ("100_0\t", '"100_0\\t"')]
)
@pytest.mark.parametrize("summary", [False, True], ids=["typed", "explaining"])
def test_an_id_not_in_the_split_is_named_by_the_completeness_problem(
    bad: Any, shown: str, summary: bool
) -> None:
    records = _demo()
    records[0]["instr_id"] = bad
    if summary:  # a summary record first: the explaining pass reads every record
        records.insert(0, {"SR": 0.5})
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, records, skip_summaries=summary)
    assert str(exc.value) == (
        f"{COMPLETE}; 1 record has an id not in the split: {shown} (an id of another type, or "
        'with spaces? ids match exactly, e.g. "100_0")'
    )


def test_several_ids_not_in_the_split_are_counted_and_the_first_five_named() -> None:
    records = _demo()
    records += [{**records[0], "instr_id": f"x{k}"} for k in range(6)]
    records[0]["instr_id"] = 7
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, records)
    assert str(exc.value) == (
        f'{COMPLETE}; 7 records have ids not in the split: 7, "x0", "x1", "x2", "x3", ... '
        '(an id of another type, or with spaces? ids match exactly, e.g. "100_0")'
    )


def test_the_completeness_problem_comes_before_more_than_20_reading_problems() -> None:
    """25 records with a NaN heading and one record left out: "N of M episodes have no
    prediction" is the first line, not the 26th, hidden past the 20 shown."""
    records = _demo()[1:]
    for rec in records[:25]:
        rec["trajectory"][0][1] = float("nan")
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, records)
    lines = str(exc.value).splitlines()
    assert lines[0] == COMPLETE
    assert lines[1].endswith(": trajectory[0]: heading is nan (must be finite)")
    assert lines[-1] == "error: <records>: 6 more problems not shown (--all-errors lists them all)"


@pytest.mark.parametrize(
    ("task", "file", "label", "options"),
    [
        ("r2r", "r2r/R2R_val_seen.json.gz", 'instr_id "6488_0"', {}),
        ("ndh", "cvdn/NDH/val_seen.json.gz", "inst_idx {}", {"path_type": "trusted_path"}),
    ],
)
def test_an_episode_whose_scan_has_no_graph_is_named_with_its_file_and_field(
    data_root: Path, tmp_path: Path, task: str, file: str, label: str, options: dict[str, str]
) -> None:
    episodes = json.loads(gzip.decompress((data_root / file).read_bytes()))
    episodes[3]["scan"] = "NOSCAN"
    path = tmp_path / "episodes.json"
    path.write_text(json.dumps(episodes))
    with pytest.raises(InvalidInputError) as exc:
        vlneval.Scorer(task, "val_seen", root=data_root, episodes=path, **options)
    n = f" ({len(episodes[3]['instructions'])} episodes have this scan)" if task == "r2r" else ""
    assert str(exc.value) == (
        f"error: {path}: {label.format(episodes[3].get('inst_idx'))}: scan: no connectivity "
        f"file for scan 'NOSCAN' in {data_root / 'matterport3d' / 'connectivity'}{n}"
    )


def test_graphs_of_no_scan_of_the_split_is_one_problem(data_root: Path, tmp_path: Path) -> None:
    """A graphs folder holding none of the split's scans (not fetched, or the wrong folder)
    is one problem, not one per scan."""
    graphs = tmp_path / "connectivity"
    graphs.mkdir()
    name = "17DRP5sb8fy_connectivity.json"  # a train scan: none of val_unseen's
    (graphs / name).write_bytes(gzip.decompress((data_root / "matterport3d" / "connectivity" /
                                                 f"{name}.gz").read_bytes()))  # fmt: skip
    with pytest.raises(InvalidInputError) as exc:
        vlneval.Scorer("r2r", "val_unseen", root=data_root, graphs=graphs)
    episodes = json.loads(gzip.decompress((data_root / "r2r/R2R_val_unseen.json.gz").read_bytes()))
    assert str(exc.value) == (
        f"error: {data_root / 'r2r' / 'R2R_val_unseen.json.gz'}: scan: no connectivity file in "
        f"{graphs} for any of the split's 11 scans (e.g. {episodes[0]['scan']!r}): is it the "
        "graphs' folder?"
    )


def test_a_complete_file_with_an_extra_id_still_only_warns() -> None:
    records = _demo()
    records.append({**records[0], "instr_id": "999_0 "})
    result = vlneval.evaluate("demo", None, records)
    assert "1 prediction(s) with ids not in the split were ignored (first: 999_0 )" in (
        result.warnings
    )


def test_the_completeness_problem_names_a_stray_id_on_the_command_line(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real val_unseen split, one record's instr_id written as the number 4332."""
    episodes = json.loads(
        gzip.decompress((data_root / "r2r" / "R2R_val_unseen.json.gz").read_bytes())
    )
    records: list[dict[str, Any]] = [
        {"instr_id": f"{e['path_id']}_{j}", "trajectory": [[v, 0, 0] for v in e["path"]]}
        for e in episodes
        for j in range(len(e["instructions"]))
    ]
    records[0]["instr_id"] = 4332
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(records))
    argv = ["score", "--task", "r2r", "--split", "val_unseen", "--data-root", str(data_root)]
    assert main([*argv, "--predictions", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}: 1 of 2349 episodes have no prediction (first: 4332_0); profile r2r "
        "requires all of them: score only the predicted ones with --subset (subset=True in "
        "Python), reported as partial; 1 record has an id not in the split: 4332 (an id of "
        "another type, or with "
        'spaces? ids match exactly, e.g. "4332_0")\n'
    )


def test_cvdn_is_another_name_of_the_ndh_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert get_task("cvdn") is get_task("NDH") and get_task("CVDN").name == "ndh"
    assert "cvdn" in TASKS and "cvdn" not in TASKS.names() and TASKS.aliases("ndh") == ["cvdn"]
    assert main(["tasks"]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("ndh ")]
    assert line.endswith("(goal progress) (also --task cvdn)")


def test_cvdn_scores_as_ndh(data_root: Path, tmp_path: Path) -> None:
    folder = data_root / "predictions" / "ndh" / "seq2seq_prevalent_r2r"
    preds = folder / "val-seq2seq-all-trusted_path-40-sample-imagenet_val_seen_iter_100.json.gz"
    by = {t: vlneval.evaluate(t, "val_seen", preds, root=data_root) for t in ("cvdn", "ndh")}
    assert by["cvdn"].to_dict() == by["ndh"].to_dict() and by["cvdn"].task == "ndh"


def test_a_registry_alias_is_checked_and_suggested() -> None:
    reg: Registry[type] = Registry("task")
    reg.register("ndh", dict)
    reg.alias("cvdn", "ndh")
    with pytest.raises(vlneval.VLNEvalError, match="task 'CVDN' is already registered"):
        reg.alias("CVDN", "ndh")
    with pytest.raises(vlneval.VLNEvalError, match="task 'ndh' is already registered"):
        reg.alias("ndh", "cvdn")
    with pytest.raises(vlneval.VLNEvalError, match="unknown task 'r2r'"):
        reg.alias("room", "r2r")
    with pytest.raises(vlneval.VLNEvalError, match="unknown task 'cvdnx'; did you mean 'cvdn'"):
        reg.spec("cvdnx")


def _problems(exc: InvalidInputError) -> list[str]:
    return [p.message for p in exc.problems]


@pytest.mark.parametrize("given", [None, "trj"])
def test_records_keyed_traj_are_one_problem_with_the_fix(given: str | None) -> None:
    records = [{"instr_id": r["instr_id"], "traj": r["trajectory"]} for r in _demo()]
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, records, trajectory_key=given)
    fields = "'trajectory' or 'path' or 'pred_path'" if given is None else "'trj'"
    assert _problems(exc.value) == [
        f"no record has the field {fields} (the executed viewpoints); the records have "
        "'instr_id', 'traj' (to score the field 'traj', pass --trajectory-key traj)"
    ]
    assert for_phase(exc.value.problems[0].message) == (  # a phase fixes the key: hint dropped
        f"no record has the field {fields} (the executed viewpoints); the records have "
        "'instr_id', 'traj'"
    )


def test_records_without_any_list_and_other_problems_keep_them() -> None:
    records: list[dict[str, Any]] = [{"instr_id": "100_0", "score": 1}, {"instr_id": 1.5}]
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, records)
    assert _problems(exc.value) == [
        "no record has the field 'trajectory' or 'path' or 'pred_path' (the executed "
        "viewpoints); the records have 'instr_id', 'score'",
        "instr_id must be a string, got float 1.5",
    ]


def test_some_records_without_a_trajectory_are_each_named() -> None:
    records = _demo()
    del records[0]["trajectory"]
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, records)
    assert _problems(exc.value) == ["missing field 'trajectory'"]


def _touchdown(data_root: Path, tmp: Path, task: str, records: list[dict[str, Any]]) -> str:
    path = tmp / "preds.json"
    path.write_text(json.dumps(records))
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate(task, "dev", path, root=data_root, options={"data_version": "unseen"})
    assert len(exc.value.problems) == 1
    shown = for_phase(exc.value.problems[0].message)  # a phase fixes the task: hints dropped
    assert "--" not in shown and exc.value.problems[0].message.startswith(shown)
    return str(exc.value).removeprefix(f"error: {path}: ")


def _routes(data_root: Path) -> list[dict[str, Any]]:
    raw = (data_root / "touchdown" / "touchdown_unseen_split" / "dev.json.gz").read_bytes()
    return [json.loads(line) for line in gzip.decompress(raw).splitlines() if line.strip()]


def test_a_navigation_file_given_to_sdr_is_one_problem(data_root: Path, tmp_path: Path) -> None:
    nav = [
        {"route_id": r["route_id"], "trajectory": r["route_panoids"]} for r in _routes(data_root)
    ]
    assert len(nav) == 800
    assert _touchdown(data_root, tmp_path, "touchdown-sdr", nav) == (
        "no record has the field 'x' (SDR predictions are {route_id, pano, x, y} in pixels); the "
        "records have 'route_id', 'trajectory'; this looks like a touchdown (navigation) file: "
        "use --task touchdown"
    )


def test_an_sdr_file_given_to_touchdown_is_one_problem(data_root: Path, tmp_path: Path) -> None:
    sdr = [{"route_id": r["route_id"], "pano": "main", "x": 5, "y": 5} for r in _routes(data_root)]
    assert _touchdown(data_root, tmp_path, "touchdown", sdr) == (
        "no record has the field 'trajectory' (the panoramas visited, start included); the "
        "records have 'pano', 'route_id', 'x', 'y'; this looks like a touchdown-sdr file: use "
        "--task touchdown-sdr"
    )


def test_touchdown_records_keyed_traj_get_the_trajectory_key(
    data_root: Path, tmp_path: Path
) -> None:
    nav = [{"route_id": r["route_id"], "traj": r["route_panoids"]} for r in _routes(data_root)]
    assert _touchdown(data_root, tmp_path, "touchdown", nav) == (
        "no record has the field 'trajectory' (the panoramas visited, start included); the "
        "records have 'route_id', 'traj' (to score the field 'traj', pass --trajectory-key traj)"
    )


def test_an_explicit_episodes_file_is_on_the_card(tmp_path: Path) -> None:
    episodes = tmp_path / "DEMO_val.json"
    episodes.write_bytes((demo_root() / "demo" / "DEMO_val.json").read_bytes())
    preds = demo_root() / "demo" / "predictions_val.json"
    default = vlneval.evaluate("demo", None, preds)
    given = vlneval.evaluate("demo", None, preds, episodes_file=episodes)
    assert "episodes_file" not in default.protocol and given.warnings == default.warnings
    card = given.to_dict()["protocol"]
    assert card["episodes_file"] == {
        "name": "DEMO_val.json",
        "sha256": hashlib.sha256(episodes.read_bytes()).hexdigest()[:16],
    }
    assert list(card)[3:5] == ["episodes", "episodes_file"]
    assert {k: v for k, v in card.items() if k != "episodes_file"} == default.to_dict()["protocol"]
    assert given.metrics == default.metrics


def test_an_episodes_file_of_another_split_is_warned(
    data_root: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = data_root / "predictions" / "r2r" / "seq2seq_r2r_baseline_sadanand1120"
    preds = folder / "seq2seq_sample_imagenet_val_seen_iter_20000.json.gz"
    seen = data_root / "r2r" / "R2R_val_seen.json.gz"
    graphs = data_root / "matterport3d" / "connectivity"
    summary = tmp_path / "s.json"
    argv = ["score", "--task", "r2r", "--episodes", str(seen), "--graphs", str(graphs)]
    argv += ["--predictions", str(preds), "--json", str(summary), "--quiet"]
    warning = (
        "the episodes file R2R_val_seen.json.gz looks like split val_seen, scored as val_unseen"
    )
    assert main([*argv, "--split", "val_unseen"]) == 0
    assert f"warning: {warning}\n" in capsys.readouterr().err
    got = json.loads(summary.read_text())
    assert got["warnings"][-1] == warning and got["protocol"]["episodes_file"] == {
        "name": "R2R_val_seen.json.gz",
        "sha256": "52e0e9491c72b21b",  # of the file's (gzipped) bytes
    }
    assert main([*argv, "--split", "val_seen"]) == 0
    assert "looks like split" not in capsys.readouterr().err
    assert warning not in json.loads(summary.read_text())["warnings"]


def test_the_other_split_warning_reaches_a_refusal(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every id missing because --episodes names the wrong file: the refusal says so too."""
    folder = data_root / "predictions" / "r2r" / "seq2seq_r2r_baseline_sadanand1120"
    preds = folder / "seq2seq_sample_imagenet_val_unseen_iter_20000.json.gz"
    seen = data_root / "r2r" / "R2R_val_seen.json.gz"
    graphs = data_root / "matterport3d" / "connectivity"
    argv = ["score", "--task", "r2r", "--split", "val_unseen", "--episodes", str(seen)]
    assert main([*argv, "--graphs", str(graphs), "--predictions", str(preds)]) == 2
    assert capsys.readouterr().err == (
        f"error: {preds}: no prediction matches an episode of r2r val_unseen\n"
        "hint: the episodes file R2R_val_seen.json.gz looks like split val_seen, scored as "
        "val_unseen\n"
    )


SUMMARY = {"length": 1.0, "nav_error": 2.0, "success_rate": 0.5}


def test_a_skipped_summary_record_is_not_a_record_without_a_trajectory() -> None:
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, [SUMMARY], skip_summaries=True)
    assert _problems(exc.value) == ["no prediction matches an episode of demo val"]
    keyed = [{"instr_id": r["instr_id"], "traj": r["trajectory"]} for r in _demo()]
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, [SUMMARY, *keyed], skip_summaries=True)
    assert _problems(exc.value) == [
        "no record has the field 'trajectory' or 'path' or 'pred_path' (the executed "
        "viewpoints); the records have 'instr_id', 'traj' (to score the field 'traj', pass "
        "--trajectory-key traj)"
    ]


@pytest.mark.parametrize("task", ["demo", "r2r-ce"])
def test_an_integer_beyond_a_float_s_range_is_not_finite_not_a_crash(
    task: str, tmp_path: Path
) -> None:
    big = 10**350  # valid JSON, within the reader's 400-character number limit
    if task == "demo":
        records: Any = _demo()
        records[0]["trajectory"][0][1] = big
        with pytest.raises(InvalidInputError) as exc:
            vlneval.evaluate("demo", None, records)
        assert _problems(exc.value) == [
            "heading is an integer of 351 digits, beyond a double's range (must be finite)"
        ]
        return
    from tests.tasks.vlnce.helpers import write_split

    episodes, _ = write_split(tmp_path)
    steps = [{"position": [0.0, 0.0, 0.0], "heading": big, "stop": True}]
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("r2r-ce", "val", {"1": steps, "2": steps}, episodes_file=episodes)
    assert _problems(exc.value) == [f"heading must be a finite number, got {str(big)[:30]}"] * 2


def test_a_name_an_alias_holds_cannot_be_registered_behind_it() -> None:
    reg: Registry[type] = Registry("task")
    reg.register("ndh", dict)
    reg.alias("cvdn", "ndh")
    with pytest.raises(vlneval.VLNEvalError, match="task 'CVDN' is already registered"):
        reg.register("CVDN", list)
    assert reg.get("cvdn") is dict and reg.names() == ["ndh"]


def test_the_completeness_problem_stays_when_every_matched_record_is_malformed() -> None:
    records = [{**_demo()[0], "trajectory": "x"}, {**_demo()[1], "trajectory": []}]
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate("demo", None, records)
    assert [str(p) for p in exc.value.problems] == [
        "<records>: 34 of 36 episodes have no prediction (first: 100_2, 101_0, 101_1, 101_2, "
        "102_0); profile demo requires all of them: score only the predicted ones with --subset "
        "(subset=True in Python), reported as partial",
        '<records>: instr_id "100_0": trajectory: trajectory must be a list, got str',
        '<records>: instr_id "100_1": trajectory: empty trajectory (it must include the start '
        "viewpoint)",
    ]
