"""SOON profiles: navigation to a (switched) goal and localisation inside the box."""

from __future__ import annotations

from dataclasses import replace

from vlneval.tasks.profiles import SPL_ZERO_FLOOR, ObjectGoalProfile

__all__ = ["SOON", "SOON_WRAP"]

_SOON_NOTES = (
    "one episode per (instruction, start path); predictions list one entry per start",
    "goal switch: a final viewpoint that holds a target box becomes the goal (NE = 0 there)",
    "OE takes the visited viewpoint nearest the annotated goal and measures it to the switched "
    "goal, so OSR can be below SR (the script's quirk, reproduced)",
    "SPL and det SPL with ℓ = d(start, switched goal), floor max(ℓ, TL, 0.01); det SPL is the "
    "script's success_rate key; GP = d(start, goal) - d(final, goal), switched goal",
    "localisation: the predicted (heading, elevation), normalised (heading/2π, (elevation+π)/2π), "
    "strictly inside the box polygon at the final viewpoint",
    "no adjacency check (as the script); starts are checked; completeness is required although "
    "the script does not check it (a part is scored only as partial, when asked)",
    f"{SPL_ZERO_FLOOR} (det SPL too)",
)
SOON = ObjectGoalProfile(
    "soon",
    "1",
    "ZhuFengdaaa/SOON r2r_src/eval.py (Zhu et al. 2021), submission scoring",
    spl_floor=0.01,
    check_adjacency=False,
    metrics=("TL", "NE", "OSR", "SR", "SPL", "det_SR", "det_SPL", "GP", "J"),
    may_break=("SR <= OSR",),
    success_rule="NE < 3.0 to the (switched) goal; det: point inside the box, no heading wrap",
    notes=(*_SOON_NOTES, "heading wrap-around is ignored, as the official code does"),
)
SOON_WRAP = replace(
    SOON,
    name="soon-wrap",
    reproduces="ZhuFengdaaa/SOON r2r_src/eval.py with heading wrap-around handled (a fix, not the script)",
    heading_wrap=True,
    success_rule="NE < 3.0 to the (switched) goal; det: point inside the box, heading wraps",
    notes=(
        *_SOON_NOTES,
        "FIX: a box that straddles heading 0 is tested across the seam (the official code "
        "tests the wrong side of the panorama); det_SR/det_SPL differ from the script there",
    ),
)
