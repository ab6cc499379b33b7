"""Every registered task through the registry: it loads, declares its options and profiles,
offers its options on the command line, and its demo or fixture scores through ``vlneval.Scorer``.

The fixtures are those of ``tests/metrics/test_metrics_info_tasks.py`` (tiny synthetic roots),
here handed to the one front door instead of each task's reader.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

import vlneval
from vlneval.cli.main import build_parser
from vlneval.registry import load_entry_point
from vlneval.tasks import PROFILES, TASKS, Option, Task, get_profile, get_task
from vlneval.tasks.common.root import demo_root

Case = Callable[[Path], tuple[str, dict[str, Any], Path]]  # -> split, Scorer kwargs, predictions


def _demo(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    return "val", {}, demo_root() / "demo" / "predictions_val.json"


def _r2r_family(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.reports.house import house_root, predictions

    root = house_root(tmp / "root")
    p = tmp / "p.json"
    p.write_text(json.dumps(predictions()))
    return "val", {"root": root, "episodes": root / "r2r" / "R2R_val.json"}, p


def _rxr(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.tasks.r2r.test_rxr import _root

    p = tmp / "preds.jsonl"
    p.write_text(
        '{"instruction_id": 11, "path": ["S", "G"]}\n'
        '{"instruction_id": 12, "path": ["S", "A", "B", "G"]}\n'
    )
    return "val_unseen", {"root": _root(tmp / "root")}, p


def _ndh(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.tasks.cvdn.fixture import make_root, predictions

    return "val_seen", {"root": make_root(tmp / "root")}, predictions(tmp)


def _hanna(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.tasks.hanna.fixture import make_root, predictions

    return "val_unseen", {"root": make_root(tmp / "root")}, predictions(tmp)


def _touchdown(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.tasks.touchdown.fixture import make_root, nav

    return "dev", {"root": make_root(tmp / "root")}, nav(tmp)


def _touchdown_sdr(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.tasks.touchdown.fixture import SDR, make_root, write

    return "dev", {"root": make_root(tmp / "root")}, write(tmp, SDR)


def _reverie(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.tasks.reverie.reverie_fixtures import dump, rev_preds, reverie_root
    from tests.tasks.reverie.test_reverie_scoring import HAND

    p = dump(tmp / "preds.json", rev_preds(HAND, "predObjId"))
    return "val", {"root": reverie_root(tmp / "root"), "data_version": "v1"}, p


def _soon(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.tasks.soon.soon_fixtures import dump, soon_preds, soon_root

    return "val", {"root": soon_root(tmp / "root")}, dump(tmp / "preds.json", soon_preds())


def _vlnce(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from tests.tasks.vlnce.helpers import steps, write_split

    episodes_file, gt_file = write_split(tmp)
    line = [[0.0, 0.0, -float(k)] for k in range(5)]
    p = tmp / "p.json"
    p.write_text(json.dumps({"1": steps(line, [4.0, 3.0, 2.0, 1.0, 0.0]),
                             "2": steps(line[:2], [4.0, 3.0])}))  # fmt: skip
    kw = {"episodes": episodes_file, "gt_file": gt_file, "distance": "carried"}
    return "val", kw, p


def _twin(tmp: Path) -> tuple[str, dict[str, Any], Path]:
    from vlneval.tasks.vlnce.format import reference_as_predictions

    kw: dict[str, Any] = {
        "root": demo_root(),
        "episodes": demo_root() / "demo" / "DEMO_val.json",
        "show_progress": False,
    }
    scorer = vlneval.Scorer("r2r-twin", "val", **kw)
    p = tmp / "twin.json"
    p.write_text(json.dumps(reference_as_predictions(scorer.episodes)))
    return "val", kw, p


CASES: dict[str, Case] = {
    "demo": _demo,
    "r2r": _r2r_family,
    "r4r": _r2r_family,
    "rxr": _rxr,
    "ndh": _ndh,
    "hanna": _hanna,
    "touchdown": _touchdown,
    "touchdown-sdr": _touchdown_sdr,
    "reverie": _reverie,
    "soon": _soon,
    "r2r-ce": _vlnce,
    "r2r-twin": _twin,
}


def uncovered(registered: Iterable[str], cases: dict[str, Case]) -> str:
    """What a registry whose tasks and ``CASES`` differ must fix ("" when they agree).

    Example:
        >>> uncovered(["r2r", "goalnav"], {"r2r": _r2r_family, "old": _demo})
        'task(s) goalnav have no case: add one to CASES in tests/tasks/test_registry_tasks.py (split, Scorer keywords and a predictions file the task scores); CASES names old, not a registered task'
    """
    names = set(registered)
    new, gone = sorted(names - set(cases)), sorted(set(cases) - names)
    parts = [f"CASES names {', '.join(gone)}, not a registered task"] if gone else []
    if new:
        parts.insert(0, f"task(s) {', '.join(new)} have no case: add one to CASES in "
                     "tests/tasks/test_registry_tasks.py (split, Scorer keywords and a "
                     "predictions file the task scores)")  # fmt: skip
    return "; ".join(parts)


def test_every_registered_task_has_a_case_here() -> None:
    assert not uncovered(TASKS, CASES), uncovered(TASKS, CASES)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_task_loads_through_the_registry(name: str) -> None:
    task = TASKS.get(name.upper())
    assert isinstance(task, Task) and task is get_task(name) and task.name == name
    assert task.description and task.default_split in task.splits and task.file_names
    for target in (task.loader, task.open_scorer, task.street_routes, task.object_boxes):
        if isinstance(target, str) and target:
            assert callable(load_entry_point(target)), (name, target)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_task_declares_its_options_once(name: str) -> None:
    task = get_task(name)
    assert len(set(task.option_names)) == len(task.options)
    for option in task.options:
        assert isinstance(option, Option) and option.help, (name, option)
        if option.choices and option.default is not None:
            assert option.default in option.choices, (name, option)
    assert task.data_versions == (
        task.option("data_version").choices if task.has_option("data_version") else ()
    )


def test_the_command_line_offers_every_declared_cli_option() -> None:
    parser = build_parser()
    offered = {o.name for t in TASKS.values() for o in t.options if o.cli}
    for task in TASKS.values():
        for option in task.options:
            value = option.choices[0] if option.choices else "x"
            argv = ["score", "--task", task.name, option.flag, value]
            if option.name in offered:  # by this task or another (a shared name, one flag)
                assert getattr(parser.parse_args(argv), option.name) == value
            else:
                with pytest.raises(SystemExit):
                    parser.parse_args(argv)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_task_s_profiles_exist(name: str) -> None:
    task = get_task(name)
    assert task.default_profile in task.profiles
    for profile in task.profiles:
        assert get_profile(profile).name == profile


def test_every_profile_is_registered_under_its_own_name_and_scores_a_task() -> None:
    used = {p for t in TASKS.values() for p in t.profiles}
    for name in PROFILES:
        assert PROFILES.get(name).name == name
        assert name in used, name


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_task_s_fixture_scores_through_the_scorer(name: str, tmp_path: Path) -> None:
    if name not in CASES:
        pytest.fail(uncovered([name], CASES).split(";")[0])
    split, kw, predictions = CASES[name](tmp_path)
    with vlneval.Scorer(name, split, **kw) as scorer:
        result = scorer.score(predictions)
    assert isinstance(result, vlneval.Result)
    assert result.task == name and result.n_episodes > 0
    profile = get_profile(get_task(name).default_profile)
    assert result.metrics and set(result.metrics) <= set(profile.metrics)
    assert result.to_dict()["profile"]["name"] == profile.name
