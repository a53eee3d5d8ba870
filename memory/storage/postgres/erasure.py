"""PostgreSQL: scrubbing erased content from every table and index (implements :class:`memfold.memory.storage.base.ErasureStorage`).

Erasure is the one family allowed to reach across every other one: it resolves an erasure's
scope over ``turns``, ``records``, ``protected`` and ``cards``, blanks their content and drops
their full-text rows (``*_fts``) and vectors in the same transaction, and then makes the bytes
leave the table files (``VACUUM FULL``, which rewrites each table and rebuilds its indexes).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ...errors import InvalidInput, StorageError

#: what an erased event's details become (migration 15 lets an event be updated to exactly this)
SCRUBBED_DETAILS = '{"erased":true}'
from .db import PostgresDB

#: the erasable items: kind -> (table, the column saying "erased", its erased value)
_ERASABLE = {
    "turn": ("turns", "erased", 1),
    "record": ("records", "status", "erased"),
    "protected": ("protected", "state", "erased"),
}


def _table(kind: str) -> tuple[str, str, object]:
    try:
        return _ERASABLE[kind]
    except KeyError:
        raise InvalidInput(f"unknown erasable kind {kind!r}: use one of {', '.join(_ERASABLE)}") from None


class PostgresErasure:
    """Scrubbing erased content from every table and index, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c

    # -- resolving a scope (reads) ---------------------------------------------------------
    def exists(self, kind: str, item_id: int) -> bool:
        """True when a ``turn``, ``record`` or ``protected`` row with this id exists (erased or not)."""
        table = _table(kind)[0]
        return self.c.one(f"SELECT 1 FROM {table} WHERE id = %s", [item_id]) is not None

    def conversation_exists(self, conversation_id: str) -> bool:
        """True when the conversation exists (reads ``conversations``)."""
        return self.c.one("SELECT 1 FROM conversations WHERE id = %s", [conversation_id]) is not None

    def namespace_ids(self, namespace: str) -> tuple[list[int], list[int], list[int]]:
        """Ids of the turns (of the namespace's conversations), memory records and protected
        records in ``namespace`` (spans ``turns``, ``conversations``, ``records``, ``protected``)."""
        turns = [r[0] for r in self.c.all(
            "SELECT t.id FROM turns t JOIN conversations c ON c.id = t.conversation_id WHERE c.namespace = %s",
            [namespace])]
        records = [r[0] for r in self.c.all("SELECT id FROM records WHERE namespace = %s", [namespace])]
        protected = [r[0] for r in self.c.all("SELECT id FROM protected WHERE namespace = %s", [namespace])]
        return turns, records, protected

    def conversation_ids(self, conversation_id: str) -> tuple[list[int], list[int]]:
        """Ids of the conversation's own turns and of its conversation-scoped protected records
        (spans ``turns`` and ``protected``)."""
        turns = [r[0] for r in self.c.all("SELECT id FROM turns WHERE conversation_id = %s", [conversation_id])]
        protected = [r[0] for r in self.c.all("SELECT id FROM protected WHERE conversation_id = %s",
                                              [conversation_id])]
        return turns, protected

    def citing_ids(self, turn_ids: Iterable[int]) -> tuple[set[int], set[int]]:
        """Ids of the memory records and of the protected records whose provenance cites one of
        ``turn_ids`` (``"turn:<id>"``), erased or not (spans ``records`` and ``protected``)."""
        return self.citing_sources(f"turn:{t}" for t in turn_ids)

    def citing_sources(self, sources: Iterable[str]) -> tuple[set[int], set[int]]:
        """Ids of the memory records and of the protected records whose provenance cites one of
        ``sources`` (``"turn:<id>"`` or ``"record:<id>"``), erased or not (issue 15)."""
        cites = sorted(set(sources))
        out: tuple[set[int], set[int]] = (set(), set())
        if not cites:
            return out
        for table, target in (("records", out[0]), ("protected", out[1])):
            target.update(r[0] for r in self.c.all(
                f"SELECT id FROM {table} WHERE provenance != '[]' AND provenance::jsonb ?| %s", [cites]))
        return out

    def has_cards(self) -> bool:
        """True when the database has the window's summary cards (``card_covers``, migration 3 on)."""
        return self.c.value("SELECT to_regclass('card_covers')") is not None

    def live_ids(self, kind: str, ids: Iterable[int]) -> list[int]:
        """The ``turn``, ``record`` or ``protected`` ids among ``ids`` that are not erased yet, sorted."""
        table, column, gone = _table(kind)
        wanted = sorted(set(int(i) for i in ids))
        if not wanted:
            return []
        return [r[0] for r in self.c.all(f"SELECT id FROM {table} WHERE id = ANY(%s) AND {column} != %s ORDER BY id",
                                         [wanted, gone])]

    def live_card_ids(self, card_ids: Iterable[int]) -> list[int]:
        """The card ids among ``card_ids`` that are not erased yet, in the order given."""
        order = list(card_ids)
        if not order:
            return []
        live = {r[0] for r in self.c.all("SELECT id FROM cards WHERE id = ANY(%s) AND erased = 0", [order])}
        return [c for c in order if c in live]

    # -- blanking (call inside one transaction) ---------------------------------------------
    def secure_delete(self) -> None:
        """Nothing to switch on: PostgreSQL rewrites a table's files in :meth:`vacuum` (``VACUUM FULL``)."""

    def blank_turns(self, turn_ids: Iterable[int]) -> None:
        """Blank archived turns (``erased 0 -> 1``, the archive's one allowed update); their
        full-text entries and vectors go in the same transaction."""
        ids = [int(t) for t in turn_ids]
        if not ids:
            return
        self.c.run("UPDATE turns SET content = '', tool_calls = NULL, name = NULL, metadata = '{}', "
                   "sha256 = 'erased', erased = 1 WHERE id = ANY(%s) AND erased = 0", [ids])
        self.c.run("DELETE FROM turns_fts WHERE id = ANY(%s)", [ids])
        self.c.run("DELETE FROM embeddings WHERE kind = 'turn' AND item_id = ANY(%s)", [ids])

    def blank_records(self, record_ids: Iterable[int]) -> None:
        """Blank memory records (status ``erased``: content, metadata and the slot key, which may be
        built from content, issue 15); their full-text entries and vectors go too."""
        ids = [int(r) for r in record_ids]
        if not ids:
            return
        self.c.run("UPDATE records SET content = '', metadata = '{}', key = NULL, status = 'erased' WHERE id = ANY(%s)",
                   [ids])
        self.c.run("DELETE FROM records_fts WHERE id = ANY(%s)", [ids])
        self.c.run("DELETE FROM embeddings WHERE kind = 'record' AND item_id = ANY(%s)", [ids])

    def blank_protected(self, protected_ids: Iterable[int], *, changed_at: float) -> None:
        """Blank protected records (state ``erased`` at ``changed_at``)."""
        ids = [int(p) for p in protected_ids]
        if ids:
            self.c.run("UPDATE protected SET text = '', metadata = '{}', state = 'erased', changed_at = %s "
                       "WHERE id = ANY(%s)", [changed_at, ids])

    def blank_cards(self, card_ids: Iterable[int]) -> None:
        """Blank summary cards (``erased 0 -> 1``, no tokens); their full-text entries and vectors go
        too, and so do the mechanical index of a fold whose result the card is and its strategy
        frame's brief and report (issue 14)."""
        ids = [int(c) for c in card_ids]
        if not ids:
            return
        self.c.run("UPDATE cards SET text = '', tokens = 0, erased = 1 WHERE id = ANY(%s)", [ids])
        # what was derived with a card that is a fold result (issue 14): the index, the frame's brief and report
        self.c.run("UPDATE folds SET index_json = '{}' WHERE card_id = ANY(%s)", [ids])
        self.c.run("UPDATE strategy_frames SET report = NULL, brief = '' WHERE fold_id IN "
                   "(SELECT id FROM folds WHERE card_id = ANY(%s))", [ids])
        self.c.run("DELETE FROM cards_fts WHERE id = ANY(%s)", [ids])
        self.c.run("DELETE FROM embeddings WHERE kind = 'card' AND item_id = ANY(%s)", [ids])

    def scrub_events(self, *, subjects: Iterable[str], record_ids: Iterable[int], texts: Iterable[str]) -> int:
        """Blank the details and cause of every event about an erased item (its ``subject`` is one
        of ``subjects``, or its ``record_id`` one of ``record_ids``) or naming one of ``texts``;
        the event's time, kind and subject stay. :returns: how many events were scrubbed."""
        subs, rids = sorted(set(subjects)), sorted(set(int(r) for r in record_ids))
        words = sorted({t for t in texts if t and len(t) >= 3})
        clauses, params = [], []
        if subs:
            clauses.append("subject = ANY(%s)")
            params.append(subs)
        if rids:
            clauses.append("record_id = ANY(%s)")
            params.append(rids)
        for w in words:
            clauses.append("(strpos(details, %s) > 0 OR strpos(cause, %s) > 0)")
            params += [w, w]
        if not clauses:
            return 0
        return self.c.run(f"UPDATE events SET details = %s, cause = '' WHERE kind != 'erase' AND details != %s AND "
                          f"({' OR '.join(clauses)})", [SCRUBBED_DETAILS, SCRUBBED_DETAILS, *params]).rowcount

    def scrub_replaced_texts(self, protected_ids: Iterable[int]) -> int:
        """Remove the text of erased protected records from the ``replaces_text`` of every record
        that names them as replaced (issue 15). :returns: how many records were rewritten."""
        gone = set(int(p) for p in protected_ids)
        if not gone:
            return 0
        rows = self.c.all("SELECT id, metadata FROM protected WHERE metadata LIKE '%%replaces%%'")
        texts = {r[0]: r[1] for r in self.c.all("SELECT id, text FROM protected WHERE id = ANY(%s)", [sorted(gone)])}
        changed = 0
        for rid, raw in rows:
            meta = json.loads(raw)
            ids = [i for i in meta.get("replaces", []) if isinstance(i, int)]
            if not gone & set(ids):
                continue
            drop = {texts.get(i) for i in gone & set(ids)}
            meta["replaces_text"] = [t for t in meta.get("replaces_text", []) if t not in drop]
            meta["replaces"] = [i for i in ids if i not in gone]
            meta["replaces_erased"] = sorted(set(meta.get("replaces_erased", [])) | (gone & set(ids)))
            self.c.run("UPDATE protected SET metadata = %s WHERE id = %s",
                       [json.dumps(meta, sort_keys=True, ensure_ascii=False), rid])
            changed += 1
        return changed

    def fts_integrity(self) -> list[str]:
        """The full-text tables whose rows disagree with their items (an index row for an erased
        item, or a live item without one); :returns: their names (empty when all agree)."""
        checks = {
            "turns_fts": "SELECT (SELECT COUNT(*) FROM turns_fts f JOIN turns t ON t.id = f.id AND t.erased = 0) "
                         "= (SELECT COUNT(*) FROM turns_fts) AND (SELECT COUNT(*) FROM turns_fts) = "
                         "(SELECT COUNT(*) FROM turns WHERE erased = 0)",
            "cards_fts": "SELECT (SELECT COUNT(*) FROM cards_fts f JOIN cards k ON k.id = f.id AND k.erased = 0) "
                         "= (SELECT COUNT(*) FROM cards_fts) AND (SELECT COUNT(*) FROM cards_fts) = "
                         "(SELECT COUNT(*) FROM cards WHERE erased = 0)",
            "records_fts": "SELECT (SELECT COUNT(*) FROM records_fts f JOIN records r ON r.id = f.id "
                           "AND r.status != 'erased') = (SELECT COUNT(*) FROM records_fts) AND "
                           "(SELECT COUNT(*) FROM records_fts) = (SELECT COUNT(*) FROM records WHERE status != 'erased')",
        }
        return [name for name, sql in checks.items() if not self.c.value(sql, default=False)]

    # -- making the bytes leave the files --------------------------------------------------
    #: the tables whose rows may have held erased text (``VACUUM FULL`` rewrites their files)
    VACUUM_TABLES = ("turns", "turns_fts", "records", "records_fts", "cards", "cards_fts", "protected",
                     "embeddings", "events", "catalog_items", "folds", "strategy_frames")

    @staticmethod
    def _drop_statistics_of_empty(conn: Any, table: str) -> None:
        """ANALYZE keeps the old statistics of a table it finds empty (an erasure can empty one):
        delete them, which PostgreSQL lets only a superuser do.

        :raises ErasureIncomplete: when they exist and this role may not delete them."""
        import psycopg

        from ...errors import ErasureIncomplete

        if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0]:
            return  # ANALYZE sampled the live rows anew
        if not conn.execute("SELECT EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = current_schema() "
                            "AND tablename = %s)", [table]).fetchone()[0]:
            return
        try:
            conn.execute("DELETE FROM pg_catalog.pg_statistic WHERE starelid = %s::regclass", [table])
        except psycopg.errors.InsufficientPrivilege as exc:
            raise ErasureIncomplete(
                f"erased content may remain in PostgreSQL's statistics of the now empty table {table}: only a "
                "superuser may delete them; the erasure is committed and hidden. Run ANALYZE on it once it "
                "holds rows again, or have a superuser delete its rows of pg_statistic") from exc

    def vacuum(self, *, wait_seconds: float = 10.0) -> None:
        """``VACUUM FULL`` every table that may have held erased text: each is rewritten into new
        files without the dead row versions the blanking left, and its indexes (the GIN
        full-text ones included) are rebuilt. What stays outside memfold's reach is stated in the
        README ("Running on PostgreSQL", erasure): WAL segments not yet recycled, base backups
        and replicas' copies.

        ``VACUUM FULL`` needs each table to itself: another connection's open read holds it, and
        the wait for it is bounded by ``wait_seconds`` (``lock_timeout``).

        :raises StorageError: if called inside a transaction.
        :raises ErasureIncomplete: when another connection still holds a table after the wait.
        """
        if self.c.in_transaction:
            raise StorageError("vacuum cannot run inside a transaction: call it after the erasure commits")
        import psycopg

        from ...errors import ErasureIncomplete

        self.c.statements += len(self.VACUUM_TABLES)
        with self.c.pool.connection() as conn:  # one connection: its lock_timeout bounds the wait
            try:
                conn.execute(f"SET lock_timeout = {max(1, int(wait_seconds * 1000))}")
                for table in self.VACUUM_TABLES:
                    try:
                        conn.execute(f"VACUUM FULL {table}")
                    except psycopg.errors.LockNotAvailable as exc:
                        raise ErasureIncomplete(
                            f"erased content may remain in the old files of table {table}: another connection "
                            f"(another process or MemFold on the database) held it open for {wait_seconds:g} s, so "
                            "VACUUM FULL could not rewrite it; the erasure is committed and hidden, but do not "
                            "report it complete: let that reader finish and call vacuum() again") from exc
                    except psycopg.Error as exc:
                        raise StorageError(f"VACUUM FULL {table} failed: {str(exc).strip()}") from exc
                # the planner's statistics keep sampled column values (pg_statistic's most common
                # values and histograms, filled by ANALYZE, which autovacuum runs): sample the
                # blanked tables again, then rewrite pg_statistic without the old rows (the
                # database's owner or a superuser may; the README says what remains otherwise)
                try:
                    for table in self.VACUUM_TABLES:
                        conn.execute(f"ANALYZE {table}")
                        self._drop_statistics_of_empty(conn, table)
                    conn.execute("VACUUM FULL pg_catalog.pg_statistic")
                except psycopg.errors.LockNotAvailable as exc:
                    raise ErasureIncomplete(
                        f"erased content may remain in PostgreSQL's statistics: another connection held them for "
                        f"{wait_seconds:g} s; the erasure is committed and hidden, call vacuum() again") from exc
                except psycopg.Error as exc:
                    raise StorageError(f"refreshing the statistics after VACUUM FULL failed: {str(exc).strip()}") from exc
            finally:
                try:
                    conn.execute("RESET lock_timeout")
                except psycopg.Error:
                    pass
