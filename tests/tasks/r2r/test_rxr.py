"""RxR: guide JSONL episodes keyed by instruction_id, JSONL predictions, profile rxr."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, write_json
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _root(tmp: Path) -> Path:
    write_json(
        tmp / "matterport3d/connectivity/sq_connectivity.json", connectivity(SQUARE, SQUARE_EDGES)
    )
    rows = [
        {
            "instruction_id": 11,
            "path_id": 1,
            "scan": "sq",
            "path": ["S", "A", "B", "G"],
            "heading": 0.5,
            "instruction": "walk around the square",
            "language": "en-US",
        },
        {
            "instruction_id": 12,
            "path_id": 1,
            "scan": "sq",
            "path": ["S", "A", "B", "G"],
            "heading": 0.5,
            "instruction": "दीवार के साथ चलें",
            "language": "hi-IN",
        },
    ]
    (tmp / "rxr").mkdir(parents=True)
    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"
    (tmp / "rxr/rxr_val_unseen_guide.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    return tmp


def test_rxr_scores_jsonl_predictions(tmp_path: Path) -> None:
    root = _root(tmp_path / "root")
    p = tmp_path / "preds.jsonl"
    p.write_text(
        '{"instruction_id": 11, "path": ["S", "G"]}\n{"instruction_id": 12, "path": ["S", "A", "B", "G"]}\n'
    )
    r = evaluate("rxr", "val_unseen", p, root=root)
    assert r.to_dict()["profile"]["name"] == "rxr"
    assert list(r.metrics) == ["TL", "NE", "SR", "SPL", "nDTW", "sDTW"]
    rows = {row["instruction_id"]: row for row in r.rows()}
    assert rows[11]["ndtw"] == pytest.approx(math.exp(-8 / 12)) and rows[12]["ndtw"] == 1.0
    assert r.metrics["nDTW"] == pytest.approx((1 + math.exp(-8 / 12)) / 2)


def test_rxr_bad_line_is_named(tmp_path: Path) -> None:
    root = _root(tmp_path / "root")
    p = tmp_path / "preds.jsonl"
    p.write_text('{"instruction_id": 11, "path": ["S", "G"]}\n{"instruction_id": 12, "path": [\n')
    with pytest.raises(InvalidInputError, match="preds.jsonl: line 2: not valid JSON"):
        evaluate("rxr", "val_unseen", p, root=root)
