"""A repeated route id in a Touchdown JSON-lines file names the line of its first repeat and
the line of its first record (blank lines counted, as an editor numbers them); a JSON list,
which has no lines, names the route alone, as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.touchdown.fixture import ROUTES, RUNS, SDR, make_root, route
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _lines(path: Path, records: list[Any | None]) -> Path:
    """``records`` as JSON lines, a None as a blank line."""
    path.write_text("\n".join("" if r is None else json.dumps(r) for r in records) + "\n")
    return path


def _problems(tmp: Path, preds: Path, task: str = "touchdown", **kw: Any) -> list[str]:
    with pytest.raises(InvalidInputError) as exc:
        evaluate(task, "dev", preds, root=kw.pop("root", None) or make_root(tmp / "root"), **kw)
    return [str(p) for p in exc.value.problems]


def test_a_repeated_route_names_its_lines(tmp_path: Path) -> None:
    runs = [{"route_id": k, "trajectory": v} for k, v in RUNS.items()]
    preds = _lines(tmp_path / "p.jsonl", [runs[0], None, runs[1], runs[0], runs[2], runs[0]])
    assert _problems(tmp_path, preds) == [
        f"{preds}: line 4: route_id 1: duplicate id: the file has 3 predictions for it "
        "(first on line 1)"
    ]


def test_a_repeated_route_of_a_json_list_names_no_line(tmp_path: Path) -> None:
    runs = [{"route_id": k, "trajectory": v} for k, v in RUNS.items()]
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps([*runs, runs[1]]))
    assert _problems(tmp_path, preds) == [
        f"{preds}: route_id 2: duplicate id: the file has two predictions for it"
    ]


def test_a_repeated_sdr_example_names_its_lines(tmp_path: Path) -> None:
    preds = _lines(tmp_path / "p.jsonl", [None, SDR[0], SDR[1], None, SDR[2], SDR[1]])
    assert _problems(tmp_path, preds, task="touchdown-sdr") == [
        f'{preds}: line 6: SDR "1_post": duplicate id: the file has two predictions for it '
        "(first on line 3)"
    ]


def test_a_route_file_s_repeated_route_names_its_lines(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_root(root)
    dev = next((root / "touchdown").rglob("dev.json"))
    _lines(dev, [ROUTES[0], ROUTES[1], None, ROUTES[2], route(2, ["p0"])])
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps([{"route_id": k, "trajectory": v} for k, v in RUNS.items()]))
    assert _problems(tmp_path, preds, root=root) == [
        f"{dev}: line 5: duplicate route_id 2 (also line 2)"
    ]
