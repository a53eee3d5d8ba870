"""CLI: memfold reembed and memfold search --embedder (issue 6)."""

from __future__ import annotations

import json

from click.testing import CliRunner

import memfold
from memfold.cli import cli


def setup(tmp_path):
    db = str(tmp_path / "e.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", db, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    with memfold.MemFold(db, embedder="hashing:32") as mf:
        mf.conversation("c").append_many([{"role": "user", "content": "my parcel is late"},
                                          {"role": "assistant", "content": "I will chase the courier"}])
        mf.remember("ns", "semantic", "Dana prefers email", key="contact")
        mf.index_embeddings()
    return runner, db


def test_reembed_switches_the_model(tmp_path):
    runner, db = setup(tmp_path)
    result = runner.invoke(cli, ["reembed", db, "--model", "hashing:64"])
    assert result.exit_code == 0, result.output
    assert result.output == "embedded 3 items with memfold-hashing-v1-64 (64 dimensions)\n"
    again = runner.invoke(cli, ["reembed", db, "--json"])  # default: the file's model
    assert again.exit_code == 0, again.output
    assert json.loads(again.output) == {"db": db, "model": "memfold-hashing-v1-64", "dim": 64, "embedded": 3}


def test_search_with_another_model_is_one_clear_error(tmp_path):
    runner, db = setup(tmp_path)
    bad = runner.invoke(cli, ["search", db, "parcel", "-c", "c", "--embedder", "hashing:64"])
    assert bad.exit_code == 1
    assert bad.output.startswith("Error: this database holds vectors from model 'memfold-hashing-v1-32' (dimension 32)")
    assert len(bad.output.strip().splitlines()) == 1
    ok = runner.invoke(cli, ["search", db, "parcel", "-c", "c", "--json"])
    assert ok.exit_code == 0, ok.output
    hits = json.loads(ok.output)
    assert hits[0]["ref"] == "t1" and "parcel" in hits[0]["snippet"]
    bm25 = runner.invoke(cli, ["search", db, "parcel", "-c", "c", "--embedder", "none", "--json"])
    assert [h["ref"] for h in json.loads(bm25.output)] == ["t1"]


def test_reembed_on_a_missing_file_fails(tmp_path):
    result = CliRunner().invoke(cli, ["reembed", str(tmp_path / "none.db")])
    assert result.exit_code == 1 and "no database at" in result.output


def test_reembed_help():
    result = CliRunner().invoke(cli, ["reembed", "--help"])
    assert result.exit_code == 0 and "Replace every stored embedding" in result.output
