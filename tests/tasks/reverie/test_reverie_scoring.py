"""Every REVERIE rule of spec/benchmarks.md on a tiny fixture, with values worked out by hand.

Square graph S-A-B-G-S, 4 m edges (tests/tasks/reverie/reverie_fixtures.py). Object 7 is visible from B
and G, object 9 from G only (listed at A with no view), object 8 from S.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tasks.reverie.reverie_fixtures import dump, rev_preds, reverie_root
from vlneval.errors import InvalidInputError, MissingDataError, VLNEvalError
from vlneval.evaluation import evaluate

# instr_id: (trajectory, predObjId)
HAND = {
    "1_7_0": (["S", "A", "B"], 7),  # stops at B: 7 visible there (not the goal G) -> SR 1
    "1_7_1": (["S", "G"], "8"),  # SR 1, wrong object
    "2_9_0": (["S", "A"], 9),  # 9 listed at A with no view -> SR 0; RGS 1 regardless
    "2_9_1": (["S", "G", "S"], None),  # saw 9 at G, came back: SR 0, OSR 1; null object
}


def _score(tmp: Path, entries=HAND, *, profile=None, version="v1", field="predObjId", **kw):  # type: ignore[no-untyped-def]
    root = reverie_root(
        tmp / "root", layout=kw.pop("layout", "folder"), v2_boxes=kw.pop("v2_boxes", False)
    )
    p = dump(
        tmp / "preds.json", rev_preds(entries, field) if isinstance(entries, dict) else entries
    )
    opts = {"data_version": version} if version else {}
    opts.update(kw.pop("options", {}))
    return evaluate("reverie", "val", p, profile=profile, root=root, options=opts, **kw)


def test_hand_values_official_profile(tmp_path: Path) -> None:
    r = _score(tmp_path)
    rows = {row["instr_id"]: row for row in r.rows()}
    # 1_7_0: TL 8, ℓ = d(S, G) = 4 -> SPL = 4 / 8; RGS 1 -> RGSPL 0.5
    assert rows["1_7_0"]["success"] == 1.0 and rows["1_7_0"]["path_length"] == 8.0
    assert rows["1_7_0"]["shortest_length"] == 4.0 and rows["1_7_0"]["spl"] == 0.5
    assert rows["1_7_0"]["grounding_success"] == 1.0 and rows["1_7_0"]["grounding_spl"] == 0.5
    assert rows["1_7_1"]["spl"] == 1.0 and rows["1_7_1"]["grounding_success"] == 0.0
    assert rows["2_9_0"]["success"] == 0.0 and rows["2_9_0"]["oracle_success"] == 0.0
    assert rows["2_9_0"]["grounding_success"] == 1.0 and rows["2_9_0"]["grounding_spl"] == 1.0
    assert rows["2_9_1"]["success"] == 0.0 and rows["2_9_1"]["oracle_success"] == 1.0
    assert rows["2_9_1"]["predicted_object"] is None and rows["2_9_1"]["target_object"] == "9"
    m = r.metrics
    assert list(m) == ["TL", "OSR", "SR", "SPL", "RGS", "RGSPL", "J"]  # no NE
    assert m == {
        "TL": 6.0, "OSR": 0.75, "SR": 0.5, "SPL": 0.375, "RGS": 0.5, "RGSPL": 0.375, "J": 0.25
    }  # fmt: skip
    assert all(c["holds"] for c in r.to_dict()["checks"])
    assert any("null (no object chosen)" in w for w in r.warnings)
    assert r.data_version == "v1"
    assert r.protocol["object_boxes"]["version"] == "v1"
    assert "visible" in r.protocol["scoring"]["comparison"]


def test_no_dtw_is_computed_for_metrics_reverie_never_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vlneval.metrics import _kernels

    def refused(*args: object) -> None:
        raise AssertionError("DTW computed for a profile that reports no path fidelity")

    monkeypatch.setattr(_kernels, "dtw_batch", refused)
    for profile, spl in (("reverie", 0.375), ("reverie-duet", 0.5)):
        r = _score(tmp_path / profile, profile=profile)
        assert r.metrics["SPL"] == spl and r.metrics["J"] == 0.25
        assert not {"dtw", "ndtw", "sdtw", "cls"} & set(r.per_episode)


def test_joint_success_column(tmp_path: Path) -> None:
    rows = {row["instr_id"]: row for row in _score(tmp_path).rows()}
    assert [rows[k]["joint_success"] for k in HAND] == [1.0, 0.0, 0.0, 0.0]
    r = _score(tmp_path / "b")
    assert r.metrics["J"] == 0.25  # the column's mean, in the summary and the table
    from vlneval.reports.terminal import metric_cell

    assert metric_cell(r.to_dict(), "J") == "25.00"


def test_duet_profile_uses_reference_length_and_its_field(tmp_path: Path) -> None:
    r = _score(tmp_path, profile="reverie-duet", field="pred_objid")
    rows = {row["instr_id"]: row for row in r.rows()}
    # ℓ = L(S, A, B, G) = 12 for 1_7: SPL = 12 / max(12, 8) = 1; 2_9: ℓ = L(S, G) = 4
    assert rows["1_7_0"]["spl"] == 1.0 and rows["1_7_0"]["grounding_spl"] == 1.0
    assert rows["2_9_0"]["grounding_spl"] == 1.0
    assert r.metrics["SPL"] == 0.5  # (1 + 1 + 0 + 0) / 4
    assert not any("not the official field" in w for w in r.warnings)


def test_pred_objid_read_with_a_warning(tmp_path: Path) -> None:
    r = _score(tmp_path, field="pred_objid")
    assert r.metrics["RGS"] == 0.5
    assert any("'pred_objid', not the official field name 'predObjId'" in w for w in r.warnings)


def test_rgs_compares_ids_as_strings(tmp_path: Path) -> None:
    entries = {k: (v, str(o) if o is not None else "x") for k, (v, o) in HAND.items()}
    assert _score(tmp_path, entries).metrics["RGS"] == 0.5


def test_navigation_only_file_makes_rgs_unavailable(tmp_path: Path) -> None:
    r = _score(tmp_path, {k: (v, ...) for k, (v, _) in HAND.items()})
    assert r.metrics["RGS"] is None and r.metrics["RGSPL"] is None
    assert "predObjId" in r.unavailable["RGS"]
    assert r.metrics["J"] is None and r.unavailable["J"] == r.unavailable["RGS"]
    assert r.metrics["SR"] == 0.5


def test_missing_pred_obj_id_in_some_records_is_one_clear_error(tmp_path: Path) -> None:
    entries = dict(HAND)
    entries["2_9_0"] = (["S", "A"], ...)
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, entries)
    assert len(exc.value.problems) == 1
    text = str(exc.value)
    assert 'instr_id "2_9_0"' in text and "missing field 'predObjId' (3 of 4 records" in text


def test_non_integer_object_id_is_named(tmp_path: Path) -> None:
    entries = dict(HAND)
    entries["1_7_1"] = (["S", "G"], 7.0)
    with pytest.raises(
        InvalidInputError, match=r'instr_id "1_7_1": predObjId: predObjId must be an int'
    ):
        _score(tmp_path, entries)


@pytest.mark.parametrize(
    ("rename", "needle"),
    [
        ({"instr_id": "instrId"}, "records need the field 'instr_id'"),
        ({"trajectory": "traj"}, "did you mean to name 'traj' 'trajectory'?"),
        ({"predObjId": "predObjID"}, "field 'predObjID' is not a REVERIE field"),
    ],
)
def test_wrong_key_names_give_one_error(
    tmp_path: Path, rename: dict[str, str], needle: str
) -> None:
    records = [{rename.get(k, k): v for k, v in rec.items()} for rec in rev_preds(HAND)]
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, records)
    assert len(exc.value.problems) == 1 and needle in str(exc.value)


def test_start_is_checked_and_jumps_are_scored(tmp_path: Path) -> None:
    bad = dict(HAND)
    bad["1_7_0"] = (["A", "B"], 7)
    with pytest.raises(
        InvalidInputError, match=r'instr_id "1_7_0": trajectory\[0\]: the trajectory starts at A'
    ):
        _score(tmp_path, bad)
    jump = dict(HAND)
    jump["1_7_0"] = (["S", "B"], 7)  # not neighbours: the script has no adjacency check
    rows = {row["instr_id"]: row for row in _score(tmp_path, jump).rows()}
    assert rows["1_7_0"]["path_length"] == 8.0 and rows["1_7_0"]["jumps"] == 1


def test_completeness_and_subset(tmp_path: Path) -> None:
    part = {k: HAND[k] for k in ("1_7_0", "1_7_1")}
    with pytest.raises(InvalidInputError, match="2 of 4 episodes have no prediction"):
        _score(tmp_path, part)
    r = _score(tmp_path, part, subset=True)
    assert r.partial and (
        r.protocol["episodes"],
        r.protocol["n_expected"],
        r.protocol["partial"],
    ) == (2, 4, True)
    assert r.metrics["SR"] == 1.0


def test_zero_length_episode_follows_the_cvdn_rule(tmp_path: Path) -> None:
    root = reverie_root(tmp_path / "root")
    dump(root / "reverie" / "REVERIE_val.json", [
        {"id": "5_7", "objId": 7, "scan": "sq", "path": ["G"], "heading": 0.0, "instructions": ["x"]}
    ])  # fmt: skip
    p = dump(tmp_path / "p.json", rev_preds({"5_7_0": (["G"], 7)}))
    r = evaluate("reverie", "val", p, root=root, options={"data_version": "v1"})
    assert r.rows()[0]["spl"] == 1.0 and r.rows()[0]["grounding_spl"] == 1.0


def test_test_split_cannot_be_scored(tmp_path: Path) -> None:
    root = reverie_root(tmp_path / "root")
    p = dump(tmp_path / "p.json", rev_preds({"3_0": (["S"], 1)}))
    with pytest.raises(InvalidInputError, match="has no goals .* cannot be scored locally"):
        evaluate("reverie", "test", p, root=root)


def test_data_versions_and_box_fallback(tmp_path: Path) -> None:
    v2 = {**HAND, "2_9_0": (["S", "A", "B", "G"], 9)}
    r = _score(tmp_path, v2, version=None, profile="reverie-duet")  # default: v2
    assert r.data_version == "v2"
    assert r.rows()[2]["shortest_length"] == 12.0  # v2 reroutes 2_9 through A and B
    assert any("scoring v2 episodes with the v1 boxes" in w for w in r.warnings)
    assert r.protocol["object_boxes"]["version"] == "v1"
    r = _score(tmp_path / "b", v2, version="v2", v2_boxes=True)
    assert r.protocol["object_boxes"]["version"] == "v2"
    assert not any("v1 boxes" in w for w in r.warnings)
    with pytest.raises(VLNEvalError, match="unknown reverie data version 'v3'"):
        _score(tmp_path / "c", version="v3")


@pytest.mark.parametrize("layout", ["folder", "tar.gz", "json"])
def test_box_layouts_agree(tmp_path: Path, layout: str) -> None:
    m = _score(tmp_path, layout=layout).metrics
    assert m == {
        "TL": 6.0, "OSR": 0.75, "SR": 0.5, "SPL": 0.375, "RGS": 0.5, "RGSPL": 0.375, "J": 0.25
    }  # fmt: skip


def test_explicit_boxes_and_missing_boxes(tmp_path: Path) -> None:
    root = reverie_root(tmp_path / "root")
    p = dump(tmp_path / "p.json", rev_preds(HAND))
    bbox = root / "reverie" / "BBox"
    r = evaluate(
        "reverie", "val", p, root=root, options={"data_version": "v1", "bboxes": str(bbox)}
    )
    assert r.protocol["object_boxes"]["version"] == "as given"
    for f in bbox.iterdir():
        f.unlink()
    bbox.rmdir()
    with pytest.raises(MissingDataError, match="REVERIE needs its object boxes"):
        evaluate("reverie", "val", p, root=root, options={"data_version": "v1"})


def test_unknown_option_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(
        VLNEvalError,
        match=re.escape(
            "option angle_units (--angle-units) does not apply to task reverie (its options: data_version, bboxes)"
        ),
    ):
        _score(tmp_path, options={"angle_units": "radians"})


def test_target_not_seen_from_goal_is_reported(tmp_path: Path) -> None:
    root = reverie_root(tmp_path / "root")
    dump(root / "reverie" / "REVERIE_val.json", [
        {"id": "6_8", "objId": 8, "scan": "sq", "path": ["S", "G"], "heading": 0.0, "instructions": ["x"]},
        {"id": "7_99", "objId": 99, "scan": "sq", "path": ["S", "G"], "heading": 0.0, "instructions": ["y"]},
    ])  # fmt: skip
    p = dump(tmp_path / "p.json", rev_preds({"6_8_0": (["S", "G"], 8), "7_99_0": (["S"], 1)}))
    w = evaluate("reverie", "val", p, root=root, options={"data_version": "v1"}).warnings
    assert any("1 episode(s) have a target object that no viewpoint sees" in x for x in w)
    assert any(
        "1 episode(s) have a target object that is not visible from the annotated goal" in x
        for x in w
    )


def test_duplicates_are_errors_and_unknown_ids_warnings(tmp_path: Path) -> None:
    # the official scorer silently keeps the first of two answers; a second answer is a mistake
    dup = rev_preds(HAND) + rev_preds({"1_7_0": (["S", "G"], 7)})
    with pytest.raises(InvalidInputError, match='instr_id "1_7_0": duplicate id'):
        _score(tmp_path, dup)
    extra = rev_preds(HAND) + rev_preds({"9_9_0": (["S"], 1)})
    r = _score(tmp_path, extra)  # the official scorer ignores unknown ids: a warning here
    assert any("1 prediction(s) with ids not in the split were ignored" in w for w in r.warnings)


def test_repeated_viewpoints_counted_once(tmp_path: Path) -> None:
    """Turning in place repeats a viewpoint: the rule flags carry the metric kernels' count
    (the same value the rule checks count on their own), TL is unchanged."""
    entries = dict(HAND)
    entries["1_7_0"] = (["S", "S", "A", "A", "A", "B"], 7)
    r = _score(tmp_path, entries)
    rows = {row["instr_id"]: row for row in r.rows()}
    assert rows["1_7_0"]["repeated_viewpoints"] == 3 and rows["1_7_0"]["path_length"] == 8.0
    assert rows["1_7_1"]["repeated_viewpoints"] == 0 and rows["2_9_1"]["repeated_viewpoints"] == 0
    assert r.metrics == {"TL": 6.0, "OSR": 0.75, "SR": 0.5, "SPL": 0.375, "RGS": 0.5, "RGSPL": 0.375, "J": 0.25}  # fmt: skip


def test_a_numpy_object_id_is_the_int_it_holds(tmp_path: Path) -> None:
    """An agent's ``np.int64`` predObjId grounds as the int (the shared reader keeps it so)."""
    import numpy as np

    root = reverie_root(tmp_path / "root")
    records = rev_preds(HAND)
    want = evaluate("reverie", "val", records, root=root, options={"data_version": "v1"})
    for rec in records:
        if isinstance(rec["predObjId"], int):
            rec["predObjId"] = np.int64(rec["predObjId"])
    got = evaluate("reverie", "val", records, root=root, options={"data_version": "v1"})
    assert got.metrics == want.metrics and got.metrics["RGS"] == 0.5
