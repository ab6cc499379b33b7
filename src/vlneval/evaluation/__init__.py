"""Scoring: load a split once (:class:`Scorer`), score predictions into a typed :class:`Result`.

``evaluate(task, split, predictions)`` is ``Scorer(task, split).score(predictions)``; a
``Result``'s ``to_dict()`` writes the summary record of ``spec/outputs.md``.
"""

from __future__ import annotations

from vlneval.evaluation.scorer import Scorer, evaluate
from vlneval.tasks.common.result import Check, Result
from vlneval.tasks.common.scoring import load_split, score_parsed

__all__ = ["Scorer", "evaluate", "Result", "Check", "load_split", "score_parsed"]
