"""``skip_summaries`` (``--skip-summary-records``) for every task: a file's own summary record is
skipped only on request by every reader that can tell one from a prediction (the same metrics as
the file without it); the other tasks refuse the option before reading, naming the task."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vlneval.cli.main import main
from vlneval.errors import InvalidInputError, VLNEvalError
from vlneval.evaluation import Scorer, evaluate
from vlneval.tasks import TASKS, get_task
from vlneval.tasks.common.summary_records import is_skipped_note

SUMMARY = {"length": 13.2, "nav_error": 3.5, "success_rate": 0.67, "total_num_instr": 4}
FIELDS = "length, nav_error, success_rate, total_num_instr"
Capture = pytest.CaptureFixture[str]


def _refusal(task: str) -> str:
    return (
        f"skip_summaries (--skip-summary-records) does not apply to task {task}: its reader "
        "cannot skip summary records; remove the summary record from the file"
    )


#: REVERIE instr_id -> (trajectory, predObjId)
REVERIE = {
    "1_7_0": (["S", "A", "B"], 7),
    "1_7_1": (["S", "G"], "8"),
    "2_9_0": (["S", "A"], 9),
    "2_9_1": (["S", "G", "S"], None),
}


def _reverie(tmp: Path, objects: bool = True) -> tuple[str, str, Path, list[Any], dict[str, Any]]:
    from tests.tasks.reverie.reverie_fixtures import rev_preds, reverie_root

    entries = {k: (v, o if objects else ...) for k, (v, o) in REVERIE.items()}
    return "reverie", "val", reverie_root(tmp / "root"), rev_preds(entries), {"data_version": "v1"}


def _ndh(tmp: Path) -> tuple[str, str, Path, list[Any], dict[str, Any]]:
    from tests.tasks.cvdn.fixture import TRAJECTORIES, make_root

    records = [
        {"inst_idx": k, "trajectory": [[v, 0.0, 0.0] for v in vps]}
        for k, vps in TRAJECTORIES.items()
    ]
    return "ndh", "val_seen", make_root(tmp / "root"), records, {}


def _hanna(tmp: Path) -> tuple[str, str, Path, list[Any], dict[str, Any]]:
    from tests.tasks.hanna.fixture import RUNS, make_root, record

    records = [record(k, v, a) for k, (v, a) in RUNS.items()]  # with agent_ask: pre-checked
    return "hanna", "val_unseen", make_root(tmp / "root"), records, {}


def _soon(tmp: Path) -> tuple[str, str, Path, list[Any], dict[str, Any]]:
    from tests.tasks.soon.soon_fixtures import soon_preds, soon_root

    return "soon", "val", soon_root(tmp / "root"), soon_preds(), {}


def _touchdown(tmp: Path) -> tuple[str, str, Path, list[Any], dict[str, Any]]:
    from tests.tasks.touchdown.fixture import RUNS, make_root

    records = [{"route_id": k, "trajectory": v} for k, v in RUNS.items()]
    return "touchdown", "dev", make_root(tmp / "root"), records, {}


Case = Callable[[Path], tuple[str, str, Path, list[Any], dict[str, Any]]]
#: task -> (its fixture, where the summary record goes, its id field)
HONOURED: dict[str, tuple[Case, int, str]] = {
    "reverie": (_reverie, 0, "instr_id"),
    "ndh": (_ndh, 0, "inst_idx"),
    "hanna": (_hanna, 4, "instr_id"),
    "soon": (_soon, 0, "instr_id"),
    "touchdown": (_touchdown, 1, "route_id"),
}


@pytest.mark.parametrize("name", sorted(HONOURED))
def test_summary_record_refused_with_the_suggestion_then_skipped(name: str, tmp_path: Path) -> None:
    case, at, id_field = HONOURED[name]
    task, split, root, records, options = case(tmp_path)
    given = [*records[:at], SUMMARY, *records[at:]]
    with_summary = tmp_path / "with_summary.json"
    with_summary.write_text(json.dumps(given))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(records))
    with pytest.raises(InvalidInputError) as info:
        evaluate(task, split, with_summary, root=root, options=options)
    assert str(info.value) == (
        f"error: {with_summary}: record {at}: missing field {id_field!r}; the record looks like "
        f"a summary (fields {FIELDS}); pass --skip-summary-records to skip it"
    )
    got = evaluate(task, split, with_summary, root=root, options=options, skip_summaries=True)
    want = evaluate(task, split, plain, root=root, options=options)
    assert got.metrics == want.metrics and got.n_episodes == want.n_episodes
    in_memory = evaluate(task, split, given, root=root, options=options, skip_summaries=True)
    assert in_memory.metrics == want.metrics and in_memory.warnings == got.warnings
    for column, values in want.per_episode.items():
        np.testing.assert_array_equal(got.per_episode[column], values)
    assert list(got.warnings) == [
        f"1 record(s) without {id_field!r} that look like a summary were skipped "
        f"(--skip-summary-records; record {at})",
        *want.warnings,
    ]
    # the note is told by its type, every reader's; the same text as a plain string is not it
    assert [is_skipped_note(w) for w in got.warnings] == [True] + [False] * len(want.warnings)
    assert not is_skipped_note(str(got.warnings[0]))


def test_ndh_pre_check_counts_predictions_not_the_summary(tmp_path: Path) -> None:
    """Every prediction with a string inst_idx is still one file-level error beside a summary."""
    _, split, root, records, _ = _ndh(tmp_path)
    p = tmp_path / "strings.json"
    p.write_text(json.dumps([SUMMARY, *({**r, "inst_idx": str(r["inst_idx"])} for r in records)]))
    for skip in (False, True):
        with pytest.raises(InvalidInputError) as info:
            evaluate("ndh", split, p, root=root, skip_summaries=skip)
        assert str(info.value) == (
            f"error: {p}: inst_idx is a string in all 3 records (e.g. '1'); NDH predictions use "
            "the integer inst_idx (the official scorer compares it with the episodes' integers "
            "and would find none): write it as a JSON number"
        )


def test_reverie_key_check_looks_past_the_summary(tmp_path: Path) -> None:
    """The field-name check reads the first prediction, not the summary before it."""
    _, split, root, records, options = _reverie(tmp_path, objects=False)
    p = tmp_path / "misspelt.json"
    p.write_text(json.dumps([SUMMARY, *({**r, "pred_obj": 7} for r in records)]))
    with pytest.raises(InvalidInputError) as info:
        evaluate("reverie", split, p, root=root, options=options, skip_summaries=True)
    assert str(info.value) == (
        f"error: {p}: field 'pred_obj' is not a REVERIE field: the predicted object is "
        "'predObjId' (an int object id)"
    )


def test_a_file_of_summary_like_records_keeps_its_file_level_message(tmp_path: Path) -> None:
    """Records that all lack the id and the trajectory are a wrong file, not summaries."""
    _, split, root, _, _ = _ndh(tmp_path)
    p = tmp_path / "wrong.json"
    p.write_text(json.dumps([{"instance_id": 1, "steps": 3}]))
    with pytest.raises(InvalidInputError) as info:
        evaluate("ndh", split, p, root=root, skip_summaries=True)
    assert str(info.value) == (
        f"error: {p}: no record has the field 'inst_idx' (NDH predictions are keyed by the "
        "integer inst_idx of each instance); the records have 'instance_id', 'steps'"
    )


def test_which_tasks_refuse() -> None:
    refusing = sorted(t.name for t in TASKS.values() if not t.summary_records)
    assert refusing == ["r2r-ce", "r2r-twin", "touchdown-sdr"]
    for name in refusing:
        with pytest.raises(VLNEvalError) as info:
            get_task(name).check_skip_summaries(True)
        assert str(info.value) == _refusal(name)
        get_task(name).check_skip_summaries(False)


def test_refused_before_reading_named_as_registered(tmp_path: Path) -> None:
    from tests.tasks.touchdown.fixture import make_root

    scorer = Scorer("TouchDown-SDR", "dev", root=make_root(tmp_path / "root"))
    with pytest.raises(VLNEvalError) as info:  # the file does not exist: never read
        scorer.score(tmp_path / "absent.json", skip_summaries=True)
    assert type(info.value) is VLNEvalError and str(info.value) == _refusal("touchdown-sdr")


def test_r2r_ce_refuses_from_the_library_and_the_command_line(
    tmp_path: Path, capsys: Capture
) -> None:
    from tests.tasks.vlnce.helpers import steps, write_split

    episodes, _ = write_split(tmp_path)
    preds = tmp_path / "ce.json"
    line = [[0.0, 0.0, -float(k)] for k in range(5)]
    preds.write_text(json.dumps({"1": steps(line), "2": steps(line)}))
    with pytest.raises(VLNEvalError) as info:
        evaluate("r2r-ce", "val", preds, episodes_file=episodes, skip_summaries=True)
    assert str(info.value) == _refusal("r2r-ce")
    args = ["--task", "r2r-ce", "--split", "val", "--episodes", str(episodes)]
    for command in ("score", "validate"):
        code = main([command, *args, "--predictions", str(preds), "--skip-summary-records"])
        assert code == 2
        assert capsys.readouterr().err == f"error: {_refusal('r2r-ce')}\n"
    assert main(["score", *args, "--predictions", str(preds), "--quiet"]) == 0


def test_refusing_readers_never_suggest_the_option(tmp_path: Path) -> None:
    from tests.tasks.touchdown.fixture import SDR, make_root
    from tests.tasks.vlnce.helpers import steps, write_split

    sdr = tmp_path / "sdr.json"
    sdr.write_text(json.dumps([{"pano": "main", "x": 1.0, "y": 2.0}, *SDR]))
    with pytest.raises(InvalidInputError) as info:
        evaluate("touchdown-sdr", "dev", sdr, root=make_root(tmp_path / "root"))
    assert str(info.value) == f"error: {sdr}: record 0: missing field 'route_id'"
    episodes, _ = write_split(tmp_path)
    line = [[0.0, 0.0, -float(k)] for k in range(5)]
    lines = [SUMMARY, *({"instruction_id": i, "path": [s["position"] for s in steps(line)]}
                        for i in ("i1", "i2"))]  # fmt: skip
    ce = tmp_path / "ce.jsonl"
    ce.write_text("\n".join(json.dumps(r) for r in lines))
    with pytest.raises(InvalidInputError) as info:
        evaluate("r2r-ce", "val", ce, episodes_file=episodes, form="rxr-jsonl")
    assert "summary" not in str(info.value) and "--skip-summary-records" not in str(info.value)


def test_several_files_are_refused_once_before_any_is_read(tmp_path: Path, capsys: Capture) -> None:
    from tests.tasks.vlnce.helpers import write_split

    episodes, _ = write_split(tmp_path)
    absent = [str(tmp_path / f"absent_{k}.json") for k in range(3)]  # never read
    argv = ["score", "--task", "r2r-ce", "--split", "val", "--episodes", str(episodes)]
    assert main([*argv, "--predictions", *absent, "--skip-summary-records"]) == 2
    assert capsys.readouterr().err == f"error: {_refusal('r2r-ce')}\n"


def test_the_blind_checks_skip_a_summary_only_when_asked(tmp_path: Path) -> None:
    """Both blind checks (the public view, a task's own scorer on the public copy) take
    ``skip_summaries`` as scoring does: the suggestion without it, the warning with it."""
    from tests.tasks.reverie.reverie_fixtures import reverie_root
    from vlneval.tasks import get_profile
    from vlneval.tasks.common.blind import blind_check, open_blind, own_blind_check, public_view
    from vlneval.tasks.common.request import SplitRequest
    from vlneval.tasks.common.root import demo_root
    from vlneval.tasks.common.scoring import load_split

    episodes, graphs = load_split(get_task("demo"), "val", get_profile("demo"))
    demo = tmp_path / "demo.json"
    records = json.loads((demo_root() / "demo" / "predictions_val.json").read_text())
    demo.write_text(json.dumps([SUMMARY, *records]))
    reverie = tmp_path / "reverie.json"
    reverie.write_text(json.dumps([SUMMARY, {"instr_id": "3_0", "trajectory": [["S", 0.0, 0.0]]}]))
    request = SplitRequest(
        get_task("reverie"), "test", get_profile("reverie"), root=reverie_root(tmp_path / "root"),
        options={"data_version": "v1"},
    )  # fmt: skip
    checker = open_blind(request)
    assert checker is not None
    skipped = (
        "1 record(s) without 'instr_id' that look like a summary were skipped "
        "(--skip-summary-records; record 0)"
    )
    try:
        for path, check in (
            (demo, lambda skip: blind_check(public_view(episodes), graphs, get_profile("demo"),
                                            demo, skip_summaries=skip)),
            (reverie, lambda skip: own_blind_check(checker, reverie, skip_summaries=skip)),
        ):  # fmt: skip
            refused = check(False)
            assert [str(p) for p in refused.problems] == [
                f"{path}: record 0: missing field 'instr_id'; the record looks like a summary "
                f"(fields {FIELDS}); pass --skip-summary-records to skip it"
            ]
            skipping = check(True)
            assert skipping.problems == [] and skipping.warnings[0] == skipped
    finally:
        checker.close()
