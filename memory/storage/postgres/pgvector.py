"""pgvector on PostgreSQL: the ``embeddings.embedding`` column and its HNSW indexes (issue 17, point 2).

When the ``vector`` extension can be created (migration 21), ``embeddings`` gains a pgvector column
``embedding`` beside the ``vector`` bytes (which stay the source every backend reads the same way).
It is untyped until the database's model is claimed (:func:`index_for_model`): then it becomes
``vector(dim)`` and each kind gets a partial HNSW index (``vector_cosine_ops``:
``embeddings_hnsw_turn``, ``..._card``, ``..._record``). Re-embedding drops them
(:func:`drop_index`) and the next model claim builds them again. No extension (Debian's
PostgreSQL 15 ships none) or the setting ``pgvector=off`` leaves the column out, and
nearest-neighbour search runs in-process exactly as on SQLite.

The setting: ``?pgvector=off`` on the connection URL, or ``MEMFOLD_PGVECTOR=off`` in the
environment. At migration time it keeps the extension and column out; on an open database that
has the column it only sends searches to the in-process path (writes keep filling the column, so
the index stays whole).
"""

from __future__ import annotations

import os

import numpy as np

from ...errors import StorageError
from .db import PostgresDB

#: the environment variable (and URL parameter ``pgvector``) that switches pgvector off
SETTING_ENV = "MEMFOLD_PGVECTOR"
#: pgvector's HNSW index takes vectors of at most this many dimensions (``vector`` type, 0.6-0.8)
HNSW_MAX_DIM = 2000
KINDS = ("turn", "card", "record")
_ON = {"on": True, "1": True, "true": True, "yes": True, "off": False, "0": False, "false": False, "no": False}


def parse_setting(value: str | None, where: str) -> bool:
    """``True`` (use pgvector when present) or ``False`` for a setting value; ``None`` means on.

    :raises StorageError: for a value other than on/off (1/0, true/false, yes/no).
    """
    if value is None or value == "":
        return True
    try:
        return _ON[value.strip().lower()]
    except KeyError:
        raise StorageError(f"bad pgvector setting {value!r} in {where}: use pgvector=on or pgvector=off") from None


def default_setting() -> bool:
    """The environment's setting (``MEMFOLD_PGVECTOR``), on when unset."""
    return parse_setting(os.environ.get(SETTING_ENV), SETTING_ENV)


def enabled(c: PostgresDB) -> bool:
    """Whether this handle may use pgvector (the setting it was opened with)."""
    return getattr(c, "pgvector", True)


def has_column(c: PostgresDB) -> bool:
    """True when ``embeddings`` has the pgvector column (migration 21 found the extension)."""
    return bool(c.value(
        "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('embeddings') "
        "AND attname = 'embedding' AND NOT attisdropped)"))


def literal(vector: np.ndarray) -> str:
    """A vector as pgvector's text form ``[x,y,...]`` (each float32 value round-trips exactly)."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).reshape(-1).tolist())) + "]"


def index_name(kind: str) -> str:
    return f"embeddings_hnsw_{kind}"


def indexed(c: PostgresDB) -> bool:
    """True when the HNSW indexes exist (the column is ``vector(dim)`` for the claimed model)."""
    return bool(c.value("SELECT to_regclass(%s) IS NOT NULL", [index_name("turn")]))


def index_for_model(c: PostgresDB, dim: int) -> bool:
    """Type the column ``vector(dim)`` and build one partial HNSW index per kind (call inside the
    transaction that claims the model). Nothing is built when stored vectors have another
    dimension or ``dim`` is beyond what HNSW indexes take; search then scans exactly in SQL.

    :returns: whether the indexes exist afterwards.
    """
    if dim > HNSW_MAX_DIM or c.value("SELECT EXISTS (SELECT 1 FROM embeddings WHERE dim <> %s)", [dim]):
        return indexed(c)
    typmod = c.value("SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass('embeddings') "
                     "AND attname = 'embedding'")
    if typmod != dim:
        if indexed(c):
            drop_index(c)
        c.run(f"ALTER TABLE embeddings ALTER COLUMN embedding TYPE vector({int(dim)})")
    for kind in KINDS:
        c.run(f"CREATE INDEX IF NOT EXISTS {index_name(kind)} ON embeddings "
              f"USING hnsw (embedding vector_cosine_ops) WHERE kind = '{kind}'")
    return True


def drop_index(c: PostgresDB) -> None:
    """Drop the HNSW indexes and untype the column (before a re-embedding with another model)."""
    for kind in KINDS:
        c.run(f"DROP INDEX IF EXISTS {index_name(kind)}")
    c.run("ALTER TABLE embeddings ALTER COLUMN embedding TYPE vector")


def install(c: PostgresDB) -> bool:
    """Migration 21: create the extension (when allowed and available) and the column, copy any
    stored vectors into it and index them for the database's model.

    :returns: whether the column exists afterwards.
    """
    if not enabled(c):
        return False
    if not c.value("SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')"):
        return False
    try:
        with c.transaction():  # a savepoint: a refused CREATE EXTENSION (no privilege) leaves no trace
            c.run("CREATE EXTENSION IF NOT EXISTS vector")
    except StorageError:
        return False
    c.run("ALTER TABLE embeddings ADD COLUMN embedding vector")
    rows = c.all("SELECT kind, item_id, dim, vector FROM embeddings")
    if rows:
        c.run_many("UPDATE embeddings SET embedding = %s::vector WHERE kind = %s AND item_id = %s",
                   [(literal(np.frombuffer(blob, dtype="<f4", count=dim)), kind, item_id)
                    for kind, item_id, dim, blob in rows])
    dim = c.value("SELECT value FROM meta WHERE key = 'embedding_dim'")
    if dim is not None:
        index_for_model(c, int(dim))
    return True
