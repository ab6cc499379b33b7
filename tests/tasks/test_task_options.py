"""Task.check_options: the one check of task options, whatever the way in."""

from __future__ import annotations

import pytest

from vlneval.errors import UnknownNameError, VLNEvalError
from vlneval.tasks import get_profile, get_task
from vlneval.tasks.common.request import SplitRequest


def test_options_of_other_tasks_are_all_named() -> None:
    with pytest.raises(VLNEvalError) as info:
        get_task("soon").check_options({"path_type": "planner_path", "data_version": "v2"})
    assert str(info.value) == (
        "options data_version (--data-version), path_type (--path-type) do not apply to task "
        "soon (its options: angle_units)"
    )


def test_unset_options_are_dropped_and_values_resolved() -> None:
    task = get_task("reverie")
    assert task.check_options({"data_version": "V1", "bboxes": None}) == {"data_version": "v1"}
    assert get_task("r2r").check_options({"path_type": None}) == {}


def test_a_name_no_task_declares_gets_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'data_version'"):
        get_task("r2r").check_options({"data_verison": "v1"})


def test_opening_a_task_scorer_checks_its_options() -> None:
    task = get_task("demo")
    request = SplitRequest(task, "val", get_profile("demo"), options={"angle_units": "radians"})
    with pytest.raises(VLNEvalError, match="does not apply to task demo"):
        task.open(request)
