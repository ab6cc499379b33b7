"""``vlneval score --predictions F1 F2 ...``: many checkpoints in one process."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from vlneval.cli.main import main
from vlneval.tasks.common.root import demo_root

DEMO = demo_root() / "demo" / "predictions_val.json"


def _checkpoints(tmp: Path) -> list[Path]:
    good = [shutil.copy(DEMO, tmp / f"iter_{k}.json") for k in (100, 200)]
    stop = tmp / "iter_300.json"  # every agent stays where it starts: a different score
    records = json.loads(DEMO.read_text())
    for r in records:
        r["trajectory"] = r["trajectory"][:1]
    stop.write_text(json.dumps(records))
    return [Path(good[0]), stop, Path(good[1])]


def test_json_list_in_the_given_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # one block of columns, whatever the worker's terminal
    files = _checkpoints(tmp_path)
    out = tmp_path / "all.json"
    assert (
        main(["score", "--task", "demo", "--predictions", *map(str, files), "--json", str(out)])
        == 0
    )
    summaries = json.loads(out.read_text())
    assert [s["predictions"] for s in summaries] == [str(f) for f in files]
    single = tmp_path / "one.json"
    assert (
        main(
            [
                "score",
                "--task",
                "demo",
                "--predictions",
                str(files[1]),
                "--json",
                str(single),
                "--quiet",
            ]
        )
        == 0
    )
    assert summaries[1]["metrics"] == json.loads(single.read_text())["metrics"]
    assert summaries[0]["metrics"] == summaries[2]["metrics"] != summaries[1]["metrics"]
    table = capsys.readouterr().out
    lines = [line for line in table.splitlines() if "iter_" in line]
    assert [Path(f).name in line for f, line in zip(files, lines, strict=True)] == [True] * 3


def test_a_bad_file_is_reported_and_the_others_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _checkpoints(tmp_path)
    bad = tmp_path / "broken.json"
    bad.write_text('[{"instr_id": 1')
    missing = tmp_path / "nowhere.json"
    out, rows = tmp_path / "all.json", tmp_path / "rows.csv"
    argv = ["score", "--task", "demo", "--predictions", str(files[0]), str(bad), str(missing),
            str(files[1]), "--json", str(out), "--per-episode", str(rows)]  # fmt: skip
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert str(bad) in captured.err and str(missing) in captured.err
    assert "2 of 4 predictions files could not be scored" in captured.err
    assert captured.err.count(str(missing)) == 1  # named once: "error: FILE: no such file"
    summaries = json.loads(out.read_text())  # one entry per file given, in the order given
    assert [s["predictions"] for s in summaries] == [str(files[0]), str(bad), str(missing),
                                                     str(files[1])]  # fmt: skip
    assert summaries[1] == {
        "predictions": str(bad),
        "errors": [f"{bad}: not valid JSON: Expecting ',' delimiter at line 1, column 16"],
    }
    assert summaries[2] == {"predictions": str(missing), "errors": [f"{missing}: no such file"]}
    assert "metrics" in summaries[0] and "metrics" in summaries[3]
    header, first = rows.read_text().splitlines()[:2]
    assert header.startswith("predictions,instr_id,scan,") and first.startswith(str(files[0]))
    assert "iter_100" in captured.out and "iter_300" in captured.out


def test_one_file_keeps_the_single_object(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert (
        main(["score", "--task", "demo", "--predictions", str(DEMO), "--json", str(out), "--quiet"])
        == 0
    )
    assert isinstance(json.loads(out.read_text()), dict)


def test_a_quoted_pattern_always_gives_a_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pattern vlneval expands itself (quoted for the shell) keeps the sweep's shapes
    whatever it matches: one file, a list of one entry and a ``predictions`` column; one bad
    file, its entry; none, a refusal naming the pattern."""
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    first = Path(shutil.copy(DEMO, ckpt / "iter_100.json"))
    out, rows = tmp_path / "all.json", tmp_path / "rows.csv"
    argv = ["score", "--task", "demo", "--predictions", str(ckpt / "*.json"), "--json", str(out),
            "--quiet"]  # fmt: skip
    assert main([*argv, "--per-episode", str(rows)]) == 0
    assert [s["predictions"] for s in json.loads(out.read_text())] == [str(first)]
    assert rows.read_text().startswith("predictions,instr_id,scan,")
    first.write_text("")
    assert main(argv) == 2
    assert json.loads(out.read_text()) == [
        {"predictions": str(first), "errors": [f"{first}: the file is empty"]}
    ]
    first.unlink()
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"error: --predictions {ckpt}/*.json: no file matches this pattern\n"
    )


def test_a_pattern_lists_checkpoints_by_the_number_in_their_name(tmp_path: Path) -> None:
    """``iter_20`` before ``iter_100`` (not as text); a name without a number keeps its place."""
    for name in ("iter_100", "best", "iter_20", "iter_3"):
        shutil.copy(DEMO, tmp_path / f"{name}.json")
    out = tmp_path / "all" / "summary.json"
    out.parent.mkdir()
    argv = ["score", "--task", "demo", "--predictions", str(tmp_path / "*.json"), "--json",
            str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    assert [Path(s["predictions"]).name for s in json.loads(out.read_text())] == [
        "best.json", "iter_3.json", "iter_20.json", "iter_100.json",
    ]  # fmt: skip


def test_a_rerun_never_reads_its_own_outputs_nor_overwrites_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _checkpoints(tmp_path)
    out = tmp_path / "all.json"
    argv = ["score", "--task", "demo", "--predictions", str(tmp_path / "*.json"), "--json",
            str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    assert main(argv) == 0  # all.json now matches the pattern: skipped, rewritten
    assert f"note: skipped {out}: the --json output of this command (written, not read)\n" in (
        capsys.readouterr().err
    )
    entries = json.loads(out.read_text())
    assert [e["predictions"] for e in entries] == [str(out), *sorted(map(str, files))]
    assert entries[0] == {"predictions": str(out),
                          "skipped": "the --json output of this command, not predictions"}  # fmt: skip
    one = files[0]
    before = one.read_text()
    assert main(["score", "--task", "demo", "--predictions", str(one), "--json", str(one)]) == 2
    assert capsys.readouterr().err.endswith(
        f"error: no predictions file left to score: {one}: the --json output of this command, "
        "not predictions\n"
    )
    assert one.read_text() == before


def test_an_earlier_summary_matched_by_a_pattern_is_skipped_and_named_when_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _checkpoints(tmp_path)
    one, old = tmp_path / "summary.json", tmp_path / "old_all.json"
    base = ["score", "--task", "demo", "--quiet", "--predictions"]
    assert main([*base, str(files[0]), "--json", str(one)]) == 0
    assert main([*base, *map(str, files), "--json", str(old)]) == 0
    capsys.readouterr()
    out = tmp_path / "new" / "all.json"
    out.parent.mkdir()
    assert main([*base, str(tmp_path / "*.json"), "--json", str(out)]) == 0
    why = "a summary written by `vlneval score --json`, not predictions"
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [f"note: skipped {old}: {why}", f"note: skipped {one}: {why}"]
    entries = json.loads(out.read_text())  # sorted: iter_100, iter_200, iter_300, old_all, summary
    assert [e.get("skipped") for e in entries] == [None, None, None, why, why]
    assert main([*base, str(one)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"hint: {why}"


def test_a_file_given_twice_is_scored_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _checkpoints(tmp_path)
    monkeypatch.chdir(tmp_path)
    out, rows = tmp_path / "all.json", tmp_path / "rows.csv"
    given = ["iter_300.json", "iter_100.json", "iter_300.json", "./iter_100.json"]
    argv = ["score", "--task", "demo", "--predictions", *given, "--json", str(out),
            "--per-episode", str(rows), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    assert capsys.readouterr().err.splitlines()[:2] == [
        "note: skipped iter_300.json: the same file as iter_300.json, given before (scored once)",
        "note: skipped ./iter_100.json: the same file as iter_100.json, given before (scored once)",
    ]
    entries = json.loads(out.read_text())
    assert [e["predictions"] for e in entries] == given
    assert ["metrics" in e for e in entries] == [True, True, False, False]
    assert entries[3]["skipped"] == "the same file as iter_100.json, given before (scored once)"
    named = [line.split(",")[0] for line in rows.read_text().splitlines()[1:]]
    assert sorted(set(named)) == ["iter_100.json", "iter_300.json"]
    assert named.count("iter_100.json") == named.count("iter_300.json") == len(named) // 2


def test_a_sweep_of_many_files_shows_its_progress_in_plain_lines_when_piped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [shutil.copy(DEMO, tmp_path / f"iter_{k:02d}.json") for k in range(10)]
    argv = ["score", "--task", "demo", "--predictions", *map(str, files)]
    assert main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("scoring: 0/10 files (0%), 0.0 files/s, 0:00 elapsed, ")
    assert re.fullmatch(r"scoring: 10/10 files \(100%\), [0-9.]+ files/s, 0:0\d elapsed, 0:00 left",
                        lines[1])  # fmt: skip
    assert main(argv[:-1]) == 0  # nine files, or --quiet: no progress
    assert "scoring" not in capsys.readouterr().err
    assert main([*argv, "--quiet"]) == 0
    assert "scoring" not in capsys.readouterr().err


def _long_paths(tmp: Path) -> list[Path]:
    """Eight checkpoints of four runs deep in long folders, each scoring differently (its
    agents stop after k + 1 positions)."""
    files = []
    for k in range(8):
        records = json.loads(DEMO.read_text())
        for r in records:
            r["trajectory"] = r["trajectory"][: k + 1]
        run = tmp / "experiments_on_the_cluster" / f"seq2seq_sample_imagenet_lr_1e-4_seed_{k // 2}"
        run.mkdir(parents=True, exist_ok=True)
        files.append(run / f"predictions_val_iter_{1000 * (k % 2 + 1)}.json")
        files[-1].write_text(json.dumps(records))
    return files


@pytest.mark.parametrize("width", [80, 160])
def test_long_paths_show_every_number(
    width: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows are named by the shortest suffix that tells them apart (their common folder
    once in the title), only names are clipped, and the table fits the terminal's width."""
    from vlneval.reports.terminal import metric_cell

    monkeypatch.setenv("COLUMNS", str(width))
    files = _long_paths(tmp_path)
    out = tmp_path / "all.json"
    argv = ["score", "--task", "demo", "--predictions", *map(str, files), "--json", str(out)]
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert all(len(line) <= width for line in table.splitlines()), table
    title, folder = table.splitlines()[0].strip(), str(tmp_path / "experiments_on_the_cluster")
    assert title.startswith("demo val · profile demo v1 · in ")
    if width == 80:  # too long: clipped in its middle
        assert len(title) == 80 and title.endswith("…" + folder[-39:])
    else:
        assert title.endswith(" · in " + folder)
    summaries = json.loads(out.read_text())
    for s in summaries:  # every value in full (the whole cell: no "…" cut into a number)
        for label in s["metrics"]:
            assert f" {metric_cell(s, label)} │" in table, (label, table)
    names = [line.split("│")[1].strip() for line in table.splitlines() if "iter_" in line]
    rows = names[:8]
    assert len(set(rows)) == 8
    iters = [f"iter_{1000 * (k % 2 + 1)}.json" for k in range(8)]
    if width == 160:  # the run's folder and the file: 4 characters too long, cut where alike
        run = "…seq_sample_imagenet_lr_1e-4_seed_{}/predictions_val_{}"
        assert rows == [run.format(k // 2, it) for k, it in enumerate(iters)]
    else:  # what all share is cut, what tells them apart kept
        assert rows == [f"…{k // 2}…_iter_{1000 * (k % 2 + 1)}.json" for k in range(8)]


def test_protocol_cards_matched_by_a_pattern_are_skipped_and_one_alone_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "seeds"
    runs.mkdir()
    for seed in (0, 1):
        out = runs / f"u{seed}.json"
        assert main(["run", "--task", "demo", "--agent", "random", "--seed", str(seed), "--out",
                     str(out), "--quiet"]) == 0  # fmt: skip
    mine = shutil.copy(DEMO, runs / "mine.protocol.json")  # predictions, whatever the name
    files = sorted(str(p) for p in runs.glob("*.json"))  # what seeds/*.json expands to
    capsys.readouterr()
    summary = tmp_path / "all.json"
    assert main(["score", "--task", "demo", "--predictions", *files, "--json", str(summary),
                 "--quiet"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        f"note: skipped 2 protocol cards of `vlneval run` (not predictions): {runs}/"
        "u0.protocol.json and 1 more"
    )
    entries = json.loads(summary.read_text())  # one per file given: zip(files, entries) lines up
    assert [s["predictions"] for s in entries] == files
    card_entry = {"skipped": "a protocol card of `vlneval run`, not predictions"}
    assert [e.get("skipped") for e in entries] == [None, None, card_entry["skipped"], None,
                                                    card_entry["skipped"]]  # fmt: skip
    assert entries[2] == {"predictions": str(runs / "u0.protocol.json"), **card_entry}
    assert [s["predictions"] for s in entries if "metrics" in s] == [
        str(mine), str(runs / "u0.json"), str(runs / "u1.json")
    ]  # fmt: skip
    card = str(runs / "u0.protocol.json")
    assert main(["score", "--task", "demo", "--predictions", card]) == 2
    assert capsys.readouterr().err == (
        f"error: {card}: the protocol card `vlneval run` writes beside its predictions "
        f"({runs}/u0.json), not predictions\n"
    )
    assert main(["validate", "--task", "demo", "--predictions", card]) == 2
    assert capsys.readouterr().err.startswith(f"error: {card}: the protocol card ")
    cards = [card, str(runs / "u1.protocol.json")]
    assert main(["score", "--task", "demo", "--predictions", *cards]) == 2
    assert capsys.readouterr().err == (
        f"error: the 2 files given are protocol cards of `vlneval run`, not predictions "
        f"({card}, ...)\n"
    )
    assert main(["score", "--task", "demo", "--predictions", str(runs / "u0.json"), card,
                 "--json", str(summary), "--quiet"]) == 0  # fmt: skip
    assert [s["predictions"] for s in json.loads(summary.read_text())] == [str(runs / "u0.json"),
                                                                            card]  # fmt: skip
