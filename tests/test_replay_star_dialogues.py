"""``read_star_dialogues`` (issue 15's fresh secret check set): given STAR dialogue ids become one
conversation, read from ``dialogues_service`` or, for the multi-task and disconnected dialogues
that live only there, from ``dialogues.tar.xz``; spaceship access codes count as secrets."""

import io
import json
import tarfile

import pytest

from memfold import InvalidInput
from memfold.replay.formats import read_source, read_star_dialogues
from memfold.replay.runner import replay


def _dialogue(did, start, events, queries):
    evs = []
    for n, (agent, action, text) in enumerate(events):
        evs.append({"Agent": agent, "Action": action, "Text": text, "UnixTime": start + 10 * n})
        if n == 1:
            evs.append({"Agent": "Wizard", "Action": "query", "Constraints": queries, "UnixTime": start + 10 * n})
    return {"DialogueID": did, "Events": evs}


LOOSE = _dialogue(7, 1590000000, [
    ("User", "utter", "I need my balance."), ("Wizard", "pick_suggestion", "Right, and your PIN as well please."),
    ("User", "utter", "4321"), ("Wizard", "pick_suggestion", "Your balance is 500.")],
    [{"AccountNumber": '"11112222"', "PIN": '"4321"'}])
ARCHIVED = _dialogue(9, 1590100000, [
    ("User", "utter", "Open the cargo bay."), ("Wizard", "pick_suggestion", "Please enter the code."),
    ("User", "utter", "ZX-4471"), ("Wizard", "pick_suggestion", "Access granted.")],
    [{"UserName": '"Han"', "Code": '"ZX-4471"', "CodeType": '"Access Code"'}])


@pytest.fixture
def star(tmp_path):
    (tmp_path / "dialogues_service").mkdir()
    (tmp_path / "dialogues_service" / "7.json").write_text(json.dumps(LOOSE))
    (tmp_path / "index.tsv").write_text("dialogue_id\tfile\tstart_unix\tpersona_names\n"
                                        "7\t7.json\t1590000000\t\n9\t9.json\t1590100000\tHan\n")
    with tarfile.open(tmp_path / "dialogues.tar.xz", "w:xz") as tar:
        for d in (LOOSE, ARCHIVED):
            data = json.dumps(d).encode()
            info = tarfile.TarInfo(f"dialogues/{d['DialogueID']}.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return tmp_path


def test_given_dialogues_become_one_conversation_read_from_the_loose_files_or_the_archive(star):
    [conv] = read_star_dialogues(star, [9, 7], conversation_id="fresh-x").conversations
    assert [s.session_id for s in conv.sessions] == ["star:9", "star:7"]  # in the order given
    assert conv.conversation_id == "fresh-x" and conv.namespace == "fresh/x"
    assert conv.secrets == {"4321", "ZX-4471"}  # the access code is a secret, never a gold fact
    assert "ZX-4471" not in conv.gold_facts.values() and conv.gold_facts["CodeType"] == "Access Code"
    assert [s.session_id for s in read_source(star, dialogues=[7]).conversations[0].sessions] == ["star:7"]


def test_a_dialogue_found_nowhere_or_an_empty_list_is_refused(star):
    with pytest.raises(InvalidInput, match=r"\[12\] are neither in dialogues_service nor in dialogues.tar.xz"):
        read_star_dialogues(star, [7, 12])
    with pytest.raises(InvalidInput, match="no STAR dialogues given"):
        read_star_dialogues(star, [])
    with pytest.raises(InvalidInput, match="not a STAR folder"):
        read_star_dialogues(star / "dialogues_service", [7])


def test_a_replay_of_archived_dialogues_keeps_the_code_out_of_everything_derived(star, tmp_path):
    report = replay(read_star_dialogues(star, [7, 9]), tmp_path / "fresh.db", token_counter="words")
    assert report.secrets["checked"] == 2
    assert (report.secrets["in_facts"], report.secrets["in_cards"], report.secrets["in_protected"]) == (0, 0, 0)
