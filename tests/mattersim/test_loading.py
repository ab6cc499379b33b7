"""Which MatterSim loads (a compiled build wins), where the graphs come from, import cost."""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

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
    bad = _run(PROBE, tmp_path, VLNEVAL_MATTERSIM="shim")
    assert bad.returncode != 0 and "must be 'auto', 'vlneval' or 'real'" in bad.stderr


def test_a_broken_build_on_sys_path_warns_and_falls_back(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (build / f"MatterSim{suffix}").write_bytes(b"not an ELF file")
    out = _run(PROBE, tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "vlneval", out.stderr
    assert "could not be loaded" in out.stderr and "RuntimeWarning" in out.stderr
    forced = _run(PROBE, tmp_path, VLNEVAL_MATTERSIM="vlneval")
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
    home = tmp_path / "home"  # no data under the per-user data folder either
    missing = _run(code, tmp_path, VLNEVAL_MATTERSIM="vlneval", HOME=str(home), XDG_DATA_HOME="")
    assert missing.returncode != 0
    root = home / ".local" / "share" / "vlneval"
    assert missing.stderr.splitlines()[-1] == (
        f"ValueError: MatterSim: navigation graphs not found: looked in {tmp_path / 'connectivity'}"
        f" (the default navigation graph path) and in {root / 'matterport3d' / 'connectivity'} "
        f"(under the vlneval data root {root}: $VLNEVAL_DATA, else the per-user data folder); "
        "neither is a folder. Fetch them with `vlneval data fetch r2r`, put the Matterport3D "
        "connectivity files (<scan>_connectivity.json or .json.gz) in one of them, call "
        "Simulator.setNavGraphPath(folder), or set VLNEVAL_DATA to a vlneval data root."
    )
    # where `vlneval data fetch` puts them without VLNEVAL_DATA: found there too
    (root / "matterport3d").mkdir(parents=True)
    (root / "matterport3d" / "connectivity").symlink_to(data_root / "matterport3d" / "connectivity")
    fetched = _run(code, tmp_path, VLNEVAL_MATTERSIM="vlneval", HOME=str(home), XDG_DATA_HOME="")
    assert fetched.returncode == 0 and fetched.stdout.strip() == "5", fetched.stderr
