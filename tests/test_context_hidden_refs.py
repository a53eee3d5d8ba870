"""A compiled context never names an item its reader may not see (DESIGN.md §4.9): a secret
turn the reader lacks the label for is neither rendered nor listed in ``hot_refs``/``glimpses``."""

from __future__ import annotations


def test_hot_refs_name_only_turns_the_reader_sees(mf):
    conv = mf.conversation("ticket", namespace="acme/dana")
    conv.append({"role": "user", "content": "My order ORD-3300 arrived broken."})
    conv.append({"role": "assistant", "content": "Sorry! What is the PIN on the account?"})
    secret = conv.append({"role": "user", "content": "my PIN is 4471"})
    assert "secret" in mf.archive.get(secret).labels

    hidden = conv.context(budget=2000, reader=[])
    assert f"t{secret}" not in hidden.hot_refs and f"t{secret}" not in hidden.refs
    assert "4471" not in str(hidden.messages)
    assert hidden.hot_refs  # the visible hot turns are still listed

    owner = conv.context(budget=2000)
    assert f"t{secret}" in owner.hot_refs
