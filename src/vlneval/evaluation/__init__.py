"""The evaluation runner: episodes + trajectories + profile -> per-episode table and summary."""

from __future__ import annotations

from vlneval.evaluation.runner import Evaluation, evaluate, load_split, score_parsed

__all__ = ["Evaluation", "evaluate", "load_split", "score_parsed"]
