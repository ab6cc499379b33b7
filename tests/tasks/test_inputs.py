"""Every task scores a path, its bytes and its records alike (``vlneval.Scorer.score``).

Each registered task's fixture (the cases of ``test_registry_tasks.py``) is scored as the file,
as its bytes (plain, gzipped, with a BOM, and as JSON lines where the task reads them), and as
the records ``json.loads`` of the file gives; the results are identical but for the name of
the source. A bad record gives the same message from each, naming ``<bytes>`` or
``<records>`` instead of the file.
"""

from __future__ import annotations

import copy
import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import vlneval
from tests.tasks.test_registry_tasks import CASES
from vlneval.errors import InvalidInputError, MissingDataError
from vlneval.io import BOM
from vlneval.tasks import TASKS
from vlneval.tasks.common.inputs import read_input

#: Tasks whose predictions files may be JSON lines.
JSON_LINES = {"demo", "r2r", "r4r", "rxr", "hanna", "touchdown", "touchdown-sdr"}


def _records(path: Path) -> Any:
    """What ``json.loads`` gives for the file (a JSON-lines file: each line's value)."""
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def _lines(records: list[Any]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode() + b"\n"


def _shape(result: vlneval.Result, source: str, name: str) -> str:
    """The result's dict as JSON text, the predictions named ``name`` wherever it says ``source``."""
    d = result.to_dict()
    assert d.pop("predictions") == source
    return json.dumps(d, sort_keys=True, default=str).replace(json.dumps(source)[1:-1], name)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_path_bytes_and_records_give_the_same_result(name: str, tmp_path: Path) -> None:
    split, kw, path = CASES[name](tmp_path)
    records = _records(path)
    kept = copy.deepcopy(records)
    raw = path.read_bytes()
    given: dict[str, Any] = {
        "<bytes>": [raw, gzip.compress(raw), BOM + raw, bytearray(raw), memoryview(raw)],
        "<records>": [records],
    }
    if name in JSON_LINES and isinstance(records, list):
        given["<bytes>"].append(_lines(records))
    if isinstance(records, list):
        given["<records>"].append(tuple(records))
    with vlneval.Scorer(name, split, **kw) as scorer:
        expected = _shape(scorer.score(path), str(path), "SOURCE")
        for source, inputs in given.items():
            for value in inputs:
                got = scorer.score(value)
                assert got.source == source
                assert _shape(got, source, "SOURCE") == expected, (name, source, type(value))
    assert records == kept  # scoring never changes the caller's records


def _bad_rxr(r: Any) -> None:
    r[0]["path"] = []


def _bad_r2r(r: Any) -> None:
    r[0]["trajectory"] = []


def _bad_ndh(r: Any) -> None:
    r[0]["inst_idx"] = str(r[0]["inst_idx"])


def _bad_hanna(r: Any) -> None:
    r[0]["agent_ask"] = [0, 2, 0, 0]


def _bad_touchdown(r: Any) -> None:
    r[0]["route_id"] = "1"


def _bad_sdr(r: Any) -> None:
    r[0]["x"] = 99999.0


def _bad_reverie(r: Any) -> None:
    r[0]["predObjId"] = [7]


def _bad_soon(r: Any) -> None:
    r[0]["trajectory"] = r[0]["trajectory"][0]


def _bad_ce(r: Any) -> None:
    next(iter(r.values()))[0]["stop"] = "yes"


#: task -> (a change that makes the predictions bad, what the message says)
BAD: dict[str, tuple[Callable[[Any], None], str]] = {
    "demo": (_bad_r2r, "empty trajectory (it must include the start viewpoint)"),
    "r2r": (_bad_r2r, "empty trajectory (it must include the start viewpoint)"),
    "r4r": (_bad_r2r, "empty trajectory (it must include the start viewpoint)"),
    "rxr": (_bad_rxr, "empty trajectory (it must include the start viewpoint)"),
    "ndh": (_bad_ndh, "inst_idx must be a JSON integer, got str"),
    "hanna": (_bad_hanna, 'instr_id "10_0": agent_ask: agent_ask must be a list of ask actions'),
    "touchdown": (_bad_touchdown, "record 0: route_id must be a JSON integer, got str '1'"),
    "touchdown-sdr": (_bad_sdr, "x = 99999.0 lies outside the 3680 x 800 px panorama"),
    "reverie": (_bad_reverie, "predObjId must be an int object id (or a string), got [7]"),
    "soon": (_bad_soon, "trajectory must be a list with one entry per start path"),
    "r2r-ce": (_bad_ce, "stop must be true or false, got 'yes'"),
    "r2r-twin": (_bad_ce, "stop must be true or false, got 'yes'"),
}


def test_every_task_has_a_bad_input_case() -> None:
    assert sorted(BAD) == sorted(TASKS)


def _message(scorer: vlneval.Scorer, predictions: Any) -> str:
    with pytest.raises(InvalidInputError) as info:
        scorer.score(predictions)
    return str(info.value)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_bad_bytes_and_records_get_the_file_s_message(name: str, tmp_path: Path) -> None:
    split, kw, path = CASES[name](tmp_path)
    spoil, said = BAD[name]
    records = _records(path)
    spoil(records)
    bad = tmp_path / f"bad{path.suffix}"
    bad.write_text(_lines(records).decode() if path.suffix == ".jsonl" else json.dumps(records))
    with vlneval.Scorer(name, split, **kw) as scorer:
        by_file = _message(scorer, bad)
        assert said in by_file and str(bad) in by_file
        for source, value in (("<bytes>", bad.read_bytes()), ("<records>", records)):
            message = _message(scorer, value)
            expected = by_file.replace(str(bad), source)
            if source == "<records>":  # records in memory have no lines to name
                expected = re.sub(r": line \d+: ", ": ", expected)
            assert message == expected, (name, source)
            assert f"{source}: " in message and said in message


@pytest.mark.parametrize("name", sorted(TASKS))
def test_in_memory_input_that_is_no_list_of_records_is_refused(name: str, tmp_path: Path) -> None:
    split, kw, _ = CASES[name](tmp_path)
    refused = "<records>: expected a path, bytes or a list of records, got int"
    with (
        vlneval.Scorer(name, split, **kw) as scorer,
        pytest.raises(InvalidInputError, match=refused),
    ):
        scorer.score(7)  # type: ignore[arg-type]


def test_a_damaged_gzip_upload_is_named_as_bytes() -> None:
    with pytest.raises(
        InvalidInputError, match=r"<bytes>: not a valid gzip file \(it is truncated\)"
    ):
        read_input(gzip.compress(b"[]")[:-6])


def test_a_mapping_is_records_only_for_a_keyed_format() -> None:
    assert read_input({"1": []}, keyed=True).value == {"1": []}
    with pytest.raises(InvalidInputError, match="a list of records, got dict"):
        read_input({"1": []})


NDH_REAL = "predictions/ndh/seq2seq_prevalent_r2r/val-seq2seq-all-trusted_path-40-sample-imagenet_val_unseen_iter_100.json.gz"


def test_a_real_ndh_file_scores_alike_as_path_bytes_and_records(data_root: Path) -> None:
    path = data_root / NDH_REAL
    raw = path.read_bytes()
    records = json.loads(gzip.decompress(raw))
    scorer = vlneval.Scorer("ndh", "val_unseen", root=data_root, path_type="trusted_path")
    expected = _shape(scorer.score(path), str(path), "SOURCE")
    assert json.loads(expected)["n_episodes"] == 907
    assert _shape(scorer.score(raw), "<bytes>", "SOURCE") == expected
    assert _shape(scorer.score(records), "<records>", "SOURCE") == expected


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_reads_its_predictions_with_the_collector_paused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each task's predictions reader runs under ``vlneval.io.gc_paused``, and leaves the
    collector on as it found it."""
    import gc

    split, kw, path = CASES[name](tmp_path)
    with vlneval.Scorer(name, split, **kw) as scorer:
        paused: list[bool] = []
        disable = gc.disable
        monkeypatch.setattr(gc, "disable", lambda: (paused.append(True), disable())[1])
        scorer.score(_records(path))
        monkeypatch.undo()
    assert paused and gc.isenabled()


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (json.dumps([{"instr_id": "1_0"}] * 3000, indent=4), '\'[\\n    {\\n        "instr_id":'),
        ("x" * 5000, "'" + "x" * 29),
    ],
)
def test_json_text_given_as_a_str_is_refused_in_one_short_line(text: str, shown: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        read_input(text)
    assert str(info.value) == (
        f"error: <str>: a str is read as a path and this one ({shown}… ({len(repr(text)):,}"
        " characters)) cannot be one: to score JSON text pass bytes (text.encode()) or the"
        " records (json.loads(text))"
    )


def test_a_long_missing_path_is_clipped_in_its_message(tmp_path: Path) -> None:
    long = tmp_path / ("y" * 200) / ("z" * 100)
    with pytest.raises(MissingDataError) as info:
        read_input(str(long))
    assert str(info.value) == f"{str(long)[:240]}… ({len(str(long)):,} characters): no such file"


def test_a_file_whose_name_starts_with_a_bracket_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "[run1].json").write_text("[]")
    assert read_input(str(tmp_path / "[run1].json")).text == b"[]"


def test_a_generator_of_records_is_read_once_as_a_list() -> None:
    records = [{"instr_id": "1_0"}, {"instr_id": "2_0"}]
    assert read_input(r for r in records).value == records
    assert read_input(iter(records)).value == records


#: The tasks whose file is one object keyed by episode id: no list of records to generate.
KEYED = {"r2r-ce", "r2r-twin"}


@pytest.mark.parametrize("name", sorted(KEYED))
def test_the_keyed_tasks_files_are_mappings(name: str, tmp_path: Path) -> None:
    split, kw, path = CASES[name](tmp_path)
    assert isinstance(_records(path), dict)


@pytest.mark.parametrize("name", sorted(set(TASKS) - KEYED))
def test_every_task_scores_a_generator_of_records_as_the_list(name: str, tmp_path: Path) -> None:
    split, kw, path = CASES[name](tmp_path)
    records = _records(path)
    assert isinstance(records, list)
    with vlneval.Scorer(name, split, **kw) as scorer:
        assert scorer.score(r for r in records).metrics == scorer.score(records).metrics


@pytest.mark.parametrize("name", ["r2r", "r4r", "rxr"])
def test_a_trajectory_given_as_a_numpy_array_scores_as_the_list(name: str, tmp_path: Path) -> None:
    import numpy as np

    split, kw, path = CASES[name](tmp_path)
    records = _records(path)
    key = next(k for k in ("trajectory", "path", "pred_path") if k in records[0])
    arrays = [{**r, key: np.array(r[key], dtype=object)} for r in records]
    with vlneval.Scorer(name, split, **kw) as scorer:
        assert scorer.score(arrays).metrics == scorer.score(records).metrics
