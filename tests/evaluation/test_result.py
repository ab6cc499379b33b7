"""The typed Result: frozen, one writer of the summary record, per-episode columns aligned."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from vlneval import Result, evaluate
from vlneval.evaluation import Check


@pytest.fixture(scope="module")
def demo() -> Result:
    return evaluate("demo", None, _demo_predictions())


def _demo_predictions():  # type: ignore[no-untyped-def]
    from vlneval.tasks.common.root import demo_root

    return demo_root() / "demo" / "predictions_val.json"


def test_result_is_frozen(demo: Result) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        demo.metrics = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        demo.metrics["SR"] = 1.0  # type: ignore[index]
    with pytest.raises(TypeError):
        demo.protocol["task"] = "r2r"  # type: ignore[index]


def test_to_dict_is_fresh_and_leaves_the_result_alone(demo: Result) -> None:
    a = demo.to_dict()
    a["metrics"]["SR"] = -1.0
    a["protocol"]["scoring"]["profile"] = "changed"
    a["warnings"].append("x")
    b = demo.to_dict()
    assert b["metrics"]["SR"] == demo.metrics["SR"] != -1.0
    assert b["protocol"]["scoring"]["profile"] == "demo" and "x" not in b["warnings"]


def test_summary_fields_match_typed_fields(demo: Result) -> None:
    s = demo.to_dict()
    assert list(s)[:3] == ["vlneval_version", "task", "split"]
    assert s["metrics"] == dict(demo.metrics) and s["n_episodes"] == demo.n_episodes
    assert s["checks"] == [c.to_dict() for c in demo.checks]
    assert s["profile"] == demo.profile.card() and s["predictions"] == demo.source
    assert s["warnings"] == list(demo.warnings) and s["partial"] is demo.partial


def test_columns_align_to_episode_ids(demo: Result) -> None:
    assert len(demo.ids) == demo.n_episodes
    for name, column in demo.per_episode.items():
        assert len(column) == demo.n_episodes, name
    rows = demo.rows()
    assert [r["instr_id"] for r in rows] == demo.ids
    # The mean of a column is the summary's value (spec/outputs.md).
    assert np.mean(demo.per_episode["success"]) == pytest.approx(demo.metrics["SR"])


def test_check_writes_quirk_only_when_set() -> None:
    assert "quirk" not in Check("a <= b", True, "").to_dict()
    assert Check("a <= b", False, "", "known").to_dict()["quirk"] == "known"
