"""The compiled-context cache: an unchanged conversation compiles to the same bytes, once (issue 15, point 6).

Invariant kept here (DESIGN.md §4.9, §4.11): a cached compiled context is served only under the
exact key it was built under, and the key holds the permissions it was built for. The key is

* the conversation's id,
* the storage's **state version** (:meth:`~memfold.memory.storage.base.MetaStorage.state_version`:
  it changes with every commit by this connection or another, so an append, a fold, a relabel, a
  revoke, an erase, a protected-record change or a memory write each make every entry stale),
* the window settings of the call (budget, output reserve, hot turns, ...),
* a **fingerprint of the reader's labels** (``owner`` for ``reader=None``; else the sha256 of the
  sorted labels), so a context built for one reader is never served to another,
* the tick of a logical clock (memory scores depend on it); a system clock's time is left out:
  a hit shows the memory ranking of the compile it cached, until anything is written.

A compile is put only under the key of the state it read: :meth:`~memfold.window.conversation.Conversation.context`
reads the version before its snapshot and after its own writes (access counts), with this process's
other writers held, and keeps the context only when nobody else committed in between
(``MetaStorage.only_own_commits``; round 9 QA found a commit landing mid-compile served as current).

No entry is served while an active deadline is due (the next compile expires it, and it leaves
the protected channel): :meth:`~memfold.window.conversation.Conversation.context` asks the
protected family first, one indexed statement. A hit returns a deep copy, byte-identical to the cached one,
which keeps a provider's prompt cache warm and lets a caller change its copy freely. The entry is
kept pickled (issue 18, point 4): one ``pickle.dumps`` at the miss and one ``pickle.loads`` per hit
cost about a fifth of what ``copy.deepcopy`` did each time (0.11 ms against 0.48 ms for a
145-message context); a context holding something pickle cannot write is deep-copied as before. Erasure
also clears the cache outright (:meth:`ContextCache.clear`), so no erased text stays in memory.

The cache lives in one process (one :class:`~memfold.window.parts.WindowParts`); it is bounded
(least recently used entries leave first) and thread-safe.
"""

from __future__ import annotations

import copy
import hashlib
import pickle
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Hashable

#: entries kept by default (one per conversation, settings and reader in use)
DEFAULT_ENTRIES = 256


def reader_fingerprint(reader: Any) -> str:
    """``"owner"`` for ``None``, else ``"labels:<sha256 of the sorted labels>"`` (:func:`as_reader` first)."""
    from .labels import as_reader

    rdr = as_reader(reader)
    if rdr is None:
        return "owner"
    return "labels:" + hashlib.sha256("\x1f".join(sorted(rdr.labels)).encode("utf-8")).hexdigest()


class ContextCache:
    """Compiled contexts by (conversation, state version, settings, reader fingerprint, tick).

    :param max_entries: how many compiled contexts to keep (least recently used leave first).
    """

    def __init__(self, max_entries: int = DEFAULT_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, tuple[Any, float | None]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def key(self, parts: Any, ref: Any, settings: Any, reader: Any) -> Hashable:
        """The key of one compile (one statement: the state version)."""
        from ..memory.clock import LogicalClock

        clock = parts.clock
        tick = clock.now() if isinstance(clock, LogicalClock) else None
        return (ref.id, parts.storage.meta.state_version(), _settings_key(settings), reader_fingerprint(reader), tick)

    def get(self, key: Hashable, now: float) -> Any | None:
        """A copy of the context cached under ``key``, or ``None`` (also when a deadline it shows is due)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or (entry[1] is not None and now >= entry[1]):
                if entry is not None:
                    del self._entries[key]
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            kept = entry[0]
        # outside the lock: the entry is immutable bytes (or a copy nobody else holds)
        return pickle.loads(kept) if type(kept) is bytes else copy.deepcopy(kept)

    def put(self, key: Hashable, compiled: Any, *, valid_until: float | None = None) -> None:
        """Cache a copy of ``compiled`` under ``key``, until ``valid_until`` (clock units) if given.
        Entries of the same conversation under an older state are dropped."""
        kept = _frozen(compiled)
        with self._lock:
            for old in [k for k in self._entries if k[0] == key[0] and k[1] != key[1]]:  # type: ignore[index]
                del self._entries[old]
            self._entries[key] = (kept, valid_until)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry (erasure calls it: no erased text stays in memory)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _settings_key(settings: Any) -> tuple:
    """The settings' part of a key: every field, sorted by name. Worked out once per distinct
    settings value (``dataclasses.asdict`` at each compile's two keys cost more than the cache
    hit it found); settings that cannot be hashed are read each time."""
    try:
        return _settings_key_of(settings)
    except TypeError:
        return tuple(sorted(settings.to_dict().items()))


@lru_cache(maxsize=64)
def _settings_key_of(settings: Any) -> tuple:
    return tuple(sorted(settings.to_dict().items()))


def _frozen(compiled: Any) -> Any:
    """What the cache keeps of ``compiled``: its pickle (bytes), or a deep copy when pickle cannot
    write it (then each hit deep-copies that copy, as before)."""
    try:
        return pickle.dumps(compiled, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return copy.deepcopy(compiled)


__all__ = ["ContextCache", "reader_fingerprint"]
