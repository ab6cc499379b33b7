"""Scoring: load a split once (:class:`Scorer`), score predictions into a typed :class:`Result`.

``evaluate(task, split, predictions)`` is ``Scorer(task, split).score(predictions)``; a
``Result``'s ``to_dict()`` writes the summary record of ``spec/outputs.md``.
"""

from __future__ import annotations

from vlneval.evaluation.result import Check, Result
from vlneval.evaluation.runner import load_split, score_parsed
from vlneval.evaluation.scorer import Scorer, evaluate

__all__ = ["Scorer", "evaluate", "Result", "Check", "load_split", "score_parsed"]
