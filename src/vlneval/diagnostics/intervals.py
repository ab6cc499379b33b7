"""Bootstrap intervals for every reported metric of one run (see :mod:`vlneval.stats`).

All columns share the same resamples (:func:`vlneval.stats.bootstrap_table`), so that the
intervals describe one set of episodes and ``SPL <= SR`` holds on every resample. A column with
infinite values (NE of an episode whose final viewpoint cannot reach the goal) is averaged over
its finite values, as the summary does, and bootstrapped on those alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from vlneval.stats import Interval, bootstrap_ci, bootstrap_table

__all__ = ["clopper_pearson", "column_intervals", "resampling_text", "resampling_unit"]


def resampling_unit(
    scans: np.ndarray, paths: np.ndarray | None, *, by_scan: bool, by_episode: bool
) -> tuple[np.ndarray | None, bool, dict[str, Any]]:
    """What the bootstrap resamples: ``(groups, two_stage, settings)``.

    Scans then episodes with ``by_scan``; whole paths by default when episodes share paths
    (``paths``, from :func:`~vlneval.diagnostics.context.path_groups`: R2R's three instructions
    of one path are not independent); episodes with ``by_episode`` or when no two episodes
    share a path. ``settings`` names the unit (``resampling``) and counts the groups.

    Example:
        >>> scans = np.array(["s", "s", "t"], dtype=object)
        >>> resampling_unit(scans, np.array([0, 0, 1]), by_scan=False, by_episode=False)[2]
        {'resampling': 'paths', 'n_paths': 2}
        >>> resampling_unit(scans, None, by_scan=False, by_episode=False)[2]
        {'resampling': 'episodes'}
    """
    if by_scan:
        return scans, True, {"resampling": "scans, then episodes", "n_scans": len(set(scans))}
    if paths is None or by_episode:
        return None, True, {"resampling": "episodes"}
    return paths, False, {"resampling": "paths", "n_paths": int(np.unique(paths).size)}


def resampling_text(settings: Mapping[str, Any]) -> str:
    """The unit a bootstrap resampled, in words, from its ``settings``.

    Example:
        >>> resampling_text({"resampling": "paths", "n_paths": 783})
        'by path, 783 paths'
        >>> resampling_text({"resampling": "scans, then episodes", "n_scans": 11})
        'scans, then episodes (11 scans)'
        >>> resampling_text({})
        'by episode'
    """
    unit = settings.get("resampling", "episodes")
    if unit == "paths":
        return f"by path, {settings.get('n_paths')} paths"
    if unit == "scans, then episodes":
        return f"scans, then episodes ({settings.get('n_scans')} scans)"
    return "by episode"


def column_intervals(
    columns: Mapping[str, ArrayLike],
    *,
    rng: np.random.Generator | int,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    groups: ArrayLike | None = None,
    two_stage: bool = True,
    rates: Collection[str] = (),
) -> dict[str, Interval | None]:
    """A percentile bootstrap interval of the mean of every column; for a rate at 0 or 100 %
    (the same outcome in every episode, where a bootstrap gives zero width) the Clopper-Pearson
    interval instead (:func:`clopper_pearson`, method ``"clopper-pearson"``), over the groups
    when there are groups (paths or scans: episodes of one group are not independent, so
    counting groups is the cautious choice), else over the episodes.

    Args:
        columns: name -> per-episode values (all of one length).
        rng, n_resamples, confidence: as for :func:`vlneval.stats.bootstrap_table`.
        groups: a label per episode (the scan) for the two-stage (scan, then episode) bootstrap.
        two_stage: False to resample whole groups (paths) instead.
        rates: the names of the 0/1 columns (SR, OSR, ...).

    Returns:
        name -> interval, in the order of ``columns``; None for a column with no finite value.

    Example:
        >>> out = column_intervals({"SR": [1.0, 0.0, 1.0, 1.0], "NE": [1.0, np.inf, 2.0, 3.0]},
        ...                        rng=0, n_resamples=200)
        >>> out["SR"].estimate, out["NE"].estimate, out["NE"].n
        (0.75, 2.0, 3)
        >>> ci = column_intervals({"SR": [1.0] * 4}, rng=0, rates=["SR"])["SR"]
        >>> ci.method, round(ci.low, 4), ci.high, ci.n, ci.n_units
        ('clopper-pearson', 0.3976, 1.0, 4, 4)
    """
    gen = np.random.default_rng(rng)
    arrays = {name: np.asarray(v, dtype=np.float64) for name, v in columns.items()}
    group_arr = None if groups is None else np.asarray(groups)
    finite = {name: a for name, a in arrays.items() if np.isfinite(a).all()}
    out: dict[str, Interval | None] = dict.fromkeys(arrays)
    if finite:
        out.update(
            bootstrap_table(
                finite,
                rng=gen,
                n_resamples=n_resamples,
                confidence=confidence,
                groups=group_arr,
                two_stage=two_stage,
            )
        )
    for name, a in arrays.items():
        if name in finite or not np.isfinite(a).any():
            continue
        out[name] = bootstrap_ci(
            a,
            rng=gen,
            n_resamples=n_resamples,
            confidence=confidence,
            groups=group_arr,
            nan_policy="omit",
            metric=name,
            two_stage=two_stage,
        )
    units = len(next(iter(arrays.values()), ())) if groups is None else np.unique(groups).size
    for name in rates:
        ci, values = out.get(name), arrays[name]
        if ci is not None and np.isin(values, (0.0, 1.0)).all() and (values == values[0]).all():
            low, high = clopper_pearson(int(values[0]) * units, units, confidence=confidence)
            out[name] = dataclasses.replace(
                ci, low=low, high=high, n_resamples=0, method="clopper-pearson", n_units=units
            )
    return out


def clopper_pearson(successes: int, n: int, *, confidence: float) -> tuple[float, float]:
    """The Clopper-Pearson (exact binomial) interval of a rate at 0 or ``n`` of ``n``: the
    beta quantiles in closed form, ``[0, 1 − (α/2)^(1/n)]`` for 0 and ``[(α/2)^(1/n), 1]`` for
    ``n`` (Clopper and Pearson 1934), ``α = 1 − confidence``.

    Example:
        >>> [round(x, 4) for x in clopper_pearson(0, 12, confidence=0.95)]
        [0.0, 0.2646]
    """
    if successes not in (0, n) or n < 1:
        raise ValueError(f"only a rate of 0 or n of n is supported; got {successes} of {n}")
    bound = ((1.0 - confidence) / 2.0) ** (1.0 / n)
    return (0.0, 1.0 - bound) if successes == 0 else (bound, 1.0)
