"""The one reader: typed decoding of R2R episodes and predictions, the explaining pass, and the
bounds on what a file may cost (size, gzip bombs, nesting, strings, huge numbers, duplicate keys).

Behaviour kept from the tests of the former compiled scanner and prediction thread: every form
and odd layout is read as msgspec's generic decoding reads it, viewpoint names shared by scans
map to each episode's scan, a truncated gzip file gets one clear error, a pipe is read once.
"""

from __future__ import annotations

import gzip
import json
import string
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures import connectivity, preds, square_root, write_json
from vlneval.errors import InvalidInputError, MissingDataError, VLNEvalError
from vlneval.evaluation import evaluate, load_split
from vlneval.graph.store import GraphStore
from vlneval.io import Limits, clip, read_bytes, unique_keys
from vlneval.tasks import get_task
from vlneval.tasks.common.predictions import _episode_order, parse_predictions
from vlneval.tasks.profiles import get_profile
from vlneval.tasks.r2r.format import load_r2r

TRAJECTORY_KEYS = ("trajectory", "path", "pred_path")


def _square(tmp_path: Path) -> tuple[Any, GraphStore]:
    root = square_root(tmp_path / "root")
    episodes = load_r2r(root / "r2r" / "R2R_val.json", max_instructions=3)
    return episodes, GraphStore(root / "matterport3d" / "connectivity", use_cache=False)


def _parse(tmp_path: Path, raw: bytes, name: str = "p.json", **kw: Any) -> Any:
    episodes, store = _square(tmp_path)
    p = tmp_path / name
    p.write_bytes(raw)
    return parse_predictions(p, episodes, store, **kw)


# --- layouts and forms -------------------------------------------------------------------------

ODD = (
    b'\r\n [ \t{ "extra" : {"a": [1, -2.5e-3, true, false, null, "x\\"]y", {"k": "}]"}]},\n'
    b'  "trajectory":[ [ "S" ,1 , -0.5E+2 ] ,\n["A",0,0]], "instr_id":"1_0",'
    b' "note": "caf\\u00e9 \\\\", "n": -0.0} , {"instr_id": "1_1", "trajectory": [["S", 1.0, 2]],'
    b' "e": [], "o": {}} ]\n'
)


def test_odd_whitespace_key_order_and_unknown_fields(tmp_path: Path) -> None:
    p = _parse(tmp_path, ODD)
    assert p.form == "triple"
    assert p.episodes.tolist() == [0, 1] and p.nodes.tolist() == [0, 1, 0]
    assert p.offsets.tolist() == [0, 2, 3] and p.missing == ["1_2"]


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf" + json.dumps(preds({"1_0": ["S", "G"]})).encode()
    assert _parse(tmp_path, raw).nodes.tolist() == [0, 3]
    assert _parse(tmp_path, gzip.compress(raw), "p.json.gz").nodes.tolist() == [0, 3]
    root = square_root(tmp_path / "bom")
    eps = root / "r2r" / "R2R_val.json"
    eps.write_bytes(b"\xef\xbb\xbf" + eps.read_bytes())
    assert load_r2r(eps).ids[:3] == ["1_0", "1_1", "1_2"]


def test_plain_nested_and_explicit_forms(tmp_path: Path) -> None:
    plain = (
        b'[{"instr_id": "1_0", "trajectory": ["S", "A"]}, {"instr_id": "1_1", "trajectory": ["G"]}]'
    )
    p = _parse(tmp_path, plain)
    assert p.form == "plain" and p.nodes.tolist() == [0, 1, 3]
    nested = b'[{"instr_id": "1_0", "trajectory": [["S"], ["A", "B"], []]}, {"trajectory": [["S", "G", "S"]], "instr_id": "1_1"}]'
    n = _parse(tmp_path, nested)
    assert n.form == "nested" and n.nodes.tolist() == [0, 1, 2, 0, 3, 0]
    # an explicit form wins over detection; [vp, vp, vp] as the first step is nested
    q = _parse(tmp_path, b'[{"instr_id": "1_0", "trajectory": ["S", "A", "B"]}]', form="plain")
    assert q.form == "plain" and q.nodes.tolist() == [0, 1, 2]
    r = _parse(tmp_path, b'[{"instr_id": "1_0", "trajectory": [["S", "A", "B"]]}]')
    assert r.form == "nested"


def test_trajectory_keys_and_integer_ids(tmp_path: Path) -> None:
    raw = b'[{"instr_id": "1_0", "path": [["S", 0, 0], ["G", 1, 1]]}, {"instr_id": "1_1", "pred_path": [["A", 0, 0]]}]'
    p = _parse(tmp_path, raw)
    assert p.nodes.tolist() == [0, 3, 1] and p.offsets.tolist() == [0, 2, 3]
    ints = _parse(tmp_path, b'[{"instr_id": 7, "trajectory": [["S", 0, 0]]}]')
    assert ints.warnings and "first: 7" in ints.warnings[0]  # an integer id is read as its text


def test_finite_numbers_of_any_spelling_are_accepted(tmp_path: Path) -> None:
    body = (
        '[{"instr_id": "1_0", "trajectory": [["S", 1e-999, -9.9e299], ["A", 1'
        + "0" * 299
        + ", 0]]}]"
    )
    assert _parse(tmp_path, body.encode()).nodes.tolist() == [0, 1]


def test_non_ascii_ids_and_viewpoints(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_json(
        root / "matterport3d" / "connectivity" / "s_connectivity.json",
        connectivity({"ü": (0.0, 0.0, 0.0), "é": (1.0, 0.0, 0.0)}, [("ü", "é")]),
    )
    write_json(
        root / "r2r" / "R2R_val.json",
        [{"path_id": "é", "scan": "s", "path": ["ü", "é"], "instructions": ["x"], "distance": 1}],
    )
    p = write_json(
        tmp_path / "p.json", [{"instr_id": "é_0", "trajectory": [["ü", 0, 0], ["é", 1, 2]]}]
    )
    r = evaluate("r2r", "val", p, root=root, subset=True)
    assert r.metrics["SR"] == 1.0


def test_episode_order_is_a_stable_sort() -> None:
    for rec_ep in ([3, 0, 2], [4, 1, 4, 0, 1], []):
        arr = np.array(rec_ep, dtype=np.int64)
        assert _episode_order(arr, 5).tolist() == np.argsort(arr, kind="stable").tolist()


# --- viewpoint names that several scans share ---------------------------------------------------

LINE = {"a": (0.0, 0.0, 0.0), "b": (2.0, 0.0, 0.0), "c": (4.0, 0.0, 0.0)}
LINE_EDGES = [("a", "b"), ("b", "c")]


def _two_scans(tmp: Path) -> Path:
    """Two scans with the same viewpoint names in different orders, plus one of their own."""
    conn = tmp / "matterport3d" / "connectivity"
    write_json(conn / "one_connectivity.json", connectivity(LINE, LINE_EDGES))
    flipped = {k: LINE[k] for k in ("c", "b", "a")} | {"d": (6.0, 0.0, 0.0)}
    write_json(conn / "two_connectivity.json", connectivity(flipped, [*LINE_EDGES, ("c", "d")]))
    episodes = [
        {"path_id": 1, "scan": "one", "path": ["a", "b", "c"], "instructions": ["x"]},
        {"path_id": 2, "scan": "two", "path": ["c", "d"], "instructions": ["y"]},
        {"path_id": 3, "scan": "two", "path": ["a", "b"], "instructions": ["z"]},
    ]
    for e in episodes:
        e |= {"heading": 0.0, "distance": 1.0}
    write_json(tmp / "r2r" / "R2R_val.json", episodes)
    return tmp


def test_shared_viewpoint_names_map_to_each_episodes_scan(tmp_path: Path) -> None:
    root = _two_scans(tmp_path)
    episodes = load_r2r(root / "r2r" / "R2R_val.json", split="val")
    store = GraphStore(root / "matterport3d" / "connectivity", use_cache=False)
    p = write_json(
        tmp_path / "p.json",
        preds({"3_0": ["a", "b"], "1_0": ["a", "b", "c"], "2_0": ["c", "d"], "9_0": ["q"]}),
    )
    got = parse_predictions(p, episodes, store)
    assert got.episodes.tolist() == [0, 1, 2]
    # scan "two" holds c, b, a, d in that order; scan "one" holds a, b, c
    assert got.nodes.tolist() == [0, 1, 2, 0, 3, 2, 1]
    assert any("9_0" in w for w in got.warnings)


def test_a_viewpoint_of_another_scan_is_named(tmp_path: Path) -> None:
    root = _two_scans(tmp_path)
    p = write_json(tmp_path / "p.json", preds({"1_0": ["a", "d"], "2_0": ["c"], "3_0": ["a"]}))
    with pytest.raises(
        InvalidInputError, match=r'"1_0": trajectory\[1\]: viewpoint d is not in scan one'
    ):
        evaluate("r2r", "val", p, root=root, subset=True)


def test_bad_episodes_are_reported_before_predictions_are_read(tmp_path: Path) -> None:
    root = _two_scans(tmp_path)
    (root / "r2r" / "R2R_val.json").write_text('[{"path_id": 1}]')
    p = write_json(tmp_path / "p.json", preds({"1_0": ["a"]}))
    with pytest.raises(InvalidInputError, match="R2R_val.json"):
        evaluate("r2r", "val", p, root=root, subset=True)


def test_missing_episodes_are_reported_before_missing_graphs(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    task, prof = get_task("r2r"), get_profile("r2r")
    with pytest.raises(MissingDataError, match="graph folder"):
        load_split(task, "val", prof, root=root, graphs=tmp_path / "none")
    with pytest.raises(VLNEvalError, match="episodes") as exc:
        load_split(task, "nosplit", prof, root=root, graphs=tmp_path / "none")
    assert "graph folder" not in str(exc.value)


def test_scores_are_the_same_with_the_cache_cold_or_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    root = square_root(tmp_path / "root")
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"]}))
    cold = evaluate("r2r", "val", p, root=root, subset=True)
    warm = evaluate("r2r", "val", p, root=root, subset=True)
    assert cold.metrics == warm.metrics
    assert list((tmp_path / "cache" / "graphs").glob("sq-*.bin"))


def test_a_broken_graph_file_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "conn"
    folder.mkdir()
    (folder / "bad_connectivity.json").write_text("[{")
    with pytest.raises(VLNEvalError, match="bad_connectivity.json: not valid JSON"):
        GraphStore(folder, use_cache=False).graph("bad")


# --- R2R episode files --------------------------------------------------------------------------

EPISODES = (
    '[ {"distance": 10.86, "scan": "8194nk5LbLH", "path_id": 4332,\n'
    '   "path": ["c9e8", "f33c"], "heading": 4.055,\n'
    '   "instructions": ["Walk to the \\"exit\\". ", "Go \\u2192 left\\n", "Geh zur T\u00fcr \U0001f6aa"],\n'
    '   "extra": {"instructions": [1, 2], "path": "x"}},\n'
    '  {"path_id": "a-7", "path": ["e1"], "scan": "s2", "distance": null},\n'
    '  {"scan": "s2", "path": ["e1", "e2"], "path_id": 9, "heading": -1E-3, "instructions": []} ]'
).encode()


def test_episodes_hand_written(tmp_path: Path) -> None:
    p = tmp_path / "R2R_x.json"
    p.write_bytes(EPISODES)
    e = load_r2r(p)
    assert e.ids == ["4332_0", "4332_1", "4332_2", "a-7_0", "9_0"]
    assert e.scans == ["8194nk5LbLH"] * 3 + ["s2", "s2"]
    assert e.scans[3] is e.scans[4]  # interned, one string per distinct scan
    assert e.headings.tolist() == [4.055] * 3 + [0.0, -0.001]
    assert [e.paths[i] for i in range(5)] == [("c9e8", "f33c")] * 3 + [("e1",), ("e1", "e2")]
    assert [e.goals[i] for i in (0, 3, 4)] == [("f33c",), ("e1",), ("e2",)]
    assert list(e.instructions) == [
        'Walk to the "exit". ',
        "Go \u2192 left\n",
        "Geh zur T\u00fcr \U0001f6aa",
        "",
        "",
    ]
    assert not e.scorable  # "a-7" has one viewpoint and no distance: a test split


def test_a_truncated_gzip_episode_file_gets_one_clear_error(tmp_path: Path) -> None:
    eps = [
        {"path_id": i, "scan": "sq", "path": ["S", "G"], "instructions": ["go"], "distance": 4}
        for i in range(3000)
    ]
    raw = gzip.compress(json.dumps(eps).encode())
    p = tmp_path / "R2R_val.json.gz"
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(InvalidInputError, match="R2R_val.json.gz"):
        load_r2r(p)


def test_gunzip_marks_a_truncated_stream_by_its_type() -> None:
    from vlneval.io import TruncatedGzipError, gunzip

    raw = gzip.compress(b"[1, 2]")
    with pytest.raises(TruncatedGzipError) as cut:
        gunzip(raw[:-6], "p.json.gz", 100)
    assert str(cut.value) == "error: p.json.gz: not a valid gzip file (it is truncated)"
    with pytest.raises(InvalidInputError) as bad:
        gunzip(b"\x1f\x8b" + b"x" * 20, "p.json.gz", 100)
    assert not isinstance(bad.value, TruncatedGzipError)


def test_connectivity_bytes_are_read_as_files_are(tmp_path: Path) -> None:
    from vlneval.graph.matterport import connectivity_from_bytes
    from vlneval.io import BOM

    recs = connectivity({"a": (0.0, 0.0, 0.0), "b": (3.0, 4.0, 0.0)}, [("a", "b")])
    write_json(tmp_path / "sq_connectivity.json", recs)
    raw = (tmp_path / "sq_connectivity.json").read_bytes()
    plain = connectivity_from_bytes(raw, "sq", "sq.json")
    for variant in (BOM + raw, gzip.compress(BOM + raw)):
        g = connectivity_from_bytes(variant, "sq", "sq.json")
        assert g.ids == plain.ids and g.weights.tolist() == plain.weights.tolist()


def test_real_r2r_episodes_match_msgspec(data_root: Path) -> None:
    for name in ("r2r/R2R_val_unseen.json.gz", "r4r/R4R_val_seen.json.gz"):
        decoded = msgspec.json.decode(read_bytes(data_root / name))
        e = load_r2r(data_root / name)
        want = [
            (f"{r['path_id']}_{j}", r["scan"], tuple(r["path"]), float(r.get("heading", 0.0)), t)
            for r in decoded
            for j, t in enumerate(r.get("instructions") or [""])
        ]
        got = [
            (e.ids[i], e.scans[i], e.paths[i], float(e.headings[i]), e.instructions[i])
            for i in range(len(e))
        ]
        assert got == want and len(got) > 100


def test_real_prediction_files_match_msgspec(data_root: Path) -> None:
    files = sorted((data_root / "predictions/r2r").glob("*/*val_unseen*.json*"))
    assert len(files) >= 5
    episodes = load_r2r(data_root / "r2r/R2R_val_unseen.json.gz", max_instructions=3)
    store = GraphStore(data_root / "matterport3d/connectivity")
    for path in files:
        decoded = msgspec.json.decode(read_bytes(path))
        got = parse_predictions(path, episodes, store, skip_summaries=True)
        records = [r for r in decoded if "instr_id" in r]
        by_id = {str(r["instr_id"]): r for r in records}
        for k, i in enumerate(got.episodes.tolist()[:50]):
            rec = by_id[episodes.ids[i]]
            key = next(t for t in TRAJECTORY_KEYS if t in rec)
            graph = store.graph(episodes.scans[i])
            want = [graph.index[s[0] if isinstance(s, list) else s] for s in rec[key]]
            assert got.nodes[got.offsets[k] : got.offsets[k + 1]].tolist() == want, path


# --- property: random valid files read as msgspec's generic decoding reads them ---------------

VIEWPOINTS = ["S", "A", "B", "G"]
SAFE = string.ascii_letters + string.digits + "_-.:/ "
json_value = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
extra_fields = st.dictionaries(
    st.text(string.ascii_letters + "_ ", min_size=1, max_size=8), json_value, max_size=3
)
dump_style = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 0, 1, 4, "\t", " \r\n"]),
        "separators": st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " :\t")]),
        "ensure_ascii": st.booleans(),
    }
)
number = st.one_of(
    st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
)
viewpoint = st.sampled_from(VIEWPOINTS)


def _step(form: str) -> st.SearchStrategy[Any]:
    if form == "triple":
        return st.tuples(viewpoint, number, number).map(list)
    if form == "plain":
        return viewpoint
    return st.lists(viewpoint, min_size=2, max_size=3)


@st.composite
def prediction_files(draw: st.DrawFn) -> tuple[bytes, str]:
    form = draw(st.sampled_from(["triple", "plain", "nested"]))
    records = []
    for eid in draw(st.permutations(["1_0", "1_1", "1_2", "7_0"]))[: draw(st.integers(1, 4))]:
        rec = {
            k: v for k, v in draw(extra_fields).items() if k not in (*TRAJECTORY_KEYS, "instr_id")
        }
        rec["instr_id"] = eid
        rec["trajectory"] = draw(st.lists(_step(form), min_size=1, max_size=6))
        keys = draw(st.permutations(list(rec)))
        records.append({k: rec[k] for k in keys})
    return json.dumps(records, **draw(dump_style)).encode(), form


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(prediction_files())
def test_property_predictions_match_msgspec(tmp_path: Path, case: tuple[bytes, str]) -> None:
    raw, form = case
    got = _parse(tmp_path, raw)
    assert got.form == form
    decoded = {r["instr_id"]: r["trajectory"] for r in msgspec.json.decode(raw)}
    index = {v: k for k, v in enumerate(VIEWPOINTS)}
    want: list[int] = []
    for eid in ("1_0", "1_1", "1_2"):  # episode order; 7_0 is not in the split
        if eid in decoded:
            steps = decoded[eid]
            vps = [s[0] for s in steps] if form == "triple" else steps
            vps = [v for s in vps for v in s] if form == "nested" else vps
            want += [index[v] for v in vps]
    assert got.nodes.tolist() == want
    assert any("7_0" in w for w in got.warnings) == ("7_0" in decoded)


# --- what a file may cost ----------------------------------------------------------------------


_LAUNCHER = (
    "import os, subprocess, sys\n"
    "with open(sys.argv[1], 'wb') as out:\n"
    "    p = subprocess.Popen([sys.executable, '-c', sys.argv[2]], stdout=out, stderr=out)\n"
    "    _, _, usage = os.wait4(p.pid, 0)\n"
    "print(usage.ru_maxrss)\n"
)


def _child(code: str, tmp_path: Path) -> tuple[str, float]:
    """Runs ``code`` in a fresh interpreter: its output and its own peak RSS (MiB), read from
    ``VmHWM`` as the child exits. (``ru_maxrss`` from ``wait4`` is not the child's alone: Linux
    carries the parent's RSS at fork across ``exec``, so a large test process inflates it.)"""
    hwm = tmp_path / "child.hwm"
    tail = (
        "\nimport re\n"
        "_s = open('/proc/self/status').read()\n"
        f"open({str(hwm)!r}, 'w').write(re.search(r'VmHWM:\\s+(\\d+)', _s).group(1))\n"
    )
    log = tmp_path / "child.log"
    with open(log, "wb") as out:
        subprocess.run([sys.executable, "-c", code + tail], stdout=out, stderr=out, cwd=tmp_path)
    return log.read_text(), int(hwm.read_text()) / 1024


def _bomb(mib: int) -> bytes:
    """A valid gzip stream of ``mib`` MiB of zeros after ``[``, in about a thousandth of it."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"0" * (1 << 20)
    return z.compress(b"[") + b"".join(z.compress(block) for _ in range(mib)) + z.flush()


def test_a_gzip_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    (tmp_path / "bomb.json.gz").write_bytes(_bomb(2600))  # 2.6 GB of text in about 2.6 MB
    code = (
        "from vlneval.io import read_bytes\n"
        "from vlneval.errors import InvalidInputError\n"
        "try:\n    read_bytes('bomb.json.gz')\nexcept InvalidInputError as e:\n    print(e)\n"
    )
    text, peak = _child(code, tmp_path)
    assert "bomb.json.gz: holds more than 512.0 MiB of JSON, the limit" in text, text
    assert "VLNEVAL_MAX_FILE_BYTES" in text
    assert peak < 1024, peak


def test_the_size_limit_applies_to_plain_files_and_pipes_and_can_be_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = write_json(tmp_path / "p.json", list(range(1000)))
    monkeypatch.setenv("VLNEVAL_MAX_FILE_BYTES", "100")
    with pytest.raises(InvalidInputError, match=r"p.json: holds more than 100 bytes of JSON"):
        read_bytes(p)
    gz = tmp_path / "p.json.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    with pytest.raises(InvalidInputError, match="more than 100 bytes"):
        read_bytes(gz)
    assert read_bytes(p, Limits(max_bytes=10_000)) == p.read_bytes()
    monkeypatch.setenv("VLNEVAL_MAX_FILE_BYTES", "lots")
    with pytest.raises(VLNEvalError, match="VLNEVAL_MAX_FILE_BYTES='lots'"):
        read_bytes(p)


def test_a_pipe_is_read_once(tmp_path: Path) -> None:
    import os
    import threading

    root = square_root(tmp_path / "root")
    fifo = tmp_path / "preds.fifo"
    os.mkfifo(fifo)
    text = json.dumps(preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"], "1_2": ["S"]}))
    writer = threading.Thread(target=lambda: fifo.write_text(text))
    writer.start()
    result = evaluate("r2r", "val", fifo, root=root)
    writer.join()
    assert result.to_dict()["n_episodes"] == 3


def test_a_one_megabyte_id_is_answered_quickly_and_clipped(tmp_path: Path) -> None:
    big = "x" * (1 << 20)
    body = preds({"1_0": ["S", "G"], big: ["S"]})
    t0 = time.perf_counter()
    got = _parse(tmp_path, json.dumps(body).encode())
    assert time.perf_counter() - t0 < 2.0
    (warning,) = [w for w in got.warnings if "not in the split" in w]
    assert len(warning) < 300 and "1,048,576 characters" in warning
    bad = preds({big: ["S"]})
    bad[0]["trajectory"] = "S"  # a problem too: the explaining pass clips it as well
    with pytest.raises(InvalidInputError) as exc:
        _parse(tmp_path, json.dumps(bad + preds({"1_0": [big]})).encode())
    assert len(str(exc.value)) < 2000


def test_a_five_thousand_digit_integer_gets_a_project_message(tmp_path: Path) -> None:
    """Past the number limit, the record and field are named as for records in memory; a
    number of more than a MiB is refused where it stands."""
    raw = b'[{"instr_id": "1_0", "trajectory": [["S", ' + b"9" * 5000 + b", 0]]}]"
    with pytest.raises(InvalidInputError) as exc:
        _parse(tmp_path, raw)
    assert str(exc.value) == (
        f'error: {tmp_path / "p.json"}: instr_id "1_0": trajectory[0]: heading is an integer of '
        "5,000 digits, beyond a double's range (must be finite)"
    )
    raw = b'[{"instr_id": ' + b"7" * 5000 + b', "trajectory": [["S", 0, 0]]}]'
    got = _parse(tmp_path, raw)
    assert got.warnings == [
        "1 prediction(s) with ids not in the split were ignored (first: an integer of 5,000 "
        "digits, beyond a double's range)"
    ]
    raw = b'[{"instr_id": "1_0", "trajectory": [["S", ' + b"9" * (1 << 20) + b"1, 0]]}]"
    with pytest.raises(InvalidInputError) as exc:
        _parse(tmp_path, raw)
    text = str(exc.value)
    assert "a number of more than 400 characters at line 1, column 43" in text
    assert "int_max_str_digits" not in text and "Exceeds the limit" not in text


def test_a_json_line_with_nan_names_the_line_the_id_and_the_field(tmp_path: Path) -> None:
    # Python's json writes NaN freely; the line is read as the JSON-list path reads it
    lines = (
        b'{"instr_id": "1_0", "trajectory": [["S", 0, 0]]}\n\n'
        b'{"instr_id": "1_1", "trajectory": [["S", 0, 0], ["A", NaN, 0]]}\n'
        b'{"instr_id": "1_2", "trajectory": [["S", 0, -Infinity]]}\n'
    )
    with pytest.raises(InvalidInputError) as exc:
        _parse(tmp_path, lines, "p.jsonl")
    source = tmp_path / "p.jsonl"
    assert str(exc.value).splitlines() == [
        f'error: {source}: line 3: instr_id "1_1": trajectory[1]: heading is nan (must be finite)',
        f'error: {source}: line 4: instr_id "1_2": trajectory[0]: elevation is -inf (must be finite)',
    ]
    with pytest.raises(InvalidInputError) as exc:
        _parse(tmp_path, lines.replace(b"NaN", b"Nope"), "p.jsonl")
    assert str(exc.value) == (
        f"error: {source}: line 3: not valid JSON (JSON is malformed: invalid character (byte 54))"
    )


def test_nesting_and_string_limits_of_the_explaining_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # NaN sends the file to Python's json, which the limits guard
    head = b'[{"instr_id": "1_0", "trajectory": [["S", NaN, 0]], "x": '
    deep = head + b"[" * 70 + b"]" * 70 + b"}]"
    with pytest.raises(InvalidInputError, match=r"p.json: JSON nested too deeply"):
        _parse(tmp_path, deep)
    monkeypatch.setenv("VLNEVAL_MAX_JSON_DEPTH", "100")
    with pytest.raises(InvalidInputError, match=r"heading is nan \(must be finite\)"):
        _parse(tmp_path, deep)  # within the raised limit: the real problem is named
    monkeypatch.setenv("VLNEVAL_MAX_STRING_BYTES", "10")
    long = head + b'"' + b"y" * 11 + b'"}]'
    with pytest.raises(InvalidInputError, match=r"a string of more than 10 bytes starts at line 1"):
        _parse(tmp_path, long)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"", "the file is empty"),
        (gzip.compress(b"", mtime=0), "the file is empty"),
        (b"\xef\xbb\xbf", "the file is empty"),
        (b" \r\n\t\n", "holds no JSON (only whitespace)"),
        (b'[{"instr_id": "1_0', "not valid JSON: Unterminated string starting at line 1, column 15"),
        (b'["S\x01"]', "not valid JSON: Invalid control character at line 1, column 4"),
        (b'[{"instr_id": "1_0",}]', "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 21"),
        (b"[1] 2", "not valid JSON: Extra data at line 1, column 5"),
    ],
)  # fmt: skip
def test_a_file_that_is_not_json_is_told_why_in_one_wording(
    tmp_path: Path, raw: bytes, expected: str
) -> None:
    """The words the evaluation server uses too; no message says "at at"."""
    with pytest.raises(InvalidInputError) as exc:
        _parse(tmp_path, raw)
    assert str(exc.value) == f"error: {tmp_path / 'p.json'}: {expected}"


def test_duplicate_keys_of_id_keyed_objects(tmp_path: Path) -> None:
    unique_keys(b'{"1": [{"a": 1, "a": 2}], "2": []}', "p.json")  # nested objects are not ids
    for raw in (
        b'{"1": [], "1": []}',
        b'{"1": [], "2": [], "1": [3]}',
        b' {"1":\n[],"\\u0031":[]}',
    ):
        with pytest.raises(InvalidInputError, match=r'p.json: episode_id "1" is given twice'):
            unique_keys(raw, "p.json", what="episode_id")


def test_clip() -> None:
    assert clip("abc") == "abc" and clip("a" * 81).endswith("(81 characters)")


def test_vlnce_predictions_with_a_repeated_episode_id_are_refused(tmp_path: Path) -> None:
    from tests.tasks.vlnce.helpers import steps, write_split
    from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions

    episodes_file, _ = write_split(tmp_path)
    episodes = load_vlnce(episodes_file)
    one = json.dumps(steps([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]))
    p = tmp_path / "p.json"
    p.write_text('{"1": ' + one + ', "2": ' + one + ', "1": ' + one + "}")
    with pytest.raises(InvalidInputError, match=r'p.json: episode_id "1" is given twice'):
        parse_ce_predictions(p, episodes)


@pytest.mark.parametrize("kind", [np.float64, np.float32, np.int64])
def test_numpy_numbers_in_records_are_numbers(tmp_path: Path, kind: Any) -> None:
    episodes, store = _square(tmp_path)
    plain = preds({"1_0": ["S", "A", "B", "G"]})
    records = [
        {**r, "trajectory": [[s[0], kind(1), kind(0)] for s in r["trajectory"]]} for r in plain
    ]
    got = parse_predictions(records, episodes, store)
    want = parse_predictions(plain, episodes, store)
    assert (
        got.nodes.tolist() == want.nodes.tolist()
        and got.episodes.tolist() == want.episodes.tolist()
    )
    bad = [{**records[0], "trajectory": [["S", np.float64("nan"), 0.0]]}]
    with pytest.raises(InvalidInputError, match=r'instr_id "1_0": trajectory\[0\]: heading is nan'):
        parse_predictions(bad, episodes, store)


def test_numpy_scalars_in_tuple_steps_read_as_the_numbers_they_hold(tmp_path: Path) -> None:
    """An agent's steps ``(vp, np.float32(h), e)``: the typed pass takes them once each is
    the Python number it holds; a problem left is named as in a plain record."""
    episodes, store = _square(tmp_path)
    plain = preds({"1_0": ["S", "A", "B", "G"]})
    records = [
        {**r, "trajectory": [(s[0], np.float32(0.5), np.int64(0)) for s in r["trajectory"]]}
        for r in plain
    ]
    got, want = (
        parse_predictions(records, episodes, store),
        parse_predictions(plain, episodes, store),
    )
    assert got.nodes.tolist() == want.nodes.tolist() == [0, 1, 2, 3]
    assert isinstance(records[0]["trajectory"][0][1], np.float32)  # the caller's records kept
    bad = [{**records[0], "trajectory": [("S", np.float32("nan"), 0)]}]
    with pytest.raises(InvalidInputError) as exc:
        parse_predictions(bad, episodes, store)
    assert str(exc.value) == (
        'error: <records>: instr_id "1_0": trajectory[0]: heading is nan (must be finite)'
    )


def test_an_integer_beyond_a_double_is_not_shown_cut(tmp_path: Path) -> None:
    raw = b'[{"instr_id": "1_0", "trajectory": [["S", 0.0, 1' + b"0" * 1000 + b"]]}]"
    with pytest.raises(InvalidInputError) as exc:
        _parse(tmp_path, raw)
    assert str(exc.value).endswith(
        "trajectory[0]: elevation is an integer of 1,001 digits, beyond a double's range "
        "(must be finite)"
    )
