"""The protected channel: standing instructions that compaction must never lose (DESIGN.md §1, §4.6).

Obligations, constraints, permissions, deadlines, prerequisites for irreversible actions,
approvals, active evidence and policy state are stored as structured rows, scoped to one
conversation (``conversation_id`` set) or to a whole namespace (``conversation_id`` NULL).

Invariants kept here (each one is a test):

* A protected record's text is stored verbatim and rendered verbatim; a trigger refuses edits.
* A record leaves the channel **only** through a state transition out of ``active``
  (``satisfied``, ``expired``, ``revoked``, ``superseded``) or through erasure, never because of
  size: :meth:`ProtectedChannel.render` returns every active record the reader may see, and the
  compiled context raises :class:`~memfold.memory.errors.BudgetError` if they alone do not fit.
* Deadlines expire by the injected clock: ``due_at`` is a time value in clock units, and a
  deadline whose ``due_at <= clock.now()`` is expired (and logged) before the channel is read.
* Every transition is logged in the event log, without the record's text (erasure must be able
  to remove it everywhere).
* Protected text never reaches a summarizer (the summarizer input check lives in
  :mod:`memfold.window.summarizers` and asks :func:`protected_texts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..memory.clock import Clock
from ..memory.errors import InvalidInput, ProtectedNotFound
from ..memory.events import log_event
from ..memory.storage.base import Storage, write_scope
from ..memory.storage.rows import ProtectedRecord
from ..memory.tokens import TokenCounter
from ..memory.validation import check_id, check_labels, check_name, check_provenance, check_text, metadata_json
from .labels import Reader, as_reader, can_read

#: what a protected record can be (issue 8, point 1)
KINDS = ("obligation", "constraint", "permission", "deadline", "prerequisite", "approval", "evidence", "policy_state")
#: states; only ``active`` records are in the channel
STATES = ("active", "satisfied", "expired", "revoked", "superseded", "erased")
#: the transitions a caller may ask for (``erased`` belongs to :mod:`memfold.window.erasure`)
TRANSITIONS = ("satisfied", "expired", "revoked", "superseded")

#: the header of the rendered channel (a system message); records follow, one per line
CHANNEL_HEADER = (
    "Protected channel: standing instructions, verbatim. Each stays in force until it is marked "
    "satisfied, expired, revoked or superseded."
)


@dataclass(frozen=True)
class ChannelRendering:
    """The protected channel as chat messages for one compiled context.

    :ivar messages: zero or one system message holding every active record verbatim.
    :ivar tokens: tokens of those messages' content, by the injected counter.
    :ivar record_ids: the records rendered, in order.
    """

    messages: list[dict[str, Any]]
    tokens: int
    record_ids: list[int]


def _check_kind(kind: object) -> str:
    if kind not in KINDS:
        raise InvalidInput(f"unknown protected kind {kind!r}: use one of {', '.join(KINDS)}")
    return kind  # type: ignore[return-value]


def _check_state(state: object) -> str:
    if state not in STATES:
        raise InvalidInput(f"unknown protected state {state!r}: use one of {', '.join(STATES)}")
    return state  # type: ignore[return-value]


def render_line(record: ProtectedRecord, clock: Clock, replaced: Sequence[str] | None = None) -> str:
    """One line of the channel: ``[P<id> <kind>, due <time>] <text verbatim>``; a record that
    replaced others also names what it replaced (``replaces`` in metadata, verbatim).

    :param replaced: the replaced texts to name, as the reader may see them (see
        :meth:`ProtectedChannel.replaced_texts`); ``None``: every text in the metadata (the owner).
    """
    tag = f"P{record.id} {record.kind}"
    if record.due_at is not None:
        tag += f", due {clock.format(record.due_at)}"
    line = f"[{tag}] {record.text}"
    if replaced is None:
        replaced = record.metadata.get("replaces_text") or []
    for old in replaced:
        line += f"\n    (this replaces, no longer in force: {old})"
    return line


class ProtectedChannel:
    """The protected records of one storage.

    :param storage: the opened :class:`~memfold.memory.storage.base.Storage`.
    :param clock: the injected clock; ``created_at``, ``changed_at`` and deadline expiry use it.
    :param token_counter: counts the rendered channel's tokens.
    """

    def __init__(self, storage: Storage, clock: Clock, token_counter: TokenCounter) -> None:
        self.storage = storage
        self.clock = clock
        self.token_counter = token_counter
        self._rendered: dict[tuple, ChannelRendering] = {}  # rendered channels by their records' version
        #: (conversation, namespace, lineage, reader's labels) -> (the table's version, its rendering)
        self._by_version: dict[tuple, tuple[object, ChannelRendering]] = {}

    def _archive(self) -> Any:
        """The archive engine over the same storage (conversation rows, lineage, turns)."""
        from .archive import Archive

        return Archive(self.storage, self.clock, self.token_counter)

    # -- writing -------------------------------------------------------------------------
    def add(
        self,
        text: str,
        *,
        kind: str = "constraint",
        namespace: str | None = None,
        conversation_id: str | None = None,
        due_at: object = None,
        provenance: Iterable[str] | None = None,
        labels: Iterable[str] | None = None,
        source: str = "manual",
        metadata: dict[str, Any] | None = None,
        cause: str = "add",
        state: str = "active",
    ) -> ProtectedRecord:
        """Add one protected record (validated first; nothing is written on bad input).

        :param text: the instruction, stored and rendered verbatim.
        :param kind: one of :data:`KINDS`.
        :param namespace: the scope for a namespace-wide record; for a conversation-scoped record it
            defaults to the conversation's namespace (and must match it if given).
        :param conversation_id: scope the record to this conversation (None: the whole namespace).
        :param due_at: for deadlines, when it expires (ticks or an aware datetime / POSIX seconds).
        :param provenance: source ids, e.g. ``["turn:12"]``.
        :param labels: access labels a reader must hold to see it.
        :param state: ``active`` normally; the extractor records an already-replaced decision as
            ``superseded`` so the replacement can name it.
        :returns: the stored record.
        :raises InvalidInput: for empty text, an unknown kind, a bad label, a namespace mismatch,
            or neither namespace nor conversation given.
        :raises ConversationNotFound: if ``conversation_id`` does not exist.
        """
        check_text(text, "protected text")
        _check_kind(kind)
        if state not in ("active", "superseded"):
            raise InvalidInput(f"a new protected record starts active (or superseded), not {state!r}")
        label_list = check_labels(labels)
        prov = check_provenance(provenance)
        due = None if due_at is None else self.clock.coerce(due_at)
        if metadata is not None:
            metadata_json(metadata)  # a dict JSON can hold: finite numbers, valid text, not nested too deep
        check_name(source, "source")
        if conversation_id is not None:
            row = self._archive().conversation_row(conversation_id)
            if namespace is not None and namespace != row["namespace"]:
                raise InvalidInput(
                    f"conversation {conversation_id!r} is in namespace {row['namespace']!r}, not {namespace!r}"
                )
            namespace = row["namespace"]
        if namespace is None:
            raise InvalidInput("a protected record needs a scope: pass conversation_id=... or namespace=...")
        check_name(namespace, "namespace")
        with self.storage.transaction(write_scope(protected=[namespace])):
            now = self.clock.now()
            rid = self.storage.protected.insert(
                namespace=namespace, conversation_id=conversation_id, kind=kind, text=text, state=state, due_at=due,
                provenance=prov, labels=label_list, source=source, created_at=now, metadata=metadata,
            )
            log_event(self.storage, at=now, kind="protect", subject=f"protected:{rid}", namespace=namespace,
                      cause=cause, details={"kind": kind, "scope": conversation_id or "namespace",
                                            "state": state, "source": source})
            return self.get(rid)

    def _scope(self, record_id: int) -> tuple[str, ...] | None:
        """The write scope of a change to ``record_id``: its namespace's protected records
        (``None`` inside a transaction: the outer one's scope covers it, no read needed)."""
        return None if self.storage.in_transaction else write_scope(protected=[self.get(record_id).namespace])

    def _transition(self, record_id: int, to: str, cause: str, *, superseded_by: int | None = None) -> ProtectedRecord:
        with self.storage.transaction(self._scope(record_id)):
            record = self.get(record_id)  # inside a write: row-locked (PostgreSQL) until the commit
            if record.state != "active":
                raise InvalidInput(
                    f"protected record {record_id} is {record.state}, not active: only an active record can "
                    f"become {to}"
                )
            now = self.clock.now()
            self.storage.protected.set_state(record_id, to, changed_at=now, superseded_by=superseded_by)
            log_event(self.storage, at=now, kind=f"protected_{to}", subject=f"protected:{record_id}",
                      namespace=record.namespace, cause=cause,
                      details={"from": "active", "to": to, "superseded_by": superseded_by})
            return self.get(record_id)

    def satisfy(self, record_id: int, *, cause: str = "") -> ProtectedRecord:
        """Mark an active record satisfied (the obligation was met). :raises InvalidInput: if not active.
        :raises ProtectedNotFound: for an unknown id."""
        return self._transition(record_id, "satisfied", cause)

    def expire(self, record_id: int, *, cause: str = "") -> ProtectedRecord:
        """Mark an active record expired. :raises InvalidInput: if not active."""
        return self._transition(record_id, "expired", cause)

    def revoke(self, record_id: int, *, cause: str = "") -> ProtectedRecord:
        """Revoke an active record (the user withdrew it). :raises InvalidInput: if not active."""
        return self._transition(record_id, "revoked", cause)

    def supersede(self, record_id: int, text: str, *, kind: str | None = None, due_at: object = None,
                  provenance: Iterable[str] | None = None, labels: Iterable[str] | None = None,
                  source: str = "manual", cause: str = "") -> ProtectedRecord:
        """Replace an active record with a new one in the same scope, linked both ways, in one
        transaction. The new record names the old text it replaces (rendered as "no longer in force").

        :returns: the new record.
        :raises InvalidInput: if the old record is not active or the new text is bad.
        """
        old = self.get(record_id)
        with self.storage.transaction(write_scope(protected=[old.namespace])):
            if old.state != "active":
                raise InvalidInput(f"protected record {record_id} is {old.state}, not active: it cannot be superseded")
            new = self.add(
                text, kind=kind or old.kind, namespace=old.namespace, conversation_id=old.conversation_id,
                due_at=due_at, provenance=provenance, labels=old.labels if labels is None else labels,
                source=source, cause=cause or "supersede",
                metadata={"replaces": [old.id], "replaces_text": [old.text]},
            )
            self.storage.protected.set_supersedes(new.id, old.id)
            self._transition(record_id, "superseded", cause, superseded_by=new.id)
            return self.get(new.id)

    def link_replaced(self, new_id: int, old_ids: list[int]) -> ProtectedRecord:
        """Record that ``new_id`` replaces already-inactive ``old_ids`` (used by the extractor when
        a user reverses an earlier decision): the new record then names their text when rendered."""
        with self.storage.transaction(self._scope(new_id)):
            new = self.get(new_id)
            olds = self._get_each(old_ids, metadata=False)  # their ids, texts and links only
            meta = dict(new.metadata)
            meta["replaces"] = sorted(set(meta.get("replaces", [])) | {o.id for o in olds})
            meta["replaces_text"] = list(meta.get("replaces_text", [])) + [o.text for o in olds
                                                                           if o.text not in meta.get("replaces_text", [])]
            self.storage.protected.set_metadata(new_id, meta)
            for o in olds:
                if o.superseded_by is None:
                    self.storage.protected.set_superseded_by(o.id, new_id)
            return self.get(new_id)

    def expire_due(self, now: float | None = None) -> list[ProtectedRecord]:
        """Expire every active deadline whose ``due_at`` is at or before ``now`` (default: the clock).

        :returns: the records expired by this call (each logged with cause ``due``).
        """
        at = self.clock.now() if now is None else self.clock.coerce(now)
        if self.storage.meta.read_only():  # a viewer (issue 19): due records read as expired, nothing written
            return []
        expired = []
        for i in self.storage.protected.due_ids(at):
            try:
                expired.append(self._transition(i, "expired", "due"))
            except InvalidInput:
                continue  # another process expired (or changed) it since due_ids read it
        return expired

    # -- reading -------------------------------------------------------------------------
    def get(self, record_id: int) -> ProtectedRecord:
        """The record with ``record_id``. :raises ProtectedNotFound: if there is none."""
        check_id(record_id, "protected record id")
        record = self.storage.protected.get(record_id)
        if record is None:
            raise ProtectedNotFound(f"no protected record with id {record_id}")
        return record

    def _get_each(self, record_ids: Sequence[int], *, metadata: bool = True) -> list[ProtectedRecord]:
        """``[self.get(i) for i in record_ids]`` in one statement (issue 18, point 4: a decision
        that replaces the one in force names its whole chain, which grows with the conversation:
        it was one read per record). Raises as :meth:`get` would, for the first bad or unknown id.
        ``metadata=False``: the records' metadata is left unread (``{}``; each replaced decision
        carries its own chain)."""
        try:
            for i in record_ids:
                check_id(i, "protected record id")
        except InvalidInput:
            return [self.get(i) for i in record_ids]  # the first bad id raises as before
        found = self.storage.protected.get_many(record_ids, lock=True, metadata=metadata)  # locked as get() locks
        if any(i not in found for i in record_ids):
            return [self.get(i) for i in record_ids]  # the first unknown id raises as before
        return [found[i] for i in record_ids]

    def list(self, *, namespace: str | None = None, conversation_id: str | None = None,
             state: str | None = "active", reader: object = None) -> list[ProtectedRecord]:
        """Records in id order, filtered. Due deadlines are expired first.

        :param conversation_id: only records scoped to exactly this conversation.
        :param state: one of :data:`STATES`, or None for every state.
        :param reader: hide records whose labels the reader lacks.
        :raises InvalidInput: for an unknown state.
        """
        self.expire_due()
        rdr = as_reader(reader)
        records = self.storage.protected.list(namespace=namespace, conversation_id=conversation_id,
                                              state=None if state is None else _check_state(state))
        return [r for r in records if can_read(rdr, r.labels)]

    def active_for(self, conversation_id: str, *, reader: object = None, namespace: str | None = None,
                   lineage: Sequence[tuple[str, int | None]] | None = None, inherit: bool = False,
                   inherit_manual: bool = False) -> list[ProtectedRecord]:
        """The active records in force for a conversation, in id order: the namespace-wide ones
        and its own. A fork gets copies of the records in force for its parent when it is made
        (:mod:`memfold.window.forks`), so what it withdraws never touches the parent's (issue 15).
        Due deadlines are expired first; records the reader may not see are left out.

        :param namespace: / :param lineage: the conversation's namespace and lineage when the
            caller holds them (a :class:`~memfold.window.parts.ConversationRef`); read from the
            ``conversations`` rows otherwise.
        :param inherit: also the ancestors' records extracted from the turns the fork shares (what
            a fork copies when it is made); ``inherit_manual``: and their records without turn
            provenance (a fork at the parent's end).
        :raises ConversationNotFound: for an unknown conversation.
        """
        self.expire_due()
        return self._active(conversation_id, as_reader(reader), namespace, lineage, inherit, inherit_manual)

    def _active(self, conversation_id: str, rdr: Reader | None, namespace: str | None,
                lineage: Sequence[tuple[str, int | None]] | None, inherit: bool = False,
                inherit_manual: bool = False) -> list[ProtectedRecord]:
        """:meth:`active_for` after its expiry of due deadlines."""
        archive = self._archive()
        if namespace is None or lineage is None:
            namespace = archive.conversation_row(conversation_id)["namespace"]
            lineage = archive.lineage(conversation_id)
        limits = {conv: upto for conv, upto in lineage}
        out = []
        due_by = self.clock.now() if self.storage.meta.read_only() else None
        for rec in self.storage.protected.active_in_scope(namespace, limits):
            if due_by is not None and rec.due_at is not None and rec.due_at <= due_by:
                continue  # read-only (issue 19): a due deadline is shown as expired without writing it
            if rec.conversation_id not in (None, conversation_id):
                if not inherit:
                    continue
                upto = limits[rec.conversation_id]
                if not self._within_fork(archive, rec, rec.conversation_id, upto, manual=inherit_manual):
                    continue
            if can_read(rdr, rec.labels):
                out.append(rec)
        return out

    def for_conversation(self, conversation_id: str, *, state: str | None = None,
                         reader: object = None) -> list[ProtectedRecord]:
        """The records of a conversation's scope in any state (or in ``state``), in id order: the
        namespace-wide ones, its own, and a fork's ancestors' records from the turns it shares;
        the same scope as :meth:`active_for` without the active-only rule (``memfold protect list
        -c CONV --state all``, issue 20 point 7: namespace-wide records were dropped).

        :raises ConversationNotFound: for an unknown conversation. :raises InvalidInput: for an unknown state.
        """
        self.expire_due()
        wanted = None if state is None else _check_state(state)
        rdr = as_reader(reader)
        archive = self._archive()
        namespace = archive.conversation_row(conversation_id)["namespace"]
        limits = {conv: upto for conv, upto in archive.lineage(conversation_id)}
        out = []
        for rec in self.storage.protected.list(namespace=namespace, conversation_id=None, state=wanted):
            if rec.conversation_id is not None and rec.conversation_id != conversation_id:
                if rec.conversation_id not in limits or not self._within_fork(
                        archive, rec, rec.conversation_id, limits[rec.conversation_id]):
                    continue
            if can_read(rdr, rec.labels):
                out.append(rec)
        return out

    def _within_fork(self, archive: Any, record: ProtectedRecord, conversation_id: str, upto: int | None, *,
                     manual: bool = False) -> bool:
        """True if an ancestor's record comes from turns a fork shares (seq <= fork point)."""
        turn_ids = [int(p.split(":", 1)[1]) for p in record.provenance if p.startswith("turn:")]
        if not turn_ids or upto is None:
            return upto is None or manual
        seqs = [t.seq for t in archive.get_many(turn_ids).values() if t.conversation_id == conversation_id]
        return bool(seqs) and max(seqs) <= upto

    def render(self, conversation_id: str, *, reader: object = None, namespace: str | None = None,
               lineage: Sequence[tuple[str, int | None]] | None = None) -> ChannelRendering:
        """The active records for a conversation as one system message, every text verbatim.

        Never drops a record for size: the caller (the compiled context) raises
        :class:`~memfold.memory.errors.BudgetError` when the channel alone does not fit.
        ``namespace`` and ``lineage`` as in :meth:`active_for`.

        :returns: a :class:`ChannelRendering` (no message at all when nothing is active).
        """
        self.expire_due()
        rdr = as_reader(reader)
        # the rendering kept under the channel's version (issue 18, point 4): while no connection
        # changed the protected table (and nothing came due, expired just above), an append or a
        # compile re-renders nothing and reads no record. Read-only, a due deadline reads as
        # expired without a write, so the clock decides: never cached then.
        version = None if self.storage.meta.read_only() else self.storage.protected.version()
        key = (conversation_id, namespace, None if lineage is None else tuple(lineage),
               None if rdr is None else rdr.labels)
        if version is not None:
            hit = self._by_version.get(key)
            if hit is not None and hit[0] == version:
                return _copy(hit[1])
        rendering = self._render(conversation_id, rdr, namespace, lineage)
        if version is not None:
            if len(self._by_version) >= 256:
                self._by_version.clear()
            self._by_version[key] = (version, rendering)
        return _copy(rendering)

    def _render(self, conversation_id: str, reader: Reader | None, namespace: str | None,
                lineage: Sequence[tuple[str, int | None]] | None) -> ChannelRendering:
        """:meth:`render` read from the table (after expiry)."""
        records = self._active(conversation_id, reader, namespace, lineage)
        if not records:
            return ChannelRendering(messages=[], tokens=0, record_ids=[])
        # what a reader may see of each record's replaced texts (issue 15, point 2) is part of the line
        # every replaced record of every line read in one statement (issue 18, point 4: it was one
        # read per replaced record, an N+1 that grew with the channel's history)
        olds = self.storage.protected.get_many((i for r in records for i in _replaced_ids(r)), metadata=False)
        replaced = [tuple(self.replaced_texts(r, reader, olds=olds)) for r in records]
        # the channel's version: what a line shows of each record (issue 18, point 4). A compile,
        # its pressure check and the compactor's re-measures render the same channel once.
        version = tuple((r.id, r.kind, r.text, r.state, r.due_at, r.changed_at, rep)
                        for r, rep in zip(records, replaced))
        cached = self._rendered.get(version)
        if cached is not None:
            return cached
        content = CHANNEL_HEADER + "\n" + "\n".join(render_line(r, self.clock, list(rep))
                                                     for r, rep in zip(records, replaced))
        rendering = ChannelRendering(
            messages=[{"role": "system", "content": content}],
            tokens=self.token_counter.count(content),
            record_ids=[r.id for r in records],
        )
        if len(self._rendered) >= 256:
            self._rendered.clear()
        self._rendered[version] = rendering
        return rendering

    def forget_rendered(self) -> None:
        """Drop the rendered channels kept by version (after an erasure: no erased text stays in memory)."""
        self._rendered.clear()
        self._by_version.clear()

    def replaced_texts(self, record: ProtectedRecord, reader: object = None, *,
                       olds: Mapping[int, ProtectedRecord] | None = None) -> list[str]:
        """The texts a record replaced (its "no longer in force" lines) that ``reader`` may read
        (issue 15, point 2): each replaced record's own text, shown only when the record is not
        erased and the reader holds every label it requires; a text with no record behind it
        (older metadata) is shown only to the owner (``reader=None``).

        :param olds: the replaced records by id when the caller read them already (a rendering
            reads those of every line at once); read here otherwise. Only their text, state and
            labels are read (their metadata may be left unread: ``get_many(metadata=False)``)."""
        ids = _replaced_ids(record)
        texts = list(record.metadata.get("replaces_text") or [])
        if not ids and not texts:
            return []
        rdr = as_reader(reader)
        if olds is None:
            olds = self.storage.protected.get_many(ids, metadata=False)  # their text, state and labels
        olds = [olds.get(i) for i in ids]
        out: list[str] = []
        for old in olds:
            if old is None or old.state == "erased" or not old.text:
                continue
            if can_read(rdr, old.labels) and old.text not in out:
                out.append(old.text)
        if rdr is None:
            known = {o.text for o in olds if o is not None}
            gone = {o.text for o in olds if o is not None and o.state == "erased"}
            out.extend(t for t in texts if t not in out and t not in known and t not in gone and t)
        return out

    def texts_for_family(self, family_id: str) -> list[str]:
        """Texts of every non-erased protected record scoped to conversations of a family or its
        namespace; the summarizer guard refuses input containing any of them."""
        return self.storage.protected.texts_for_family(family_id)

    def provenance_turn_ids(self) -> set[int]:
        """Ids of every turn that is the source of a non-erased protected record."""
        out: set[int] = set()
        for prov in self.storage.protected.live_provenance():
            for p in prov:
                if p.startswith("turn:"):
                    out.add(int(p.split(":", 1)[1]))
        return out


def _copy(rendering: ChannelRendering) -> ChannelRendering:
    """A rendering the caller may change without touching the one kept."""
    return ChannelRendering(messages=[dict(m) for m in rendering.messages], tokens=rendering.tokens,
                            record_ids=list(rendering.record_ids))


def _replaced_ids(record: ProtectedRecord) -> list[int]:
    """The ids a record's metadata says it replaced (``replaces``), in order."""
    return [i for i in record.metadata.get("replaces", []) if isinstance(i, int)]


#: protected texts shorter than this are not searched for in summarizer input (too generic to
#: be told apart from ordinary words); they are still redacted from their source turns.
MIN_GUARDED_CHARS = 12


def summarizer_input(storage: Storage, children: list[Any], items: list[Any], *, family_id: str,
                     namespace: str) -> list[Any]:
    """The one check on what reaches a summarizer (DESIGN.md §4.6; issue 8 points 3 and 5).

    Given the children of a fold (turns or cards) and their :class:`FoldItem` list, returns the
    items a summarizer may read: an erased turn becomes ``[erased]``; a turn quoted from another
    conversation (metadata ``quoted_from``) becomes a pointer to it, never its words; every
    protected record's text is cut out wherever it occurs and replaced by ``[protected P<id>]``; a
    turn labelled ``secret`` becomes a pointer to itself, never its words (issue 9); so does a
    system turn, a standing instruction shown verbatim in the compiled context while in force
    (issue 20), so no card repeats it.
    The check runs over turns and cards alike, for every non-erased protected record of the
    conversation's family (``family_id``) and namespace, after redaction.

    :raises SummarizerError: if protected text would still reach the summarizer (the compactor
        records the failure and keeps the originals in the window).
    """
    from dataclasses import replace

    from ..memory.errors import SummarizerError
    from .archive import Turn
    from .labels import SECRET_LABEL

    protected = storage.protected.guarded_texts(family_id, namespace)
    out = []
    for child, item in zip(children, items):
        text = item.text
        if isinstance(child, Turn) and child.erased:
            text = "[erased]"
        elif isinstance(child, Turn) and child.metadata.get("quoted_from") is not None:
            text = f"[t{child.id}: quoted from {child.metadata['quoted_from']}; not summarised, expand t{child.id}]"
        elif isinstance(child, Turn) and SECRET_LABEL in child.labels:  # issue 9: secrets are never summarised
            text = f"[t{child.id}: secret, not summarised; expand t{child.id}]"
        elif isinstance(child, Turn) and child.role == "system":  # issue 20: a standing instruction
            text = f"[t{child.id}: system turn, not summarised; expand t{child.id}]"
        for rid, ptext in protected:
            if ptext in text:
                text = text.replace(ptext, f"[protected P{rid}]")
        out.append(replace(item, text=text))
    for item in out:  # the check: nothing protected is left, whatever the redaction above missed
        for rid, ptext in protected:
            if len(ptext.strip()) >= MIN_GUARDED_CHARS and ptext in item.text:
                raise SummarizerError(
                    f"protected record P{rid} would reach the summarizer in {item.kind} {item.id}: the protected "
                    "channel is never summarised, so this fold is refused and the originals stay in the window"
                )
    return out
