"""Every bad Touchdown input gets one clear error naming the file, the route and the field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.touchdown.fixture import (
    LINKS,
    NODES,
    ROUTES,
    RUNS,
    SDR,
    make_root,
    nav,
    route,
    write,
)
from vlneval.errors import InvalidInputError, MissingDataError, UnknownNameError, VLNEvalError
from vlneval.evaluation import evaluate
from vlneval.graph.street import parse_street_graph


def _bad(tmp: Path, body: Any, task: str = "touchdown", **kw: Any) -> InvalidInputError:
    root = make_root(tmp / "root")
    with pytest.raises(InvalidInputError) as exc:
        evaluate(task, "dev", write(tmp, body), root=root, **kw)
    return exc.value


def _good() -> list[dict[str, Any]]:
    return [{"route_id": k, "trajectory": v} for k, v in RUNS.items()]


def test_route_id_as_string_everywhere_is_one_error(tmp_path: Path) -> None:
    err = _bad(tmp_path, [{**r, "route_id": str(r["route_id"])} for r in _good()])
    assert len(err.problems) == 1 and "route_id is a string in all 3 records (e.g. '1')" in str(err)
    assert "td_preds.json" in str(err)


def test_route_id_as_string_once(tmp_path: Path) -> None:
    body = _good()
    body[1]["route_id"] = "2"
    err = _bad(tmp_path, body)
    assert [(p.field, p.message) for p in err.problems] == [
        (None, "1 of 3 routes have no prediction (first: 2); profile touchdown requires all of "
               "them: score only the predicted ones with --subset (subset=True in Python), "
               "reported as partial"),
        ("record 1", "route_id must be a JSON integer, got str '2'"),
    ]  # fmt: skip


def test_wrong_id_key(tmp_path: Path) -> None:
    err = _bad(tmp_path, [{"id": r["route_id"], "trajectory": r["trajectory"]} for r in _good()])
    assert (
        len(err.problems) == 1
        and "no record has the field 'route_id'" in str(err)
        and "'id'" in str(err)
    )


def test_missing_trajectory_and_unknown_panorama(tmp_path: Path) -> None:
    body = _good()
    del body[0]["trajectory"]
    body[1]["trajectory"] = ["p0", "nowhere"]
    text = str(_bad(tmp_path, body))
    assert "route_id 1: missing field 'trajectory'" in text
    assert (
        "route_id 2: trajectory[1]: panorama nowhere is not in the Touchdown street graph" in text
    )
    body[1]["trajectory"] = ["p0", "x" * 100_000]
    text = str(_bad(tmp_path / "long", body))
    assert (
        f"trajectory[1]: panorama {'x' * 80}… (100,000 characters) is not in the Touchdown" in text
    )


def test_bad_steps(tmp_path: Path) -> None:
    body = _good()
    body[0]["trajectory"] = ["p0", 3]
    assert "route_id 1: trajectory[1]: expected a panorama id, got 3" in str(_bad(tmp_path, body))
    body = [{"route_id": 1, "trajectory": [["p0", float("nan")]]}]
    text = str(_bad(tmp_path / "b", body))
    assert "expected [panorama, heading, ...] with finite numbers, got ['p0', nan]" in text


def test_wrong_start_jump_duplicate_missing(tmp_path: Path) -> None:
    body = [
        {"route_id": 1, "trajectory": ["p1", "p2", "p3", "p4"]},
        {"route_id": 3, "trajectory": ["p3", "p5", "p6"]},
    ]
    text = str(_bad(tmp_path, body))
    assert (
        "route_id 1: trajectory[0]: the trajectory starts at p1, not at the route's start p0"
        in text
    )
    assert "route_id 3: trajectory[1]: panorama p5 is not linked to p3" in text
    assert "1 of 3 routes have no prediction (first: 2)" in text
    text = str(_bad(tmp_path / "b", [*_good(), _good()[0]]))
    assert "route_id 1: duplicate id" in text


def test_nested_form_does_not_apply(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    with pytest.raises(VLNEvalError, match="'nested' does not apply to Touchdown"):
        evaluate("touchdown", "dev", nav(tmp_path), root=root, form="nested")


_MISSING = object()  # a field the record lacks


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pano": "left"}, "route_id 1: pano: pano must be one of main, pre, post, got str 'left'"),
        ({"x": 4000.0}, 'SDR "1_main": x: x = 4000.0 lies outside the 3680 x 800 px panorama'),
        ({"y": None}, 'SDR "1_main": y: y must be a finite number of pixels, got null'),
        ({"x": True}, 'SDR "1_main": x: x must be a finite number of pixels, got bool True'),
        ({"x": _MISSING}, "SDR \"1_main\": missing field 'x' (a pixel coordinate)"),
    ],
)
def test_bad_sdr_records(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    body = [dict(r) for r in SDR]
    body[0].update(change)
    body[0] = {k: v for k, v in body[0].items() if v is not _MISSING}
    err = _bad(tmp_path, body, task="touchdown-sdr")
    assert str(err).endswith(f"td_preds.json: {message}"), str(err)
    # a record of another panorama kind predicts no example: 1_main is then missing (said first)
    missing = ["1 of 3 SDR examples (route and pre/main/post panorama with a known location) "
               "have no prediction (first: 1_main); profile touchdown requires all of them: "
               "score only the predicted ones with --subset (subset=True in Python), reported "
               "as partial"] if "pano" in change else []  # fmt: skip
    assert [p.message for p in err.problems[:-1]] == missing


def test_duplicate_sdr(tmp_path: Path) -> None:
    err = _bad(tmp_path, [*SDR, SDR[0]], task="touchdown-sdr")
    assert 'SDR "1_main": duplicate' in str(err)
    assert str(err).endswith(  # one copy or 300: one problem, with the count
        'SDR "1_main": duplicate id: the file has two predictions for it'
    )
    err = _bad(tmp_path, [*SDR, *[SDR[0]] * 300], task="touchdown-sdr")
    assert [(p.episode, p.message) for p in err.problems] == [
        ('SDR "1_main"', "duplicate id: the file has 301 predictions for it")
    ]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            {"route_id": "4", "route_panoids": ["p0"]},
            "line 4: route_id must be an integer, got '4'",
        ),
        (
            {"route_id": 4, "route_panoids": []},
            "line 4: route_panoids: route_panoids must be a non-empty list",
        ),
        (
            {**route(4, ["p0"]), "main_static_center": "{x: 1}"},
            "main_static_center must be JSON text",
        ),
        (
            {**route(4, ["p0"]), "main_static_center": '{"x": 2, "y": 0.5}'},
            "must be ratios in [0, 1]",
        ),
        (route(1, ["p0"]), "line 4: duplicate route_id 1 (also line 1)"),
    ],
)
def test_bad_route_files(tmp_path: Path, bad: dict[str, Any], message: str) -> None:
    root = make_root(tmp_path / "root", [*ROUTES, bad])
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown", "dev", nav(tmp_path), root=root)
    assert "dev.json" in str(exc.value) and message in str(exc.value)


def test_bad_graph_files() -> None:
    with pytest.raises(InvalidInputError) as exc:
        parse_street_graph(
            [*NODES, "p9,ten,40,-74", "p0,1,2,3"],
            [*LINKS, "p0,0,p9", "p0,0,p3", "p1,x"],
            source="g",
        )
    text = str(exc.value)
    assert "g: nodes line 9: yaw must be an integer" in text
    assert "g: nodes line 10: panorama p0 is listed twice" in text
    assert "g: links line 14: panorama p9 is not in nodes.txt" in text
    assert "g: links line 15: panorama p0 has two links with heading 0" in text
    assert "g: links line 16: expected start_panoid,heading,end_panoid" in text


def test_data_versions(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    r = evaluate("touchdown", "dev", nav(tmp_path), root=root, options={"data_version": "unseen"})
    assert r.data_version == "unseen"
    with pytest.raises(MissingDataError, match="touchdown dev routes \\(original\\)"):
        evaluate("touchdown", "dev", nav(tmp_path), root=root, options={"data_version": "original"})
    with pytest.raises(UnknownNameError, match="did you mean 'unseen'"):
        evaluate("touchdown", "dev", nav(tmp_path), root=root, options={"data_version": "unsen"})
    with pytest.raises(
        VLNEvalError,
        match=re.escape(
            "option path_type (--path-type) does not apply to task touchdown (its options: data_version)"
        ),
    ):
        evaluate(
            "touchdown", "dev", nav(tmp_path), root=root, options={"path_type": "planner_path"}
        )
    original = make_root(tmp_path / "root2", version="data")
    r = evaluate("touchdown", "dev", nav(tmp_path), root=original)
    assert r.data_version == "original"


def test_missing_graph_folder(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    with pytest.raises(MissingDataError, match="Touchdown graph folder .* does not exist"):
        evaluate("touchdown", "dev", nav(tmp_path), root=root, graphs=tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingDataError, match="no nodes.txt or nodes.txt.gz"):
        evaluate("touchdown", "dev", nav(tmp_path), root=root, graphs=tmp_path / "empty")


def test_json_lines_predictions(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _good()))
    r = evaluate("touchdown", "dev", path, root=root)
    assert r.metrics["SED"] == pytest.approx(0.5)


def test_object_instead_of_list(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    path = tmp_path / "preds.json"
    path.write_text(json.dumps({"1": RUNS[1]}, indent=2))
    with pytest.raises(
        InvalidInputError,
        match="preds.json: expected a JSON list of predictions, got a JSON object",
    ):
        evaluate("touchdown", "dev", path, root=root)
    path.write_text('{"route_id": 1, "trajectory": ["p0"]}\n{"route_id": 2,')
    with pytest.raises(InvalidInputError, match="preds.json: line 2: not valid JSON"):
        evaluate("touchdown", "dev", path, root=root)


def test_data_version_any_case_is_the_task_spelling(tmp_path: Path) -> None:
    """A release named in any case is resolved once: the scorer, the result and the messages
    carry the task's spelling, also when the scorer is opened without ``Task.open``."""
    from vlneval.tasks import get_profile, get_task
    from vlneval.tasks.common.goal_scoring import DEFAULT_OPTIONS
    from vlneval.tasks.common.request import SplitRequest
    from vlneval.tasks.touchdown.score import TouchdownScorer, open_routes

    task, root = get_task("touchdown"), make_root(tmp_path / "root")
    request = SplitRequest(
        task, "dev", get_profile("touchdown"), root=root, options={"data_version": "UnSeen"}
    )
    scorer = TouchdownScorer(request)
    assert scorer.data_version == "unseen"
    assert scorer.score(nav(tmp_path), DEFAULT_OPTIONS).data_version == "unseen"
    with pytest.raises(MissingDataError, match="no touchdown dev routes \\(original\\) found"):
        open_routes(task, "dev", root=root, data_version="Original")
    with pytest.raises(UnknownNameError, match="did you mean 'unseen'"):
        open_routes(task, "dev", episodes_file=root / "x.json", data_version="unsen")
    with pytest.raises(UnknownNameError, match="did you mean 'unseen'"):
        open_routes(task, "dev", root=None, data_version="unsen")


def test_release_file_one_rule(tmp_path: Path) -> None:
    """``release_file`` checks the release whether or not a file or a root is given, and an
    empty file name counts as none given (as ``episodes_path`` has it)."""
    from vlneval.tasks import get_task
    from vlneval.tasks.common.goal_scoring import release_file

    task, root = get_task("touchdown"), make_root(tmp_path / "root")
    given = tmp_path / "routes.json"
    assert release_file(task, "dev", root, given, "UNSEEN") == (given, "unseen")
    assert release_file(task, "dev", root, given, None) == (given, None)
    path, version = release_file(task, "dev", root, "", "Unseen")
    assert version == "unseen" and path.parent.name == "touchdown_unseen_split"
    for file, base in ((given, root), (None, None)):
        with pytest.raises(
            UnknownNameError,
            match="unknown Touchdown data version 'v9' \\(known: original, unseen\\)",
        ):
            release_file(task, "dev", base, file, "v9")


def test_completeness_is_listed_before_many_jumps(tmp_path: Path) -> None:
    """With 25 jumping routes the 20 problems shown still say that 5 routes have no
    prediction: the completeness problem comes first, as in the shared rule checks."""
    root = make_root(tmp_path / "root", [route(k, ["p0", "p1", "p2"]) for k in range(1, 31)])
    body = [{"route_id": k, "trajectory": ["p0", "p2"]} for k in range(1, 26)]
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown", "dev", write(tmp_path, body), root=root)
    problems = exc.value.problems
    assert len(problems) == 26
    assert problems[0].message == (
        "5 of 30 routes have no prediction (first: 26, 27, 28, 29, 30); profile touchdown "
        "requires all of them: score only the predicted ones with --subset (subset=True in "
        "Python), reported as partial"
    )
    shown = str(exc.value).splitlines()
    assert shown[0] == f"error: {tmp_path / 'td_preds.json'}: {problems[0].message}"
    assert shown[1].endswith('route_id 1: trajectory[1]: panorama p2 is not linked to p0 (a '
                             "move must follow a street-graph link; profile touchdown-vlnt scores "
                             "such jumps without a check)")  # fmt: skip
    assert shown[-1] == (
        f"error: {tmp_path / 'td_preds.json'}: 6 more problems not shown (--all-errors lists "
        "them all)"
    )


@pytest.mark.parametrize("subset", [False, True])
@pytest.mark.parametrize(
    ("task", "body"),
    [
        ("touchdown", [{"route_id": 99, "trajectory": ["p0"]}]),
        ("touchdown-sdr", [{"route_id": 99, "x": 1.0, "y": 1.0}]),
    ],
)
def test_a_file_matching_no_route_is_said_so(
    tmp_path: Path, task: str, body: list[dict[str, Any]], subset: bool
) -> None:
    """A file none of whose ids is a route of the split is refused with the shared message,
    with --subset too (it used to score 0 routes as a partial result)."""
    err = _bad(tmp_path, body, task=task, subset=subset)
    assert str(err) == (
        f"error: {tmp_path / 'td_preds.json'}: no prediction matches an episode of {task} dev"
    )


def test_route_ids_are_shown_as_the_integers_the_files_write(tmp_path: Path) -> None:
    """A route id is a JSON integer in route and predictions files: messages show it bare
    (``route_id 1``), as written; an SDR example's own id is text, and stays quoted."""
    body = [{"route_id": 1, "trajectory": ["p1", "p2"]}, *_good()[1:]]
    err = _bad(tmp_path, body)
    assert [str(p) for p in err.problems] == [
        f"{tmp_path / 'td_preds.json'}: route_id 1: trajectory[0]: the trajectory starts at p1, "
        "not at the route's start p0 (it must include the start panorama)"
    ]
    root = make_root(tmp_path / "other", [route(7, ["p0", "q"])])
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown", "dev", nav(tmp_path, {7: ["p0"]}), root=root)
    assert [str(p) for p in exc.value.problems] == [
        f"{root / 'touchdown' / 'touchdown_unseen_split' / 'dev.json'}: route_id 7: "
        f"route_panoids[1]: panorama q is not in the Touchdown street graph ({root / 'touchdown' / 'graph'})"
    ]
    sdr = [{"route_id": 1, "pano": "left", "x": 1.0, "y": 1.0}]
    assert [p.episode for p in _bad(tmp_path / "sdr", sdr, "touchdown-sdr").problems] == [
        None,  # the completeness problem of the file, first
        "route_id 1",
    ]
    sdr = [{"route_id": 1, "x": -1.0, "y": 1.0}]
    assert [p.episode for p in _bad(tmp_path / "sdr2", sdr, "touchdown-sdr").problems] == [
        None,
        'SDR "1_main"',
    ]


def test_routes_are_labelled_by_the_shared_episode_label(tmp_path: Path) -> None:
    """Touchdown's route ids are JSON integers: its table says so, so the shared
    EpisodeTable.label names a route as the reader and the rule checks always did."""
    from vlneval.tasks.touchdown.format import load_touchdown_routes

    root = make_root(tmp_path / "root")
    table = load_touchdown_routes(next((root / "touchdown").rglob("dev.json*"))).table
    assert table.int_ids and table.label(0) == "route_id 1" and table.record_id(0) == 1


def test_a_route_given_many_times_is_one_problem_with_its_count(tmp_path: Path) -> None:
    body = [*_good(), *[_good()[0]] * 300]
    body[1]["trajectory"] = ["p0", "nowhere"]
    err = _bad(tmp_path, body)
    assert [(p.episode, p.message.split(" (")[0]) for p in err.problems] == [
        ("route_id 2", "panorama nowhere is not in the Touchdown street graph"),
        ("route_id 1", "duplicate id: the file has 301 predictions for it"),
    ]


def test_a_first_json_line_holding_nan_is_decoded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vlneval.io
    import vlneval.tasks.common.jsonl as jsonl
    import vlneval.tasks.touchdown.format as touchdown_format

    read: list[bytes] = []

    def counted(raw: bytes, source: str) -> Any:
        read.append(raw)
        return explain(raw, source)

    explain = vlneval.io.explain
    monkeypatch.setattr(vlneval.io, "explain", counted)
    monkeypatch.setattr(jsonl, "explain", counted)  # every later line's lenient decoding
    monkeypatch.setattr(touchdown_format, "explain", counted)
    first = '{"route_id": 1, "trajectory": ["p0", NaN]}'
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join([first, *(json.dumps(r) for r in _good()[1:])]) + "\n")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown", "dev", path, root=make_root(tmp_path / "root"))
    assert str(exc.value) == (
        f"error: {path}: route_id 1: trajectory[1]: expected a panorama id, got nan"
    )
    assert read == [first.encode()]


def test_malformed_records_hide_neither_completeness_nor_the_rules(tmp_path: Path) -> None:
    """A malformed record or an unknown panorama is named beside every other problem of the
    file: the completeness problem first, then the records', then starts and links (as R2R)."""
    root = make_root(tmp_path / "root", [route(k, ["p0", "p1", "p2"]) for k in range(1, 7)])
    body: list[Any] = [
        {"route_id": 1, "trajectory": ["p0", "p2"]},  # a jump
        {"route_id": 2, "trajectory": ["p0", "nowhere"]},  # an unknown panorama
        {"route_id": 3, "trajectory": ["p1", "p2"]},  # a wrong start
        {"route_id": 4.5, "trajectory": ["p0"]},  # a malformed id: route 4 has no prediction
    ]
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown", "dev", write(tmp_path, body), root=root)
    assert [(p.episode or p.field, p.message.split(" (")[0]) for p in exc.value.problems] == [
        (None, "3 of 6 routes have no prediction"),
        ("route_id 2", "panorama nowhere is not in the Touchdown street graph"),
        ("record 3", "route_id must be a JSON integer, got float 4.5"),
        ("route_id 3", "the trajectory starts at p1, not at the route's start p0"),
        ("route_id 1", "panorama p2 is not linked to p0"),
    ]
    assert exc.value.problems[0].message.startswith(
        "3 of 6 routes have no prediction (first: 4, 5, 6)"
    )


def test_sdr_completeness_comes_before_a_malformed_record(tmp_path: Path) -> None:
    """An incomplete SDR file with a malformed record is told both, completeness first; the
    malformed record's example is predicted (badly), not missing."""
    err = _bad(tmp_path, [SDR[0], {**SDR[1], "x": float("nan")}], task="touchdown-sdr")
    assert [(p.episode, p.message) for p in err.problems] == [
        (None, "1 of 3 SDR examples (route and pre/main/post panorama with a known location) "
               "have no prediction (first: 2_main); profile touchdown requires all of them: "
               "score only the predicted ones with --subset (subset=True in Python), reported "
               "as partial"),
        ('SDR "1_post"', "x is nan (must be finite)"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"route_id": None}, "record 0: route_id must be a JSON integer, got null"),
        ({"trajectory": None}, "route_id 1: trajectory: trajectory must be a list, got null"),
        (
            {"trajectory": []},
            "route_id 1: trajectory: empty trajectory (it must include the start panorama)",
        ),
    ],
)
def test_problems_are_worded_as_the_r2r_reader_words_them(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    body = _good()
    body[0].update(change)
    assert str(_bad(tmp_path, body)).endswith(f"td_preds.json: {message}")


@pytest.mark.parametrize("task", ["touchdown", "touchdown-sdr"])
def test_a_one_line_json_object_is_no_list_of_predictions(tmp_path: Path, task: str) -> None:
    """A file of one JSON object (keyed by route id, say) is refused as the R2R reader refuses
    it, on one line as on many; a ``.jsonl`` file of one record is read."""
    err = _bad(tmp_path, {"1": RUNS[1]}, task=task)
    keyed = (
        ' keyed by id: one list of records is read, [{"route_id": 1, "trajectory": [...]}, ...] '
        '(in Python: [{"route_id": int(k), "trajectory": v} for k, v in predictions.items()])'
    )  # an SDR prediction is no trajectory: no such advice
    assert str(err) == (
        f"error: {tmp_path / 'td_preds.json'}: expected a JSON list of predictions, got a JSON "
        f"object{keyed if task == 'touchdown' else ''}"
    )
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"route_id": 1, "trajectory": RUNS[1]}))
    result = evaluate("touchdown", "dev", path, root=make_root(tmp_path / "r"), subset=True)
    assert result.n_episodes == 1


def test_completeness_is_said_when_every_matched_route_is_malformed(tmp_path: Path) -> None:
    err = _bad(tmp_path, [{"route_id": 1, "trajectory": ["p0", 3]}])
    assert [(p.field, p.message) for p in err.problems] == [
        (None, "2 of 3 routes have no prediction (first: 2, 3); profile touchdown requires all "
               "of them: score only the predicted ones with --subset (subset=True in Python), "
               "reported as partial"),
        ("trajectory[1]", "expected a panorama id, got 3"),
    ]  # fmt: skip
