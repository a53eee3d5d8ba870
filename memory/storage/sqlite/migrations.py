"""Forward-only numbered schema migrations (STYLE.md rule 8; DESIGN.md §3).

Each migration is a function ``mNNN_name(db)`` registered with :func:`migration`. They run in
order, each inside the caller's write transaction, and each records its row in
``schema_version``. A migration is never edited once it has shipped: change the schema by adding
the next number. A file whose ``schema_version`` is above the newest known migration is refused
with both versions named, so an old memfold never scribbles on a newer file.

Numbers are reserved by concept so parallel work does not collide:
1 foundation (archive, conversations, memory records, events), 2 forgetting policies,
3 window (cards, catalog, full-text search), 4 consolidation (runs, leases),
5 embeddings, 6 protected channel / labels / erasure, 7 append idempotency keys,
8 compaction notes (the background worker's queue), 13 abandoned consolidation runs (issue 13),
14 folds and strategy frames (issue 14), 15 erasure scrubs events (issue 15), 20 the standing system turn
index (issue 20).
"""

from __future__ import annotations

from typing import Callable

import sqlite_utils

from ...errors import SchemaTooNew

Migration = Callable[[sqlite_utils.Database], None]
MIGRATIONS: list[tuple[int, str, Migration]] = []


def migration(version: int, name: str) -> Callable[[Migration], Migration]:
    """Register ``fn`` as schema migration number ``version``."""

    def register(fn: Migration) -> Migration:
        if any(v == version for v, _, _ in MIGRATIONS):
            raise RuntimeError(f"migration number {version} registered twice")
        MIGRATIONS.append((version, name, fn))
        MIGRATIONS.sort(key=lambda m: m[0])
        return fn

    return register


def run_script(db: sqlite_utils.Database, script: str) -> None:
    """Execute a multi-statement SQL script inside the current transaction.

    ``sqlite3.executescript`` would commit the caller's transaction first; this runs each complete
    statement (triggers included) with ``execute`` instead, so a migration stays atomic.
    """
    import sqlite3

    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                db.execute(buffer)
            buffer = ""
    if buffer.strip().strip(";").strip():
        raise RuntimeError(f"incomplete SQL statement in migration: {buffer[:80]!r}")


def latest_version() -> int:
    """The newest schema version this memfold knows."""
    return MIGRATIONS[-1][0] if MIGRATIONS else 0


def current_version(db: sqlite_utils.Database) -> int:
    """The schema version of ``db`` (0 for a new file)."""
    if "schema_version" not in db.table_names():
        return 0
    row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return row[0] or 0


def check_not_too_new(have: int) -> None:
    """Refuse a file whose schema version ``have`` is newer than this memfold knows.

    :raises SchemaTooNew: naming both versions.
    """
    newest = latest_version()
    if have > newest:
        raise SchemaTooNew(
            f"this database has schema version {have}, but this memfold knows only up to version {newest}: "
            "upgrade memfold (pip install -U memfold) to open it"
        )


def apply_migrations(db: sqlite_utils.Database) -> list[int]:
    """Apply every migration newer than the file's version; call inside a write transaction.

    :returns: the versions applied (empty when the file is current).
    :raises SchemaTooNew: if the file's version is newer than :func:`latest_version`.
    """
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    check_not_too_new(current_version(db))
    done = {row[0] for row in db.execute("SELECT version FROM schema_version")}
    applied = []
    for version, name, fn in MIGRATIONS:
        if version not in done:  # not just "> have": numbers are reserved per concept and may land out of order
            fn(db)
            db.execute("INSERT INTO schema_version(version, name) VALUES (?, ?)", [version, name])
            applied.append(version)
    return applied


@migration(15, "erasure_scrubs_events")
def m015_erasure_scrubs_events(db: sqlite_utils.Database) -> None:
    """Erasure reaches the event log (issue 15, point 7): the log stays append-only, except that
    erasure may blank an event's details and cause (to exactly ``{"erased":true}`` and ``''``)
    when they name erased content, such as a slot key built from it. Its time, kind, subject
    and record id never change. (Number 15 is the issue's.)"""
    run_script(
        db,
        """
        DROP TRIGGER events_append_only_update;
        CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
        WHEN NOT (NEW.details = '{"erased":true}' AND NEW.cause = '' AND NEW.id IS OLD.id AND NEW.at IS OLD.at
                  AND NEW.kind IS OLD.kind AND NEW.subject IS OLD.subject AND NEW.namespace IS OLD.namespace
                  AND NEW.record_id IS OLD.record_id)
        BEGIN
            SELECT RAISE(ABORT, 'the event log is append-only (only erasure may blank an event''s details)');
        END;
        """
    )


@migration(20, "system_turn_index")
def m020_system_turn_index(db: sqlite_utils.Database) -> None:
    """The standing system turn (issue 20, point 10): a conversation's newest system-role turn is
    shown verbatim in every compiled context until a later one replaces it, so each compile asks
    for it; this partial index answers that without scanning the conversation's turns. (Number 20
    is the issue's: numbers are reserved per concept and may land out of order.)"""
    run_script(db, "CREATE INDEX turns_system ON turns(conversation_id, seq) WHERE role = 'system';")


@migration(1, "create_foundation")
def m001_create_foundation(db: sqlite_utils.Database) -> None:
    """meta, conversations, the turn archive, memory records and the event log."""
    run_script(
        db,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            family_id TEXT NOT NULL,
            parent_id TEXT REFERENCES conversations(id),
            fork_after_seq INTEGER,
            created_at REAL NOT NULL,
            labels TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX conversations_family ON conversations(family_id);

        CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            family_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
            content TEXT NOT NULL,
            name TEXT,
            tool_call_id TEXT,
            tool_calls TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            tokens INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            labels TEXT NOT NULL DEFAULT '[]',
            erased INTEGER NOT NULL DEFAULT 0,
            UNIQUE (conversation_id, seq)
        );
        CREATE INDEX turns_family ON turns(family_id, id);

        -- The archive is immutable: only erasure (erased 0 -> 1) may change a turn's content.
        CREATE TRIGGER turns_immutable BEFORE UPDATE ON turns
        WHEN NOT (OLD.erased = 0 AND NEW.erased = 1)
             AND (NEW.content IS NOT OLD.content OR NEW.role IS NOT OLD.role OR NEW.name IS NOT OLD.name
                  OR NEW.tool_calls IS NOT OLD.tool_calls OR NEW.tool_call_id IS NOT OLD.tool_call_id
                  OR NEW.seq IS NOT OLD.seq OR NEW.conversation_id IS NOT OLD.conversation_id
                  OR NEW.sha256 IS NOT OLD.sha256 OR NEW.erased IS NOT OLD.erased)
        BEGIN
            SELECT RAISE(ABORT, 'archived turns are immutable; only erasure may change them');
        END;
        CREATE TRIGGER turns_no_delete BEFORE DELETE ON turns
        BEGIN
            SELECT RAISE(ABORT, 'archived turns are never deleted; erase them instead');
        END;

        CREATE TABLE records (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            type TEXT NOT NULL CHECK (type IN ('working', 'semantic', 'episodic', 'procedural')),
            key TEXT,
            content TEXT NOT NULL,
            importance REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
            created_at REAL NOT NULL,
            written_at REAL NOT NULL,
            event_time REAL,
            last_access_at REAL,
            access_count INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'retired', 'evicted', 'consumed', 'erased')),
            supersedes INTEGER REFERENCES records(id),
            superseded_by INTEGER REFERENCES records(id),
            pinned INTEGER NOT NULL DEFAULT 0,
            provenance TEXT NOT NULL DEFAULT '[]',
            labels TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX records_slot ON records(namespace, type, key, status);
        CREATE INDEX records_status ON records(namespace, status, type);
        CREATE TRIGGER records_no_delete BEFORE DELETE ON records
        BEGIN
            SELECT RAISE(ABORT, 'memory records are never deleted; retire, evict or erase them');
        END;

        -- Full-text index over archived turns (BM25 via FTS5); erased turns leave the index.
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            content, content='turns', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns BEGIN
            INSERT INTO turns_fts(rowid, content) VALUES (NEW.id, NEW.content);
        END;
        CREATE TRIGGER turns_fts_erase AFTER UPDATE OF erased ON turns WHEN OLD.erased = 0 AND NEW.erased = 1 BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, content) VALUES ('delete', OLD.id, OLD.content);
        END;

        -- Append-only audit log of every state change.
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            kind TEXT NOT NULL,
            namespace TEXT,
            subject TEXT NOT NULL,
            record_id INTEGER,
            cause TEXT NOT NULL DEFAULT '',
            details TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_record ON events(record_id);
        CREATE INDEX events_namespace ON events(namespace, id);
        CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
        BEGIN
            SELECT RAISE(ABORT, 'the event log is append-only');
        END;
        """
    )


@migration(6, "protected_labels_erasure")
def m006_protected_labels_erasure(db: sqlite_utils.Database) -> None:
    """The protected channel and erasable summary cards (issue 8).

    ``protected`` rows are the standing instructions, deadlines, approvals and policy state that
    are never summarised (DESIGN.md §4.6). Their text is immutable and a row is never deleted:
    it leaves the channel only by a state transition out of ``active`` (to satisfied, expired,
    revoked or superseded), and only erasure may blank its text. Summary cards (migration 3) gain
    an ``erased`` flag: erasure blanks a card's text once and drops its full-text entry and vector;
    every other change stays refused (DESIGN.md §1 "labels", issue 8 point 6).
    """
    run_script(
        db,
        """
        CREATE TABLE protected (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            conversation_id TEXT REFERENCES conversations(id),
            kind TEXT NOT NULL CHECK (kind IN ('obligation', 'constraint', 'permission', 'deadline',
                                               'prerequisite', 'approval', 'evidence', 'policy_state')),
            text TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'active'
                CHECK (state IN ('active', 'satisfied', 'expired', 'revoked', 'superseded', 'erased')),
            due_at REAL,
            provenance TEXT NOT NULL DEFAULT '[]',
            labels TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL DEFAULT 'manual',
            created_at REAL NOT NULL,
            changed_at REAL NOT NULL,
            supersedes INTEGER REFERENCES protected(id),
            superseded_by INTEGER REFERENCES protected(id),
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX protected_scope ON protected(namespace, conversation_id, state);

        -- Text is verbatim and immutable; only erasure may blank it.
        CREATE TRIGGER protected_text_immutable BEFORE UPDATE ON protected
        WHEN NEW.state IS NOT 'erased'
             AND (NEW.text IS NOT OLD.text OR NEW.kind IS NOT OLD.kind OR NEW.namespace IS NOT OLD.namespace
                  OR NEW.conversation_id IS NOT OLD.conversation_id)
        BEGIN
            SELECT RAISE(ABORT, 'protected records are verbatim; supersede them instead of editing');
        END;
        -- Records leave the channel only by a transition out of 'active' (or by erasure).
        CREATE TRIGGER protected_transitions BEFORE UPDATE OF state ON protected
        WHEN NEW.state IS NOT OLD.state AND OLD.state IS NOT 'active' AND NEW.state IS NOT 'erased'
        BEGIN
            SELECT RAISE(ABORT, 'only an active protected record can change state');
        END;
        CREATE TRIGGER protected_no_delete BEFORE DELETE ON protected
        BEGIN
            SELECT RAISE(ABORT, 'protected records are never deleted; change their state or erase them');
        END;

        """
    )
    if "cards" in db.table_names():
        # Erasure reaches summary cards (migration 3): a card may be blanked once (erased 0 -> 1),
        # which also drops its full-text entry and vector. Every other change stays refused.
        run_script(
            db,
            """
            ALTER TABLE cards ADD COLUMN erased INTEGER NOT NULL DEFAULT 0;
            DROP TRIGGER cards_immutable;
            CREATE TRIGGER cards_immutable BEFORE UPDATE ON cards
            WHEN NOT (OLD.erased = 0 AND NEW.erased = 1)
                 AND (NEW.text IS NOT OLD.text OR NEW.tokens IS NOT OLD.tokens OR NEW.depth IS NOT OLD.depth
                      OR NEW.first_seq IS NOT OLD.first_seq OR NEW.last_seq IS NOT OLD.last_seq
                      OR NEW.labels IS NOT OLD.labels OR NEW.family_id IS NOT OLD.family_id
                      OR NEW.source_tokens IS NOT OLD.source_tokens OR NEW.erased IS NOT OLD.erased)
            BEGIN
                SELECT RAISE(ABORT, 'summary cards are immutable; only the stale flag (or erasure) may change');
            END;
            CREATE TRIGGER cards_fts_erase AFTER UPDATE OF erased ON cards WHEN OLD.erased = 0 AND NEW.erased = 1 BEGIN
                INSERT INTO cards_fts(cards_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
            END;
            """,
        )
        if "embeddings" in db.table_names():
            run_script(
                db,
                """
                CREATE TRIGGER embeddings_card_erase AFTER UPDATE OF erased ON cards WHEN NEW.erased = 1 BEGIN
                    DELETE FROM embeddings WHERE kind = 'card' AND item_id = NEW.id;
                END;
                """,
            )


@migration(5, "embeddings_and_search")
def m005_embeddings_and_search(db: sqlite_utils.Database) -> None:
    """Vectors for hybrid search (issue 6) and a full-text index over memory records.

    ``embeddings`` holds one float32 blob per (kind, item) with the model id and dimension it came
    from (``meta`` records the database's model; see :mod:`memfold.memory.embeddings`). Erasing a
    turn or record drops its vector and its full-text entry in the same statement, so no index
    keeps meaning derived from erased words. ``records_fts`` indexes record content for BM25.
    """
    run_script(
        db,
        """
        CREATE TABLE embeddings (
            kind TEXT NOT NULL CHECK (kind IN ('turn', 'card', 'record')),
            item_id INTEGER NOT NULL,
            model_id TEXT NOT NULL,
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL CHECK (length(vector) = 4 * dim),
            PRIMARY KEY (kind, item_id)
        );
        CREATE TRIGGER embeddings_turn_erase AFTER UPDATE OF erased ON turns WHEN NEW.erased = 1 BEGIN
            DELETE FROM embeddings WHERE kind = 'turn' AND item_id = NEW.id;
        END;
        CREATE TRIGGER embeddings_record_erase AFTER UPDATE OF status ON records
        WHEN NEW.status = 'erased' AND OLD.status IS NOT 'erased' BEGIN
            DELETE FROM embeddings WHERE kind = 'record' AND item_id = NEW.id;
        END;

        CREATE VIRTUAL TABLE records_fts USING fts5(
            content, content='records', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        INSERT INTO records_fts(records_fts) VALUES ('rebuild');
        CREATE TRIGGER records_fts_insert AFTER INSERT ON records BEGIN
            INSERT INTO records_fts(rowid, content) VALUES (NEW.id, NEW.content);
        END;
        CREATE TRIGGER records_fts_update AFTER UPDATE OF content ON records
        WHEN OLD.status IS NOT 'erased' AND NEW.status IS NOT 'erased' BEGIN
            INSERT INTO records_fts(records_fts, rowid, content) VALUES ('delete', OLD.id, OLD.content);
            INSERT INTO records_fts(rowid, content) VALUES (NEW.id, NEW.content);
        END;
        CREATE TRIGGER records_fts_erase AFTER UPDATE OF status ON records
        WHEN NEW.status = 'erased' AND OLD.status IS NOT 'erased' BEGIN
            INSERT INTO records_fts(records_fts, rowid, content) VALUES ('delete', OLD.id, OLD.content);
        END;
        CREATE TRIGGER embeddings_record_content AFTER UPDATE OF content ON records BEGIN
            DELETE FROM embeddings WHERE kind = 'record' AND item_id = NEW.id;
        END;
        """
    )


@migration(3, "create_window")
def m003_create_window(db: sqlite_utils.Database) -> None:
    """Summary cards and their covers, each conversation's catalog, card full-text search, the
    summarizer failure log and per-conversation window state (issue 4; DESIGN.md §1, §4.2-4.3)."""
    run_script(
        db,
        """
        -- An immutable summary of a contiguous range: depth 1 covers turns, deeper cards cover cards.
        CREATE TABLE cards (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            family_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            depth INTEGER NOT NULL CHECK (depth >= 1),
            text TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            source_tokens INTEGER NOT NULL,
            first_turn_id INTEGER NOT NULL REFERENCES turns(id),
            last_turn_id INTEGER NOT NULL REFERENCES turns(id),
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            start_at REAL NOT NULL,
            end_at REAL NOT NULL,
            labels TEXT NOT NULL DEFAULT '[]',
            summarizer TEXT NOT NULL,
            created_at REAL NOT NULL,
            stale INTEGER NOT NULL DEFAULT 0,
            CHECK (tokens < source_tokens),
            CHECK (first_seq <= last_seq)
        );
        CREATE INDEX cards_family ON cards(family_id, depth);
        CREATE TRIGGER cards_immutable BEFORE UPDATE ON cards
        WHEN NEW.text IS NOT OLD.text OR NEW.tokens IS NOT OLD.tokens OR NEW.depth IS NOT OLD.depth
             OR NEW.first_seq IS NOT OLD.first_seq OR NEW.last_seq IS NOT OLD.last_seq
             OR NEW.labels IS NOT OLD.labels OR NEW.family_id IS NOT OLD.family_id
             OR NEW.source_tokens IS NOT OLD.source_tokens
        BEGIN
            SELECT RAISE(ABORT, 'summary cards are immutable; only the stale flag may change');
        END;
        CREATE TRIGGER cards_no_delete BEFORE DELETE ON cards
        BEGIN
            SELECT RAISE(ABORT, 'summary cards are never deleted');
        END;

        -- The ordered children of a card: turns (depth 1) or cards (deeper).
        CREATE TABLE card_covers (
            card_id INTEGER NOT NULL REFERENCES cards(id),
            position INTEGER NOT NULL,
            child_kind TEXT NOT NULL CHECK (child_kind IN ('turn', 'card')),
            child_id INTEGER NOT NULL,
            PRIMARY KEY (card_id, position)
        );
        CREATE INDEX card_covers_child ON card_covers(child_kind, child_id);

        -- What the model currently sees, in order: a contiguous cover of the conversation's seqs.
        -- Keyed by first_seq, so a fold deletes a range and inserts one row, without renumbering.
        CREATE TABLE catalog_items (
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('turn', 'card')),
            item_id INTEGER NOT NULL,
            depth INTEGER NOT NULL DEFAULT 0,
            tokens INTEGER NOT NULL,
            role TEXT,
            has_tool_calls INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (conversation_id, first_seq)
        );
        -- Archive before splice (DESIGN.md §4.2): a catalog row may only point at a stored card.
        CREATE TRIGGER catalog_card_exists BEFORE INSERT ON catalog_items
        WHEN NEW.kind = 'card' AND NOT EXISTS (SELECT 1 FROM card_covers WHERE card_id = NEW.item_id)
        BEGIN
            SELECT RAISE(ABORT, 'a catalog item may only point at a card whose covers are stored');
        END;

        CREATE VIRTUAL TABLE cards_fts USING fts5(
            text, content='cards', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER cards_fts_insert AFTER INSERT ON cards BEGIN
            INSERT INTO cards_fts(rowid, text) VALUES (NEW.id, NEW.text);
        END;

        -- Every summarizer failure: the originals stayed in the window.
        CREATE TABLE summarizer_failures (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL,
            at REAL NOT NULL,
            summarizer TEXT NOT NULL,
            depth INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            source_tokens INTEGER NOT NULL,
            error TEXT NOT NULL
        );
        CREATE INDEX summarizer_failures_conversation ON summarizer_failures(conversation_id, id);

        -- The prompt tokens the caller last reported (watermark pressure), per conversation.
        CREATE TABLE window_state (
            conversation_id TEXT PRIMARY KEY REFERENCES conversations(id),
            reported_tokens INTEGER,
            reported_at REAL
        );
        """
    )


@migration(4, "create_consolidation")
def m004_create_consolidation(db: sqlite_utils.Database) -> None:
    """Consolidation runs, the ledger of consumed sources (with what each produced), the turn
    cursor per namespace, and the scheduler's lease rows (issue 5)."""
    run_script(
        db,
        """
        -- One row per consolidation pass: start, end, counts, errors (a killed pass stays 'running').
        CREATE TABLE consolidation_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            extractor TEXT NOT NULL,
            trigger TEXT NOT NULL DEFAULT 'manual',
            status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'stopped')),
            started_at REAL NOT NULL,
            finished_at REAL,
            batches INTEGER NOT NULL DEFAULT 0,
            episodes_consumed INTEGER NOT NULL DEFAULT 0,
            turns_consumed INTEGER NOT NULL DEFAULT 0,
            facts_written INTEGER NOT NULL DEFAULT 0,
            rules_written INTEGER NOT NULL DEFAULT 0,
            errors TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX consolidation_runs_namespace ON consolidation_runs(namespace, id);

        -- Each source ('record:12', 'turn:5') is consumed at most once: the primary key enforces it.
        CREATE TABLE consolidation_sources (
            source TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            run_id INTEGER NOT NULL REFERENCES consolidation_runs(id),
            consumed_at REAL NOT NULL,
            products TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX consolidation_sources_run ON consolidation_sources(run_id);
        CREATE TRIGGER consolidation_sources_no_delete BEFORE DELETE ON consolidation_sources
        BEGIN
            SELECT RAISE(ABORT, 'the consolidation ledger is append-only');
        END;

        -- Archived turns are immutable, so 'consumed' for turns is a per-namespace cursor.
        CREATE TABLE consolidation_cursors (
            namespace TEXT PRIMARY KEY,
            last_turn_id INTEGER NOT NULL,
            run_id INTEGER REFERENCES consolidation_runs(id)
        );

        -- Leases: one row per (job, fire time); a holder that dies lets its lease expire.
        CREATE TABLE leases (
            name TEXT NOT NULL,
            fire_time REAL NOT NULL,
            holder TEXT NOT NULL,
            acquired_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            finished_at REAL,
            outcome TEXT,
            PRIMARY KEY (name, fire_time)
        );
        """
    )


@migration(2, "forgetting_policies")
def m002_forgetting_policies(db: sqlite_utils.Database) -> None:
    """Per-store forgetting policy (issue 3): capacity, half-life and access weight for each
    ``(namespace, type)`` store. A missing row, or a NULL column, means the documented default
    (:class:`memfold.memory.forgetting.StorePolicy`). Rows change only through
    ``MemoryStore.set_policy``, which logs a ``policy`` event."""
    run_script(
        db,
        """
        CREATE TABLE store_policies (
            namespace TEXT NOT NULL,
            type TEXT NOT NULL CHECK (type IN ('working', 'semantic', 'episodic', 'procedural')),
            capacity INTEGER CHECK (capacity IS NULL OR capacity >= 1),
            half_life REAL CHECK (half_life IS NULL OR half_life > 0),
            access_weight REAL CHECK (access_weight IS NULL OR access_weight >= 0),
            updated_at REAL NOT NULL,
            PRIMARY KEY (namespace, type)
        );
        -- covering index for scoring: read and eviction load these columns for a whole store
        CREATE INDEX records_store_scoring
            ON records(namespace, type, status, importance, written_at, access_count, pinned);
        """
    )


@migration(7, "turn_idempotency_keys")
def m007_turn_idempotency_keys(db: sqlite_utils.Database) -> None:
    """Append idempotency keys (issue 16): a turn may carry the key its caller appended it with,
    unique per conversation, so a retried append finds the turn its first attempt wrote instead
    of writing it twice. A key is an identifier, not content: it is set once at insert and never
    changes (erasure keeps it, so a retry of an erased turn does not bring the turn back)."""
    run_script(
        db,
        """
        ALTER TABLE turns ADD COLUMN idempotency_key TEXT;
        CREATE UNIQUE INDEX turns_idempotency_key ON turns(conversation_id, idempotency_key)
            WHERE idempotency_key IS NOT NULL;
        CREATE TRIGGER turns_idempotency_key_immutable BEFORE UPDATE OF idempotency_key ON turns
        WHEN NEW.idempotency_key IS NOT OLD.idempotency_key
        BEGIN
            SELECT RAISE(ABORT, 'an append idempotency key is set once, when the turn is archived');
        END;
        """
    )


@migration(8, "compaction_notes")
def m008_compaction_notes(db: sqlite_utils.Database) -> None:
    """Compaction notes (issue 13): past the soft watermark an append leaves one note per
    conversation (pressure, when) and returns; the background worker takes notes under a lease
    per conversation and folds off the hot path. ``generation`` (never reused: AUTOINCREMENT) is
    the fire time of the note's lease, and a note left standing gets a new one; ``not_before`` holds a note back after a
    summarizer failure (backoff) and ``attempts`` counts the failures in a row."""
    run_script(
        db,
        """
        CREATE TABLE compaction_notes (
            generation INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL UNIQUE REFERENCES conversations(id),
            namespace TEXT NOT NULL,
            pressure INTEGER NOT NULL,
            noted_at REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            not_before REAL NOT NULL DEFAULT 0,
            last_error TEXT
        );
        CREATE INDEX compaction_notes_due ON compaction_notes(not_before, generation);
        """
    )


@migration(13, "abandoned_runs")
def m013_abandoned_runs(db: sqlite_utils.Database) -> None:
    """A consolidation run whose holder died (its lease expired unfinished) is closed as
    ``abandoned`` (issue 13, point 7), so the run status CHECK gains that value. Widening a CHECK
    changes no stored row, so this edits the table's schema text in place, in the caller's
    transaction, as SQLite's ALTER TABLE documentation describes for constraint changes that leave
    the on-disk format alone (writable_schema, then a schema_version bump so every connection
    re-reads it); rebuilding the table would break the ledger's foreign keys. (Number 13 is the
    issue's.)"""
    old = "CHECK (status IN ('running', 'ok', 'failed', 'stopped'))"
    new = "CHECK (status IN ('running', 'ok', 'failed', 'stopped', 'abandoned'))"
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'consolidation_runs'").fetchone()[0]
    if old not in sql:
        raise RuntimeError("migration 13: the consolidation_runs status CHECK is not the one migration 4 wrote")
    version = db.execute("PRAGMA schema_version").fetchone()[0]
    db.execute("PRAGMA writable_schema = ON")
    try:
        db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'consolidation_runs'",
                   [sql.replace(old, new)])
        db.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        db.execute("PRAGMA writable_schema = OFF")


@migration(14, "folds_and_strategy_frames")
def m014_folds_and_strategy_frames(db: sqlite_utils.Database) -> None:
    """Folds the model chooses and strategy frames (issue 14; number 14 is the issue's). ``folds``
    records each host-built fold (a closed unit, a strategy branch folded to its report, a
    subagent receipt) with the card that stands for its range; it is written in the transaction
    of the card and the catalog splice, so a crash leaves the range either unfolded or folded,
    never a fold row without its card. ``strategy_frames`` is each conversation's stack of frames
    with its report slot. ``fold_counters`` holds the per-conversation counters (proposed,
    accepted, refused, read back)."""
    run_script(
        db,
        """
        CREATE TABLE folds (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            kind TEXT NOT NULL CHECK (kind IN ('unit', 'strategy', 'receipt')),
            card_id INTEGER REFERENCES cards(id),
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            made_after_seq INTEGER NOT NULL,
            index_json TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            CHECK (first_seq <= last_seq)
        );
        CREATE INDEX folds_conversation ON folds(conversation_id, id);
        CREATE INDEX folds_card ON folds(card_id);

        CREATE TABLE strategy_frames (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            parent_frame INTEGER REFERENCES strategy_frames(id),
            name TEXT NOT NULL,
            brief TEXT NOT NULL DEFAULT '',
            start_seq INTEGER NOT NULL,
            opened_by TEXT NOT NULL,
            report TEXT,
            reports INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closing', 'closed')),
            reason TEXT,
            fold_id INTEGER REFERENCES folds(id),
            opened_at REAL NOT NULL,
            closed_at REAL
        );
        CREATE INDEX strategy_frames_conversation ON strategy_frames(conversation_id, status, id);

        CREATE TABLE fold_counters (
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            name TEXT NOT NULL,
            value INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (conversation_id, name)
        );
        """
    )
