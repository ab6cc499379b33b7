"""The environment registry (Gymnasium's registration style) and :func:`make_env`.

An id is ``name-vN``; asking for ``name`` gives its latest version, a wrong version lists the
known ones and an unknown name suggests the closest (:class:`vlneval.registry.Registry`).
Entry points are strings, so registering imports no environment module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlneval.envs.graph.vector import VectorGraphNavEnv
from vlneval.envs.loading import load_episodes
from vlneval.errors import VLNEvalError
from vlneval.registry import Registry

__all__ = ["ENVS", "make_env"]

ENVS: Registry[Any] = Registry("environment", versioned=True)
ENVS.register(
    "graph-panoramic-v1",
    "vlneval.envs.graph.env:GraphNavEnv",
    description="navigation graph, panoramic actions (choose a neighbour or STOP)",
    kwargs={"action_space": "panoramic"},
)
ENVS.register(
    "graph-egocentric-v1",
    "vlneval.envs.graph.env:GraphNavEnv",
    description="navigation graph, the R2R simulator's egocentric actions (30-degree turns)",
    kwargs={"action_space": "egocentric"},
)
ENVS.register(
    "street-v1",
    "vlneval.envs.street.env:StreetNavEnv",
    description="Touchdown street graph: forward along a link, turn to the next link, stop",
)
# Continuous environments (vlneval.envs.continuous.env) in the twin worlds of the episodes' scans.
for _space, _what in (
    ("r2r-ce", "discrete steps 0.25 m / 15 degrees, sliding (VLN-CE R2R)"),
    ("rxr-ce", "discrete steps 0.25 m / 30 degrees, look up/down, no sliding (VLN-CE RxR)"),
    ("velocity", "velocities (m/s, rad/s) held for 0.25 s, unicycle model"),
    ("waypoint", "waypoints up to 3 m, grid planner and path follower"),
):
    ENVS.register(
        f"continuous-{_space}-v1",
        "vlneval.envs.continuous.env:make_continuous_env",
        description=f"continuous twin world, {_what}",
        kwargs={"action_space": _space},
    )


def make_env(
    env_id: str,
    episodes: Any = None,
    graphs: Any = None,
    *,
    task: str = "demo",
    split: str | None = None,
    root: str | Path | None = None,
    num_envs: int | None = None,
    **kwargs: Any,
) -> Any:
    """Builds a registered environment; ``num_envs`` gives its vectorised form.

    Without ``episodes``, the episodes and graphs of ``task``/``split`` are loaded (the demo task
    by default: no downloads).

    Example:
        >>> env = make_env("graph-egocentric")
        >>> env.action_space.name, len(env)
        ('egocentric', 36)
    """
    spec = ENVS.spec(env_id)
    if episodes is None:
        episodes, loaded = load_episodes(task, split, root=root, graphs=graphs)
        graphs = graphs or loaded
    if graphs is None:
        raise VLNEvalError(
            "make_env: pass graphs= (a GraphStore, GraphWorld or folder) with episodes="
        )
    if num_envs is None:
        return spec.make(episodes=episodes, graphs=graphs, **kwargs)
    return VectorGraphNavEnv(episodes, graphs, num_envs=num_envs, **{**spec.kwargs, **kwargs})
