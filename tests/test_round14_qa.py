"""Round 14's QA pass.

Part 1: the attribute slots' round-14 families (issue 20, point 11), written from the misses of
fresh10; each case is a sentence of our own (none copied from a phrasing set), read with the
family on and with it off. Part 2: the instruction model's switch and the new-user defects found
this round; every bad-input case asserts the error class (a :class:`MemfoldError`), words of its
message, and that nothing was written.
"""

from __future__ import annotations

import pytest

from memfold import LogicalClock, MemFold
from memfold.consolidation.extractors import attributes
from memfold.consolidation.extractors.attributes import attribute_statements
from memfold.memory import families


def _writes(sentence: str) -> dict[str, str]:
    return {st.key: st.value for st in attribute_statements(sentence) if st.op == "write" and st.key}


#: (family, sentence, the slots written with it on)
WRITES = [
    (attributes.F_LINE_BREAK_R14, "About me:\n- I work nights\n- my favourite bakery is Dough Boys\n- I own a cat",
     {"user.favourite.bakery": "Dough Boys"}),
    (attributes.F_TOKEN_DOT_R14, "My preferred news site is theguardian.com.", {"user.preferred.news_site": "theguardian.com"}),
    (attributes.F_TOKEN_DOT_R14, "my preferred python version is 3.12", {"user.preferred.python_version": "3.12"}),
    (attributes.F_LATEST_R14, "My newest favourite podcast is Reply All.", {"user.favourite.podcast": "Reply All"}),
    (attributes.F_MEDIA_CHANNEL_R14, "My favourite YouTube channel is Veritasium.",
     {"user.favourite.youtube_channel": "Veritasium"}),
    (attributes.F_MEDIA_CHANNEL_R14, "My preferred contact number is 07700 900123.",
     {"user.preferred.contact_number": "07700 900123"}),
    (attributes.F_BARE_QUALIFIER_R14, "My preferred day for deliveries is Tuesday.",
     {"user.preferred.day_for_deliveries": "Tuesday"}),
    (attributes.F_BARE_QUALIFIER_R14, "My favourite type of cheese is Comté.", {"user.favourite.type_of_cheese": "Comté"}),
    (attributes.F_VOICE_FILLER_R14, "so my favourite board game is um like Catan", {"user.favourite.board_game": "Catan"}),
    (attributes.F_VOICE_FILLER_R14, "My favourite poet is certainly Keats.", {"user.favourite.poet": "Keats"}),
    (attributes.F_SPELLING_R14, "I swtiched my broadband to Zen.", {"user.preferred.broadband": "Zen"}),
    (attributes.F_SPELLING_R14, "I have switch my energy supplier to Octopus.", {"user.preferred.energy_supplier": "Octopus"}),
    (attributes.F_NO_SUBJECT_R14, "Finally switched providers to Zen.", {"user.preferred.provider": "Zen"}),
    (attributes.F_TIME_FROM_R14, "I switched my accountant to Harlow & Co starting next month.",
     {"user.preferred.accountant": "Harlow & Co"}),
]


@pytest.mark.parametrize("family, sentence, slots", WRITES, ids=[f"{w[0]}-{i}" for i, w in enumerate(WRITES)])
def test_each_round14_attribute_family_writes_its_slot_and_only_with_it(family, sentence, slots):
    assert _writes(sentence) == slots
    with families.off([family]):
        assert _writes(sentence) != slots


@pytest.mark.parametrize("sentence, slots", [
    ("My favourite walk is the one from Hathersage.", {"user.favourite.walk": "the one from Hathersage"}),
    ("My favourite player on the team is Mbappé.", {"user.favourite.player": "Mbappé"}),  # a determiner: a qualifier
    ("My favourite drink in summer is Pimm's.", {"user.favourite.drink": "Pimm's"}),  # a situation: a qualifier
    ("My favourite city in Spain is Seville.", {"user.favourite.city": "Seville"}),  # a name: a qualifier
    ("My preferred contact method is email.", {}),  # a channel preference keeps its own slot
    ("My preferred channel is email.", {}),
    ("My favourite author is probably Le Carré.", {}),  # a hedge is still no fact
    ("Don't switch my plan to the premium tier.", {}),  # an imperative has no subject to restore
    ("My preferred time is after 6pm.", {"user.preferred.time": "after 6pm"}),  # a time after "after" stays
    ("My preferred airline is Ryanair, after the strike.", {"user.preferred.airline": "Ryanair"}),
])
def test_round14_attribute_rules_keep_their_limits(sentence, slots):
    assert _writes(sentence) == slots


def _facts(turns: list[str]) -> dict[str, str]:
    with MemFold(None, clock=LogicalClock(), embedder=None, token_counter="words") as mf:
        conv = mf.conversation("a", namespace="ns")
        for text in turns:
            conv.append({"role": "user", "content": text})
            mf.consolidate("ns", include_turns=True)
        return {r.key: r.content for r in mf.memory.list("ns", "semantic")
                if r.key and r.key.startswith(("user.favourite.", "user.preferred."))}


@pytest.mark.parametrize("family, turns, facts", [
    # the value names the slot, whatever words named it before
    (attributes.F_NOT_MY_SLOT_R14, ["My favourite rugby club is Saracens.", "My preferred bank is Monzo.",
                                    "Saracens aren't my favourite club any more."], {"user.preferred.bank": "Monzo"}),
    # the place after the switch is described, not named: it fills the slot just talked about
    (attributes.F_SWITCH_DESCRIBED_R14, ["My preferred barber is Ted's.", "I switched to a small shop on Kings Road."],
     {"user.preferred.barber": "a small shop on Kings Road"}),
    # a missing apostrophe, and a missing subject
    (attributes.F_SPELLING_R14, ["My preferred supermarket is Lidl.", "i dont shop at lidl anymore"], {}),
    (attributes.F_NO_SUBJECT_R14, ["My favourite snack is Twiglets.", "Gave up Twiglets, too salty."], {}),
])
def test_round14_attribute_families_in_a_conversation(family, turns, facts):
    assert _facts(turns) == facts
    with families.off([family]):
        assert _facts(turns) != facts


# -- part 2: MEMFOLD_INSTRUCTION_MODEL (an unknown value left the model on) ------------------------

import json  # noqa: E402
import sqlite3  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from memfold import InvalidInput, MemfoldError, SettingError  # noqa: E402
from memfold.cli import cli  # noqa: E402
from memfold.window import instruction_model  # noqa: E402
from memfold.window.constraints import RuleConstraintExtractor  # noqa: E402


@pytest.mark.parametrize("value, on", [("", True), ("on", True), (" ON ", True), ("1", True), ("True", True),
                                       ("yes", True), ("off", False), ("\tOff\n", False), ("0", False),
                                       ("FALSE", False), ("no", False)])
def test_the_instruction_model_switch_accepts_its_values(monkeypatch, value, on):
    monkeypatch.setenv(instruction_model.ENV_SWITCH, value)
    assert RuleConstraintExtractor().model is on
    with MemFold(None, embedder=None) as mf:
        assert mf.parts.constraints.rules.model is on


def test_the_instruction_model_switch_unset_is_on(monkeypatch):
    monkeypatch.delenv(instruction_model.ENV_SWITCH, raising=False)
    assert RuleConstraintExtractor().model is True


@pytest.mark.parametrize("value", ["maybe", "of", "onn", "2", "enabled", "o f f"])
def test_an_unknown_instruction_model_switch_is_refused_and_creates_nothing(monkeypatch, tmp_path, value):
    monkeypatch.setenv(instruction_model.ENV_SWITCH, value)
    with pytest.raises(SettingError) as caught:
        RuleConstraintExtractor()
    message = str(caught.value)
    assert isinstance(caught.value, InvalidInput) and isinstance(caught.value, MemfoldError)
    assert f"MEMFOLD_INSTRUCTION_MODEL={value!r} is not understood" in message
    assert "on, 1, true or yes" in message and "off, 0, false or no" in message
    assert RuleConstraintExtractor(model=False).model is False  # an explicit choice needs no switch
    with pytest.raises(SettingError, match="MEMFOLD_INSTRUCTION_MODEL"):
        MemFold(tmp_path / "new.db", embedder=None)
    assert list(tmp_path.iterdir()) == []  # refused before the file was created


def test_the_cli_shows_an_unknown_switch_as_one_error_line_and_writes_nothing(monkeypatch, tmp_path):
    db = tmp_path / "agent.db"
    assert CliRunner().invoke(cli, ["init", str(db)]).exit_code == 0
    conn = sqlite3.connect(db)
    before = "\n".join(conn.iterdump())
    conn.close()
    monkeypatch.setenv(instruction_model.ENV_SWITCH, "maybe")
    assert CliRunner().invoke(cli, ["--help"]).exit_code == 0  # import and --help never read the switch
    plain = CliRunner().invoke(cli, ["remember", str(db), "I like tea", "-n", "u"])
    assert plain.exit_code == 1 and plain.output.startswith("Error: MEMFOLD_INSTRUCTION_MODEL='maybe'"), plain.output
    assert plain.output.count("\n") == 1
    as_json = CliRunner().invoke(cli, ["remember", str(db), "I like tea", "-n", "u", "--json"])
    assert json.loads(as_json.stdout.splitlines()[0])["type"] == "SettingError"
    conn = sqlite3.connect(db)
    assert "\n".join(conn.iterdump()) == before
    conn.close()
    fresh = CliRunner().invoke(cli, ["init", str(tmp_path / "other.db")])
    assert fresh.exit_code == 1 and not (tmp_path / "other.db").exists()


# -- part 2: a new user's bad inputs (round 14) ------------------------------------------------------

import shutil  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

from memfold import Reader, StorageError  # noqa: E402

NS = "acme/dana"


def _dump(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("r14") / "template.db"
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("c1", namespace=NS)
    conv.append({"role": "user", "content": "My order ORD-3300 arrived broken."})
    conv.append({"role": "assistant", "content": "Sorry to hear that. Let me check."})
    mf.memory.write(NS, "semantic", "Dana prefers email contact", key="user.contact_preference")
    mf.conversation("legal-1", namespace=NS, labels=["legal"]).append({"role": "user", "content": "Clause 7 is void"})
    mf.close()
    return path


@pytest.fixture
def db(template, tmp_path) -> Path:
    path = tmp_path / "agent.db"
    shutil.copyfile(template, path)
    return path


def _c1(mf):
    return mf.conversation("c1", create=False)


LONG = "x" * 1_001

#: (id, call(mf), error class, words the message must contain); the comment says what it did before
API_CASES_R14 = [
    # include_turns="yes" read the turns; "no" did too (a non-empty string is true)
    ("consolidate-include-turns-str", lambda mf: mf.consolidate(NS, include_turns="no"), InvalidInput,
     "include_turns must be True or False, got 'no'"),
    # dry_run="no" made a dry run
    ("consolidate-dry-run-str", lambda mf: mf.consolidate(NS, dry_run="no"), InvalidInput,
     "dry_run must be True or False, got 'no'"),
    ("consolidate-all-include-turns-str", lambda mf: mf.consolidate_all(include_turns="no"), InvalidInput,
     "include_turns must be True or False, got 'no'"),
    # the other yes/no arguments that took any truthy value (each read-only, so nothing was written,
    # but "no" meant yes)
    ("expand-to-turns-str", lambda mf: _c1(mf).expand("t1", to_turns="no"), InvalidInput,
     "to_turns must be True or False, got 'no'"),
    ("tool-definitions-folds-str", lambda mf: _c1(mf).tool_definitions(folds="no"), InvalidInput,
     "folds must be True or False, got 'no'"),
    ("strategy-frames-open-only-str", lambda mf: _c1(mf).strategy_frames(open_only="no"), InvalidInput,
     "open_only must be True or False, got 'no'"),
    ("list-include-inactive-str", lambda mf: mf.memory.list(NS, include_inactive="no"), InvalidInput,
     "include_inactive must be True or False, got 'no'"),
    # a 100,000-character id, namespace and label made 20 short turns a 14 MB file
    ("conversation-id-too-long", lambda mf: mf.conversation(LONG, namespace=NS), InvalidInput,
     "is 1,001 characters long: a name has at most 1,000"),
    ("namespace-too-long", lambda mf: mf.memory.write(LONG, "semantic", "x"), InvalidInput,
     "namespace 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... is 1,001 characters long"),
    ("label-too-long", lambda mf: _c1(mf).append({"role": "user", "content": "x", "labels": [LONG]}), InvalidInput,
     "label in labels"),
    ("key-too-long", lambda mf: mf.memory.write(NS, "semantic", "x", key="user." + LONG), InvalidInput,
     "a name has at most 1,000"),
    # Reader.of("legal") held the labels a, e, g, l (a turn labelled "e" was readable to it)
    ("reader-of-str", lambda mf: mf.conversation("legal-1", create=False).history(reader=Reader.of("legal")),
     InvalidInput, "reader labels must be a list of label names, got the string 'legal'"),
    # Reader("legal") held the string: every check raised TypeError
    ("reader-str", lambda mf: mf.read(NS, reader=Reader("legal")), InvalidInput, "use Reader.of(['legal'])"),
    ("reader-name-int", lambda mf: mf.read(NS, reader=Reader.of([], 5)), InvalidInput,
     "a reader's name must be a non-empty string"),
    ("reader-name-empty", lambda mf: mf.read(NS, reader=Reader.of(["legal"], " ")), InvalidInput,
     "a reader's name must be a non-empty string"),
]


@pytest.mark.parametrize("call,error,words", [c[1:] for c in API_CASES_R14], ids=[c[0] for c in API_CASES_R14])
def test_round14_bad_input_is_refused_and_writes_nothing(db, call, error, words):
    before = _dump(db)
    mf = MemFold(db, embedder=None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(error) as caught:
                call(mf)
    finally:
        mf.close()
    assert isinstance(caught.value, MemfoldError)
    assert words in str(caught.value), str(caught.value)
    assert _dump(db) == before, "a refused call changed the database"


def test_the_refused_flags_take_true_and_false(db):
    """The same calls with real booleans still work (the check refuses only non-bools)."""
    mf = MemFold(db, embedder=None)
    try:
        assert mf.consolidate(NS, dry_run=True, include_turns=False).dry_run
        assert len(_c1(mf).tool_definitions(folds=True)) > len(_c1(mf).tool_definitions(folds=False))
        assert _c1(mf).strategy_frames(open_only=True) == []
        assert [r.key for r in mf.memory.list(NS, include_inactive=True)] == ["user.contact_preference"]
        assert Reader(["legal"]).labels == frozenset({"legal"})
        assert mf.conversation("n" * 1_000, namespace=NS).id == "n" * 1_000  # the limit itself is fine
    finally:
        mf.close()


def test_read_only_as_a_string_is_refused_before_the_file_is_made(tmp_path, db):
    """``read_only="no"`` opened the file read-only (and created a new one first)."""
    with pytest.raises(InvalidInput, match="read_only must be True or False, got 'no'"):
        MemFold(tmp_path / "new.db", read_only="no", embedder=None)
    assert not (tmp_path / "new.db").exists()
    before = _dump(db)
    with pytest.raises(InvalidInput, match="read_only must be True or False"):
        MemFold(db, read_only=1, embedder=None)
    assert _dump(db) == before


def test_a_database_in_a_missing_folder_names_the_folder(tmp_path):
    """It said only ``unable to open database file``."""
    target = tmp_path / "nope" / "agent.db"
    with pytest.raises(StorageError) as caught:
        MemFold(target, embedder=None)
    assert f"folder {target.parent} does not exist" in str(caught.value)
    assert list(tmp_path.iterdir()) == []
    result = CliRunner().invoke(cli, ["init", str(target)])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert result.output.startswith("Error: ") and "does not exist" in result.output
    assert list(tmp_path.iterdir()) == []


def test_the_cli_refuses_a_namespace_past_the_name_limit_in_one_line(db):
    before = _dump(db)
    result = CliRunner().invoke(cli, ["remember", str(db), "x", "-n", LONG])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert result.output.startswith("Error: namespace ") and "a name has at most 1,000" in result.output
    assert _dump(db) == before
