"""design.md: "a function-level import only defers a heavy optional dependency".

Every import inside a function (or method) of ``src/`` that names a ``vlneval`` module or a heavy
third-party package carries a trailing ``# deferred: <dep>`` comment, ``<dep>`` one of
:data:`HEAVY` or :data:`STARTUP`. Both claims are checked statically, through the top-level
imports of a module and of its packages: importing the target really pulls ``<dep>`` in, and the
importing module does not already pull it at its top (else the deferral defers nothing and only
hides an edge of the import graph). Standard-library imports are not policed. ``if
TYPE_CHECKING:`` blocks sit at module level and are not function imports.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: The optional or costly dependencies whose import may be deferred to where it is needed.
HEAVY = frozenset(
    {
        "numba", "scipy", "matplotlib", "fastapi", "starlette", "uvicorn", "sqlalchemy",
        "alembic", "psycopg", "ray", "jinja2", "pooch", "torch", "h5py", "pyarrow",
        "playwright", "fastdtw", "rich", "httpx",
    }
)  # fmt: skip
#: Core dependencies that ``vlneval --help``, ``import vlneval.io``/``vlneval.tasks`` and
#: ``import MatterSim`` do not load (:func:`test_the_startup_path_loads_no_numpy_or_msgspec`):
#: measured on ``vlneval --help``, numpy through the explaining pass's JSON scanner costs
#: +180 ms (150 -> 330 ms) and msgspec through the fetch registry's hint +60-100 ms, so the
#: few modules on that path may defer them to the error or the call that needs them.
STARTUP = frozenset({"numpy", "msgspec"})
DEFERRED = re.compile(r"#\s*deferred:\s*([A-Za-z0-9_]+)")


def _imported(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    """The absolute module names an import statement in ``module`` names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".")[: -node.level]
        base = ".".join([*parts, base] if base else parts)
    submodules = [f"{base}.{a.name}" for a in node.names if _path(f"{base}.{a.name}")]
    return submodules or [base]


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _path(module: str) -> Path | None:
    base = SRC.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _top_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports run when the module is imported: module level, inside ``try``/``if``/``with``
    but not ``if TYPE_CHECKING:``, never inside a function or class body's functions."""
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            yield stmt
        elif isinstance(stmt, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(stmt.test):
                todo += stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try):
            todo += stmt.body + stmt.orelse + stmt.finalbody
            todo += [s for handler in stmt.handlers for s in handler.body]
        elif isinstance(stmt, (ast.With, ast.ClassDef)):
            todo += stmt.body


@functools.cache
def _pulls(module: str) -> frozenset[str]:
    """Top-level packages that importing ``module`` (a vlneval module) imports, transitively."""
    seen: set[str] = set()
    found: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a, a.b and a.b.c
            prefix = ".".join(parts[:i])
            path = _path(prefix)
            if prefix in seen or path is None:
                continue
            seen.add(prefix)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in _top_level_imports(tree):
                for target in _imported(
                    node, prefix if path.name != "__init__.py" else f"{prefix}.__init__"
                ):
                    root = target.split(".")[0]
                    (todo.append(target) if root in ("vlneval", "MatterSim") else found.add(root))
    return frozenset(found)


def _function_imports(path: Path) -> Iterator[tuple[int, str, str]]:
    """``(line, imported module, source line)`` of every import inside a function."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    module = _module_name(path)
    if path.name == "__init__.py":
        module += ".__init__"
    for func in ast.walk(ast.parse(text)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in dict.fromkeys(_imported(node, module)):
                    yield node.lineno, target, lines[node.lineno - 1]


def violations(path: Path) -> list[str]:
    """The function-level imports of ``path`` that break the rule, one message each."""
    found = []
    for line, target, source in _function_imports(path):
        root = target.split(".")[0]
        if root not in ("vlneval", "MatterSim") and root not in HEAVY:
            continue  # the standard library and light packages: not policed
        where = f"{path.relative_to(SRC)}:{line}: {target}"
        mark = DEFERRED.search(source)
        if mark is None:
            found.append(f"{where}: a function-level import without '# deferred: <dep>'")
        elif mark.group(1) not in HEAVY | STARTUP:
            found.append(f"{where}: '{mark.group(1)}' is not a heavy dependency")
        elif mark.group(1) in _pulls(_module_name(path)):
            found.append(f"{where}: {mark.group(1)} is already imported at the module's top")
        elif root in HEAVY and root != mark.group(1):
            found.append(f"{where}: imports {root}, not {mark.group(1)}")
        elif root in ("vlneval", "MatterSim") and mark.group(1) not in _pulls(target):
            found.append(f"{where}: does not import {mark.group(1)} at its top level")
    return list(dict.fromkeys(found))  # a nested function's imports are walked twice


def _sources() -> list[Path]:
    return sorted([*(SRC / "vlneval").rglob("*.py"), SRC / "MatterSim.py"])


def test_function_level_imports_only_defer_heavy_dependencies() -> None:
    found = [v for path in _sources() for v in violations(path)]
    assert found == [], "\n".join(found)


def test_the_startup_path_loads_no_numpy_or_msgspec() -> None:
    code = (
        "import sys, MatterSim, vlneval.cli.main, vlneval.io, vlneval.tasks\n"
        "print(sorted(m for m in ('numpy', 'msgspec') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "VLNEVAL_MATTERSIM": "shim"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_the_checker_catches_each_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "vlneval"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "light.py").write_text("import json\n")
    (pkg / "kern.py").write_text("try:\n    import numba\nexcept ImportError:\n    pass\n")
    (pkg / "user.py").write_text(
        "def a():\n    from vlneval import light\n"
        "def b():\n    from vlneval import light  # deferred: numba\n"
        "def c():\n    from vlneval import kern  # deferred: numba\n"
        "def d():\n    import scipy.sparse  # deferred: scipy\n"
        "def e():\n    import json, os\n"
        "def f():\n    import matplotlib  # deferred: numba\n"
        "def g():\n    from . import kern  # deferred: cycle\n"
    )
    (pkg / "heavy.py").write_text(
        "import numba\ndef h():\n    from vlneval import kern  # deferred: numba\n"
    )
    monkeypatch.setitem(globals(), "SRC", tmp_path)
    _pulls.cache_clear()
    try:
        found = violations(pkg / "user.py") + violations(pkg / "heavy.py")
    finally:
        _pulls.cache_clear()
    assert [f.split(": ", 1)[1] for f in found] == [
        "vlneval.light: a function-level import without '# deferred: <dep>'",
        "vlneval.light: does not import numba at its top level",
        "matplotlib: imports matplotlib, not numba",
        "vlneval.kern: 'cycle' is not a heavy dependency",
        "vlneval.kern: numba is already imported at the module's top",
    ]
