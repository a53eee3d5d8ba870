"""Adapters that serve memfold where agents live (issue 16): each is a thin shell over the
:class:`~memfold.MemFold` facade, behind an optional extra, and imported only when used, so
``import memfold`` and ``memfold --help`` never load a web framework or an agent SDK.

* :mod:`memfold.integrations.http`: the HTTP API (FastAPI; ``pip install 'memfold[server]'``,
  ``memfold serve DB``).
"""
