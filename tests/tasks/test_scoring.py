"""The runner on the spec's worked example, every profile rule, and every bad input."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from tests.fixtures import preds, square_root, write_json
from vlneval.errors import InvalidInputError, VLNEvalError
from vlneval.evaluation import evaluate

ALL = ["1_0", "1_1", "1_2"]


def _score(tmp: Path, entries: dict[str, list[str]] | list, profile: str = "r2r", **kw):  # type: ignore[no-untyped-def]
    root = square_root(tmp / "root")
    body = preds(entries) if isinstance(entries, dict) else entries
    p = write_json(tmp / "preds.json", body)
    return evaluate("r2r", "val", p, profile=profile, root=root, **kw)


def test_worked_example_r2r(tmp_path: Path) -> None:
    r = _score(tmp_path, {"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"], "1_2": ["S"]})
    rows = {row["instr_id"]: row for row in r.rows()}
    assert rows["1_0"]["path_length"] == 12.0
    assert rows["1_0"]["spl"] == pytest.approx(1 / 3)
    assert rows["1_0"]["cls"] == pytest.approx(1.0) and rows["1_0"]["ndtw"] == pytest.approx(1.0)
    assert rows["1_1"]["spl"] == 1.0
    assert rows["1_1"]["cls"] == pytest.approx(0.4291, abs=5e-5)
    assert rows["1_1"]["ndtw"] == pytest.approx(math.exp(-8 / 12))
    assert rows["1_2"]["nav_error"] == 4.0 and rows["1_2"]["success"] == 0.0
    m = r.metrics
    assert m["SR"] == pytest.approx(2 / 3) and m["TL"] == pytest.approx(16 / 3)
    assert m["sDTW"] == pytest.approx((1 + math.exp(-8 / 12)) / 3)
    assert all(c["holds"] for c in r.to_dict()["checks"])


def test_r2r_leaves_out_fourth_instruction_and_says_so(tmp_path: Path) -> None:
    r = _score(
        tmp_path, {"1_0": ["S", "G"], "1_1": ["S", "G"], "1_2": ["S", "G"], "1_3": ["S", "G"]}
    )
    assert r.n_episodes == 3 and r.n_expected == 3
    assert any("left out: 1_3" in w for w in r.warnings)
    assert any("ids the profile does not score" in w for w in r.warnings)
    r = _score(tmp_path, {k: ["S", "G"] for k in [*ALL, "1_3"]}, profile="r2r-envdrop")
    assert r.n_episodes == 4


def test_duet_rule_uses_reference_length(tmp_path: Path) -> None:
    entries = {k: ["S", "G"] for k in ALL} | {"1_3": ["S", "A", "B", "G"]}
    r = _score(tmp_path, entries, profile="r2r-duet")
    assert [row["spl"] for row in r.rows()] == [1.0, 1.0, 1.0, 1.0]


def test_jump_rejected_by_r2r_scored_by_duet(tmp_path: Path) -> None:
    entries = {"1_0": ["S", "B"], "1_1": ["S", "G"], "1_2": ["S", "G"]}
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, entries)
    text = str(exc.value)
    assert 'instr_id "1_0": trajectory[1]: viewpoint B is not a neighbour of S in scan sq' in text
    assert "--profile r2r-duet" in text
    r = _score(tmp_path, entries, profile="r2r-duet")
    assert r.rows()[0]["path_length"] == 8.0 and r.rows()[0]["jumps"] == 1


def test_r4r_google_rejects_repeats(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S", "S", "G"]}))
    eps = root / "r2r" / "R2R_val.json"
    with pytest.raises(InvalidInputError, match="repeats a viewpoint"):
        evaluate(
            "r4r",
            "val",
            p,
            profile="r4r-google",
            episodes_file=eps,
            graphs=root / "matterport3d" / "connectivity",
        )


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    bad = [
        {"instr_id": "1_0", "trajectory": [["S", float("nan"), 0.0], ["G", 0.0, 0.0]]},
        {"instr_id": "1_1", "trajectory": [["S", 0, 0], ["Q", 0, 0]]},
        {"instr_id": "1_2", "trajectory": []},
        {"instr_id": 7, "trajectory": [["S", 0, 0]]},
        {"trajectory": [["S", 0, 0]]},
        {"instr_id": "1_0", "trajectory": [["S", 0, 0]]},
        {"instr_id": "9_9", "trajectory": [["S", "north", 0]]},
    ]
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, bad)
    text = str(exc.value)
    assert 'preds.json: instr_id "1_0": trajectory[0]: heading is nan (must be finite)' in text
    assert 'instr_id "1_1": trajectory[1]: viewpoint Q is not in scan sq' in text
    assert 'instr_id "1_2": trajectory: empty trajectory' in text
    assert "record 3: instr_id must be a string, got int 7" not in text  # ints are accepted as ids
    assert "record 4: missing field 'instr_id'" in text
    assert 'instr_id "1_0": duplicate id' in text
    assert len(exc.value.problems) == 5


def test_start_isolated_and_missing(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, {"1_0": ["A", "S"], "1_1": ["S", "X"]})
    text = str(exc.value)
    assert "starts at A, not at the episode's start S" in text
    assert "viewpoint X is included in scan sq but has no navigable edge" in text
    with pytest.raises(
        InvalidInputError, match=r"1 of 3 episodes have no prediction \(first: 1_2\)"
    ):
        _score(tmp_path, {"1_0": ["S"], "1_1": ["S"]})
    r = _score(tmp_path, {"1_0": ["S"], "1_1": ["S"]}, subset=True)
    assert r.partial and (
        r.protocol["episodes"],
        r.protocol["n_expected"],
        r.protocol["partial"],
    ) == (2, 3, True)


def test_forms_detected_and_gzip(tmp_path: Path) -> None:
    nested = [{"instr_id": k, "trajectory": [["S"], ["A", "B"], ["G"]]} for k in ALL]
    r = _score(tmp_path, nested)
    assert r.form == "nested" and r.rows()[0]["path_length"] == 12.0
    plain = [{"instr_id": k, "trajectory": ["S", "G"]} for k in ALL]
    root = square_root(tmp_path / "root")
    gz = tmp_path / "plain.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(plain).encode()))
    r = evaluate("r2r", "val", gz, root=root)
    assert r.form == "plain" and r.metrics["SR"] == 1.0


def test_not_json_and_not_a_list(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    p = tmp_path / "broken.json"
    p.write_text('[{"instr_id": "1_0", "trajectory": [["S", 0, 0]]')
    with pytest.raises(InvalidInputError, match=r"broken.json: not valid JSON: .* line 1"):
        evaluate("r2r", "val", p, root=root)
    p.write_text('{"1_0": ["S"]}')
    with pytest.raises(
        InvalidInputError, match="expected a JSON list of predictions, got a JSON object"
    ):
        evaluate("r2r", "val", p, root=root)
    for text, kind in (("42", "number"), ("null", "null value"), ("true", "boolean")):
        p.write_text(text)
        with pytest.raises(InvalidInputError) as exc:
            evaluate("r2r", "val", p, root=root)
        assert str(exc.value).endswith(f"expected a JSON list of predictions, got a {kind}")


def test_json_lines_where_a_list_is_read_is_said_so(tmp_path: Path) -> None:
    from vlneval.io import decode_json, iter_chunks

    with pytest.raises(InvalidInputError) as exc:
        iter_chunks(b'{"a": 1}\n{"a": 2}\n', "p.json")
    assert str(exc.value) == (
        "error: p.json: not valid JSON: Extra data at line 2, column 1 (JSON lines, one record "
        "per line? this file must be one JSON list)"
    )
    with pytest.raises(InvalidInputError) as exc:
        iter_chunks(b"[1] [2]", "p.json")
    assert str(exc.value) == "error: p.json: not valid JSON: Extra data at line 1, column 5"
    # where JSON lines or one JSON object may be right, the hint would mislead: not given
    with pytest.raises(InvalidInputError) as exc:
        decode_json(b'{"a": NaN}\n{"a": 2}\n', "sdr.jsonl")
    assert str(exc.value) == "error: sdr.jsonl: not valid JSON: Extra data at line 2, column 1"


def test_many_problems_are_capped_at_twenty(tmp_path: Path) -> None:
    eps = [
        {"path_id": i, "scan": "sq", "path": ["S", "G"], "heading": 0.0, "instructions": ["x"]}
        for i in range(30)
    ]
    root = square_root(tmp_path / "root", eps)
    p = write_json(tmp_path / "p.json", preds({f"{i}_0": ["S", "Z"] for i in range(30)}))
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", p, root=root)
    lines = str(exc.value).splitlines()
    assert len(lines) == 21 and lines[-1] == (
        f"error: {p}: 10 more problems not shown (--all-errors lists them all)"
    )
    assert len(exc.value.problems) == 30


def test_completeness_is_listed_before_many_jumps(tmp_path: Path) -> None:
    """With 25 jumping episodes the 20 problems shown still say that 5 have no prediction."""
    eps = [
        {"path_id": i, "scan": "sq", "path": ["S", "G"], "heading": 0.0, "instructions": ["x"]}
        for i in range(30)
    ]
    root = square_root(tmp_path / "root", eps)
    p = write_json(tmp_path / "p.json", preds({f"{i}_0": ["S", "B"] for i in range(25)}))
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", p, root=root)
    assert [x.message[:40] for x in exc.value.problems[:2]] == [
        "5 of 30 episodes have no prediction (fir",
        "viewpoint B is not a neighbour of S in s",
    ]
    assert "5 of 30 episodes have no prediction (first: 25_0, 26_0, 27_0, 28_0, 29_0)" in str(
        exc.value
    )


def test_unknown_names_and_test_split(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S"]}))
    with pytest.raises(VLNEvalError, match="did you mean 'r2r'"):
        evaluate("r2rr", "val", p, root=root)
    with pytest.raises(VLNEvalError, match="profile r4r-google does not score task r2r"):
        evaluate("r2r", "val", p, root=root, profile="r4r-google")
    write_json(
        root / "r2r" / "R2R_test.json",
        [{"path_id": 1, "scan": "sq", "path": ["S"], "heading": 0.0, "instructions": ["x"]}],
    )
    with pytest.raises(VLNEvalError, match="cannot be scored locally"):
        evaluate("r2r", "test", p, root=root)


def test_unreachable_goal_is_reported_not_averaged(tmp_path: Path) -> None:
    from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity

    pos = dict(SQUARE, C=(20.0, 0.0, 0.0), D=(24.0, 0.0, 0.0))
    root = tmp_path / "root"
    write_json(
        root / "matterport3d" / "connectivity" / "sq_connectivity.json",
        connectivity(pos, [*SQUARE_EDGES, ("C", "D")]),
    )
    write_json(
        root / "r2r" / "R2R_val.json",
        [
            {
                "path_id": 1,
                "scan": "sq",
                "path": ["S", "G"],
                "heading": 0.0,
                "instructions": ["a", "b"],
            }
        ],
    )
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S", "G"], "1_1": ["S", "C"]}))
    r = evaluate("r2r", "val", p, root=root, profile="r2r-duet")
    assert r.metrics["NE"] == 0.0 and r.metrics["SR"] == 0.5
    assert any("NE: 1 episode(s) have an infinite value" in w for w in r.warnings)
    assert r.rows()[1]["unreachable"] == 1


@pytest.mark.parametrize("form", ["triple", "nested", "plain"])
def test_fast_and_validating_paths_agree(tmp_path: Path, form: str) -> None:
    from vlneval.graph import GraphStore
    from vlneval.tasks.common.predictions import parse_predictions
    from vlneval.tasks.r2r.format import load_r2r

    root = square_root(tmp_path / "root")
    trajs = {"1_0": ["S", "A", "A", "B"], "1_1": ["S", "G"], "9_0": ["S"], "1_3": ["S", "A"]}
    body = {
        "triple": preds(trajs),
        "nested": [{"instr_id": k, "trajectory": [[v] for v in t]} for k, t in trajs.items()],
        "plain": [{"instr_id": k, "trajectory": t} for k, t in trajs.items()],
    }[form]
    p = write_json(tmp_path / "p.json", body)
    eps = load_r2r(root / "r2r" / "R2R_val.json", max_instructions=3)
    graphs = GraphStore(root / "matterport3d" / "connectivity")
    fast = parse_predictions(p, eps, graphs)
    slow = parse_predictions(p, eps, graphs, keep_fields=("unused",))  # forces validation
    assert fast.form == slow.form == form
    assert fast.episodes.tolist() == slow.episodes.tolist() == [0, 1]
    assert fast.nodes.tolist() == slow.nodes.tolist() == [0, 1, 1, 2, 0, 3]
    assert fast.offsets.tolist() == slow.offsets.tolist()
    assert fast.warnings == slow.warnings and fast.missing == slow.missing == ["1_2"]


def test_hostile_json_gets_one_clear_error(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidInputError, match=r"^error: .*deep.json: JSON nested too deeply$"):
        evaluate("r2r", "val", deep, root=root)
    huge = tmp_path / "huge.json"
    huge.write_text('[{"instr_id": "1_0", "trajectory": [["S", ' + "9" * 5000 + ", 0]]}]")
    with pytest.raises(
        InvalidInputError,
        match=r'huge.json: instr_id "1_0": trajectory\[0\]: heading is an integer of 5,000 digits',
    ):
        evaluate("r2r", "val", huge, root=root)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"instr_id": "\xff"}]')
    with pytest.raises(InvalidInputError, match=r"bad.json: not UTF-8 text"):
        evaluate("r2r", "val", bad, root=root)
