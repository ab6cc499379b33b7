"""The server's rewrite of the scorer's command-line hints (``for_phase``), on the messages the
library really produces: a submitter sees what the phase does instead of an option to pass."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import preds, square_root, write_json
from tests.tasks.cvdn.fixture import TRAJECTORIES
from tests.tasks.cvdn.fixture import make_root as cvdn_root
from tests.tasks.hanna.fixture import RUNS as HANNA_RUNS
from tests.tasks.hanna.fixture import make_root as hanna_root
from tests.tasks.hanna.fixture import record as hanna_record
from tests.tasks.soon.soon_fixtures import entry, soon_preds, soon_root
from tests.tasks.touchdown.fixture import RUNS, SDR
from tests.tasks.touchdown.fixture import make_root as touchdown_root
from tests.tasks.vlnce.helpers import steps, write_split
from vlneval.errors import InvalidInputError, Problem, VLNEvalError, hint, hinted
from vlneval.evaluation import evaluate
from vlneval.server.services.scoring import _sanitise
from vlneval.server.services.validation import (
    PHASE_TEXT,
    ServerPaths,
    for_phase,
    render_problems,
)

ALL = ("1_0", "1_1", "1_2")


def r2r_root(tmp: Path) -> Path:
    """The square graph with its R2R split ``val``, also as the R4R split ``val_seen``."""
    root = square_root(tmp)
    episodes = json.loads((root / "r2r" / "R2R_val.json").read_text())
    write_json(root / "r4r" / "R4R_val_seen.json", episodes)
    return root


def vlnce_split(tmp: Path) -> dict[str, Path]:
    """Two VLN-CE episodes (goals 4 m ahead) with their dense references, as ``episodes_file``."""
    tmp.mkdir(parents=True)
    return {"episodes_file": write_split(tmp)[0]}


TELEPORT = [[0.0, 0.0, 0.0], [0.0, 0.0, -0.25], [500.0, 0.0, -500.25]]  # 707.11 m in one step
STRAIGHT = [[0.0, 0.0, -float(k)] for k in range(5)]
CE_PREDS = {"1": steps(TELEPORT, [4.0, 3.75, "inf"]), "2": steps(STRAIGHT, [4, 3, 2, 1, 0])}
NDH_PREDS = [
    {"inst_idx": k, "trajectory": [[v, 0.0, 0.0] for v in vps]} for k, vps in TRAJECTORIES.items()
]
HANNA_PREDS = [hanna_record(k, v, a) for k, (v, a) in HANNA_RUNS.items()]
RADIANS = {
    "1": [entry(["S", "A", "B"], math.pi, 0.0), entry(["A", "S"], math.pi, 0.0)],
    "2": [entry(["S", "G"], -0.06, 0.0)],
    "3": [entry(["S", "G"], 0.06, 0.0)],
    "4": [entry(["S", "G", "N"], math.pi, 0.0)],
}

#: (task, split, profile, data (a root, or evaluate's keywords), predictions, the submitter's line)
CASES: list[tuple[str, str, str, Callable[[Path], Any], Any, str]] = [
    (
        "r2r",
        "val",
        "r2r",
        r2r_root,
        preds({"1_0": ["S"]}),
        "preds.json: 2 of 3 episodes have no prediction (first: 1_1, 1_2); profile r2r requires "
        "all of them: this phase scores complete files only",
    ),
    (
        "touchdown",
        "dev",
        "touchdown",
        touchdown_root,
        [{"route_id": k, "trajectory": RUNS[k]} for k in (1, 2)],
        "preds.json: 1 of 3 routes have no prediction (first: 3); profile touchdown requires all "
        "of them: this phase scores complete files only",
    ),
    (
        "touchdown-sdr",
        "dev",
        "touchdown",
        touchdown_root,
        [SDR[0], SDR[2]],
        "preds.json: 1 of 3 SDR examples (route and pre/main/post panorama with a known location) "
        "have no prediction (first: 1_post); profile touchdown requires all of them: this phase "
        "scores complete files only",
    ),
    (
        "r2r",
        "val",
        "r2r",
        r2r_root,
        preds({"1_0": ["S", "B"], "1_1": ["S"], "1_2": ["S"]}),
        'preds.json: instr_id "1_0": trajectory[1]: viewpoint B is not a neighbour of S in scan '
        "sq (the official scorer rejects jumps)",
    ),
    (
        "r4r",
        "val_seen",
        "r4r-google",
        r2r_root,
        preds({"1_0": ["S", "S", "A"], "1_1": ["S"], "1_2": ["S"]}),
        'preds.json: instr_id "1_0": trajectory: repeats a viewpoint (1 time(s)); profile '
        "r4r-google reproduces a CLS that looks every step up as a graph edge and cannot score it",
    ),
    (
        "r2r",
        "val",
        "r2r",
        r2r_root,
        [*preds({k: ["S"] for k in ALL}), {"SR": 0.5, "n": 3}],
        "preds.json: record 3: missing field 'instr_id'; the record looks like a summary (fields "
        "SR, n); remove that record from the file",
    ),
    (
        "r2r-ce",
        "val",
        "vlnce-strict",
        vlnce_split,
        CE_PREDS,
        'preds.json: episode_id "1": [2].position: moves 707.11 m from the previous position: one '
        "action moves at most 1 m (profile vlnce-strict refuses such moves)",
    ),
    (
        "hanna",
        "val_unseen",
        "hanna",
        hanna_root,
        [
            {**{k: r[k] for k in ("instr_id", "agent_ask")}, "trajectory": r["agent_pose"]}
            for r in HANNA_PREDS
        ],
        "preds.json: no record has the field 'agent_pose' (the executed poses); the records have "
        "'agent_ask', 'instr_id', 'trajectory'",
    ),
    (
        "ndh",
        "val_seen",
        "cvdn",
        cvdn_root,
        [{"inst_idx": r["inst_idx"], "traj": r["trajectory"]} for r in NDH_PREDS],
        "preds.json: no record has the field 'trajectory' or 'path' or 'pred_path' (the executed "
        "viewpoints); the records have 'inst_idx', 'traj'",
    ),
]

#: (task, split, profile, data, predictions, task options, the warnings the submitter sees)
SCORED: list[tuple[str, str, str, Callable[[Path], Any], Any, dict[str, str], list[str]]] = [
    (
        "r2r-ce",
        "val",
        "vlnce",
        vlnce_split,
        CE_PREDS,
        {},
        [
            "1 move(s) in 1 episode(s) are longer than one action allows (1 m, profile vlnce): "
            'episode_id "1" [2].position moves 707.11 m; TL counts each as a straight line',
            "1 of 2 episode(s) end where the goal is unreachable (an infinite distance: off the "
            "map, out of the navigable area, or a goal the distance source cannot reach): SR, SPL "
            "and sDTW count them as failures (OSR keeps a closer approach on the way); NE is the "
            "mean over the 1 reachable episode(s) only (the count is shown beside it): compare NE "
            "only between runs with the same count (policy 'failure')",
            "nDTW and sDTW use fastdtw radius 1 (compiled variant of the package), VLN-CE's "
            "default: an APPROXIMATE DTW that can exceed the exact one (nDTW too low)",
        ],
    ),
    (
        "ndh",
        "val_seen",
        "cvdn",
        cvdn_root,
        NDH_PREDS,
        {},
        [
            "scored against planner_path (the official scorer's default); the published NDH "
            "baselines report trusted_path"
        ],
    ),
    (
        "soon",
        "val",
        "soon",
        soon_root,
        soon_preds(RADIANS),
        {},
        [
            "4 predicted direction(s) lie outside [0, 1]: the official scorer expects normalised "
            "angles (heading/2π, (elevation+π)/2π)"
        ],
    ),
]


def _data(tmp: Path, make: Callable[[Path], Any]) -> dict[str, Any]:
    made = make(tmp / "root")
    return made if isinstance(made, dict) else {"root": made}


def _refusal(tmp: Path, case: tuple[Any, ...]) -> InvalidInputError:
    task, split, profile, make, body, _ = case
    data = _data(tmp, make)
    with pytest.raises(InvalidInputError) as exc:
        evaluate(task, split, write_json(tmp / "p.json", body), profile=profile, **data)
    return exc.value


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_a_hint_is_rewritten_on_the_library_s_own_message(
    case: tuple[Any, ...], tmp_path: Path
) -> None:
    problems = _refusal(tmp_path, case).problems
    lines = render_problems(
        problems,
        source=str(tmp_path / "p.json"),
        display_name="preds.json",
    )
    assert lines == [case[-1]]


@pytest.mark.parametrize("case", SCORED, ids=[c[0] for c in SCORED])
def test_the_summary_s_warnings_say_what_the_phase_does(
    case: tuple[Any, ...], tmp_path: Path
) -> None:
    task, split, profile, make, body, options, shown = case
    path = write_json(tmp_path / "p.json", body)
    result = evaluate(task, split, path, profile=profile, options=options, **_data(tmp_path, make))
    assert all("--" in w for w in result.warnings)  # the library's own text names an option
    summary = _sanitise(result.to_dict(), "preds.json", str(path))
    assert summary["warnings"] == shown


def test_a_reason_for_a_missing_metric_is_put_for_the_phase() -> None:
    from vlneval.tasks.vlnce.summary import NO_DISTANCE

    summary = _sanitise({"unavailable": {"NE": NO_DISTANCE}}, "preds.json", "/srv/p.json")
    assert summary["unavailable"] == {
        "NE": "no distance source: the predictions carry no distance_to_goal; carry it per step "
        "(as a Habitat run measures it)"
    }


def test_a_note_that_only_spells_an_option_goes_alone(tmp_path: Path) -> None:
    with pytest.raises(VLNEvalError) as exc:
        evaluate("soon", "val", write_json(tmp_path / "p.json", soon_preds()),
                 root=soon_root(tmp_path / "root"), trajectory_key="path")  # fmt: skip
    assert str(exc.value).endswith("(--trajectory-key does not apply)")
    said = exc.value.args[0]  # the message as raised, its hints marked
    assert for_phase(said) == "SOON predictions keep their trajectories in 'trajectory'"


def test_an_option_that_is_the_message_s_subject_is_kept(tmp_path: Path) -> None:
    text = "--trajectory-key instr_id names the id field; give the field that holds the trajectory"
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", write_json(tmp_path / "p.json", preds({"1_0": ["S"]})),
                 root=r2r_root(tmp_path / "root"), trajectory_key="instr_id")  # fmt: skip
    [problem] = exc.value.problems
    assert problem.message.startswith(text)
    assert for_phase(problem.message) == problem.message


def test_every_phase_text_answers_a_library_message(tmp_path: Path) -> None:
    found = [p for k, case in enumerate(CASES) for p in _refusal(tmp_path / str(k), case).problems]
    said = [str(p) for p in found]
    assert all("--" in m for m in said)
    shown = [str(Problem(p.source, for_phase(p.message), p.episode, p.field)) for p in found]
    assert not any("--" in m for m in shown)
    assert [sum(t in m for m in shown) for t in PHASE_TEXT.values()] == [3, 1]
    assert said[5].endswith("; pass --skip-summary-records to skip it")  # the R2R suggestion


def test_an_aside_that_spells_an_option_keeps_the_rest(tmp_path: Path) -> None:
    body = [*preds({k: ["S"] for k in ALL}), {"SR": 0.5, "n": 3}]
    path = write_json(tmp_path / "p.json", body)
    result = evaluate("r2r", "val", path, root=r2r_root(tmp_path / "root"), skip_summaries=True)
    assert result.warnings[0].endswith("skipped (--skip-summary-records; record 3)")
    assert _sanitise(result.to_dict(), "preds.json", str(path))["warnings"] == [
        "1 record(s) without 'instr_id' that look like a summary were skipped (record 3)",
        "profile r2r scores instructions k < 3 only, as the official script does; left out: 1_3",
    ]


#: The command-line options the library's messages name; a hint naming one a phase has no
#: text for (``PHASE_TEXT``) is dropped.
SCORER_OPTIONS = frozenset({
    *PHASE_TEXT, "--all-errors", "--angle-units", "--data-root", "--data-version", "--distance",
    "--episodes", "--graphs", "--gt-file", "--json", "--path-type", "--per-episode", "--profile",
    "--task", "--trajectory-key", "--unreachable", "--bboxes", "--show-progress", "--split",
    "--seed", "--step-limit",  # a run's seed check and the report's step limit: never a phase's
})  # fmt: skip


def test_every_option_the_library_names_is_one_the_rule_knows() -> None:
    """Only the scorer's own options are hints: the list the server knows stays in step with
    every option the library names, and with the option of every hint it marks (``hint(...)``)."""
    import re

    from vlneval.tasks import TASKS, get_task

    src = Path(__file__).resolve().parents[2] / "src" / "vlneval"
    named, hinted_options = set(), set()
    for part in ("tasks", "io", "evaluation", "metrics", "graph", "diagnostics", "continuous"):
        for path in (src / part).rglob("*.py"):
            text = path.read_text()
            named |= set(re.findall(r"""(?<=["' (])--[a-z][a-z0-9-]+""", text))
            calls = re.findall(r'\bhint\(\s*("--[a-z0-9-]+"|[^,)]*)', text)  # each hint's option
            assert all(c.startswith('"') for c in calls), (path, calls)  # written out, to check
            hinted_options |= {c.strip('"') for c in calls}
    assert hinted_options >= set(PHASE_TEXT)  # every phase text answers a hint
    assert hinted_options - SCORER_OPTIONS == set()
    named |= set(re.findall(r"""(?<=["' (])--[a-z][a-z0-9-]+""", (src / "errors.py").read_text()))
    named |= {
        o.flag for name in TASKS.names() for o in get_task(name).options
    }  # built in f-strings
    assert named - SCORER_OPTIONS == set()


def test_the_submitters_own_words_are_left_as_written() -> None:
    """A ``--word`` the submitter wrote (an id, a field name) is not an option of the scorer."""
    ignored = "2 prediction(s) with ids not in the split were ignored (first: --x, y)"
    assert for_phase(ignored) == ignored
    record = hinted(
        "a record (fields a --subsetx b)",
        hint("--skip-summary-records", "pass --skip-summary-records to skip it"),
    )
    assert for_phase(record) == "a record (fields a --subsetx b); remove that record from the file"


def test_a_submitters_text_that_looks_like_an_option_is_left_as_written(tmp_path: Path) -> None:
    """Only the hints the library marked change: a summary record whose field is named like
    an option is quoted as the submitter wrote it."""
    body = [*preds({k: ["S"] for k in ALL}), {"--subset": 0.5, "--profile r4r": 1}]
    problems = _refusal(tmp_path, ("r2r", "val", "r2r", r2r_root, body, "")).problems
    lines = render_problems(problems, source=str(tmp_path / "p.json"), display_name="preds.json")
    assert lines == [
        "preds.json: record 3: missing field 'instr_id'; the record looks like a summary (fields "
        "--profile r4r, --subset); remove that record from the file"
    ]


def test_quoted_text_full_of_options_costs_a_bounded_pass() -> None:
    """Only the marked hint is rewritten, in one pass: text the submitter controls, however
    full of options, cannot make the rewrite costly; the message keeps its words."""
    noise = "))" + " --subset" * 4000
    message = hinted(
        f"the record looks like a summary (fields {noise})",
        hint("--skip-summary-records", "pass --skip-summary-records"),
    )
    assert for_phase(message) == message.replace(
        "; pass --skip-summary-records", "; remove that record from the file"
    )


def test_a_summary_records_field_names_are_clipped() -> None:
    """A 16 KB key is quoted clipped, as every submitted string is."""
    from vlneval.tasks.common.summary_records import summary_problem

    text = summary_problem({"k" * 16_000: 1.0}, "instr_id")
    assert text == (
        f"missing field 'instr_id'; the record looks like a summary (fields {'k' * 40}… "
        "(16,000 characters)); pass --skip-summary-records to skip it"
    )


def test_a_clause_goes_with_a_spelling_only_when_it_gives_the_same_option() -> None:
    """Only the clause the library marked goes: a spelling ``(--opt value)``, not the clause
    before it that merely mentions the word."""
    said = hinted(
        "the file is odd; read by the profile",
        hint("--profile", "--profile r4r", aside=True, spelt=True),
    )
    assert said == "the file is odd; read by the profile (--profile r4r)"
    assert for_phase(said) == "the file is odd; read by the profile"


def test_every_channel_of_a_summary_is_shown_alike() -> None:
    """Warnings, n/a reasons and check details: the upload named as the submitter named it,
    each hint put as the phase has it."""

    def aside(option: str, words: str) -> str:
        return hint(option, words, aside=True)

    summary = {
        "warnings": [
            hinted("/srv/p.json: 2 of 3 episodes have no prediction",
                   aside("--subset", "use --subset to score"))
        ],
        "unavailable": {
            "NE": hinted("/srv/p.json: no distance", aside("--distance", "--distance twin computes it"))
        },
        "checks": [
            {"name": "c", "detail": hinted("/srv/p.json: odd", aside("--profile", "--profile r4r scores it"))}
        ],
    }  # fmt: skip
    assert summary["warnings"] == [
        "/srv/p.json: 2 of 3 episodes have no prediction (use --subset to score)"
    ]
    out = _sanitise(summary, "preds.json", "/srv/p.json")
    assert out["warnings"] == [
        "preds.json: 2 of 3 episodes have no prediction (this phase scores complete files only)"
    ]
    assert out["unavailable"] == {"NE": "preds.json: no distance"}
    assert out["checks"] == [{"name": "c", "detail": "preds.json: odd"}]


def test_r2r_ce_s_advice_for_an_r2r_file_is_a_hint_a_phase_drops() -> None:
    from vlneval.tasks.vlnce.predictions import _not_ce

    said = _not_ce([{"instr_id": "1_0", "trajectory": []}], "r2r-ce")
    assert "(an R2R predictions file? score it with --task r2r), not a VLN-CE form" in said
    shown = for_phase(said)
    assert "--task" not in shown
    assert shown.startswith(
        "a list of 1 records with fields instr_id, trajectory (an R2R predictions file?), "
        "not a VLN-CE form: r2r-ce expects one JSON object"
    )


def test_touchdown_s_profile_advice_for_a_jump_is_a_hint_a_phase_drops(tmp_path: Path) -> None:
    """The phase fixes its profile: the tip to score jumps with touchdown-vlnt goes, as R2R's."""
    runs = [{"route_id": k, "trajectory": RUNS[k]} for k in (2, 3)]
    body = [{"route_id": 1, "trajectory": ["p0", "p2"]}, *runs]
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown", "dev", write_json(tmp_path / "p.json", body),
                 root=touchdown_root(tmp_path / "root"))  # fmt: skip
    [problem] = exc.value.problems
    assert problem.message.endswith(
        "(a move must follow a street-graph link; profile touchdown-vlnt scores such jumps "
        "without a check)"
    )
    assert for_phase(problem.message) == (
        "panorama p2 is not linked to p0 (a move must follow a street-graph link)"
    )


def test_a_warning_naming_a_server_file_goes_to_the_log_not_the_submitter(caplog) -> None:
    """REVERIE v2 scored with the v1 boxes names where the boxes lie: organiser advice."""
    import logging

    caplog.set_level(logging.INFO)
    boxes = (
        "no v2 object boxes found (looked for data_v2/BBoxes.json, data_v2/BBox/, "
        "data_v2/BBox.tar.gz); scoring v2 episodes with the v1 boxes at /srv/data/reverie/BBox.tar.gz. "
        "The v2 boxes are distributed on Google Drive only: put them there to score v2 exactly"
    )
    summary = {
        "warnings": [boxes, "/srv/up/p.json: 2 ids not in the split were ignored (first: a/b, c)"],
        "unavailable": {"RGS": "no boxes in /srv/data/reverie/BBox/ (SDR@40/80)"},
    }
    out = _sanitise(summary, "preds.json", "/srv/up/p.json", ServerPaths(["/srv/data", "/srv/up"]))
    assert out["warnings"] == ["preds.json: 2 ids not in the split were ignored (first: a/b, c)"]
    assert out["unavailable"] == {"RGS": "no boxes in [server file] (SDR@40/80)"}
    assert boxes in caplog.text


def test_a_refusal_names_no_server_file() -> None:
    p = Problem("/tmp/pub-x1/dev.json", "route 3: bad line", None, None)
    paths = ServerPaths(["/tmp/pub-x1"])
    assert render_problems(
        [p], source="/srv/up/p.json", display_name="preds.json", paths=paths
    ) == ["[server file]: route 3: bad line"]


def test_an_address_is_no_server_file() -> None:
    """'://' starts no path: an address in a message (the page of a data set) stays whole,
    the server's own file beside it does not."""
    text = (
        "get the v2 boxes from https://github.com/x/y or http://a.org/b/c.json, not /srv/d/e.json"
    )
    p = Problem("/srv/up/p.json", text, None, None)
    paths = ServerPaths(["/srv/d"])
    assert render_problems(
        [p], source="/srv/up/p.json", display_name="preds.json", paths=paths
    ) == [
        "preds.json: get the v2 boxes from https://github.com/x/y or http://a.org/b/c.json, "
        "not [server file]"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bad label in x:/srv/data/labels.json", "bad label in x:[server file]"),
        ("read file:/srv/data/labels.json: no", "read file:[server file]: no"),
        ("read file:///srv/data/labels.json", "read file://[server file]"),
        ("C:/srv/d/e.json and (/srv/f/g.json)", "C:[server file] and ([server file])"),
        (
            "see https://github.com/x/y.json, http://a.org:80/b/c.json or ftp://h/a/b",
            "see https://github.com/x/y.json, http://a.org:80/b/c.json or ftp://h/a/b",
        ),
        ("SDR@40/80 at 12:30/45, data_v2/BBox/", "SDR@40/80 at 12:30/45, data_v2/BBox/"),
    ],
)
def test_a_server_path_after_a_colon_is_redacted_and_an_address_stays_whole(
    text: str, expected: str
) -> None:
    assert ServerPaths(["/srv/data", "/srv/d", "/srv/f"]).redact(text) == expected


def test_the_problems_not_shown_are_counted_by_the_upload_s_name() -> None:
    many = [Problem("/srv/up/p.json", f"record {k}: bad", None, None) for k in range(52)]
    lines = render_problems(many, source="/srv/up/p.json", display_name="preds.json")
    assert lines[-2:] == ["preds.json: record 49: bad", "preds.json: 2 more problems not shown"]
    server = [*many[:50], Problem("/tmp/pub-x1/dev.json", "bad line", None, None)]
    lines = render_problems(
        server,
        source="/srv/up/p.json",
        display_name="preds.json",
        paths=ServerPaths(["/tmp/pub-x1"]),
    )
    assert lines[-1] == "[server file]: 1 more problem not shown"
