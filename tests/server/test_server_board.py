"""Leaderboard controls, sections, intervals, rounding and the export (API and admin CLI).

On SQLite and PostgreSQL (the ``server`` fixture).
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from sqlalchemy import select

from tests.server.helpers import DEMO_PREDICTIONS, encode, stop_predictions
from vlneval.cli.main import main
from vlneval.evaluation import evaluate
from vlneval.server.models import Result
from vlneval.server.services import admin
from vlneval.server.services.entries import moderate
from vlneval.server.services.submissions import Refused
from vlneval.tasks.profiles import get_profile

BOARD = "/api/v1/challenges/demo/phases/val/leaderboard"
ENTRY = "/api/v1/challenges/demo/phases/val/entry"
GOOD_SPL = round(evaluate("demo", None, DEMO_PREDICTIONS).metrics["SPL"], 4)  # 0.4708
METRICS = list(get_profile("demo").metrics)


def _scored(server, token: str, data: bytes, **form) -> str:
    r = server.submit(token, data, **form)
    assert r.status_code == 202, r.text
    server.work()
    return r.json()["id"]


def _board(server, **params):
    return server.client.get(BOARD, params=params).json()


def _rows(server) -> list[tuple]:
    return [(e["section"], e["rank"], e["team"], e["method"]) for e in _board(server)["entries"]]


def _three(server) -> tuple[str, str, str]:
    good = _scored(server, server.alpha, DEMO_PREDICTIONS.read_bytes(), method="good")
    test = _scored(server, server.alpha, encode(stop_predictions()), method="throwaway")
    beta = _scored(server, server.beta, encode(stop_predictions()), method="stop")
    return good, test, beta


def test_a_team_picks_its_entry_or_none(server):
    good, test, _ = _three(server)
    assert _rows(server) == [("ranked", 1, "alpha", "good"), ("ranked", 2, "beta", "stop")]
    auth = server.auth(server.alpha)
    r = server.client.put(ENTRY, json={"entry": test}, headers=auth)
    assert r.status_code == 200 and r.json()["entry"] == test
    # alpha's pick is its throwaway: it ties beta, and beta submitted later
    assert _rows(server) == [("ranked", 1, "alpha", "throwaway"), ("ranked", 2, "beta", "stop")]
    assert server.client.put(ENTRY, json={"entry": "none"}, headers=auth).status_code == 200
    assert _rows(server) == [("ranked", 1, "beta", "stop")]
    assert server.client.put(ENTRY, json={"entry": "best"}, headers=auth).status_code == 200
    assert _rows(server)[0] == ("ranked", 1, "alpha", "good")


def test_a_team_cannot_pick_anothers_submission_or_another_phase(server):
    _, _, beta = _three(server)
    auth = server.auth(server.alpha)
    assert server.client.put(ENTRY, json={"entry": beta}, headers=auth).status_code == 404
    admin.create_phase(server.db, "demo", "other", task="demo")
    other = _scored(server, server.alpha, DEMO_PREDICTIONS.read_bytes(), phase="other")
    r = server.client.put(ENTRY, json={"entry": other}, headers=auth)
    assert r.status_code == 409 and "another phase" in r.json()["detail"]
    assert server.client.put(ENTRY, json={"entry": "x"}, headers=auth).status_code == 422
    assert server.client.put(ENTRY, json={"entry": "best"}).status_code == 401


def test_a_team_hides_shows_and_withdraws_entries(server):
    good, test, _ = _three(server)
    auth = server.auth(server.alpha)
    r = server.client.post(f"/api/v1/submissions/{good}/hide", headers=auth)
    assert r.status_code == 200 and r.json()["board"]["hidden"] is True
    assert _rows(server) == [("ranked", 1, "alpha", "throwaway"), ("ranked", 2, "beta", "stop")]
    server.client.post(f"/api/v1/submissions/{good}/show", headers=auth)
    assert _rows(server)[0][3] == "good"
    r = server.client.post(f"/api/v1/submissions/{good}/withdraw", headers=auth)
    assert r.json()["board"]["withdrawn"] is True
    again = server.client.post(f"/api/v1/submissions/{good}/show", headers=auth)
    assert again.status_code == 409 and "cannot be undone" in again.json()["detail"]
    assert server.client.put(ENTRY, json={"entry": good}, headers=auth).status_code == 409
    assert [r[3] for r in _rows(server)] == ["throwaway", "stop"]
    theirs = server.client.post(
        f"/api/v1/submissions/{test}/hide", headers=server.auth(server.beta)
    )
    assert theirs.status_code == 404


def test_a_phase_can_show_only_picked_entries(server):
    good, _, _ = _three(server)
    admin.update_phase(server.db, "demo", "val", entry_rule="chosen")
    assert _rows(server) == []
    server.client.put(ENTRY, json={"entry": good}, headers=server.auth(server.alpha))
    assert _rows(server) == [("ranked", 1, "alpha", "good")]
    with pytest.raises(admin.UnknownNameError):
        admin.update_phase(server.db, "demo", "val", entry_rule="all")


def test_organisers_hide_delete_flag_and_pin_baselines(server):
    good, test, beta = _three(server)
    with pytest.raises(Refused, match="give a reason"):
        moderate(server.db, good, "hide")
    assert moderate(server.db, beta, "baseline") == "shown, baseline"
    # the baseline keeps its place by value but takes no rank; alpha is first and only ranked
    assert _rows(server) == [("ranked", 1, "alpha", "good"), ("baseline", None, "beta", "stop")]
    moderate(server.db, good, "flag", "the file was made with the test labels")
    entry = _board(server)["entries"][0]
    assert entry["flag"] == "the file was made with the test labels" and entry["rank"] == 1
    state = moderate(server.db, good, "hide", "under review")
    assert state == "hidden by the organisers: under review"
    own = server.get(good, server.alpha).json()["board"]
    assert own["moderation"] == "hidden" and own["moderation_reason"] == "under review"
    assert _rows(server)[0] == ("ranked", 1, "alpha", "throwaway")
    moderate(server.db, test, "delete", "duplicate account")
    assert _rows(server) == [("baseline", None, "beta", "stop")]
    r = server.client.put(ENTRY, json={"entry": test}, headers=server.auth(server.alpha))
    assert r.status_code == 409 and "deleted by the organisers" in r.json()["detail"]
    moderate(server.db, good, "show")
    assert _rows(server)[0] == ("ranked", 1, "alpha", "good")


def test_privileged_entries_are_ranked_apart(server):
    oracle = json.dumps({"privileged": "ground-truth goal viewpoint"})
    _scored(server, server.alpha, DEMO_PREDICTIONS.read_bytes(), method="oracle", protocol=oracle)
    honest = json.dumps({"privileged": "none"})
    _scored(server, server.beta, encode(stop_predictions()), method="stop", protocol=honest)
    board = _board(server)["entries"]
    assert [(e["section"], e["rank"], e["team"], e["privileged"]) for e in board] == [
        ("ranked", 1, "beta", False),
        ("privileged", 1, "alpha", True),
    ]
    page = server.client.get("/c/demo/val").text
    main_table, rest = page.split('id="privileged"', 1)
    assert "oracle" not in main_table.split('id="leaderboard"', 1)[1]
    assert "oracle" in rest and "Entries that use privileged information" in page


def _decimals(x: float) -> int:
    text = repr(x)
    return len(text.split(".", 1)[1]) if "." in text and "e" not in text else 0


def test_intervals_are_stored_as_bounds_and_shown_rounded(server):
    uid = _scored(server, server.alpha, DEMO_PREDICTIONS.read_bytes())
    with server.db.read() as s:
        res = s.scalars(select(Result)).one()
        stored = dict(res.intervals)
    assert set(stored) == set(METRICS)
    assert all(len(pair) == 2 for pair in stored.values())  # bounds only, never the rows
    low, high = stored["SPL"]
    assert low < res.metrics["SPL"] < high and _decimals(low) > 4  # full precision kept
    entry = _board(server)["entries"][0]
    assert entry["intervals"]["SPL"] == [round(low, 4), round(high, 4)]
    assert entry["intervals"]["NE"] == [round(v, 2) for v in stored["NE"]]
    assert entry["primary_value"] == GOOD_SPL
    for label, value in entry["metrics"].items():
        assert _decimals(value) <= (4 if label != "TL" and label != "NE" else 2), label
    own = server.get(uid, server.alpha).json()["result"]
    assert own["intervals"] == entry["intervals"]  # the team's own view: rounded as the board
    page = server.client.get("/c/demo/val").text
    assert f"{100 * round(low, 4):.2f}–{100 * round(high, 4):.2f}" in page


def _cli(capsys, server, fmt: str) -> str:
    args = ["admin", "--data-dir", str(server.cfg.data_dir), "--database-url"]
    args += [server.cfg.database_url, "leaderboard", "--challenge", "demo", "--phase", "val"]
    assert main([*args, "--format", fmt]) == 0
    return capsys.readouterr().out


def test_export_in_three_formats_from_the_cli_and_the_api(server, capsys):
    _three(server)
    pinned = _scored(server, server.beta, DEMO_PREDICTIONS.read_bytes(), method='=HYPERLINK("x")')
    moderate(server.db, pinned, "baseline")
    as_json = json.loads(_cli(capsys, server, "json"))
    assert isinstance(as_json, list) and len(as_json) == 3
    assert [(e["section"], e["rank"], e["team"]) for e in as_json] == [
        ("ranked", 1, "alpha"), ("baseline", None, "beta"), ("ranked", 2, "beta"),
    ]  # fmt: skip
    for e in as_json:
        assert list(e["metrics"]) == METRICS and set(e["intervals"]) == set(METRICS)
    assert as_json[0]["metrics"]["SPL"] == GOOD_SPL
    api_json = server.client.get(BOARD, params={"format": "json"})
    assert api_json.status_code == 200 and api_json.json() == as_json
    text = _cli(capsys, server, "csv")
    api_csv = server.client.get(BOARD, params={"format": "csv"})
    assert api_csv.headers["content-type"].startswith("text/csv") and api_csv.text == text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 3 and all(m in rows[0] and f"{m}_low" in rows[0] for m in METRICS)
    assert rows[0]["SPL"] == str(GOOD_SPL) and rows[0]["team"] == "alpha"
    assert rows[1]["method"] == '\'=HYPERLINK("x")'  # not a formula in a spreadsheet
    table = _cli(capsys, server, "table")
    header = table.splitlines()[0]
    assert all(m in header for m in METRICS)
    assert "47.08" in table.splitlines()[1] and "baseline" in table.splitlines()[2]


def test_private_export_shows_the_callers_own_entries_only(server):
    admin.update_phase(server.db, "demo", "val", leaderboard_public=False)
    _three(server)
    assert server.client.get(BOARD, params={"format": "csv"}).status_code == 403
    mine = server.client.get(BOARD, params={"format": "json"}, headers=server.auth(server.beta))
    assert [(e["team"], e["rank"]) for e in mine.json()] == [("beta", None)]


def test_no_public_response_carries_a_full_double(server):
    _three(server)
    texts = [server.client.get(BOARD).text, server.client.get(BOARD + "?format=json").text]
    texts.append(server.client.get("/c/demo/val").text)
    full = repr(evaluate("demo", None, DEMO_PREDICTIONS).metrics["SPL"])
    assert all(full not in t and full[:8] not in t for t in texts)


def test_cli_format_choices_are_the_export_formats() -> None:
    """``admin leaderboard --format`` offers what the export writes (one list), and building
    the command line does not import the server's dependencies."""
    import subprocess
    import sys

    code = """
import argparse, sys
from vlneval.cli.main import build_parser

def sub(p, name):
    acts = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return acts[0].choices[name]

lb = sub(sub(build_parser(), "admin"), "leaderboard")
print(next(a.choices for a in lb._actions if a.dest == "format"), "sqlalchemy" in sys.modules)
"""
    from vlneval.server.services.export import FORMATS

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == f"{FORMATS!r} False"
    assert FORMATS == ("table", "csv", "json")
