"""Hostile and broken uploads: refused with one clear message, never stored, never decoded."""

from __future__ import annotations

import gzip
import json
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.server.helpers import DEMO_PREDICTIONS
from vlneval._jsonshape import ScanLimits, scan_json
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.server.services.uploads import UploadLimits, check_upload, gunzip_limited

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('ab"\\\\[]{},:é\n'), max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=30,
)  # fmt: skip


def _depth(v):
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    return 0


def _longest(v):
    if isinstance(v, str):
        return len(json.dumps(v, ensure_ascii=False).encode()) - 2
    if isinstance(v, list):
        return max((_longest(x) for x in v), default=0)
    if isinstance(v, dict):
        return max((max(_longest(k), _longest(x)) for k, x in v.items()), default=0)
    return 0


def _count(v):
    if isinstance(v, list):
        return 1 + sum(_count(x) for x in v)
    if isinstance(v, dict):
        return 1 + sum(_count(x) for x in v.values())
    return 1


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([1, 2, 3, 7, 1 << 22]))
def test_scan_measures_what_a_decoder_would_build(value, chunk):
    raw = json.dumps(value, ensure_ascii=False).encode()
    shape = scan_json(raw, chunk=chunk)
    assert shape.depth == _depth(value)
    assert shape.longest_string == _longest(value)
    assert shape.values >= _count(value)  # an upper bound: commas + containers + 1
    assert shape.exceeded is None


def test_scan_hand_values():
    s = scan_json(b'[{"id": "a\\"]", "t": [[1, -2.5e10]]}]')
    assert (s.depth, s.values, s.longest_string, s.longest_number) == (4, 7, 4, 7)
    assert scan_json(b'"\\\\"').longest_string == 2  # an escaped backslash closes the string
    over = scan_json(b"[1, [2, [3]]]", ScanLimits(max_depth=2))
    assert (over.exceeded, over.offset) == ("depth", 8)  # the third "["
    assert scan_json(b"[" + b"1," * 10 + b"1]", ScanLimits(max_values=5)).exceeded == "values"
    assert scan_json(b"[" + b"9" * 41 + b"]", ScanLimits(max_number=40)).exceeded == "number"
    # a long number split across chunks is still one literal
    assert (
        scan_json(b"[" + b"9" * 41 + b"]", ScanLimits(max_number=40), chunk=8).exceeded == "number"
    )
    assert (
        scan_json(b'["' + b"x" * 50 + b'"]', ScanLimits(max_string=49), chunk=4).exceeded
        == "string"
    )


def _bomb(n_mib: int) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = co.compress(b"[") + b"".join(co.compress(b" " * (1 << 20)) for _ in range(n_mib))
    return body + co.compress(b"]") + co.flush()


def _refusal(raw: bytes, **limits) -> str:
    with pytest.raises(InvalidInputError) as info:
        check_upload(raw, "p.json", UploadLimits(**limits) if limits else None)
    return str(info.value)


@pytest.mark.parametrize(
    ("raw", "limits", "expected"),
    [
        (b"", {}, "error: p.json: the file is empty"),
        (b"  \n", {}, "error: p.json: holds no JSON (only whitespace)"),
        (b"x" * 11, {"max_upload_bytes": 10}, "error: p.json: is 11 bytes; this server accepts uploads of at most 10 bytes"),
        (b"PK\x03\x04rest", {}, "error: p.json: is a ZIP archive; upload the JSON predictions file itself, plain or gzipped (.json.gz)"),
        (b"\xef\xbb\xbf \n", {}, "error: p.json: holds no JSON (only whitespace)"),
        (b'[\n"\xff"]', {}, "error: p.json: not UTF-8 text: byte 0xff at line 2, column 2 (byte 3) is not valid UTF-8; save the file as UTF-8"),
        (b"[" * 33 + b"]" * 33, {}, "error: p.json: nests lists and objects more than 32 levels deep (at line 1, column 33 (byte 32)); a predictions file needs 4"),
        (b"[1e" + b"9" * 50 + b"]", {}, "error: p.json: has a number literal of more than 40 characters (at line 1, column 2 (byte 1)); numbers are limited to ordinary floats"),
        (b'["' + b"a" * 70000 + b'"]', {}, "error: p.json: has a string of more than 65,536 bytes (starting at line 1, column 2 (byte 1)); ids and viewpoints are short strings"),
        (b"[" + b"0," * 100 + b"0]", {"max_values": 50}, "error: p.json: holds more than 50 JSON values (counted up to line 1, column 1 (byte 0)); this server accepts no more"),
        (b'[{"a": 1,}]', {}, "error: p.json: not valid JSON: Expecting property name enclosed in double quotes at line 1, column 10"),
        (gzip.compress(b"[1, 2]", mtime=0)[:-6], {}, "error: p.json: the gzip data is truncated (the upload is incomplete)"),
        (gzip.compress(gzip.compress(b"[1]", mtime=0), mtime=0), {}, "error: p.json: is gzipped twice; gunzip it once"),
        (b"\x1f\x8bnot gzip at all", {}, "error: p.json: not a valid gzip file (Error -3 while decompressing data: unknown compression method)"),
    ],
)  # fmt: skip
def test_refusals_say_what_is_wrong_and_where(raw, limits, expected):
    assert _refusal(raw, **limits) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"", "the file is empty"),
        (gzip.compress(b"", mtime=0), "the file is empty"),
        (b" \n", "holds no JSON (only whitespace)"),
        (
            b'[{"instr_id": "1_0',
            "not valid JSON: Unterminated string starting at line 1, column 15",
        ),
    ],
)
def test_a_file_without_json_is_told_so_in_the_words_of_vlneval_score(
    sqlite_server, tmp_path, raw, expected
):
    r = sqlite_server.submit(sqlite_server.alpha, raw, name="agent.json")
    assert r.status_code == 422, r.text
    assert r.json()["problems"] == [f"agent.json: {expected}"]
    path = tmp_path / "agent.json"
    path.write_bytes(raw)
    with pytest.raises(InvalidInputError) as cli:
        evaluate("demo", "val", path)
    assert str(cli.value) == f"error: {path}: {expected}"


def test_gzip_bomb_is_stopped_at_the_limit_without_inflating_it():
    bomb = _bomb(300)  # 300 MiB of JSON in about 300 KB
    assert len(bomb) < 400_000
    message = _refusal(bomb)
    assert message == (
        "error: p.json: decompresses to more than 256.0 MiB (the limit of this server); is it a "
        "gzip bomb? upload the predictions file itself"
    )
    assert gunzip_limited(gzip.compress(b"[1]") + gzip.compress(b"[2]"), 10, "x") == b"[1][2]"
    with pytest.raises(InvalidInputError) as exc:  # past the limit at an ordinary ratio
        gunzip_limited(gzip.compress(random.Random(0).randbytes(16_000)), 4000, "p.json.gz")
    assert str(exc.value) == (
        "error: p.json.gz: decompresses to more than 4,000 bytes of JSON; this server accepts at "
        "most that"
    )


def test_the_bomb_ratio_is_decided_in_one_place_for_the_server_and_the_phase_limits(
    monkeypatch,
):
    from vlneval.server.services import budget

    raw = gzip.compress(b"[" + b" " * 50_000 + b"]")  # stopped at 4,000 bytes: ratio 46
    phase = budget.StepBudget(n_episodes=0, max_steps=1, mean_steps=1)  # 409,800 bytes
    server_words = "error: p.json.gz: decompresses to more than 4,000 bytes"
    phase_words = (
        "error: p.json.gz: decompresses to more than 409,800 bytes of JSON, the most a file "
    )

    def refusals() -> tuple[str, str]:
        with pytest.raises(InvalidInputError) as by_server:
            gunzip_limited(raw, 4000, "p.json.gz")
        return str(by_server.value), str(budget.too_many_bytes(phase, "p.json.gz", None, 20.0))

    ordinary = (
        f"{server_words} of JSON; this server accepts at most that",
        f"{phase_words}for the 0 episodes of this phase needs",
    )
    assert refusals() == ordinary  # ratios 46 and 20, below 100
    monkeypatch.setattr(budget, "BOMB_RATIO", 10.0)  # one threshold: both follow it
    assert refusals() == (
        f"{server_words} (the limit of this server); is it a gzip bomb? upload the predictions "
        "file itself",
        f"{phase_words}for the 0 episodes of this phase needs (is it a gzip bomb?)",
    )
    monkeypatch.setattr(budget, "BOMB_RATIO", 20.0)  # at the threshold: a bomb
    assert refusals()[1].endswith("(is it a gzip bomb?)")
    monkeypatch.setattr(budget, "BOMB_RATIO", 1000.0)
    assert refusals() == ordinary


def test_accepted_files_come_back_as_json_text():
    raw = DEMO_PREDICTIONS.read_bytes()
    assert check_upload(raw, "p.json") == raw
    assert check_upload(gzip.compress(raw), "p.json.gz") == raw
    assert check_upload(b"[NaN]", "p.json") == b"[NaN]"  # the scorer names the field that holds it


def _stored(server) -> list:
    uploads = server.cfg.uploads_dir
    return [p for p in uploads.rglob("*") if p.is_file()] if uploads.exists() else []


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("bomb", "gzip bomb"),
        (b'[{"instr_id": "\xff"}]', "not UTF-8"),
        (b"[" * 1000 + b"]" * 1000, "levels deep"),
        (b"[" + b"1" * 5000 + b"]", "number literal"),
        (b"{", "not valid JSON"),
    ],
)
def test_the_api_refuses_hostile_uploads_and_stores_nothing(sqlite_server, raw, fragment):
    raw = _bomb(300) if raw == "bomb" else raw
    r = sqlite_server.submit(sqlite_server.alpha, raw)
    assert r.status_code == 422
    body = r.json()
    assert body["detail"] == "preds.json was not accepted"
    assert len(body["problems"]) == 1 and fragment in body["problems"][0]
    assert "Traceback" not in r.text
    assert _stored(sqlite_server) == []
    headers = sqlite_server.auth(sqlite_server.alpha)
    assert sqlite_server.client.get("/api/v1/submissions", headers=headers).json() == []


def test_oversized_bodies_get_413_by_header_and_by_stream(tmp_path):
    from tests.server.conftest import make_server

    srv = make_server(
        tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite", max_upload_bytes=1000
    )
    url = "/api/v1/challenges/demo/phases/val/submissions"
    r = srv.submit(srv.alpha, b"[" + b" " * 200_000 + b"]")
    assert r.status_code == 413 and "larger than this server accepts" in r.json()["detail"]

    def chunks():
        for _ in range(100):
            yield b"x" * 4096

    r = srv.client.post(
        url,
        content=chunks(),
        headers={**srv.auth(srv.alpha), "content-type": "multipart/form-data; boundary=b"},
    )
    assert r.status_code == 413 and "larger than this server accepts" in r.json()["detail"]
    r = srv.client.post(
        "/login",
        content=b"token=" + b"a" * 100_000,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 413
    assert _stored(srv) == []
    srv.client.close()
    srv.db.dispose()


def test_a_damaged_gzip_named_truncated_is_not_called_incomplete() -> None:
    """The truncated-upload message follows the gzip reader's error type, not the file's name."""
    from vlneval.server.services.uploads import gunzip_limited

    raw = gzip.compress(b"[1, 2, 3]" * 100)
    damaged = raw[:10] + b"\x00" * 20 + raw[30:]
    with pytest.raises(InvalidInputError) as exc:
        gunzip_limited(damaged, 1 << 20, "truncated.json.gz")
    assert str(exc.value).startswith("error: truncated.json.gz: not a valid gzip file (")
    with pytest.raises(InvalidInputError) as exc:
        gunzip_limited(raw[:-12], 1 << 20, "p.json.gz")
    assert (
        str(exc.value) == "error: p.json.gz: the gzip data is truncated (the upload is incomplete)"
    )


BIG = 17 << 20  # past the 16 MiB of JSON the server explains in the words of `vlneval score`
NAN_RECORD = b'[{"instr_id": "1_0", "trajectory": [["a", NaN, 0.0]]}'


def _refusals(tmp_path, raw: bytes, name: str) -> tuple[str, str]:
    """What the upload check says of ``raw`` from memory (the worker) and from a stored file
    (the API), the file named as its submitter named it."""
    from vlneval.server.services.uploads import check_stored

    with pytest.raises(InvalidInputError) as in_memory:
        check_upload(raw, name)
    stored = tmp_path / "stored-upload"
    stored.write_bytes(raw)
    with pytest.raises(InvalidInputError) as on_disk:
        check_stored(stored, name)
    return str(in_memory.value), str(on_disk.value)


@pytest.mark.parametrize("gz", [False, True])
def test_a_nan_in_a_file_past_the_explained_size_is_named_with_the_limit(tmp_path, gz):
    raw = NAN_RECORD + b" " * (BIG - len(NAN_RECORD) - 1) + b"]"
    name = "agent.json.gz" if gz else "agent.json"
    expected = (
        f"error: {name}: NaN at line 1, column 43 (byte 42) is not JSON: write every number as a "
        "finite number (this file is 17.0 MiB of JSON; this server names the record and field "
        "only in files of at most 16.0 MiB)"
    )
    assert _refusals(tmp_path, gzip.compress(raw) if gz else raw, name) == (expected, expected)


def test_a_syntax_error_in_a_file_past_the_explained_size_is_told_where_in_words(tmp_path):
    raw = b'[{"instr_id": "1_0",\n "trajectory": [["a", 0.0, 0.0]],}' + b" " * BIG + b"]"
    expected = (
        "error: agent.json: not valid JSON at line 2, column 34 (byte 54): trailing comma in "
        "object (this file is 17.0 MiB of JSON; this server words an error as `vlneval score` "
        "does only in files of at most 16.0 MiB)"
    )
    assert _refusals(tmp_path, raw, "agent.json") == (expected, expected)
    raw = b'[{"instr_id": "1_0", "trajectory": [["a", 0.0, -Infinity]]}' + b" " * BIG + b"]"
    assert _refusals(tmp_path, raw, "agent.json")[0] == (
        "error: agent.json: -Infinity at line 1, column 48 (byte 47) is not JSON: write every "
        "number as a finite number (this file is 17.0 MiB of JSON; this server names the record "
        "and field only in files of at most 16.0 MiB)"
    )


def test_a_valid_file_past_the_explained_size_is_accepted(tmp_path):
    raw = NAN_RECORD.replace(b"NaN", b"0.0") + b" " * BIG + b"]"
    assert check_upload(raw, "agent.json") == raw


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'{"instruction_id": 11, "path": ["S", "G"]}\n{"instruction_id": 12,}\n',
            "not valid JSON at line 2, column 23 (byte 65): trailing comma in object",
        ),
        (
            b'{"instruction_id": 11, "path": ["S", "G"]}\n{"instruction_id": 12\n',
            "not valid JSON at line 2, column 22 (byte 64): the JSON ends early (is the file "
            "complete?)",
        ),
    ],
)  # fmt: skip
def test_a_bad_line_of_json_lines_is_named_not_called_extra_data(tmp_path, body, expected):
    """JSON lines (RxR's form) are read a line at a time: the line at fault is told, not the
    whole file read as one JSON value ("Extra data at line 2, column 1")."""
    assert _refusals(tmp_path, body, "agent.jsonl") == (f"error: agent.jsonl: {expected}",) * 2


def test_a_nan_in_json_lines_passes_to_the_scorer_only_in_a_small_file(tmp_path):
    """As in a JSON list: the scorer names a NaN's record and field in a file of at most
    16 MiB (vlneval score reads NaN in JSON lines too); past that, the line is named."""
    nan_line = b'{"instruction_id": 12, "x": NaN}\n'
    small = b'{"instruction_id": 11, "path": ["S", "G"]}\n' + nan_line
    assert check_upload(small, "agent.jsonl") == small
    big = b'{"instruction_id": 11, "path": ["S", "G"]}' + b" " * BIG + b"\n" + nan_line
    assert _refusals(tmp_path, big, "agent.jsonl")[0] == (
        f"error: agent.jsonl: NaN at line 2, column 29 (byte {BIG + 71}) is not JSON: write "
        "every number as a finite number"
    )
