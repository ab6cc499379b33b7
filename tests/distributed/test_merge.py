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
    # one line: the missing shard's ids are not listed after it
    assert text == "error: merge: shard 1/3 is missing: none of the files given is shard 1 of 3\n"
    text = _fails(capsys, d / "preds.shard-0-of-3.jsonl", "--out", d / "m.json", "--all-errors")
    assert text.splitlines() == [
        f"error: merge: shard {k}/3 is missing: none of the files given is shard {k} of 3"
        for k in (1, 2)
    ]
    assert not (d / "m.json").exists()
    # --allow-partial merges anyway and says so
    assert vlneval("merge", d / "preds.shard-0-of-3.jsonl", d / "preds.shard-2-of-3.jsonl", "--out",
                   d / "m.json", "--allow-partial") == 0  # fmt: skip
    said = capsys.readouterr().err.splitlines()[-1]
    assert said.startswith("merged 2 of 3 shards: partial: 24 of 36 demo val episodes; wrote ")
    card = json.loads((d / "m.protocol.json").read_text())
    assert (card["episodes"], card["n_expected"], card["partial"]) == (24, 36, True)
    assert len(json.loads((d / "m.json").read_text())) == 24


def test_a_shard_whose_manifest_is_missing_is_named_by_its_records_file(
    demo_shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = demo_shards.parent
    (d / "preds.shard-1-of-3.manifest.json").unlink()
    text = _fails(capsys, d, "--out", d / "m.json")
    records, manifest = d / "preds.shard-1-of-3.jsonl", d / "preds.shard-1-of-3.manifest.json"
    assert (
        text
        == f"error: {records}: has no manifest ({manifest}): run that shard again (without it, --resume starts over)\n"
    )


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


def test_a_continuous_run_names_its_missing_ids_by_episode_id(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    split = json.loads(gzip.decompress((data_root / "r2r/R2R_val_unseen.json.gz").read_bytes()))
    episodes = tmp_path / "eps.json"
    episodes.write_text(json.dumps(split[:1]))
    out = tmp_path / "shards" / "preds.json"
    out.parent.mkdir()
    for i in range(2):
        assert vlneval("run", "--task", "r2r-twin", "--data-root", data_root, "--episodes",
                       episodes, "--agent", "random", "--out", out, "--shard", f"{i}/2",
                       "--quiet") == 0  # fmt: skip
    records, manifest = (
        out.with_name("preds.shard-1-of-2.jsonl"),
        out.with_name("preds.shard-1-of-2.manifest.json"),
    )
    lines = records.read_bytes().splitlines(keepends=True)
    records.write_bytes(b"".join(lines[:-1]))  # a killed shard: its last episode not written
    m = json.loads(manifest.read_text())
    assert m["id_field"] == "episode_id"  # the merge reads the name from the manifest
    manifest.write_text(json.dumps({**m, "status": "running"}))
    last = json.loads(lines[-1])
    text = _fails(capsys, out.parent, "--out", tmp_path / "m.json")
    assert f'error: {records} (shard 1/2): missing episode_id "{last["id"]}"' in text.splitlines()


def test_the_warnings_not_shown_are_counted_with_their_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(tmp_path / "preds.json", "--shard", "0/25")
    shard = tmp_path / "preds.shard-00-of-25.jsonl"
    assert vlneval("merge", shard, "--out", tmp_path / "m.json", "--allow-partial") == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[19:21] == [
        "warning: merge: shard 20/25 is missing: none of the files given is shard 20 of 25",
        "warning: merge: 4 more problems not shown (--all-errors lists them all)",
    ]
