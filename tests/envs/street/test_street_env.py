"""The street environment (Touchdown): hand-worked moves, the information boundary, the teacher,
``vlneval run --task touchdown`` and the baselines on the real dev routes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.tasks.touchdown.fixture import ROUTES, make_root, route
from vlneval.agents.registry import get_agent
from vlneval.agents.street import run_street
from vlneval.cli.main import main
from vlneval.envs import ENVS
from vlneval.envs.core import PrivilegeError
from vlneval.envs.leaks import find_values
from vlneval.envs.spaces import STOP, TURN_LEFT, TURN_RIGHT
from vlneval.envs.street.env import StreetNavEnv
from vlneval.envs.street.loading import load_street_episodes
from vlneval.envs.street.moves import FORWARD, link_table, street_transition
from vlneval.errors import InvalidActionError, InvalidInputError, VLNEvalError
from vlneval.evaluation import evaluate
from vlneval.graph.street import StreetGraph, parse_street_graph
from vlneval.tasks.common.episodes import EpisodeTable

# A crossing c with links north (n), east (e), south (s) and west (w); w is a dead end with one
# outgoing link (the border); n, e and s continue to x, which links back to c only.
CROSS = parse_street_graph(
    [f"{p},0,40,-73" for p in ["c", "n", "e", "s", "w", "x"]],
    ["c,0,n", "c,90,e", "c,180,s", "c,270,w", "n,180,c", "n,10,x", "e,270,c", "e,95,x",
     "s,0,c", "s,190,x", "w,90,c", "x,0,c"],
)  # fmt: skip
C, N, E, S, W, X = range(6)


def table(
    routes: list[tuple[str, ...]],
    headings: list[float] | None = None,
    texts: list[str] | None = None,
) -> EpisodeTable:
    n = len(routes)
    return EpisodeTable(
        "touchdown", "dev", "t.json", "route_id", [str(10 + k) for k in range(n)], ["nyc"] * n,
        routes, [(r[-1],) for r in routes], np.radians(np.asarray(headings or [0.0] * n)),
        texts or ["walk"] * n,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("node", "heading", "action", "expected"),
    [
        (C, 0, FORWARD, (N, 10)),  # along 0; at n the link nearest 0 is 10
        (C, 80, FORWARD, (E, 95)),  # nearest link is 90; at e nearest 90 is 95
        (C, 135, FORWARD, (E, 95)),  # tie 90 / 180: the first link in the file wins
        (C, 270, FORWARD, (C, 270)),  # w has one outgoing link: the border, refused
        (C, 0, TURN_RIGHT, (C, 90)),
        (C, 0, TURN_LEFT, (C, 270)),
        (C, 45, TURN_LEFT, (C, 0)),  # from a heading between links: the next one round
        (C, 45, TURN_RIGHT, (C, 90)),
        (C, 270, TURN_RIGHT, (C, 0)),  # wraps through north
        (N, 180, TURN_RIGHT, (N, 10)),  # two links: either turn faces the other one
        (N, 180, TURN_LEFT, (N, 10)),
        (W, 90, TURN_LEFT, (W, 90)),  # one link: turning is refused too (the simulator's rule)
        (X, 0, FORWARD, (C, 0)),
    ],
)
def test_hand_worked_moves(node: int, heading: int, action: int, expected: tuple[int, int]) -> None:
    assert street_transition(link_table(CROSS), node, heading, action) == expected


def test_reset_step_observation_and_record() -> None:
    env = StreetNavEnv(table([("c", "e", "x")], headings=[80.0], texts=["go east"]), CROSS)
    obs, info = env.reset(options={"episode": "10"})
    assert info == {"steps": 0}
    assert set(obs) == {"instruction", "panorama", "heading", "links", "candidates", "step"}
    assert (obs["instruction"], obs["panorama"], obs["heading"]) == ("go east", "c", 80)
    links = [tuple(k) for k in obs["links"]]  # sorted by relative heading
    assert links == [("w", 270, -170), ("n", 0, -80), ("e", 90, 10), ("s", 180, 100)]
    assert obs["candidates"] == ("c", "e")
    obs, reward, terminated, truncated, info = env.step(FORWARD)
    assert (obs["panorama"], obs["heading"], obs["step"], reward) == ("e", 95, 1, 0.0)
    assert not terminated and not truncated
    obs, *_ = env.step(TURN_LEFT)  # faces 270 (back to c): no new panorama recorded
    assert (obs["panorama"], obs["heading"]) == ("e", 270)
    obs, _, terminated, truncated, info = env.step(STOP)
    assert terminated and not truncated and info == {"steps": 3, "stopped": True}
    assert env.prediction() == {"route_id": 10, "trajectory": ["c", "e"]}
    with pytest.raises(VLNEvalError, match="call reset"):
        env.step(STOP)


def test_step_limit_and_bad_actions() -> None:
    env = StreetNavEnv(table([("c", "n")]), CROSS, max_steps=2)
    env.reset(options={"episode": 0})
    with pytest.raises(
        InvalidActionError, match=r"episode 10: step 0: action 2 .*-2 \(TURN_RIGHT\)"
    ):
        env.step(2)
    with pytest.raises(InvalidActionError):
        env.step(True)  # type: ignore[arg-type]
    env.step(TURN_RIGHT)
    _, _, terminated, truncated, info = env.step(TURN_RIGHT)
    assert truncated and not terminated and info["stopped"] is False
    with pytest.raises(VLNEvalError, match="positive integer"):
        StreetNavEnv(table([("c", "n")]), CROSS, max_steps=0)


def test_unknown_route_panorama_is_one_clear_error() -> None:
    with pytest.raises(InvalidInputError, match=r'route_id "10".*route_panoids\[1\].*panorama q'):
        StreetNavEnv(table([("c", "q")]), CROSS)
    routes = dataclasses.replace(table([("c", "q")]), int_ids=True)  # Touchdown's: JSON integers
    with pytest.raises(InvalidInputError, match=r"route_id 10: route_panoids\[1\]: panorama q"):
        StreetNavEnv(routes, CROSS)


def _walk(env: StreetNavEnv, episode: int, actions: list[int]) -> list[Any]:
    obs, info = env.reset(options={"episode": episode})
    stream: list[Any] = [obs, info]
    for a in actions:
        obs, _, terminated, truncated, info = env.step(a)
        stream += [obs, info]
        if terminated or truncated:
            break
    return stream


def test_observations_do_not_depend_on_the_route() -> None:
    rng = np.random.default_rng(0)
    actions = [int(a) for a in rng.choice([FORWARD, TURN_LEFT, TURN_RIGHT], size=40)]
    one = StreetNavEnv(table([("c", "e", "x")]), CROSS)
    other = StreetNavEnv(table([("c", "s", "x", "c", "w")]), CROSS)
    assert _walk(one, 0, actions) == _walk(other, 0, actions)


def test_no_observation_field_holds_the_goal_or_route() -> None:
    """The goal may only appear as the panorama the agent stands on or a link's target (what
    it sees), and then it is a graph neighbour; the route appears nowhere as a sequence."""
    ids = {p: f"Pano{p.upper()}7" for p in CROSS.ids}  # distinct from every key and text
    graph = StreetGraph([ids[p] for p in CROSS.ids], CROSS.yaw, CROSS.latlng, CROSS.link_src,
                        CROSS.link_dst, CROSS.link_heading)  # fmt: skip
    routes = [
        tuple(ids[p] for p in r) for r in [("c", "e", "x"), ("s", "x", "c", "n"), ("x", "c", "w")]
    ]
    env = StreetNavEnv(table(routes), graph)
    rng = np.random.default_rng(1)
    for i, r in enumerate(routes):
        actions = [int(a) for a in rng.choice([FORWARD, TURN_LEFT, TURN_RIGHT], size=30)]
        for item in _walk(env, i, actions):
            if "links" not in item:
                assert find_values(item, strings=[r[-1]], runs=[r]) == []
                continue
            seen = ["['panorama']"] + [
                f"['links'][{k}].panorama" for k in range(len(item["links"]))
            ]
            seen += [f"['candidates'][{k}]" for k in range(len(item["candidates"]))]
            assert find_values(item, strings=[r[-1]], runs=[r], skip=seen) == []
            here = graph.index[item["panorama"]]
            assert {k.panorama for k in item["links"]} == {
                graph.ids[t] for t in link_table(graph).links(here)[1]
            }


def test_privileged_channel_needs_asking() -> None:
    env = StreetNavEnv(table([("c", "e")]), CROSS)
    env.reset(options={"episode": 0})
    with pytest.raises(PrivilegeError, match="privileged=True"):
        env.privileged()
    assert env.protocol()["privileged"] == "none"


def test_teacher_follows_the_route_and_recovers_off_it() -> None:
    env = StreetNavEnv(table([("s", "c", "n", "x")], headings=[0.0]), CROSS, privileged=True)
    env.reset(options={"episode": 0})
    teacher = env.privileged()
    assert teacher.goals() == ("x",) and teacher.reference_path() == ("s", "c", "n", "x")
    assert teacher.distance_to_goal() == 1.0  # s - x is one hop on the undirected graph
    env.step(FORWARD)  # s -> c, facing 0
    env.step(TURN_RIGHT)  # off the plan: facing e
    assert teacher.action() == TURN_LEFT
    env.step(FORWARD)  # c -> e: off the route
    assert teacher.next_viewpoint() == "x"  # shortest along links: e -> x
    assert "5 calls" in env.protocol()["privileged"]


def test_the_teacher_s_distance_reads_the_goal_s_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """One search per goal (``StreetGraph.hops_from``, cached), not a pair search per step."""
    env = StreetNavEnv(table([("s", "c", "n", "x")], headings=[0.0]), CROSS, privileged=True)
    env.reset(options={"episode": 0})
    teacher = env.privileged()

    def no_pair_search(*args: Any) -> None:
        raise AssertionError("a pair search per step")

    monkeypatch.setattr(type(CROSS), "hops", no_pair_search)
    seen = [teacher.distance_to_goal()]
    env.step(FORWARD)  # s -> c
    seen.append(teacher.distance_to_goal())
    assert seen == [1.0, 1.0] == [CROSS.hops_from(X)[S], CROSS.hops_from(X)[C]]


def test_shortest_and_stop_on_the_fixture_routes(tmp_path: Path) -> None:
    extra = route(4, ["p5", "p6"])  # starts one hop from its goal
    root = make_root(tmp_path, routes=[ROUTES[1], ROUTES[2], extra])
    episodes, graph = load_street_episodes("touchdown", "dev", root=root)
    shortest = run_street(get_agent("shortest"), episodes, graph)
    assert [r["trajectory"] for r in shortest.records] == [
        ["p0", "p1", "p2", "p5"], ["p3", "p2", "p5", "p6"], ["p5", "p6"],
    ]  # fmt: skip
    # route 2: forward (p0's only link), forward, left to 270, forward, stop; route 3: forward
    # (tie 180 / 0 at heading 90: the file's first link), right, forward, forward, stop;
    # route 4: left (to 270), forward, stop
    assert shortest.steps == 5 + 5 + 3 and shortest.truncated == 0
    stop = run_street(get_agent("stop"), episodes, graph)
    assert [r["trajectory"] for r in stop.records] == [["p0"], ["p3"], ["p5"]]
    assert stop.protocol["action_space"]["name"] == "street"


def test_cli_run_scores_touchdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_root(tmp_path, routes=[ROUTES[1], ROUTES[2]])
    out, summary = tmp_path / "nav.json", tmp_path / "s.json"
    args = ["run", "--task", "touchdown", "--split", "dev", "--data-root", str(root),
            "--data-version", "unseen", "--agent", "shortest", "--out", str(out), "--score",
            "--json", str(summary), "--quiet"]  # fmt: skip
    assert main(args) == 0
    assert capsys.readouterr() == ("", "")  # --quiet: no 'ran ... wrote' line, no table
    assert json.loads(out.read_text())[0] == {"route_id": 2, "trajectory": ["p0", "p1", "p2", "p5"]}
    result = json.loads(summary.read_text())
    assert result["metrics"]["TC"] == 1.0 and result["metrics"]["SED"] == 1.0
    card = json.loads((tmp_path / "nav.protocol.json").read_text())
    assert card["action_space"]["name"] == "street" and "teacher" in card["privileged"]


def test_street_env_is_registered() -> None:
    env = ENVS.make("street", episodes=table([("c", "n")]), graphs=CROSS)
    assert isinstance(env, StreetNavEnv)


def _real(data_root: Path) -> tuple[EpisodeTable, StreetGraph]:
    return load_street_episodes("touchdown", "dev", root=data_root, data_version="unseen")


def test_shortest_is_perfect_on_real_dev(data_root: Path, tmp_path: Path) -> None:
    episodes, graph = _real(data_root)
    result = run_street(get_agent("shortest"), episodes, graph)
    assert result.truncated == 0
    path = tmp_path / "shortest.json"
    path.write_text(json.dumps(result.records))
    ev = evaluate("touchdown", "dev", path, root=data_root, options={"data_version": "unseen"})
    assert ev.metrics["TC"] == 1.0 and ev.metrics["SED"] == 1.0
    assert ev.metrics["SPD"] == 0.0


def test_stop_completes_only_next_to_the_goal_on_real_dev(data_root: Path, tmp_path: Path) -> None:
    episodes, graph = _real(data_root)
    result = run_street(get_agent("stop"), episodes, graph)
    path = tmp_path / "stop.json"
    path.write_text(json.dumps(result.records))
    ev = evaluate("touchdown", "dev", path, root=data_root, options={"data_version": "unseen"})
    starts = np.array([graph.index[p[0]] for p in episodes.paths])
    goals = np.array([graph.index[p[-1]] for p in episodes.paths])
    adjacent = graph.hops(starts, goals) <= 1
    assert ev.per_episode["task_completion"].tolist() == adjacent.astype(float).tolist()
    assert int(adjacent.sum()) == 4  # 4 of the 800 unseen-split dev routes


def test_cli_refuses_graph_options_for_touchdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_root(tmp_path, routes=[ROUTES[1]])
    args = ["run", "--task", "touchdown", "--data-root", str(root), "--agent", "stop",
            "--out", str(tmp_path / "n.json"), "--action-space", "panoramic"]  # fmt: skip
    assert main(args) == 2
    assert "street action space" in capsys.readouterr().err


def test_run_street_checks_indices_as_graph_runs_do() -> None:
    # before, an index outside the split failed only when its turn came (after the routes
    # before it had run), and a repeated index ran its route twice
    episodes = table([("c", "n"), ("c", "e")])
    for bad in ([2], [0, 0]):
        with pytest.raises(VLNEvalError, match=r"t\.json: indices must be distinct .* 0\.\.1"):
            run_street(get_agent("stop"), episodes, CROSS, indices=bad)
    assert [
        r["route_id"] for r in run_street(get_agent("stop"), episodes, CROSS, indices=[1]).records
    ] == [11]
