"""The package surface: __all__, the METRICS registry, and light imports."""

from __future__ import annotations

import dataclasses
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vlneval.metrics as M

LABELS = {
    "path_length": "TL",
    "navigation_error": "NE",
    "oracle_error": "OE",
    "oracle_success": "OSR",
    "success": "SR",
    "spl": "SPL",
    "ndtw": "nDTW",
    "sdtw": "sDTW",
    "cls": "CLS",
    "dtw": "DTW",
}
HIGHER_IS_BETTER = {"oracle_success", "success", "spl", "ndtw", "sdtw", "cls"}


def test_all_names_exist_and_are_exported() -> None:
    assert len(set(M.__all__)) == len(M.__all__)
    for name in M.__all__:
        assert hasattr(M, name), name


def test_registry_labels_and_directions() -> None:
    for name, label in LABELS.items():  # other modules may register more metrics
        assert M.METRICS[name].label == label
        assert M.METRICS[name].higher_is_better == (name in HIGHER_IS_BETTER), name
    assert len({info.label for info in M.METRICS.values()}) == len(M.METRICS)
    for name, info in M.METRICS.items():
        assert info.name == name
        assert info.unit in {"m", "fraction"}
        assert info.description
        assert callable(getattr(M, name)) and name in M.__all__
    with pytest.raises(TypeError):
        M.METRICS["x"] = M.METRICS["spl"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        M.METRICS["spl"].label = "X"  # type: ignore[misc]


def test_batch_columns_name_registered_metrics() -> None:
    assert set(M.COLUMN_METRIC) <= set(M.COLUMNS)
    assert set(M.COLUMN_METRIC.values()) == set(LABELS)


@pytest.mark.parametrize("name", sorted(LABELS) + ["collapse_repeats", "score_batch"])
def test_public_functions_are_documented_with_an_example(name: str) -> None:
    doc = inspect.getdoc(getattr(M, name)) or ""
    assert "Example:" in doc and ">>> " in doc, name
    assert "Args:" in doc and "Returns:" in doc and "Raises:" in doc, name


def test_options_are_keyword_only() -> None:
    for name in LABELS:
        params = inspect.signature(getattr(M, name)).parameters.values()
        for p in params:
            if p.name in {"distances", "threshold", "inclusive", "floor", "success"}:
                data_argument = name == "spl" and p.name == "success"
                assert (p.kind is p.KEYWORD_ONLY) != data_argument, (name, p.name)


def test_importing_metrics_does_not_import_numba_or_scipy() -> None:
    src = Path(M.__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }
    code = (
        "import sys, vlneval.metrics\n"
        "heavy = sorted(m for m in ('numba', 'scipy', 'llvmlite') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == ""
