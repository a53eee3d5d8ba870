"""A protected record the context could never show is refused when it is written (issue 20, point 3).

Protected records never leave the compiled context for size (DESIGN.md §4.6), so a channel over
the usable budget makes every later compile of the conversation fail
(:func:`~.context.check_protected_fits`). The user's entry points (``MemFold.protect``,
``MemFold.supersede_protected``, the HTTP routes and through them the CLI) write through
:func:`add_fitting` / :func:`supersede_fitting`: the record is written, checked against the window
settings given (the facade's), and the transaction rolls back when it does not fit, so nothing is
written. The extractor and forks add records through the channel itself and are not checked here
(a fork copies records that already fit; an extracted record comes from a turn the user wrote).

* The record's own channel line (with the channel's header) over the usable budget:
  :class:`~memfold.InvalidInput`, naming the sizes: no context could show it.
* It fits alone, but a channel it joins would go over (as the owner sees it: for a conversation's
  record, that conversation's channel, namespace-wide records included; for a namespace-wide
  record, the namespace-wide records and the channel of every conversation of the namespace with
  active records of its own): :class:`~memfold.BudgetError`, naming the largest channel. Every
  context of that conversation would fail, so the caller must satisfy, expire, revoke or
  supersede some records first (or raise the budget).

A context compiled with a smaller per-call ``budget=`` than the settings checked here is still
refused when it is compiled, as before.
"""

from __future__ import annotations

from typing import Any

from ..memory.errors import BudgetError, InvalidInput, MemfoldError
from ..memory.storage.base import write_scope
from ..memory.storage.rows import ProtectedRecord
from .archive import Archive
from .protected import CHANNEL_HEADER, ProtectedChannel, render_line
from .settings import WindowSettings


def check_fits(channel: ProtectedChannel, record: ProtectedRecord, settings: WindowSettings) -> None:
    """Refuse ``record`` (written, inside the caller's transaction) when the context could not show it.

    :raises InvalidInput: when its channel line alone exceeds ``settings.usable_tokens``.
    :raises BudgetError: when a channel it joins would exceed it.
    """
    usable = settings.usable_tokens
    sizes = (f"usable budget {usable} (budget {settings.budget_tokens} - output reserve "
             f"{settings.output_reserve_tokens})")
    counter = channel.token_counter
    alone = counter.count(CHANNEL_HEADER + "\n" + render_line(record, channel.clock))
    if alone > usable:
        raise InvalidInput(
            f"this protected record alone is {alone} tokens in the channel (its text {counter.count(record.text)}) "
            f"> {sizes}: no context could show it, so nothing was written; shorten it, or raise the budget of "
            "the window settings"
        )
    if record.conversation_id is not None:
        conversations = [record.conversation_id]
    else:  # every conversation of the namespace shows it; those with records of their own show more
        conversations = sorted({r.conversation_id for r in channel.storage.protected.list(
            namespace=record.namespace, state="active") if r.conversation_id is not None})
    channels = [(f"conversation {c!r}", channel.render(c)) for c in conversations]
    if record.conversation_id is None:
        channels.append((f"namespace {record.namespace!r}", channel.render(None, namespace=record.namespace,  # type: ignore[arg-type]
                                                                           lineage=[])))
    scope, largest = max(channels, key=lambda pair: pair[1].tokens)
    if largest.tokens > usable:
        raise BudgetError(
            f"with this record ({alone} tokens alone) the protected channel of {scope} would be "
            f"{largest.tokens} tokens ({len(largest.record_ids)} active records) > {sizes}: nothing was "
            "written; satisfy, expire, revoke or supersede some first (memfold protect list), or raise the budget"
        )


def _scope(channel: ProtectedChannel, conversation_id: object, namespace: object) -> tuple[str, ...] | None:
    """The write scope of adding a record there (``None``, the whole database, when the scope is
    bad: the channel's add then refuses it with its own error)."""
    if conversation_id is not None:
        try:
            namespace = Archive(channel.storage, channel.clock, channel.token_counter).conversation_row(
                conversation_id)["namespace"]
        except (MemfoldError, TypeError):
            return None
    return write_scope(protected=[namespace]) if isinstance(namespace, str) else None


def add_fitting(channel: ProtectedChannel, settings: WindowSettings, text: str, **fields: Any) -> ProtectedRecord:
    """:meth:`ProtectedChannel.add` of a record that must fit ``settings`` (:func:`check_fits`);
    nothing is written when it does not."""
    with channel.storage.transaction(_scope(channel, fields.get("conversation_id"), fields.get("namespace"))):
        record = channel.add(text, **fields)
        check_fits(channel, record, settings)
        return record


def supersede_fitting(channel: ProtectedChannel, settings: WindowSettings, record_id: int, text: str,
                      **fields: Any) -> ProtectedRecord:
    """:meth:`ProtectedChannel.supersede` whose new record (naming the old text it replaces, the
    old one no longer counted) must fit ``settings``; nothing is written when it does not."""
    old = channel.get(record_id)
    with channel.storage.transaction(write_scope(protected=[old.namespace])):
        record = channel.supersede(record_id, text, **fields)
        check_fits(channel, record, settings)
        return record
