"""SQLite: scrubbing erased content from every table and index (implements :class:`memfold.memory.storage.base.ErasureStorage`).

Erasure is the one family allowed to reach across every other one: it resolves an erasure's
scope over ``turns``, ``records``, ``protected`` and ``cards``, blanks their content (the
triggers of migrations 1-7 drop the full-text entries and vectors in the same statement), and
then makes the bytes leave the file (FTS5 ``optimize``, WAL checkpoints, ``VACUUM`` with
``secure_delete``).
"""

from __future__ import annotations

import json
from typing import Iterable

from ...errors import ErasureIncomplete, InvalidInput, StorageError
from .db import SqliteDB

#: what an erased event's details become (migration 15 lets an event be updated to exactly this)
SCRUBBED_DETAILS = '{"erased":true}'
#: how long :meth:`SqliteErasure.vacuum` waits for other connections' readers by default, in seconds
VACUUM_WAIT_SECONDS = 10.0

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


class SqliteErasure:
    """Scrubbing erased content from every table and index, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # -- resolving a scope (reads) ---------------------------------------------------------
    def exists(self, kind: str, item_id: int) -> bool:
        """True when a ``turn``, ``record`` or ``protected`` row with this id exists (erased or not)."""
        table = _table(kind)[0]
        return self.c.one(f"SELECT 1 FROM {table} WHERE id = ?", [item_id]) is not None

    def conversation_exists(self, conversation_id: str) -> bool:
        """True when the conversation exists (reads ``conversations``)."""
        return self.c.one("SELECT 1 FROM conversations WHERE id = ?", [conversation_id]) is not None

    def namespace_ids(self, namespace: str) -> tuple[list[int], list[int], list[int]]:
        """Ids of the turns (of the namespace's conversations), memory records and protected
        records in ``namespace`` (spans ``turns``, ``conversations``, ``records``, ``protected``)."""
        turns = [r[0] for r in self.c.all(
            "SELECT t.id FROM turns t JOIN conversations c ON c.id = t.conversation_id WHERE c.namespace = ?",
            [namespace])]
        records = [r[0] for r in self.c.all("SELECT id FROM records WHERE namespace = ?", [namespace])]
        protected = [r[0] for r in self.c.all("SELECT id FROM protected WHERE namespace = ?", [namespace])]
        return turns, records, protected

    def conversation_ids(self, conversation_id: str) -> tuple[list[int], list[int]]:
        """Ids of the conversation's own turns and of its conversation-scoped protected records
        (spans ``turns`` and ``protected``)."""
        turns = [r[0] for r in self.c.all("SELECT id FROM turns WHERE conversation_id = ?", [conversation_id])]
        protected = [r[0] for r in self.c.all("SELECT id FROM protected WHERE conversation_id = ?",
                                              [conversation_id])]
        return turns, protected

    def citing_ids(self, turn_ids: Iterable[int]) -> tuple[set[int], set[int]]:
        """Ids of the memory records and of the protected records whose provenance cites one of
        ``turn_ids`` (``"turn:<id>"``), erased or not (spans ``records`` and ``protected``)."""
        return self.citing_sources(f"turn:{t}" for t in turn_ids)

    def citing_sources(self, sources: Iterable[str]) -> tuple[set[int], set[int]]:
        """Ids of the memory records and of the protected records whose provenance cites one of
        ``sources`` (``"turn:<id>"`` or ``"record:<id>"``), erased or not (issue 15: a fact
        consolidated from an episode cites ``record:<id>``)."""
        cites = set(sources)
        out: tuple[set[int], set[int]] = (set(), set())
        if not cites:
            return out
        for table, target in (("records", out[0]), ("protected", out[1])):
            for rid, prov in self.c.all(f"SELECT id, provenance FROM {table} WHERE provenance != '[]'"):
                if cites & set(json.loads(prov)):
                    target.add(rid)
        return out

    def has_cards(self) -> bool:
        """True when the file has the window's summary cards (``card_covers``, migration 3 on)."""
        return self.c.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'card_covers'") is not None

    def live_ids(self, kind: str, ids: Iterable[int]) -> list[int]:
        """The ``turn``, ``record`` or ``protected`` ids among ``ids`` that are not erased yet, sorted."""
        table, column, gone = _table(kind)
        return sorted(i for i in ids
                      if self.c.one(f"SELECT 1 FROM {table} WHERE id = ? AND {column} != ?", [i, gone]))

    def live_card_ids(self, card_ids: Iterable[int]) -> list[int]:
        """The card ids among ``card_ids`` that are not erased yet, in the order given (none
        before cards could be erased, migration 6)."""
        return [c for c in card_ids if self._cards_erasable()
                and self.c.one("SELECT 1 FROM cards WHERE id = ? AND erased = 0", [c])]

    def _cards_erasable(self) -> bool:
        return "erased" in {r[1] for r in self.c.all("PRAGMA table_info(cards)")}

    # -- blanking (call inside one transaction) ---------------------------------------------
    def secure_delete(self) -> None:
        """Zero freed pages from now on (set outside a transaction only; inside one it is left as is)."""
        if not self.c.in_transaction:
            self.c.run("PRAGMA secure_delete = ON")

    def blank_turns(self, turn_ids: Iterable[int]) -> None:
        """Blank archived turns (``erased 0 -> 1``, the archive's one allowed update); their
        full-text entries and vectors go in the same statement (triggers)."""
        for t in turn_ids:
            self.c.run("UPDATE turns SET content = '', tool_calls = NULL, name = NULL, metadata = '{}', "
                       "sha256 = 'erased', erased = 1 WHERE id = ? AND erased = 0", [t])

    def blank_records(self, record_ids: Iterable[int]) -> None:
        """Blank memory records (status ``erased``): content, metadata and the slot key (a key
        may be built from content, ``user.preference.<thing>``, issue 15)."""
        for r in record_ids:
            self.c.run("UPDATE records SET content = '', metadata = '{}', key = NULL, status = 'erased' WHERE id = ?",
                       [r])

    def scrub_events(self, *, subjects: Iterable[str], record_ids: Iterable[int], texts: Iterable[str]) -> int:
        """Blank the details and cause of every event about an erased item (its ``subject`` is one
        of ``subjects``, or its ``record_id`` one of ``record_ids``) or naming one of ``texts``
        (slot keys built from content, issue 15); the event's time, kind and subject stay, so
        the log still says that something happened. :returns: how many events were scrubbed."""
        subs, rids = sorted(set(subjects)), sorted(set(record_ids))
        words = sorted({t for t in texts if t and len(t) >= 3})
        clauses, params = [], []
        if subs:
            clauses.append(f"subject IN ({', '.join('?' for _ in subs)})")
            params += subs
        if rids:
            clauses.append(f"record_id IN ({', '.join('?' for _ in rids)})")
            params += rids
        for w in words:
            clauses.append("(instr(details, ?) > 0 OR instr(cause, ?) > 0)")
            params += [w, w]
        if not clauses:
            return 0
        return self.c.run(f"UPDATE events SET details = ?, cause = '' WHERE kind != 'erase' AND details != ? AND "
                          f"({' OR '.join(clauses)})", [SCRUBBED_DETAILS, SCRUBBED_DETAILS, *params]).rowcount

    def scrub_replaced_texts(self, protected_ids: Iterable[int]) -> int:
        """Remove the text of erased protected records from the ``replaces_text`` of every record
        that names them as replaced (issue 15: "this replaces, no longer in force: ..." must not
        keep erased words). :returns: how many records were rewritten."""
        gone = set(protected_ids)
        if not gone:
            return 0
        rows = self.c.all("SELECT id, metadata FROM protected WHERE metadata LIKE '%replaces%'")
        texts = {r[0]: r[1] for r in self.c.all(
            f"SELECT id, text FROM protected WHERE id IN ({', '.join('?' for _ in gone)})", sorted(gone))}
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
            self.c.run("UPDATE protected SET metadata = ? WHERE id = ?",
                       [json.dumps(meta, sort_keys=True, ensure_ascii=False), rid])
            changed += 1
        return changed

    def blank_protected(self, protected_ids: Iterable[int], *, changed_at: float) -> None:
        """Blank protected records (state ``erased`` at ``changed_at``)."""
        for p in protected_ids:
            self.c.run("UPDATE protected SET text = '', metadata = '{}', state = 'erased', changed_at = ? "
                       "WHERE id = ?", [changed_at, p])

    def blank_cards(self, card_ids: Iterable[int]) -> None:
        """Blank summary cards (``erased 0 -> 1``, no tokens), and what was derived with a card that
        is a fold result (issue 14): the fold's mechanical index (paths) and the strategy frame's
        brief and report slot."""
        for c in card_ids:
            self.c.run("UPDATE cards SET text = '', tokens = 0, erased = 1 WHERE id = ?", [c])
            self.c.run("UPDATE folds SET index_json = '{}' WHERE card_id = ?", [c])
            self.c.run("UPDATE strategy_frames SET report = NULL, brief = '' WHERE fold_id IN "
                       "(SELECT id FROM folds WHERE card_id = ?)", [c])

    # -- making the bytes leave the file ----------------------------------------------------
    def fts_integrity(self) -> list[str]:
        """Run FTS5's own ``integrity-check`` on every full-text index; :returns: the names of
        the indexes that fail it (empty when all pass)."""
        bad = []
        for name in self._fts_tables():
            try:
                self.c.run(f'INSERT INTO "{name}"("{name}") VALUES (\'integrity-check\')')
            except StorageError:
                bad.append(name)
        return bad

    def _fts_tables(self) -> list[str]:
        return [r[0] for r in self.c.all(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'")]

    def vacuum(self, *, wait_seconds: float = VACUUM_WAIT_SECONDS) -> None:
        """Merge every FTS5 index (dropping deleted postings), checkpoint and truncate the WAL,
        VACUUM with ``secure_delete`` on, truncate the WAL again.

        A checkpoint cannot move the WAL's pages into the file, nor truncate it, while another
        connection holds a read transaction open on it, and those pages may still hold erased
        bytes. So each checkpoint waits up to ``wait_seconds`` (SQLite's busy handler) for
        readers to finish; if one still holds the WAL open, nothing reports success.

        :raises StorageError: if called inside a transaction.
        :raises ErasureIncomplete: when another connection still holds the WAL open after the wait.
        """
        if self.c.in_transaction:
            raise StorageError("vacuum cannot run inside a transaction: call it after the erasure commits")
        fts = self._fts_tables()
        with self.c.transaction():
            for name in fts:
                self.c.run(f'INSERT INTO "{name}"("{name}") VALUES (\'optimize\')')
        self.c.run("PRAGMA secure_delete = ON")
        (before,) = self.c.one("PRAGMA busy_timeout")
        self.c.run(f"PRAGMA busy_timeout = {max(0, int(wait_seconds * 1000))}")
        try:
            self._checkpoint(wait_seconds)
            self.c.run("VACUUM")
            self._checkpoint(wait_seconds)
        finally:
            self.c.run(f"PRAGMA busy_timeout = {int(before)}")

    def _checkpoint(self, wait_seconds: float) -> None:
        """``wal_checkpoint(TRUNCATE)``. :raises ErasureIncomplete: when a reader kept it from completing."""
        busy, log, done = self.c.one("PRAGMA wal_checkpoint(TRUNCATE)")
        if busy or (log > 0 and done < log):
            path = self.c.one("PRAGMA database_list")[2] or "the database"
            raise ErasureIncomplete(
                f"erased content may remain in {path}-wal: another connection (another process or MemFold on "
                f"the file) held a read transaction open for {wait_seconds:g} s, so the write-ahead log could not "
                f"be checkpointed and truncated ({log} frames, {max(done, 0)} copied); the erasure is committed "
                "and hidden, but do not report it complete: close that reader and call vacuum() again")
