"""Scoring profiles: the rules of each official evaluator, named and versioned.

A profile fixes everything that makes two scorers disagree: the success threshold and its
comparison, what SPL's reference length is, whether jumps and incomplete files are rejected,
whether repeated viewpoints are collapsed before DTW/CLS. The numbers of a profile never change
without a new version.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from vlneval.errors import UnknownNameError

__all__ = ["Profile", "PROFILES", "get_profile", "register_profile"]

GRAPH_METRICS = ("TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW", "CLS")


@dataclass(frozen=True)
class Profile:
    """The rules of one official scorer.

    Attributes:
        name, version: the profile id, e.g. ``r2r`` version ``1``.
        reproduces: the script (repository and file) whose numbers this profile gives.
        threshold: success radius δ in metres.
        success_inclusive: success is ``NE <= δ`` (True) or ``NE < δ`` (False).
        sdtw_inclusive: the comparison sDTW's own success test uses.
        spl_reference: ``shortest`` (ℓ = shortest start-goal distance) or ``reference``
            (ℓ = length of the reference path).
        spl_floor: SPL's denominator is ``max(ℓ, TL, spl_floor)``.
        collapse_repeats: drop consecutive repeated viewpoints before DTW and CLS.
        check_adjacency: reject a move between non-adjacent viewpoints.
        require_complete: every episode of the split needs a prediction.
        max_instructions: score only instructions k < this of each path (the R2R quirk).
        strict_cls_edges: reject repeated viewpoints and jumps (a scorer whose CLS looks each
            step up as a graph edge and would crash on them).
        metrics: the labels reported, in order.
        may_break: consistency checks this scorer is known to break (its quirk, not a bug).
        distance: what ``d(u, v)`` is.
        notes: how this profile differs from its neighbours.
    """

    name: str
    version: str
    reproduces: str
    threshold: float = 3.0
    success_inclusive: bool = False
    sdtw_inclusive: bool = False
    spl_reference: str = "shortest"
    spl_floor: float = 0.0
    collapse_repeats: bool = True
    check_adjacency: bool = True
    require_complete: bool = True
    max_instructions: int | None = None
    strict_cls_edges: bool = False
    metrics: tuple[str, ...] = GRAPH_METRICS
    may_break: tuple[str, ...] = ()
    distance: str = "graph geodesic (metres)"
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def comparison(self) -> str:
        """The success comparison as text, e.g. ``NE < 3.0``."""
        return f"NE {'<=' if self.success_inclusive else '<'} {self.threshold}"

    def card(self) -> dict[str, Any]:
        """The profile as the summary's ``profile`` object."""
        return {"name": self.name, "version": self.version, "reproduces": self.reproduces}

    def to_dict(self) -> dict[str, Any]:
        """Every rule of the profile."""
        d = asdict(self)
        d["comparison"] = self.comparison
        return d


PROFILES: dict[str, Profile] = {}


def register_profile(profile: Profile) -> Profile:
    """Adds ``profile`` to the registry (a name is registered once)."""
    if profile.name in PROFILES:
        raise ValueError(f"profile {profile.name!r} is already registered")
    PROFILES[profile.name] = profile
    return profile


def get_profile(name: str) -> Profile:
    """The profile called ``name``; an unknown name suggests the closest one.

    Example:
        >>> get_profile("r2r").comparison
        'NE < 3.0'
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise UnknownNameError("profile", name, PROFILES) from None


M3D = "peteanderson80/Matterport3DSimulator tasks/R2R/eval.py"

register_profile(
    Profile(
        "r2r",
        "1",
        f"{M3D} (Anderson et al. 2018), the R2R leaderboard's scorer",
        max_instructions=3,
        notes=(
            "scores instructions k = 0..2 of each path, as the official script hard-codes",
            "rejects jumps between non-adjacent viewpoints and incomplete files",
            "nDTW, sDTW and CLS are added (not in the script) with repeats collapsed",
            "SPL with shortest length 0: 1 if successful and TL = 0, else 0 (the script divides by zero)",
        ),
    )
)
register_profile(
    Profile(
        "r2r-envdrop",
        "1",
        "airsplay/R2R-EnvDrop r2r_src/eval.py (Tan et al. 2019)",
        spl_floor=0.01,
        check_adjacency=False,
        notes=("scores every instruction", "SPL floor max(ℓ, TL, 0.01)", "no adjacency check"),
    )
)
register_profile(
    Profile(
        "r2r-duet",
        "1",
        "cshizhe/VLN-DUET map_nav_src/r2r/eval_utils.py (Chen et al. 2022; also HAMT, NaviLLM)",
        spl_reference="reference",
        spl_floor=0.01,
        collapse_repeats=False,
        check_adjacency=False,
        require_complete=False,
        notes=(
            "SPL's ℓ is the reference path's length",
            "jumps are scored with their shortest distance; nested trajectories flattened",
            "repeated viewpoints are not collapsed before DTW/CLS",
        ),
    )
)
register_profile(
    Profile(
        "r4r",
        "1",
        "R4R as published (Jain et al. 2019), scored as cshizhe/VLN-DUET r2r eval_utils.py",
        spl_reference="reference",
        spl_floor=0.01,
        collapse_repeats=False,
        check_adjacency=False,
        require_complete=False,
        notes=("as r2r-duet: SPL against the reference length, no collapsing",),
    )
)
register_profile(
    Profile(
        "r4r-google",
        "1",
        "google-research/google-research r4r/dtw.py and r4r/cls.py (weight3d metres)",
        sdtw_inclusive=True,
        spl_reference="reference",
        spl_floor=0.01,
        collapse_repeats=False,
        check_adjacency=True,
        require_complete=False,
        strict_cls_edges=True,
        may_break=("sDTW <= SR",),
        notes=(
            "sDTW success uses NE <= 3.0 while SR uses NE < 3.0",
            "its CLS looks every step up as a graph edge: repeated viewpoints and jumps are rejected",
        ),
    )
)
register_profile(
    Profile(
        "rxr",
        "1",
        "google-research-datasets/RxR evaluation (Ku et al. 2020)",
        metrics=("TL", "NE", "SR", "SPL", "nDTW", "sDTW"),
        notes=("nDTW is the primary metric",),
    )
)
register_profile(
    Profile(
        "demo",
        "1",
        "none: the synthetic demo task, scored with the r2r rules on every instruction",
        notes=("synthetic houses and episodes shipped inside vlneval",),
    )
)

# --- profiles of other benchmark families are registered below ---

# VLN-CE (continuous environments): the official default (fastdtw) and the exact DTW.
from vlneval.continuous.profile import CE_METRICS as _CE_METRICS  # noqa: E402
from vlneval.continuous.profile import continuous_profile_class  # noqa: E402

_CEProfile = continuous_profile_class(Profile)

_VLNCE = "jacobkrantz/VLN-CE habitat_extensions/measures.py with Habitat's Success and SPL"
_CE_NOTES = (
    "success needs an explicit STOP and geodesic NE < 3.0; OSR needs no STOP",
    "TL is the sum of straight-line steps; SPL's ℓ is the geodesic start-goal distance",
    "nDTW: Euclidean point costs against the dense _gt locations, consecutive repeated "
    "positions dropped, normalised by the number of gt points",
    "distances come from a named source (carried in the file, the twin grid, or none); "
    "unreachable goals are counted and listed, never averaged",
)
register_profile(
    _CEProfile(
        "vlnce",
        "1",
        f"{_VLNCE} (Krantz et al. 2020), default config FDTW: True",
        metrics=_CE_METRICS,
        check_adjacency=False,
        dtw="fastdtw",
        distance="geodesic to the goal (metres) from the summary's distance source",
        notes=(*_CE_NOTES, "nDTW/sDTW use fastdtw radius 1 as VLN-CE does: APPROXIMATE"),
    )
)
register_profile(
    _CEProfile(
        "vlnce-exact",
        "1",
        f"{_VLNCE}, with the exact DTW instead of fastdtw (deviates from the official default)",
        metrics=_CE_METRICS,
        check_adjacency=False,
        dtw="exact",
        distance="geodesic to the goal (metres) from the summary's distance source",
        notes=(*_CE_NOTES, "nDTW/sDTW use the exact DTW: recommended, but not VLN-CE's default"),
    )
)

# CVDN/NDH, HANNA and Touchdown.
register_profile(
    Profile(
        "cvdn",
        "1",
        "mmurray/cvdn tasks/NDH/eval.py (Thomason et al. 2019), the NDH scorer",
        metrics=("TL", "NE", "OSR", "SR", "SPL", "GP", "OPSR"),
        notes=(
            "ground truth chosen by --path-type: planner_path (the script's default), "
            "player_path, or trusted_path (the player's path if it passes the planner's goal)",
            "NE, SR (NE < 3.0), OSR and SPL against the chosen path's end",
            "GP = min_e d(start, e) - min_e d(final, e) over end_panos, whatever the path type",
            "SPL with shortest length 0: 1 if TL = 0 else 0 (the CVDN rule, as the script)",
            "OPSR: oracle success against the planner path's goal ('oracle path_success_rate')",
            "rejects jumps between non-adjacent viewpoints and incomplete files, as the script",
            "a duplicate inst_idx, or an inst_idx written as a string, is an error (the script "
            "keeps the first / matches nothing)",
        ),
    )
)
register_profile(
    Profile(
        "hanna",
        "1",
        "khanhptnk/hanna code/tasks/HANNA/eval.py (Nguyen & Daume III 2019)",
        threshold=2.0,
        success_inclusive=True,
        check_adjacency=False,
        metrics=("TL", "NE", "OSR", "SR", "SPL", "help_requests"),
        notes=(
            "several goals: NE = min over goals; ties take the last goal, whose start distance "
            "is SPL's reference length",
            "success and oracle success within 2.0 m inclusive (<=)",
            "trajectories read from agent_pose; no adjacency check (jumps add their shortest "
            "distance, as the script; counted per episode)",
            "help_requests: mean number of request_help (agent_ask == 1) per episode",
            "SPL with ℓ = TL = 0: 1 if successful (the script divides by zero)",
        ),
    )
)


@dataclass(frozen=True)
class StreetProfile(Profile):
    """A Touchdown profile: success in hops on the street graph, and its SED and SDR rules.

    Attributes:
        edit_distance: ``levenshtein`` or ``osa`` (optimal string alignment) for SED.
        sdr_wrap: SDR distances wrap around the panorama's 360° seam.
        sdr_frame: (width, height) in pixels of the panorama SDR coordinates are given in.
    """

    edit_distance: str = "levenshtein"
    sdr_wrap: bool = False
    sdr_frame: tuple[float, float] = (3680.0, 800.0)

    @property
    def comparison(self) -> str:
        """TC's rule as text."""
        return f"SPD <= {self.threshold:g} hop (the goal or a neighbour)"


_TD = {
    "threshold": 1.0,
    "success_inclusive": True,
    "metrics": ("TC", "SPD", "SED", "SDR@40", "SDR@80", "SDR@120", "SDR_dist"),
    "distance": "street-graph hops (undirected links)",
}
_TD_NOTES = (
    "street graph from links.txt, undirected, distances in hops",
    "TC: the final panorama is the goal or one hop from it (SPD <= 1)",
    "SED = TC * (1 - edit(P, R) / max(|P|, |R|)) with consecutive repeats removed",
    "SDR: Euclidean distance in a 3680 x 800 px panorama; accuracy at 40/80/120 px strict (<)",
)
register_profile(
    StreetProfile(
        "touchdown",
        "1",
        "Touchdown (Chen et al. 2019) metric definitions; SDR as lil-lab/touchdown sdr/predict.py",
        **_TD,  # type: ignore[arg-type]
        notes=(
            *_TD_NOTES,
            "SED uses the Levenshtein distance",
            "SDR: the 360° wrap is NOT handled (as the official code)",
            "a move must follow a link; every route needs a prediction",
        ),
    )
)
register_profile(
    StreetProfile(
        "touchdown-wrap",
        "1",
        "Touchdown as profile touchdown, with SDR distances wrapped at 360° (a fix, not the code)",
        **_TD,  # type: ignore[arg-type]
        sdr_wrap=True,
        notes=(
            *_TD_NOTES,
            "SED uses the Levenshtein distance",
            "FIX: SDR's horizontal distance wraps around the 360° seam (min(|dx|, width - |dx|))",
        ),
    )
)
register_profile(
    StreetProfile(
        "touchdown-vlnt",
        "1",
        "VegB/VLN-Transformer touchdown/env.py _eva_metrics (also raphael-sch/map2seq_vln vln/env.py)",
        **_TD,  # type: ignore[arg-type]
        check_adjacency=False,
        edit_distance="osa",
        notes=(
            *_TD_NOTES,
            "SED uses pyxdameraulevenshtein's optimal string alignment distance (a swap of two "
            "adjacent panoramas costs 1)",
            "no link check (the scripts score their own rollouts); every route needs a prediction",
            "SDR: the 360° wrap is not handled",
        ),
    )
)

# REVERIE and SOON (object-goal tasks).


@dataclass(frozen=True)
class ObjectGoalProfile(Profile):
    """A profile whose success rule is not ``NE < δ`` alone (REVERIE: visibility; SOON: adds
    localisation).

    Attributes:
        success_rule: the navigation success rule, shown as the profile's comparison.
        object_field: the prediction field that carries the predicted object (REVERIE).
        heading_wrap: SOON localisation handles heading wrap-around (the official code does not).
    """

    success_rule: str = ""
    object_field: str = ""
    heading_wrap: bool = False

    @property
    def comparison(self) -> str:
        """The success rule as text."""
        return self.success_rule or f"NE {'<=' if self.success_inclusive else '<'} {self.threshold}"


_VISIBLE = (
    "target object visible from the final viewpoint (non-empty visible_pos in the BBox files)"
)
register_profile(
    ObjectGoalProfile(
        "reverie",
        "1",
        "YuankaiQi/REVERIE tasks/REVERIE/eval_release.py (Qi et al. 2020), the challenge scorer",
        check_adjacency=False,
        metrics=("TL", "OSR", "SR", "SPL", "RGS", "RGSPL"),
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
)
register_profile(
    ObjectGoalProfile(
        "reverie-duet",
        "1",
        "cshizhe/VLN-DUET map_nav_src/reverie/env.py (Chen et al. 2022; also HAMT-style codebases)",
        spl_reference="reference",
        spl_floor=0.01,
        check_adjacency=False,
        require_complete=False,
        metrics=("TL", "OSR", "SR", "SPL", "RGS", "RGSPL"),
        success_rule=_VISIBLE,
        object_field="pred_objid",
        notes=(
            "SPL and RGSPL with ℓ = the reference path's length and the floor max(ℓ, TL, 0.01)",
            "the predicted object is pred_objid (predObjId is read with a warning)",
            "no completeness check; nested per-action trajectories are flattened",
        ),
    )
)
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
    "the script does not check it (use --subset to score a part)",
)
register_profile(
    ObjectGoalProfile(
        "soon",
        "1",
        "ZhuFengdaaa/SOON r2r_src/eval.py (Zhu et al. 2021), submission scoring",
        spl_floor=0.01,
        check_adjacency=False,
        metrics=("TL", "NE", "OSR", "SR", "SPL", "det_SR", "det_SPL", "GP"),
        may_break=("SR <= OSR",),
        success_rule="NE < 3.0 to the (switched) goal; det: point inside the box, no heading wrap",
        notes=(*_SOON_NOTES, "heading wrap-around is ignored, as the official code does"),
    )
)
register_profile(
    ObjectGoalProfile(
        "soon-wrap",
        "1",
        "ZhuFengdaaa/SOON r2r_src/eval.py with heading wrap-around handled (a fix, not the script)",
        spl_floor=0.01,
        check_adjacency=False,
        metrics=("TL", "NE", "OSR", "SR", "SPL", "det_SR", "det_SPL", "GP"),
        may_break=("SR <= OSR",),
        heading_wrap=True,
        success_rule="NE < 3.0 to the (switched) goal; det: point inside the box, heading wraps",
        notes=(
            *_SOON_NOTES,
            "FIX: a box that straddles heading 0 is tested across the seam (the official code "
            "tests the wrong side of the panorama); det_SR/det_SPL differ from the script there",
        ),
    )
)
