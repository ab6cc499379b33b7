"""Predictions are read once: ``read_input`` names and gunzips an input, and every later reader
(the shared parser, a task's own scorer, the public check of a hidden test split) takes what it
read instead of reading it again; a data version's test file is found without loading it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vlneval.io.reader
import vlneval.tasks.common.blind as blind
from tests.tasks.reverie.reverie_fixtures import reverie_root
from vlneval.errors import InvalidInputError, MissingDataError, Problem
from vlneval.tasks import get_profile, get_task
from vlneval.tasks.base import Task
from vlneval.tasks.common.blind import (
    SplitIndex,
    blind_check,
    open_blind,
    public_check,
    public_problems,
    public_view,
)
from vlneval.tasks.common.inputs import ReadInput, read_input, source_name
from vlneval.tasks.common.predictions import parse_predictions
from vlneval.tasks.common.request import SplitRequest
from vlneval.tasks.common.root import demo_root
from vlneval.tasks.common.scoring import load_split

DEMO = demo_root() / "demo" / "predictions_val.json"
TEST_RUN = [{"instr_id": "3_0", "trajectory": [["S", 0.0, 0.0]], "predObjId": 8}]


def _gunzips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources of every gzip stream decompressed from now on."""
    seen: list[str] = []
    gunzip = vlneval.io.reader.gunzip

    def counted(raw: bytes, source: str, limit: int, **kw: Any) -> bytes:
        seen.append(source)
        return gunzip(raw, source, limit, **kw)

    monkeypatch.setattr(vlneval.io.reader, "gunzip", counted)
    return seen


def test_a_read_input_is_taken_as_it_is() -> None:
    given = read_input(gzip.compress(b"[]"))
    assert read_input(given) is given and read_input(given, keyed=True) is given
    assert source_name(ReadInput("mine.json", text=b"[]")) == "mine.json"
    keyed = read_input({"1": []}, keyed=True)
    assert read_input(keyed, keyed=True) is keyed
    with pytest.raises(InvalidInputError, match=r"^error: <records>: expected a path, bytes or a "
                       r"list of records, got dict$"):  # fmt: skip
        read_input(keyed)


def test_the_shared_parser_reads_a_file_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    task = get_task("demo")
    episodes, store = load_split(task, "val", get_profile(task.default_profile))
    path = tmp_path / "demo.json.gz"
    path.write_bytes(gzip.compress(DEMO.read_bytes()))
    seen = _gunzips(monkeypatch)
    from_path = parse_predictions(path, episodes, store)
    assert seen == [str(path)]
    given = read_input(path)
    from_read = parse_predictions(given, episodes, store)
    assert seen == [str(path)] * 2  # read_input's own read; the parser reads nothing more
    assert from_read.source == from_path.source == str(path)
    for name in ("episodes", "nodes", "offsets"):
        assert np.array_equal(getattr(from_read, name), getattr(from_path, name))
    named = parse_predictions(ReadInput("upload.json", text=DEMO.read_bytes()), episodes, store)
    assert named.source == "upload.json"


def test_a_file_gzipped_twice_is_not_gunzipped_twice(tmp_path: Path) -> None:
    """A behaviour change: the shared parser used to gunzip a path's text a second time, so a
    file gzipped twice was read by the R2R-style tasks only; now it is refused, as by every
    other task."""
    task = get_task("demo")
    episodes, store = load_split(task, "val", get_profile(task.default_profile))
    path = tmp_path / "twice.json.gz"
    path.write_bytes(gzip.compress(gzip.compress(DEMO.read_bytes())))
    with pytest.raises(InvalidInputError) as info:
        parse_predictions(path, episodes, store)
    assert str(info.value) == f"error: {path}: not UTF-8 text (byte 1)"


def test_the_blind_check_reads_a_file_once(tmp_path: Path) -> None:
    """``vlneval validate`` on a hidden split refuses a file gzipped twice, as scoring does
    (the blind check gunzipped the file's text a second time)."""
    task = get_task("demo")
    profile = get_profile(task.default_profile)
    episodes, store = load_split(task, "val", profile)
    path = tmp_path / "twice.json.gz"
    path.write_bytes(gzip.compress(gzip.compress(DEMO.read_bytes())))
    check = blind_check(public_view(episodes), store, profile, path)
    assert [str(p) for p in check.problems] == [f"{path}: not UTF-8 text (byte 1)"]


def test_a_gzipped_upload_made_for_another_split_is_told_its_split() -> None:
    """The split hint reads the upload's JSON text, not its gzip bytes."""
    task = get_task("demo")
    profile = get_profile(task.default_profile)
    episodes, store = load_split(task, "val", profile)
    records = [{"instr_id": f"9{k}_0", "trajectory": [["a", 0.0, 0.0]]} for k in range(3)]
    splits = SplitIndex({"train": lambda: [r["instr_id"] for r in records]})
    raw = gzip.compress(json.dumps(records).encode())
    problems, _ = public_check(
        raw, "up.json.gz", public_view(episodes), store, profile, splits=splits
    )
    assert [p.message for p in problems] == [
        f"no prediction matches an episode of demo val ({len(episodes):,} episodes); 3 of the "
        "file's 3 ids are episodes of demo train: this phase scores val, was the file made for "
        "train?"
    ]


def _reverie_test(root: Path, version: str = "v1") -> SplitRequest:
    task = get_task("reverie")
    profile = get_profile(task.default_profile)
    return SplitRequest(task, "test", profile, root=root, options={"data_version": version})


def test_the_public_check_gunzips_a_file_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The split hint and the task's scorer take the same text: one decompression (two before)."""
    checker = open_blind(_reverie_test(reverie_root(tmp_path / "root")))
    assert checker is not None
    try:
        path = tmp_path / "run.json.gz"
        path.write_bytes(gzip.compress(json.dumps(TEST_RUN).encode()))
        splits = SplitIndex({"val": lambda: ["1_7_0", "2_9_0"]})
        seen = _gunzips(monkeypatch)
        assert checker.check(path, splits=splits) == ([], [])
        assert seen == [str(path)]
        bad = [dict(TEST_RUN[0], trajectory=[["nowhere", 0.0, 0.0]])]
        path.write_bytes(gzip.compress(json.dumps(bad).encode()))
        problems = checker.problems(path, splits=splits)
        assert seen == [str(path)] * 2
        assert [str(p) for p in problems] == [
            f'{path}: instr_id "3_0": trajectory[0]: viewpoint nowhere is not in scan sq'
        ]
        assert checker.problems(gzip.compress(json.dumps(bad).encode()), splits=splits) == [
            p.__class__("<bytes>", p.message.replace(str(path), "<bytes>"), p.episode, p.field)
            for p in problems
        ]
    finally:
        checker.close()


def _file_id_scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The id field of every split-hint scan of a file (``blind.file_ids``) from now on."""
    seen: list[str] = []
    scan = blind.file_ids

    def counted(text: bytes, id_field: str) -> set[str]:
        seen.append(id_field)
        return scan(text, id_field)

    monkeypatch.setattr(blind, "file_ids", counted)
    return seen


def test_a_valid_upload_is_not_scanned_for_its_split(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The split hint decodes a file a second time: only a file the scorer refuses is scanned
    (a valid file cannot be of another split: it has ids of this one)."""
    checker = open_blind(_reverie_test(reverie_root(tmp_path / "root")))
    assert checker is not None
    task = get_task("demo")
    profile = get_profile(task.default_profile)
    episodes, store = load_split(task, "val", profile)
    view = public_view(episodes)
    try:
        splits = SplitIndex({"val": lambda: ["1_7_0"], "train": lambda: ["9_0"]})
        scans = _file_id_scans(monkeypatch)
        assert checker.check(json.dumps(TEST_RUN).encode(), splits=splits) == ([], [])
        demo = DEMO.read_bytes()
        assert public_check(demo, "up.json", view, store, profile, splits=splits)[0] == []
        assert scans == []
        wrong = json.dumps([dict(TEST_RUN[0], instr_id="1_7_0")]).encode()
        assert [p.message for p in checker.problems(wrong, splits=splits)] == [
            "no prediction matches an episode of reverie test (1 episodes); 1 of the file's 1 "
            "ids are episodes of reverie val: this phase scores test, was the file made for val?"
        ]
        assert scans == ["instr_id"]
        other = json.dumps([{"instr_id": "9_0", "trajectory": [["a", 0.0, 0.0]]}]).encode()
        assert [p.message for p in public_problems(other, "up.json", view, store, profile,
                                                   splits=splits)] == [
            f"no prediction matches an episode of demo val ({len(view):,} episodes); 1 of the "
            "file's 1 ids are episodes of demo train: this phase scores val, was the file made "
            "for train?"
        ]  # fmt: skip
        assert scans == ["instr_id"] * 2
        assert checker.problems(wrong) == [
            Problem("<bytes>", "no prediction matches an episode of reverie test")
        ]  # no other split given: the file is not scanned
        assert public_problems(other, "up.json", view, store, profile) == [
            Problem("up.json", "no prediction matches an episode of demo val")
        ]
        assert scans == ["instr_id"] * 2
    finally:
        checker.close()


def test_a_release_is_found_without_opening_the_split(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = reverie_root(tmp_path / "root")
    opened: list[str] = []
    task_open = Task.open

    def counted(self: Task, request: SplitRequest) -> Any:
        opened.append(str(request.episodes_file))
        return task_open(self, request)

    monkeypatch.setattr(Task, "open", counted)
    for version, rel in (("v1", "REVERIE_test.json"), ("V2", "data_v2/REVERIE_test.json")):
        checker = open_blind(_reverie_test(root, version))
        assert checker is not None
        try:
            assert list(checker.originals) == [str(root / "reverie" / rel)]
            assert opened == [str(checker.copy)]  # only the public copy is opened, once
        finally:
            checker.close()
        opened.clear()


def test_a_missing_release_is_said_in_the_scorers_words(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "touchdown" / "touchdown_unseen_split").mkdir(parents=True)
    task = get_task("touchdown")
    request = SplitRequest(
        task, "test", get_profile(task.default_profile), root=root,
        options={"data_version": "unseen"},
    )  # fmt: skip
    with pytest.raises(MissingDataError) as scorer:
        task.open(request)
    with pytest.raises(MissingDataError) as blind:
        open_blind(request)
    assert str(blind.value) == str(scorer.value)
    assert str(blind.value).startswith("no touchdown test routes (unseen) found under ")


MISSING_RELEASES = [
    # (task, data version given, the scorer's words for a split missing from that release)
    ("touchdown", "unseen", "no touchdown dev routes (unseen) found under {root}/touchdown (splits "
     "found for unseen: none); get its files with `vlneval data fetch touchdown-unseen`"),
    ("touchdown-sdr", "Original", "no touchdown dev routes (original) found under "
     "{root}/touchdown (splits found for original: test); get its files with `vlneval data "
     "fetch touchdown`"),
    ("reverie", "V2", "no reverie val_unsen episodes for data version v2 under {root}/reverie; "
     "did you mean 'val_unseen'? (splits found for v2: test, val); get its files with `vlneval "
     "data fetch reverie`"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "version", "words"), MISSING_RELEASES)
def test_a_missing_release_gets_the_scorers_exact_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, version: str, words: str
) -> None:
    """The blind check words it as the scorer does, without opening one."""
    root = reverie_root(tmp_path / "root")
    (root / "touchdown" / "touchdown_unseen_split").mkdir(parents=True)
    (root / "touchdown" / "data").mkdir()
    (root / "touchdown" / "data" / "test.json").write_text("")
    task = get_task(name)
    split = "val_unsen" if name == "reverie" else "dev"
    request = SplitRequest(
        task, split, get_profile(task.default_profile), root=root,
        options={"data_version": version},
    )  # fmt: skip
    expected = words.format(root=root)
    with pytest.raises(MissingDataError) as scorer:
        task.open(request)
    assert str(scorer.value) == expected
    opened: list[str] = []
    monkeypatch.setattr(Task, "open", lambda self, request: opened.append(self.name))
    with pytest.raises(MissingDataError) as blind:
        open_blind(request)
    assert str(blind.value) == expected
    assert opened == []


def test_the_public_view_of_a_task_table_holds_no_hidden_column(tmp_path: Path) -> None:
    """A REVERIE table's goal objects stay behind: the view is the base table."""
    from vlneval.tasks.common.episodes import EpisodeTable
    from vlneval.tasks.reverie.format import load_reverie

    root = reverie_root(tmp_path)
    table = load_reverie(root / "reverie" / "REVERIE_val.json", split="val", data_version="v1")
    view = public_view(table)
    assert type(view) is EpisodeTable and not hasattr(view, "object_ids")
    assert view.ids == table.ids and view.goals == [()] * len(table) and not view.scorable
