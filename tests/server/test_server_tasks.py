"""Every registered task through the server, as ``vlneval score`` sees it.

For each task a phase is created with ``vlneval admin``'s code, a good file is scored exactly as
``vlneval score`` scores it (the same summary numbers), and a broken copy gets the command
line's messages (the same reader, options and words; the server names the upload as the team
named it and replaces command-line hints by the phase's rules). A file made for another split
of the same task is told which split its ids belong to. Real data from the shared data folder
where it exists (skipped without it), tiny synthetic benchmarks otherwise; one server for the
module.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import Server, make_server
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError, Problem, UnknownNameError, VLNEvalError
from vlneval.evaluation import evaluate
from vlneval.server.services import admin
from vlneval.server.services.leaderboard import public_value
from vlneval.server.services.validation import for_phase

R2R_PREDS = "predictions/r2r/seq2seq_r2r_baseline_sadanand1120"
NDH_PREDS = "predictions/ndh/seq2seq_prevalent_r2r"
NDH_FILE = "val-seq2seq-all-trusted_path-40-sample-imagenet_{split}_iter_100.json.gz"


@dataclass(frozen=True)
class Case:
    """One task on the server.

    Attributes:
        task, split, options: the phase; ``real``: it needs the shared data folder.
        good: ``(data root, tmp) -> predictions file`` (a real file or an agent's run).
        drop: the record field the broken copy lacks (its first record); for a file keyed by
            episode id, the first value is replaced by a number.
    """

    id: str
    task: str
    split: str
    real: bool
    good: Callable[[Path, Path], Path]
    drop: str = "trajectory"
    options: dict[str, Any] = field(default_factory=dict)
    root: Callable[[Path], Path] | None = None  # synthetic: writes the data root
    profile: str | None = None  # the phase's default profile when the task's differs


def _read(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def _run(task: str, split: str, *extra: str) -> Callable[[Path, Path], Path]:
    """A good file: the random agent's run (``vlneval run``); for REVERIE each record names
    an object (``predObjId``), as a file a phase ranks by RGSPL must."""

    def make(root: Path, tmp: Path) -> Path:
        out = tmp / f"{task}_{split}_random.json"
        argv = ["run", "--task", task, "--split", split, "--agent", "random", *extra]
        assert main([*argv, "--data-root", str(root), "--out", str(out)]) == 0
        if task == "reverie":
            out.write_text(json.dumps([{**r, "predObjId": 1} for r in json.loads(out.read_text())]))
        return out

    return make


def _file(relative: str) -> Callable[[Path, Path], Path]:
    return lambda root, tmp: root / relative


def _sdr(root: Path, tmp: Path) -> Path:
    """Touchdown SDR: every annotated location, one record per (route, panorama); a panorama
    without the target gets one too (a phase asks for every pair: which show it is a label)."""
    lines = _read(root / "touchdown" / "touchdown_unseen_split" / "dev.json.gz").splitlines()
    body = []
    for line in lines:
        r = json.loads(line)
        for kind in ("main", "pre", "post"):
            c = json.loads(r[f"{kind}_static_center"])
            if c == {"x": -1, "y": -1}:
                c = {"x": 0.5, "y": 0.5}
            x, y = c["x"] * 3680, c["y"] * 800
            body.append({"route_id": int(r["route_id"]), "pano": kind, "x": x, "y": y})
    out = tmp / "sdr_dev.json"
    out.write_text(json.dumps(body))
    return out


def _rxr_root(tmp: Path) -> Path:
    from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, write_json

    write_json(
        tmp / "matterport3d/connectivity/sq_connectivity.json", connectivity(SQUARE, SQUARE_EDGES)
    )
    (tmp / "rxr").mkdir(parents=True, exist_ok=True)
    for split, first in (("val_unseen", 11), ("val_seen", 21)):
        rows = [
            {"instruction_id": first + k, "path_id": 1 + k, "scan": "sq",
             "path": ["S", "A", "B", "G"], "heading": 0.5, "instruction": "walk around",
             "language": "en-US"}
            for k in range(2)
        ]  # fmt: skip
        text = "".join(json.dumps(r) + "\n" for r in rows)
        (tmp / f"rxr/rxr_{split}_guide.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    return tmp


def _rxr_good(root: Path, tmp: Path) -> Path:
    out = tmp / "rxr_preds.jsonl"
    out.write_text(
        '{"instruction_id": 11, "path": ["S", "G"]}\n'
        '{"instruction_id": 12, "path": ["S", "A", "B", "G"]}\n'
    )
    return out


def _soon_root(tmp: Path) -> Path:
    from tests.tasks.soon.soon_fixtures import soon_root

    return soon_root(tmp)


def _soon_good(root: Path, tmp: Path) -> Path:
    from tests.tasks.soon.soon_fixtures import soon_preds

    out = tmp / "soon_preds.json"
    out.write_text(json.dumps(soon_preds()))
    return out


def _hanna_root(tmp: Path) -> Path:
    from tests.fixtures import write_json
    from tests.tasks.hanna.fixture import TASKS, make_root

    make_root(tmp)
    seen = [{**t, "path_id": t["path_id"] + 100} for t in TASKS]
    write_json(tmp / "hanna" / "hanna_val_seen.json", seen)
    return tmp


def _hanna_good(root: Path, tmp: Path) -> Path:
    from tests.tasks.hanna.fixture import RUNS, record

    out = tmp / "hanna_preds.json"
    out.write_text(json.dumps([record(k, vps, asks) for k, (vps, asks) in RUNS.items()]))
    return out


def _square_twin(tmp: Path) -> Path:
    """The R2R twin on the square of spec/metrics.md (the real twin builds 1,021 worlds)."""
    from tests.fixtures import square_root, write_json

    root = square_root(tmp)
    write_json(
        root / "r2r" / "R2R_val_seen.json", json.loads((root / "r2r/R2R_val.json").read_text())
    )
    return root


def _demo_good(root: Path, tmp: Path) -> Path:
    from vlneval.tasks.common.root import demo_root

    return demo_root() / "demo" / "predictions_val.json"


CASES = [
    Case(
        "r2r",
        "r2r",
        "val_seen",
        True,
        _file(f"{R2R_PREDS}/seq2seq_sample_imagenet_val_seen_iter_20000.json.gz"),
    ),  # fmt: skip
    Case("r4r", "r4r", "val_seen", True, _run("r4r", "val_seen")),
    Case("rxr-jsonl", "rxr", "val_unseen", False, _rxr_good, "path", root=_rxr_root),
    Case("reverie-v2", "reverie", "val_seen", True, _run("reverie", "val_seen")),
    Case(
        "reverie-v1",
        "reverie",
        "val_seen",
        True,
        _run("reverie", "val_seen", "--data-version", "v1"),
        options={"data_version": "v1"},
    ),  # fmt: skip
    Case("soon", "soon", "val", False, _soon_good, root=_soon_root),
    Case(
        "ndh", "ndh", "val_seen", True, _file(f"{NDH_PREDS}/{NDH_FILE.format(split='val_seen')}")
    ),  # fmt: skip
    Case(
        "ndh-player-path",
        "ndh",
        "val_seen",
        True,
        _file(f"{NDH_PREDS}/{NDH_FILE.format(split='val_seen')}"),
        options={"path_type": "player_path"},
    ),  # fmt: skip
    Case(
        "soon-radians",
        "soon",
        "val",
        False,
        _soon_good,
        options={"angle_units": "radians"},
        root=_soon_root,
    ),  # fmt: skip
    Case("hanna", "hanna", "val_unseen", False, _hanna_good, "agent_pose", root=_hanna_root),
    Case("touchdown", "touchdown", "dev", True, _run("touchdown", "dev")),
    Case("touchdown-sdr", "touchdown-sdr", "dev", True, _sdr, "x"),
    Case(
        "r2r-ce",
        "r2r-ce",
        "val_seen",
        True,
        _run("r2r-ce", "val_seen"),
        options={"distance": "twin"},  # a phase's own (and default): the file's are not used
        profile="vlnce-strict",  # a phase's default: it refuses teleports
    ),
    Case(
        "r2r-twin",
        "r2r-twin",
        "val_seen",
        False,
        _run("r2r-twin", "val_seen"),
        root=_square_twin,
        profile="vlnce-strict",
    ),
    Case("demo", "demo", "val", False, _demo_good),
]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("server-tasks")
    s = make_server(tmp, f"sqlite:///{tmp / 'server.sqlite3'}", "sqlite")
    yield s
    s.client.close()
    s.db.dispose()


_MADE: dict[str, Path] = {}  # case id -> its good file (each agent run once per module)


def _good(case: Case, root: Path, tmp: Path) -> Path:
    if case.id not in _MADE:
        _MADE[case.id] = case.good(root, tmp)
    return _MADE[case.id]


def _root_of(case: Case, request: pytest.FixtureRequest, tmp: Path) -> Path:
    if case.real:
        return Path(request.getfixturevalue("data_root"))
    if case.root is not None:
        return case.root(tmp / "root")
    return tmp


def _phase(srv: Server, slug: str, case: Case, root: Path, split: str | None = None) -> None:
    data_root = None if case.task == "demo" else str(root)
    admin.create_phase(
        srv.db, "demo", slug, task=case.task, split=split or case.split, data_root=data_root,
        options=case.options,
    )  # fmt: skip


def _submit(srv: Server, slug: str, data: bytes, name: str) -> dict[str, Any]:
    r = srv.submit(srv.alpha, data, phase=slug, name=name)
    assert r.status_code == 202, r.text
    srv.work()
    got: dict[str, Any] = srv.get(r.json()["id"], srv.alpha).json()
    return got


def _broken(text: bytes, drop: str) -> bytes:
    """The file without ``drop`` in its first record (JSON list or lines), or with the first
    value of an id-keyed object replaced by a number."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        lines[0].pop(drop)
        return "".join(json.dumps(v) + "\n" for v in lines).encode()
    if isinstance(value, dict):
        value[next(iter(value))] = 5
    else:
        value[0].pop(drop)
    return json.dumps(value).encode()


def _cli_messages(case: Case, root: Path, path: Path, name: str) -> list[str]:
    """The problems ``vlneval score`` reports for ``path``, named as the server names them."""
    with pytest.raises(InvalidInputError) as exc:
        evaluate(case.task, case.split, path, root=root, options=case.options or None,
                 profile=case.profile)  # fmt: skip
    return [
        str(Problem(p.source, for_phase(p.message), p.episode, p.field)).replace(str(path), name)
        for p in exc.value.problems
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_task_scores_as_vlneval_score(
    srv: Server, case: Case, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    root = _root_of(case, request, tmp_path)
    good = _good(case, root, tmp_path)
    slug = f"t-{case.id}"
    _phase(srv, slug, case, root)

    got = _submit(srv, slug, good.read_bytes(), good.name)
    cli = evaluate(
        case.task, case.split, good, root=root, options=case.options or None, profile=case.profile
    )
    phase = srv.client.get(f"/api/v1/challenges/demo/phases/{slug}").json()
    ranked_by = phase["primary_metric"]
    if cli.metrics.get(ranked_by) is None:  # never ranked: refused, with the reason score gives
        assert (got["status"], got["error_kind"]) == ("failed", "invalid")
        reason = cli.unavailable[ranked_by]
        assert got["messages"] == [f"{good.name}: this phase ranks by {ranked_by}: {reason}"]
    else:
        assert got["status"] == "finished", got["messages"]
        shown = {k: public_value(k, v) for k, v in cli.to_dict()["metrics"].items()}
        assert got["result"]["metrics"] == shown  # rounded as the pages show them
        # Touchdown SDR scores the labelled pairs of those it asks for: the team sees how many
        # it was asked for
        asked = phase["n_episodes"] if case.task == "touchdown-sdr" else cli.n_episodes
        assert got["result"]["n_episodes"] == asked

    bad = tmp_path / f"broken_{good.name.removesuffix('.gz')}"
    bad.write_bytes(_broken(_read(good), case.drop))
    refused = _submit(srv, slug, bad.read_bytes(), "broken.json")
    assert refused["status"] == "failed" and refused["error_kind"] == "invalid"
    assert refused["messages"] == _cli_messages(case, root, bad, "broken.json")


def test_the_reverie_v1_phase_holds_the_v1_file(srv: Server, data_root: Path) -> None:
    """The phase's file is the one ``vlneval score --data-version`` reads (v1: 1,423 episodes
    of val_seen; v2, the default: 1,384)."""
    from vlneval.evaluation import Scorer

    with Scorer("reverie", "val_seen", root=data_root, data_version="v1") as scorer:
        n_v1 = len(scorer.episodes)
    data = admin.resolve_data(
        "reverie", "val_seen", "reverie", episodes_file=None, graphs=None,
        data_root=str(data_root), options={"data_version": "v1"},
    )  # fmt: skip
    assert data.n_episodes == n_v1 == 1423 and "data_v2" not in str(data.episodes_file)
    v2 = admin.resolve_data(
        "reverie", "val_seen", "reverie", episodes_file=None, graphs=None,
        data_root=str(data_root),
    )  # fmt: skip
    assert v2.n_episodes == 1384 and "data_v2" in str(v2.episodes_file)


def test_a_test_split_is_no_phase(srv: Server, data_root: Path) -> None:
    for task in ("r2r", "reverie", "r2r-ce"):
        with pytest.raises(InvalidInputError, match="has no goals; a phase needs"):
            admin.resolve_data(
                task, "test", get_default_profile(task), episodes_file=None, graphs=None,
                data_root=str(data_root),
            )  # fmt: skip


def get_default_profile(task: str) -> str:
    from vlneval.tasks import get_task

    return get_task(task).default_profile


WRONG = [
    # (case id, the phase's split, the split the good file was made for)
    ("r2r", "val_unseen", "val_seen"),
    ("reverie-v2", "val_unseen", "val_seen"),
    ("ndh", "val_unseen", "val_seen"),
    ("rxr-jsonl", "val_seen", "val_unseen"),
    ("hanna", "val_seen", "val_unseen"),
]


@pytest.mark.parametrize(("cid", "phase_split", "made_for"), WRONG, ids=[w[0] for w in WRONG])
def test_a_file_for_another_split_is_told_which(
    srv: Server,
    cid: str,
    phase_split: str,
    made_for: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    case = next(c for c in CASES if c.id == cid)
    root = _root_of(case, request, tmp_path)
    good = _good(case, root, tmp_path)
    slug = f"w-{cid}"
    _phase(srv, slug, case, root, split=phase_split)
    got = _submit(srv, slug, good.read_bytes(), good.name)
    assert got["status"] == "failed" and got["error_kind"] == "invalid"
    first = got["messages"][0]
    assert f"no prediction matches an episode of {case.task} {phase_split}" in first
    assert f"are episodes of {case.task} {made_for}" in first
    assert f"was the file made for {made_for}?" in first


def _hidden(task: str, records: list[dict[str, Any]]) -> set[str]:
    """The hidden values of a split file: what its public copy must not hold."""
    starts: set[str] = set()
    later: set[str] = set()
    for r in records:
        if task == "ndh":
            start = r["start_pano"]["pano"]
            public = {start} | {v for step in r.get("nav_history", []) for v in [step]}
            starts |= public
            later |= set(r["planner_path"][1:]) | set(r["player_path"][1:]) | set(r["end_panos"])
        elif task == "touchdown":
            route = r["route_panoids"]
            route = json.loads(route.replace("'", '"')) if isinstance(route, str) else route
            starts.add(route[0])
            later |= set(route[1:])
            for k in ("main", "pre", "post"):
                centre = json.loads(r[f"{k}_static_center"])
                if centre != {"x": -1, "y": -1}:
                    later |= {repr(float(centre["x"])), repr(float(centre["y"]))} - {"0.5"}
        else:
            starts.add(r["path"][0])
            later |= set(r["path"][1:])
    return later - starts


def _tokens(text: str) -> set[str]:
    """The ids and numbers of a JSON text (what a hidden value would show up as)."""
    import re

    return set(re.findall(r"-?[\w.]+(?:e-?\d+)?", text))


PUBLIC = [
    ("r2r", "r2r/R2R_val_seen.json.gz"),
    ("reverie", "reverie/REVERIE_val_seen.json.gz"),
    ("ndh", "cvdn/NDH/val_seen.json.gz"),
    ("touchdown", "touchdown/touchdown_unseen_split/dev.json.gz"),
]


@pytest.mark.parametrize(("task", "rel"), PUBLIC, ids=[p[0] for p in PUBLIC])
def test_the_public_copy_holds_no_hidden_value(
    data_root: Path, task: str, rel: str, tmp_path: Path
) -> None:
    from vlneval.tasks import get_task
    from vlneval.tasks.common.public_file import read_records, write_public_copy

    src = data_root / rel
    records, _ = read_records(src)
    hidden = _hidden(task, records)
    assert len(hidden) > 100
    assert not hidden.isdisjoint(_tokens(_read(src).decode()))  # the check can see them
    copy = write_public_copy(get_task(task), src, tmp_path)
    assert hidden.isdisjoint(_tokens(_read(copy).decode()))


def test_the_public_copy_of_vlnce_holds_no_goal(data_root: Path, tmp_path: Path) -> None:
    from vlneval.tasks import get_task
    from vlneval.tasks.common.public_file import read_records, write_public_copy

    src = data_root / "vlnce/R2R_VLNCE_v1-3_preprocessed/val_seen/val_seen.json.gz"
    value, _ = read_records(src)
    dense, _ = read_records(src.parent / "val_seen_gt.json.gz")
    goals = {repr(float(g["position"][0])) for ep in value["episodes"] for g in ep["goals"]}
    goals |= {repr(float(p[0])) for ep in value["episodes"] for p in ep["reference_path"][1:]}
    goals |= {repr(float(p[0])) for ref in dense.values() for p in ref["locations"][1:]}
    starts = {repr(float(ep["start_position"][0])) for ep in value["episodes"]}
    copy = write_public_copy(get_task("r2r-ce"), src, tmp_path)
    text = _read(copy).decode() + _read(copy.parent / "val_seen_gt.json.gz").decode()
    assert (goals - starts).isdisjoint(_tokens(text))
    assert not (goals - starts).isdisjoint(_tokens(_read(src).decode()))  # the check sees them


def test_phase_options_are_the_tasks_declared_options(srv: Server, data_root: Path) -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'path_type'"):
        admin.create_phase(
            srv.db, "demo", "o-typo", task="ndh", split="val_seen", data_root=str(data_root),
            options={"path_typ": "player_path"},
        )  # fmt: skip
    with pytest.raises(
        UnknownNameError,
        match=r"unknown ndh path type 'shortest' \(known: planner_path, player_path",
    ):
        admin.create_phase(
            srv.db, "demo", "o-bad", task="ndh", split="val_seen", data_root=str(data_root),
            options={"path_type": "shortest"},
        )  # fmt: skip
    with pytest.raises(
        VLNEvalError,
        match=r"option data_version \(--data-version\) does not apply to task r2r \(its options: none\)",
    ):
        admin.create_phase(
            srv.db, "demo", "o-none", task="r2r", split="val_seen", data_root=str(data_root),
            options={"data_version": "v1"},
        )  # fmt: skip


def test_a_label_probe_on_reverie_is_answered_alike(
    srv: Server, data_root: Path, tmp_path: Path
) -> None:
    """A refused file quoting a reference-path viewpoint and one quoting any other viewpoint of
    the scan get the same words (the messages come from the public copy, which holds neither)."""
    case = next(c for c in CASES if c.id == "reverie-v2")
    good = _good(case, data_root, tmp_path)
    records = json.loads(good.read_text())
    episodes = json.loads(_read(data_root / "reverie/data_v2/REVERIE_val_seen.json.gz"))
    ep = next(e for e in episodes if records[0]["instr_id"].startswith(f"{e['id']}_"))
    on_path = ep["path"][-1]  # the goal
    every = {v for e in episodes if e["scan"] == ep["scan"] for v in e["path"]}
    from vlneval.graph.store import GraphStore

    graph = GraphStore(data_root / "matterport3d" / "connectivity").graph(ep["scan"])
    off_path = next(v for v in graph.ids if v not in every)
    _phase(srv, "probe", case, data_root)
    answers = []
    for vp in (on_path, off_path):
        probe = json.loads(json.dumps(records))
        probe[0]["trajectory"][1][0] = f"q {vp}"
        got = _submit(srv, "probe", json.dumps(probe).encode(), "probe.json")
        assert got["status"] == "failed" and got["error_kind"] == "invalid"
        answers.append([m.replace(vp, "<X>") for m in got["messages"]])
    assert answers[0] == answers[1]
    assert "[hidden]" not in json.dumps(answers)


def test_a_soon_file_for_another_split_is_told_which(srv: Server, tmp_path: Path) -> None:
    """SOON's episodes are ``"<instr_id>#<k>"`` (one per start) while its files name records by
    ``instr_id``: the split hint compares instruction ids."""
    from tests.tasks.soon.soon_fixtures import EPISODES, soon_preds, soon_root

    renamed = [{**ep, "instr_id": f"v{ep['instr_id']}"} for ep in EPISODES]
    root = soon_root(tmp_path / "root", episodes=renamed)
    (root / "soon" / "train.json").write_text(json.dumps(EPISODES))
    admin.create_phase(srv.db, "demo", "w-soon", task="soon", split="val", data_root=str(root))
    got = _submit(srv, "w-soon", json.dumps(soon_preds()).encode(), "soon.json")
    assert got["status"] == "failed" and got["error_kind"] == "invalid"
    first = got["messages"][0]
    assert "no prediction matches an episode of soon val" in first
    assert "are episodes of soon train" in first
    assert "was the file made for train?" in first
