"""The teacher on an edge the simulator never offers (no horizontal offset): a clear error."""

from __future__ import annotations

import numpy as np
import pytest

from vlneval.envs.core import PrivilegeError
from vlneval.envs.graph.privileged import TeacherState, teacher_action
from vlneval.graph.matterport import NavGraph
from vlneval.graph.tables import build_tables

# a, z straight above a (1 m), c 4 m north of z: the only path a -> c goes through z.
POSITIONS = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 4.0, 1.0]])
DISTANCES = np.array([[0.0, 1.0, 5.0], [1.0, 0.0, 4.0], [5.0, 4.0, 0.0]])


def _state(node: int, panoramic: bool) -> TeacherState:
    g = NavGraph("t", ["a", "z", "c"], POSITIONS, np.array([[0, 1], [1, 2]]), np.array([1.0, 4.0]))
    return TeacherState(build_tables(g), DISTANCES, node, 0, 1, ("c",), ("a", "z", "c"), panoramic)


@pytest.mark.parametrize("panoramic", [True, False])
def test_next_step_straight_above_is_a_clear_error(panoramic: bool) -> None:
    with pytest.raises(PrivilegeError) as exc:
        teacher_action(_state(0, panoramic))
    assert str(exc.value) == (
        "the shortest path's next viewpoint z is not a navigable candidate from a in scan t: it "
        "is co-located with it or straight above or below it (no horizontal offset, so the "
        "simulator offers no direction to it); the teacher cannot take that edge of the graph"
    )


def test_an_offered_next_step_is_taken() -> None:
    """From z the next viewpoint c is offered: panoramic takes its candidate."""
    s = _state(1, True)
    row = s.tables.pano_node[1, 0, : int(s.tables.pano_count[1, 0])].tolist()
    assert row[teacher_action(s)] == 2
