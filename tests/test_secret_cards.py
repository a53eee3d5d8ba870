"""A secret turn folds into a card as a pointer only, so the card does not inherit the ``secret`` label
and stays visible to ordinary readers, while the secret's words stay hidden (issues 8 and 9)."""

from memfold import Reader, WindowSettings


def test_secret_turn_folds_as_pointer_and_card_stays_visible(mf):
    conv = mf.conversation("bank", namespace="bank/tyler")
    conv.append({"role": "user", "content": "Hi I need help with my account balance please"})
    conv.append({"role": "assistant", "content": "Sure, could you tell me your PIN please"})
    secret_id = conv.append({"role": "user", "content": "It is 5380", "labels": ["secret"]})
    conv.append({"role": "assistant", "content": "Thanks, your balance is $1,250.00 on account 85731890"})
    for i in range(6):
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"follow up message number {i} about the statement"})
    conv.compact(target_tokens=30, budget_tokens=60, output_reserve_tokens=0, hot_turns=2,
                 leaf_chunk_tokens=40, card_target_tokens=15)
    folded = [c for c in mf.db.execute(
        "SELECT c.id, c.text, c.labels FROM cards c JOIN card_covers v ON v.card_id = c.id "
        "WHERE v.child_kind = 'turn' AND v.child_id = ?", [secret_id])]
    assert folded, "the secret turn was folded into a card"
    for _, text, labels in folded:
        assert "5380" not in text
        assert "secret" not in labels
    ordinary = Reader.of([]) if hasattr(Reader, "of") else Reader(frozenset())
    compiled = conv.context(budget=60, output_reserve=0, reader=ordinary, hot_turns=2,
                            leaf_chunk_tokens=40, card_target_tokens=15)
    shown = " ".join(m["content"] for m in compiled.messages)
    assert "5380" not in shown
    # the catalog card whose span covers the secret turn is served to the ordinary reader
    (covering,) = [item for item in conv.catalog_items() if item.kind == "card"
                   and secret_id in [t.id for t in conv.expand(item.item_id, to_turns=True)]]
    assert f"[c{covering.item_id}]" in shown
    # the secret turn itself stays hidden from a reader without the label, not from the owner
    assert secret_id not in [t.id for t in conv.expand(covering.item_id, to_turns=True, reader=ordinary)]
