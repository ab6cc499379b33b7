"""The agent protocol: what ``vlneval run`` needs from an agent, yours included.

An agent is any class with two methods; vlneval makes one instance per batch slot and calls,
for every episode::

    agent.reset(observation, rng=rng)          # new episode; rng: its own np.random.Generator
    action = agent.act(observation)            # until the agent returns STOP (0) or the limit

Observations are the environment's dicts (:mod:`vlneval.envs.graph.observation`): ``instruction``,
``scan``, ``viewpoint``, ``heading``, ``elevation``, ``view_index``, ``step``, ``candidates``
(entry 0 is where the agent stands: choosing it is STOP) and ``features`` when a features file is
given. Actions are integers (:mod:`vlneval.envs.spaces`): ``k`` moves to ``candidates[k]``; in the
egocentric space ``TURN_LEFT``, ``TURN_RIGHT``, ``LOOK_UP`` and ``LOOK_DOWN`` turn by 30°.

Optional class attributes and methods:

- ``action_spaces``: the spaces the agent acts in, default first
  (default ``("panoramic", "egocentric")``);
- ``privileged = True``: the agent needs goals or teacher actions; ``reset`` then also receives
  ``teacher=`` (a :class:`~vlneval.envs.graph.privileged.Teacher`) and the run's protocol card says
  the result is privileged;
- ``finish(observation) -> dict | None``: called once at the end of each episode with its final
  observation; the fields it returns join the prediction record (e.g. ``{"predObjId": ...}``);
- ``protocol``: a dict of protocol-card fields the agent declares (``model``,
  ``checkpoint_selection``...).

The same seed must give the same actions (draw randomness from ``rng`` only). Check an agent
with :func:`vlneval.agents.check_agent`, run it with
``vlneval run --task demo --agent package.module:Class --out preds.json``.

Example: an agent that walks to the nearest candidate three times, then stops.

    >>> from vlneval.envs.spaces import STOP
    >>> class NearestThrice:
    ...     action_spaces = ("panoramic",)
    ...     def reset(self, observation, *, rng):
    ...         self.moves = 0
    ...     def act(self, observation):
    ...         cands = observation["candidates"]
    ...         if self.moves == 3 or len(cands) == 1:
    ...             return STOP
    ...         self.moves += 1
    ...         return min(range(1, len(cands)), key=lambda k: cands[k].distance)
    >>> from vlneval.agents import check_agent
    >>> check_agent(NearestThrice)["action_spaces"]
    ['panoramic']
"""

from __future__ import annotations

import functools
import inspect
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from vlneval.envs.continuous.spaces import CONTINUOUS_SPACES
from vlneval.envs.spaces import SPACES
from vlneval.errors import AgentError, VLNEvalError

__all__ = [
    "Agent", "AgentInfo", "describe_agent", "bind_agent_args", "agent_error", "call_agent",
    "ALL_SPACES",
]  # fmt: skip

ALL_SPACES = ("panoramic", "egocentric")
#: Every action space an agent may name: the graph spaces, then the continuous ones.
KNOWN_SPACES = (*SPACES, *CONTINUOUS_SPACES)


@runtime_checkable
class Agent(Protocol):
    """The two methods every agent implements (see the module docstring)."""

    def reset(self, observation: dict[str, Any], *, rng: np.random.Generator) -> None:
        """Starts an episode."""
        ...

    def act(self, observation: dict[str, Any]) -> int:
        """The next action."""
        ...


@dataclass(frozen=True)
class AgentInfo:
    """What vlneval knows about an agent before running it.

    Attributes:
        id: the registry id (``random-v1``) or ``package.module:Class``.
        factory: makes one agent instance (called once per batch slot).
        action_spaces: the spaces it acts in, default first.
        privileged: whether it needs the privileged channel.
        protocol: protocol-card fields it declares.
        entry_point: where it lives (``module:qualname``).
    """

    id: str
    factory: Callable[[], Any]
    action_spaces: tuple[str, ...]
    privileged: bool
    protocol: Mapping[str, Any] = field(default_factory=dict)
    entry_point: str = ""
    # the instance describe_agent made to read a factory's attributes: the first make() takes
    # it (a factory is called once per slot, not once more); dataclasses.replace drops it
    _spare: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)

    def space(self, requested: str | None) -> str:
        """The action space to run in: ``requested`` if the agent supports it, else its default."""
        if requested is None:
            return self.action_spaces[0]
        if requested not in self.action_spaces:
            raise VLNEvalError(
                f"agent {self.id} acts in the {' or '.join(self.action_spaces)} action space, "
                f"not {requested}: drop --action-space or pass one of those"
            )
        return requested

    def make(self) -> Any:
        """One agent instance; an exception of its constructor is an :class:`AgentError`."""
        try:
            return self._spare.pop()
        except IndexError:
            pass
        try:
            return self.factory()
        except Exception as exc:
            raise agent_error(self.id, "its constructor", exc) from exc


def agent_error(
    agent: str, call: str, exc: Exception, *, episode: str | None = None, step: int | None = None
) -> AgentError:
    """The error for ``exc``, raised by the agent's ``call`` (``act()``...) at ``step`` of
    ``episode``: it names them, and keeps the agent's traceback without vlneval's frames.

    Example:
        >>> try:
        ...     {}["features"]
        ... except KeyError as exc:
        ...     error = agent_error("my:Agent", "act()", exc, episode="100_0", step=2)
        >>> str(error)
        "agent my:Agent: act() raised KeyError at episode 100_0, step 2: 'features'"
        >>> error.agent_traceback.splitlines()[-1]
        "KeyError: 'features'"
    """
    where = "" if episode is None else f" at episode {episode}"
    where += "" if step is None else f", step {step}"
    if isinstance(exc, VLNEvalError):  # vlneval's own message (a remote agent's answer...)
        return AgentError(f"agent {agent}: {call}{where}: {exc}")
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__", "").startswith("vlneval."):
        tb = tb.tb_next  # the calls into the agent; its own frames follow
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    return AgentError(f"agent {agent}: {call} raised {type(exc).__name__}{where}: {exc}", text)


def call_agent(agent: str, what: str, method: Any, obs: Any, episode: str | None, **kw: Any) -> Any:
    """``method(obs, **kw)``: an agent's ``reset`` or ``act`` in ``episode``, its exception
    turned into :func:`agent_error` (with the observation's step)."""
    try:
        return method(obs, **kw)
    except Exception as exc:
        step = obs.get("step")
        raise agent_error(agent, what, exc, episode=episode, step=step) from exc


def describe_agent(
    agent_id: str, factory: Callable[..., Any], kwargs: Mapping[str, Any] | None = None
) -> AgentInfo:
    """The :class:`AgentInfo` of ``factory`` (a class, or a callable returning an agent) given
    the constructor arguments ``kwargs`` (``--agent-arg``): a function's agent, whose
    attributes are read, is made with them.

    Raises:
        VLNEvalError: ``factory`` is not callable, takes no such argument, or what it makes is
            not an agent.
        AgentError: the factory (not a class) raised when called to read its agent's attributes.
    """
    if not callable(factory):
        raise VLNEvalError(
            f"agent {agent_id} is a {type(factory).__name__}, not a class or a function "
            "returning an agent"
        )
    made = not isinstance(factory, type)
    entry = (
        f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', repr(factory))}"
    )
    bound = bind_agent_args(agent_id, factory, kwargs or {})
    probe = AgentInfo(agent_id, bound, ALL_SPACES, False).make() if made else factory
    spaces = tuple(getattr(probe, "action_spaces", ALL_SPACES))
    unknown = [s for s in spaces if s not in KNOWN_SPACES]
    if not spaces or unknown or not all(isinstance(s, str) for s in spaces):
        raise VLNEvalError(
            f"agent {agent_id}: action_spaces must name some of {', '.join(KNOWN_SPACES)}, "
            f"got {spaces!r}"
        )
    privileged = getattr(probe, "privileged", False)
    if not isinstance(privileged, bool):
        raise VLNEvalError(
            f"agent {agent_id}: privileged must be True or False, got {privileged!r}"
        )
    protocol = getattr(probe, "protocol", {})
    if not isinstance(protocol, Mapping):
        raise VLNEvalError(f"agent {agent_id}: protocol must be a dict of card fields")
    for method in ("reset", "act"):
        if not callable(getattr(probe, method, None)):
            raise VLNEvalError(
                f"agent {agent_id} has no {method}() method (see vlneval.agents.base)"
            )
    info = AgentInfo(agent_id, bound, spaces, privileged, dict(protocol), entry)
    if made:
        info._spare.append(probe)
    return info


def bind_agent_args(
    agent_id: str, factory: Callable[..., Any], kwargs: Mapping[str, Any]
) -> Callable[..., Any]:
    """``factory`` passing ``kwargs`` (itself when there are none).

    Raises:
        VLNEvalError: the factory takes no such argument (names those it takes).
    """
    if not kwargs:
        return factory
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for key in kwargs:
        if not var_kw and key not in params:
            names = ", ".join(params) or "none"
            raise VLNEvalError(
                f"agent {agent_id} takes no {key}= argument (its constructor takes: {names}); "
                "see vlneval.distributed.checkpoint"
            )
    return functools.partial(factory, **kwargs)
