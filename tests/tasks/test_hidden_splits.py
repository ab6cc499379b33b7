"""Every task scorer refuses a split without goals (a hidden test split) with one error type,
:class:`~vlneval.errors.HiddenSplitError`, that names the episodes file as its source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures import square_root, write_json
from tests.tasks.cvdn.fixture import INSTANCES, make_root
from tests.tasks.reverie.reverie_fixtures import reverie_root
from tests.tasks.soon.soon_fixtures import soon_root
from vlneval.errors import HiddenSplitError, InvalidInputError
from vlneval.evaluation import Scorer

#: The one refusal every task's scorer gives (``tasks.common.episodes.require_goals``).
HIDDEN = (
    "split test has no goals (a hidden test split); it cannot be scored locally: submit it to "
    "an evaluation server (vlneval submit)"
)


def r2r_test_root(tmp: Path) -> Path:
    """The square graph and an R2R ``test`` split whose one episode has no goal."""
    root = square_root(tmp)
    test = [{"path_id": 1, "scan": "sq", "path": ["S"], "heading": 0.0, "instructions": ["x"]}]
    write_json(root / "r2r" / "R2R_test.json", test)
    return root


def broken_test_root(tmp: Path) -> Path:
    """The square graph and an R2R ``test`` split whose one episode has no heading."""
    root = square_root(tmp)
    write_json(root / "r2r" / "R2R_test.json", [{"path_id": 1, "scan": "sq"}])
    return root


def ndh_test_root(tmp: Path) -> Path:
    """An NDH ``test`` split: the instances without end panoramas or paths."""
    hidden = ("end_panos", "planner_path", "player_path")
    return make_root(
        tmp, [{k: v for k, v in i.items() if k not in hidden} for i in INSTANCES], "test"
    )


#: (task, data root maker, the episodes file under the root, the refusal's message)
CASES: list[tuple[str, Callable[[Path], Path], str, str]] = [
    ("r2r", r2r_test_root, "r2r/R2R_test.json", HIDDEN),
    ("r2r-twin", r2r_test_root, "r2r/R2R_test.json", HIDDEN),
    ("reverie", reverie_root, "reverie/data_v2/REVERIE_test.json", HIDDEN),
    ("soon", soon_root, "soon/test.json", HIDDEN),
    ("ndh", ndh_test_root, "cvdn/NDH/test.json", HIDDEN),
]


@pytest.mark.parametrize(("task", "make", "file", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_hidden_split_is_refused_with_its_type(
    task: str, make: Callable[[Path], Path], file: str, message: str, tmp_path: Path
) -> None:
    root = make(tmp_path / "root")
    with pytest.raises(HiddenSplitError) as exc:
        Scorer(task, "test", root=root)
    assert isinstance(exc.value, InvalidInputError)
    assert [p.source for p in exc.value.problems] == [str(root / file)]
    assert str(exc.value) == f"error: {root / file}: {message}"


def test_the_vlnce_test_split_is_refused_with_its_type(data_root: Path) -> None:
    file = data_root / "vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "test" / "test.json.gz"
    with pytest.raises(HiddenSplitError) as exc:
        Scorer("r2r-ce", "test", root=data_root)
    assert str(exc.value) == f"error: {file}: {HIDDEN}"


def test_a_broken_test_file_is_no_hidden_split(tmp_path: Path) -> None:
    """Another refusal of a test split's file stays a plain input error."""
    with pytest.raises(InvalidInputError) as exc:
        Scorer("r2r", "test", root=broken_test_root(tmp_path / "root"))
    assert not isinstance(exc.value, HiddenSplitError)
