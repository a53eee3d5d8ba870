"""``memfold fork`` and ``memfold clear``: branch a conversation, or start a new session in its family (issue 15).

Each makes one call on the conversation the facade hands out (:meth:`Conversation.fork_info`,
:meth:`Conversation.clear`) and prints what was made; ``--json`` for scripts.
"""

from __future__ import annotations

import click

from .core import cli, db_argument, emit_json, json_option, open_db


@cli.command()
@db_argument
@click.argument("conversation_id")
@click.argument("new_id")
@click.option("--at", "at", type=int, default=None,
              help="Fork after this seq (default: the end); the fork sees turns 1..AT and nothing after.")
@click.option("--namespace", "-n", default=None,
              help="Give the fork its own (new) namespace, seeded with a copy of the parent's memories.")
@json_option
def fork(db: str, conversation_id: str, new_id: str, at: int | None, namespace: str | None, as_json: bool) -> None:
    """Fork CONVERSATION_ID into NEW_ID: the fork starts from its state at the fork point, then
    neither side reads or changes the other's later state."""
    mf = open_db(db)
    info = mf.conversation(conversation_id, create=False).fork_info(new_id, at=at, namespace=namespace)
    mf.close()
    if as_json:
        emit_json(info)
    else:
        click.echo(f"forked {conversation_id} into {new_id} after seq {info['fork_after_seq']}: "
                   f"{info['catalog_items']} catalog items, {info['protected_copied']} protected records copied"
                   + (f", {info['records_copied']} memory records copied into {namespace}" if namespace else ""))


@cli.command()
@db_argument
@click.argument("conversation_id")
@click.argument("new_id")
@json_option
def clear(db: str, conversation_id: str, new_id: str, as_json: bool) -> None:
    """Start NEW_ID, a new session in CONVERSATION_ID's family with an empty context; the old
    history stays archived and searchable."""
    mf = open_db(db)
    new = mf.conversation(conversation_id, create=False).clear(new_id)
    info = {"id": new.id, "family": new.family_id, "namespace": new.namespace, "parent": new.parent_id}
    mf.close()
    if as_json:
        emit_json(info)
    else:
        click.echo(f"started {new.id}, a new session in family {info['family']} (namespace {info['namespace']}); "
                   f"{conversation_id}'s history stays searchable")
