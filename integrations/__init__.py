"""Where agents live: thin adapters over the :class:`~memfold.MemFold` facade (issue 16).

Each module is one surface (the MCP server, the HTTP API, the LangGraph store, the Agents SDK
session) whose third-party package is an optional extra (``memfold[mcp]`` and so on) and is
imported only when the adapter is used, so ``import memfold`` and ``memfold --help`` never load it.

* :mod:`memfold.integrations.http`: the HTTP API (FastAPI; ``pip install 'memfold[server]'``,
  ``memfold serve DB``).
* :mod:`memfold.integrations.mcp`: the MCP server (``pip install 'memfold[mcp]'``, ``memfold mcp DB``).
* :mod:`memfold.integrations.langgraph`: ``MemfoldStore``, a LangGraph long-term store over the
  semantic records, and ``pre_model_hook`` for the compiled window (``pip install 'memfold[langgraph]'``).
* :mod:`memfold.integrations.agents`: ``MemfoldSession``, an OpenAI Agents SDK session over a
  conversation, with memfold's compaction (``pip install 'memfold[agents]'``).
"""
