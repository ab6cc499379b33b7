"""The organiser's checks of a new phase: a hidden split (told by its error type) has no goals
to score against, and a profile must score the phase's task (the library's own check)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.server.conftest import Server
from tests.tasks.test_hidden_splits import CASES, broken_test_root
from vlneval.errors import HiddenSplitError, InvalidInputError, UnknownNameError, VLNEvalError
from vlneval.server.services import admin
from vlneval.tasks import get_task

NO_GOALS = "has no goals; a phase needs the episodes file with the hidden labels (reference paths and goals)"


def _resolve(task: str, root: Path) -> admin.ResolvedData:
    return admin.resolve_data(
        task,
        "test",
        get_task(task).default_profile,
        episodes_file=None,
        graphs=None,
        data_root=str(root),
    )


@pytest.mark.parametrize(("task", "make", "file", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_hidden_split_is_no_phase_and_its_file_is_named(
    task: str, make: Callable[[Path], Path], file: str, message: str, tmp_path: Path
) -> None:
    root = make(tmp_path / "root")
    with pytest.raises(InvalidInputError) as exc:
        _resolve(task, root)
    assert not isinstance(exc.value, HiddenSplitError)
    assert str(exc.value) == f"error: {root / file}: {NO_GOALS}"


def test_another_refusal_of_the_split_is_passed_on(tmp_path: Path) -> None:
    """Only the hidden-split refusal becomes 'has no goals'; a broken file keeps its message."""
    from vlneval.evaluation import Scorer

    root = broken_test_root(tmp_path / "root")
    with pytest.raises(InvalidInputError) as said:
        Scorer("r2r", "test", root=root)
    with pytest.raises(InvalidInputError) as exc:
        _resolve("r2r", root)
    assert str(exc.value) == str(said.value) and NO_GOALS not in str(exc.value)


def test_a_phase_profile_is_checked_as_the_library_checks_it(sqlite_server: Server) -> None:
    db = sqlite_server.db
    with pytest.raises(VLNEvalError) as exc:
        admin.create_phase(db, "demo", "other", task="demo", profile="cvdn")
    assert str(exc.value) == (
        "profile cvdn does not score task demo (its profiles: demo, r2r, r2r-envdrop, r2r-duet)"
    )
    with pytest.raises(UnknownNameError, match="unknown profile 'r2rr'; did you mean 'r2r'"):
        admin.create_phase(db, "demo", "other", task="demo", profile="r2rr")
    admin.create_phase(db, "demo", "upper", task="demo", profile="R2R")  # any case, as the CLI
    with db.read() as s:
        assert admin.find_phase(s, "demo", "upper").profile == "r2r"
