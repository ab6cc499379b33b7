"""Scoring's front door: load a split once (:class:`Scorer`), score predictions into a typed
:class:`Result`.

``evaluate(task, split, predictions)`` is ``Scorer(task, split).score(predictions)``. The
scorer resolves the task and profile on the registries of :mod:`vlneval.tasks` and opens the
task's own scorer (``tasks/<t>/score.py``). The ``Result`` every task scorer builds, its checks
and protocol card live beside them in :mod:`vlneval.tasks.common` (task scorers sit below this
package and must not import it); they are re-exported here as the scoring API.
"""

from __future__ import annotations

from vlneval.evaluation.scorer import Scorer, evaluate
from vlneval.tasks.common.result import Check, Result
from vlneval.tasks.common.scoring import load_split, score_parsed

__all__ = ["Scorer", "evaluate", "Result", "Check", "load_split", "score_parsed"]
