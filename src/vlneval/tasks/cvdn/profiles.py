"""The CVDN/NDH profile: the official NDH scorer's rules."""

from __future__ import annotations

from vlneval.tasks.profiles import Profile

__all__ = ["CVDN"]

CVDN = Profile(
    "cvdn",
    "1",
    "mmurray/cvdn tasks/NDH/eval.py (Thomason et al. 2019), the NDH scorer",
    metrics=("TL", "NE", "OSR", "SR", "SPL", "GP", "OPSR"),
    notes=(
        "ground truth chosen by the path_type option: planner_path (the script's default), "
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
