"""The package's import structure (issue 12, point 2): engines get their parts, never the facade.

Walks every module's imports with ``ast`` (``if TYPE_CHECKING:`` imports count too: they are
edges of the design even when they cost nothing at run time) and checks, for the layers that are
done (``memory``, ``window``), that no import runs up the layers (memory < window < consolidation
< worker < the facade ``__init__.py`` < replay, integrations, demo < cli) and that no import cycle
runs through them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import memfold

ROOT = Path(memfold.__file__).resolve().parent
RANK = {"memory": 0, "window": 1, "consolidation": 2, "worker": 3, "": 4, "replay": 5, "integrations": 5,
        "demo": 5, "cli": 6}
#: the layers whose structure is finished (issue 12); the others are checked as they land
CHECKED = ("memory", "window")


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("tests", "bench") or any(p.startswith(".") for p in rel.parts):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
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
        for w in graph[v]:
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

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _checked(mod: str) -> bool:
    return mod.split(".")[0] in CHECKED


def test_the_walk_sees_the_package():
    graph = _graph()
    assert "window.conversation" in graph and "memory.storage.sqlite.archive" in graph
    assert "window.parts" in graph["window.context"]  # the engines import their parts...
    assert "window.conversation" in graph[""]  # ...and the facade the conversation


def test_memory_and_window_import_nothing_above_them():
    graph = _graph()
    upward = sorted(f"{m or '__init__'} -> {d or '__init__'}" for m, deps in graph.items() if _checked(m)
                    for d in deps if _layer(d) > _layer(m))
    assert upward == []


def test_no_import_cycle_runs_through_memory_or_window():
    cycles = [c for c in _cycles(_graph()) if any(_checked(m) for m in c)]
    assert cycles == []


def test_no_window_engine_imports_the_conversation_handle():
    """The compiled context, compactor, recall tools, tree export, erasure, staleness and the
    protected channel take a WindowParts and a ConversationRef, never the Conversation (or MemFold)."""
    graph = _graph()
    importers = sorted(m for m, deps in graph.items() if "window.conversation" in deps and m != "")
    assert importers == []
