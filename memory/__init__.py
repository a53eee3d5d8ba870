"""The lowest layer: errors, clocks, token counting, SQLite storage and migrations, the typed
memory stores with their event log, scoring and forgetting policies, embeddings and hybrid
search, and the optional LLM client. Nothing here imports ``window``, ``consolidation`` or above
(DESIGN.md §2)."""
