"""Merging: byte identity with a single run, and every refusal with its message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.distributed.conftest import vlneval
from vlneval.distributed import merge
from vlneval.errors import InvalidInputError


def _run(out: Path, *extra: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)  # a missing output folder is an error
    assert (
        vlneval(
            "run",
            "--task",
            "demo",
            "--agent",
            "random",
            "--seed",
            "0",
            "--out",
            out,
            "--quiet",
            *extra,
        )
        == 0
    )


def test_one_and_seven_shards_give_the_bytes_of_a_single_run(tmp_path: Path) -> None:
    single = tmp_path / "single.json"
    _run(single)
    for n, balance in ((1, ()), (7, ()), (7, ("--balance-scans",))):
        d = tmp_path / f"{n}{''.join(balance)}"
        for i in range(n):
            _run(d / "preds.json", "--shard", f"{i}/{n}", *balance)
        assert vlneval("merge", *sorted(d.glob("*.jsonl")), "--out", d / "cli.json") == 0
        merged = merge(sorted(d.glob("*.manifest.json")), out=d / "api.json")  # the Python API
        assert (d / "cli.json").read_bytes() == (d / "api.json").read_bytes() == single.read_bytes()
        card = json.loads((d / "cli.protocol.json").read_text())
        ref = json.loads((tmp_path / "single.protocol.json").read_text())
        assert card.pop("shards")["count"] == n and card == ref
        assert merged.n_episodes == 36 and not merged.partial


def _fails(capsys: pytest.CaptureFixture[str], *args: object) -> str:
    assert vlneval("merge", *args) == 2
    return capsys.readouterr().err


def test_missing_shard_names_the_shard_and_its_ids(
    demo_shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = demo_shards.parent
    text = _fails(
        capsys,
        d / "preds.shard-0-of-3.jsonl",
        d / "preds.shard-2-of-3.jsonl",
        "--out",
        d / "m.json",
    )
    lines = text.splitlines()
    assert lines[0] == "error: merge: shard 1/3 is missing: none of the files given is shard 1 of 3"
    assert lines[1] == 'error: merge (in no shard given): missing instr_id "200_0"'
    assert len(lines) == 13 and lines[-1].endswith('missing instr_id "203_2"')
    # only shard 0: 24 ids missing, the first 20 problems shown unless --all-errors
    text = _fails(capsys, d / "preds.shard-0-of-3.jsonl", "--out", d / "m.json")
    assert text.splitlines()[-1] == "error: 6 more problems not shown (--all-errors lists them all)"
    text = _fails(capsys, d / "preds.shard-0-of-3.jsonl", "--out", d / "m.json", "--all-errors")
    assert len(text.splitlines()) == 26
    assert not (d / "m.json").exists()
    # --allow-partial merges anyway and says so
    assert vlneval("merge", d / "preds.shard-0-of-3.jsonl", d / "preds.shard-2-of-3.jsonl", "--out",
                   d / "m.json", "--allow-partial") == 0  # fmt: skip
    assert json.loads((d / "m.protocol.json").read_text())["episodes"] == "partial: 24 of 36"
    assert len(json.loads((d / "m.json").read_text())) == 24


def test_duplicate_ids_are_refused_even_when_partial(
    demo_shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = demo_shards.parent
    first = (d / "preds.shard-0-of-3.jsonl").read_bytes().splitlines(keepends=True)[0]
    with open(d / "preds.shard-1-of-3.jsonl", "ab") as fh:
        fh.write(first)
    text = _fails(capsys, d, "--out", d / "m.json", "--allow-partial")
    shard1 = d / "preds.shard-1-of-3.jsonl"
    assert f'error: {shard1}: line 13: instr_id "100_0" is not in the plan of shard 1' in text
    assert (
        f'error: {shard1}: duplicate instr_id "100_0": line 13, and preds.shard-0-of-3.jsonl line 1'
        in text
    )


def _edit(manifest: Path, **fields: object) -> None:
    m = json.loads(manifest.read_text())
    m.update(fields)
    manifest.write_text(json.dumps(m))


def test_mixed_seeds_and_splits_are_refused(
    demo_shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = demo_shards.parent
    other = tmp_path / "seed1"
    _run(other / "preds.json", "--shard", "1/3", "--seed", "1")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for name in ("preds.shard-0-of-3", "preds.shard-2-of-3"):
        for ext in (".jsonl", ".manifest.json"):
            shutil.copy(d / f"{name}{ext}", mixed / f"{name}{ext}")
    for ext in (".jsonl", ".manifest.json"):
        shutil.copy(other / f"preds.shard-1-of-3{ext}", mixed / f"preds.shard-1-of-3{ext}")
    text = _fails(capsys, mixed, "--out", mixed / "m.json")
    assert (
        f"error: {mixed / 'preds.shard-1-of-3.manifest.json'}: seed is 1 but 0 in "
        "preds.shard-0-of-3.manifest.json: shards of different runs cannot be merged"
    ) in text
    _edit(d / "preds.shard-2-of-3.manifest.json", split="val_unseen")
    text = _fails(capsys, d, "--out", d / "m.json")
    assert (
        f"error: {d / 'preds.shard-2-of-3.manifest.json'}: split is 'val_unseen' but 'val' in "
        "preds.shard-0-of-3.manifest.json: shards of different runs cannot be merged"
    ) in text


def test_mixed_checkpoints_and_incomplete_shards_are_refused(
    demo_shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = demo_shards.parent
    _edit(d / "preds.shard-1-of-3.manifest.json", status="running")
    text = _fails(capsys, d, "--out", d / "m.json")
    assert "shard 1/3 is incomplete (status 'running', 12 of 12 episodes written)" in text
    _edit(d / "preds.shard-1-of-3.manifest.json", status="complete", checkpoint_sha256="ab" * 32)
    with pytest.raises(InvalidInputError, match="checkpoint_sha256 is 'abab"):
        merge([d], out=d / "m.json")
