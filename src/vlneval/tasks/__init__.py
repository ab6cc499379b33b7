"""The benchmarks: one folder each, registered here with one line.

Each folder (``r2r/`` for R2R, R4R and RxR; ``reverie/``, ``soon/``, ``cvdn/``, ``hanna/``,
``touchdown/``, ``vlnce/``, ``demo/``) holds the same parts: ``format.py`` reads its episodes
and predictions, ``profiles.py`` defines its official scorers' rules, ``score.py`` scores a
split, and ``__init__.py`` defines its :class:`~vlneval.tasks.base.Task` (files, splits,
options, profiles, scorer). ``common/`` holds what several tasks share: data roots, the episode
table, the R2R family's predictions reader, scoring arrays and rule checks, and the typed
:class:`~vlneval.tasks.common.result.Result` every scorer returns.

Adding a benchmark is one folder plus one line in :data:`TASKS` (and one per profile in
:data:`PROFILES`); nothing else in the package knows a task's name. Entries are entry-point
strings, imported on first use.

Imports flow one way: ``common/`` imports no task folder, task folders import ``base``,
``profiles`` and ``common/`` (the demo and the R2R twin also read R2R files with
``r2r.format``), and nothing here imports environments, agents, the scorer front door
(:mod:`vlneval.evaluation`) or anything above it.

Example:
    >>> get_task("R2R").default_profile, "r2r-ce" in TASKS, get_profile("cvdn").threshold
    ('r2r', True, 3.0)
"""

from __future__ import annotations

from vlneval.tasks.base import TASKS, Option, Task
from vlneval.tasks.profiles import PROFILES, Profile, get_profile

__all__ = ["TASKS", "PROFILES", "Task", "Option", "Profile", "get_task", "get_profile"]

TASKS.register("r2r", "vlneval.tasks.r2r:R2R")
TASKS.register("r4r", "vlneval.tasks.r2r:R4R")
TASKS.register("rxr", "vlneval.tasks.r2r:RXR")
TASKS.register("demo", "vlneval.tasks.demo:TASK")
TASKS.register("r2r-ce", "vlneval.tasks.vlnce:R2R_CE")
TASKS.register("r2r-twin", "vlneval.tasks.vlnce:R2R_TWIN")
TASKS.register("ndh", "vlneval.tasks.cvdn:TASK")
TASKS.alias("cvdn", "ndh")  # the benchmark's name (CVDN/NDH), its data folder's and profile's
TASKS.register("hanna", "vlneval.tasks.hanna:TASK")
TASKS.register("touchdown", "vlneval.tasks.touchdown:TASK")
TASKS.register("touchdown-sdr", "vlneval.tasks.touchdown:SDR")
TASKS.register("reverie", "vlneval.tasks.reverie:TASK")
TASKS.register("soon", "vlneval.tasks.soon:TASK")

PROFILES.register("r2r", "vlneval.tasks.r2r.profiles:R2R")
PROFILES.register("r2r-envdrop", "vlneval.tasks.r2r.profiles:R2R_ENVDROP")
PROFILES.register("r2r-duet", "vlneval.tasks.r2r.profiles:R2R_DUET")
PROFILES.register("r4r", "vlneval.tasks.r2r.profiles:R4R")
PROFILES.register("r4r-google", "vlneval.tasks.r2r.profiles:R4R_GOOGLE")
PROFILES.register("rxr", "vlneval.tasks.r2r.profiles:RXR")
PROFILES.register("demo", "vlneval.tasks.demo.profiles:DEMO")
PROFILES.register("vlnce", "vlneval.tasks.vlnce.profiles:VLNCE")
PROFILES.register("vlnce-exact", "vlneval.tasks.vlnce.profiles:VLNCE_EXACT")
PROFILES.register("vlnce-strict", "vlneval.tasks.vlnce.profiles:VLNCE_STRICT")
PROFILES.register("vlnce-fastdtw-python", "vlneval.tasks.vlnce.profiles:VLNCE_FASTDTW_PYTHON")
PROFILES.register("cvdn", "vlneval.tasks.cvdn.profiles:CVDN")
PROFILES.register("hanna", "vlneval.tasks.hanna.profiles:HANNA")
PROFILES.register("touchdown", "vlneval.tasks.touchdown.profiles:TOUCHDOWN")
PROFILES.register("touchdown-wrap", "vlneval.tasks.touchdown.profiles:TOUCHDOWN_WRAP")
PROFILES.register("touchdown-vlnt", "vlneval.tasks.touchdown.profiles:TOUCHDOWN_VLNT")
PROFILES.register("reverie", "vlneval.tasks.reverie.profiles:REVERIE")
PROFILES.register("reverie-duet", "vlneval.tasks.reverie.profiles:REVERIE_DUET")
PROFILES.register("soon", "vlneval.tasks.soon.profiles:SOON")
PROFILES.register("soon-wrap", "vlneval.tasks.soon.profiles:SOON_WRAP")


def get_task(name: str) -> Task:
    """The task called ``name`` (any case); an unknown name suggests the closest one.

    Example:
        >>> get_task("r2r").default_profile
        'r2r'
    """
    return TASKS.get(name)
