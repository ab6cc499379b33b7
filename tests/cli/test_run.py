"""``vlneval run`` and ``vlneval agents``: files written, the card, scoring, exit codes."""

from __future__ import annotations

import gzip
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from tests.fixtures import square_root

from vlneval.cli.main import main
from vlneval.distributed.merge import card_path


def run(args: list[str]) -> int:
    return main(["run", *args])


def _shortest_on(root: Path, out: Path) -> list[str]:
    """The shortest-path agent on the val split of an R2R data root."""
    return ["--task", "r2r", "--split", "val", "--data-root", str(root), "--agent", "shortest",
            "--out", str(out)]  # fmt: skip


def test_demo_run_writes_predictions_and_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "preds.json"
    assert (
        run(["--task", "demo", "--agent", "random", "--seed", "0", "--out", str(out), "--quiet"])
        == 0
    )
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing on stdout without --score
    assert captured.err == ""  # --quiet: no progress, no 'ran ... wrote' line
    records = json.loads(out.read_text())
    assert len(records) == 36 and records[0]["instr_id"] == "100_0"
    card = json.loads((tmp_path / "preds.protocol.json").read_text())
    assert card["task"] == "demo" and card["split"] == "val" and card["episodes"] == 36
    assert (
        card["action_space"]["name"] == "egocentric"
        and card["action_space"]["turn_angle_deg"] == 30
    )
    assert card["privileged"] == "none" and card["seeds"] == [0] and card["n_runs"] == 1
    assert card["inference_budget"]["max_steps"] == 100
    assert card["executed_path"].startswith("full")
    assert card["observations"][0] == "instruction text"
    assert card["agent"]["id"] == "random-v1" and "numpy" in card["software"]


def test_quiet_leaves_the_warnings_the_errors_and_the_outputs_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--quiet`` of run, score and report alike: nothing on stdout but an output sent there,
    no progress and no 'ran ... wrote ...' on stderr; the warnings stay."""
    out = tmp_path / "p.json"
    demo = "warning: the demo task is synthetic (generated houses and episodes), not real data\n"
    argv = ["run", "--task", "demo", "--agent", "random", "--out", str(out)]
    assert main(argv) == 0
    ran = "ran random-v1 on 36 of 36 demo val episodes (seed 0, egocentric, 0 truncated) in "
    assert capsys.readouterr().err.splitlines()[-1].startswith(ran)
    score = ["score", "--task", "demo", "--predictions", str(out)]
    report = ["report", "--task", "demo", "--predictions", str(out), "--out", str(out) + ".html"]
    for command, warned in [
        (argv, False),
        ([*argv, "--score", "--json", str(tmp_path / "s.json")], True),
        (score, True),
        (report, True),
    ]:
        assert main([*command, "--quiet"]) == 0
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (demo if warned else "")
    assert main([*score, "--quiet", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["task"] == "demo"  # the output asked for


def test_same_seed_same_file(tmp_path: Path) -> None:
    a, b, c = (tmp_path / f"{k}.json" for k in "abc")
    assert run(["--task", "demo", "--agent", "random-walk", "--out", str(a), "--quiet"]) == 0
    assert (
        run(
            [
                "--task",
                "demo",
                "--agent",
                "random-walk",
                "--out",
                str(b),
                "--quiet",
                "--batch-size",
                "7",
            ]
        )
        == 0
    )
    assert (
        run(["--task", "demo", "--agent", "random-walk", "--out", str(c), "--quiet", "--seed", "1"])
        == 0
    )
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def test_score_prints_what_vlneval_score_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, summary = tmp_path / "p.json", tmp_path / "s.json"
    args = [
        "--task",
        "demo",
        "--agent",
        "shortest",
        "--out",
        str(out),
        "--score",
        "--json",
        str(summary),
    ]
    assert run(args) == 0
    ran = capsys.readouterr().out
    assert main(["score", "--task", "demo", "--predictions", str(out)]) == 0
    scored = capsys.readouterr().out
    assert ran == scored and "demo val" in ran
    s = json.loads(summary.read_text())
    assert s["metrics"]["SR"] == 1.0 and s["partial"] is False
    assert s["protocol"]["privileged"].startswith("goals, reference path")
    assert s["protocol"]["action_space"]["name"] == "panoramic"
    assert s["protocol"]["agent"]["id"] == "shortest-v1"


def test_limit_is_scored_as_partial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, summary = tmp_path / "p.json", tmp_path / "s.json"
    args = [
        "--task",
        "demo",
        "--agent",
        "stop",
        "--out",
        str(out),
        "--limit",
        "5",
        "--score",
        "--json",
        str(summary),
    ]
    assert run(args + ["--quiet"]) == 0
    s = json.loads(summary.read_text())
    assert (
        s["partial"] is True
        and s["n_episodes"] == 5
        and (s["protocol"]["episodes"], s["protocol"]["n_expected"], s["protocol"]["partial"])
        == (5, 36, True)
    )
    card = json.loads(card_path(out).read_text())
    assert (card["episodes"], card["n_expected"], card["partial"]) == (5, 36, True)


def test_gzip_output_and_options(tmp_path: Path) -> None:
    out = tmp_path / "p.json.gz"
    args = [
        "--task",
        "demo",
        "--agent",
        "shortest",
        "--action-space",
        "egocentric",
        "--max-steps",
        "60",
        "--out",
        str(out),
        "--quiet",
    ]
    assert run(args) == 0
    records = json.loads(gzip.decompress(out.read_bytes()))
    assert len(records) == 36
    card = json.loads((tmp_path / "p.protocol.json").read_text())
    assert (
        card["inference_budget"]["max_steps"] == 60 and card["action_space"]["name"] == "egocentric"
    )


def test_runs_on_other_data_roots(tmp_path: Path) -> None:
    root = square_root(tmp_path)
    out = tmp_path / "sq.json"
    assert run(_shortest_on(root, out) + ["--quiet", "--score"]) == 0
    records = json.loads(out.read_text())
    assert [r["instr_id"] for r in records] == [
        "1_0",
        "1_1",
        "1_2",
        "1_3",
    ]  # every instruction runs


def test_user_agent_from_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_agents_cli.py").write_text(
        textwrap.dedent("""
        class Wanderer:
            action_spaces = ("panoramic",)
            def reset(self, observation, *, rng):
                self.rng = rng
            def act(self, observation):
                if observation["step"] >= 3:
                    return 0
                return int(self.rng.integers(1, len(observation["candidates"])))
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_agents_cli", None)
    out = tmp_path / "w.json"
    assert (
        run(["--task", "demo", "--agent", "my_agents_cli:Wanderer", "--out", str(out), "--quiet"])
        == 0
    )
    assert all(len(r["trajectory"]) == 4 for r in json.loads(out.read_text()))
    assert json.loads(card_path(out).read_text())["agent"]["id"] == "my_agents_cli:Wanderer"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "randm"], "unknown agent 'randm'; did you mean 'random'"),
        (
            ["--agent", "random", "--action-space", "panoramic"],
            "acts in the egocentric action space",
        ),
        (["--agent", "stop", "--max-steps", "0"], "--max-steps must be a positive integer"),
        (["--agent", "stop", "--limit", "0"], "limit must be a positive number"),
        (["--agent", "nowhere.mod:Agent"], "cannot import module 'nowhere.mod'"),
        (["--agent", "stop", "--features", "f.npy"], "unknown features format .npy"),
    ],
)
def test_user_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert run(["--task", "demo", "--out", str(tmp_path / "x.json"), "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_privileged_agent_on_a_split_without_goals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = square_root(
        tmp_path,
        [
            {
                "path_id": 3,
                "scan": "sq",
                "path": ["S"],
                "heading": 0.0,
                "instructions": ["test split: no goal"],
            }
        ],
    )
    args = _shortest_on(root, tmp_path / "t.json") + ["--quiet"]
    assert run(args) == 2
    assert "no goals" in capsys.readouterr().err
    args[args.index("shortest")] = "random"
    assert run(args) == 0


def test_agents_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents"]) == 0
    out = capsys.readouterr().out
    for name in (
        "stop-v1",
        "random-v1",
        "random-walk-v1",
        "shortest-v1",
        "graph-panoramic-v1",
        "graph-egocentric-v1",
    ):
        assert name in out


def test_features_file_reaches_the_agent_and_the_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64

    import numpy as np

    from vlneval.envs.loading import load_episodes

    _, graphs = load_episodes("demo")
    lines = []
    for scan in graphs.scans:
        for k, vp in enumerate(graphs.graph(scan).ids):
            feats = np.full((36, 4), k, dtype=np.float32)
            lines.append(
                "\t".join(
                    [scan, vp, "640", "480", "60", base64.b64encode(feats.tobytes()).decode()]
                )
            )
    tsv = tmp_path / "feats.tsv"
    tsv.write_text("\n".join(lines) + "\n")
    (tmp_path / "feature_agents.py").write_text(
        textwrap.dedent("""
        class Brightest:
            action_spaces = ("panoramic",)
            def reset(self, observation, *, rng):
                assert observation["features"].shape == (36, 4)
            def act(self, observation):
                return 0
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("feature_agents", None)
    out = tmp_path / "f.json"
    args = [
        "--task",
        "demo",
        "--agent",
        "feature_agents:Brightest",
        "--features",
        str(tsv),
        "--out",
        str(out),
    ]
    assert run(args + ["--quiet", "--batch-size", "4"]) == 0
    card = json.loads(card_path(out).read_text())
    assert (
        card["observations"][-1].startswith("pre-extracted panorama features: ")
        and "36 x 4" in card["observations"][-1]
    )


def test_a_features_file_missing_a_viewpoint_is_refused_before_the_agent_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import base64

    from vlneval.envs.loading import load_episodes

    _, graphs = load_episodes("demo")
    feats = base64.b64encode(bytes(36 * 4 * 4)).decode()
    scan = graphs.scans[0]
    skipped = graphs.graph(scan).ids[-1]
    lines = [
        "\t".join([s, vp, "640", "480", "60", feats])
        for s in graphs.scans
        for vp in graphs.graph(s).ids
        if (s, vp) != (scan, skipped)
    ]
    tsv = tmp_path / "feats.tsv"
    tsv.write_text("\n".join(lines) + "\n")
    out = tmp_path / "f.json"
    args = ["--task", "demo", "--agent", "random", "--features", str(tsv), "--out", str(out)]
    assert run(args) == 2
    assert capsys.readouterr().err == (
        f"error: {tsv}: no features for 1 of the {len(lines) + 1} viewpoints the run can reach "
        f"(every viewpoint of its episodes' scans): viewpoint {skipped} of scan {scan} (key "
        f"{scan}_{skipped}) is missing, and episodes 100_0 and 11 more are in that scan; checked "
        "before the first step\n"
    )  # no progress line: no episode was started
    assert not out.exists()


def test_a_shard_s_plain_log_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a terminal (a SLURM log): the first line says where the shard starts (a resumed one
    counts the episodes already written), a line at 100%, then where the shard is."""
    out = tmp_path / "p.json"
    shard = ["--task", "demo", "--agent", "random", "--out", str(out), "--shard", "0/2"]
    records = out.with_name("p.shard-0-of-2.jsonl")
    manifest = out.with_name("p.shard-0-of-2.manifest.json")
    merge = f"vlneval merge {out.with_name('p.shard-*-of-2.jsonl')} --out {out}"
    last = re.compile(
        r"shard 0/2: 18/18 episodes \(100%\), \d+\.\d episodes/s, \d+:\d\d elapsed, 0:00 left"
    )
    assert run(shard) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "shard 0/2: 0/18 episodes (0%), 0.0 episodes/s, 0:00 elapsed, ? left"
    assert len(lines) == 3 and last.fullmatch(lines[1])
    assert lines[-1] == (
        f"shard 0/2 (explicit): 18 episodes (0 already written, 18 run); wrote {records} and "
        f"{manifest}; when all 2 are done: {merge}"
    )
    records.write_bytes(b"".join(records.read_bytes().splitlines(keepends=True)[:4]))
    assert run([*shard, "--resume"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "shard 0/2: 4/18 episodes (22%), 0.0 episodes/s, 0:00 elapsed, ? left"
    assert len(lines) == 3 and last.fullmatch(lines[1])
    assert lines[-1].startswith("shard 0/2 (explicit): 18 episodes (4 already written, 14 run);")


@pytest.mark.parametrize(
    "split", [[], ["--split", "val"], ["--split", "val", "--profile", "demo", "--limit", "2"]]
)
def test_a_run_stopped_while_scoring_says_its_files_are_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    split: list[str],
) -> None:  # fmt: skip
    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C while the split is loaded for scoring

    monkeypatch.setattr("vlneval.cli.run_common.open_scorer", stopped)
    out = tmp_path / "preds.json"
    argv = ["--task", "demo", *split, "--agent", "random", "--out", str(out), "--quiet"]
    assert run([*argv, "--score"]) == 130
    named = " --split val" if split else ""
    named += " --profile demo --subset" if "--profile" in split else ""  # scored as the run was
    assert capsys.readouterr().err == (
        f"stopped by SIGINT while scoring: {out} and {card_path(out)} are written; score them "
        f"with `vlneval score --task demo{named} --predictions {out}`\n"
    )
    assert json.loads(out.read_text()) and json.loads(card_path(out).read_text())["task"] == "demo"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--json", "s.json"], "--json is an output of scoring: add --score to score the run"),
        (
            ["--per-episode", "-", "--json", "-"],
            "--json and --per-episode are outputs of scoring: add --score to score the run",
        ),
    ],
)
def test_scoring_outputs_without_score_are_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "preds.json"
    assert run(["--task", "demo", "--agent", "random", "--out", str(out), *extra]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not out.exists()
