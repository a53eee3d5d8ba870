"""Storage: the one seam between memfold's policy and a database (DESIGN.md §2-§3).

:func:`open_storage` is the only place a path (or an open database) becomes a backend. The
Protocols every backend implements are in :mod:`.base`; the embedded SQLite backend is in
:mod:`.sqlite`, the scale-out PostgreSQL backend in :mod:`.postgres` (opened for a
``postgresql://`` URL; its driver is imported only then). Nothing outside this package runs SQL
or sees a driver error.
"""

from __future__ import annotations

import os
from typing import Any

import sqlite_utils

from ..paths import check_database_target, is_database_url
from .base import Storage
from .sqlite import SqliteStorage
from .sqlite.connection import open_database


def resolve_target(target: "str | os.PathLike") -> str:
    """A stable name for a database: a URL as given, a file path made absolute (one name per
    database in a process, e.g. for its stop events)."""
    if is_database_url(target):
        return str(target)
    from pathlib import Path

    return str(Path(target).resolve())


def job_store_options(target: "str | os.PathLike") -> "tuple[str, dict[str, Any]]":
    """``(SQLAlchemy URL, engine options)`` of APScheduler's job store living in the same database
    as memfold's tables: ``sqlite:///<file>`` with a busy timeout, or ``postgresql+psycopg://...``
    (the scheduler is the one part that reaches the database through SQLAlchemy)."""
    if is_database_url(target):
        from .postgres.connection import split_url

        libpq, _ = split_url(str(target))
        return "postgresql+psycopg://" + libpq.split("://", 1)[1], {"pool_pre_ping": True}
    return f"sqlite:///{resolve_target(target)}", {"connect_args": {"timeout": 30}}


def open_storage(
    target: "str | os.PathLike | sqlite_utils.Database | Storage | None" = None,
    clock_kind: str | None = None,
    *,
    create: bool = True,
    vector_index: str | None = None,
) -> Storage:
    """Open a backend and bring it to the newest schema.

    :param target: a SQLite file path, ``None``/``":memory:"`` for an in-memory database, an open
        ``sqlite_utils.Database``, a ``postgresql://`` connection string (optionally with
        ``?pool_size=N``), or an already opened :class:`Storage` (returned as it is after the
        clock check).
    :param clock_kind: ``"logical"`` or ``"system"``: recorded on first open and checked after.
    :param create: when False, a file that is not a memfold database yet is refused.
    :param vector_index: how SQLite finds nearest vectors: ``"exact"`` (scan the scope's vectors)
        or ``"ann"`` (an HNSW graph for large scopes, :mod:`.ann`; the ``ann`` extra); ``None``:
        ``MEMFOLD_VECTOR_INDEX``, else ``"exact"`` (an opened storage keeps its own). PostgreSQL
        ignores it: there ``nearest`` runs on pgvector's HNSW index.
    :raises InvalidInput: for another ``vector_index``.
    :raises MissingExtra: for ``vector_index="ann"`` without hnswlib (nothing is opened).
    :raises SchemaTooNew: if the file was written by a newer memfold.
    :raises ClockError: if the file was written with another kind of clock.
    :raises StorageError: if the target cannot be opened or belongs to another application.
    """
    from .ann import check_vector_index

    check_database_target(target)
    index = check_vector_index(vector_index, sqlite=not (getattr(target, "kind", None) == "postgres"
                                                        or is_database_url(target)))
    if isinstance(target, SqliteStorage):
        open_database(target.db, clock_kind, create=create)
        if vector_index is not None:
            target.vectors.vector_index = index
        return target
    if getattr(target, "kind", None) == "postgres":
        from .postgres.connection import migrate

        migrate(target.c, clock_kind, create=create)
        return target
    if is_database_url(target):
        from .postgres import PostgresStorage
        from .postgres.connection import open_database as open_postgres

        return PostgresStorage(open_postgres(str(target), clock_kind, create=create))
    return SqliteStorage(open_database(target, clock_kind, create=create), vector_index=index)


__all__ = ["Storage", "SqliteStorage", "open_storage"]
