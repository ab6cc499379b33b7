"""Every SOON rule of spec/benchmarks.md on a hand-built fixture in the official schema.

Distances on the fixture graph (tests/tasks/soon/soon_fixtures.py): d(S,A) = d(A,B) = d(B,G) = d(S,G) = 4,
d(G,N) = 2, d(S,B) = d(A,G) = 8, d(S,N) = 6.

Hand-worked episodes (profile ``soon``):

| episode | path    | goal g  | NE | OE | SR | OSR | TL | ℓ | SPL | det | GP |
|---------|---------|---------|----|----|----|-----|----|---|-----|-----|----|
| 1#0     | S,A,B   | B (switch) | 0 | 8 | 1 | 0 | 8 | 8 | 1 | 1 | 8 |
| 1#1     | A,S     | B       | 8  | 4  | 0  | 0   | 4  | 4 | 0   | 0   | −4 |
| 2#0     | S,G     | G       | 0  | 0  | 1  | 1   | 4  | 4 | 1   | 0 (wrap: 1) | 4 |
| 3#0     | S,G     | G       | 0  | 0  | 1  | 1   | 4  | 4 | 1   | 0 (wrap: 1) | 4 |
| 4#0     | S,G,N   | G       | 2  | 0  | 1  | 1   | 6  | 4 | 2/3 | 0   | 2  |

1#0: the final B holds a box, so the goal switches from G to B; the visited viewpoint nearest
the *original* goal G is S (d = 4, the first minimum), and OE = d(S, B) = 8: OSR 0 < SR 1.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from tests.tasks.soon.soon_fixtures import EPISODES, HAND, dump, entry, soon_preds, soon_root
from vlneval.errors import InvalidInputError, VLNEvalError
from vlneval.evaluation import evaluate


def _score(tmp: Path, records=None, *, profile=None, episodes=None, **kw):  # type: ignore[no-untyped-def]
    root = soon_root(tmp / "root", episodes)
    p = dump(tmp / "preds.json", soon_preds() if records is None else records)
    return evaluate("soon", "val", p, profile=profile, root=root, **kw)


def test_hand_values_official(tmp_path: Path) -> None:
    r = _score(tmp_path)
    rows = {row["episode_id"]: row for row in r.rows()}
    e = rows["1#0"]
    assert (
        e["goal_switched"],
        e["nav_error"],
        e["oracle_error"],
        e["success"],
        e["oracle_success"],
    ) == (1, 0.0, 8.0, 1.0, 0.0)
    assert (e["path_length"], e["shortest_length"], e["spl"], e["det_success"], e["det_spl"]) == (
        8.0,
        8.0,
        1.0,
        1.0,
        1.0,
    )
    assert e["goal_progress"] == 8.0 and e["instr_id"] == "1" and e["start_index"] == 0
    e = rows["1#1"]
    assert (e["nav_error"], e["oracle_error"], e["oracle_success"], e["goal_progress"]) == (
        8.0,
        4.0,
        0.0,
        -4.0,
    )
    assert rows["4#0"]["spl"] == pytest.approx(2 / 3) and rows["4#0"]["goal_progress"] == 2.0
    assert [rows[k]["det_success"] for k in ("2#0", "3#0")] == [0.0, 0.0]
    m = r.metrics
    assert list(m) == ["TL", "NE", "OSR", "SR", "SPL", "det_SR", "det_SPL", "GP", "J"]
    assert m["TL"] == pytest.approx(5.2) and m["NE"] == pytest.approx(2.0)
    assert m["SR"] == pytest.approx(0.8) and m["OSR"] == pytest.approx(0.6)
    assert m["SPL"] == pytest.approx((3 + 2 / 3) / 5)
    assert m["det_SR"] == pytest.approx(0.2) and m["det_SPL"] == pytest.approx(0.2)
    assert m["GP"] == pytest.approx(2.8)
    assert m["J"] == pytest.approx(0.2)  # joint success: only 1#0 both navigates and localises


def test_osr_below_sr_is_reported_as_the_scripts_quirk(tmp_path: Path) -> None:
    s = _score(tmp_path).to_dict()
    check = next(c for c in s["checks"] if c["name"] == "SR <= OSR")
    assert not check["holds"] and "quirk" in check
    assert not any("consistency check failed" in w for w in s["warnings"])


def test_wrap_profile_fixes_the_seam(tmp_path: Path) -> None:
    r = _score(tmp_path, profile="soon-wrap")
    rows = {row["episode_id"]: row for row in r.rows()}
    assert [rows[k]["det_success"] for k in ("1#0", "2#0", "3#0", "4#0")] == [1.0, 1.0, 1.0, 0.0]
    assert r.metrics["det_SR"] == pytest.approx(0.6)
    assert r.metrics["det_SPL"] == pytest.approx(0.6)
    assert r.metrics["SR"] == pytest.approx(0.8)  # navigation is unchanged
    assert r.protocol["heading_wrap"] is True


def test_official_tests_the_wrong_side_of_a_seam_box(tmp_path: Path) -> None:
    records = soon_preds({**HAND, "2": [entry(["S", "G"], 0.5, 0.5)]})
    official = {r["episode_id"]: r for r in _score(tmp_path, records).rows()}
    fixed = {r["episode_id"]: r for r in _score(tmp_path, records, profile="soon-wrap").rows()}
    assert official["2#0"]["det_success"] == 1.0 and fixed["2#0"]["det_success"] == 0.0


def test_localisation_is_strict_and_only_at_the_final_box(tmp_path: Path) -> None:
    on_edge = {**HAND, "4": [entry(["S", "G"], 0.4, 0.5)]}  # on the left edge of the box at G
    assert _score(tmp_path, soon_preds(on_edge)).rows()[4]["det_success"] == 0.0
    inside = {**HAND, "4": [entry(["S", "G"], 0.45, 0.5)]}
    assert _score(tmp_path, soon_preds(inside)).rows()[4]["det_success"] == 1.0
    # 4#0 of HAND ends at N (no box): a point inside G's box does not count
    assert _score(tmp_path).rows()[4]["det_success"] == 0.0


def test_radians_are_converted_as_duet_does(tmp_path: Path) -> None:
    rad = {
        "1": [entry(["S", "A", "B"], math.pi, 0.0), entry(["A", "S"], math.pi, 0.0)],
        "2": [entry(["S", "G"], -0.06, 0.0)],  # -0.06 rad -> 0.99045: outside unless wrapped
        "3": [entry(["S", "G"], 0.06, 0.0)],
        "4": [entry(["S", "G", "N"], math.pi, 0.0)],
    }
    r = _score(tmp_path, soon_preds(rad), options={"angle_units": "radians"})
    assert r.metrics["det_SR"] == pytest.approx(0.2)
    assert r.rows()[2]["heading"] == pytest.approx(1 - 0.06 / (2 * math.pi))
    assert "VLN-DUET" in r.protocol["angle_units"]
    r = _score(tmp_path, soon_preds(rad))  # the same file read as normalised: warned
    assert any("outside [0, 1]" in w and "--angle-units radians" in w for w in r.warnings)


def test_nested_and_plain_paths(tmp_path: Path) -> None:
    nested = [{"instr_id": k, "trajectory": [
        {"path": [[v] for v in [s[0] for s in e["path"]]], "obj_heading": 0.5, "obj_elevation": 0.5}
        for e in v]} for k, v in HAND.items()]  # fmt: skip
    r = _score(tmp_path, nested)
    assert r.to_dict()["trajectory_form"] == "nested" and r.metrics["SR"] == pytest.approx(0.8)


def test_trajectory_as_dict_is_one_clear_error(tmp_path: Path) -> None:
    records = soon_preds()
    records[0]["trajectory"] = HAND["1"][0]
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, records)
    assert len(exc.value.problems) == 1
    text = str(exc.value)
    assert (
        'instr_id "1": trajectory: trajectory must be a list with one entry per start path' in text
    )
    assert "wrapped in a list" in text


def test_entries_are_matched_by_start(tmp_path: Path) -> None:
    swapped = soon_preds({**HAND, "1": [HAND["1"][1], HAND["1"][0]]})
    assert _score(tmp_path, swapped).metrics == _score(tmp_path).metrics
    wrong = soon_preds({**HAND, "2": [entry(["A", "B", "G"], 0.5, 0.5)]})
    with pytest.raises(
        InvalidInputError,
        match=r'instr_id "2": trajectory\[0\].path\[0\]: starts at A, which is not a start',
    ):
        _score(tmp_path, wrong)
    twice = soon_preds({**HAND, "2": [entry(["S", "G"], 0.5, 0.5)] * 2})
    with pytest.raises(InvalidInputError, match=r"a second prediction for the start S"):
        _score(tmp_path, twice)


def test_bad_entries_are_named(tmp_path: Path) -> None:
    bad = soon_preds()
    del bad[1]["trajectory"][0]["obj_heading"]
    bad[2]["trajectory"][0]["obj_elevation"] = ["up"]
    bad[3]["trajectory"][0]["path"][1] = ["Q", 0.0, 0.0]
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, bad)
    text = str(exc.value)
    assert "instr_id \"2\": trajectory[0]: missing field 'obj_heading'" in text
    assert (
        'instr_id "3": trajectory[0].obj_elevation: obj_elevation must be a finite number' in text
    )
    assert 'instr_id "4": trajectory[0].path[1]' in text and "Q" in text


def test_duplicates_unknown_ids_completeness(tmp_path: Path) -> None:
    dup = soon_preds() + soon_preds({"4": HAND["4"]})
    with pytest.raises(InvalidInputError, match='instr_id "4": duplicate id'):
        _score(tmp_path, dup)
    with pytest.raises(InvalidInputError) as exc:  # 5 copies: one problem, with its count
        _score(tmp_path, soon_preds() + soon_preds({"4": HAND["4"]}) * 5)
    assert [p.message for p in exc.value.problems] == [
        "duplicate id: the file has 6 predictions for it"
    ] and exc.value.problems[0].episode == 'instr_id "4"'
    r = _score(tmp_path, soon_preds() + soon_preds({"77": HAND["4"]}))
    assert any("1 prediction(s) with ids not in the split were ignored" in w for w in r.warnings)
    part = soon_preds({"1": HAND["1"][:1], "2": HAND["2"]})
    with pytest.raises(InvalidInputError, match="3 of 5 episodes have no prediction"):
        _score(tmp_path, part)
    r = _score(tmp_path, part, subset=True)
    assert r.partial and r.n_episodes == 2 and r.n_expected == 5


def test_episode_file_rules(tmp_path: Path) -> None:
    no_id = [{k: v for k, v in rec.items() if k != "instr_id"} for rec in EPISODES]
    r = _score(
        tmp_path,
        soon_preds({"0": HAND["1"], "1": HAND["2"], "2": HAND["3"], "3": HAND["4"]}),
        episodes=no_id,
    )
    assert r.metrics["SR"] == pytest.approx(0.8)  # ids are the records' positions
    bad = [dict(EPISODES[0], bboxes=[{"image_id": "G", "target": {"left_top": {"heading": 1.0}}}])]
    with pytest.raises(
        InvalidInputError, match=r"record 0.bboxes\[0\].target.left_top: left_top must be"
    ):
        _score(tmp_path / "b", episodes=bad)
    with pytest.raises(
        InvalidInputError, match=r"record 1: duplicate instr_id 1 \(also record 0\)"
    ):
        _score(tmp_path / "c", episodes=[EPISODES[0], EPISODES[0]])


def test_hidden_test_split_and_options(tmp_path: Path) -> None:
    root = soon_root(tmp_path / "root")
    p = dump(tmp_path / "p.json", soon_preds({"9": [entry(["S"], 0.5, 0.5)]}))
    with pytest.raises(InvalidInputError, match="has no goals .* cannot be scored locally"):
        evaluate("soon", "test", p, root=root)
    with pytest.raises(
        VLNEvalError,
        match=re.escape(
            "option data_version (--data-version) does not apply to task soon (its options: angle_units)"
        ),
    ):
        _score(tmp_path, options={"data_version": "v2"})
    with pytest.raises(VLNEvalError, match="unknown SOON angle unit 'degrees'"):
        _score(tmp_path, options={"angle_units": "degrees"})


def test_spl_floor_quirk_when_starting_at_the_goal(tmp_path: Path) -> None:
    # start = goal (a box viewpoint) and stop at once: SR 1 and det 1, but ℓ = TL = 0 and the
    # script's floor max(ℓ, TL, 0.01) makes SPL = 0 · ... = 0 and det SPL 0 (reproduced)
    eps = [dict(EPISODES[3], path=[["G"]])]
    r = _score(tmp_path, soon_preds({"4": [entry(["G"], 0.5, 0.5)]}), episodes=eps)
    row = r.rows()[0]
    assert (row["success"], row["det_success"], row["spl"], row["det_spl"]) == (1.0, 1.0, 0.0, 0.0)
    assert row["goal_progress"] == 0.0 and row["path_length"] == 0.0


def test_the_completeness_problem_names_an_id_not_in_the_split(tmp_path: Path) -> None:
    part = soon_preds({"1": HAND["1"], "2": HAND["2"]}) + soon_preds({"77": HAND["4"]})
    part[-1]["instr_id"] = 77  # a number: named as the file writes it
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, part)
    assert "; 1 record has an id not in the split: 77 (an id of another type" in str(exc.value)


def test_a_long_unknown_viewpoint_is_clipped(tmp_path: Path) -> None:
    bad = soon_preds()
    bad[1]["trajectory"][0]["path"][1][0] = "x" * 100_000
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, bad)
    assert str(exc.value).endswith(
        f'instr_id "2": trajectory[0].path[1]: viewpoint {"x" * 80}… (100,000 characters) '
        "is not in scan sq"
    )


def test_a_null_trajectory_is_not_called_missing_an_unreadable_id_is(tmp_path: Path) -> None:
    """As R2R: a record of an id that cannot be read predicts no episode (completeness, first);
    a record of a known id with a broken trajectory is only its own problem."""
    bad = soon_preds()
    bad[0]["instr_id"] = [1]
    bad[1]["trajectory"] = None
    with pytest.raises(InvalidInputError) as exc:
        _score(tmp_path, bad)
    text = str(exc.value)
    assert len(exc.value.problems) == 3 and exc.value.problems[0].message.startswith(
        "2 of 5 episodes have no prediction (first: 1#0, 1#1); profile soon requires all of them"
    )
    assert "record 0: instr_id must be a string, got list [1]" in text
    assert (
        'instr_id "2": trajectory: trajectory must be a non-empty list (one entry per start '
        "path), got null" in text
    )


@pytest.mark.parametrize(("profile", "rate"), [("soon", 0.2), ("soon-wrap", 0.6)])
def test_joint_success_is_det_success_by_the_goal_switch(
    tmp_path: Path, profile: str, rate: float
) -> None:
    """J = S_nav · S_loc per episode (spec/metrics.md). SOON tests localisation only at the box
    of the final viewpoint, which then becomes the goal (NE = 0 < 3): det success implies
    navigation success, so J equals det_SR on every SOON submission (the official scorer and
    VLN-DUET count det success so; neither reports J). J is neither SR nor SR · det_SR.

    Hand values (see the module table): 1#0 ends on B, 4 m from the annotated goal G, and
    localises: the switch makes it a success (NE 0), J 1. 2#0 and 3#0 stop on G's seam box
    with the point outside it (officially): SR 1, det 0, J 0 (wrap: inside, J 1). 4#0 stops on
    N, 2 m from G: SR 1, but N holds no box, so det 0 (its point would lie inside G's), J 0.
    """
    r = _score(tmp_path, profile=profile)
    rows = {row["episode_id"]: row for row in r.rows()}
    got = {k: (row["success"], row["det_success"], row["joint_success"]) for k, row in rows.items()}
    seam = (1.0, 1.0, 1.0) if profile == "soon-wrap" else (1.0, 0.0, 0.0)
    assert got == {"1#0": (1.0, 1.0, 1.0), "1#1": (0.0, 0.0, 0.0), "2#0": seam, "3#0": seam,
                   "4#0": (1.0, 0.0, 0.0)}  # fmt: skip
    m = r.metrics
    assert m["J"] == pytest.approx(rate) and m["det_SR"] == pytest.approx(rate)
    assert m["SR"] == pytest.approx(0.8) and m["SR"] * m["det_SR"] == pytest.approx(0.8 * rate)
    assert m["J"] != pytest.approx(
        m["SR"] * m["det_SR"]
    )  # the rate of both, not a product of rates
