"""An import-linter contract for top-level single-file modules (``MatterSim.py``).

import-linter builds its import graph from packages only and refuses a plain module as a root
package, so the top-level ``MatterSim`` module beside ``vlneval`` would never be checked. The
``module_forbidden`` contract reads each source module's imports itself (function-level and
``TYPE_CHECKING`` ones too, as import-linter counts them), adds them to the graph of
``vlneval`` and then checks them exactly as a ``forbidden`` contract does, so an indirect import
(``MatterSim -> vlneval.graph.x -> vlneval.tasks``) breaks it as well.

Registered in ``pyproject.toml`` under ``[tool.importlinter] contract_types``; ``lint-imports``
puts the working directory on ``sys.path``, which is how it finds this file.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from grimp import ImportGraph
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.domain.contract import ContractCheck


def _imports(source: Path) -> list[tuple[list[str], int, str]]:
    """The absolute imports of a Python file: (candidate modules, line number, line text).

    ``from a.b import c`` gives the candidates ``a.b.c`` then ``a.b``: ``c`` may be a module or a
    name defined in ``a.b``.
    """
    text = source.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text, filename=str(source))):
        if isinstance(node, ast.Import):
            groups = [[alias.name] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            groups = [[f"{node.module}.{alias.name}", node.module] for alias in node.names]
        else:
            continue
        found += [(group, node.lineno, lines[node.lineno - 1].strip()) for group in groups]
    return found


def add_module(graph: ImportGraph, module: str) -> None:
    """Add a top-level single-file module and its imports of modules already in ``graph``.

    Each import counts as one of its first candidate that is a module of the graph (grimp's own
    rule); imports of modules outside the graph (the standard library, numpy) are left out.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ValueError(f"module {module} not found on sys.path")
    graph.add_module(module)
    known = graph.modules
    for candidates, line_number, line in _imports(Path(spec.origin)):
        imported = next((name for name in candidates if name in known), None)
        if imported is not None:
            graph.add_import(
                importer=module, imported=imported, line_number=line_number, line_contents=line
            )


class ModuleForbiddenContract(ForbiddenContract):
    """A ``forbidden`` contract whose source modules may be top-level single-file modules.

    Options are those of import-linter's ``forbidden`` contract; each source module that is not
    in the graph is located on ``sys.path`` and its imports are added before the check.
    """

    type_name = "module_forbidden"

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        """Add the missing source modules to ``graph``, then check as ``forbidden`` does."""
        for expression in self.source_modules:  # type: ignore[attr-defined]
            if expression.expression not in graph.modules:
                add_module(graph, expression.expression)
        return super().check(graph, verbose)
