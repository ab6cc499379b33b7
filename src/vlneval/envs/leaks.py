"""Searching anything an agent receives for ground truth (used by ``check_env`` and tests):
mappings, sequences, named tuples, dataclasses, attributes, slots and properties, numpy arrays."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["find_values", "contains_run"]

_MAX_DEPTH = 12


def contains_run(values: Sequence[Any], run: Sequence[Any]) -> bool:
    """Whether ``run`` occurs in ``values`` as a contiguous sub-sequence.

    Example:
        >>> contains_run(["x", "a", "b", "c"], ["a", "b"]), contains_run(["a", "x", "b"], ["a", "b"])
        (True, False)
    """
    n = len(run)
    if n == 0 or n > len(values):
        return False
    items = list(values)
    return any(items[i : i + n] == list(run) for i in range(len(items) - n + 1))


def _children(obj: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            yield f"[{k!r}]", k
            yield f"[{k!r}]", v
    elif isinstance(obj, tuple) and hasattr(obj, "_fields"):
        for name in obj._fields:
            yield f".{name}", getattr(obj, name)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            yield f"[{i}]", v
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield f".{f.name}", getattr(obj, f.name)
    else:
        names = list(getattr(obj, "__dict__", {}))
        for klass in type(obj).__mro__:
            names += [s for s in getattr(klass, "__slots__", ()) if isinstance(s, str)]
        for name in dict.fromkeys(names):
            if hasattr(obj, name):
                yield f".{name}", getattr(obj, name)
        for name in dir(type(obj)):
            if isinstance(getattr(type(obj), name, None), property):
                try:
                    yield f".{name}", getattr(obj, name)
                except Exception:  # noqa: BLE001 - a property that cannot be read holds nothing
                    continue


def _array_hits(
    arr: np.ndarray, strings: set[str], numbers: Sequence[float], path: str
) -> list[str]:
    hits: list[str] = []
    if arr.dtype.kind in "USO":
        flat = [str(x) for x in arr.ravel().tolist()]
        hits += [f"{path} holds {s!r}" for s in strings if s in flat]
    elif arr.dtype.kind == "f":
        for x in numbers:
            if np.any(np.abs(arr - x) <= 1e-9 * max(1.0, abs(x))):
                hits.append(f"{path} holds the number {x!r}")
    return hits


def find_values(
    obj: Any,
    *,
    strings: Iterable[str] = (),
    runs: Iterable[Sequence[str]] = (),
    numbers: Iterable[float] = (),
    skip: Iterable[str] = (),
) -> list[str]:
    """Every place in ``obj`` holding one of ``strings`` (or a string containing one), a
    sequence containing one of ``runs`` (in order, contiguous), or a float equal to one of
    ``numbers``; paths in ``skip`` (e.g. ``['viewpoint']``) are not searched.

    Example:
        >>> obs = {"a": [1.5, ("x", "goal-id")], "b": np.array([2.25]), "viewpoint": "goal-id"}
        >>> find_values(obs, strings=["goal-id"], numbers=[2.25], skip=["['viewpoint']"])
        ["['a'][1][1] holds 'goal-id'", "['b'] holds the number 2.25"]
    """
    needles = {s for s in strings if s}
    paths = [list(r) for r in runs if len(r) >= 2]
    nums = [float(x) for x in numbers if math.isfinite(x) and x != 0.0]
    skipped = set(skip)
    hits: list[str] = []
    seen: set[int] = set()

    def walk(o: Any, path: str, depth: int) -> None:
        if path in skipped or depth > _MAX_DEPTH or o is None:
            return
        if isinstance(o, str):
            hits.extend(f"{path or 'observation'} holds {s!r}" for s in needles if s in o)
            hits.extend(f"{path} holds the path joined" for p in paths if "".join(p) in o)
            return
        if isinstance(o, bool):
            return
        if isinstance(o, (int, float, np.number)):
            x = float(o)
            hits.extend(
                f"{path} holds the number {n!r}"
                for n in nums
                if abs(x - n) <= 1e-9 * max(1.0, abs(n))
            )
            return
        if isinstance(o, np.ndarray):
            hits.extend(_array_hits(o, needles, nums, path))
            if o.dtype.kind in "USO":
                flat = [str(x) for x in o.ravel().tolist()]
                hits.extend(
                    f"{path} holds the reference path" for p in paths if contains_run(flat, p)
                )
            return
        if id(o) in seen or callable(o) and not hasattr(o, "__dict__"):
            return
        seen.add(id(o))
        if isinstance(o, (list, tuple)):
            flat_strings = [v for v in o if isinstance(v, str)]
            hits.extend(
                f"{path} holds the reference path" for p in paths if contains_run(flat_strings, p)
            )
        for suffix, child in _children(o):
            walk(child, path + suffix, depth + 1)

    walk(obj, "", 0)
    return hits
