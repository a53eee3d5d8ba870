"""The README cannot drift (STYLE.md rule 17): every ```python block runs, every ``memfold``
command it names exists with the options it shows, and the ``memfold window`` example prints the
lines pasted under it.

Python blocks run as they are, each in a fresh temporary folder as its own process, offline
(``HF_HUB_OFFLINE=1``): a snippet a user copies must work on a fresh machine without network.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memfold.cli import cli

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.S | re.M)
BLOCKS = [(m.group(1), m.group(2), m.start()) for m in FENCE.finditer(TEXT)]
PYTHON = [(body, TEXT.count("\n", 0, start) + 1) for lang, body, start in BLOCKS if lang == "python"]
BASH = [body for lang, body, _ in BLOCKS if lang == "bash"]
#: ``memfold <word>`` at the start of a shell command (line start, after &&, ||, ;, |, or $( )
MEMFOLD_AT = re.compile(r"(?:^|&&|\|\||;|\||\$\()\s*memfold\s+(.*)")


def test_readme_has_the_blocks_this_file_checks():
    assert len(PYTHON) >= 6, "the README lost python examples"
    assert len(BASH) >= 8, "the README lost command examples"


#: the command blocks a reader runs on the quick start's agent.db, by their first command: they
#: run in the order written, between the python blocks (the others start servers, replay data
#: sets or are checked by their own tests below)
IN_ORDER_BASH = ("memfold init agent.db  ", "memfold policy agent.db", "memfold protect add agent.db",
                 "memfold context agent.db -c ticket-42 --reader")
STEPS = [(lang, body, TEXT.count("\n", 0, start) + 1) for lang, body, start in BLOCKS
         if lang == "python" or (lang == "bash" and body.startswith(IN_ORDER_BASH))]
#: ``memfold`` in a command block: this interpreter's memfold, whatever is on PATH
MEMFOLD_FUNCTION = (f'memfold() {{ {shlex.quote(sys.executable)} -c "import sys; from memfold.cli import main; '
                    f'sys.argv[0] = \'memfold\'; main()" "$@"; }}\n')


@pytest.fixture(scope="module")
def reader_folder(tmp_path_factory):
    """One folder for the whole README, as a reader following it top to bottom has."""
    return tmp_path_factory.mktemp("readme-in-order")


def test_the_in_order_run_covers_the_quick_starts():
    firsts = [body.splitlines()[0] for lang, body, _ in STEPS if lang == "bash"]
    assert len(firsts) == len(IN_ORDER_BASH), f"a command block this file runs is gone: {firsts}"
    assert sum(lang == "python" for lang, _, _ in STEPS) == len(PYTHON)


@pytest.mark.parametrize("lang,body,line", STEPS, ids=[f"README.md:{line}:{lang}" for lang, _, line in STEPS])
def test_readme_blocks_run_in_the_order_written(lang, body, line, reader_folder):
    """Every python block, and the command blocks on agent.db, run one after the other in one
    folder (issue 20, point 8): the library quick start after or before the CLI quick start, the
    ids the later examples name (``memfold pin agent.db 1``) exist in the database they made."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    env.pop("MEMFOLD_DB", None)
    if lang == "python":
        command = [sys.executable, "-c", body]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", MEMFOLD_FUNCTION + body]
    result = subprocess.run(command, cwd=reader_folder, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"the {lang} block at README.md line {line} failed after the blocks before it:\n"
        f"{result.stdout[-1500:]}\n{result.stderr[-3000:]}")
    assert result.stdout.strip(), f"the {lang} block at README.md line {line} printed nothing"
    assert "Traceback" not in result.stderr and "Warning" not in result.stderr, result.stderr[-3000:]


def test_python_quick_start_runs_right_after_the_cli_quick_start(tmp_path):
    """The other order: a reader who starts with the command line, then opens agent.db in Python."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("MEMFOLD_DB", None)
    cli_start, _ = block_after("## Quick start (CLI)", "bash")
    library, _ = block_after("## Quick start (library)", "python")
    done = subprocess.run(["bash", "-e", "-c", MEMFOLD_FUNCTION + cli_start], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    done = subprocess.run([sys.executable, "-c", library], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Where is my order ORD-3300?" in done.stdout  # the CLI's ingested turn, then the library's


def shell_commands(body: str) -> list[str]:
    """The ``memfold ...`` commands of a bash block, without comments or redirections, as the
    words after ``memfold``."""
    commands = []
    for raw in body.splitlines():
        line = raw.split(" #", 1)[0] if not raw.lstrip().startswith("#") else ""
        for segment in re.split(r"&&|\|\||;", line):
            match = MEMFOLD_AT.match(segment.strip())
            if match:
                commands.append(re.sub(r"\s[12]?>\s*\S+", "", match.group(1)).strip())
    return commands


README_COMMANDS = [c for body in BASH for c in shell_commands(body)]


def resolve(words: list[str]) -> tuple[click.Command, list[str], list[str]]:
    """The (sub)command the words name, its path and the remaining words.
    :raises AssertionError: naming an unknown command."""
    command: click.Command = cli
    path: list[str] = []
    while isinstance(command, click.Group):
        assert words, f"'memfold {' '.join(path)}' needs a subcommand: {sorted(command.commands)}"
        name = words[0]
        assert name in command.commands, (
            f"the README names 'memfold {' '.join(path + [name])}', which is not a command; "
            f"commands: {sorted(command.commands)}")
        command, path, words = command.commands[name], path + [name], words[1:]
    return command, path, words


def test_readme_names_commands():
    firsts = {c.split()[0] for c in README_COMMANDS}
    assert {"init", "window", "replay", "policy", "protect", "search"} <= firsts


def test_commands_named_in_the_prose_exist():
    named = set(re.findall(r"`memfold ([a-z][a-z-]*)", TEXT))
    assert {"demo", "reembed", "search"} <= named
    for name in sorted(named):
        assert name in cli.commands, f"the README names `memfold {name}`, which is not a command"


@pytest.mark.parametrize("command_line", README_COMMANDS)
def test_readme_command_exists_with_its_options(command_line):
    words = [w.strip("[]") for w in shlex.split(command_line)]
    command, path, rest = resolve(words)
    known = {"--help", "-h"}
    for param in command.params:
        known.update(param.opts)
        known.update(param.secondary_opts)
    for word in rest:
        if re.match(r"^--?[A-Za-z]", word):
            option = word.split("=", 1)[0]
            assert option in known, (
                f"'memfold {' '.join(path)}' has no option {option} (README: memfold {command_line}); "
                f"options: {sorted(known)}")


def block_after(marker: str, lang: str, start: int = 0) -> tuple[str, int]:
    """The first block of ``lang`` after the text ``marker`` (from ``start``), and where it ends."""
    at = TEXT.index(marker, start)
    for block_lang, body, block_start in BLOCKS:
        if block_start > at and block_lang == lang:
            return body, block_start + len(body)
    raise AssertionError(f"no {lang} block after {marker!r}")


def test_window_example_prints_the_lines_in_the_readme(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMFOLD_DB", raising=False)
    section = TEXT.index("<!-- section: window -->")
    commands, end = block_after("CLI (each with `--json`; the window options", "bash", section)
    expected, end = block_after("", "text", end)
    runner = CliRunner()
    window_output = None
    for line in shell_commands(commands):
        result = runner.invoke(cli, shlex.split(line), catch_exceptions=False)
        assert result.exit_code == 0, f"memfold {line}\n{result.output}"
        if line.startswith("window "):
            window_output = result.stdout
    assert window_output is not None, "the window example block has no memfold window command"
    assert window_output == expected, "README's memfold window lines differ from a real run"
    # the commands that inspect what the run wrote work on it too (card ids included)
    follow_up, _ = block_after("", "bash", end)
    ran = 0
    for line in shell_commands(follow_up):
        result = runner.invoke(cli, shlex.split(line), catch_exceptions=False)
        assert result.exit_code == 0, f"memfold {line}\n{result.output}"
        ran += 1
    assert ran >= 5
