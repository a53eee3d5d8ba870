"""Named rule families of the rule extractors, with the phrasing sets each was written from.

The constraint extractor (:mod:`memfold.window.directives`) and the attribute slots
(:mod:`memfold.consolidation.extractors.attributes`) register the rule families added in a round
of tuning here, each with the names of the phrasing sets (``tests/data``) whose misses it was
written from. ``bench/phrasing_retention.py --loso`` measures each set with the families that only
that set motivated turned off: the leave-one-set-out estimate of how a change carries over to
phrasings it was not written from. In normal use every family is on; turning families off is
scoped to a ``with`` block in the current thread or task (a :class:`contextvars.ContextVar`).
"""

from __future__ import annotations

import operator
from contextlib import contextmanager
from functools import partial
from contextvars import ContextVar
from typing import Iterable, Iterator

#: family name -> the phrasing sets whose misses it was written from
REGISTRY: dict[str, frozenset[str]] = {}
_OFF: ContextVar[frozenset[str]] = ContextVar("memfold_rule_families_off", default=frozenset())


def family(name: str, origin: Iterable[str]) -> str:
    """Register a family (idempotent) and return its name."""
    REGISTRY[name] = frozenset(origin)
    return name


def off_now() -> frozenset[str]:
    """The families turned off in the current context (a key for per-state caches)."""
    return _OFF.get()


#: :func:`off_now` as a C-level callable (the key of the rules' per-sentence caches)
off_key = _OFF.get


def on(name: str) -> bool:
    """True unless the family is turned off in the current context."""
    return name not in _OFF.get()


# Until a family is first turned off in this process every family is on, so ``on`` is a C-level
# callable answering True for any name (speed only, issue 18 point 4: the rules ask ``on`` a few
# hundred times per user turn, and in normal use nothing is ever turned off). The first
# :func:`off` puts the function above back for good: a task or thread started inside an ``off``
# block keeps that context after the block ends, so only the context variable can say what is off
# once anything was. Callers read ``families.on`` at each call, so they see the switch.
_checked_on = on
on = partial(operator.is_not, object())  # type: ignore[assignment]  # "name is not <a fresh object>": True
on.__doc__ = _checked_on.__doc__


@contextmanager
def off(names: Iterable[str]) -> Iterator[None]:
    """Turn the named families off inside the ``with`` block (current thread or task only)."""
    global on
    now = _OFF.get() | frozenset(names)
    if now:
        on = _checked_on  # before the set: no reader in this context answers from the fast path
    token = _OFF.set(now)
    try:
        yield
    finally:
        _OFF.reset(token)


def motivated_only_by(set_name: str) -> list[str]:
    """The families whose every origin is ``set_name`` (off when that set is held out)."""
    return sorted(n for n, origin in REGISTRY.items() if origin and origin <= {set_name})


def motivated_by(set_name: str) -> list[str]:
    """The families ``set_name`` had a hand in (alone or with other sets): all off gives the
    pessimistic bound, as if none of them would have been written without that set."""
    return sorted(n for n, origin in REGISTRY.items() if set_name in origin)
