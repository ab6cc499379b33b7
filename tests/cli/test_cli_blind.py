"""Blind validation: ``vlneval validate`` on a goal-less test split, as the server checks it.

A random agent's R2R test run is valid blind; a broken copy (an unknown id, a wrong start, a
jump between viewpoints that are not adjacent, a missing episode) exits 2 naming every problem.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from vlneval.cli.main import main


@pytest.fixture(scope="module")
def test_run(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random agent's predictions on the R2R test split (written by ``vlneval run``)."""
    if not (data_root / "r2r" / "R2R_test.json.gz").is_file():
        pytest.skip("the R2R test split is not in the data folder")
    out = tmp_path_factory.mktemp("blind") / "random_test.json"
    argv = ["run", "--task", "r2r", "--split", "test", "--agent", "random"]
    code = main([*argv, "--data-root", str(data_root), "--out", str(out)])
    assert code == 0 and out.is_file()
    return out


def _validate(data_root: Path, path: Path, *extra: str) -> list[str]:
    return ["validate", "--task", "r2r", "--split", "test", "--data-root", str(data_root),
            "--predictions", str(path), *extra]  # fmt: skip


def _neighbours(data_root: Path, scan: str) -> tuple[dict[str, set[str]], list[str]]:
    folder = data_root / "matterport3d" / "connectivity"
    path = folder / f"{scan}_connectivity.json"
    raw = path.read_bytes() if path.is_file() else gzip.decompress(Path(f"{path}.gz").read_bytes())
    nodes = json.loads(raw)
    ids = [n["image_id"] for n in nodes]
    adj = {
        n["image_id"]: {ids[j] for j, ok in enumerate(n["unobstructed"]) if ok}
        for n in nodes
        if n["included"]
    }
    return adj, [i for i, n in zip(ids, nodes, strict=True) if n["included"]]


def test_a_random_test_run_passes_blind(
    data_root: Path, test_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_validate(data_root, test_run)) == 0
    out = capsys.readouterr().out
    assert "passes the blind check of r2r test" in out
    assert "4173 episodes" in out and "public view" in out and "no scores" in out


def test_a_broken_copy_names_every_problem(
    data_root: Path, test_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records: list[dict[str, Any]] = json.loads(test_run.read_text())
    episodes = json.loads(gzip.decompress((data_root / "r2r" / "R2R_test.json.gz").read_bytes()))
    scan_of = {f"{e['path_id']}_{k}": e["scan"] for e in episodes for k in range(3)}

    unknown = records[0]["instr_id"]
    records[0]["instr_id"] = "999999_9"  # unknown id; its own episode is now missing

    wrong = records[1]
    adj, nodes = _neighbours(data_root, scan_of[wrong["instr_id"]])
    start = wrong["trajectory"][0][0]
    other = next(n for n in sorted(adj[start]) if n != start)
    wrong["trajectory"] = [[other, 0.0, 0.0], [start, 0.0, 0.0]]  # starts one step off

    jump = records[2]
    adj, nodes = _neighbours(data_root, scan_of[jump["instr_id"]])
    last = jump["trajectory"][-1][0]
    far = next(n for n in nodes if n != last and n not in adj[last])
    jump["trajectory"].append([far, 0.0, 0.0])

    missing = records.pop(3)["instr_id"]

    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(records))
    assert main(_validate(data_root, broken, "--all-errors")) == 2
    text = capsys.readouterr().err
    assert "999999_9" in text
    assert f'"{wrong["instr_id"]}"' in text and other in text
    assert f'"{jump["instr_id"]}"' in text and far in text
    assert unknown in text and missing in text
    assert "blind check against the public view" in text and "no scores" in text


def test_the_blind_check_is_the_servers(data_root: Path, test_run: Path) -> None:
    """The server's public validation is the shared task-layer code, not a copy."""
    from vlneval.server.services import validation
    from vlneval.tasks.common import blind

    assert validation.public_problems is blind.public_problems
    assert validation.public_view is blind.public_view


# Tasks with their own reader: their scorer runs on the public copy of the test split.
OWN = [
    # (task, options, the test split's file under the data root)
    ("reverie", (), "reverie/data_v2/REVERIE_test.json.gz"),
    ("reverie", ("--data-version", "v1"), "reverie/REVERIE_test.json.gz"),
    ("r2r-ce", (), "vlnce/R2R_VLNCE_v1-3_preprocessed/test/test.json.gz"),
]


@pytest.fixture(scope="module")
def own_runs(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The random agent's test-split runs of the tasks of ``OWN`` (one each)."""
    out: dict[str, Path] = {}
    folder = tmp_path_factory.mktemp("blind-own")
    for task, options, rel in OWN:
        if not (data_root / rel).is_file():
            continue
        key = f"{task}{''.join(options)}"
        path = folder / f"{key}_test.json"
        argv = ["run", "--task", task, "--split", "test", "--agent", "random", *options]
        assert main([*argv, "--data-root", str(data_root), "--out", str(path)]) == 0
        if task == "reverie":  # any object id: a file a leaderboard ranks by RGSPL names one
            records = json.loads(path.read_text())
            path.write_text(json.dumps([{**r, "predObjId": 1} for r in records]))
        out[key] = path
    return out


def _own(task: str, options: tuple[str, ...], own_runs: dict[str, Path]) -> Path:
    key = f"{task}{''.join(options)}"
    if key not in own_runs:
        pytest.skip(f"the {key} test split is not in the data folder")
    return own_runs[key]


def _broken_copy(path: Path, tmp: Path) -> tuple[Path, str]:
    """A copy with one record dropped (the official scorers require every episode), and the
    dropped id; for a file keyed by episode id, the first value is also broken."""
    value = json.loads(path.read_text())
    if isinstance(value, dict):
        first, second = list(value)[:2]
        value[first] = [{"position": [float("nan"), 0.0, 0.0], "heading": 0.0, "stop": True}]
        del value[second]
        text = json.dumps(value)
        gone = second
    else:
        gone = str(value.pop(0)["instr_id"])
        text = json.dumps(value)
    out = tmp / f"broken_{path.name}"
    out.write_text(text)
    return out, gone


@pytest.mark.parametrize(
    ("task", "options", "rel"), OWN, ids=["reverie-v2", "reverie-v1", "r2r-ce"]
)
def test_a_test_run_of_a_task_with_its_own_reader_passes_blind(
    data_root: Path,
    own_runs: dict[str, Path],
    task: str,
    options: tuple[str, ...],
    rel: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = _own(task, options, own_runs)
    argv = ["validate", "--task", task, "--split", "test", "--data-root", str(data_root)]
    if task == "r2r-ce":  # a run carries no distances: SPL, its ranking metric, needs the twin
        argv += ["--distance", "twin"]
    assert main([*argv, *options, "--predictions", str(run)]) == 0
    out = capsys.readouterr().out
    assert f"passes the blind check of {task} test" in out and "no scores" in out
    assert f"every check of the {task} scorer that needs no label" in out

    broken, gone = _broken_copy(run, tmp_path)
    assert main([*argv, *options, "--predictions", str(broken), "--all-errors"]) == 2
    err = capsys.readouterr().err
    assert gone in err and "blind check against the public view" in err
    assert "vlneval-public-" not in err  # the public copy is named as such, never by its path


def test_a_v1_test_run_is_checked_against_the_v1_file(
    data_root: Path, own_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """REVERIE's v1 test split has 60 paths the v2 one lacks: a v1 run without them is
    incomplete for v1, though it would pass against v2."""
    import gzip

    run = _own("reverie", ("--data-version", "v1"), own_runs)
    v2_file = data_root / "reverie" / "data_v2" / "REVERIE_test.json.gz"
    if not v2_file.is_file():
        pytest.skip(f"{v2_file} is not in the data folder")
    v2 = {r["id"] for r in json.loads(gzip.decompress(v2_file.read_bytes()))}
    preds = json.loads(run.read_text())
    kept = [p for p in preds if p["instr_id"].rsplit("_", 1)[0] in v2]
    assert 0 < len(kept) < len(preds)
    path = tmp_path / "v1_without_v1_only.json"
    path.write_text(json.dumps(kept))
    argv = ["validate", "--task", "reverie", "--split", "test", "--data-version", "v1"]
    assert main([*argv, "--data-root", str(data_root), "--predictions", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{len(preds) - len(kept)} of {len(preds)} episodes have no prediction" in err


def test_a_test_run_a_leaderboard_cannot_rank_is_refused(
    data_root: Path, own_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A REVERIE test file without predObjId leaves RGSPL (the challenge's primary metric)
    n/a: the blind check refuses it as the server does, with the reason labelled validate
    gives, and never names the public copy."""
    run = _own("reverie", (), own_runs)
    records = json.loads(run.read_text())
    for r in records:
        r.pop("predObjId", None)
    path = tmp_path / "no_objects.json"
    path.write_text(json.dumps(records))
    argv = ["validate", "--task", "reverie", "--split", "test", "--data-root", str(data_root)]
    assert main([*argv, "--predictions", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        f"error: {path}: not a valid submission: a leaderboard ranks reverie by RGSPL: no "
        "predicted objects (predObjId) in the predictions file; give each record the id of the "
        "object it names as predObjId"
    )
    assert "warning: RGS will be n/a: no predicted objects (predObjId)" in err  # not ranked by
    assert "RGSPL will be n/a" not in err and "vlneval-public-" not in err
    for r in records:
        r["predObjId"] = 1  # any object id: the check needs no label
    path.write_text(json.dumps(records))
    assert main([*argv, "--predictions", str(path)]) == 0
    assert "will be n/a" not in capsys.readouterr().err


# A file that starts with its own summary (NaviLLM's compact files do) is checked blind with
# --skip-summary-records as it is scored: refused with the suggestion without it, skipped with
# a warning with it; a task whose reader cannot skip them refuses before reading anything.
SUMMARY = {"spl": 0.5, "success_rate": 0.6}
SKIPPED = (
    "warning: 1 record(s) without 'instr_id' that look like a summary were skipped "
    "(--skip-summary-records; record 0)"
)


def _with_summary(run: Path, tmp: Path) -> Path:
    out = tmp / f"summary_{run.name}"
    out.write_text(json.dumps([SUMMARY, *json.loads(run.read_text())]))
    return out


def _suggested(path: Path, what: str) -> str:
    return (
        f"error: {path}: record 0: missing field 'instr_id'; the record looks like a summary "
        "(fields spl, success_rate); pass --skip-summary-records to skip it\n"
        f"error: {path}: not a valid {what} submission: 1 problem (blind check against the "
        "public view: no goals, no scores)\n"
    )


def test_r2r_test_skips_a_summary_record_only_when_asked(
    data_root: Path, test_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _with_summary(test_run, tmp_path)
    assert main(_validate(data_root, path)) == 2
    assert capsys.readouterr().err == _suggested(path, "r2r test")
    assert main(_validate(data_root, path, "--skip-summary-records")) == 0
    got = capsys.readouterr()
    assert got.err == f"{SKIPPED}\n"
    assert f"ok: {path} passes the blind check of r2r test" in got.out
    assert main(_validate(data_root, test_run, "--skip-summary-records")) == 0
    assert capsys.readouterr().err == ""  # nothing to skip, nothing said


def test_reverie_v1_test_skips_a_summary_record_only_when_asked(
    data_root: Path, own_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ("--data-version", "v1")
    path = _with_summary(_own("reverie", options, own_runs), tmp_path)
    argv = ["validate", "--task", "reverie", "--split", "test", *options]
    argv += ["--data-root", str(data_root), "--predictions", str(path)]
    assert main(argv) == 2
    assert capsys.readouterr().err == _suggested(path, "reverie test")
    assert main([*argv, "--skip-summary-records"]) == 0
    got = capsys.readouterr()
    assert got.err == f"{SKIPPED}\n"  # the public copy's stand-in warnings (v1 boxes) stay out
    assert f"ok: {path} passes the blind check of reverie test" in got.out
    summary, *records = json.loads(path.read_text())
    path.write_text(json.dumps([summary, *({k: v for k, v in r.items() if k != "predObjId"}
                                           for r in records)]))  # fmt: skip
    assert main([*argv, "--skip-summary-records"]) == 2  # skipped, then refused: no RGSPL
    got = capsys.readouterr()
    assert got.err.splitlines()[0] == SKIPPED  # the file's own warning, before the refusal
    assert "a leaderboard ranks reverie by RGSPL: no predicted objects" in got.err.splitlines()[-1]
    assert "vlneval-public-" not in got.err and "v1 boxes" not in got.err


def test_r2r_ce_test_refuses_the_option_before_reading(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rel = "vlnce/R2R_VLNCE_v1-3_preprocessed/test/test.json.gz"
    if not (data_root / rel).is_file():
        pytest.skip(f"{rel} is not in the data folder")
    argv = ["validate", "--task", "r2r-ce", "--split", "test", "--data-root", str(data_root)]
    absent = tmp_path / "absent.json"  # never read
    assert main([*argv, "--predictions", str(absent), "--skip-summary-records"]) == 2
    assert capsys.readouterr().err == (
        "error: skip_summaries (--skip-summary-records) does not apply to task r2r-ce: its "
        "reader cannot skip summary records; remove the summary record from the file\n"
    )


def test_validate_says_what_score_says_of_a_split_it_cannot_open(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a hidden split is checked blind; any other refusal is the scorer's own words."""
    if not (data_root / "reverie").is_dir():
        pytest.skip(f"no REVERIE data under {data_root}")
    path = tmp_path / "p.json"
    path.write_text("[]")
    said = []
    for command in ("score", "validate"):
        argv = [command, "--task", "reverie", "--split", "val_unsen", "--predictions", str(path)]
        assert main([*argv, "--data-root", str(data_root)]) == 2
        said.append(capsys.readouterr().err)
    assert said[0] == said[1]
    assert said[0].startswith("error: no reverie val_unsen episodes for data version v2 under ")
