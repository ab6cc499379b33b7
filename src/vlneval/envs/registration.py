"""Registries of environments and agents with versioned ids (Gymnasium's registration style).

An id is ``name-vN``. Asking for ``name`` gives its latest version; a wrong version lists the
known ones; an unknown name suggests the closest (did you mean...?).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from vlneval.errors import UnknownNameError, VLNEvalError

__all__ = ["Spec", "Registry", "ENVS", "make_env", "parse_id", "load_entry_point"]

T = TypeVar("T")

_ID = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.\-]*?)(?:-v(?P<version>\d+))?$")


def parse_id(env_id: str) -> tuple[str, int | None]:
    """``(name, version)`` of ``name-vN`` (version None when not given).

    Example:
        >>> parse_id("random-walk-v1"), parse_id("random-walk")
        (('random-walk', 1), ('random-walk', None))
    """
    m = _ID.match(env_id)
    if m is None:
        raise VLNEvalError(f"malformed id {env_id!r}: expected name or name-vN (e.g. random-v1)")
    version = m.group("version")
    return m.group("name"), int(version) if version is not None else None


def load_entry_point(target: str) -> Any:
    """The object ``module.path:attribute`` names (a clear error when it cannot be imported)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise VLNEvalError(f"expected package.module:Name, got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise VLNEvalError(
            f"cannot import module {module_name!r} (from {target!r}): {exc}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise VLNEvalError(
                f"module {module_name!r} has no attribute {attr!r} (from {target!r})"
            )
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Spec(Generic[T]):
    """One registered, versioned entry.

    Attributes:
        id: ``name-vN``.
        name, version: its parts.
        entry_point: a callable, or ``module:attribute`` imported on first use.
        description: one line for listings.
        kwargs: arguments the entry point is called with (overridable).
    """

    id: str
    name: str
    version: int
    entry_point: Callable[..., T] | str
    description: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def load(self) -> Callable[..., T]:
        """The entry point, imported if it is a string."""
        ep = self.entry_point
        return load_entry_point(ep) if isinstance(ep, str) else ep  # type: ignore[no-any-return]

    def make(self, **kwargs: Any) -> T:
        """Calls the entry point with ``self.kwargs`` updated by ``kwargs``."""
        return self.load()(**{**self.kwargs, **kwargs})


class Registry(Generic[T]):
    """Versioned ids of one kind of thing (``environment``, ``agent``).

    Example:
        >>> reg: Registry[dict] = Registry("thing")
        >>> _ = reg.register("box-v1", dict, kwargs={"size": 1})
        >>> _ = reg.register("box-v2", dict, kwargs={"size": 2})
        >>> reg.spec("box").id, reg.make("box-v1")
        ('box-v2', {'size': 1})
        >>> try:
        ...     reg.spec("boxes")
        ... except UnknownNameError as e:
        ...     print(e)
        unknown thing 'boxes'; did you mean 'box'? (known: box-v1, box-v2)
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._specs: dict[str, Spec[T]] = {}

    def register(
        self,
        entry_id: str,
        entry_point: Callable[..., T] | str,
        *,
        description: str = "",
        kwargs: Mapping[str, Any] | None = None,
    ) -> Spec[T]:
        """Adds ``entry_id`` (``name-vN``); an id is registered once."""
        name, version = parse_id(entry_id)
        if version is None:
            raise VLNEvalError(f"register a versioned id (name-vN), got {entry_id!r}")
        if entry_id in self._specs:
            raise VLNEvalError(f"{self.kind} {entry_id!r} is already registered")
        spec: Spec[T] = Spec(entry_id, name, version, entry_point, description, dict(kwargs or {}))
        self._specs[entry_id] = spec
        return spec

    def ids(self) -> list[str]:
        """Every registered id, sorted."""
        return sorted(self._specs)

    def latest(self) -> list[Spec[T]]:
        """The latest version of every name."""
        best: dict[str, Spec[T]] = {}
        for s in self._specs.values():
            if s.name not in best or s.version > best[s.name].version:
                best[s.name] = s
        return [best[k] for k in sorted(best)]

    def __contains__(self, entry_id: object) -> bool:
        if not isinstance(entry_id, str):
            return False
        try:
            self.spec(entry_id)
        except VLNEvalError:
            return False
        return True

    def spec(self, entry_id: str) -> Spec[T]:
        """The spec of ``entry_id``; ``name`` alone means its latest version."""
        name, version = parse_id(entry_id)
        versions = sorted(s.version for s in self._specs.values() if s.name == name)
        if not versions:
            known = {s.name for s in self._specs.values()}
            error = UnknownNameError(self.kind, name, known)
            error.args = (f"{error.args[0].split(' (known')[0]} (known: {', '.join(self.ids())})",)
            raise error
        if version is None:
            version = versions[-1]
        if version not in versions:
            raise VLNEvalError(
                f"{self.kind} {name} has no version v{version}; known: "
                + ", ".join(f"{name}-v{v}" for v in versions)
            )
        return self._specs[f"{name}-v{version}"]

    def make(self, entry_id: str, **kwargs: Any) -> T:
        """Builds ``entry_id`` with its registered arguments updated by ``kwargs``."""
        return self.spec(entry_id).make(**kwargs)


ENVS: Registry[Any] = Registry("environment")
ENVS.register(
    "graph-panoramic-v1",
    "vlneval.envs.graph_env:GraphNavEnv",
    description="navigation graph, panoramic actions (choose a neighbour or STOP)",
    kwargs={"action_space": "panoramic"},
)
ENVS.register(
    "graph-egocentric-v1",
    "vlneval.envs.graph_env:GraphNavEnv",
    description="navigation graph, the R2R simulator's egocentric actions (30-degree turns)",
    kwargs={"action_space": "egocentric"},
)
ENVS.register(
    "street-v1",
    "vlneval.envs.street:StreetNavEnv",
    description="Touchdown street graph: forward along a link, turn to the next link, stop",
)
# Continuous environments (vlneval.envs.continuous) in the twin worlds of the episodes' scans.
for _space, _what in (
    ("r2r-ce", "discrete steps 0.25 m / 15 degrees, sliding (VLN-CE R2R)"),
    ("rxr-ce", "discrete steps 0.25 m / 30 degrees, look up/down, no sliding (VLN-CE RxR)"),
    ("velocity", "velocities (m/s, rad/s) held for 0.25 s, unicycle model"),
    ("waypoint", "waypoints up to 3 m, grid planner and path follower"),
):
    ENVS.register(
        f"continuous-{_space}-v1",
        "vlneval.envs.continuous:make_continuous_env",
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
        from vlneval.envs.loading import load_episodes

        episodes, loaded = load_episodes(task, split, root=root, graphs=graphs)
        graphs = graphs or loaded
    if graphs is None:
        raise VLNEvalError("make_env: pass graphs= (a GraphStore, World or folder) with episodes=")
    if num_envs is None:
        return spec.make(episodes=episodes, graphs=graphs, **kwargs)
    from vlneval.envs.vector import VectorGraphNavEnv

    return VectorGraphNavEnv(episodes, graphs, num_envs=num_envs, **{**spec.kwargs, **kwargs})
