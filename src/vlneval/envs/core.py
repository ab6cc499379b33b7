"""The contract every environment family keeps, and the episode bookkeeping they share.

The contract is Gymnasium's, without depending on it: ``reset(*, seed=None, options=None) ->
(observation, info)`` with ``options={"episode": index or id}`` (else an episode drawn from
``np_random``); ``step(action) -> (observation, 0.0, terminated, truncated, info)``: the reward
is always 0.0, since any reward worth computing is derived from the goal. The environment, not
the agent, records the executed path (``trajectory()``, ``prediction()`` in the task's format);
ground truth reaches an agent only through ``privileged()``, which exists only when the
environment was built with ``privileged=True``, and ``protocol()`` puts that on the card.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from vlneval.errors import UnknownNameError, VLNEvalError
from vlneval.io import brief

__all__ = [
    "Env",
    "EpisodeEnv",
    "PrivilegeError",
    "MAX_STEPS",
    "positive_steps",
    "allow_privileged",
    "privileged_card",
    "refuse_unprivileged",
    "budget_card",
]

TeacherT = TypeVar("TeacherT")


class PrivilegeError(VLNEvalError):
    """The privileged channel was used without being requested, or cannot exist."""


@runtime_checkable
class Env(Protocol):
    """What every single-episode environment offers (see the module docstring)."""

    action_space: Any
    max_steps: int
    task: str
    split: str
    id_field: str

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Starts an episode."""
        ...

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Takes one action."""
        ...

    def close(self) -> None:
        """Releases nothing or something."""
        ...

    def trajectory(self) -> list[Any]:
        """The executed path of the current (or last) episode."""
        ...

    def prediction(self) -> dict[str, Any]:
        """The current (or last) episode as a record of the task's predictions format."""
        ...

    def privileged(self) -> Any:
        """The privileged channel (needs ``privileged=True`` at construction)."""
        ...

    def protocol(self) -> dict[str, Any]:
        """The protocol card fields this environment determines."""
        ...

    def __len__(self) -> int: ...


#: The largest step limit: an environment sizes its step and path stores by it up front (per
#: slot), and the standard limits are 35 to 1,000 steps.
MAX_STEPS = 10_000


def positive_steps(value: Any, default: int, name: str = "max_steps") -> int:
    """A step limit: ``default`` for None, else an integer from 1 to :data:`MAX_STEPS`; the one
    check of the library's ``max_steps`` and of ``vlneval run --max-steps`` (``name``).

    Example:
        >>> positive_steps(None, 35), positive_steps(7, 35)
        (35, 7)
        >>> positive_steps(10**9, 35)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        vlneval.errors.VLNEvalError: max_steps must be a positive integer up to 10,000 (...), got 1000000000
    """
    if value is None:
        return default
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not 1 <= value <= MAX_STEPS
    ):
        raise VLNEvalError(
            f"{name} must be a positive integer up to {MAX_STEPS:,} (the environment reserves "
            f"memory for every step up front; the standard limits are 35 to 1,000), "
            f"got {brief(value, 40)}"
        )
    return int(value)


def allow_privileged(privileged: bool, scorable: bool, source: str) -> bool:
    """``privileged``, refused for a split without goals (there is nothing to give)."""
    if privileged and not scorable:
        raise PrivilegeError(
            f"{source}: this split has no goals (a hidden test split), so there is no privileged "
            "information to give: a privileged agent cannot run on it"
        )
    return bool(privileged)


def refuse_unprivileged(hidden: str) -> PrivilegeError:
    """The error of a privileged channel asked for without ``privileged=True``."""
    return PrivilegeError(
        f"this environment was built without privileged=True: {hidden} "
        "(request them at construction; the protocol card will say so)"
    )


def privileged_card(what: str, privileged: bool, calls: int) -> str:
    """The card's ``privileged`` field: what the channel gives and how often it was used.

    Example:
        >>> privileged_card("goals", True, 3), privileged_card("goals", False, 0)
        ('goals through env.privileged(), requested at construction (3 calls)', 'none')
    """
    if not privileged:
        return "none"
    return f"{what} through env.privileged(), requested at construction ({calls} calls)"


def budget_card(max_steps: int, **extra: Any) -> dict[str, Any]:
    """The card's ``inference_budget``: one rollout per episode, STOP counted as a step."""
    return {
        "max_steps": max_steps,
        "stop_counts_as_step": True,
        "search": "none: one rollout per episode",
        **extra,
    }


class EpisodeEnv(Generic[TeacherT]):
    """Episode bookkeeping shared by the single-episode environments, and their privileged
    channel.

    A subclass calls :meth:`_setup` in its constructor, :meth:`_begin` at the top of ``reset``,
    :meth:`_check_running` before applying an action and :meth:`_count_step` after it; it
    builds its teacher in :meth:`_make_teacher` (an object counting its ``calls``).

    Attributes:
        noun: what an episode is called in messages (``route`` for Touchdown).
        hidden: what the privileged channel hides, for the message of a refused request.
        gives: what the privileged channel gives, for the protocol card.

    Example:
        >>> class Counter(EpisodeEnv):
        ...     def __init__(self):
        ...         self._setup(["a", "b"], max_steps=2, default_steps=9, privileged=False,
        ...                     scorable=True, source="x", seed=0)
        >>> env = Counter()
        >>> env._begin(None, {"episode": "b"}), env._count_step(False), env._count_step(False)
        (1, (False, False, {'steps': 1}), (False, True, {'steps': 2, 'stopped': False}))
    """

    noun: ClassVar[str] = "episode"
    hidden: ClassVar[str] = "the goals and teacher actions are hidden"
    gives: ClassVar[str] = "goals and teacher actions"

    max_steps: int
    np_random: np.random.Generator
    _teacher: TeacherT | None = None

    def _setup(
        self,
        ids: Sequence[str],
        *,
        max_steps: Any,
        default_steps: int,
        privileged: bool,
        scorable: bool,
        source: str,
        seed: int | None,
    ) -> None:
        self._ids = list(ids)
        self._index = {k: i for i, k in enumerate(self._ids)}
        self.max_steps = positive_steps(max_steps, default_steps)
        self._privileged = allow_privileged(privileged, scorable, source)
        self.np_random = np.random.default_rng(seed)
        self._i = -1
        self._done = True
        self._steps = 0

    def _begin(self, seed: int | None, options: dict[str, Any] | None) -> int:
        """Reseeds (when asked), picks the episode, zeroes the step count: its index."""
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self._i = self._pick((options or {}).get("episode"))
        self._steps = 0
        self._done = False
        return self._i

    def _check_running(self) -> None:
        if self._done:
            raise VLNEvalError(
                "step() called on an ended episode (or before reset()): call reset() first"
            )

    def _count_step(self, stopped: bool) -> tuple[bool, bool, dict[str, Any]]:
        """Counts the action just taken: ``(terminated, truncated, info)``."""
        self._steps += 1
        if stopped:
            self._done = True
            return True, False, {"steps": self._steps, "stopped": True}
        truncated = self._done = self._steps >= self.max_steps
        info: dict[str, Any] = {"steps": self._steps}
        if truncated:
            info["stopped"] = False
        return False, truncated, info

    def _check_ran(self) -> None:
        if self._i < 0:
            raise VLNEvalError("no episode has been run: call reset() first")

    def _check_privileged(self) -> None:
        if not self._privileged:
            raise refuse_unprivileged(self.hidden)

    def privileged(self) -> TeacherT:
        """The privileged channel (:attr:`gives`); needs ``privileged=True`` at construction."""
        self._check_privileged()
        if self._teacher is None:
            self._teacher = self._make_teacher()
        return self._teacher

    def _make_teacher(self) -> TeacherT:
        raise NotImplementedError

    def _privileged_card(self) -> str:
        calls = getattr(self._teacher, "calls", 0)
        return privileged_card(self.gives, self._privileged, calls)

    def _pick(self, episode: Any) -> int:
        n = len(self._ids)
        if episode is None:
            return int(self.np_random.integers(n))
        if isinstance(episode, str):
            if episode not in self._index:
                raise UnknownNameError(self.noun, episode, self._ids if n <= 30 else [])
            return self._index[episode]
        integer = isinstance(episode, (int, np.integer)) and not isinstance(episode, bool)
        if integer and 0 <= int(episode) < n:
            return int(episode)
        raise VLNEvalError(
            f"options['episode'] must be an id or an index in 0..{n - 1}, got {episode!r}"
        )

    @property
    def episode_id(self) -> str | None:
        """The id of the current (or last) episode (not part of any observation)."""
        return self._ids[self._i] if self._i >= 0 else None

    @property
    def episode_ids(self) -> list[str]:
        """Every episode id, in table order."""
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def close(self) -> None:
        """Nothing to release (Gymnasium API)."""
