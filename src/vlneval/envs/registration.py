"""The environment registry (Gymnasium's registration style) and :func:`make_env`.

An id is ``name-vN``; asking for ``name`` gives its latest version, a wrong version lists the
known ones and an unknown name suggests the closest (:class:`vlneval.registry.Registry`).
Entry points are strings, so registering imports no environment module.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_type_hints

from vlneval.envs.graph.objects import object_task_setup
from vlneval.envs.graph.vector import VectorGraphNavEnv
from vlneval.envs.loading import load_episodes
from vlneval.envs.street.loading import is_street_task, load_street_episodes
from vlneval.errors import VLNEvalError
from vlneval.registry import Registry, load_entry_point
from vlneval.tasks import get_task

__all__ = ["ENVS", "make_env", "check_family", "env_family", "run_env"]

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
    by default: no downloads) as ``vlneval run`` loads them: the street environment reads the
    task's routes and street graph, a graph environment an object task's boxes too (its
    ``objects`` sensor). ``kwargs`` are the environment's own arguments (``max_steps``...) and
    the task's options that choose what is loaded (``data_version``, ``bboxes``).

    Raises:
        VLNEvalError: a keyword that is neither (naming what is accepted); a task option that
            does not choose the episodes, or given with ``episodes``; missing data.

    Example:
        >>> env = make_env("graph-egocentric")
        >>> env.action_space.name, len(env)
        ('egocentric', 36)
        >>> make_env("street", task="touchdown", date_version="unseen")
        Traceback (most recent call last):
        ...
        vlneval.errors.VLNEvalError: make_env('street-v1'): no keyword argument 'date_version' (the environment takes max_steps, privileged, seed; task touchdown's options: data_version)
    """
    spec = ENVS.spec(env_id)
    if episodes is None:
        check_family(task, spec.id, said=f"make_env: {spec.id}")
    factory = spec.load() if num_envs is None else VectorGraphNavEnv
    loader = episode_loader(task, env_family(spec.id)) if episodes is None else None
    options = _task_options(spec.id, factory, task, kwargs, loader)
    kwargs = {k: v for k, v in kwargs.items() if k not in options}
    if loader is not None:
        loaded = loader(task, split, root=root, graphs=graphs, **options)
        if not isinstance(loaded, tuple):  # an object task's setup: its sensor, its notes
            kwargs.setdefault("sensors", loaded.sensors)
            for note in loaded.notes:
                warnings.warn(note, stacklevel=2)
            loaded = loaded.episodes, loaded.graphs
        episodes, graphs = loaded[0], graphs or loaded[1]
    if graphs is None:
        raise VLNEvalError(
            "make_env: pass graphs= (a GraphStore, GraphWorld or folder) with episodes="
        )
    if num_envs is None:
        return spec.make(episodes=episodes, graphs=graphs, **kwargs)
    return VectorGraphNavEnv(episodes, graphs, num_envs=num_envs, **{**spec.kwargs, **kwargs})


def env_family(env_id: str) -> str:
    """The family of a registered environment (``graph``, ``street``, ``continuous``).

    Example:
        >>> env_family("graph-egocentric-v1"), env_family("street-v1")
        ('graph', 'street')
    """
    return env_id.split("-", 1)[0]


def check_family(task: str, env_id: str, *, said: str) -> None:
    """Refuses an environment the task cannot run in (a street task: street; a continuous
    task: continuous; others: graph or continuous), naming the ones it can; ``said``: how the
    message names the environment.

    Raises:
        VLNEvalError: e.g. ``--env street-v1 is not a graph or continuous environment, and task
            demo runs in one of those: use graph-egocentric-v1, ...``.

    Example:
        >>> check_family("touchdown", "graph-panoramic-v1", said="graph-panoramic-v1")
        Traceback (most recent call last):
        ...
        vlneval.errors.VLNEvalError: graph-panoramic-v1 is not a street environment, and task touchdown runs in one: use street-v1 (see `vlneval agents`)
    """
    t = get_task(task)
    if is_street_task(t.name):
        families: tuple[str, ...] = ("street",)
    else:
        families = ("continuous",) if t.run_env else ("graph", "continuous")
    if env_family(env_id) in families:
        return
    default = ENVS.spec(t.run_env).id if t.run_env else None
    fits = sorted(
        (s.id for s in ENVS.latest() if env_family(s.id) in families),
        key=lambda i: (i != default, families.index(env_family(i)), i),
    )
    fits = [f"{i} (the default)" if i == default else i for i in fits]
    use = ", ".join(fits[:-1]) + " or " + fits[-1] if len(fits) > 1 else fits[0]
    raise VLNEvalError(
        f"{said} is not a {' or '.join(families)} environment, and task {t.name} "
        f"runs in {'one' if len(families) == 1 else 'one of those'}: use {use} "
        "(see `vlneval agents`)"
    )


def run_env(
    task: str, env: str | None, action_space: str | None, *, said: str = "env"
) -> tuple[str | None, str | None]:
    """The full id of the environment a run of ``task`` uses (``env``, else the task's own;
    None: the graph environment) and the action space it runs in: a graph environment's id
    sets it. ``said``: how messages name the option that gave ``env``.

    Raises:
        VLNEvalError: ``env`` is of a family the task does not run in (:func:`check_family`),
            or a graph environment whose action space is not ``action_space``.

    Example:
        >>> run_env("r2r", "graph-panoramic", None), run_env("r2r", None, "egocentric")
        (('graph-panoramic-v1', 'panoramic'), (None, 'egocentric'))
        >>> run_env("r2r-ce", None, None)[0]
        'continuous-r2r-ce-v1'
        >>> run_env("r2r", "graph-panoramic", "egocentric", said="--env")
        Traceback (most recent call last):
        ...
        vlneval.errors.VLNEvalError: --env graph-panoramic-v1 has the panoramic action space, not egocentric
    """
    t = get_task(task)
    if env is None:
        return (ENVS.spec(t.run_env).id if t.run_env else None), action_space
    spec = ENVS.spec(env)
    check_family(t.name, spec.id, said=f"{said} {spec.id}")
    space = spec.kwargs.get("action_space") if env_family(spec.id) == "graph" else None
    if space is None:
        return spec.id, action_space
    if action_space not in (None, space):
        raise VLNEvalError(f"{said} {spec.id} has the {space} action space, not {action_space}")
    return spec.id, space


def episode_loader(task: str, family: str) -> Callable[..., Any]:
    """What loads ``task``'s split in an environment of ``family`` (:func:`make_env` and
    ``vlneval run`` alike): a street task's routes, an object task's setup, or the episodes.

    Example:
        >>> episode_loader("touchdown", "street").__name__, episode_loader("r2r", "graph").__name__
        ('load_street_episodes', 'load_episodes')
    """
    if family == "street":
        return load_street_episodes
    if family == "graph" and get_task(task).object_boxes:
        return object_task_setup
    return load_episodes


def _task_options(
    env_id: str, factory: Any, task: str, kwargs: dict[str, Any], loader: Any
) -> dict[str, Any]:
    """The task's options among ``kwargs``, checked (the others are the environment's): each
    must be one that ``loader`` takes (None: ``episodes`` were given, none applies)."""
    t = get_task(task)
    own = _keywords(factory)
    unknown = [k for k in kwargs if k not in t.option_names and own is not None and k not in own]
    if unknown:
        raise VLNEvalError(
            f"make_env({env_id!r}): no keyword argument{'s' * (len(unknown) > 1)} "
            f"{', '.join(map(repr, unknown))} (the environment takes "
            f"{', '.join(sorted(own or ()))}; task {t.name}'s options: "
            f"{', '.join(t.option_names) or 'none'})"
        )
    options = t.check_options({k: v for k, v in kwargs.items() if k in t.option_names})
    reader = loader if loader is not load_episodes else t.loader  # episodes: the task's reader
    reader = load_entry_point(reader) if isinstance(reader, str) else reader
    takes = set() if loader is None else (_keywords(reader) or set()) & set(t.option_names)
    wrong = sorted(set(options) - takes)
    if wrong:
        why = "it changes the scoring only; options that choose the episodes: "
        why = (
            "episodes= are given" if loader is None else why + (", ".join(sorted(takes)) or "none")
        )
        raise VLNEvalError(
            f"make_env({env_id!r}): task {t.name}'s option {', '.join(wrong)} does not apply "
            f"({why})"
        )
    return options


def _keywords(factory: Any, *, passed_on: bool = False) -> set[str] | None:
    """The keyword arguments ``factory`` takes besides the data (with those it passes on to the
    class it returns, through ``**kwargs``); None: it does not say."""
    params = inspect.signature(factory).parameters.values()
    kinds = (inspect.Parameter.KEYWORD_ONLY,) + (
        (inspect.Parameter.POSITIONAL_OR_KEYWORD,) * (not passed_on)
    )
    names = {p.name for p in params if p.kind in kinds}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        try:  # a return type named only for type checkers says nothing here
            made = get_type_hints(factory).get("return")
        except NameError:
            return None
        more = _keywords(made, passed_on=True) if inspect.isclass(made) else None
        if more is None:
            return None
        names |= more
    return names - {"episodes", "graphs", "task", "split", "root", "episodes_file"}
