"""The ``memfold`` command: a thin shell over the library (STYLE.md rules 1-2).

Each command parses its arguments, opens the :class:`~memfold.MemFold` facade, makes one library
call and prints: human output by default, ``--json`` for scripts. The database comes from the
``DB`` argument or the ``MEMFOLD_DB`` environment variable. A library error becomes one line on
stderr and a non-zero exit. No SQL here, and no command touches storage: what a command needs is
a facade method (or a method of what the facade hands out: a conversation, the memory store,
the protected channel).

One module per command group, all adding to the one :data:`cli` group of :mod:`.core`:

* :mod:`.foundation`: ``init``, ``clock``, ``ingest``, ``history``, ``export``, ``remember``, ``memories``
* :mod:`.forgetting`: ``pin``, ``unpin``, ``retire``, ``revert``, ``events``, ``policy``
* :mod:`.protected`: ``protect ...``, ``erase``
* :mod:`.consolidation`: ``consolidate``, ``runs``, ``scheduler ...``
* :mod:`.window`: ``context``, ``compact``, ``search``, ``describe``, ``expand``, ``window``
* :mod:`.jobs`: ``reembed``, ``replay``, ``demo``
* :mod:`.serve`: ``serve`` (the HTTP API), ``mcp`` (the MCP server)
* :mod:`.worker`: ``worker`` (the background compaction worker)
* :mod:`.view`: ``view`` (the browser viewer)
* :mod:`.folds`: ``fold``, ``strategy``, ``stats`` (folds the model chooses, strategy frames; issue 14)
* :mod:`.forks`: ``fork``, ``clear`` (issue 15)
"""

from __future__ import annotations

from . import consolidation, forgetting, foundation, jobs, protected, serve, window, worker  # noqa: F401  (add the commands)
from . import view  # noqa: F401  (memfold view, issue 19)
from . import folds  # noqa: F401  (issue 14: fold, strategy, stats)
from . import forks  # noqa: F401  (issue 15: fork, clear)
from .core import cli, main

__all__ = ["cli", "main"]
