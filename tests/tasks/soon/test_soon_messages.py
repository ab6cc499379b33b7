"""What the SOON reader says: values clipped and numbers described as the other readers do."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.soon.soon_fixtures import EPISODES, HAND, dump, soon_preds, soon_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _problems(tmp: Path, records: Any = None, episodes: Any = None) -> list[str]:
    root = soon_root(tmp / "root", episodes)
    p = dump(tmp / "preds.json", soon_preds() if records is None else records)
    with pytest.raises(InvalidInputError) as exc:
        evaluate("soon", "val", p, root=root)
    return [str(q).split(": ", 1)[1] for q in exc.value.problems]


def test_an_episode_id_of_the_wrong_type_is_clipped(tmp_path: Path) -> None:
    episodes = copy.deepcopy(EPISODES)
    episodes[0]["instr_id"] = ["y" * 100_000]
    assert _problems(tmp_path, episodes=episodes) == [
        f"record 0: instr_id must be a string, got list ['{'y' * 78}… (1 item)"
    ]


def test_a_huge_number_is_described_as_the_other_readers_do(tmp_path: Path) -> None:
    big = 10**350  # valid JSON, within the reader's 400-character number limit
    records = soon_preds()
    records[1]["trajectory"][0]["path"][1][1] = big
    records[2]["trajectory"][0]["path"][0][2] = "up"
    records[3]["trajectory"][0]["obj_heading"] = [big]
    assert _problems(tmp_path, records) == [
        'instr_id "2": trajectory[0].path[1]: heading is an integer of 351 digits, beyond a '
        "double's range (must be finite)",
        "instr_id \"3\": trajectory[0].path[0]: elevation must be a number, got 'up'",
        'instr_id "4": trajectory[0].obj_heading: obj_heading must be a finite number (or '
        "[number]), got an integer of 351 digits, beyond a double's range",
    ]


def test_the_completeness_example_is_an_id_a_record_writes(tmp_path: Path) -> None:
    """The example of an id is the instruction's ("2"), not its episode's ("2#0")."""
    records = soon_preds({"1": HAND["1"], "3": HAND["3"], "77": HAND["4"]})
    assert _problems(tmp_path, records) == [
        "2 of 5 episodes have no prediction (first: 2#0, 4#0); profile soon requires all of them: "
        "score only the predicted ones with --subset (subset=True in Python), reported as "
        "partial; 1 "
        'record has an id not in the split: "77" (an id of another type, or with spaces? ids '
        'match exactly, e.g. "2")'
    ]


_LINES_REFUSED = (
    "not valid JSON: Extra data at line 2, column 1 (JSON lines, one record per line? this "
    "file must be one JSON list)"
)
_OBJECT_REFUSED = "expected a JSON list of SOON predictions, got a JSON object"


@pytest.mark.parametrize(
    ("name", "shape", "message"),
    [
        ("preds.json", "lines", _LINES_REFUSED),
        ("preds.jsonl", "lines", _LINES_REFUSED),  # the suffix changes nothing
        ("preds.jsonl", "one line", _OBJECT_REFUSED),
        ("preds.json", "keyed", _OBJECT_REFUSED),
        ("preds.json", "one record", _OBJECT_REFUSED),
    ],
)
def test_predictions_are_one_json_list_only(
    tmp_path: Path, name: str, shape: str, message: str
) -> None:
    """SOON predictions are one JSON list (README: REVERIE, NDH and SOON read no JSON lines):
    JSON lines, an object keyed by instr_id, or one record are each refused with one error."""
    records = soon_preds()
    text = {
        "lines": "\n".join(json.dumps(r) for r in records) + "\n",
        "one line": json.dumps(records[0]) + "\n",
        "keyed": json.dumps({r["instr_id"]: r for r in records}),
        "one record": json.dumps(records[0]),
    }[shape]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InvalidInputError) as exc:
        evaluate("soon", "val", path, root=soon_root(tmp_path / "root"))
    assert [str(p) for p in exc.value.problems] == [f"{path}: {message}"]
    assert str(exc.value) == f"error: {path}: {message}"
