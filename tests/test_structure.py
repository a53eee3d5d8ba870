"""The package's import structure (issue 12, points 1 and 2): engines get their parts, never the
facade; every SQL statement lives in ``memory/storage/``.

Walks every module's imports with ``ast`` (``if TYPE_CHECKING:`` imports and imports inside
functions count too: they are edges of the design even when they cost nothing at run time) over
the whole package and fails on

* an import that runs up the layers (memory < window < consolidation < worker < the facade
  ``__init__.py`` and the top-level modules beside it < replay, integrations, demo < cli; a module
  may import its own layer or a lower one),
* any import cycle (a strongly connected component of more than one module),
* SQL statement text or an ``.execute(`` call outside ``memory/storage/``.

These are the rules of ``shared/tools/structure.py`` (the checker the issue's figures come from),
restated here so the suite keeps them. The walk is checked on a small package written to a temp
folder first, so each rule is seen to fail when it is broken.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import memfold

ROOT = Path(memfold.__file__).resolve().parent
RANK = {"memory": 0, "window": 1, "consolidation": 2, "worker": 3, "": 4, "replay": 5, "integrations": 5,
        "demo": 5, "cli": 6}
SKIP = {"tests", "bench", "build", "dist"}
SQL = re.compile(r"\.execute(many|script)?\(|\bSELECT\b.+\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b")


def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package at ``root``, by dotted name relative to it ("" is ``__init__.py``)."""
    out = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] in SKIP or any(p.startswith(".") or "egg-info" in p for p in rel.parts):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (the most specific module an import names)."""
    mods = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        if mod == "":
            package = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    target = base + (node.module.split(".") if node.module else [])
                elif node.module and node.module.split(".")[0] == "memfold":
                    target = node.module.split(".")[1:]
                else:
                    continue
                names = [".".join(target + [a.name]) for a in node.names] + [".".join(target)]
                found = next((c for c in sorted(names, key=len, reverse=True) if c in mods and c != mod), None)
                if found is not None:
                    graph[mod].add(found)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "memfold":
                        target = ".".join(alias.name.split(".")[1:])
                        if target in mods and target != mod:
                            graph[mod].add(target)
    return graph


def _layer(mod: str) -> int:
    """A module's layer: its top-level folder's rank; ``__init__.py`` and the modules beside it
    (``nightly.py``) are the facade layer."""
    return RANK.get(mod.split(".")[0] if mod else "", RANK[""])


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m or '__init__'} -> {d or '__init__'}" for m, deps in graph.items()
                  for d in deps if _layer(d) > _layer(m))


def _sql_outside_storage(root: Path = ROOT) -> dict[str, int]:
    """Lines of SQL text or ``.execute(`` per file outside ``memory/storage/``."""
    out = {}
    for path in _modules(root).values():
        rel = path.relative_to(root).as_posix()
        if rel.startswith("memory/storage/"):
            continue
        n = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if SQL.search(line))
        if n:
            out[rel] = n
    return out


# -- the walk itself, on a package that breaks every rule ------------------------------------------
BROKEN = {
    "__init__.py": "from .window.a import A\n",
    "nightly.py": "from . import MemFold\n",
    "memory/__init__.py": "",
    "memory/storage/__init__.py": "",
    "memory/storage/sql.py": "def f(db):\n    return db.execute('SELECT x FROM t')\n",
    "memory/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..window.a import A\n",
    "window/__init__.py": "",
    "window/a.py": "from .b import B\n",
    "window/b.py": "def g():\n    from memfold.window import a\n",
    "consolidation/__init__.py": "",
    "consolidation/job.py": "def h():\n    from .. import MemFold\n",
    "replay/__init__.py": "",
    "replay/report.py": "QUERY = 'DELETE FROM turns'\n",
    "tests/test_x.py": "from memfold.cli import cli\n",
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_the_walk_finds_cycles_upward_imports_and_sql_in_a_broken_package(tmp_path):
    root = _write(tmp_path / "pkg", BROKEN)
    graph = _graph(root)
    assert "tests.test_x" not in graph and "nightly" in graph
    assert _cycles(graph) == [["window.a", "window.b"]]  # a function-local import is an edge too
    assert _upward(graph) == ["consolidation.job -> __init__", "memory.low -> window.a"]  # TYPE_CHECKING counts
    assert _sql_outside_storage(root) == {"replay/report.py": 1}  # memory/storage/ may hold SQL
    assert _layer("nightly") == _layer("") == RANK[""]  # a module beside __init__.py is the facade layer


def test_the_walk_sees_the_package():
    graph = _graph()
    assert "window.conversation" in graph and "memory.storage.sqlite.archive" in graph
    assert "window.parts" in graph["window.context"]  # the engines import their parts...
    assert "window.conversation" in graph[""]  # ...and the facade the conversation
    assert "consolidation.parts" in graph["consolidation.consolidate"]
    assert {"", "consolidation.scheduler"} <= graph["nightly"]  # the per-fire opener sits at the facade layer


def test_no_module_imports_above_its_layer():
    assert _upward(_graph()) == []


def test_no_module_below_the_facade_imports_it():
    graph = _graph()
    assert sorted(m for m, deps in graph.items() if "" in deps and _layer(m) < RANK[""]) == []


def test_no_import_cycle_anywhere_in_the_package():
    assert _cycles(_graph()) == []


def test_no_sql_or_execute_outside_memory_storage():
    assert _sql_outside_storage() == {}


def test_no_window_engine_imports_the_conversation_handle():
    """The compiled context, compactor, recall tools, tree export, erasure, staleness and the
    protected channel take a WindowParts and a ConversationRef, never the Conversation (or MemFold)."""
    graph = _graph()
    importers = sorted(m for m, deps in graph.items() if "window.conversation" in deps and m != "")
    assert importers == []
