"""The demo as a program: its options and its output, shared by ``memfold demo`` and ``python -m memfold.demo``.

Both entry points take the same options (:func:`options`), run :func:`play` and print with
:func:`show`, so they cannot drift apart; the demo layer never imports the CLI (DESIGN.md §2).
Output paths are checked before the demo runs, so a bad ``--db`` or ``--plot`` wastes no work.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass

import click

from ..memory.paths import check_output_path
from .acts import DemoResult, run_demo
from .plot import plot_meter
from .session import WINDOW

#: the help text of both entry points
HELP = """Play the seed demo: compaction, forgetting and consolidation of one support ticket.

Offline and deterministic (logical clock, word tokens): every run prints the same bytes.
"""


def options(fn):
    """The demo's options: ``--db PATH``, ``--plot FILE.png``, ``--llm`` and ``--json``."""
    fn = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(fn)
    fn = click.option("--llm", "use_llm", is_flag=True,
                      help="Fold and consolidate with the LLM of MEMFOLD_LLM_BASE_URL / MEMFOLD_LLM_MODEL "
                           "(/ MEMFOLD_LLM_API_KEY) instead of the seed's offline parts.")(fn)
    fn = click.option("--plot", "plot_path", type=click.Path(), default=None,
                      help="Also draw the window meter (words per turn against the budget) into this PNG file.")(fn)
    fn = click.option("--db", "db_path", type=click.Path(), default=None,
                      help="Write the demo's database here (a new file) to inspect it afterwards; "
                           "default a temporary file.")(fn)
    return fn


@dataclass(frozen=True)
class DemoRun:
    """One played demo: what :func:`~memfold.demo.acts.run_demo` returned and where it wrote.

    :param result: the transcript and its figures.
    :param db_path: the kept database file, or ``None`` (a temporary file, deleted).
    :param plot_path: the PNG the meter was drawn into, or ``None``.
    """

    result: DemoResult
    db_path: str | None = None
    plot_path: str | None = None

    def to_dict(self) -> dict:
        """The JSON the demo prints with ``--json``: the result's dict plus ``db`` and ``plot``."""
        return {**self.result.to_dict(), "db": self.db_path, "plot": self.plot_path}

    @property
    def text(self) -> str:
        """The human output: the transcript, a blank line, where the database is, and the plot."""
        lines = [self.result.text,
                 f"database: {self.db_path} (inspect it: memfold memories {self.db_path} --all)" if self.db_path
                 else "database: a temporary file, now deleted (keep one with --db PATH)"]
        if self.plot_path:
            lines.append(f"window meter drawn in {self.plot_path}")
        return "\n".join(lines) + "\n"


def play(db_path: str | os.PathLike | None = None, plot_path: str | os.PathLike | None = None, *,
         llm: bool = False) -> DemoRun:
    """Play the demo into ``db_path`` (default a temporary file) and draw its meter into ``plot_path``.

    :param db_path: a new database file to keep; it must not hold data yet.
    :param plot_path: a PNG file to draw the window meter into (``None``: no plot).
    :param llm: use the ``MEMFOLD_LLM_*`` endpoint (see :func:`~memfold.demo.acts.run_demo`).
    :returns: the :class:`DemoRun`.
    :raises InvalidInput: for a path that cannot be written or a database that already holds
        data, before the demo runs.
    """
    db_path = None if db_path is None else os.fspath(db_path)
    plot_path = None if plot_path is None else os.fspath(plot_path)
    if db_path is not None:
        check_output_path(db_path, "--db")
    if plot_path is not None:
        check_output_path(plot_path, "--plot")
    with tempfile.TemporaryDirectory(prefix="memfold-demo-") as tmp:
        result = run_demo(db_path or os.path.join(tmp, "demo.db"), llm=llm)
    if plot_path:
        plot_meter(result.meter, WINDOW.usable_tokens, plot_path)
    return DemoRun(result, db_path, plot_path)


def show(run: DemoRun, *, as_json: bool = False) -> None:
    """Print a played demo: the human text, or its JSON (indented) with ``as_json``."""
    if as_json:
        click.echo(json.dumps(run.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(run.text, nl=False)
