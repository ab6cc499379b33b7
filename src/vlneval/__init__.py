"""vlneval: evaluation toolkit for Vision-and-Language Navigation.

Scores every benchmark's predictions exactly as its official script does (named, versioned
profiles), runs agents behind a strict information boundary, and reports results with protocol
cards, consistency checks and confidence intervals.

Heavy parts (numba, scipy, plots, the server) are imported only when used.
"""

from __future__ import annotations

from vlneval._lazy import lazy_attributes
from vlneval._version import __version__

TYPE_CHECKING = False  # not typing's: importing typing would double the cost of this import

__all__ = [
    "__version__",
    "Scorer",
    "evaluate",
    "Result",
    "get_profile",
    "get_task",
    "VLNEvalError",
]

if TYPE_CHECKING:
    from vlneval.errors import VLNEvalError
    from vlneval.evaluation import Result, Scorer, evaluate
    from vlneval.tasks import get_profile, get_task

__getattr__ = lazy_attributes(
    __name__,
    {
        "Scorer": "vlneval.evaluation",
        "evaluate": "vlneval.evaluation",
        "Result": "vlneval.evaluation",
        "get_profile": "vlneval.tasks",
        "get_task": "vlneval.tasks",
        "VLNEvalError": "vlneval.errors",
    },
)
