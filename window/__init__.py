"""The context window over a lossless archive: turns, conversations and forks, summary cards,
the catalog, the compactor and its summarizers, the compiled context, recall tools, and the
protected channel with labels, secrets and erasure (DESIGN.md §1, §4). Imports only ``memory``."""
