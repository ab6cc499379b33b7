"""The compiled field scanner: hand-written files, every decline, a property against msgspec's
generic decoding, and the real R2R files."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vlneval.data.jsonio import read_bytes
from vlneval.data.scan import (
    REASONS,
    Declined,
    ScannedEpisodes,
    ScannedPredictions,
    ViewpointTable,
    scan_predictions,
    scan_r2r_episodes,
    span_strings,
    try_scan_predictions,
    try_scan_r2r_episodes,
    unique_strings,
)

TRAJECTORY_KEYS = ("trajectory", "path", "pred_path")


def _preds(raw: bytes, **kw: Any) -> ScannedPredictions:
    out = try_scan_predictions(
        raw, id_field=kw.pop("id_field", "instr_id"), key=kw.pop("key", "trajectory"), **kw
    )
    assert isinstance(out, ScannedPredictions), out
    return out


def _episodes(raw: bytes) -> ScannedEpisodes:
    out = try_scan_r2r_episodes(raw)
    assert isinstance(out, ScannedEpisodes), out
    return out


# --- hand-written predictions ------------------------------------------------------------------

ODD = (
    b'\r\n [ \t{ "extra" : {"a": [1, -2.5e-3, true, false, null, "x\\"]y", {"k": "}]"}]},\n'
    b'  "trajectory":[ [ "vp1" ,1 , -0.5E+2 ] ,\n["vp2",0,0]], "instr_id":"12_0",'
    b' "note": "caf\\u00e9 \\\\", "n": -0.0} , {"instr_id": 7, "trajectory": [["vp3", 1.0, 2]],'
    b' "e": [], "o": {}} ]\n'
)


def test_odd_whitespace_key_order_unknown_fields_and_int_ids() -> None:
    p = _preds(ODD)
    assert p.form == "triple"
    assert p.ids == ["12_0", "7"]
    assert p.id_is_int.tolist() == [False, True]
    assert p.counts.tolist() == [2, 1] and p.offsets.tolist() == [0, 2, 3]
    assert p.viewpoints() == ["vp1", "vp2", "vp3"]
    # spans point at the string contents, without quotes
    first = ODD.index(b'"vp1"') + 1
    assert (int(p.vp_starts[0]), int(p.vp_ends[0])) == (first, first + 3)


def test_plain_and_nested_forms() -> None:
    plain = _preds(
        b'[{"instr_id": "1_0", "trajectory": ["a", "b"]}, {"instr_id": "1_1", "trajectory": ["c"]}]'
    )
    assert plain.form == "plain" and plain.viewpoints() == ["a", "b", "c"]
    nested = _preds(
        b'[{"instr_id": "1_0", "trajectory": [["a"], ["b", "c"], []]},'
        b' {"trajectory": [["d", "e", "f"]], "instr_id": "1_1"}]'
    )
    assert nested.form == "nested"
    assert nested.viewpoints() == ["a", "b", "c", "d", "e", "f"]
    assert nested.counts.tolist() == [3, 3]


def test_explicit_form_key_candidates_and_empty_later_trajectory() -> None:
    raw = b'[{"instr_id": "1_0", "path": [["a", 0, 0]]}, {"instr_id": "1_1", "path": []}]'
    p = _preds(raw, key=TRAJECTORY_KEYS)
    assert p.counts.tolist() == [1, 0]
    assert _preds(raw, key="path", form="triple").viewpoints() == ["a"]
    # an explicit form wins over detection: ["a", "b", "c"] is read as plain steps
    q = _preds(b'[{"instr_id": "x", "trajectory": ["a", "b", "c"]}]', form="plain")
    assert q.form == "plain" and q.viewpoints() == ["a", "b", "c"]
    # [vp, vp, vp] as the first step is nested, by the validating parser's rule
    assert _preds(b'[{"instr_id": "x", "trajectory": [["a", "b", "c"]]}]').form == "nested"


def test_numbers_that_are_finite_floats_are_accepted() -> None:
    raw = _rec(
        '{"instr_id": "1", "trajectory": [["a", 1e-999, -9.9e299], ["b", 1' + "0" * 299 + ", 0]]}"
    )
    assert _preds(raw).viewpoints() == ["a", "b"]


def test_non_ascii_ids_and_viewpoints_without_escapes() -> None:
    raw = '[{"instr_id": "é_0", "trajectory": [["ü", 1, 2]]}]'.encode()
    p = _preds(raw)
    assert p.ids == ["é_0"] and p.viewpoints() == ["ü"]


# --- every decline, with its reason ------------------------------------------------------------


def _rec(body: str) -> bytes:
    return ("[" + body + "]").encode()


PRED_DECLINES = [
    (b'{"instr_id": "1", "trajectory": []}', 1),
    (b"[1]", 2),
    (b'[{"instr_id": "1_0", "trajectory": [["a", 0, 0]]}, "x"]', 2),
    (_rec('{"instr\\u005fid": "1", "trajectory": [["a", 0, 0]]}'), 3),
    (_rec('{"instr_id": "1", "instr_id": "2", "trajectory": [["a", 0, 0]]}'), 4),
    (_rec('{"instr_id": "1", "trajectory": [["a", 0, 0]], "trajectory": [["a", 0, 0]]}'), 4),
    (_rec('{"trajectory": [["a", 0, 0]]}'), 5),
    (_rec('{"loss": 0.5, "sr": 0.1}'), 5),
    (_rec('{"instr_id": 1.5, "trajectory": [["a", 0, 0]]}'), 6),
    (_rec('{"instr_id": 1e3, "trajectory": [["a", 0, 0]]}'), 6),
    (_rec('{"instr_id": true, "trajectory": [["a", 0, 0]]}'), 6),
    (_rec('{"instr_id": null, "trajectory": [["a", 0, 0]]}'), 6),
    (_rec('{"instr_id": -0, "trajectory": [["a", 0, 0]]}'), 6),
    (_rec('{"instr_id": ["1"], "trajectory": [["a", 0, 0]]}'), 6),
    (_rec('{"instr_id": "1\\u005f0", "trajectory": [["a", 0, 0]]}'), 7),
    (_rec('{"instr_id": "1", "trajectory": [["a\\u0062", 0, 0]]}'), 7),
    (_rec('{"instr_id": "1", "trajectory": ["a", "b\\/"]}'), 7),
    (_rec('{"instr_id": "1"}'), 8),
    (_rec('{"instr_id": "1", "trajectory": "abc"}'), 9),
    (_rec('{"instr_id": "1", "trajectory": null}'), 9),
    (_rec('{"instr_id": "1", "trajectory": {"a": 1}}'), 9),
    (_rec('{"instr_id": "1", "trajectory": [["a", 1]]}'), 10),
    (_rec('{"instr_id": "1", "trajectory": [["a", 1, 2, 3]]}'), 10),
    (_rec('{"instr_id": "1", "trajectory": [["a", "1", 2]]}'), 10),
    (_rec('{"instr_id": "1", "trajectory": [["a", 1, null]]}'), 10),
    (_rec('{"instr_id": "1", "trajectory": [[5, 1, 2]]}'), 10),
    (_rec('{"instr_id": "1", "trajectory": [["a", 1, 2], "b"]}'), 10),
    (
        _rec(
            '{"instr_id": "1", "trajectory": [["a", 1, 2]]}, {"instr_id": "2", "trajectory": ["b"]}'
        ),
        10,
    ),
    (_rec('{"instr_id": "1", "trajectory": ["a", ["b"]]}'), 10),
    (_rec('{"instr_id": "1", "trajectory": [["a"], "b"]}'), 10),
    (_rec('{"instr_id": "1", "trajectory": [["a"], [1]]}'), 10),
    (_rec('{"instr_id": "1", "trajectory": [["a", 1e400, 0]]}'), 12),
    (_rec('{"instr_id": "1", "trajectory": [["a", 0, -12e299]]}'), 12),
    (_rec('{"instr_id": "1", "trajectory": [["a", 1' + "0" * 300 + ", 0]]}"), 12),
    (_rec('{"instr_id": "1", "trajectory": []}'), 13),
]


@pytest.mark.parametrize(("raw", "code"), PRED_DECLINES)
def test_prediction_declines(raw: bytes, code: int) -> None:
    out = try_scan_predictions(raw, id_field="instr_id", key="trajectory")
    assert isinstance(out, Declined) and out.reason == REASONS[code], out
    assert scan_predictions(raw, id_field="instr_id", key="trajectory") is None


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'[{"instr_id": "1", "trajectory": [["a", 0, 0]]}', "not valid JSON"),
        (b'[{"instr_id": "1", "trajectory": [["a", 0, 0],]}]', "not valid JSON"),
        (b"[]", "the file holds no predictions"),
        (
            b'[{"instr_id": "\xff", "trajectory": [["a", 0, 0]]}]',
            "the first record cannot be decoded (Invalid UTF-8 encoded string)",
        ),
        (
            b'[{"instr_id": "1", "trajectory": [["a", 0, 0]]}, {"instr_id": "\xff", "trajectory": []}]',
            "an id is not valid UTF-8",
        ),
        (
            b'[{"score": 1}]',
            "the first record has none of the trajectory fields trajectory, path, pred_path",
        ),
    ],
)
def test_prediction_declines_outside_the_kernel(raw: bytes, reason: str) -> None:
    out = try_scan_predictions(raw, id_field="instr_id", key=TRAJECTORY_KEYS)
    assert out == Declined(reason) or (isinstance(out, Declined) and out.reason == reason)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="unknown trajectory form"):
        scan_predictions(b"[]", id_field="instr_id", key="trajectory", form="flat")
    with pytest.raises(ValueError, match="must differ"):
        scan_predictions(b'[{"a": "1"}]', id_field="a", key="a")


def test_truncated_input_never_reads_outside_the_buffer() -> None:
    """With ``validated=True`` on input that is not valid JSON the kernels must still stop
    inside the buffer (they may decline or return spans, but never crash)."""
    for raw in (ODD, EPISODES):
        for cut in range(len(raw)):
            part = raw[:cut]
            p = try_scan_predictions(part, id_field="instr_id", key="trajectory", validated=True)
            e = try_scan_r2r_episodes(part, validated=True)
            for out in (p, e):
                if not isinstance(out, Declined):
                    assert int(out.vp_ends.max(initial=0)) <= cut


# --- hand-written episodes ---------------------------------------------------------------------

EPISODES = (
    '[ {"distance": 10.86, "scan": "8194nk5LbLH", "path_id": 4332,\n'
    '   "path": ["c9e8", "f33c"], "heading": 4.055,\n'
    '   "instructions": ["Walk to the \\"exit\\". ", "Go \\u2192 left\\n", "Geh zur T\u00fcr \U0001f6aa"],\n'
    '   "extra": {"instructions": [1, 2], "path": "x"}},\n'
    '  {"path_id": "a-7", "path": ["e1"], "scan": "s2", "distance": null},\n'
    '  {"scan": "s2", "path": [], "path_id": 9, "heading": -1E-3, "instructions": []} ]'
).encode()


def test_episodes_hand_written() -> None:
    e = _episodes(EPISODES)
    assert e.path_ids == ["4332", "a-7", "9"]
    assert e.path_id_is_int.tolist() == [True, False, True]
    assert e.scans == ["8194nk5LbLH", "s2", "s2"]
    assert e.scans[1] is e.scans[2]  # interned, one string per distinct scan
    assert e.headings.tolist() == [4.055, 0.0, -0.001]
    assert e.has_heading.tolist() == [True, False, True]
    assert e.has_distance.tolist() == [True, False, False]
    assert e.paths() == [("c9e8", "f33c"), ("e1",), ()]
    assert e.instruction_offsets.tolist() == [0, 3, 3, 3]
    assert e.instructions() == [
        'Walk to the "exit". ',
        "Go \u2192 left\n",
        "Geh zur T\u00fcr \U0001f6aa",
    ]
    assert e.instructions(np.array([2, 0])) == [
        "Geh zur T\u00fcr \U0001f6aa",
        'Walk to the "exit". ',
    ]


EPISODE_DECLINES = [
    (b'[{"scan": "s", "path": ["a"]}]', 5),
    (b'[{"path_id": 1, "path": ["a"]}]', 15),
    (b'[{"path_id": 1, "scan": "s"}]', 16),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "path": ["b"]}]', 4),
    (b'[{"path_id": 1.0, "scan": "s", "path": ["a"]}]', 6),
    (b'[{"path_id": "1\\t", "scan": "s", "path": ["a"]}]', 7),
    (b'[{"path_id": 1, "scan": "s\\u0031", "path": ["a"]}]', 7),
    (b'[{"path_id": 1, "scan": 5, "path": ["a"]}]', 11),
    (b'[{"path_id": 1, "scan": "s", "path": "a"}]', 9),
    (b'[{"path_id": 1, "scan": "s", "path": ["a", 2]}]', 11),
    (b'[{"path_id": 1, "scan": "s", "path": ["a\\"b"]}]', 7),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "heading": null}]', 17),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "heading": "1.5"}]', 17),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "heading": 1e999}]', 12),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "distance": "3"}]', 17),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "distance": true}]', 17),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "instructions": "go"}]', 9),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "instructions": null}]', 9),
    (b'[{"path_id": 1, "scan": "s", "path": ["a"], "instructions": ["go", 3]}]', 11),
    (b'[["a"]]', 2),
    (b'{"episodes": []}', 1),
]


@pytest.mark.parametrize(("raw", "code"), EPISODE_DECLINES)
def test_episode_declines(raw: bytes, code: int) -> None:
    out = try_scan_r2r_episodes(raw)
    assert isinstance(out, Declined) and out.reason == REASONS[code], out
    assert scan_r2r_episodes(raw) is None


def test_episode_declines_on_invalid_json_and_utf8() -> None:
    assert try_scan_r2r_episodes(b'[{"path_id": 1}') == Declined("not valid JSON")
    bad = b'[{"path_id": 1, "scan": "s", "path": ["a"], "instructions": ["\xff"]}]'
    assert isinstance(try_scan_r2r_episodes(bad), Declined)
    assert scan_r2r_episodes(b"[]") is not None and len(_episodes(b"[]")) == 0


# --- span helpers and the viewpoint table ------------------------------------------------------


def test_span_helpers() -> None:
    raw = b'["ab","cd","ab",""]'
    starts, ends = np.array([2, 7, 12, 17]), np.array([4, 9, 14, 17])
    assert span_strings(raw, starts, ends) == ["ab", "cd", "ab", ""]
    texts, inverse = unique_strings(raw, starts, ends)
    assert texts == ["ab", "cd", ""] and inverse.tolist() == [0, 1, 0, 2]
    assert span_strings(raw, starts[:0], ends[:0]) == []


def test_viewpoint_table() -> None:
    hexes = ["0" * 31 + "a", "f" * 32, "S"]
    table = ViewpointTable.from_ids([hexes, ["S", "T"], []])
    assert len(table) == 5 and table.n_scans == 3
    raw = ("|".join([*hexes, "T", "U", "0" * 31 + "A"])).encode()
    bounds = np.cumsum([0] + [len(s) + 1 for s in [*hexes, "T", "U", "0" * 31 + "A"]])
    starts, ends = bounds[:-1], bounds[1:] - 1
    scans, nodes = table.lookup(raw, starts, ends)
    # "S" is in scans 0 and 1: ambiguous without a scan; "U" and the upper-case id are unknown
    assert scans.tolist() == [0, 0, -1, 1, -1, -1]
    assert nodes.tolist() == [0, 1, -1, 1, -1, -1]
    assert table.lookup_in(raw, starts, ends, np.array([0, 0, 1, 1, 1, 0])).tolist() == [
        0,
        1,
        0,
        1,
        -1,
        -1,
    ]
    assert table.lookup_in(raw, starts, ends, np.array([1, 1, 0, 0, 2, 2])).tolist() == [
        -1,
        -1,
        2,
        -1,
        -1,
        -1,
    ]
    with pytest.raises(ValueError, match="one scan position per span"):
        table.lookup_in(raw, starts, ends, np.zeros(2))
    empty = ViewpointTable.from_ids([])
    assert empty.lookup(raw, starts, ends)[1].tolist() == [-1] * 6


def test_viewpoint_table_mixes_hex_and_other_ids_of_32_characters() -> None:
    ids = ["g" * 32, "0123456789abcdef" * 2, "0123456789ABCDEF" * 2]
    table = ViewpointTable.from_ids([ids])
    raw = " ".join([ids[2], ids[0], ids[1], "0123456789abcdeF" * 2]).encode()
    starts = np.arange(4) * 33
    assert table.lookup(raw, starts, starts + 32)[1].tolist() == [2, 0, 1, -1]
    # any layout of the buffer and of the span arrays
    doubled = np.repeat(np.frombuffer(raw, np.uint8), 2)[::2]
    assert table.lookup(doubled, starts[::-1], (starts + 32)[::-1])[1].tolist() == [-1, 1, 0, 2]


def test_viewpoint_table_many_ids_with_colliding_low_bits() -> None:
    rng = np.random.default_rng(3)
    ids = [[f"{v:032x}" for v in rng.integers(0, 2**62, size=400)] for _ in range(5)]
    table = ViewpointTable.from_ids(ids)
    flat = [vp for scan in ids for vp in scan]
    raw = ",".join(flat).encode()
    starts = np.arange(len(flat)) * 33
    scans, nodes = table.lookup(raw, starts, starts + 32)
    assert scans.tolist() == np.repeat(np.arange(5), 400).tolist()
    assert nodes.tolist() == np.tile(np.arange(400), 5).tolist()


# --- property: random valid files give what msgspec's generic decoding gives ------------------

SAFE = string.ascii_letters + string.digits + "_-.:/ "
safe_text = st.text(SAFE, min_size=0, max_size=12)
viewpoint = st.one_of(
    st.text("0123456789abcdef", min_size=32, max_size=32), st.text(SAFE, min_size=1, max_size=6)
)
number = st.one_of(
    st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
)
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


def _step(form: str) -> st.SearchStrategy[Any]:
    if form == "triple":
        return st.tuples(viewpoint, number, number).map(list)
    if form == "plain":
        return viewpoint
    return st.lists(viewpoint, min_size=1, max_size=3)


@st.composite
def prediction_files(draw: st.DrawFn) -> tuple[bytes, list[dict[str, Any]], str]:
    form = draw(st.sampled_from(["triple", "plain", "nested"]))
    records = []
    for _ in range(draw(st.integers(1, 5))):
        rid = draw(st.one_of(safe_text, st.integers(-(10**20), 10**20)))
        rec = {k: v for k, v in draw(extra_fields).items() if k not in ("instr_id", "trajectory")}
        rec["instr_id"] = rid
        rec["trajectory"] = draw(st.lists(_step(form), min_size=1, max_size=6))
        keys = draw(st.permutations(list(rec)))
        records.append({k: rec[k] for k in keys})
    style = draw(dump_style)
    return json.dumps(records, **style).encode(), records, form


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prediction_files())
def test_property_predictions_match_msgspec(case: tuple[bytes, list[dict[str, Any]], str]) -> None:
    raw, _, form = case
    decoded = msgspec.json.decode(raw)
    p = _preds(raw)
    assert p.form == form
    assert p.ids == [str(r["instr_id"]) for r in decoded]
    assert p.id_is_int.tolist() == [isinstance(r["instr_id"], int) for r in decoded]
    if form == "triple":
        seqs = [[s[0] for s in r["trajectory"]] for r in decoded]
    elif form == "nested":
        seqs = [[v for s in r["trajectory"] for v in s] for r in decoded]
    else:
        seqs = [r["trajectory"] for r in decoded]
    assert p.counts.tolist() == [len(s) for s in seqs]
    assert p.viewpoints() == [v for s in seqs for v in s]


@st.composite
def episode_files(draw: st.DrawFn) -> bytes:
    records = []
    for _ in range(draw(st.integers(0, 5))):
        rec = {
            k: v
            for k, v in draw(extra_fields).items()
            if k not in ("path_id", "scan", "path", "heading", "instructions", "distance")
        }
        rec["path_id"] = draw(st.one_of(safe_text, st.integers(0, 10**9)))
        rec["scan"] = draw(safe_text)
        rec["path"] = draw(st.lists(viewpoint, max_size=5))
        if draw(st.booleans()):
            rec["heading"] = draw(number)
        if draw(st.booleans()):
            rec["instructions"] = draw(st.lists(st.text(max_size=30), max_size=3))
        if draw(st.booleans()):
            rec["distance"] = draw(st.one_of(st.none(), number))
        keys = draw(st.permutations(list(rec)))
        records.append({k: rec[k] for k in keys})
    return json.dumps(records, **draw(dump_style)).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episode_files())
def test_property_episodes_match_msgspec(raw: bytes) -> None:
    decoded = msgspec.json.decode(raw)
    e = _episodes(raw)
    _assert_episodes_equal(e, decoded)


def _assert_episodes_equal(e: ScannedEpisodes, decoded: list[dict[str, Any]]) -> None:
    assert e.path_ids == [str(r["path_id"]) for r in decoded]
    assert e.path_id_is_int.tolist() == [isinstance(r["path_id"], int) for r in decoded]
    assert e.scans == [r["scan"] for r in decoded]
    assert e.paths() == [tuple(r["path"]) for r in decoded]
    assert e.headings.tolist() == [float(r.get("heading", 0.0)) for r in decoded]
    assert e.has_distance.tolist() == [r.get("distance") is not None for r in decoded]
    assert np.diff(e.instruction_offsets).tolist() == [
        len(r.get("instructions", [])) for r in decoded
    ]
    assert e.instructions() == [s for r in decoded for s in r.get("instructions", [])]


# --- real files --------------------------------------------------------------------------------


def test_real_r2r_episodes_match_msgspec(data_root: Path) -> None:
    for name in ("r2r/R2R_val_unseen.json.gz", "r4r/R4R_val_seen.json.gz"):
        raw = read_bytes(data_root / name)
        e = _episodes(raw)
        decoded = msgspec.json.decode(raw)
        assert len(e) == len(decoded) and len(e) > 100
        _assert_episodes_equal(e, decoded)


def test_real_r2r_paths_map_to_graph_nodes(data_root: Path) -> None:
    from vlneval.graph.store import GraphStore

    e = _episodes(read_bytes(data_root / "r2r/R2R_val_unseen.json.gz"))
    store = GraphStore(data_root / "matterport3d/connectivity")
    scans = sorted(set(e.scans))
    table = ViewpointTable.from_ids([store.graph(s).ids for s in scans])
    pos = {s: k for k, s in enumerate(scans)}
    step_scan = np.repeat([pos[s] for s in e.scans], np.diff(e.path_offsets))
    nodes = table.lookup_in(e.buffer, e.vp_starts, e.vp_ends, step_scan)
    expected = [
        store.graph(s).index[v] for s, path in zip(e.scans, e.paths(), strict=True) for v in path
    ]
    assert nodes.tolist() == expected
    scan_of, node_of = table.lookup(e.buffer, e.vp_starts, e.vp_ends)
    assert scan_of.tolist() == step_scan.tolist() and node_of.tolist() == expected


def test_real_prediction_files_match_msgspec(data_root: Path) -> None:
    files = sorted((data_root / "predictions/r2r").glob("*/*.json*"))
    assert len(files) >= 10
    scanned = 0
    for path in files:
        raw = read_bytes(path)
        decoded = msgspec.json.decode(raw)
        out = try_scan_predictions(raw, id_field="instr_id", key=TRAJECTORY_KEYS)
        if isinstance(out, Declined):
            # NaviLLM's compact files open with a summary record that has no trajectory field
            assert not any(k in decoded[0] for k in TRAJECTORY_KEYS), (path, out)
            continue
        key = next(k for k in TRAJECTORY_KEYS if k in decoded[0])
        assert out.ids == [str(r["instr_id"]) for r in decoded], path
        assert out.viewpoints() == [s[0] for r in decoded for s in r[key]], path
        assert out.counts.tolist() == [len(r[key]) for r in decoded], path
        scanned += 1
    assert scanned >= 10
