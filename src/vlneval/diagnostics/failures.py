"""Why episodes fail: every episode falls in exactly one outcome class.

With ``δ`` and the success comparison of the scoring profile (``NE < δ`` for R2R), ``d*`` the
geodesic shortest distance from the start to the nearest goal, ``TL`` the executed path length,
``steps`` the number of positions the trajectory records after the start, and ``T`` the run's
step limit (when known), the classes are tested in this order:

1. ``success`` (reached and stopped): the episode succeeds (the final position is within δ).
2. ``passed_goal`` (passed within δ but did not stop): not a success, but some position of the
   trajectory was within δ (oracle success). Its share is exactly ``OSR − SR``.
3. ``step_limit`` (hit the step limit): never within δ, and ``steps >= T``: the run was cut
   off rather than stopped. Only when ``T`` is known; otherwise these episodes fall in the
   next two classes. An agent that chose to stop on its very last allowed step is counted
   here too (a file cannot tell the two apart).
4. ``stopped_early`` (stopped short): never within δ, and ``TL < d*``: the agent stopped
   before walking even the length of the shortest route (``TL = 0``: never moved).
5. ``wandered``: never within δ, and ``TL >= d*``: it walked at least the shortest route's
   length and ended elsewhere.

An episode whose final viewpoint cannot reach the goal (infinite NE) is never within δ and is
classed by 4 or 5 like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from vlneval.errors import InvalidInputError

__all__ = [
    "FAILURE_CLASSES",
    "CLASS_LABELS",
    "FailureBreakdown",
    "classify_outcomes",
    "failure_breakdown",
    "step_limit_from_card",
    "step_notes",
]

FAILURE_CLASSES = ("success", "passed_goal", "step_limit", "stopped_early", "wandered")
CLASS_LABELS = {
    "success": "reached and stopped",
    "passed_goal": "passed within δ but did not stop",
    "step_limit": "hit the step limit",
    "stopped_early": "stopped short (TL < d*)",
    "wandered": "wandered (TL ≥ d*)",
}
STEP_LIMIT_KEYS = ("step_limit", "max_steps", "max_action_len", "max_episode_len")


def classify_outcomes(
    success: ArrayLike,
    oracle_success: ArrayLike,
    path_length: ArrayLike,
    shortest: ArrayLike,
    *,
    steps: ArrayLike | None = None,
    step_limit: int | None = None,
) -> np.ndarray:
    """The outcome class of every episode, as an index into :data:`FAILURE_CLASSES`.

    Args:
        success: 0/1 per episode (the profile's success).
        oracle_success: 0/1 per episode (some position within δ).
        path_length: TL per episode (metres).
        shortest: d* per episode (metres).
        steps: positions recorded after the start, per episode (needed with ``step_limit``).
        step_limit: the run's step limit T, or None when unknown.

    Returns:
        ``int8`` codes, one per episode.

    Raises:
        InvalidInputError: arrays of different lengths, a step limit without steps, or a
            non-finite ``d*`` for an episode that needs it.

    Example:
        >>> codes = classify_outcomes(
        ...     [1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [9.0, 12.0, 3.0, 15.0, 20.0],
        ...     [8.0, 8.0, 8.0, 8.0, 8.0], steps=[4, 6, 1, 5, 20], step_limit=20)
        >>> [FAILURE_CLASSES[c] for c in codes]
        ['success', 'passed_goal', 'stopped_early', 'wandered', 'step_limit']
    """
    s, o, tl, d = (
        np.asarray(x, dtype=np.float64) for x in (success, oracle_success, path_length, shortest)
    )
    n = s.shape[0]
    if not (o.shape == tl.shape == d.shape == s.shape) or s.ndim != 1:
        raise InvalidInputError(
            "classify_outcomes: success, oracle_success, path_length and shortest must be 1-D "
            f"arrays of one length; got shapes {s.shape}, {o.shape}, {tl.shape}, {d.shape}"
        )
    codes = np.full(n, FAILURE_CLASSES.index("wandered"), dtype=np.int8)
    never = (s == 0) & (o == 0)
    if not np.isfinite(d[never]).all():
        raise InvalidInputError(
            "classify_outcomes: the shortest distance d* is unknown (NaN) for a failed episode; "
            "score with the navigation graphs to get it"
        )
    codes[never & (tl < d)] = FAILURE_CLASSES.index("stopped_early")
    if step_limit is not None:
        if steps is None:
            raise InvalidInputError("classify_outcomes: step_limit needs the steps per episode")
        st = np.asarray(steps, dtype=np.float64)
        if st.shape != s.shape:
            raise InvalidInputError(
                f"classify_outcomes: steps has shape {st.shape}, expected {s.shape}"
            )
        codes[never & (st >= step_limit)] = FAILURE_CLASSES.index("step_limit")
    codes[(s == 0) & (o != 0)] = FAILURE_CLASSES.index("passed_goal")
    codes[s != 0] = FAILURE_CLASSES.index("success")
    return codes


@dataclass(frozen=True)
class FailureBreakdown:
    """Counts and shares of the outcome classes of one run.

    Attributes:
        codes: the class of every episode (index into :data:`FAILURE_CLASSES`).
        counts: class -> number of episodes (``step_limit`` is None when T is unknown).
        shares: class -> fraction of the episodes (None likewise).
        step_limit: T, or None.
        passed_goal_at_limit: episodes of ``passed_goal`` that also reached T (None without T):
            they might have stopped on the goal with a larger budget.
        notes: what the step counts say about T (:func:`step_notes`).
    """

    codes: np.ndarray
    counts: dict[str, int | None]
    shares: dict[str, float | None]
    step_limit: int | None
    passed_goal_at_limit: int | None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Counts, shares, labels and the step limit (no per-episode codes)."""
        return {
            "classes": [
                {
                    "name": name,
                    "label": CLASS_LABELS[name],
                    "count": self.counts[name],
                    "share": self.shares[name],
                }
                for name in FAILURE_CLASSES
            ],
            "n_episodes": int(self.codes.shape[0]),
            "step_limit": self.step_limit,
            "passed_goal_at_limit": self.passed_goal_at_limit,
            "notes": list(self.notes),
        }


def failure_breakdown(
    success: ArrayLike,
    oracle_success: ArrayLike,
    path_length: ArrayLike,
    shortest: ArrayLike,
    *,
    steps: ArrayLike | None = None,
    step_limit: int | None = None,
    episode_ids: Sequence[str] | None = None,
) -> FailureBreakdown:
    """Classifies every episode (:func:`classify_outcomes`) and counts the classes, with
    :func:`step_notes` on the steps (``episode_ids`` name an episode longer than T).

    Example:
        >>> b = failure_breakdown([1, 0, 0, 0], [1, 1, 0, 0], [9.0, 12.0, 3.0, 15.0], [8.0] * 4)
        >>> b.counts
        {'success': 1, 'passed_goal': 1, 'step_limit': None, 'stopped_early': 1, 'wandered': 1}
        >>> b.shares["passed_goal"]
        0.25
    """
    codes = classify_outcomes(
        success, oracle_success, path_length, shortest, steps=steps, step_limit=step_limit
    )
    n = max(int(codes.shape[0]), 1)
    tally = np.bincount(codes, minlength=len(FAILURE_CLASSES))
    counts: dict[str, int | None] = {c: int(tally[j]) for j, c in enumerate(FAILURE_CLASSES)}
    at_limit = None
    if step_limit is None:
        counts["step_limit"] = None
    else:
        passed = codes == FAILURE_CLASSES.index("passed_goal")
        at_limit = int((passed & (np.asarray(steps, dtype=np.float64) >= step_limit)).sum())
    shares = {c: (None if v is None else v / n) for c, v in counts.items()}
    notes = () if steps is None else step_notes(steps, step_limit, episode_ids)
    return FailureBreakdown(codes, counts, shares, step_limit, at_limit, notes)


#: The share of the episodes that must end at the run's largest step count for it to look like
#: a step limit nobody gave.
CAP_SHARE = 0.1


def step_notes(
    steps: ArrayLike, step_limit: int | None, episode_ids: Sequence[str] | None = None
) -> tuple[str, ...]:
    """What the step counts say about the step limit T: without T, that many episodes end at
    exactly the largest step count (a cap the outcome classes cannot see: those episodes are
    filed as stopped short or wandered); with T, the episodes longer than T (the run cannot
    have had that limit, or its steps count something else).

    Example:
        >>> print(step_notes([20, 20, 20, 4], None)[0])
        3 of 4 episodes (75.0%) end at exactly 20 steps, the run's largest count: a step limit? without one they are classed as stopped short or wandered; pass --step-limit 20
        >>> print(step_notes([3, 9], 3, ["a", "b"])[0])
        warning: 1 episode(s) have more steps than the step limit T = 3 (first: b, 9 steps): the run cannot have had that limit, or its steps count something else; check --step-limit
    """
    st = np.asarray(steps, dtype=np.float64)
    if st.size == 0:
        return ()
    if step_limit is not None:
        over = np.flatnonzero(st > step_limit)
        if over.size == 0:
            return ()
        k = int(over[0])
        first = f"{episode_ids[k]}, " if episode_ids is not None else ""
        return (
            f"warning: {over.size} episode(s) have more steps than the step limit T = "
            f"{step_limit} (first: {first}{int(st[k])} steps): the run cannot have had that "
            "limit, or its steps count something else; check --step-limit",
        )
    top = int(st.max())
    at_top = int((st == top).sum())
    if top < 1 or at_top < 2 or at_top < CAP_SHARE * st.size:
        return ()
    return (
        f"{at_top:,} of {st.size:,} episodes ({at_top / st.size:.1%}) end at exactly {top} "
        "steps, the run's largest count: a step limit? without one they are classed as "
        f"stopped short or wandered; pass --step-limit {top}",
    )


def step_limit_from_card(card: dict[str, Any]) -> int | None:
    """The step limit a protocol card records, or None.

    The card's ``inference_budget`` (declared with ``--protocol FILE`` or recorded by an online
    run) may be an int (the step limit) or an object with one of the keys ``step_limit``,
    ``max_steps``, ``max_action_len`` or ``max_episode_len``.

    Example:
        >>> step_limit_from_card({"inference_budget": {"max_action_len": 15}})
        15
        >>> step_limit_from_card({"inference_budget": "not declared"}) is None
        True
    """
    budget = card.get("inference_budget")
    if isinstance(budget, dict):
        budget = next((budget[k] for k in STEP_LIMIT_KEYS if k in budget), None)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        return None
    return budget
