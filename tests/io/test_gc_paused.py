"""The cycle collector is paused only while records are decoded, and always restored."""

from __future__ import annotations

import gc

import pytest

import vlneval
from vlneval.errors import InvalidInputError
from vlneval.io import gc_paused


def test_gc_paused_restores_the_state_it_found() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause found it off and leaves it off
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()


def test_gc_is_back_on_after_a_rejected_predictions_input() -> None:
    scorer = vlneval.Scorer("demo", "val")
    with pytest.raises(InvalidInputError):
        scorer.score([{"instr_id": "no such id", "trajectory": [[5, 0.0, 0.0]]}])
    assert gc.isenabled()
    with pytest.raises(InvalidInputError):
        scorer.score(b"[not json")
    assert gc.isenabled()
