"""The import contracts of pyproject.toml, and the contract type that checks ``MatterSim.py``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("importlinter")
tomllib = pytest.importorskip("tomllib")  # Python 3.11+


def _contracts() -> dict[str, dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}


def test_the_bottom_layer_holds_every_module_below_io():
    layers = _contracts()["Imports flow one way (design.md)"]["layers"]
    assert layers[-1] == (
        "vlneval.errors | vlneval._lazy | vlneval._compiling | vlneval._jsonshape | vlneval._version"
    )


def test_mattersim_has_its_own_contract():
    contract = _contracts()[
        "MatterSim (graph-only simulator) imports only graph, fetch, io and errors"
    ]
    assert contract["type"] == "module_forbidden"
    assert contract["source_modules"] == ["MatterSim"]
    assert {"vlneval.cli", "vlneval.server", "vlneval.reports", "vlneval.tasks"} <= set(
        contract["forbidden_modules"]
    )


def _lint(tmp_path: Path, top_module: str) -> subprocess.CompletedProcess[str]:
    """Run lint-imports on a toy project: package ``toy`` (low, high) and module ``Top``."""
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "__init__.py").write_text("")
    (tmp_path / "toy" / "low.py").write_text("X = 1\n")
    (tmp_path / "toy" / "mid.py").write_text("from toy import high\n")
    (tmp_path / "toy" / "high.py").write_text("from toy.low import X\n")
    (tmp_path / "Top.py").write_text(textwrap.dedent(top_module))
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [tool.importlinter]
            root_package = "toy"
            contract_types = ["module_forbidden: tools.import_contracts.ModuleForbiddenContract"]

            [[tool.importlinter.contracts]]
            name = "Top uses only low"
            type = "module_forbidden"
            source_modules = ["Top"]
            forbidden_modules = ["toy.high"]
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    command = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    return subprocess.run(
        [sys.executable, "-c", command, "--no-cache", "--no-logo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_single_module_keeps_its_contract(tmp_path):
    done = _lint(tmp_path, "import os\nfrom toy.low import X\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Top uses only low KEPT" in done.stdout


def test_a_function_level_indirect_import_breaks_it(tmp_path):
    done = _lint(tmp_path, "def f():\n    from toy import mid\n    return mid\n")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Top is not allowed to import toy.high:" in done.stdout
    assert "Top -> toy.mid (l.2)" in done.stdout
    assert "toy.mid -> toy.high (l.1)" in done.stdout
