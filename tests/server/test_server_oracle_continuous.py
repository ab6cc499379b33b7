"""The label-oracle probe on a continuous task (r2r-ce, VLN-CE val_unseen, real data).

The hidden labels of a continuous phase are numbers: goal positions, reference-path points and
the dense reference of the ``_gt`` file. The probe writes candidate positions into refused
files, and candidate numbers into a field the scorer quotes back when it is malformed: goal
positions, reference-path points, dense points, numbers a hair away from a goal coordinate,
and positions far from any episode. A refused file must be answered alike whichever candidates
it holds; the organisers' log keeps the hidden numbers out and stays readable.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import make_server
from tests.server.helpers import encode
from vlneval.server.services import admin
from vlneval.server.services.redact import HIDDEN, Redactor, secrets_in_raw
from vlneval.server.services.scoring import raw_redactor

CE = Path("vlnce") / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
K = 10  # candidates of each kind
ON_KINDS = ("goal", "path", "dense", "near")


def _load(path: Path) -> Any:
    return json.loads(gzip.decompress(path.read_bytes()))


@pytest.fixture
def ce(data_root, tmp_path):
    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    admin.create_phase(
        srv.db, "demo", "ce", task="r2r-ce", split="val_unseen",
        episodes_file=str(data_root / CE / "val_unseen.json.gz"),
        graphs=str(data_root / "matterport3d" / "connectivity"),
    )  # fmt: skip
    episodes = _load(data_root / CE / "val_unseen.json.gz")["episodes"]
    gt = _load(data_root / CE / "val_unseen_gt.json.gz")
    yield srv, episodes, gt
    srv.client.close()
    srv.db.dispose()


def _candidate(kind: str, ep: dict[str, Any], gt: dict[str, Any], k: int) -> list[float]:
    goal = ep["goals"][0]["position"]
    if kind == "goal":
        return list(goal)
    if kind == "path":
        return list(ep["reference_path"][len(ep["reference_path"]) // 2])
    if kind == "dense":
        dense = gt[str(ep["episode_id"])]["locations"]
        return list(dense[len(dense) // 3])
    if kind == "near":  # 0.4 mm from the goal: the same number at 3 decimals
        return [goal[0] + 0.0004, goal[1], goal[2] - 0.0004]
    return [97.25 + k / 8, 0.125, -88.5 - k / 8]  # far from every scene: no label


def _records(episodes, gt, kinds):
    """An rxr-jsonl-form file for every episode; the first episodes carry the candidates.

    A probe record ends its path at the candidate and writes the candidate's first coordinate as
    a malformed ``distance_to_goal`` (the scorer quotes a malformed value back).
    """
    out, cands = [], []
    for i, ep in enumerate(episodes):
        rec = {"instruction_id": ep["episode_id"], "path": [ep["start_position"]]}
        if i < len(kinds):
            kind = kinds[i]
            point = _candidate(kind, ep, gt, i)
            text = f"q {point[0]!r}"
            rec["path"] = [ep["start_position"], point]
            rec["distance_to_goal"] = [0.0, text]
            cands.append((text, kind))
        out.append(rec)
    return out, cands


def _shape(message: str, text: str) -> str:
    m = message.replace(text, "<candidate>")  # an id: quoted, or bare where it is an integer
    return re.sub(r'"\d+"|(?<=instruction_id )\d+', '"<id>"', m)


def _answer(srv, records, name):
    r = srv.submit(srv.alpha, encode(records), phase="ce", name=name)
    assert r.status_code == 202, r.text
    assert srv.work() == 1
    got = srv.get(r.json()["id"], srv.alpha).json()
    return got["status"], got["error_kind"], [m.replace(name, "<file>") for m in got["messages"]]


def _answer_shape(srv, records, cands):
    """:func:`_answer` with every quoted candidate replaced by ``<candidate>``."""
    status, kind, messages = _answer(srv, records, "probe.json")
    for text, _ in cands:
        messages = [m.replace(text, "<candidate>") for m in messages]
    return status, kind, messages


def test_refused_continuous_files_are_answered_alike_whatever_their_candidates(ce, caplog):
    srv, episodes, gt = ce
    caplog.set_level(logging.DEBUG)
    mixed = [kind for k in range(K) for kind in (*ON_KINDS, "off")]
    records, cands = _records(episodes, gt, mixed)
    status, kind, messages = _answer(srv, records, "mixed.json")
    assert (status, kind) == ("failed", "invalid") and messages
    assert not [m for m in messages if HIDDEN in m]
    shapes: dict[bool, set[str]] = {True: set(), False: set()}
    for text, kind in cands:
        on = kind in ON_KINDS
        quoted = [m for m in messages if text in m]
        shapes[on].update(_shape(m, text) for m in quoted) if quoted else shapes[on].add("-")
    assert shapes[True] == shapes[False]
    # a file of labels only and a file of non-labels only get the same answer
    # (messages may quote what the submitter wrote: each candidate reads as <candidate>)
    only_on, on_texts = _records(episodes, gt, [k for k in ON_KINDS for _ in range(K)])
    only_off, off_texts = _records(episodes, gt, ["off"] * (len(ON_KINDS) * K))
    assert _answer_shape(srv, only_on, on_texts) == _answer_shape(srv, only_off, off_texts)
    # the file is refused by the public check (a public copy of the split: no hidden value to
    # quote), so the hidden scorer never saw it; no hidden number the probe wrote is logged
    # (the redactor that guards the log lines is tested below)
    shown = {kind for text, kind in cands if text[2:] in caplog.text}
    assert shown <= {"near", "off"}
    assert not [r for r in caplog.records if "refused by the r2r-ce" in r.getMessage()]


def test_the_continuous_log_redactor_hides_numbers_and_stays_readable(data_root):
    """Goal coordinates, reference-path points and dense points are hidden at the precision a
    line shows them (the start too: it is a reference path's first point); the vocabulary, ids
    and timings stay readable."""
    episodes = data_root / CE / "val_unseen.json.gz"
    r = raw_redactor(str(episodes))
    ep = _load(episodes)["episodes"][0]
    gt = _load(data_root / CE / "val_unseen_gt.json.gz")[str(ep["episode_id"])]
    gx, _, gz = ep["goals"][0]["position"]
    sx, sy, sz = ep["start_position"]
    dx = gt["locations"][len(gt["locations"]) // 2][0]
    line = (
        f"incident 1a2b: episode {ep['episode_id']} in {ep['scene_id']}: started at "
        f"({sx:.4f}, {sy:.4f}, {sz:.4f}), goal ({gx:.3f}, {gz:.5f}), dense x {dx:.6f}; "
        "the tokens: the room / stairs; took 0.52 s"
    )
    assert r.strict(line) == (
        f"incident 1a2b: episode {ep['episode_id']} in {ep['scene_id']}: started at "
        "([hidden], [hidden], [hidden]), goal ([hidden], [hidden]), dense x [hidden]; "
        "the tokens: the room / stairs; took 0.52 s"
    )


def test_raw_secrets_leave_public_values_and_short_strings_alone():
    raw = {
        "episodes": [
            {
                "scene_id": "mp3d/abc/abc.glb",
                "start_position": [1.5, 0.25, 2.75],
                "goals": [{"position": [4.125, 0.25, 6.375], "radius": 3.0}],
                "reference_path": [[1.5, 0.25, 2.75], [4.125, 0.25, 6.375]],
            }
        ],
        "instruction_vocab": {"word_list": ["<pad>", "/", ":", "the", "stairs"]},
    }
    strings, numbers = secrets_in_raw(raw)
    assert strings == set() and numbers == {0.25, 1.5, 2.75, 4.125, 6.375}
    r = Redactor({"/", ":", "abcd", "goalviewpoint1"}, numbers)
    assert r.strict("a/b: abcd at 4.125 near goalviewpoint1, 3.000 from 4.12") == (
        "a/b: abcd at [hidden] near [hidden], 3.000 from 4.12"
    )


def test_the_native_r2r_ce_form_is_accepted_and_scored_as_vlneval_score(ce, data_root, tmp_path):
    """VLN-CE's own output (an object keyed by episode id) passes the step budget: its records
    are the object's values, not one line of JSON. Each step carries the distance a Habitat run
    measures, which the phase does not read: it measures its own on the twin worlds (a file
    would otherwise rank by the distances it writes), as ``vlneval score --distance twin``
    does, under the phase's profile (vlnce-strict: the walks move less than one action)."""
    from vlneval.evaluation import evaluate
    from vlneval.server.services.leaderboard import public_value

    srv, episodes, gt = ce
    native = {
        str(ep["episode_id"]): [
            {"position": p, "heading": 0.0, "stop": k == len(walk) - 1, "distance_to_goal": 0.0}
            for k, p in enumerate(walk)
        ]
        for ep in episodes
        for walk in [gt[str(ep["episode_id"])]["locations"]]
    }
    path = tmp_path / "native.json"
    path.write_bytes(encode(native))
    r = srv.submit(srv.alpha, path.read_bytes(), phase="ce", name="native.json")
    assert r.status_code == 202, r.text
    assert srv.work() == 1
    got = srv.get(r.json()["id"], srv.alpha).json()
    assert got["status"] == "finished", got["messages"]
    direct = evaluate(
        "r2r-ce", "val_unseen", path, episodes_file=str(data_root / CE / "val_unseen.json.gz"),
        graphs=str(data_root / "matterport3d" / "connectivity"), profile="vlnce-strict",
        options={"distance": "twin"},
    ).to_dict()  # fmt: skip
    assert got["result"]["metrics"] == {k: public_value(k, v) for k, v in direct["metrics"].items()}
    assert got["result"]["n_episodes"] == direct["n_episodes"] == len(episodes)
