"""The CLI and the demo reach the library only through the facade (issue 12, point 6).

An ast walk over ``cli/`` and ``demo/``: no command touches storage (``.db``, ``.storage``), an
engine part the facade keeps to itself (``.archive``, ``.eraser``, ``.catalog``, ``.searcher``, ``.embeddings``) or
SQL (``execute``), and they import only the facade, their own modules and the few edge modules
listed here. ``python -m memfold.demo`` is the same program as ``memfold demo``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from memfold.cli import cli

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN_ATTRIBUTES = {"db", "storage", "archive", "eraser", "catalog", "execute", "searcher", "embeddings"}
#: what the CLI may import besides the facade and itself: the edge jobs (replay, the scheduler,
#: the demo), one pure formatter of recall items, the output-path check and the stop signals of
#: a foreground process (``memfold worker``)
CLI_IMPORTS = {"replay.report", "replay.runner", "consolidation.scheduler", "demo", "demo.program",
               "window.recall", "memory.paths", "memory.signals",
               "integrations.http", "integrations.mcp",  # the servers: each is one facade-wrapping adapter
               "integrations.viewer"}
DEMO_IMPORTS = {"memory.paths"}


def sources(folder: str):
    return sorted((ROOT / folder).glob("*.py"))


def imported_modules(path: Path, package: str) -> set[str]:
    """memfold modules ``path`` imports, relative to the package root ("" is the facade)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if package else []
            out.add(".".join(base + (node.module.split(".") if node.module else [])))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memfold"):
            out.add(node.module.removeprefix("memfold").lstrip("."))
    return out


def test_cli_and_demo_touch_no_storage_or_engine_parts():
    for path in sources("cli") + sources("demo"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        touched = sorted({n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} & FORBIDDEN_ATTRIBUTES)
        assert not touched, f"{path.relative_to(ROOT)} touches {touched}: add a facade method instead"


def test_cli_and_demo_import_only_the_facade_and_the_edges():
    for folder, allowed in (("cli", CLI_IMPORTS), ("demo", DEMO_IMPORTS)):
        for path in sources(folder):
            imports = imported_modules(path, folder)
            others = {m for m in imports if m != "" and m != folder and not m.startswith(folder + ".")}
            assert others <= allowed, f"{path.relative_to(ROOT)} imports {sorted(others - allowed)}"
            assert folder == "cli" or not any(m == "cli" or m.startswith("cli.") for m in imports)


def test_python_dash_m_memfold_demo_has_the_same_options_as_memfold_demo(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "memfold.demo", "--help"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    via_cli = CliRunner().invoke(cli, ["demo", "--help"], prog_name="memfold")
    assert proc.stdout.replace("python -m memfold.demo", "memfold demo", 1) == via_cli.output


def test_python_dash_m_memfold_demo_reports_errors_in_one_line(tmp_path):
    taken = tmp_path / "taken.db"
    taken.write_text("not empty")
    proc = subprocess.run([sys.executable, "-m", "memfold.demo", "--db", str(taken), "--json"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1
    assert proc.stdout.startswith('{"error": ') and '"type": "InvalidInput"' in proc.stdout
    assert proc.stderr.startswith("Error: ") and len(proc.stderr.strip().splitlines()) == 1
