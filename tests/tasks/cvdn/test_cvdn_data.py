"""The NDH loader: path types, instruction text, string-valued files, the task registry and CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.tasks.cvdn.fixture import DIALOG, INSTANCES, make_root, predictions, stringify
from vlneval.cli.main import main
from vlneval.tasks import get_task
from vlneval.tasks.cvdn.format import NDHEpisodes, load_ndh, ndh_instruction, trusted_path


def _file(tmp: Path, instances=INSTANCES) -> Path:  # type: ignore[no-untyped-def]
    return make_root(tmp, instances) / "cvdn" / "NDH" / "val_seen.json"


@pytest.mark.parametrize(
    ("path_type", "paths"),
    [
        ("planner_path", [("S", "A", "B"), ("S",), ("A", "B", "C")]),
        ("player_path", [("S", "A", "B", "C"), ("S", "A"), ("A", "B", "C", "E")]),
        ("trusted_path", [("S", "A", "B", "C"), ("S",), ("A", "B", "C", "E")]),
    ],
)
def test_path_types(tmp_path: Path, path_type: str, paths: list[tuple[str, ...]]) -> None:
    ndh = load_ndh(_file(tmp_path), path_type=path_type)
    assert ndh.paths == paths
    assert ndh.goals == [p[-1:] for p in paths]
    assert ndh.end_panos == [("C", "D"), ("S", "E"), ("E",)]
    assert ndh.planner_goals == ["B", "S", "C"]


def test_trusted_path_needs_the_goal_after_the_start() -> None:
    assert trusted_path(["s", "g"], ["s", "a", "g"]) == ["s", "a", "g"]
    assert trusted_path(["s", "g"], ["s", "a"]) == ["s", "g"]
    assert trusted_path(["g"], ["g", "a", "g"]) == ["g", "a", "g"]  # came back to it: trusted


def test_episode_table_for_environments(tmp_path: Path) -> None:
    table = load_ndh(_file(tmp_path), task="ndh", split="val_seen")
    assert table.id_field == "inst_idx" and table.ids == ["1", "2", "3"]
    assert table.scans == ["lane"] * 3 and np.allclose(table.headings, 1.5)
    ep = table.episode(0)
    assert (
        ep.start == "S" and ep.instruction == "<NAV> Where now? <ORA> Up the corridor. <TAR> towel"
    )
    assert table.episode(1).instruction == "<TAR> towel"  # no dialog yet: the target hint only
    task = get_task("ndh")
    assert (
        task.load(_file(tmp_path / "b"), "val_seen", __import__("vlneval").get_profile("cvdn")).ids
        == table.ids
    )


def test_the_task_loader_gives_the_goal_regions_the_scorer_reads(tmp_path: Path) -> None:
    """One loader: the task's (registry, environments, blind checks, server) gives the table
    the scorer scores, its goal regions and planner goals included; a subset keeps them."""
    prof = __import__("vlneval").get_profile("cvdn")
    got = get_task("ndh").load(_file(tmp_path), "val_seen", prof, path_type="trusted_path")
    assert isinstance(got, NDHEpisodes) and got.path_type == "trusted_path"
    assert got.paths == [("S", "A", "B", "C"), ("S",), ("A", "B", "C", "E")]
    assert got.end_panos == [("C", "D"), ("S", "E"), ("E",)]
    assert got.planner_goals == ["B", "S", "C"] and got.int_ids and got.label(2) == "inst_idx 3"
    part = got.subset([2, 0])
    assert (part.ids, part.end_panos, part.planner_goals) == (
        ["3", "1"],
        [("E",), ("C", "D")],
        ["C", "B"],
    )
    assert part.path_type == "trusted_path"


@pytest.mark.parametrize(
    ("history", "text"),
    [
        ("all", "<NAV> Where now? <ORA> Up the corridor. <TAR> towel"),
        ("target", "<TAR> towel"),
        ("oracle_ans", "<ORA> Up the corridor. <TAR> towel"),
        ("nav_q_oracle_ans", "<NAV> Where now? <ORA> Up the corridor. <TAR> towel"),
        ("none", ""),
    ],
)
def test_instruction_histories(history: str, text: str) -> None:
    assert ndh_instruction(DIALOG, "towel", history) == text


def test_string_valued_file_loads_the_same(tmp_path: Path) -> None:
    native = load_ndh(_file(tmp_path / "a"), path_type="trusted_path")
    strings = load_ndh(_file(tmp_path / "b", stringify(INSTANCES)), path_type="trusted_path")
    assert strings.string_valued and not native.string_valued
    assert strings.ids == native.ids and strings.paths == native.paths
    assert strings.instructions == native.instructions
    assert strings.end_panos == native.end_panos
    raw = json.loads(_file(tmp_path / "c", stringify(INSTANCES)).read_text())
    assert raw[0]["inst_idx"] == "1" and raw[0]["end_panos"] == "['C', 'D']"


def test_cli_score_validate_and_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_root(tmp_path / "root")
    good = predictions(tmp_path)
    out = tmp_path / "summary.json"
    rows = tmp_path / "rows.csv"
    args = ["--task", "ndh", "--split", "val_seen", "--data-root", str(root)]
    rc = main(
        [
            "score",
            *args,
            "--predictions",
            str(good),
            "--path-type",
            "trusted_path",
            "--json",
            str(out),
            "--per-episode",
            str(rows),
        ]
    )
    assert rc == 0
    summary = json.loads(out.read_text())
    assert summary["path_type"] == "trusted_path" and summary["metrics"]["SR"] == pytest.approx(
        1 / 3
    )
    assert "units" not in summary and "GP (m)" in capsys.readouterr().out
    assert rows.read_text().splitlines()[0].startswith("inst_idx,scan,")
    assert main(["validate", *args, "--predictions", str(good)]) == 0
    assert "ok:" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"inst_idx": "1", "trajectory": [["S", 0, 0]]}]))
    assert main(["score", *args, "--predictions", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "inst_idx is a string in all 1 records" in err and "Traceback" not in err


def test_per_episode_jsonl_writes_the_ids_as_json_integers(tmp_path: Path) -> None:
    """NDH ids are JSON integers in its files: the rows carry them so (a join by id works),
    one file or several."""
    root = make_root(tmp_path / "root")
    good = predictions(tmp_path)
    args = ["score", "--task", "ndh", "--split", "val_seen", "--data-root", str(root),
            "--path-type", "trusted_path", "--quiet"]  # fmt: skip
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main([*args, "--predictions", str(good), "--per-episode", str(one)]) == 0
    rows = [json.loads(line) for line in one.read_text().splitlines()]
    assert [r["inst_idx"] for r in rows] == [1, 2, 3]
    records = {r["inst_idx"]: r for r in json.loads(good.read_text())}
    assert all(r["inst_idx"] in records for r in rows)
    assert main([*args, "--predictions", str(good), str(good.with_name("copy.json")),
                 "--per-episode", str(two)]) == 2  # fmt: skip
    assert [json.loads(line)["inst_idx"] for line in two.read_text().splitlines()] == [1, 2, 3]
