"""A goal task's scorer names every problem of a file together, completeness first, as R2R
does: a missing episode is not hidden behind a record's unknown viewpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import vlneval
from tests.tasks.test_registry_tasks import CASES
from vlneval.errors import InvalidInputError

KEYS = ("trajectory", "agent_pose", "path")


def _broken(path: Path) -> list[dict[str, Any]]:
    """The records with the last one dropped and the first one's second step unknown (SOON:
    of its first start path's)."""
    records = json.loads(path.read_text())[:-1]
    steps = records[0][next(k for k in KEYS if k in records[0])]
    steps = steps[0]["path"] if isinstance(steps[0], dict) else steps
    steps[1] = ["nosuchvp", *steps[1][1:]] if isinstance(steps[1], list) else "nosuchvp"
    return records


@pytest.mark.parametrize("name", ["ndh", "hanna", "reverie", "soon"])
def test_completeness_and_reading_problems_come_together(name: str, tmp_path: Path) -> None:
    split, kw, predictions = CASES[name](tmp_path)
    with vlneval.Scorer(name, split, **kw) as scorer, pytest.raises(InvalidInputError) as exc:
        scorer.score(_broken(predictions))
    problems = [str(p) for p in exc.value.problems]
    assert len(problems) == 2, problems
    assert " episodes have no prediction (first: " in problems[0]
    assert "viewpoint nosuchvp is not in scan" in problems[1]


@pytest.mark.parametrize(
    ("name", "file", "field"),
    [
        ("hanna", "hanna/hanna_val_unseen.json", "path_id"),
        ("reverie", "reverie/REVERIE_val.json", "id"),
    ],
)
def test_an_episode_file_s_duplicate_id_names_its_first_record(
    name: str, file: str, field: str, tmp_path: Path
) -> None:
    split, kw, _ = CASES[name](tmp_path)
    episodes = Path(kw["root"]) / file
    records = json.loads(episodes.read_text())
    episodes.write_text(json.dumps([*records, records[0]]))
    with pytest.raises(InvalidInputError) as exc:
        vlneval.Scorer(name, split, **kw)
    assert [str(p) for p in exc.value.problems] == [
        f"{episodes}: record {len(records)}: duplicate {field} {records[0][field]} (also record 0)"
    ]


@pytest.mark.parametrize("name", ["ndh", "hanna", "reverie", "soon"])
def test_completeness_is_said_when_the_one_matched_record_is_malformed(
    name: str, tmp_path: Path
) -> None:
    split, kw, predictions = CASES[name](tmp_path)
    records = _broken(predictions)[:1]
    with vlneval.Scorer(name, split, **kw) as scorer, pytest.raises(InvalidInputError) as exc:
        scorer.score(records)
    problems = [str(p) for p in exc.value.problems]
    assert len(problems) == 2, problems
    assert " episodes have no prediction (first: " in problems[0]
    assert "viewpoint nosuchvp is not in scan" in problems[1]
