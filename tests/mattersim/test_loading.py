"""Which MatterSim loads (a compiled build wins), where the graphs come from, import cost."""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

import pytest

import MatterSim

PROBE = (
    "import sys, warnings; warnings.simplefilter('always'); sys.path.append('build'); "
    "import MatterSim; print(MatterSim.__vlneval__)"
)


def _run(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("VLNEVAL_MATTERSIM", "VLNEVAL_DATA")}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=full, capture_output=True, text=True, timeout=120
    )


def test_vlneval_module_when_there_is_no_build(tmp_path: Path) -> None:
    out = _run(PROBE, tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "vlneval", out.stderr
    real = _run(PROBE, tmp_path, VLNEVAL_MATTERSIM="real")
    assert real.returncode != 0 and "VLNEVAL_MATTERSIM=real" in real.stderr
    for forced in ("shim", "vlneval", " SHIM "):  # the spec's value; vlneval: its alias
        out = _run(PROBE, tmp_path, VLNEVAL_MATTERSIM=forced)
        assert out.returncode == 0 and out.stdout.strip() == "vlneval", out.stderr
    bad = _run(PROBE, tmp_path, VLNEVAL_MATTERSIM="fake")
    assert bad.returncode != 0
    assert bad.stderr.splitlines()[-1] == (
        "ImportError: VLNEVAL_MATTERSIM must be 'auto', 'shim' (alias 'vlneval') or 'real', got "
        "'fake'"
    )


def test_a_broken_build_on_sys_path_warns_and_falls_back(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (build / f"MatterSim{suffix}").write_bytes(b"not an ELF file")
    out = _run(PROBE, tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "vlneval", out.stderr
    assert "could not be loaded" in out.stderr and "RuntimeWarning" in out.stderr
    for mode in ("shim", "vlneval"):
        forced = _run(PROBE, tmp_path, VLNEVAL_MATTERSIM=mode)
        assert forced.stdout.strip() == "vlneval" and "could not be loaded" not in forced.stderr
    real = _run(PROBE, tmp_path, VLNEVAL_MATTERSIM="real")
    assert real.returncode != 0 and f"MatterSim{suffix}" in real.stderr


def test_graphs_from_vlneval_data_and_import_is_light(tmp_path: Path, data_root: Path) -> None:
    code = (
        "import sys; import MatterSim; assert 'numpy' not in sys.modules; "
        "s = MatterSim.Simulator(); s.setRenderingEnabled(False); "
        "s.newEpisode(['2t7WUuJeko7'], ['1e6b606b44df4a6086c0f97e826d4d15'], [0], [0]); "
        "print(s.getState()[0].location.ix)"
    )
    out = _run(code, tmp_path, VLNEVAL_DATA=str(data_root), VLNEVAL_MATTERSIM="vlneval")
    assert out.returncode == 0 and out.stdout.strip() == "5", out.stderr
    remedy = (
        "Call Simulator.setNavGraphPath(folder) with the folder of the Matterport3D "
        "connectivity files (<scan>_connectivity.json or .json.gz), or set VLNEVAL_DATA to a "
        "vlneval data root (graphs in $VLNEVAL_DATA/matterport3d/connectivity, where "
        "`vlneval data fetch r2r` puts them)."
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    unset = _run(code, tmp_path, VLNEVAL_MATTERSIM="vlneval")
    assert unset.returncode != 0
    assert unset.stderr.splitlines()[-1] == (
        f"ValueError: MatterSim: navigation graphs not found: {tmp_path / 'connectivity'} (the "
        f"default navigation graph path, ./connectivity in the working directory) is not a "
        f"folder. {remedy}"
    )
    wrong = _run(code, tmp_path, VLNEVAL_MATTERSIM="vlneval", VLNEVAL_DATA=str(empty))
    assert wrong.stderr.splitlines()[-1] == (
        f"ValueError: MatterSim: navigation graphs not found: looked in "
        f"{tmp_path / 'connectivity'} (the default navigation graph path) and in "
        f"{empty / 'matterport3d' / 'connectivity'} ($VLNEVAL_DATA/matterport3d/connectivity); "
        f"neither is a folder. {remedy}"
    )


def test_no_other_data_set_is_substituted_for_a_missing_default(
    tmp_path: Path, data_root: Path
) -> None:
    """spec/mattersim.md 6.4: graphs in the per-user data folder (where `vlneval data fetch`
    puts them without VLNEVAL_DATA) are not used silently."""
    home = tmp_path / "home"
    root = home / ".local" / "share" / "vlneval" / "matterport3d"
    root.mkdir(parents=True)
    (root / "connectivity").symlink_to(data_root / "matterport3d" / "connectivity")
    code = (
        "import MatterSim; s = MatterSim.Simulator(); "
        "s.newEpisode(['2t7WUuJeko7'], ['1e6b606b44df4a6086c0f97e826d4d15'], [0], [0])"
    )
    out = _run(code, tmp_path, VLNEVAL_MATTERSIM="vlneval", HOME=str(home), XDG_DATA_HOME="")
    assert out.returncode != 0
    assert out.stderr.splitlines()[-1].startswith(
        f"ValueError: MatterSim: navigation graphs not found: {tmp_path / 'connectivity'} (the "
        "default navigation graph path"
    )


def test_the_default_graphs_expand_the_home_folder_in_vlneval_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``VLNEVAL_DATA="~/vln"`` (the shell leaves a quoted ``~``) names the graphs of a simulator
    whose default ``./connectivity`` is missing, as vlneval's own readers read it."""
    folder = tmp_path / "vln" / "matterport3d" / "connectivity"
    folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("VLNEVAL_DATA", "~/vln")
    assert MatterSim._default_graphs("connectivity") == str(folder)
