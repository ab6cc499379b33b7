"""The fidelity metrics' argument order, documented where a user reads it (worked example 1)."""

from __future__ import annotations

import numpy as np
import pytest

from vlneval.metrics import cls, dtw, ndtw, sdtw

D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
R, P = [0, 1, 2, 3], [0, 3]  # reference S, A, B, G; trajectory S, G


def test_the_dtw_family_takes_the_reference_first_and_cls_the_trajectory() -> None:
    assert ndtw(R, P, distances=D) == pytest.approx(np.exp(-8 / 12))  # m = 4 reference points
    assert ndtw(reference=R, trajectory=P, distances=D) == ndtw(R, P, distances=D)
    assert sdtw(reference=R, trajectory=P, distances=D, success=1) == ndtw(R, P, distances=D)
    assert dtw(reference=R, trajectory=P, distances=D) == 8.0
    assert cls(P, R, distances=D) == pytest.approx(0.4291, abs=5e-5)
    assert cls(trajectory=P, reference=R, distances=D) == cls(P, R, distances=D)
    # swapped, both run and give other numbers: the reason the docstrings say it
    assert ndtw(P, R, distances=D) != ndtw(R, P, distances=D)
    assert cls(R, P, distances=D) != cls(P, R, distances=D)


@pytest.mark.parametrize("fn", [dtw, ndtw, sdtw])
def test_the_dtw_docstrings_say_the_reference_comes_first(fn: object) -> None:
    assert "The REFERENCE comes first" in " ".join((fn.__doc__ or "").split())


def test_the_cls_docstring_says_the_trajectory_comes_first() -> None:
    doc = " ".join((cls.__doc__ or "").split())
    assert "the PREDICTION (trajectory) comes first" in doc and "reference first" in doc
