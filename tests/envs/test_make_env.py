"""``make_env``'s keywords: the environment's own go to the environment, the task's options that
choose the episodes go to loading them (as ``vlneval run`` and the scorer load them), anything
else is one error naming the environment, the keyword and what is accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasks.touchdown.fixture import ROUTES, make_root
from vlneval.envs.loading import load_episodes
from vlneval.envs.registration import make_env
from vlneval.errors import MissingDataError, UnknownNameError, VLNEvalError
from vlneval.evaluation import Scorer

GRAPH_TAKES = "action_space, features, inputs, max_steps, privileged, seed, sensors"


@pytest.fixture(scope="module")
def street_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Touchdown root with both releases of dev: one route (original), two (unseen)."""
    root = tmp_path_factory.mktemp("touchdown")
    make_root(root, routes=[ROUTES[0]], version="data")
    return make_root(root, routes=[ROUTES[1], ROUTES[2]])


def test_street_env_loads_the_data_version_it_is_given(street_root: Path) -> None:
    where = {"task": "touchdown", "split": "dev", "root": street_root}
    assert make_env("street", **where).episode_ids == ["1"]  # the first release present
    env = make_env("street", **where, data_version="UNSEEN", max_steps=3)  # any case
    assert env.episode_ids == ["2", "3"] and env.max_steps == 3
    with pytest.raises(UnknownNameError, match=r"unknown Touchdown data version 'v2' "):
        make_env("street", **where, data_version="v2")


def test_an_unknown_keyword_is_one_error_naming_what_is_accepted(street_root: Path) -> None:
    with pytest.raises(VLNEvalError) as street:
        make_env("street", task="touchdown", root=street_root, split="dev", data_vers="unseen")
    assert str(street.value) == (
        "make_env('street-v1'): no keyword argument 'data_vers' (the environment takes "
        "max_steps, privileged, seed; task touchdown's options: data_version)"
    )
    with pytest.raises(VLNEvalError) as graph:
        make_env("graph-panoramic", max_step=3, data_version="v1")  # the demo task
    assert str(graph.value) == (
        "make_env('graph-panoramic-v1'): no keyword arguments 'max_step', 'data_version' (the "
        f"environment takes {GRAPH_TAKES}; task demo's options: none)"
    )
    with pytest.raises(VLNEvalError, match=r"takes action_space, batch_sensors, features,"):
        make_env("graph-panoramic", num_envs=2, bogus=1)  # the vectorised form's own


def test_a_task_option_that_does_not_choose_the_episodes_is_refused() -> None:
    with pytest.raises(VLNEvalError) as soon:
        make_env("graph-panoramic", task="soon", angle_units="radians")
    assert str(soon.value) == (
        "make_env('graph-panoramic-v1'): task soon's option angle_units does not apply (it "
        "changes the scoring only; options that choose the episodes: none)"
    )
    episodes, graphs = load_episodes("demo")
    with pytest.raises(VLNEvalError) as given:
        make_env("street", episodes, graphs, task="touchdown", data_version="unseen")
    assert str(given.value) == (
        "make_env('street-v1'): task touchdown's option data_version does not apply (episodes= "
        "are given)"
    )


def test_the_graph_env_s_own_keywords_still_reach_it() -> None:
    env = make_env("graph-egocentric", max_steps=7, seed=3)
    assert (env.action_space.name, env.max_steps, len(env)) == ("egocentric", 7, 36)


def test_real_touchdown_routes_by_data_version(data_root: Path) -> None:
    if not (data_root / "touchdown" / "touchdown_unseen_split").is_dir():
        pytest.skip("no Touchdown unseen split in the data folder")
    where = {"task": "touchdown", "split": "dev", "root": data_root}
    env = make_env("street", **where, data_version="unseen")
    assert len(env) == 800 and env.task == "touchdown"
    with pytest.raises(MissingDataError, match="dev is there for data version unseen"):
        make_env("street", **where, data_version="original")


def test_real_ndh_episodes_follow_the_path_type_as_the_scorer_does(data_root: Path) -> None:
    if not (data_root / "cvdn" / "NDH" / "val_seen.json.gz").is_file():
        pytest.skip("no NDH val_seen in the data folder")
    where = {"task": "ndh", "split": "val_seen", "root": data_root}
    scorer = Scorer("ndh", "val_seen", root=data_root, path_type="player_path")
    env = make_env("graph-panoramic", **where, path_type="Player_Path", privileged=True)
    planner = make_env("graph-panoramic", **where, privileged=True)
    differ = 0
    for i, path in enumerate(scorer.episodes.paths):
        env.reset(options={"episode": i})
        planner.reset(options={"episode": i})
        assert env.privileged().reference_path() == tuple(path)
        differ += planner.privileged().reference_path() != tuple(path)
    assert (len(env), differ) == (382, 353)


def test_real_reverie_release_and_its_object_sensor(data_root: Path) -> None:
    if not (data_root / "reverie" / "BBox.tar.gz").is_file():
        pytest.skip("no REVERIE boxes in the data folder")
    where = {"task": "reverie", "split": "val_seen", "root": data_root}
    with pytest.warns(UserWarning, match="no v2 object boxes found"):
        v2 = make_env("graph-panoramic", **where)  # the v1 boxes: said, as vlneval run says it
    v1 = make_env("graph-panoramic", **where, data_version="V1", sensors=())
    assert (len(v2), len(v1)) == (1384, 1423)
    assert "objects" in v2.reset(options={"episode": 0})[0]  # the task's sensor, as runs have it
    assert "objects" not in v1.reset(options={"episode": 0})[0]  # sensors= given: the caller's


@pytest.mark.parametrize(
    ("task", "env_id", "said"),
    [
        ("r2r-ce", "graph-egocentric", "graph-egocentric-v1 is not a continuous environment, "
         "and task r2r-ce runs in one: use continuous-r2r-ce-v1 (the default), "),
        ("touchdown", "graph-panoramic", "graph-panoramic-v1 is not a street environment, and "
         "task touchdown runs in one: use street-v1 (see `vlneval agents`)"),
        ("demo", "street", "street-v1 is not a graph or continuous environment, and task demo "
         "runs in one of those: use graph-egocentric-v1, graph-panoramic-v1, "),
    ],
)  # fmt: skip
def test_an_environment_of_another_family_is_refused_before_loading(
    task: str, env_id: str, said: str
) -> None:
    with pytest.raises(VLNEvalError) as exc:
        make_env(env_id, task=task)  # no data root needed: refused before loading
    assert str(exc.value).startswith(f"make_env: {said}")


STEPS = (
    "max_steps must be a positive integer up to 10,000 (the environment reserves memory for "
    "every step up front; the standard limits are 35 to 1,000), got {}"
)


@pytest.mark.parametrize("steps", [10**9, 10_001, 0])
@pytest.mark.parametrize(
    ("env_id", "num_envs"),
    [("graph-egocentric", None), ("graph-panoramic", 2), ("street", None),
     ("continuous-velocity", None)],
)  # fmt: skip
def test_a_step_limit_past_the_clis_bound_is_refused_before_anything_is_allocated(
    street_root: Path, env_id: str, num_envs: int | None, steps: int
) -> None:
    where = {"task": "touchdown", "split": "dev", "root": street_root} if env_id == "street" else {}
    with pytest.raises(VLNEvalError) as exc:
        make_env(env_id, **where, num_envs=num_envs, max_steps=steps)
    assert str(exc.value) == STEPS.format(steps)


def test_the_largest_step_limit_is_taken() -> None:
    assert make_env("graph-egocentric", max_steps=10_000).max_steps == 10_000
