"""Touchdown navigation (TC, SPD, SED) and SDR on the hand-worked fixture, every profile."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.tasks.touchdown.fixture import RUNS, SDR, make_root, nav, write
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _nav(tmp: Path, runs: Any = None, profile: str = "touchdown", **kw: Any):  # type: ignore[no-untyped-def]
    root = make_root(tmp / "root")
    return evaluate("touchdown", "dev", nav(tmp, runs), profile=profile, root=root, **kw)


def _rows(r: Any) -> dict[str, dict[str, Any]]:
    return {str(row[r.episodes.id_field]): row for row in r.rows()}


def test_counts_and_flags_are_integers_in_the_per_episode_rows(tmp_path: Path) -> None:
    row = _rows(_nav(tmp_path))["3"]
    counts = {c: row[c] for c in ("task_completion", "spd", "edit_distance", "moves", "steps")}
    assert counts == {"task_completion": 1, "spd": 0, "edit_distance": 2, "moves": 2, "steps": 2}
    assert all(type(v) is int for v in counts.values())
    assert (row["sed"], type(row["sed"])) == (0.5, float)


def test_navigation_hand_values(tmp_path: Path) -> None:
    r = _nav(tmp_path)
    rows = _rows(r)
    assert (rows["1"]["task_completion"], rows["1"]["spd"], rows["1"]["sed"]) == (1, 0, 1)
    # 2 ends on p3, two hops from the goal p5 (p3-p2-p5): no completion, no SED; the repeat of p1
    # (turning in place) is a step but not a move.
    assert (rows["2"]["task_completion"], rows["2"]["spd"], rows["2"]["sed"]) == (0, 2, 0)
    assert (
        rows["2"]["steps"] == 4
        and rows["2"]["moves"] == 3
        and rows["2"]["repeated_viewpoints"] == 1
    )
    # 3 takes p3 p4 p6 (p4 -> p6 runs against the one-way link p6 -> p4: one hop either way) and
    # ends on the goal: lev(p3 p4 p6, p3 p2 p5 p6) = 2 (substitute, insert) -> SED 1 - 2/4.
    assert (rows["3"]["task_completion"], rows["3"]["spd"], rows["3"]["sed"]) == (1, 0, 0.5)
    assert rows["3"]["edit_distance"] == 2
    # 3 starts on p3, where 2's trajectory ends: that is no repeat of 3's (counted per trajectory)
    assert (rows["3"]["steps"], rows["3"]["moves"], rows["3"]["repeated_viewpoints"]) == (2, 2, 0)
    m = r.metrics
    assert m == {"TC": pytest.approx(2 / 3), "SPD": pytest.approx(2 / 3), "SED": pytest.approx(0.5)}
    assert r.units == {"SPD": "hops"}
    assert r.data_version == "unseen" and r.to_dict()["profile_rules"]["name"] == "touchdown"
    assert {c["name"]: c["holds"] for c in r.to_dict()["checks"]}["SED <= TC"]
    assert r.protocol["scoring"]["edit_distance"] == "Levenshtein"


def test_one_hop_from_the_goal_completes(tmp_path: Path) -> None:
    runs = {**RUNS, 2: ["p0", "p1", "p2"]}  # stops next to p5
    row = _rows(_nav(tmp_path, runs))["2"]
    assert (row["task_completion"], row["spd"], row["sed"]) == (
        1,
        1,
        0.75,
    )  # lev 1 over 4 panoramas


def test_unreachable_goal(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    (root / "touchdown" / "touchdown_unseen_split" / "dev.json").write_text(
        '{"route_id": 1, "route_panoids": ["p0", "p1", "z"], "start_heading": 0}\n'
    )
    r = evaluate("touchdown", "dev", nav(tmp_path, {1: ["p0", "p1"]}), root=root)
    row = _rows(r)["1"]
    assert math.isinf(row["spd"]) and row["unreachable"] == 1 and row["task_completion"] == 0
    assert r.metrics["SPD"] is None
    assert r.unavailable["SPD"] == (
        "the 1 episode has an infinite SPD (a viewpoint of the trajectory has no path to the goal)"
    )


def test_graph_states_and_plain_ids_score_alike(tmp_path: Path) -> None:
    states = {k: [[p, 90, 0.0] for p in v] for k, v in RUNS.items()}
    a = _nav(tmp_path / "a")
    b = _nav(tmp_path / "b", states)
    assert a.metrics == b.metrics
    assert a.to_dict()["trajectory_form"] == "plain" and b.to_dict()["trajectory_form"] == "triple"


def test_vlnt_profile_uses_optimal_string_alignment_and_scores_jumps(tmp_path: Path) -> None:
    """p0 p2 p1 p3 p4 swaps two panoramas of route 1 (and jumps): Levenshtein 2, OSA 1."""
    runs = {**RUNS, 1: ["p0", "p2", "p1", "p3", "p4"]}
    r = _nav(tmp_path, runs, profile="touchdown-vlnt")
    row = _rows(r)["1"]
    assert row["sed"] == pytest.approx(0.8) and row["edit_distance"] == 1 and row["jumps"] == 2
    assert r.protocol["scoring"]["edit_distance"] == "optimal string alignment"
    with pytest.raises(
        Exception, match="route_id 1: trajectory\\[1\\]: panorama p2 is not linked to p0"
    ):
        _nav(tmp_path / "b", runs, profile="touchdown")


def test_vlnt_profile_keeps_repeats_as_the_script_does(tmp_path: Path) -> None:
    """map2seq's ``_eva_metrics`` takes ``1 - osa(P, R) / max(|P|, |R|)`` of the list as written:
    route 1 with its stop step logged (p4 twice) is osa 1 over 6, route 3 with its start twice
    osa 1 over 5. Profile touchdown removes the repeats first: both follow their route, SED 1."""
    runs = {**RUNS, 1: [*RUNS[1], "p4"], 3: ["p3", "p3", "p2", "p5", "p6"]}
    vlnt, plain = (
        _rows(_nav(tmp_path / p, runs, profile=p)) for p in ("touchdown-vlnt", "touchdown")
    )
    assert (vlnt["1"]["sed"], vlnt["1"]["edit_distance"]) == (1 - 1 / 6, 1)
    assert (vlnt["3"]["sed"], vlnt["3"]["edit_distance"]) == (1 - 1 / 5, 1)
    assert (plain["1"]["sed"], plain["3"]["sed"]) == (1.0, 1.0)
    assert vlnt["1"]["repeated_viewpoints"] == 1  # still counted, only not removed


def test_subset_is_partial(tmp_path: Path) -> None:
    r = _nav(tmp_path, {1: RUNS[1]}, subset=True)
    assert r.partial and (
        r.protocol["episodes"],
        r.protocol["n_expected"],
        r.protocol["partial"],
    ) == (1, 3, True)
    assert r.metrics["SED"] == 1.0


def _sdr(tmp: Path, profile: str = "touchdown", body: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
    root = make_root(tmp / "root")
    return evaluate(
        "touchdown-sdr",
        "dev",
        write(tmp, SDR if body is None else body),
        profile=profile,
        root=root,
        **kw,
    )


def test_sdr_official_no_wrap(tmp_path: Path) -> None:
    r = _sdr(tmp_path)
    rows = _rows(r)
    assert list(rows) == ["1_main", "1_post", "2_main"] and r.episodes.id_field == "sdr_id"
    assert rows["1_main"]["sdr_distance"] == pytest.approx(30.0)
    assert rows["1_post"]["sdr_distance"] == pytest.approx(
        3660 - 36.8
    )  # across the seam, unwrapped
    assert rows["2_main"]["sdr_distance"] == 80.0 and rows["2_main"]["sdr_acc80"] == 0  # strict <
    m = r.metrics
    assert m["SDR@40"] == pytest.approx(1 / 3) and m["SDR@80"] == pytest.approx(1 / 3)
    assert m["SDR@120"] == pytest.approx(2 / 3)
    assert m["SDR_dist"] == pytest.approx((30 + 3623.2 + 80) / 3)
    assert r.protocol["scoring"]["sdr_wrap_360"] is False
    assert r.units["SDR_dist"] == "px" and all(c["holds"] for c in r.to_dict()["checks"])


def test_sdr_wrap_fix(tmp_path: Path) -> None:
    r = _sdr(tmp_path, profile="touchdown-wrap")
    assert _rows(r)["1_post"]["sdr_distance"] == pytest.approx(56.8)
    m = r.metrics
    assert (m["SDR@40"], m["SDR@80"], m["SDR@120"]) == (
        pytest.approx(1 / 3),
        pytest.approx(2 / 3),
        1.0,
    )
    assert m["SDR_dist"] == pytest.approx((30 + 56.8 + 80) / 3)
    assert r.protocol["scoring"]["sdr_wrap_360"] is True


def test_sdr_incomplete_and_subset(tmp_path: Path) -> None:
    with pytest.raises(
        Exception, match="1 of 3 SDR examples .* have no prediction \\(first: 1_post\\)"
    ):
        _sdr(tmp_path, body=[SDR[0], SDR[2]])
    r = _sdr(tmp_path / "b", body=[SDR[0], SDR[2]], subset=True)
    assert r.partial and r.n_episodes == 2


def test_sdr_a_route_of_the_split_without_a_location_is_no_stray(tmp_path: Path) -> None:
    """Route 3 of dev has no known location, so no SDR example: a record for it is ignored,
    not named as an id not in the split (route 99 is)."""
    other = {"route_id": 3, "pano": "main", "x": 1.0, "y": 1.0}
    stray = {"route_id": 99, "pano": "main", "x": 1.0, "y": 1.0}
    with pytest.raises(Exception) as err:
        _sdr(tmp_path, body=[SDR[0], SDR[2], other, stray])
    assert str(err.value).endswith(
        "1 of 3 SDR examples (route and pre/main/post panorama with a known location) have no "
        "prediction (first: 1_post); profile touchdown requires all of them: score only the "
        "predicted ones with --subset (subset=True in Python), reported as partial; 1 record has "
        "an id not in the split: 99 (another split's route, or an unknown one)"
    )
    r = _sdr(tmp_path / "b", body=[*SDR, other])
    assert list(_rows(r)) == ["1_main", "1_post", "2_main"] and not r.partial
    assert [w for w in r.warnings if "ignored" in w] == [
        "1 SDR prediction(s) for routes/panoramas without a known location were ignored "
        "(first: 3_main)"
    ]


def test_sdr_examples_carry_their_route_ids(tmp_path: Path) -> None:
    """The SDR table holds each example's route id (what a file names it by), so the split
    hint compares route ids without parsing "<route_id>_<kind>"; a subset keeps them."""
    from vlneval.tasks.common.blind import submitted_ids
    from vlneval.tasks.touchdown.format import load_touchdown_routes

    root = make_root(tmp_path / "root")
    sdr = load_touchdown_routes(root / "touchdown" / "touchdown_unseen_split" / "dev.json").sdr
    assert (sdr.ids, sdr.route_ids) == (["1_main", "1_post", "2_main"], ["1", "1", "2"])
    field, ids = submitted_ids(sdr)
    assert field == "route_id" and ids is sdr.route_ids
    assert sdr.subset([2, 0]).route_ids == ["2", "1"]


def test_profiles_cite_the_sdr_code_where_it_existed_and_its_grid() -> None:
    from vlneval.tasks.profiles import get_profile

    assert get_profile("touchdown").reproduces == (
        "Touchdown (Chen et al. 2019) metric definitions; SDR as lil-lab/touchdown sdr/predict.py "
        "at commit 5aeb42d (the file was removed in ba9dad8)"
    )
    grid = (
        "SDR as predict_baselines in lil-lab/touchdown sdr/predict.py (commit 5aeb42d, removed in "
        "ba9dad8); its model scores (predict, and sdr/train.py's distance_metric today) measure "
        "between the argmax cells of 1/8-resolution heatmaps (margins 5/10/15 cells, mean distance "
        "x 8): the two agree only for points on that 8 px grid"
    )
    for name in ("touchdown", "touchdown-wrap", "touchdown-vlnt"):
        assert grid in get_profile(name).notes, name


def test_numpy_route_ids_and_pixels_are_the_numbers_they_hold(tmp_path: Path) -> None:
    """An agent's ``np.int64`` route ids (and SDR pixels as ``np.float32``) score as the
    numbers they hold, as the R2R family reads them; a route not in the split is named bare,
    and an id of another numpy type is refused as the Python value it holds."""
    root = make_root(tmp_path / "root")
    plain = [{"route_id": k, "trajectory": v} for k, v in RUNS.items()]
    records = [{**r, "route_id": np.int64(r["route_id"])} for r in plain]
    got = evaluate("touchdown", "dev", records, root=root)
    assert got.metrics == evaluate("touchdown", "dev", plain, root=root).metrics
    assert isinstance(records[0]["route_id"], np.int64)  # the caller's records kept
    stray = evaluate("touchdown", "dev", [*records, {**plain[0], "route_id": np.int64(99)}],
                     root=root)  # fmt: skip
    assert (
        "1 prediction(s) with route ids not in the split were ignored (first: 99)" in stray.warnings
    )
    bad = [*records[:2], {**plain[2], "route_id": np.float64(3.0)}]
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown", "dev", bad, root=root)
    assert str(exc.value).endswith(
        "error: <records>: record 2: route_id must be a JSON integer, got float 3.0"
    )
    sdr = [{**r, "route_id": np.int64(r["route_id"]), "y": np.float32(r["y"])} for r in SDR]
    assert evaluate("touchdown-sdr", "dev", sdr, root=root).metrics == (
        evaluate("touchdown-sdr", "dev", SDR, root=root).metrics
    )


def test_the_card_names_the_threshold_in_hops(tmp_path: Path) -> None:
    scoring = _nav(tmp_path, RUNS).protocol["scoring"]
    assert scoring["threshold_hops"] == 1.0 and "threshold_m" not in scoring
    assert scoring["comparison"] == "SPD <= 1 hop (the goal or a neighbour)"


def test_a_run_card_names_the_release_it_ran_on(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    out = tmp_path / "nav.json"
    assert main(["run", "--task", "touchdown", "--split", "dev", "--data-root", str(root),
                 "--agent", "stop", "--out", str(out), "--quiet"]) == 0  # fmt: skip
    card = json.loads((tmp_path / "nav.protocol.json").read_text())
    assert (card["task"], card["split"], card["data_version"]) == ("touchdown", "dev", "unseen")


def test_rates_have_no_unit_of_their_own_and_hops_and_pixels_say_theirs(tmp_path: Path) -> None:
    """Rates are stored as fractions (spec/outputs.md): the summary's ``units`` names only the
    units that are not the usual ones, never ``%`` for a fraction."""
    assert _nav(tmp_path / "nav", RUNS).to_dict()["units"] == {"SPD": "hops"}
    assert _sdr(tmp_path / "sdr").to_dict()["units"] == {"SDR_dist": "px"}
