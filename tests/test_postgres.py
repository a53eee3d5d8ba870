"""The PostgreSQL backend end to end (issue 17): the CLI and ``MEMFOLD_DB`` take a URL, the main job
gives the same report on both backends, search ranks alike, a newer schema is refused.

The storage contract, window, consolidation, labels, erasure, nightly-job and worker tests run on
both backends through their fixtures (``tests/conftest.py``: ``pg_url``, ``backend_target``);
this file holds what is about PostgreSQL itself. A real server, started by the session fixture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import memfold
from memfold.cli import cli
from memfold.memory.errors import SchemaTooNew, StorageError
from memfold.memory.search import bm25_query
from memfold.memory.storage import open_storage
from memfold.memory.storage.rows import SearchScope

#: report figures that measure time, not behaviour (they differ run to run on one backend too)
TIMINGS = ("_ms_", "_seconds")


def without_timings(figures: dict) -> dict:
    return {k: v for k, v in figures.items() if not any(t in k for t in TIMINGS)}


def test_replay_sample_gives_the_same_report_on_both_backends(tmp_path, pg_url):
    runner = CliRunner()
    reports = {}
    for name, db in (("sqlite", str(tmp_path / "replay.db")), ("postgres", pg_url)):
        out = tmp_path / f"{name}.json"
        result = runner.invoke(cli, ["replay", "--sample", "--db", db, "--tokens", "words", "--json", str(out)])
        assert result.exit_code == 0, result.output
        reports[name] = json.loads(out.read_text())
    sqlite, postgres = reports["sqlite"], reports["postgres"]
    assert sqlite["figures"]["turns"] > 100 and sqlite["figures"]["folds"] > 0  # a real run to compare
    assert without_timings(postgres["figures"]) == without_timings(sqlite["figures"])
    assert {k: v for k, v in postgres.items() if k != "figures"} == {k: v for k, v in sqlite.items() if k != "figures"}


STAR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "star"


@pytest.mark.skipif(not (STAR / "index.tsv").exists(), reason=f"the STAR data set is not at {STAR}")
def test_replay_of_a_star_persona_gives_the_same_report_on_both_backends(tmp_path, pg_url):
    """Issue 17, point 5, on real service dialogues: STAR's Tyler Jones (first dialogues, a small
    budget so the window folds and rolls up), facts and their gold compared too.
    ``bench/bench_replay.py --compare-postgres`` runs the whole persona and LoCoMo."""
    runner = CliRunner()
    reports = {}
    for name, db in (("sqlite", str(tmp_path / "star.db")), ("postgres", pg_url)):
        out = tmp_path / f"{name}.json"
        result = runner.invoke(cli, ["replay", str(STAR), "--persona", "Tyler Jones", "--limit", "6", "--budget", "300",
                                     "--hot-turns", "4", "--db", db, "--tokens", "words", "--json", str(out)])
        assert result.exit_code == 0, result.output
        reports[name] = json.loads(out.read_text())
    sqlite, postgres = reports["sqlite"], reports["postgres"]
    assert sqlite["figures"]["turns"] > 40 and sqlite["figures"]["folds"] > 0 and sqlite["facts"]["compared"] > 0
    assert without_timings(postgres["figures"]) == without_timings(sqlite["figures"])
    assert {k: v for k, v in postgres.items() if k != "figures"} == {k: v for k, v in sqlite.items() if k != "figures"}


def test_every_cli_command_takes_a_url_and_memfold_db(pg_url):
    runner = CliRunner()
    initialised = runner.invoke(cli, ["init", pg_url, "--clock", "logical"])
    assert initialised.exit_code == 0, initialised.output
    remembered = runner.invoke(cli, ["remember", pg_url, "Dana prefers email", "-n", "acme/dana", "-t", "semantic",
                                     "-k", "user.contact_preference"])
    assert remembered.exit_code == 0, remembered.output
    listed = runner.invoke(cli, ["memories", "--namespace", "acme/dana", "--json"], env={"MEMFOLD_DB": pg_url})
    assert listed.exit_code == 0, listed.output
    assert [r["content"] for r in json.loads(listed.output)] == ["Dana prefers email"]
    clock = runner.invoke(cli, ["clock", pg_url, "--json"])
    assert clock.exit_code == 0 and json.loads(clock.output)["clock"] == "logical", clock.output


def test_an_empty_database_is_refused_by_read_commands_naming_init(pg_empty_url):
    result = CliRunner().invoke(cli, ["memories", pg_empty_url])
    assert result.exit_code == 1
    assert "is not a memfold database (it is empty)" in result.output and "memfold init" in result.output


def test_a_bad_url_is_a_storage_error_naming_it():
    with pytest.raises(StorageError, match="cannot connect to PostgreSQL"):
        memfold.MemFold("postgresql://nobody@/nowhere?host=/nonexistent-socket-dir&connect_timeout=2")


def test_a_newer_schema_is_refused_naming_both_versions(pg_url):
    import psycopg

    from memfold.memory.storage.postgres.migrations import latest_version

    open_storage(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_version(version, name) VALUES (%s, 'newer')", [latest_version() + 5])
    with pytest.raises(SchemaTooNew) as raised:
        memfold.MemFold(pg_url)
    assert f"version {latest_version() + 5}" in str(raised.value) and f"version {latest_version()}" in str(raised.value)


CORPUS = [
    "Dana ordered the walnut desk ORD-3300 on Monday; it arrived with a broken leg.",
    "The refund of $180.00 for ORD-3300 was approved by Priya.",
    "Café crème and naïve résumé: diacritics fold to plain letters.",
    "user_id and user-id and USER ID are three spellings of the same words",
    "Shipping to 221B Baker Street, London; the courier calls before delivery.",
    "Refunds take five business days; refunded orders show as refunded.",
    "The parcel is late again, third time this month.",
] * 3


@pytest.mark.parametrize("query", ["refund ORD-3300", "cafe resume", "user id", "delivery courier", "the parcel",
                                   "refunds refunded", "broken desk walnut"])
def test_bm25_and_snippets_match_sqlite(tmp_path, pg_url, query):
    """The same corpus on both backends ranks the same ids with the same BM25 scores and snippets
    (the tokenizer and ``bm25()`` of FTS5 reproduced on tsvector + GIN)."""
    stores = [open_storage(tmp_path / "x.db", "logical"), open_storage(pg_url, "logical")]
    try:
        for s in stores:
            with s.transaction():
                s.archive.insert_conversation(conversation_id="c", namespace="ns", family_id="c", parent_id=None,
                                              fork_after_seq=None, created_at=0.0, labels=[])
                for i, text in enumerate(CORPUS, start=1):
                    s.archive.insert_turn(conversation_id="c", family_id="c", seq=i, role="user", content=text,
                                          name=None, tool_call_id=None, tool_calls=None, metadata="{}",
                                          created_at=float(i), tokens=len(text.split()), sha256="x", labels=[])
        match = bm25_query(query)
        ranked = [s.fulltext.rank("turn", match, SearchScope(), 50) for s in stores]
        assert ranked[0], "the query matches something"
        assert [i for i, _ in ranked[1]] == [i for i, _ in ranked[0]] or \
            sorted(ranked[1]) == pytest.approx(sorted(ranked[0]))  # ties may order differently
        assert dict(ranked[1]) == pytest.approx(dict(ranked[0]), rel=1e-9)
        snippets = [[m.snippet for m in s.fulltext.match_turns(match, [("c", None)], 5)] for s in stores]
        assert snippets[1] == snippets[0]
    finally:
        for s in stores:
            s.close()
