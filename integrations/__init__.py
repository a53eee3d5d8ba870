"""Adapters that serve memfold where agents live (issue 16), each an optional extra.

Each module is a thin shell over the :class:`~memfold.MemFold` facade and imports its ecosystem
only when it is itself imported, so ``import memfold`` and ``memfold --help`` never load them:

* :mod:`memfold.integrations.langgraph` (``memfold[langgraph]``): ``MemfoldStore``, a LangGraph
  long-term store over the semantic records, and ``pre_model_hook`` for the compiled window.
* :mod:`memfold.integrations.agents` (``memfold[agents]``): ``MemfoldSession``, an OpenAI Agents
  SDK session over a conversation, with memfold's compaction.
"""
