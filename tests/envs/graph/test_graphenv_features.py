"""Pre-extracted features: the R2R TSV and HDF5 formats, in observations, with clear errors."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.envs.graph.helpers import STAR, star
from vlneval.envs import GraphNavEnv, VectorGraphNavEnv, open_features
from vlneval.envs.graph.features import Hdf5Features, TsvFeatures
from vlneval.errors import InvalidInputError, MissingDataError, VLNEvalError

DIM = 3


def panorama(k: int) -> np.ndarray:
    """Distinct values for viewpoint k: row v, column d holds 1000k + 10v + d."""
    return (1000.0 * k + 10.0 * np.arange(36)[:, None] + np.arange(DIM)[None, :]).astype(np.float32)


def write_tsv(path: Path, rows: list[list[str]] | None = None) -> Path:
    if rows is None:
        rows = [
            ["star", vp, "640", "480", "60", base64.b64encode(panorama(k).tobytes()).decode()]
            for k, vp in enumerate(STAR)
        ]
    path.write_text("".join("\t".join(r) + "\n" for r in rows))
    return path


def test_tsv_round_trip(tmp_path: Path) -> None:
    store = TsvFeatures(write_tsv(tmp_path / "f.tsv"))
    assert store.dim == DIM and len(store.keys()) == len(STAR)
    got = store.get("star", "G")
    assert got.dtype == np.float32 and got.shape == (36, DIM)
    assert np.array_equal(got, panorama(6))
    assert not got.flags.writeable
    assert store.get("star", "G") is got  # cached


def test_features_in_observations(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    env = GraphNavEnv(episodes, graphs, features=write_tsv(tmp_path / "f.tsv"))
    obs, _ = env.reset(options={"episode": "1_0"})
    assert np.array_equal(obs["features"], panorama(0))  # C
    g = obs["candidates"][1]  # G, seen in view 24: its row of C's panorama
    assert g.viewpoint == "G" and obs["features"][g.view_index][0] == 240.0
    obs, *_ = env.step(1)
    assert np.array_equal(obs["features"], panorama(6))
    assert "pre-extracted panorama features" in env.protocol()["observations"][-1]


def test_features_in_batched_observations(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=2, features=write_tsv(tmp_path / "f.tsv"))
    obs, info = venv.reset(options={"episodes": [0, 3]})  # starts C and E
    assert obs.features is not None and obs.features.shape == (2, 36, DIM)
    assert np.array_equal(obs.features[0], panorama(0)) and np.array_equal(
        obs.features[1], panorama(4)
    )
    assert np.array_equal(venv.observation(1)["features"], panorama(4))


def test_batch_sensors_off_leaves_features_to_each_slot(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    venv = VectorGraphNavEnv(
        episodes, graphs, num_envs=2, features=write_tsv(tmp_path / "f.tsv"), batch_sensors=False
    )
    obs, info = venv.reset(options={"episodes": [0, 3]})
    assert obs.features is None  # not built for the batch
    assert np.array_equal(venv.observation(1)["features"], panorama(4))


def test_missing_viewpoint_names_file_scan_and_viewpoint(tmp_path: Path) -> None:
    path = write_tsv(
        tmp_path / "f.tsv",
        [["star", "C", "640", "480", "60", base64.b64encode(panorama(0)).decode()]],
    )
    store = TsvFeatures(path)
    with pytest.raises(
        InvalidInputError, match=r"f\.tsv: no features for viewpoint A of scan star \(key star_A\)"
    ):
        store.get("star", "A")


MISSING_A = (
    "no features for 1 of the 7 viewpoints the run can reach (every viewpoint of its episodes' "
    "scans): viewpoint A of scan star (key star_A) is missing, and episodes 1_0 and 3 more are "
    "in that scan; checked before the first step"
)


@pytest.mark.parametrize("make", [GraphNavEnv, VectorGraphNavEnv])
def test_a_file_missing_a_reachable_viewpoint_is_refused_before_the_first_step(
    tmp_path: Path, make: type
) -> None:
    rows = [
        ["star", vp, "640", "480", "60", base64.b64encode(panorama(k)).decode()]
        for k, vp in enumerate(STAR)
        if vp != "A"  # a neighbour of every start: reached only after a step
    ]
    path = write_tsv(tmp_path / "f.tsv", rows)
    episodes, graphs = star(tmp_path)
    kwargs = {"num_envs": 2} if make is VectorGraphNavEnv else {}
    with pytest.raises(InvalidInputError) as caught:
        make(episodes, graphs, features=path, **kwargs)
    assert str(caught.value) == f"error: {path}: {MISSING_A}"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (["star", "C", "640", "480", "60", "!!notbase64"], "field features: not valid base64"),
        (
            ["star", "C", "640", "480", "60", base64.b64encode(b"\0" * 20).decode()],
            "20 bytes is not 36 views",
        ),
        (
            ["star", "C", "640", "480", "sixty", base64.b64encode(panorama(0)).decode()],
            "field vfov: not a number",
        ),
        (["star", "C", "640", "480", base64.b64encode(panorama(0)).decode()], "expected 6 fields"),
    ],
)
def test_malformed_tsv_records(tmp_path: Path, row: list[str], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as err:
        TsvFeatures(write_tsv(tmp_path / "bad.tsv", [row]))
    assert "bad.tsv: scan star viewpoint C" in str(err.value)


def test_tsv_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError, match="no such features file"):
        TsvFeatures(tmp_path / "absent.tsv")
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(InvalidInputError, match="empty"):
        TsvFeatures(tmp_path / "empty.tsv")
    row = ["star", "C", "640", "480", "60", base64.b64encode(panorama(0)).decode()]
    with pytest.raises(InvalidInputError, match="line 2: duplicate viewpoint C"):
        TsvFeatures(write_tsv(tmp_path / "dup.tsv", [row, row]))
    with pytest.raises(InvalidInputError, match="unknown features format .npy"):
        open_features(tmp_path / "x.npy")


def test_inconsistent_dimension_is_reported(tmp_path: Path) -> None:
    rows = [
        ["star", "C", "640", "480", "60", base64.b64encode(panorama(0)).decode()],
        ["star", "A", "640", "480", "60", base64.b64encode(np.zeros((36, 5), np.float32)).decode()],
    ]
    store = TsvFeatures(write_tsv(tmp_path / "f.tsv", rows))
    with pytest.raises(InvalidInputError, match="5 values per view, other viewpoints have 3"):
        store.get("star", "A")


def test_hdf5_round_trip(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "f.hdf5"
    with h5py.File(path, "w") as f:
        for k, vp in enumerate(STAR):
            f.create_dataset(f"star_{vp}", data=panorama(k))
        f.create_dataset("star_bad", data=np.zeros((12, DIM), np.float32))
    store = open_features(path)
    assert isinstance(store, Hdf5Features) and store.dim == DIM
    assert np.array_equal(store.get("star", "D"), panorama(3))
    with pytest.raises(InvalidInputError, match="no features for viewpoint Z"):
        store.get("star", "Z")
    with pytest.raises(
        InvalidInputError, match=r"star_bad: expected a \(36, D\) dataset, got shape \(12, 3\)"
    ):
        store.get("star", "bad")
    episodes, graphs = star(tmp_path)
    obs, _ = GraphNavEnv(episodes, graphs, features=path).reset(options={"episode": 0})
    assert np.array_equal(obs["features"], panorama(0))
    store.close()
    with h5py.File(path, "a") as f:
        del f["star_A"]
    with pytest.raises(InvalidInputError) as caught:
        VectorGraphNavEnv(episodes, graphs, num_envs=1, features=path)
    assert str(caught.value) == f"error: {path}: {MISSING_A}"


def test_hdf5_without_h5py_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "h5py", None)
    (tmp_path / "f.h5").write_bytes(b"")
    with pytest.raises(VLNEvalError, match=r"needs h5py.*pip install 'vlneval\[features\]'"):
        open_features(tmp_path / "f.h5")
