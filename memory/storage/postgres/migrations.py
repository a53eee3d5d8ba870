"""Forward-only numbered schema migrations for PostgreSQL (STYLE.md rule 8; DESIGN.md §3).

The same runner as the embedded backend's (:mod:`memfold.memory.storage.sqlite.migrations`) with
PostgreSQL's SQL: each ``mNNN_name(c)`` is registered with :func:`migration`, runs inside the
caller's write transaction and records its ``schema_version`` row; a database whose version is
above the newest known migration is refused with both versions named. Numbers mean the same
concept on both backends (1 foundation, 2 forgetting policies, 3 window, 4 consolidation,
5 embeddings and record search, 6 protected channel / erasable cards, 7 append idempotency keys,
8 compaction notes, 13 abandoned runs, 14 folds and strategy frames, 15 erasure scrubs events,
20 the standing system turn), so a version names the same schema on both; 21 (the pgvector
column and its HNSW indexes) exists on PostgreSQL only.

Dialect choices: times are ``DOUBLE PRECISION`` (SQLite's REAL is a double), flags stay ``0/1``
integers and JSON lists stay text, so every family reads rows in the same shape on both
backends. Full text is a ``tsvector`` per item in ``turns_fts`` / ``cards_fts`` / ``records_fts``
(GIN-indexed; the tokens are memfold's, see :mod:`..textsearch`); the triggers that keep the
archive immutable are PL/pgSQL.
"""

from __future__ import annotations

from typing import Callable

from ...errors import SchemaTooNew
from .db import PostgresDB

Migration = Callable[[PostgresDB], None]
MIGRATIONS: list[tuple[int, str, Migration]] = []

#: the advisory lock two processes migrating one database at once serialise on
MIGRATION_LOCK = 0x6D656D6D6967


def migration(version: int, name: str) -> Callable[[Migration], Migration]:
    """Register ``fn`` as schema migration number ``version``."""

    def register(fn: Migration) -> Migration:
        if any(v == version for v, _, _ in MIGRATIONS):
            raise RuntimeError(f"migration number {version} registered twice")
        MIGRATIONS.append((version, name, fn))
        MIGRATIONS.sort(key=lambda m: m[0])
        return fn

    return register


def latest_version() -> int:
    """The newest schema version this memfold knows."""
    return MIGRATIONS[-1][0] if MIGRATIONS else 0


def current_version(c: PostgresDB) -> int:
    """The schema version of the database (0 for a new one)."""
    if c.value("SELECT to_regclass('schema_version')") is None:
        return 0
    return c.value("SELECT MAX(version) FROM schema_version", default=0)


def apply_migrations(c: PostgresDB) -> list[int]:
    """Apply every migration newer than the database's version; call inside a write transaction.

    :returns: the versions applied (empty when the database is current).
    :raises SchemaTooNew: if the database's version is newer than :func:`latest_version`.
    """
    c.run("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
    c.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    have = current_version(c)
    newest = latest_version()
    if have > newest:
        raise SchemaTooNew(
            f"this database has schema version {have}, but this memfold knows only up to version {newest}: "
            "upgrade memfold (pip install -U memfold) to open it"
        )
    done = {row[0] for row in c.all("SELECT version FROM schema_version")}
    applied = []
    for version, name, fn in MIGRATIONS:
        if version not in done:
            fn(c)
            c.run("INSERT INTO schema_version(version, name) VALUES (%s, %s)", [version, name])
            applied.append(version)
    return applied


def _refuse(name: str, message: str, when: str, event: str = "BEFORE UPDATE", table: str = "") -> str:
    """A trigger function and trigger raising ``message`` (``when``: a PL/pgSQL condition)."""
    return f"""
        CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF {when} THEN RAISE EXCEPTION '{message}'; END IF;
            IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
            RETURN NEW;
        END $$;
        CREATE TRIGGER {name} {event} ON {table} FOR EACH ROW EXECUTE FUNCTION {name}();
    """


def run_script(c: PostgresDB, script: str) -> None:
    """Run a multi-statement script (no parameters) inside the current transaction."""
    c.run(script)


@migration(1, "create_foundation")
def m001_create_foundation(c: PostgresDB) -> None:
    """meta, conversations, the turn archive (and its full-text index), memory records, events."""
    run_script(c, """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE conversations (
            rid BIGSERIAL UNIQUE,
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            family_id TEXT NOT NULL,
            parent_id TEXT REFERENCES conversations(id),
            fork_after_seq BIGINT,
            created_at DOUBLE PRECISION NOT NULL,
            labels TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX conversations_family ON conversations(family_id);
        CREATE INDEX conversations_namespace ON conversations(namespace);

        CREATE TABLE turns (
            id BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            family_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
            content TEXT NOT NULL,
            name TEXT,
            tool_call_id TEXT,
            tool_calls TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at DOUBLE PRECISION NOT NULL,
            tokens BIGINT NOT NULL,
            sha256 TEXT NOT NULL,
            labels TEXT NOT NULL DEFAULT '[]',
            erased INTEGER NOT NULL DEFAULT 0,
            UNIQUE (conversation_id, seq)
        );
        CREATE INDEX turns_family ON turns(family_id, id);
        CREATE INDEX turns_live ON turns(id) WHERE erased = 0;
    """ + _refuse(
        "turns_immutable", "archived turns are immutable; only erasure may change them",
        "NOT (OLD.erased = 0 AND NEW.erased = 1) AND (NEW.content IS DISTINCT FROM OLD.content "
        "OR NEW.role IS DISTINCT FROM OLD.role OR NEW.name IS DISTINCT FROM OLD.name "
        "OR NEW.tool_calls IS DISTINCT FROM OLD.tool_calls OR NEW.tool_call_id IS DISTINCT FROM OLD.tool_call_id "
        "OR NEW.seq IS DISTINCT FROM OLD.seq OR NEW.conversation_id IS DISTINCT FROM OLD.conversation_id "
        "OR NEW.sha256 IS DISTINCT FROM OLD.sha256 OR NEW.erased IS DISTINCT FROM OLD.erased)",
        table="turns",
    ) + _refuse("turns_no_delete", "archived turns are never deleted; erase them instead", "TRUE",
                "BEFORE DELETE", "turns") + """
        CREATE TABLE turns_fts (
            id BIGINT PRIMARY KEY REFERENCES turns(id),
            doc_len INTEGER NOT NULL,
            tsv TSVECTOR NOT NULL
        );
        CREATE INDEX turns_fts_tsv ON turns_fts USING GIN (tsv);

        CREATE TABLE records (
            id BIGSERIAL PRIMARY KEY,
            namespace TEXT NOT NULL,
            type TEXT NOT NULL CHECK (type IN ('working', 'semantic', 'episodic', 'procedural')),
            key TEXT,
            content TEXT NOT NULL,
            importance DOUBLE PRECISION NOT NULL CHECK (importance >= 0 AND importance <= 1),
            created_at DOUBLE PRECISION NOT NULL,
            written_at DOUBLE PRECISION NOT NULL,
            event_time DOUBLE PRECISION,
            last_access_at DOUBLE PRECISION,
            access_count BIGINT NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'retired', 'evicted', 'consumed', 'erased')),
            supersedes BIGINT REFERENCES records(id),
            superseded_by BIGINT REFERENCES records(id),
            pinned INTEGER NOT NULL DEFAULT 0,
            provenance TEXT NOT NULL DEFAULT '[]',
            labels TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX records_slot ON records(namespace, type, key, status);
        CREATE INDEX records_status ON records(namespace, status, type);
    """ + _refuse("records_no_delete", "memory records are never deleted; retire, evict or erase them", "TRUE",
                  "BEFORE DELETE", "records") + """
        CREATE TABLE events (
            id BIGSERIAL PRIMARY KEY,
            at DOUBLE PRECISION NOT NULL,
            kind TEXT NOT NULL,
            namespace TEXT,
            subject TEXT NOT NULL,
            record_id BIGINT,
            cause TEXT NOT NULL DEFAULT '',
            details TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_record ON events(record_id);
        CREATE INDEX events_namespace ON events(namespace, id);
    """ + _refuse("events_append_only", "the event log is append-only", "TRUE", "BEFORE UPDATE", "events"))


@migration(2, "forgetting_policies")
def m002_forgetting_policies(c: PostgresDB) -> None:
    """Per-store forgetting policy: capacity, half-life and access weight per ``(namespace, type)``."""
    run_script(c, """
        CREATE TABLE store_policies (
            namespace TEXT NOT NULL,
            type TEXT NOT NULL CHECK (type IN ('working', 'semantic', 'episodic', 'procedural')),
            capacity BIGINT CHECK (capacity IS NULL OR capacity >= 1),
            half_life DOUBLE PRECISION CHECK (half_life IS NULL OR half_life > 0),
            access_weight DOUBLE PRECISION CHECK (access_weight IS NULL OR access_weight >= 0),
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (namespace, type)
        );
        CREATE INDEX records_store_scoring
            ON records(namespace, type, status, importance, written_at, access_count, pinned);
    """)


@migration(3, "create_window")
def m003_create_window(c: PostgresDB) -> None:
    """Summary cards and their covers, each conversation's catalog, card full-text search, the
    summarizer failure log and per-conversation window state."""
    run_script(c, """
        CREATE TABLE cards (
            id BIGSERIAL PRIMARY KEY,
            family_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            depth INTEGER NOT NULL CHECK (depth >= 1),
            text TEXT NOT NULL,
            tokens BIGINT NOT NULL,
            source_tokens BIGINT NOT NULL,
            first_turn_id BIGINT NOT NULL REFERENCES turns(id),
            last_turn_id BIGINT NOT NULL REFERENCES turns(id),
            first_seq BIGINT NOT NULL,
            last_seq BIGINT NOT NULL,
            start_at DOUBLE PRECISION NOT NULL,
            end_at DOUBLE PRECISION NOT NULL,
            labels TEXT NOT NULL DEFAULT '[]',
            summarizer TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            stale INTEGER NOT NULL DEFAULT 0,
            CHECK (tokens < source_tokens),
            CHECK (first_seq <= last_seq)
        );
        CREATE INDEX cards_family ON cards(family_id, depth);
    """ + _refuse("cards_no_delete", "summary cards are never deleted", "TRUE", "BEFORE DELETE", "cards") + """
        CREATE TABLE card_covers (
            card_id BIGINT NOT NULL REFERENCES cards(id),
            position INTEGER NOT NULL,
            child_kind TEXT NOT NULL CHECK (child_kind IN ('turn', 'card')),
            child_id BIGINT NOT NULL,
            PRIMARY KEY (card_id, position)
        );
        CREATE INDEX card_covers_child ON card_covers(child_kind, child_id);

        CREATE TABLE catalog_items (
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            first_seq BIGINT NOT NULL,
            last_seq BIGINT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('turn', 'card')),
            item_id BIGINT NOT NULL,
            depth INTEGER NOT NULL DEFAULT 0,
            tokens BIGINT NOT NULL,
            role TEXT,
            has_tool_calls INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (conversation_id, first_seq)
        );
    """ + _refuse("catalog_card_exists", "a catalog item may only point at a card whose covers are stored",
                  "NEW.kind = 'card' AND NOT EXISTS (SELECT 1 FROM card_covers WHERE card_id = NEW.item_id)",
                  "BEFORE INSERT", "catalog_items") + """
        CREATE TABLE cards_fts (
            id BIGINT PRIMARY KEY REFERENCES cards(id),
            doc_len INTEGER NOT NULL,
            tsv TSVECTOR NOT NULL
        );
        CREATE INDEX cards_fts_tsv ON cards_fts USING GIN (tsv);

        CREATE TABLE summarizer_failures (
            id BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            at DOUBLE PRECISION NOT NULL,
            summarizer TEXT NOT NULL,
            depth INTEGER NOT NULL,
            first_seq BIGINT NOT NULL,
            last_seq BIGINT NOT NULL,
            source_tokens BIGINT NOT NULL,
            error TEXT NOT NULL
        );
        CREATE INDEX summarizer_failures_conversation ON summarizer_failures(conversation_id, id);

        CREATE TABLE window_state (
            conversation_id TEXT PRIMARY KEY REFERENCES conversations(id),
            reported_tokens BIGINT,
            reported_at DOUBLE PRECISION
        );
    """)


@migration(4, "create_consolidation")
def m004_create_consolidation(c: PostgresDB) -> None:
    """Consolidation runs, the ledger of consumed sources, the turn cursors and the leases."""
    run_script(c, """
        CREATE TABLE consolidation_runs (
            id BIGSERIAL PRIMARY KEY,
            namespace TEXT NOT NULL,
            extractor TEXT NOT NULL,
            trigger TEXT NOT NULL DEFAULT 'manual',
            status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'stopped')),
            started_at DOUBLE PRECISION NOT NULL,
            finished_at DOUBLE PRECISION,
            batches BIGINT NOT NULL DEFAULT 0,
            episodes_consumed BIGINT NOT NULL DEFAULT 0,
            turns_consumed BIGINT NOT NULL DEFAULT 0,
            facts_written BIGINT NOT NULL DEFAULT 0,
            rules_written BIGINT NOT NULL DEFAULT 0,
            errors TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX consolidation_runs_namespace ON consolidation_runs(namespace, id);

        CREATE TABLE consolidation_sources (
            source TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            run_id BIGINT NOT NULL REFERENCES consolidation_runs(id),
            consumed_at DOUBLE PRECISION NOT NULL,
            products TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX consolidation_sources_run ON consolidation_sources(run_id);
    """ + _refuse("consolidation_sources_no_delete", "the consolidation ledger is append-only", "TRUE",
                  "BEFORE DELETE", "consolidation_sources") + """
        CREATE TABLE consolidation_cursors (
            namespace TEXT PRIMARY KEY,
            last_turn_id BIGINT NOT NULL,
            run_id BIGINT REFERENCES consolidation_runs(id)
        );

        CREATE TABLE leases (
            name TEXT NOT NULL,
            fire_time DOUBLE PRECISION NOT NULL,
            holder TEXT NOT NULL,
            acquired_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            finished_at DOUBLE PRECISION,
            outcome TEXT,
            PRIMARY KEY (name, fire_time)
        );
    """)


@migration(5, "embeddings_and_search")
def m005_embeddings_and_search(c: PostgresDB) -> None:
    """Vectors for hybrid search (float32 bytes, as on SQLite; the pgvector column and its HNSW
    indexes come with migration 21, when the extension can be created) and the full-text index
    over memory records."""
    run_script(c, """
        CREATE TABLE embeddings (
            rid BIGSERIAL UNIQUE,
            kind TEXT NOT NULL CHECK (kind IN ('turn', 'card', 'record')),
            item_id BIGINT NOT NULL,
            model_id TEXT NOT NULL,
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BYTEA NOT NULL CHECK (length(vector) = 4 * dim),
            PRIMARY KEY (kind, item_id)
        );
        CREATE TABLE records_fts (
            id BIGINT PRIMARY KEY REFERENCES records(id),
            doc_len INTEGER NOT NULL,
            tsv TSVECTOR NOT NULL
        );
        CREATE INDEX records_fts_tsv ON records_fts USING GIN (tsv);
    """)


@migration(6, "protected_labels_erasure")
def m006_protected_labels_erasure(c: PostgresDB) -> None:
    """The protected channel (verbatim, never deleted, leaving only by a state transition) and
    erasable summary cards (``erased`` 0 -> 1 once; every other change refused)."""
    run_script(c, """
        CREATE TABLE protected (
            id BIGSERIAL PRIMARY KEY,
            namespace TEXT NOT NULL,
            conversation_id TEXT REFERENCES conversations(id),
            kind TEXT NOT NULL CHECK (kind IN ('obligation', 'constraint', 'permission', 'deadline',
                                               'prerequisite', 'approval', 'evidence', 'policy_state')),
            text TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'active'
                CHECK (state IN ('active', 'satisfied', 'expired', 'revoked', 'superseded', 'erased')),
            due_at DOUBLE PRECISION,
            provenance TEXT NOT NULL DEFAULT '[]',
            labels TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL DEFAULT 'manual',
            created_at DOUBLE PRECISION NOT NULL,
            changed_at DOUBLE PRECISION NOT NULL,
            supersedes BIGINT REFERENCES protected(id),
            superseded_by BIGINT REFERENCES protected(id),
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX protected_scope ON protected(namespace, conversation_id, state);
    """ + _refuse(
        "protected_text_immutable", "protected records are verbatim; supersede them instead of editing",
        "NEW.state IS DISTINCT FROM 'erased' AND (NEW.text IS DISTINCT FROM OLD.text "
        "OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.namespace IS DISTINCT FROM OLD.namespace "
        "OR NEW.conversation_id IS DISTINCT FROM OLD.conversation_id)", table="protected",
    ) + _refuse(
        "protected_transitions", "only an active protected record can change state",
        "NEW.state IS DISTINCT FROM OLD.state AND OLD.state IS DISTINCT FROM 'active' "
        "AND NEW.state IS DISTINCT FROM 'erased'", table="protected",
    ) + _refuse("protected_no_delete", "protected records are never deleted; change their state or erase them",
                "TRUE", "BEFORE DELETE", "protected") + """
        ALTER TABLE cards ADD COLUMN erased INTEGER NOT NULL DEFAULT 0;
    """ + _refuse(
        "cards_immutable", "summary cards are immutable; only the stale flag (or erasure) may change",
        "NOT (OLD.erased = 0 AND NEW.erased = 1) AND (NEW.text IS DISTINCT FROM OLD.text "
        "OR NEW.tokens IS DISTINCT FROM OLD.tokens OR NEW.depth IS DISTINCT FROM OLD.depth "
        "OR NEW.first_seq IS DISTINCT FROM OLD.first_seq OR NEW.last_seq IS DISTINCT FROM OLD.last_seq "
        "OR NEW.labels IS DISTINCT FROM OLD.labels OR NEW.family_id IS DISTINCT FROM OLD.family_id "
        "OR NEW.source_tokens IS DISTINCT FROM OLD.source_tokens OR NEW.erased IS DISTINCT FROM OLD.erased)",
        table="cards",
    ))


@migration(7, "turn_idempotency_keys")
def m007_turn_idempotency_keys(c: PostgresDB) -> None:
    """Append idempotency keys: unique per conversation, set once at insert, never changed."""
    run_script(c, """
        ALTER TABLE turns ADD COLUMN idempotency_key TEXT;
        CREATE UNIQUE INDEX turns_idempotency_key ON turns(conversation_id, idempotency_key)
            WHERE idempotency_key IS NOT NULL;
    """ + _refuse("turns_idempotency_key_immutable",
                  "an append idempotency key is set once, when the turn is archived",
                  "NEW.idempotency_key IS DISTINCT FROM OLD.idempotency_key", table="turns"))


@migration(8, "compaction_notes")
def m008_compaction_notes(c: PostgresDB) -> None:
    """Compaction notes: the background worker's queue, one note per conversation; a new
    generation (never reused: a sequence) each time a note is left standing."""
    run_script(c, """
        CREATE TABLE compaction_notes (
            generation BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL UNIQUE REFERENCES conversations(id),
            namespace TEXT NOT NULL,
            pressure BIGINT NOT NULL,
            noted_at DOUBLE PRECISION NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            not_before DOUBLE PRECISION NOT NULL DEFAULT 0,
            last_error TEXT
        );
        CREATE INDEX compaction_notes_due ON compaction_notes(not_before, generation);
    """)


@migration(13, "abandoned_runs")
def m013_abandoned_runs(c: PostgresDB) -> None:
    """A consolidation run whose holder died is closed as ``abandoned`` (issue 13): the run status
    CHECK gains that value."""
    run_script(c, """
        ALTER TABLE consolidation_runs DROP CONSTRAINT consolidation_runs_status_check;
        ALTER TABLE consolidation_runs ADD CONSTRAINT consolidation_runs_status_check
            CHECK (status IN ('running', 'ok', 'failed', 'stopped', 'abandoned'));
    """)


@migration(15, "erasure_scrubs_events")
def m015_erasure_scrubs_events(c: PostgresDB) -> None:
    """Erasure reaches the event log (issue 15): the log stays append-only, except that erasure
    may blank an event's details and cause (to exactly ``{"erased":true}`` and ``''``); its time,
    kind, subject and record id never change."""
    run_script(c, """
        DROP TRIGGER events_append_only ON events;
        DROP FUNCTION events_append_only();
    """ + _refuse(
        "events_append_only", "the event log is append-only (only erasure may blank an event''s details)",
        """NOT (NEW.details = '{"erased":true}' AND NEW.cause = '' AND NEW.id = OLD.id AND NEW.at = OLD.at """
        "AND NEW.kind = OLD.kind AND NEW.subject = OLD.subject AND NEW.namespace IS NOT DISTINCT FROM OLD.namespace "
        "AND NEW.record_id IS NOT DISTINCT FROM OLD.record_id)", "BEFORE UPDATE", "events"))


@migration(14, "folds_and_strategy_frames")
def m014_folds_and_strategy_frames(c: PostgresDB) -> None:
    """Folds the model chooses and strategy frames (issue 14): ``folds`` (written in the
    transaction of its card and splice), each conversation's ``strategy_frames`` stack with its
    report slot, and ``fold_counters``."""
    run_script(c, """
        CREATE TABLE folds (
            id BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            kind TEXT NOT NULL CHECK (kind IN ('unit', 'strategy', 'receipt')),
            card_id BIGINT REFERENCES cards(id),
            first_seq BIGINT NOT NULL,
            last_seq BIGINT NOT NULL,
            made_after_seq BIGINT NOT NULL,
            index_json TEXT NOT NULL DEFAULT '{}',
            created_at DOUBLE PRECISION NOT NULL,
            CHECK (first_seq <= last_seq)
        );
        CREATE INDEX folds_conversation ON folds(conversation_id, id);
        CREATE INDEX folds_card ON folds(card_id);

        CREATE TABLE strategy_frames (
            id BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            parent_frame BIGINT REFERENCES strategy_frames(id),
            name TEXT NOT NULL,
            brief TEXT NOT NULL DEFAULT '',
            start_seq BIGINT NOT NULL,
            opened_by TEXT NOT NULL,
            report TEXT,
            reports INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closing', 'closed')),
            reason TEXT,
            fold_id BIGINT REFERENCES folds(id),
            opened_at DOUBLE PRECISION NOT NULL,
            closed_at DOUBLE PRECISION
        );
        CREATE INDEX strategy_frames_conversation ON strategy_frames(conversation_id, status, id);

        CREATE TABLE fold_counters (
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            name TEXT NOT NULL,
            value BIGINT NOT NULL DEFAULT 0,
            PRIMARY KEY (conversation_id, name)
        );
    """)


@migration(20, "system_turn_index")
def m020_system_turn_index(c: PostgresDB) -> None:
    """The standing system turn: a partial index finds a conversation's newest system turn."""
    run_script(c, "CREATE INDEX turns_system ON turns(conversation_id, seq) WHERE role = 'system';")


@migration(21, "pgvector_embeddings")
def m021_pgvector_embeddings(c: PostgresDB) -> None:
    """pgvector (issue 17, point 2; PostgreSQL only, SQLite has no migration 21): when the ``vector``
    extension can be created and the ``pgvector`` setting is on, ``embeddings`` gains the column
    ``embedding`` (filled from the stored bytes) and, once the database's model is known, one HNSW
    index per kind (:mod:`.pgvector`). Without the extension the migration records itself and
    changes nothing: nearest-neighbour search then runs in-process."""
    from .pgvector import install

    install(c)
