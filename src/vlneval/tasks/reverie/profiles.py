"""REVERIE profiles: success is the target's visibility; RGS and RGSPL ground the object."""

from __future__ import annotations

from vlneval.tasks.profiles import SPL_ZERO_FLOOR, ObjectGoalProfile

__all__ = ["REVERIE", "REVERIE_DUET"]

_VISIBLE = (
    "target object visible from the final viewpoint (non-empty visible_pos in the BBox files)"
)
REVERIE = ObjectGoalProfile(
    "reverie",
    "1",
    "YuankaiQi/REVERIE tasks/REVERIE/eval_release.py (Qi et al. 2020), the challenge scorer",
    check_adjacency=False,
    metrics=("TL", "OSR", "SR", "SPL", "RGS", "RGSPL", "J"),
    success_metric=None,  # success is visibility, no threshold on a metric
    success_rule=_VISIBLE,
    object_field="predObjId",
    notes=(
        "SR/OSR: the target is visible from the final/any visited viewpoint (BBox files)",
        "SPL and RGSPL with ℓ = shortest distance from the start to the annotated goal, no floor",
        "RGS = str(predObjId) == str(objId), not gated by navigation; RGSPL is the primary metric",
        "TL without an adjacency check (as the script); starts and completeness are checked",
        "pred_objid (VLN-DUET's spelling) is read with a warning",
        "SPL with ℓ = TL = 0: 1 if visible (the script divides by zero)",
    ),
)
REVERIE_DUET = ObjectGoalProfile(
    "reverie-duet",
    "1",
    "cshizhe/VLN-DUET map_nav_src/reverie/env.py (Chen et al. 2022; also HAMT-style codebases)",
    spl_reference="reference",
    spl_floor=0.01,
    check_adjacency=False,
    require_complete=False,
    metrics=("TL", "OSR", "SR", "SPL", "RGS", "RGSPL", "J"),
    success_metric=None,  # success is visibility, no threshold on a metric
    success_rule=_VISIBLE,
    object_field="pred_objid",
    notes=(
        "SPL and RGSPL with ℓ = the reference path's length and the floor max(ℓ, TL, 0.01)",
        "the predicted object is pred_objid (predObjId is read with a warning)",
        "no completeness check; nested per-action trajectories are flattened",
        SPL_ZERO_FLOOR,
    ),
)
