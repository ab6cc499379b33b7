"""VLN-CE scoring rules, each on a hand-computed two-episode split."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.vlnce.helpers import steps
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.tasks.profiles import get_profile
from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions
from vlneval.tasks.vlnce.score import DistanceSource, score_continuous

CARRIED = DistanceSource("carried", "carried in the test file")
NONE = DistanceSource("none", "no source")


def score(
    split: tuple[Path, Path],
    tmp_path: Path,
    preds: Any,
    *,
    profile: str = "vlnce-exact",
    source: DistanceSource = CARRIED,
    name: str = "p.json",
    **kw: Any,
):  # type: ignore[no-untyped-def]
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / name
    path.write_text(preds if isinstance(preds, str) else json.dumps(preds))
    parsed = parse_ce_predictions(path, eps)
    return score_continuous(eps, parsed, get_profile(profile), source, **kw)


STRAIGHT = [[0.0, 0.0, -float(k)] for k in range(5)]  # along the gt, ends on the goal


def test_reference_scores_one(split: tuple[Path, Path], tmp_path: Path) -> None:
    d = [4.0, 3.0, 2.0, 1.0, 0.0]
    ev = score(split, tmp_path, {"1": steps(STRAIGHT, d), "2": steps(STRAIGHT, d)})
    m = ev.metrics
    assert m == {"TL": 4.0, "NE": 0.0, "OSR": 1.0, "SR": 1.0, "SPL": 1.0, "nDTW": 1.0, "sDTW": 1.0}


def test_success_requires_stop(split: tuple[Path, Path], tmp_path: Path) -> None:
    d = [4.0, 3.0, 2.0, 1.0, 0.0]
    ev = score(split, tmp_path, {"1": steps(STRAIGHT, d, stop=False), "2": steps(STRAIGHT, d)})
    assert ev.per_episode["success"].tolist() == [0.0, 1.0]
    assert ev.per_episode["oracle_success"].tolist() == [1.0, 1.0]  # OSR needs no STOP
    assert ev.per_episode["sdtw"].tolist() == [0.0, 1.0]
    assert ev.metrics["SR"] == 0.5


def test_success_is_strict(split: tuple[Path, Path], tmp_path: Path) -> None:
    pts = STRAIGHT[:2]  # TL = 1
    ev = score(split, tmp_path, {"1": steps(pts, [4.0, 3.0]), "2": steps(pts, [4.0, 2.999])})
    assert ev.per_episode["success"].tolist() == [0.0, 1.0]
    # SPL = 1 * 4 / max(4, 1) = 1 for the successful one (ℓ from info.geodesic_distance).
    assert ev.per_episode["spl"].tolist() == [0.0, 1.0]
    assert ev.to_dict()["profile_rules"]["comparison"] == "NE < 3.0"


def test_repeated_positions_are_dropped(split: tuple[Path, Path], tmp_path: Path) -> None:
    # P = (0,0,0),(1,0,-1),(1,0,-1),(1,0,-1),(0,0,-4); dropped to 3 points. Costs against gt
    # z = 0..-4 (columns) by hand: row0 [0,1,2,3,4], row1 [√2,1,√2,√5,√10], row2 [4,3,2,1,0].
    # Accumulated: row0 [0,1,3,6,10]; row1 [√2, 1, 1+√2, 1+√2+√5, ...]; row2 ends at
    # min over paths = 1 + √2 + 1 + 0 = 2 + √2 (via (1,1),(1,2),(2,3),(2,4)).
    p = [[0.0, 0.0, 0.0], [1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [0.0, 0.0, -4.0]]
    ev = score(
        split, tmp_path, {"1": steps(p, [4, 3, 3, 3, 0]), "2": steps(STRAIGHT, [4, 3, 2, 1, 0])}
    )
    assert ev.per_episode["dtw"][0] == pytest.approx(2 + math.sqrt(2))
    assert ev.per_episode["ndtw"][0] == pytest.approx(math.exp(-(2 + math.sqrt(2)) / (5 * 3.0)))
    assert ev.per_episode["repeated_positions"].tolist() == [2.0, 0.0]
    assert ev.per_episode["path_length"][0] == pytest.approx(math.sqrt(2) + math.sqrt(1 + 9))


@pytest.mark.parametrize("policy", ["failure", "exclude"])
def test_infinite_distance_is_counted_never_averaged(
    split: tuple[Path, Path], tmp_path: Path, policy: str
) -> None:
    import dataclasses

    prof = dataclasses.replace(get_profile("vlnce-exact"), unreachable=policy)  # type: ignore[type-var]
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps(
            {"1": steps(STRAIGHT[:2], [4.0, "inf"]), "2": steps(STRAIGHT, [4, 3, 2, 1, 0.5])}
        )
    )
    ev = score_continuous(eps, parse_ce_predictions(path, eps), prof, CARRIED)
    s = ev.to_dict()
    assert s["distance"]["unreachable"]["count"] == 1
    assert s["distance"]["unreachable"]["ids"] == ["1"]
    assert s["distance"]["unreachable"]["policy"] == policy
    assert s["protocol"]["scoring"]["unreachable"] == policy  # compared like every scoring field
    assert s["metrics"]["NE"] == 0.5  # never inf, never NaN
    assert s["metrics"]["SR"] == (0.5 if policy == "failure" else 1.0)
    assert s["metrics"]["TL"] == 2.5  # path metrics keep every episode
    assert any("unreachable" in w for w in s["warnings"])


def test_no_distance_source_marks_goal_metrics_unavailable(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    ev = score(split, tmp_path, {"1": steps(STRAIGHT), "2": steps(STRAIGHT[:3])}, source=NONE)
    s = ev.to_dict()
    for label in ("NE", "OSR", "SR", "SPL", "sDTW"):
        assert s["metrics"][label] is None
        assert "no distance source" in s["unavailable"][label]
    assert s["metrics"]["TL"] == 3.0
    assert s["metrics"]["nDTW"] == pytest.approx((1 + math.exp(-3 / 15)) / 2)


def test_fastdtw_profile_says_it_is_approximate(split: tuple[Path, Path], tmp_path: Path) -> None:
    d = [4.0, 3.0, 2.0, 1.0, 0.0]
    approx = score(
        split, tmp_path, {"1": steps(STRAIGHT, d), "2": steps(STRAIGHT, d)}, profile="vlnce"
    )
    exact = score(split, tmp_path, {"1": steps(STRAIGHT, d), "2": steps(STRAIGHT, d)})
    assert approx.to_dict()["dtw"]["approximate"] is True
    assert "APPROXIMATE" in " ".join(approx.warnings)
    assert exact.to_dict()["dtw"]["approximate"] is False
    assert "DEVIATES" in " ".join(exact.warnings)
    assert exact.protocol["scoring"]["dtw"] == "exact"


def test_rxr_jsonl_form_stops_at_its_last_point(split: tuple[Path, Path], tmp_path: Path) -> None:
    lines = [
        {"instruction_id": "i1", "path": STRAIGHT, "distance_to_goal": [4, 3, 2, 1, 0]},
        {"instruction_id": "i2", "path": STRAIGHT[:2], "distance_to_goal": [4, 3.5]},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    ev = score(split, tmp_path, text, name="p.jsonl")
    assert ev.form == "rxr-jsonl"
    assert ev.per_episode["success"].tolist() == [1.0, 0.0]
    assert ev.protocol["scoring"]["stop"].startswith("the last position")


def test_missing_episode_needs_subset(split: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="1 of 2 episodes have no prediction"):
        score(split, tmp_path, {"1": steps(STRAIGHT, [4, 3, 2, 1, 0])})
    ev = score(split, tmp_path, {"1": steps(STRAIGHT, [4, 3, 2, 1, 0])}, subset=True)
    assert ev.partial is True
    assert (ev.protocol["episodes"], ev.protocol["n_expected"], ev.protocol["partial"]) == (
        1,
        2,
        True,
    )


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            {
                "1": [
                    {"position": [0, 0, 0], "heading": 0, "stop": True},
                    {"position": [0, 0, -1], "heading": 0, "stop": True},
                ]
            },
            r'episode_id "1": \[0\].stop: STOP at step 0 is not the last step',
        ),
        (
            {"1": [{"position": [5, 0, 0], "heading": 0, "stop": True}]},
            r"starts 5.000 m from the episode's start",
        ),
        (
            {"1": [{"position": [0, 0, 0], "heading": 0, "stop": "yes"}]},
            r"\[0\].stop: stop must be true or false",
        ),
        ({"1": [{"position": [0, 0], "heading": 0, "stop": True}]}, r"expected \{'position'"),
        (
            {"1": [{"position": [0, 0, 0], "heading": 0, "stop": True, "distance_to_goal": None}]},
            r"\[0\].distance_to_goal: distance_to_goal must be a number >= 0 or Infinity",
        ),
        (
            {
                "1": [{"position": [0, 0, 0], "heading": 0, "stop": True, "distance_to_goal": 1.0}],
                "2": [{"position": [0, 0, 0], "heading": 0, "stop": True}],
            },
            "carry it for all or none",
        ),
        (
            {
                "1": [
                    {"position": [0, 0, 0], "heading": 0, "stop": False},
                    {"position": [0, 0, -1], "heading": 0, "stop": True, "distance_to_goal": 1.0},
                ]
            },
            r'p.json: episode_id "1": \[0\].distance_to_goal: missing field \'distance_to_goal\' '
            r"\(other steps of the episode carry it: carry it on every step or none\)$",
        ),
        (
            '{"1": [{"position": [0, 0, 0], "heading": NaN, "stop": true}]}',
            r"heading must be a finite number",
        ),
    ],
)
def test_bad_predictions_name_file_id_and_field(
    split: tuple[Path, Path], tmp_path: Path, record: Any, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message) as info:
        score(split, tmp_path, record, subset=True)
    assert "p.json" in str(info.value)


def test_bad_episodes_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "val.json"
    bad.write_text(json.dumps({"episodes": [{"episode_id": 3, "scene_id": "mp3d/S/S.glb"}]}))
    with pytest.raises(
        InvalidInputError, match=r'val.json: episode_id "3": start_position: missing'
    ):
        load_vlnce(bad)


def test_no_matching_episode_is_named_as_for_graph_tasks(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    """A file made for another split gets the graph tasks' words (tasks.common.checks)."""
    with pytest.raises(InvalidInputError) as err:
        score(split, tmp_path, {"99": steps(STRAIGHT, [4.0, 3.0, 2.0, 1.0, 0.0])})
    path = tmp_path / "p.json"
    assert str(err.value) == f"error: {path}: no prediction matches an episode of r2r-ce val"


def test_the_completeness_problem_names_an_id_not_in_the_split(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    given = {"1": steps(STRAIGHT, [4, 3, 2, 1, 0]), "2 ": steps(STRAIGHT, [4, 3, 2, 1, 0])}
    with pytest.raises(InvalidInputError) as exc:
        score(split, tmp_path, given)
    assert str(exc.value).endswith(
        "profile vlnce-exact requires all of them: score only the predicted ones with --subset "
        "(subset=True in Python), reported as partial; 1 record has an "
        'id not in the split: "2 " (an id of another type, or with spaces? ids match exactly, '
        'e.g. "2")'
    )


def test_fastdtw_python_profile_gives_the_fallback_s_numbers(tmp_path: Path) -> None:
    from tests.tasks.vlnce.helpers import episode

    # gt: 8 points 1 m apart along -z; agent P (5 points, radius 1): one level of halving.
    # The coarse path sends P's rows 0-3 through gt columns 0..7; P's last row (4) is the
    # extra row of an odd-length series. The compiled extension copies row 3's window
    # (columns 0..7) and follows (2,1) (3,2) (4,3..7): 0 + 5√2 + 1 + 1 + 1 + 0 + 1 + 2 + 3 =
    # 9 + 5√2 (the exact DTW). The Python fallback dilates the coarse path (columns 4..7), so
    # it must pass (2,2) (3,3) (4,4..7): 0 + 5√2 + √2 + 2 + 0 + 1 + 2 + 3 = 8 + 6√2.
    ep, gt = tmp_path / "val.json", tmp_path / "val_gt.json"
    ep.write_text(json.dumps({"episodes": [episode(1, -7.0, gd=7.0)]}))
    line = [[0.0, 0.0, -float(k)] for k in range(8)]
    gt.write_text(json.dumps({"1": {"locations": line, "actions": [], "forward_steps": 7}}))
    p = [[0.0, 0.0, 0.0], [1.0, 0.0, -8.0], [-1.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.0, 0.0, -4.0]]
    got = {
        prof: score((ep, gt), tmp_path, {"1": steps(p)}, profile=prof, source=NONE)
        for prof in ("vlnce", "vlnce-fastdtw-python")
    }
    for prof, dtw in (
        ("vlnce", 9 + 5 * math.sqrt(2)),
        ("vlnce-fastdtw-python", 8 + 6 * math.sqrt(2)),
    ):
        assert got[prof].per_episode["dtw"][0] == pytest.approx(dtw, abs=1e-12)
        assert got[prof].metrics["nDTW"] == pytest.approx(math.exp(-dtw / (8 * 3.0)), abs=1e-12)
    method = got["vlnce-fastdtw-python"].to_dict()["dtw"]["method"]
    assert method == "fastdtw radius 1 (python variant of the package)"
    assert get_profile("vlnce").reproduces.endswith("FDTW: True, fastdtw's compiled extension")


def test_a_malformed_record_does_not_hide_the_missing_episodes(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"1": [{"position": [0.0, 0.0, 0.0], "stop": "yes"}]}))
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(path, eps, profile=get_profile("vlnce-exact"))
    assert [str(p) for p in exc.value.problems] == [
        f"{path}: 1 of 2 episodes have no prediction (first: 2); profile vlnce-exact requires "
        "all of them: score only the predicted ones with --subset (subset=True in Python), "
        "reported as partial",
        f"{path}: episode_id \"1\": [0].stop: stop must be true or false, got 'yes'",
    ]
    with pytest.raises(InvalidInputError) as exc:  # a subset run need not be complete
        parse_ce_predictions(path, eps, profile=get_profile("vlnce-exact"), subset=True)
    assert [p.field for p in exc.value.problems] == ["[0].stop"]


def test_the_scorer_tells_a_malformed_file_its_missing_episodes(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    body = {"1": [{"position": [0.0, 0.0, 0.0], "stop": "yes"}]}
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r-ce", "val", body, episodes_file=split[0])
    assert [(p.episode, p.field) for p in exc.value.problems] == [
        (None, None),
        ('episode_id "1"', "[0].stop"),
    ]
    assert str(exc.value.problems[0]).startswith("<records>: 1 of 2 episodes have no prediction")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r-ce", "val", body, episodes_file=split[0], subset=True)
    assert len(exc.value.problems) == 1
