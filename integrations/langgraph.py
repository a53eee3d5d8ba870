"""LangGraph long-term memory over memfold's typed stores, and memfold's window for LangGraph agents
(issue 16, point 3). Install with ``pip install 'memfold[langgraph]'``.

:class:`MemfoldStore` is a LangGraph ``BaseStore`` whose items are memfold memory records, so a
graph's long-term memory follows memfold's rules (DESIGN.md §1, §4.7): nothing is ever deleted.

* **Namespaces.** The LangGraph namespace ``("acme", "dana")`` is the memfold namespace
  ``"acme/dana"`` (labels joined with ``/``; a ``%`` or ``/`` inside a label is percent-escaped),
  so what a graph puts for ``("acme", "dana")`` is a memory of that user: it reaches the compiled
  context of every memfold conversation in ``acme/dana`` (the memories section) and its search.
* **Items are slots.** The item ``key`` of a namespace is the slot ``(namespace, "semantic", key)``;
  the item is the slot's active record. Its content is the value as canonical JSON (sorted keys),
  which is what full-text and embedding search read; dict equality is kept, key order is not
  (as in PostgreSQL's JSONB).
* **put** writes through memfold's write path with ``restatement="exact"``: the same value again
  refreshes the record (``updated_at`` moves); any other value *supersedes* it: the old record is
  retired, linked both ways, and stays in the slot's :meth:`MemfoldStore.history`;
  :meth:`MemfoldStore.revert` brings it back. A store capacity set with ``mf.memory.set_policy``
  evicts by score as for any write (also revertible).
* **delete** retires the slot's record (its bytes and links stay; revertible).
* **search** without a query lists matching items newest-updated first; with ``query=`` it ranks
  them with memfold's hybrid search (BM25 + embeddings when the facade has an embedder) and
  returns only items relevant to the query, best first, ``score`` higher is better. ``filter``
  matches the item value like LangGraph's own stores: exact values, nested dicts, and the
  operators ``$eq $ne $gt $gte $lt $lte`` (numbers compare as numbers, strings as strings; a
  value that cannot be compared, such as a missing field, does not match, where LangGraph's
  ``InMemoryStore`` raises). ``PutOp.index`` is accepted and ignored: memfold indexes every value
  whole.
* **list_namespaces** lists the namespaces holding at least one live item (a namespace whose last
  item was deleted is not listed, as in LangGraph's PostgreSQL store; its ``InMemoryStore`` keeps
  listing it), with ``prefix``/``suffix`` (``*`` wildcards), ``max_depth``, ``limit``, ``offset``.
  memfold namespaces that are not valid LangGraph namespaces (a label with a ``.``) are left out.
* **batch** runs reads against the state before the batch's writes, the last put per
  ``(namespace, key)`` wins, and all puts commit in one transaction (or none do).

Records memfold wrote itself in a slot (``mf.remember(ns, "semantic", text, key=...)``, facts from
consolidation) are items too, with the value ``{"content": text}``. TTLs are not supported
(``supports_ttl`` is False): memfold forgets by score, supersession and capacity, not by timer.
Item times come from the facade's clock: seconds since the epoch on the system clock, ticks
(read as seconds since the epoch) on a logical clock.

:class:`MemfoldContext` (made by :func:`pre_model_hook`) is a ``pre_model_hook`` for LangGraph's
prebuilt agent: it archives the graph's new messages into a memfold conversation and returns
``{"llm_input_messages": conv.context().messages}``, so the model sees memfold's compiled window
(system note, protected channel, memories, cards, hot turns) while the graph state keeps every
message.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Optional, Sequence

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
    from langchain_core.runnables import RunnableConfig
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("memfold.integrations.langgraph needs LangGraph: pip install 'memfold[langgraph]'") from exc

from .. import MemFold
from ..memory.errors import InvalidInput
from ..window.labels import Reader, as_reader
from ._serial import facade_lock

#: the operators a filter may use on an item value (LangGraph's documented set)
FILTER_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
#: where a record written by the store keeps the item's bookkeeping, in ``record.metadata``
META_KEY = "langgraph"


class InvalidStoreNamespace(InvalidInput, InvalidNamespaceError):
    """A LangGraph namespace memfold cannot store: empty, a label that is not text, empty or
    holds a ``.`` or NUL (LangGraph's rules), or the reserved root ``"langgraph"`` for a put.
    Both a :class:`~memfold.InvalidInput` and LangGraph's ``InvalidNamespaceError``."""


# -- namespaces --------------------------------------------------------------------------------
def _escape(label: str) -> str:
    return label.replace("%", "%25").replace("/", "%2F")


def _unescape(part: str) -> str:
    return part.replace("%2F", "/").replace("%2f", "/").replace("%25", "%")


def to_memfold_namespace(namespace: Sequence[str]) -> str:
    """The memfold namespace of a LangGraph namespace: ``("acme", "dana")`` -> ``"acme/dana"``.

    :raises InvalidStoreNamespace: for an empty namespace or a bad label.
    """
    labels = tuple(namespace)
    _check_labels(labels, allow_empty=False)
    return "/".join(_escape(label) for label in labels)


def to_langgraph_namespace(namespace: str) -> tuple[str, ...]:
    """The LangGraph namespace of a memfold namespace: ``"acme/dana"`` -> ``("acme", "dana")``."""
    return tuple(_unescape(part) for part in namespace.split("/"))


def _check_labels(labels: tuple[Any, ...], *, allow_empty: bool) -> None:
    if not labels and not allow_empty:
        raise InvalidStoreNamespace("a LangGraph namespace needs at least one label, e.g. ('users', 'dana')")
    for label in labels:
        if not isinstance(label, str):
            raise InvalidStoreNamespace(f"namespace label {label!r} in {labels} is not a string")
        if not label:
            raise InvalidStoreNamespace(f"namespace {labels} has an empty label")
        if "." in label or "\x00" in label:
            raise InvalidStoreNamespace(f"namespace label {label!r} in {labels} holds a '.' or NUL, "
                                        "which LangGraph namespaces may not")


def _valid_langgraph(namespace: tuple[str, ...]) -> bool:
    return all(label and "." not in label and "\x00" not in label for label in namespace)


# -- filters -----------------------------------------------------------------------------------
def _comparable(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, numbers) and isinstance(b, numbers):
        return not (isinstance(a, float) and math.isnan(a)) and not (isinstance(b, float) and math.isnan(b))
    return isinstance(a, str) and isinstance(b, str)


def _apply_operator(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return value == operand
    if operator == "$ne":
        return value != operand
    if not _comparable(value, operand):
        return False
    if operator == "$gt":
        return value > operand
    if operator == "$gte":
        return value >= operand
    if operator == "$lt":
        return value < operand
    return value <= operand  # $lte


def matches_filter(value: Any, condition: Any) -> bool:
    """True when an item value (or a field of it) satisfies a LangGraph filter ``condition``:
    an exact value, a list (element-wise), a nested dict of conditions, or a dict of operators."""
    if isinstance(condition, Mapping):
        if any(str(k).startswith("$") for k in condition):
            return all(_apply_operator(value, op, operand) for op, operand in condition.items())
        if not isinstance(value, Mapping):
            return False
        return all(matches_filter(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(condition)
                and all(matches_filter(v, c) for v, c in zip(value, condition)))
    return value == condition


def check_filter(condition: Any, where: str = "filter") -> None:
    """:raises InvalidInput: for an operator LangGraph does not define (naming it and the valid ones)."""
    if isinstance(condition, Mapping):
        for k, v in condition.items():
            if isinstance(k, str) and k.startswith("$") and k not in FILTER_OPERATORS:
                raise InvalidInput(f"unknown filter operator {k!r} in {where}: use one of {', '.join(FILTER_OPERATORS)}")
            check_filter(v, f"{where}.{k}")
    elif isinstance(condition, (list, tuple)):
        for i, v in enumerate(condition):
            check_filter(v, f"{where}[{i}]")


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if condition.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    if condition.match_type not in ("prefix", "suffix"):
        raise InvalidInput(f"unknown namespace match type {condition.match_type!r}: use 'prefix' or 'suffix'")
    return all(p == "*" or n == p for n, p in pairs)


def _check_page(limit: Any, offset: Any) -> None:
    """:raises InvalidInput: for a ``limit`` or ``offset`` that is not a whole number >= 0."""
    for name, value in (("limit", limit), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidInput(f"{name} must be a whole number >= 0, got {value!r}")


def _time(value: float) -> datetime:
    return datetime.fromtimestamp(float(value), tz=timezone.utc)


def _render(value: Mapping[str, Any]) -> str:
    """A value's record content: canonical JSON (sorted keys), readable in the memories section."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"a LangGraph item value must be JSON-serialisable: {exc}") from None


class MemfoldStore(BaseStore):
    """A LangGraph long-term store over memfold's memory records (see the module docstring).

    :param memfold: a :class:`~memfold.MemFold`, or a database path to open one (closed by
        :meth:`close`).
    :param type: the record type items live in (default ``"semantic"``: facts with a slot key).
    :param importance: importance of written records, in [0, 1].
    :param labels: access labels every written record requires (DESIGN.md §4.9).
    :param reader: a :class:`~memfold.Reader` or label list: items whose labels it lacks are
        invisible to get, search and list (``None``: the database owner, sees everything).
    :raises InvalidInput: for a bad type, importance or reader.
    """

    supports_ttl = False

    def __init__(self, memfold: MemFold | str | os.PathLike, *, type: str = "semantic", importance: float = 0.5,
                 labels: Iterable[str] | None = None, reader: Any = None) -> None:
        self._owned = not isinstance(memfold, MemFold)
        self.memfold: MemFold = MemFold(memfold) if self._owned else memfold  # type: ignore[arg-type]
        from ..memory.records import check_record_type
        from ..memory.validation import check_importance, check_labels

        self.type = check_record_type(type)
        self.importance = check_importance(importance)
        self.labels = check_labels(list(labels or []))
        self.reader: Reader | None = as_reader(reader)
        self._lock = facade_lock(self.memfold)

    def close(self) -> None:
        """Close the facade if this store opened it from a path."""
        if self._owned:
            self.memfold.close()

    # -- the two methods LangGraph asks of a store ----------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order: reads see the state before this batch's writes; every put is
        validated first and then all of them commit in one transaction (the last put per
        ``(namespace, key)`` wins).

        :raises InvalidStoreNamespace: for a bad namespace (nothing is written).
        :raises InvalidInput: for a value that is not a JSON object, a bad key or filter, or an
            unknown op (nothing is written).
        """
        ops = list(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            self._check(op)
            if isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = op
        with self._lock:
            results: list[Result] = []
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(tuple(op.namespace), op.key))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                else:
                    results.append(None)
            if puts:
                with self.memfold.storage.transaction():
                    for op in puts.values():
                        self._put(op)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread, so the event loop is not blocked by SQLite."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- memfold extras --------------------------------------------------------------------------
    def history(self, namespace: Sequence[str], key: str) -> list[Any]:
        """Every version of an item, oldest first, as :class:`~memfold.MemoryRecord` (active,
        retired by a later put or a delete, evicted), with their supersession links."""
        ns = to_memfold_namespace(namespace)
        with self._lock:
            return [r for r in self.memfold.memory.list(ns, self.type, key=key, include_inactive=True)
                    if r.status in ("active", "retired", "evicted") and self._visible(r)]

    def revert(self, namespace: Sequence[str], key: str, record_id: int | None = None) -> Item:
        """Bring back an earlier version of an item (undo the last put or the delete by default).

        :param record_id: the version to reinstate (an id from :meth:`history`); default: the
            version the current one superseded, or the one retired last when the item is deleted.
        :returns: the item as it now is.
        :raises InvalidInput: when there is no earlier version, or ``record_id`` is not a
            retired or evicted version of this item.
        """
        ns = to_memfold_namespace(namespace)
        with self._lock:
            versions = self.history(namespace, key)
            by_id = {r.id: r for r in versions}
            if record_id is None:
                current = [r for r in versions if r.status == "active"]
                if current:
                    record_id = current[-1].supersedes
                else:  # deleted: the version retired (or evicted) last
                    ids = {r.id for r in versions}
                    changes = [e.record_id for e in self.memfold.memory.events(ns)
                               if e.kind in ("retire", "evict") and e.record_id in ids]
                    record_id = changes[-1] if changes else None
                if record_id is None or record_id not in by_id:
                    raise InvalidInput(f"item {key!r} of {tuple(namespace)} has no earlier version to revert to")
            elif record_id not in by_id or by_id[record_id].status == "active":
                raise InvalidInput(f"record {record_id} is not an earlier version of item {key!r} of {tuple(namespace)}: "
                                   f"pick a retired or evicted id from history()")
            self.memfold.memory.revert(record_id, cause=f"langgraph revert of {ns}:{key}")
            item = self._get(tuple(namespace), key)
            assert item is not None
            return item

    # -- validation ------------------------------------------------------------------------------
    def _check(self, op: Any) -> None:
        if isinstance(op, PutOp):
            _check_labels(tuple(op.namespace), allow_empty=False)
            if op.namespace[0] == "langgraph":
                raise InvalidStoreNamespace(f"the root label 'langgraph' is reserved by LangGraph: {tuple(op.namespace)}")
            if not isinstance(op.key, str) or not op.key or op.key != op.key.strip() or "\x00" in op.key:
                raise InvalidInput(f"item key {op.key!r} must be non-empty text without surrounding whitespace or NUL")
            if op.value is not None:
                if not isinstance(op.value, Mapping):
                    raise InvalidInput(f"a LangGraph item value must be a dict, got {type(op.value).__name__}")
                _render(op.value)
        elif isinstance(op, GetOp):
            _check_labels(tuple(op.namespace), allow_empty=False)
        elif isinstance(op, SearchOp):
            _check_labels(tuple(op.namespace_prefix), allow_empty=True)
            if op.filter is not None:
                if not isinstance(op.filter, Mapping):
                    raise InvalidInput(f"a search filter must be a dict, got {type(op.filter).__name__}")
                check_filter(op.filter)
            if op.query is not None and not isinstance(op.query, str):
                raise InvalidInput(f"a search query must be text, got {type(op.query).__name__}")
            _check_page(op.limit, op.offset)
        elif isinstance(op, ListNamespacesOp):
            _check_page(op.limit, op.offset)
            if op.max_depth is not None and (isinstance(op.max_depth, bool) or not isinstance(op.max_depth, int)
                                             or op.max_depth < 1):
                raise InvalidInput(f"max_depth must be a whole number >= 1 or None, got {op.max_depth!r}")
            for condition in op.match_conditions or ():
                _check_labels(tuple(l for l in condition.path if l != "*"), allow_empty=True)
                if condition.match_type not in ("prefix", "suffix"):
                    raise InvalidInput(f"unknown namespace match type {condition.match_type!r}: use 'prefix' or 'suffix'")
        else:
            raise InvalidInput(f"unknown store operation {type(op).__name__}: use GetOp, PutOp, SearchOp or ListNamespacesOp")

    # -- reading ---------------------------------------------------------------------------------
    def _visible(self, record: Any) -> bool:
        return self.reader is None or self.reader.can_read(record.labels)

    def _active(self, ns: str, key: str) -> Any:
        records = [r for r in self.memfold.memory.list(ns, self.type, key=key) if self._visible(r)]
        return records[-1] if records else None

    def _value(self, record: Any) -> dict[str, Any]:
        if META_KEY in record.metadata:
            return json.loads(record.content)
        return {"content": record.content}

    def _item(self, record: Any, cls: type = Item, **extra: Any) -> Any:
        created = record.metadata.get(META_KEY, {}).get("created_at", record.created_at)
        return cls(namespace=to_langgraph_namespace(record.namespace), key=record.key, value=self._value(record),
                   created_at=_time(created), updated_at=_time(record.written_at), **extra)

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        record = self._active(to_memfold_namespace(namespace), key)
        return None if record is None else self._item(record)

    def _namespaces(self, prefix: tuple[str, ...] = ()) -> list[str]:
        """The memfold namespaces under a LangGraph prefix that are valid LangGraph namespaces."""
        out = []
        for ns in self.memfold.memory.namespaces():
            lg = to_langgraph_namespace(ns)
            if lg[:len(prefix)] == prefix and _valid_langgraph(lg):
                out.append(ns)
        return out

    def _candidates(self, op: SearchOp) -> list[Any]:
        found = []
        for ns in self._namespaces(tuple(op.namespace_prefix)):
            for record in self.memfold.memory.list(ns, self.type):
                if record.key is None or not self._visible(record):
                    continue
                if not self._passes(record, op.filter):
                    continue
                found.append(record)
        return found

    def _search(self, op: SearchOp) -> list[SearchItem]:
        start, stop = op.offset, op.offset + op.limit
        if stop == start:
            return []
        if not op.query or not op.query.strip():
            candidates = self._candidates(op)
            candidates.sort(key=lambda r: (r.written_at, r.id), reverse=True)
            return [self._item(r, SearchItem) for r in candidates[start:stop]]
        return [self._item(r, SearchItem, score=s) for s, r in self._ranked(op, stop)[start:stop]]

    def _ranked(self, op: SearchOp, want: int) -> list[tuple[float, Any]]:
        """The best ``want`` items for the op's query, best first, with their hybrid scores: one
        search over the type's records (of the one namespace when the prefix names one), widened
        until enough hits pass the prefix, the reader and the filter, or none are left."""
        namespaces = set(self._namespaces(tuple(op.namespace_prefix)))
        if not namespaces:
            return []
        only = next(iter(namespaces)) if len(namespaces) == 1 else None
        depth = max(50, 4 * want)
        records: dict[int, Any] = {}
        while True:
            hits = self.memfold.search(op.query, kinds=("record",), type=self.type, namespace=only, limit=depth)
            ranked = []
            for hit in hits:
                rid = int(hit.id)
                if rid not in records:
                    records[rid] = self.memfold.memory.get(rid)
                record = records[rid]
                if (record.namespace in namespaces and record.key is not None and record.status == "active"
                        and self._visible(record) and self._passes(record, op.filter)):
                    ranked.append((float(hit.score), record))
            if len(ranked) >= want or len(hits) < depth:
                return ranked
            depth *= 4

    def _passes(self, record: Any, condition: Mapping[str, Any] | None) -> bool:
        if not condition:
            return True
        value = self._value(record)
        return all(matches_filter(value.get(k), c) for k, c in condition.items())

    def _holds_items(self, ns: str) -> bool:
        """True when ``ns`` holds an item this store's reader sees. The top-scored record answers
        at the cost of a ranking (no record is read in full); only when it is keyless or hidden
        is the whole store listed."""
        top = self.memfold.memory.read(ns, 1, types=self.type, touch=False)
        if not top:
            return False
        if top[0].record.key is not None and self._visible(top[0].record):
            return True
        return any(r.key is not None and self._visible(r) for r in self.memfold.memory.list(ns, self.type))

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = []
        for ns in self._namespaces():
            if not self._holds_items(ns):
                continue
            lg = to_langgraph_namespace(ns)
            if all(_namespace_matches(c, lg) for c in op.match_conditions or ()):
                found.append(lg)
        if op.max_depth is not None:
            found = sorted({ns[:op.max_depth] for ns in found})
        else:
            found = sorted(found)
        return found[op.offset:op.offset + op.limit]

    # -- writing ---------------------------------------------------------------------------------
    def _put(self, op: PutOp) -> None:
        """Write or retire one slot; call inside the batch's transaction."""
        ns = to_memfold_namespace(op.namespace)
        current = self._active(ns, op.key)
        if op.value is None:
            if current is not None:
                self.memfold.memory.retire(current.id, cause=f"langgraph delete of {ns}:{op.key}")
            return
        created = None
        if current is not None:
            created = current.metadata.get(META_KEY, {}).get("created_at", current.created_at)
        meta: dict[str, Any] = {} if created is None else {"created_at": created}
        self.memfold.memory.write(ns, self.type, _render(op.value), key=op.key, importance=self.importance,
                                  labels=self.labels, metadata={META_KEY: meta}, cause="langgraph put",
                                  restatement="exact")


# -- the compiled window for LangGraph agents ------------------------------------------------------
def _text(content: Any) -> str:
    """Plain text of a LangChain message content (a string, or a list of content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, Mapping):
                parts.append(f"[{block.get('type', 'block')}]")
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def message_to_turn(message: Any) -> dict[str, Any] | None:
    """A memfold turn (OpenAI chat shape) for a LangChain message, keeping its id in
    ``metadata["langchain_id"]``; ``None`` for a message with nothing to archive (no text and no
    tool call)."""
    from langchain_core.messages import convert_to_openai_messages

    chat = convert_to_openai_messages([message])[0]
    role = chat["role"]  # "developer" is archived as a system turn that keeps metadata["role"]
    turn: dict[str, Any] = {"role": role, "content": _text(chat.get("content", ""))}
    for field in ("name", "tool_call_id", "tool_calls"):
        if chat.get(field):
            turn[field] = chat[field]
    if role not in ("user", "assistant", "tool", "system", "developer"):
        raise InvalidInput(f"a LangChain message of role {chat['role']!r} has no memfold turn role")
    if not turn["content"] and not turn.get("tool_calls"):
        return None
    turn["metadata"] = {"langchain_id": message.id}
    return turn


class MemfoldContext:
    """A LangGraph ``pre_model_hook`` (and ``post_model_hook``) that gives the model memfold's
    compiled window of a conversation.

    Called with the graph state, it appends the state's messages the conversation does not hold
    yet (matched by LangChain message id; the ``add_messages`` reducer gives every message one),
    then returns ``{"llm_input_messages": [...]}``: ``conv.context()`` as LangChain messages. The
    graph state keeps every message; the model sees the window, folded under the budget, with
    the protected channel and the namespace's memories. Used as ``post_model_hook`` (the
    :meth:`archive` method) it archives the model's answer right away and returns ``{}``.

    :param memfold: the facade.
    :param conversation_id: the conversation; ``None`` uses the run's ``thread_id``
        (``config={"configurable": {"thread_id": ...}}``).
    :param namespace: the namespace of a new conversation (memories and protected records of this
        namespace reach the window; use the one the graph's store writes to).
    :param budget: / :param output_reserve: / :param window: per-call window settings for
        ``conv.context`` (``hot_turns=...``, ...).
    :param reader: compile for this reader (DESIGN.md §4.9); ``None``: the owner.
    """

    def __init__(self, memfold: MemFold, conversation_id: str | None = None, *, namespace: str | None = None,
                 budget: int | None = None, output_reserve: int | None = None, reader: Any = None,
                 **window: Any) -> None:
        if not isinstance(memfold, MemFold):
            raise InvalidInput(f"MemfoldContext needs a MemFold, got {type(memfold).__name__}")
        self.memfold = memfold
        self.conversation_id = conversation_id
        self.namespace = namespace
        self.budget = budget
        self.output_reserve = output_reserve
        self.reader = as_reader(reader)
        self.window = window
        self._lock = facade_lock(memfold)

    def conversation(self, config: Optional[RunnableConfig] = None) -> Any:
        """The memfold conversation for this run (created on first use).

        :raises InvalidInput: without a ``conversation_id`` and without a ``thread_id`` in ``config``.
        """
        conv_id = self.conversation_id
        if conv_id is None:
            conv_id = ((config or {}).get("configurable") or {}).get("thread_id")
            if conv_id is None:
                raise InvalidInput("MemfoldContext has no conversation_id and the run has no thread_id: pass "
                                   "conversation_id=..., or config={'configurable': {'thread_id': ...}}")
        return self.memfold.conversation(str(conv_id), namespace=self.namespace)

    def archive(self, state: Any, config: Optional[RunnableConfig] = None) -> dict[str, Any]:
        """Append the state's messages that the conversation does not hold yet; returns ``{}``
        (usable as a ``post_model_hook``).

        :raises InvalidInput: for a message without an id, or one memfold cannot store.
        """
        with self._lock:
            self._archive(self.conversation(config), _messages(state))
        return {}

    def __call__(self, state: Any, config: Optional[RunnableConfig] = None) -> dict[str, Any]:
        """The ``pre_model_hook``: archive new messages, then ``{"llm_input_messages": window}``.

        :raises BudgetError: when what must stay verbatim does not fit the budget.
        """
        from langchain_core.messages import convert_to_messages

        from ..window.folds import NO_FOLD_CARD

        with self._lock:
            conv = self.conversation(config)
            self._archive(conv, _messages(state))
            ctx = conv.context(self.budget, self.output_reserve, reader=self.reader,
                               **{**NO_FOLD_CARD, **self.window})  # the hook offers no fold_unit tool
        return {"llm_input_messages": convert_to_messages(ctx.messages)}

    @staticmethod
    def _archive(conv: Any, messages: list[Any]) -> list[int]:
        for message in messages:
            if getattr(message, "id", None) is None:
                raise InvalidInput(f"message {message!r} has no id: use a state whose messages key has the "
                                   "add_messages reducer (MessagesState), which gives every message one")
        ids = [m.id for m in messages]
        last = conv.tail(1)
        last_id = last[0].metadata.get("langchain_id") if last else None
        if not last:
            new = messages
        elif last_id is not None and last_id in ids:
            new = messages[len(ids) - ids[::-1].index(last_id):]
        else:  # the tail is not a message of this state (trimmed state, or turns from elsewhere)
            held = {t.metadata.get("langchain_id") for t in conv.history()}
            new = [m for m in messages if m.id not in held]
        turns = [t for t in (message_to_turn(m) for m in new) if t is not None]
        return conv.append_many(turns) if turns else []


def _messages(state: Any) -> list[Any]:
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    if messages is None:
        raise InvalidInput("the graph state has no 'messages': MemfoldContext reads a MessagesState-like state")
    return list(messages)


def pre_model_hook(memfold: MemFold, conversation_id: str | None = None, **options: Any) -> MemfoldContext:
    """A ``pre_model_hook`` for ``create_react_agent`` that feeds the model memfold's compiled
    window of the run's conversation; see :class:`MemfoldContext` for ``options``."""
    return MemfoldContext(memfold, conversation_id, **options)


__all__ = [
    "FILTER_OPERATORS",
    "InvalidStoreNamespace",
    "MemfoldContext",
    "MemfoldStore",
    "matches_filter",
    "message_to_turn",
    "pre_model_hook",
    "to_langgraph_namespace",
    "to_memfold_namespace",
]
