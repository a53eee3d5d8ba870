"""``memfold`` commands that serve the library to agents: ``serve`` (the HTTP API) and ``mcp``.

Each imports its integration (:mod:`memfold.integrations`) only when it runs, so ``memfold --help``
never loads FastAPI, uvicorn or the MCP SDK.
"""

from __future__ import annotations

import click

from .core import cli, db_argument, open_db, plural

@cli.command()
@db_argument
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback needs API keys (--keys or MEMFOLD_API_KEYS).")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8000, show_default=True, help="TCP port.")
@click.option("--keys", "keys_path", type=click.Path(dir_okay=False), default=None,
              help="JSON file of API keys, each mapped to a reader's labels and its namespaces "
                   "(default: the MEMFOLD_API_KEYS variable; neither: no auth, loopback only).")
@click.option("--embedder", default="auto", show_default=True,
              help="Search ranking: 'auto', 'none' (BM25 only, no model load), 'hashing', or a local model path.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True, help="uvicorn's log level.")
def serve(db: str, host: str, port: int, keys_path: str | None, embedder: str, log_level: str) -> None:
    """Serve DB over HTTP: the memfold API (FastAPI on uvicorn) under /v1 until Ctrl-C.

    Needs the server extra (pip install 'memfold[server]'). The routes, their JSON bodies and
    error codes are in the OpenAPI document at /openapi.json (and openapi.json in the repository)."""
    try:
        from ..integrations.http import check_bind, load_keys, serve as serve_http
    except ImportError as exc:
        raise click.ClickException(f"memfold serve needs the server extra: pip install 'memfold[server]' ({exc})")
    keys = load_keys(keys_path)
    check_bind(host, keys)
    mf = open_db(db, embedder=embedder)
    auth = f"{plural(len(keys), 'API key')}" if keys else "no API keys: loopback only, every caller is the owner"
    click.echo(f"memfold: serving {db} on http://{host}:{port}/v1 ({auth})", err=True)
    try:
        serve_http(mf, host=host, port=port, keys=keys, log_level=log_level)
    finally:
        mf.close()


