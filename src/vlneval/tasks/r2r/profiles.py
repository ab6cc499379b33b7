"""The profiles of the R2R family: R2R (the official script, EnvDrop, DUET), R4R and RxR."""

from __future__ import annotations

from vlneval.tasks.profiles import SPL_ZERO_DEFAULT, SPL_ZERO_FLOOR, Profile

__all__ = ["R2R", "R2R_ENVDROP", "R2R_DUET", "R4R", "R4R_GOOGLE", "RXR"]

M3D = "peteanderson80/Matterport3DSimulator tasks/R2R/eval.py"

R2R = Profile(
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
R2R_ENVDROP = Profile(
    "r2r-envdrop",
    "1",
    "airsplay/R2R-EnvDrop r2r_src/eval.py (Tan et al. 2019)",
    spl_floor=0.01,
    check_adjacency=False,
    notes=(
        "scores every instruction",
        "SPL floor max(ℓ, TL, 0.01)",
        "no adjacency check",
        SPL_ZERO_FLOOR,
    ),
)
R2R_DUET = Profile(
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
        SPL_ZERO_FLOOR,
    ),
)
R4R = Profile(
    "r4r",
    "1",
    "R4R as published (Jain et al. 2019), scored as cshizhe/VLN-DUET r2r eval_utils.py",
    spl_reference="reference",
    spl_floor=0.01,
    collapse_repeats=False,
    check_adjacency=False,
    require_complete=False,
    notes=("as r2r-duet: SPL against the reference length, no collapsing", SPL_ZERO_FLOOR),
)
R4R_GOOGLE = Profile(
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
        SPL_ZERO_FLOOR,
    ),
)
RXR = Profile(
    "rxr",
    "1",
    "the metric definitions of the google-research-datasets/RxR README (Ku et al. 2020; the "
    "repository publishes no scorer code): ne, sr (ne < 3 m), spl, ndtw, sdtw",
    metrics=("TL", "NE", "SR", "SPL", "nDTW", "sDTW"),
    notes=(
        "nDTW is the primary metric",
        "the README's sample follower entry (demonstration_id 26) is not reproduced bit-exactly "
        "from the public connectivity: DTW 1.576 against its 1.546, SPL 0.948222 (TL 8.461512, "
        "shortest 8.023394) against its 0.947936; known and documented, not adjusted",
        SPL_ZERO_DEFAULT,
    ),
)
