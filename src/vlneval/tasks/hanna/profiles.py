"""The HANNA profile: several goals, success within 2 m inclusive."""

from __future__ import annotations

from vlneval.tasks.profiles import Profile

__all__ = ["HANNA"]

HANNA = Profile(
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
