"""The working folders of ``bench_official.py``: the official script's layout and the inputs.

From the shared data folder (gzipped copies of the public files), under ``WORK``::

    official/connectivity/<scan>_connectivity.json     gunzipped: the official bytes
    official/tasks/R2R/data/R2R_<split>.json           gunzipped: the official bytes
    vlneval-data/r2r/R2R_<split>.json                  symlink to the file above
    vlneval-data/matterport3d/connectivity             symlink to official/connectivity
    predictions/<name>.json                            one file per real prediction file
    sweep/<nn>_<name>.json                             the sweep: those files, repeated

Both scorers read the same uncompressed bytes. The NaviLLM file is the compact form its authors'
scorer writes (a summary record, then ``pred_path`` per episode); it is converted to the R2R
form ``{instr_id, trajectory: [[viewpoint, 0.0, 0.0], ...]}`` that the official script reads.
"""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PREDICTIONS", "Layout", "make_layout"]

# (name, file under predictions/r2r of the data folder); val_unseen, in sweep order.
PREDICTIONS = (
    ("seq2seq-iter100", "seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_100.json.gz"),
    ("seq2seq-iter5000", "seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_5000.json.gz"),
    ("seq2seq-iter20000", "seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_20000.json.gz"),
    ("navillm", "navillm_sadanand1120/navillm_val_unseen_compact.json.gz"),
    ("random-agent", "simple_agents_sadanand1120/val_unseen_random_agent.json.gz"),
    ("stop-agent", "simple_agents_sadanand1120/val_unseen_stop_agent.json.gz"),
    ("shortest-agent", "simple_agents_sadanand1120/val_unseen_shortest_agent.json.gz"),
    ("shortest-agent-web", "matterport3dsimulator_web/val_unseen_shortest_agent.json.gz"),
)  # fmt: skip
COMPACT = {"navillm"}


@dataclass(frozen=True)
class Layout:
    """Where everything was laid out."""

    official_root: Path
    vlneval_root: Path
    predictions: dict[str, Path]
    sweep: list[Path]


def _gunzip(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(source, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)


def _convert_compact(source: Path, target: Path) -> None:
    """A compact NaviLLM file (summary first, ``pred_path`` per record) in the R2R form."""
    records = json.loads(gzip.decompress(source.read_bytes()))
    rows = [
        {"instr_id": r["instr_id"], "trajectory": [[vp, 0.0, 0.0] for vp in r["pred_path"]]}
        for r in records
        if isinstance(r, dict) and "instr_id" in r
    ]
    target.write_text(json.dumps(rows))


def _lay_out_data(data: Path, work: Path, split: str) -> tuple[Path, Path]:
    official = work / "official"
    for src in sorted((data / "matterport3d" / "connectivity").glob("*_connectivity.json.gz")):
        _gunzip(src, official / "connectivity" / src.name.removesuffix(".gz"))
    episodes = official / "tasks" / "R2R" / "data" / f"R2R_{split}.json"
    _gunzip(data / "r2r" / f"R2R_{split}.json.gz", episodes)
    vroot = work / "vlneval-data"
    (vroot / "r2r").mkdir(parents=True)
    (vroot / "matterport3d").mkdir()
    (vroot / "r2r" / episodes.name).symlink_to(episodes)
    (vroot / "matterport3d" / "connectivity").symlink_to(official / "connectivity")
    return official, vroot


def make_layout(data: Path, work: Path, split: str, sweep_files: int) -> Layout:
    """Empties ``work`` and lays out the data, the prediction files and the sweep."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    official, vroot = _lay_out_data(data, work, split)
    predictions: dict[str, Path] = {}
    for name, rel in PREDICTIONS:
        target = work / "predictions" / f"{name}.json"
        target.parent.mkdir(exist_ok=True)
        src = data / "predictions" / "r2r" / rel
        (_convert_compact if name in COMPACT else _gunzip)(src, target)
        predictions[name] = target
    names = list(predictions)
    sweep = []
    for i in range(sweep_files):
        name = names[i % len(names)]
        target = work / "sweep" / f"{i + 1:02d}_{name}.json"
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(predictions[name], target)
        sweep.append(target)
    return Layout(official, vroot, predictions, sweep)
