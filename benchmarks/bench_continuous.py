"""Continuous-environment benchmarks: DTW speed and accuracy, simulation speed, twin baselines.

    .venv/bin/python benchmarks/bench_continuous.py [--data-root DIR] [--sample N] [--out FILE]

1. DTW on the VLN-CE R2R val_unseen reference paths (the ``_gt`` locations) against seeded
   synthetic agent paths (the reference, perturbed, truncated or extended): wall time of the
   exact numba DTW, of vlneval's fastdtw reproduction and of the ``fastdtw`` package (when
   installed) with VLN-CE's call, and the largest nDTW difference between exact and fastdtw.
2. Simulation steps per second of each continuous action space (the random agent, so that the
   rate is the environment's, not a planner's), on the twin worlds of R2R val_unseen.
3. The stop and shortest agents on the continuous twin of R2R val_unseen in each action space
   (every episode, or a seeded sample of N with --sample): SR, SPL, NE, the number of episodes
   whose goal is reachable, and the share of those the shortest agent completes.

4. ``--rollout``: the ``vlneval run ... --agent shortest --score`` command of each action
   space as a whole child process, CPU (user + sys) and wall seconds, with an empty field
   cache (cold) and again with the cache the first run filled (warm). ``--save DIR`` keeps
   the predictions, ``--compare DIR`` checks them byte for byte against a saved set (e.g. the
   run of an older commit: check it out, ``--save`` there, ``--compare`` here).

Prints a table and writes the figures as JSON (--out).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

SPACES = ("r2r-ce", "rxr-ce", "velocity", "waypoint")


def synthetic_paths(gt: list[np.ndarray], seed: int = 0) -> list[np.ndarray]:
    """One agent path per reference: noisy (σ 0.3 m, horizontal), 40-130 % of its length."""
    rng = np.random.default_rng(seed)
    out = []
    for ref in gt:
        n = max(2, int(len(ref) * rng.uniform(0.4, 1.3)))
        extra = ref[-1:] + np.cumsum(
            rng.normal(0, 0.25, (max(0, n - len(ref)), 3)) * [1, 0, 1], axis=0
        )
        path = np.concatenate([ref, extra])[:n].copy()
        path[1:] += rng.normal(0, 0.3, path[1:].shape) * [1, 0, 1]
        out.append(path)
    return out


def bench_dtw(root: Path) -> dict[str, Any]:
    from vlneval.metrics.continuous import fast_dtw, ndtw_from_dtw, point_dtw

    with gzip.open(
        root / "vlnce/R2R_VLNCE_v1-3_preprocessed/val_unseen/val_unseen_gt.json.gz", "rt"
    ) as f:
        gt_json = json.load(f)
    gt = [np.asarray(v["locations"], dtype=np.float64) for v in gt_json.values()]
    agents = synthetic_paths(gt)
    point_dtw(gt[0], agents[0]), fast_dtw(agents[0], gt[0])  # compile before timing
    t = time.perf_counter()
    exact = np.array([point_dtw(g, a) for g, a in zip(gt, agents, strict=True)])
    t_exact = time.perf_counter() - t
    t = time.perf_counter()
    ours = np.array([fast_dtw(a, g) for g, a in zip(gt, agents, strict=True)])
    t_ours = time.perf_counter() - t
    n_ref = np.array([len(g) for g in gt])
    nd = lambda d: np.array([ndtw_from_dtw(x, m) for x, m in zip(d, n_ref, strict=True)])  # noqa: E731
    out: dict[str, Any] = {
        "episodes": len(gt),
        "mean_reference_points": float(n_ref.mean()),
        "mean_agent_points": float(np.mean([len(a) for a in agents])),
        "exact_numba_s": t_exact,
        "fastdtw_vlneval_s": t_ours,
        "max_ndtw_diff_exact_vs_fastdtw": float(np.max(nd(exact) - nd(ours))),
        "mean_ndtw_diff_exact_vs_fastdtw": float(np.mean(nd(exact) - nd(ours))),
        "episodes_where_fastdtw_differs": int(np.sum(np.abs(exact - ours) > 1e-9)),
    }
    try:
        import fastdtw as package
    except ImportError:
        out["fastdtw_package"] = "not installed"
        return out

    def euclid(a: Any, b: Any) -> float:  # VLN-CE's euclidean_distance
        return float(np.linalg.norm(np.array(b) - np.array(a), ord=2))

    lists = [(a.tolist(), g.tolist()) for g, a in zip(gt, agents, strict=True)]
    t = time.perf_counter()
    pkg = np.array([package.fastdtw(a, g, dist=euclid)[0] for a, g in lists])
    t_pkg = time.perf_counter() - t
    compiled = package.fastdtw.__module__.endswith("_fastdtw")
    out.update(
        {
            "fastdtw_package": f"fastdtw ({'compiled extension' if compiled else 'pure-Python fallback'})",
            "fastdtw_package_s": t_pkg,
            "exact_speedup_over_package": t_pkg / t_exact,
            "max_ndtw_diff_exact_vs_package": float(np.max(nd(exact) - nd(pkg))),
            "max_abs_dtw_diff_vlneval_vs_package": float(
                np.max(
                    np.abs(
                        pkg
                        - np.array(
                            [
                                fast_dtw(a, g, variant="compiled" if compiled else "python")
                                for g, a in zip(gt, agents, strict=True)
                            ]
                        )
                    )
                )
            ),
        }
    )
    return out


def bench_sps(eps: Any, worlds: Any, n_episodes: int = 200) -> dict[str, Any]:
    from vlneval.agents.continuous import make_agent, run_continuous
    from vlneval.envs.continuous.env import ContinuousNavEnv

    idx = np.random.default_rng(1).choice(len(eps), n_episodes, replace=False).tolist()
    for i in idx:  # build every world first: the rate is the simulation's
        worlds(eps.scans[i])
    out = {}
    for space in SPACES:
        env = ContinuousNavEnv(eps, worlds, action_space=space, max_steps=200)
        wall, cpu = time.perf_counter(), time.process_time()
        run = run_continuous(env, make_agent("random", env.action_space), indices=idx, seed=0)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        out[space] = {
            "steps": run.steps,
            "wall_s": wall,
            "steps_per_s": run.steps / wall,
            "cpu_steps_per_s": run.steps / cpu,
            "sim_seconds_per_wall_second": sum(e["time_s"] for e in run.episodes) / wall,
        }
    return out


def bench_baselines(eps: Any, worlds: Any, sample: int | None, tmp: Path) -> dict[str, Any]:
    from vlneval.agents.continuous import make_agent, run_continuous
    from vlneval.continuous.oracle import GridOracle
    from vlneval.envs.continuous.env import ContinuousNavEnv
    from vlneval.tasks.profiles import get_profile
    from vlneval.tasks.vlnce.format import parse_ce_predictions
    from vlneval.tasks.vlnce.score import score_continuous, twin_source

    idx = (
        list(range(len(eps)))
        if sample is None
        else np.sort(np.random.default_rng(2026).choice(len(eps), sample, replace=False)).tolist()
    )
    reachable = [
        i
        for i in idx
        if math.isfinite(GridOracle(worlds(eps.scans[i])).distance(eps.starts[i], eps.goals[i]))
    ]
    out: dict[str, Any] = {"episodes": len(idx), "goal_reachable": len(reachable)}
    for space in SPACES:
        for agent in ("stop", "shortest"):
            env = ContinuousNavEnv(eps, worlds, action_space=space, privileged=agent == "shortest")
            t = time.perf_counter()
            run = run_continuous(
                env, make_agent(agent, env.action_space), indices=idx, seed=0, progress=True
            )
            wall = time.perf_counter() - t
            path = tmp / f"{space}-{agent}.json"
            path.write_text(json.dumps(run.predictions))
            ev = score_continuous(
                eps,
                parse_ce_predictions(path, eps),
                get_profile("vlnce-exact"),
                twin_source(eps, worlds),
                subset=sample is not None,
                show_progress=False,
            )
            m = ev.to_dict()["metrics"]
            ok = ev.per_episode["success"]
            pos = {int(i): k for k, i in enumerate(ev.scored)}
            reach_sr = float(np.mean([ok[pos[i]] for i in reachable])) if reachable else None
            out[f"{space}/{agent}"] = {
                "SR": m["SR"],
                "SPL": m["SPL"],
                "NE": m["NE"],
                "TL": m["TL"],
                "nDTW": m["nDTW"],
                "SR_on_reachable": reach_sr,
                "failures": int(len(ok) - ok.sum()),
                "wall_s": wall,
                "mean_time_s": float(np.mean([e["time_s"] for e in run.episodes])),
                "mean_path_length_integrated": float(
                    np.mean([e["path_length_integrated"] for e in run.episodes])
                ),
            }
    return out


def _timed_command(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu_s": cpu, "wall_s": wall}


def bench_rollout(
    root: Path, limit: int | None, save: Path | None, compare: Path | None
) -> dict[str, Any]:
    """The shortest agent's continuous run command in each space, cold and warm field cache."""
    import shutil
    import sys
    import tempfile

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "VLNEVAL_CACHE": str(Path(tmp) / "cache")}
        for space in SPACES:
            shutil.rmtree(Path(tmp) / "cache", ignore_errors=True)
            row: dict[str, Any] = {}
            for state in ("cold", "warm"):
                preds = Path(tmp) / f"{space}-{state}.json"
                cmd = [sys.executable, "-m", "vlneval.cli.main", "run", "--task", "r2r-twin"]
                cmd += ["--split", "val_unseen", "--data-root", str(root), "--agent", "shortest"]
                cmd += ["--env", f"continuous-{space}", "--out", str(preds), "--score", "--quiet"]
                cmd += ["--limit", str(limit)] if limit else []
                row[state] = _timed_command(cmd, env)
            data = (Path(tmp) / f"{space}-cold.json").read_bytes()
            row["episodes"] = len(json.loads(data))
            row["warm_equals_cold"] = data == (Path(tmp) / f"{space}-warm.json").read_bytes()
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{space}-shortest.json").write_bytes(data)
            if compare is not None:
                row["identical_to_saved"] = (
                    data == (compare / f"{space}-shortest.json").read_bytes()
                )
            out[space] = row
            print(space, json.dumps(row), flush=True)
    for state in ("cold", "warm"):
        out[f"total_{state}"] = {
            k: sum(out[s][state][k] for s in SPACES) for k in ("cpu_s", "wall_s")
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-root",
        default=os.environ.get(
            "VLNEVAL_DATA", str(Path(__file__).resolve().parents[2] / "shared/data")
        ),
    )
    parser.add_argument(
        "--sample", type=int, default=None, help="baselines on a seeded sample of N episodes"
    )
    parser.add_argument("--skip-baselines", action="store_true")
    parser.add_argument(
        "--rollout",
        action="store_true",
        help="only time the continuous run command per action space",
    )
    parser.add_argument("--limit", type=int, default=None, help="with --rollout: first N episodes")
    parser.add_argument("--save", type=Path, default=None, help="with --rollout: keep predictions")
    parser.add_argument(
        "--compare", type=Path, default=None, help="with --rollout: byte-compare with saved ones"
    )
    parser.add_argument("--out", default=None, help="write the figures as JSON")
    args = parser.parse_args()
    import tempfile

    from vlneval.tasks import get_task
    from vlneval.tasks.vlnce.score import load_twin_split

    root = Path(args.data_root)
    figures: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()}
    }
    if args.rollout:
        figures["rollout"] = bench_rollout(root, args.limit, args.save, args.compare)
        if args.out:
            Path(args.out).write_text(json.dumps(figures, indent=1))
        return
    figures["dtw"] = bench_dtw(root)
    print(json.dumps({"dtw": figures["dtw"]}, indent=1), flush=True)
    eps, worlds = load_twin_split(get_task("r2r-twin"), "val_unseen", root=root)
    figures["steps_per_second"] = bench_sps(eps, worlds)
    print(json.dumps({"steps_per_second": figures["steps_per_second"]}, indent=1), flush=True)
    if not args.skip_baselines:
        with tempfile.TemporaryDirectory() as tmp:
            figures["twin_val_unseen"] = bench_baselines(eps, worlds, args.sample, Path(tmp))
        print(json.dumps({"twin_val_unseen": figures["twin_val_unseen"]}, indent=1), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
