"""Tasks: how to find and load each benchmark's episodes, and its default profile."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlneval.data.episodes import EpisodeTable
from vlneval.data.root import demo_root, find_file
from vlneval.errors import UnknownNameError
from vlneval.profiles import Profile

__all__ = ["Task", "TASKS", "get_task", "register_task"]


@dataclass(frozen=True)
class Task:
    """A benchmark as vlneval knows it.

    Attributes:
        name: the task id used on the command line.
        description: one line for ``vlneval tasks``.
        default_profile: the profile used unless ``--profile`` says otherwise.
        profiles: the profiles that may score this task.
        folder: the task's folder under the data root.
        file_names: file-name patterns for a split (``{split}`` is replaced).
        loader: reads a split file into an :class:`EpisodeTable`.
        splits: the splits known to exist (others may still be given with ``--episodes``).
        default_split: used when no ``--split`` is given.
        embedded: the task's data ships inside the package (the demo).
        open_scorer: a task-specific scorer, for tasks whose predictions or metrics differ from
            the R2R family's; :class:`vlneval.evaluation.Scorer` calls it once with a
            :class:`vlneval.evaluation.request.SplitRequest` (task, split, profile, data paths,
            options) and it returns a ``TaskScorer`` whose ``score`` returns a ``Result``.
        data_versions: releases of the data (``--data-version``), the first is the default.
        id_field: the field that names a prediction's episode (``instr_id``...).
    """

    name: str
    description: str
    default_profile: str
    profiles: tuple[str, ...]
    folder: str
    file_names: tuple[str, ...]
    loader: Callable[..., EpisodeTable]
    splits: tuple[str, ...]
    default_split: str
    embedded: bool = False
    open_scorer: Callable[..., Any] | None = None
    data_versions: tuple[str, ...] = ()
    id_field: str = "instr_id"

    def episodes_file(self, root: Path | None, split: str) -> Path:
        """The episodes file of ``split`` under ``root``."""
        base = demo_root() if self.embedded else root
        if base is None:
            from vlneval.errors import MissingDataError

            raise MissingDataError(
                f"task {self.name} needs its data: pass --data-root DIR (or set VLNEVAL_DATA), "
                "or --episodes FILE and --graphs DIR"
            )
        names = [n.format(split=split) for n in self.file_names]
        return find_file(base / self.folder, names, f"{self.name} {split} episodes")

    def load(self, path: Path, split: str, profile: Profile) -> EpisodeTable:
        """Loads ``path`` with the task's loader under ``profile``'s rules."""
        return self.loader(
            path, task=self.name, split=split, max_instructions=profile.max_instructions
        )


TASKS: dict[str, Task] = {}


def register_task(task: Task) -> Task:
    """Adds ``task`` to the registry."""
    TASKS[task.name] = task
    return task


def get_task(name: str) -> Task:
    """The task called ``name``; an unknown name suggests the closest one.

    Example:
        >>> get_task("r2r").default_profile
        'r2r'
    """
    try:
        return TASKS[name]
    except KeyError:
        raise UnknownNameError("task", name, TASKS) from None


def _load_r2r(path: Path, **kw: object) -> EpisodeTable:
    from vlneval.data.r2r import load_r2r

    return load_r2r(path, **kw)  # type: ignore[arg-type]


def _load_rxr(
    path: Path, *, task: str, split: str, max_instructions: int | None = None
) -> EpisodeTable:
    from vlneval.data.rxr import load_rxr

    return load_rxr(path, task=task, split=split)


R2R_SPLITS = ("train", "val_seen", "val_unseen", "test")

register_task(
    Task(
        "r2r",
        "Room-to-Room (Anderson et al. 2018): follow an instruction to a goal viewpoint",
        "r2r",
        ("r2r", "r2r-envdrop", "r2r-duet"),
        "r2r",
        ("R2R_{split}.json",),
        _load_r2r,
        R2R_SPLITS,
        "val_unseen",
    )
)
register_task(
    Task(
        "r4r",
        "Room-for-Room (Jain et al. 2019): joined R2R paths, route fidelity matters",
        "r4r",
        ("r4r", "r4r-google", "r2r-duet"),
        "r4r",
        ("R4R_{split}.json",),
        _load_r2r,
        ("train", "val_seen", "val_unseen"),
        "val_unseen",
    )
)
register_task(
    Task(
        "rxr",
        "Room-across-Room (Ku et al. 2020): multilingual, long, non-shortest routes",
        "rxr",
        ("rxr",),
        "rxr",
        ("rxr_{split}_guide.jsonl", "rxr_{split}.jsonl"),
        _load_rxr,
        ("train", "val_seen", "val_unseen", "test_standard"),
        "val_unseen",
        id_field="instruction_id",
    )
)
register_task(
    Task(
        "demo",
        "a tiny synthetic benchmark shipped inside vlneval (no downloads; not real data)",
        "demo",
        ("demo", "r2r", "r2r-envdrop", "r2r-duet"),
        "demo",
        ("DEMO_{split}.json",),
        _load_r2r,
        ("val",),
        "val",
        embedded=True,
    )
)

# --- tasks of other benchmark families are registered below ---

# VLN-CE (continuous environments) and the continuous twin of R2R.


def _load_vlnce_table(
    path: Path, *, task: str, split: str, max_instructions: int | None = None
) -> Any:
    from vlneval.data.vlnce import load_vlnce

    gt = path.parent / path.name.replace(".json", "_gt.json")
    return load_vlnce(path, gt_path=gt if gt.exists() else None, task=task, split=split)


def _open_vlnce(request: Any) -> Any:
    from vlneval.evaluation.vlnce import VlnceScorer

    return VlnceScorer(request)


def _open_twin(request: Any) -> Any:
    from vlneval.evaluation.vlnce import TwinScorer

    return TwinScorer(request)


register_task(
    Task(
        "r2r-ce",
        "R2R in continuous environments (VLN-CE, Krantz et al. 2020): Habitat positions",
        "vlnce",
        ("vlnce", "vlnce-exact"),
        "vlnce/R2R_VLNCE_v1-3_preprocessed",
        ("{split}/{split}.json",),
        _load_vlnce_table,
        ("train", "val_seen", "val_unseen", "test"),
        "val_unseen",
        open_scorer=_open_vlnce,
        data_versions=("v1-3",),
    )
)
register_task(
    Task(
        "r2r-twin",
        "continuous twin of R2R: grid worlds built from the Matterport3D navigation graphs",
        "vlnce-exact",
        ("vlnce-exact", "vlnce"),
        "r2r",
        ("R2R_{split}.json",),
        _load_r2r,
        R2R_SPLITS,
        "val_unseen",
        open_scorer=_open_twin,
    )
)


# CVDN/NDH, HANNA and Touchdown: their own loaders and scorers, imported when used.


def _load_ndh(
    path: Path, *, task: str, split: str, max_instructions: int | None = None
) -> EpisodeTable:
    from vlneval.data.cvdn import load_ndh_table

    return load_ndh_table(path, task=task, split=split)


def _open_ndh(request: Any) -> Any:
    from vlneval.evaluation.cvdn import NDHScorer

    return NDHScorer(request)


def _load_hanna(
    path: Path, *, task: str, split: str, max_instructions: int | None = None
) -> EpisodeTable:
    from vlneval.data.hanna import load_hanna

    return load_hanna(path, task=task, split=split)


def _open_hanna(request: Any) -> Any:
    from vlneval.evaluation.hanna import HannaScorer

    return HannaScorer(request)


def _load_touchdown(
    path: Path, *, task: str, split: str, max_instructions: int | None = None
) -> EpisodeTable:
    from vlneval.data.touchdown import load_touchdown

    return load_touchdown(path, task=task, split=split)


def _open_touchdown(request: Any) -> Any:
    from vlneval.evaluation.touchdown import TouchdownScorer

    return TouchdownScorer(request)


def _open_touchdown_sdr(request: Any) -> Any:
    from vlneval.evaluation.touchdown import SDRScorer

    return SDRScorer(request)


TOUCHDOWN_PROFILES = ("touchdown", "touchdown-wrap", "touchdown-vlnt")
TOUCHDOWN_FILES = ("data/{split}.json", "touchdown_unseen_split/{split}.json")

register_task(
    Task(
        "ndh",
        "CVDN/NDH (Thomason et al. 2019): navigate from a dialog history (goal progress)",
        "cvdn",
        ("cvdn",),
        "cvdn",
        ("NDH/{split}.json", "{split}.json"),
        _load_ndh,
        ("train", "val_seen", "val_unseen", "test"),
        "val_unseen",
        open_scorer=_open_ndh,
    )
)
register_task(
    Task(
        "hanna",
        "HANNA (Nguyen & Daume III 2019): find an object, asking for help (several goals, 2 m)",
        "hanna",
        ("hanna",),
        "hanna",
        ("hanna_{split}.json",),
        _load_hanna,
        ("train", "val_seen", "val_unseen", "test_seen", "test_unseen"),
        "val_unseen",
        open_scorer=_open_hanna,
    )
)
register_task(
    Task(
        "touchdown",
        "Touchdown (Chen et al. 2019): follow street directions in Manhattan (TC, SPD, SED)",
        "touchdown",
        TOUCHDOWN_PROFILES,
        "touchdown",
        TOUCHDOWN_FILES,
        _load_touchdown,
        ("train", "dev", "test"),
        "dev",
        open_scorer=_open_touchdown,
        data_versions=("original", "unseen"),
    )
)
register_task(
    Task(
        "touchdown-sdr",
        "Touchdown SDR (Chen et al. 2019): locate the bear on the panorama (pixel accuracy)",
        "touchdown",
        TOUCHDOWN_PROFILES,
        "touchdown",
        TOUCHDOWN_FILES,
        _load_touchdown,
        ("train", "dev", "test"),
        "dev",
        open_scorer=_open_touchdown_sdr,
        data_versions=("original", "unseen"),
    )
)


# REVERIE and SOON (object-goal tasks): their own loaders and scorers, imported when used.


def _load_reverie(
    path: Path, *, task: str, split: str, max_instructions: int | None = None
) -> EpisodeTable:
    from vlneval.data.reverie import load_reverie

    return load_reverie(path, task=task, split=split)


def _open_reverie(request: Any) -> Any:
    from vlneval.evaluation.reverie import ReverieScorer

    return ReverieScorer(request)


def _load_soon(
    path: Path, *, task: str, split: str, max_instructions: int | None = None
) -> EpisodeTable:
    from vlneval.data.soon import load_soon

    return load_soon(path, task=task, split=split)


def _open_soon(request: Any) -> Any:
    from vlneval.evaluation.soon import SoonScorer

    return SoonScorer(request)


register_task(
    Task(
        "reverie",
        "REVERIE (Qi et al. 2020): navigate to a remote object and name it (visibility success, RGS)",
        "reverie",
        ("reverie", "reverie-duet"),
        "reverie",
        ("data_v2/REVERIE_{split}.json",),
        _load_reverie,
        ("train", "val_seen", "val_unseen", "test"),
        "val_unseen",
        open_scorer=_open_reverie,
        data_versions=("v2", "v1"),
    )
)
register_task(
    Task(
        "soon",
        "SOON (Zhu et al. 2021): find an object from several starts and point at it (det SR)",
        "soon",
        ("soon", "soon-wrap"),
        "soon",
        ("{split}.json",),
        _load_soon,
        ("train", "val_unseen_instrs", "val_unseen_house", "test"),
        "val_unseen_house",
        open_scorer=_open_soon,
    )
)
