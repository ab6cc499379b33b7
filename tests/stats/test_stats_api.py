"""Tests of the public surface of vlneval.stats: exports, lazy imports, records, RNG rules."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np
import pytest

import vlneval.stats as stats
from vlneval.errors import InvalidInputError
from vlneval.stats import aggregate, bootstrap, paired, results

PUBLIC = {
    "Comparison",
    "Interval",
    "RunSummary",
    "aggregate_runs",
    "aggregate_scores",
    "bootstrap_ci",
    "bootstrap_table",
    "compare_runs",
    "holm_adjust",
    "paired_difference",
}

# Every public random function, called on valid tiny data with the rng left to the caller.
RANDOM_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "bootstrap_ci": lambda **kw: stats.bootstrap_ci([1.0, 0.0, 1.0], **kw),
    "bootstrap_table": lambda **kw: stats.bootstrap_table({"SR": [1.0, 0.0]}, **kw),
    "paired_difference": lambda **kw: stats.paired_difference([1.0, 0.0], [0.0, 0.0], **kw),
    "compare_runs": lambda **kw: stats.compare_runs({"SR": [1.0]}, {"SR": [0.0]}, **kw),
}


def test_public_api() -> None:
    assert set(stats.__all__) == PUBLIC
    for module in (aggregate, bootstrap, paired, results):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.__all__ lists missing {name}"


def test_importing_stats_does_not_import_scipy() -> None:
    code = "import sys, vlneval.stats; print('scipy' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", sorted(RANDOM_FUNCTIONS))
def test_random_functions_require_an_explicit_rng(name: str) -> None:
    call = RANDOM_FUNCTIONS[name]
    with pytest.raises(TypeError, match="rng"):
        call()
    with pytest.raises(InvalidInputError, match=rf"^error: {name}: rng must be a numpy"):
        call(rng=None)
    with pytest.raises(InvalidInputError, match="got RandomState"):
        call(rng=np.random.RandomState(0))
    assert call(rng=5) == call(rng=np.random.default_rng(5))


def _records() -> list[Any]:
    return [
        stats.bootstrap_ci([1.0, 0.0, 1.0], rng=0),
        stats.paired_difference([1.0, 0.0], [0.0, 0.0], rng=0),
        stats.compare_runs({"x": [1.0]}, {"x": [0.0]}, rng=0, correction="holm")["x"],
        stats.aggregate_scores([0.1, 0.3]),
        stats.aggregate_scores([0.1]),
    ]


@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_records_are_frozen_and_serialise_to_plain_json(record: Any) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.n = 3
    as_dict = record.to_dict()
    assert list(as_dict) == [f.name for f in dataclasses.fields(record)]
    assert all(type(v) in (float, int, str, type(None)) for v in as_dict.values())
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert msgspec.json.decode(msgspec.json.encode(as_dict)) == as_dict  # the summaries' encoder
