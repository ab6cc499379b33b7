"""Blocks of whole records: every cut is a complete JSON array, whatever the block size."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from tests.fixtures import preds, square_root, write_json
from vlneval.data.stream import Incomplete, array_blocks
from vlneval.evaluation import evaluate


@pytest.mark.parametrize("gz", [False, True])
def test_blocks_rebuild_the_array(tmp_path: Path, gz: bool) -> None:
    rng = random.Random(0)
    for trial in range(40):
        recs = [
            {
                "id": f"x{i}",
                "s": rng.choice(["a,]b", '\\"q]', "{[,", "é"]),
                "t": [["v", 1.5, [2, {"k": "]"}]]],
            }
            for i in range(rng.randint(0, 25))
        ]
        text = json.dumps(
            recs, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5
        ).encode()
        p = tmp_path / f"a{trial}.json"
        p.write_bytes(gzip.compress(text) if gz else text)
        got = [
            r
            for block in array_blocks(p, size=rng.randint(1, 40)) or []
            for r in json.loads(bytes(block))
        ]
        assert got == recs


def test_unclosed_or_trailing_data_is_incomplete(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    for text in ("[1, 2", "[1, 2] x"):
        p.write_text(text)
        with pytest.raises(Incomplete):
            list(array_blocks(p, size=3) or [])
    p.write_text('{"a": 1}')
    assert array_blocks(p) is None


def test_small_blocks_score_like_one_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = square_root(tmp_path / "root")
    p = write_json(
        tmp_path / "p.json",
        preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"], "1_2": ["S"], "9_9": ["S"]}),
    )
    whole = evaluate("r2r", "val", p, root=root)
    import vlneval.data.stream as stream

    monkeypatch.setattr(stream.array_blocks, "__kwdefaults__", {"size": 7})  # many tiny blocks
    small = evaluate("r2r", "val", p, root=root)
    assert small.metrics == whole.metrics
    assert small.warnings == whole.warnings


def test_truncated_or_missing_files_decline(tmp_path: Path) -> None:
    recs = [{"instr_id": f"{i}_0", "trajectory": [["a", 0, 0]]} for i in range(3000)]
    raw = gzip.compress(json.dumps(recs).encode())
    p = tmp_path / "p.json.gz"
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(Incomplete, match="cannot be read to its end"):
        list(array_blocks(p, size=1000) or [])
    assert array_blocks(tmp_path / "missing.json") is None
    p.write_bytes(b"\x1f\x8bnot gzip")
    assert array_blocks(p) is None


def test_a_truncated_gzip_episode_file_gets_one_clear_error(tmp_path: Path) -> None:
    from vlneval.data.r2r import load_r2r
    from vlneval.errors import InvalidInputError

    eps = [
        {"path_id": i, "scan": "sq", "path": ["S", "G"], "instructions": ["go"], "distance": 4}
        for i in range(3000)
    ]
    raw = gzip.compress(json.dumps(eps).encode())
    p = tmp_path / "R2R_val.json.gz"
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(InvalidInputError, match="R2R_val.json.gz"):
        load_r2r(p)
