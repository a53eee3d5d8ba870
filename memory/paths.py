"""Output paths checked before work starts, so a long job never fails at its very end.

A command that runs for a while and then writes a file (a replay report, the demo's database or
plot, an export) checks the path first: when it cannot be written the caller learns it at once,
with nothing run and nothing written. The probe never truncates an existing file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable

from .errors import InvalidInput


#: connection-string schemes that name a database server rather than a file (issue 17)
DATABASE_URL_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def is_database_url(target: object) -> bool:
    """True when a database target names a server (``postgresql://...``) rather than a file."""
    return isinstance(target, str) and target.startswith(DATABASE_URL_SCHEMES)


def check_database_target(target: object) -> None:
    """Refuse a database target that names no file, server or open database (round 13: ``5``
    and ``b"x.db"`` raised TypeError, a NUL byte ValueError, ``""`` opened the folder ``.`` and
    ``mysql://...`` was looked for as a file). Storages and open databases pass unchecked.

    :raises InvalidInput: naming the target and what is accepted.
    """
    if target is None or hasattr(target, "conn") or hasattr(target, "kind"):
        return  # in memory, an open sqlite_utils.Database, or a Storage
    if isinstance(target, bytes) or not isinstance(target, (str, os.PathLike)):
        raise InvalidInput(f"the database must be a file path (str or os.PathLike) or a postgresql:// URL, "
                           f"got {type(target).__name__} {target!r}")
    text = os.fspath(target)
    if not isinstance(text, str):
        raise InvalidInput(f"the database path must be text, got {text!r}")
    if not text.strip():
        raise InvalidInput("the database path is empty: give a file such as agent.db")
    if "\x00" in text:
        raise InvalidInput(f"the database path {text!r} contains a NUL byte")
    scheme = text.split("://", 1)[0] if "://" in text else None
    if scheme is not None and scheme.isidentifier() and not is_database_url(text):
        raise InvalidInput(f"unsupported database URL {scheme}://...: memfold opens a SQLite file path or a "
                           f"{', '.join(DATABASE_URL_SCHEMES)} URL")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def check_output_path(path: str | os.PathLike, option: str, *, folder: bool = False,
                      keep: Iterable[tuple[str | os.PathLike | None, str]] = ()) -> None:
    """Refuse an output path that cannot be written, before any work runs (so none is lost).

    For a file: it must not be a folder, its folder must exist, and a file must be creatable or
    appendable there (probed by creating and removing an empty file; an existing file is opened for
    append, never truncated). For a folder (``folder=True``): it must not be a file, and a folder
    must be creatable under its nearest existing ancestor (probed the same way). ``"-"`` (stdout)
    passes.

    :param path: the file (or folder) about to be written.
    :param option: the option or argument name shown in the message, e.g. ``"--json"``.
    :param folder: check a folder to be created or filled instead of a file.
    :param keep: ``(path, what)`` pairs the output must not be: the database (and its ``-wal``,
        ``-shm`` and ``-journal`` files) or an input file; ``memfold export agent.db -o agent.db``
        truncated the database it was reading (round 15). A ``None`` path or a database URL is skipped.
    :raises InvalidInput: ``cannot write --json /x/r.json: folder /x does not exist`` and the like.
    """
    path = os.fspath(path)
    if path == "-":
        return

    def refuse(reason: str) -> None:
        raise InvalidInput(f"cannot write {option} {path}: {reason}")

    def reason_of(exc: OSError) -> str:
        return (exc.strerror or str(exc)).lower()

    if folder:
        if os.path.exists(path) and not os.path.isdir(path):
            refuse("it exists and is not a folder")
        base = os.path.abspath(path)
        while not os.path.exists(base):
            base = os.path.dirname(base)
        if not os.path.isdir(base):
            refuse(f"{base} is not a folder")
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".memfold-probe-", dir=base))
        except OSError as exc:
            refuse(f"cannot create a folder in {base} ({reason_of(exc)})")
        return
    for kept, what in keep:
        if kept is None or is_database_url(str(kept)):
            continue
        kept = os.fspath(kept)
        names = [kept] + ([kept + suffix for suffix in ("-wal", "-shm", "-journal")] if what == "the database" else [])
        if any(_same_file(path, name) for name in names):
            refuse(f"it is {what} ({kept}): writing there would destroy it; choose another file")
    if os.path.isdir(path):
        refuse("it is a folder")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        refuse(f"folder {os.path.dirname(path) or parent} does not exist")
    existed = os.path.exists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        refuse(reason_of(exc))
    if not existed:
        os.remove(path)
