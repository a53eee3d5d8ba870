"""``memfold`` commands that serve the library to agents: ``serve`` (the HTTP API) and ``mcp``.

Each imports its integration (:mod:`memfold.integrations`) only when it runs, so ``memfold --help``
never loads FastAPI, uvicorn or the MCP SDK.
"""

from __future__ import annotations

import click

from .. import InvalidInput
from .core import cli, db_argument, ensure_port_free, open_db, plural

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
    ensure_port_free(host, port)
    mf = open_db(db, embedder=embedder)
    auth = f"{plural(len(keys), 'API key')}" if keys else "no API keys: loopback only, every caller is the owner"
    click.echo(f"memfold: serving {db} on http://{host}:{port}/v1 ({auth})", err=True)
    try:
        serve_http(mf, host=host, port=port, keys=keys, log_level=log_level)
    finally:
        mf.close()




# -- serving agents: the MCP server (issue 16) -------------------------------------------------------
@cli.command(name="mcp")
@db_argument
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="With --http: the TCP port on 127.0.0.1 (default 8765; 0 picks a free one).")
@click.option("--reader", "reader_labels", multiple=True, metavar="LABEL",
              help="A label the server's one reader holds (repeatable). Without --reader the reader holds no "
                   "label: labelled turns (secrets) stay hidden from every tool.")
@click.option("--owner", is_flag=True, help="Serve as the trusted owner, who sees every label (not with --reader).")
@click.option("--namespace", "-n", default=None,
              help="Bind the server to this namespace: any other conversation or namespace is refused.")
@click.option("--embedder", default="auto", show_default=True,
              help="Search ranking: 'auto' (hybrid with the file's embedding model, else all-MiniLM-L6-v2), "
                   "'none' (BM25 only), 'hashing', or a local model path.")
def mcp_command(db: str, http: bool, port: int | None, reader_labels: tuple[str, ...], owner: bool,
                namespace: str | None, embedder: str) -> None:
    """Serve DB's memory tools to an agent over MCP (the Model Context Protocol).

    Tools: search, describe, expand, append, context, remember, memories, protect_list. Over
    stdio by default (an MCP client such as Claude Desktop starts this command); with --http at
    http://127.0.0.1:PORT/mcp. Every tool reads as one fixed reader and, with -n, inside one
    namespace. Needs the mcp extra: pip install 'memfold[mcp]'. Status lines go to stderr
    (stdout is the protocol channel over stdio).
    """
    if owner and reader_labels:
        raise InvalidInput("--owner sees every label; it cannot be combined with --reader")
    if port is not None and not http:
        raise InvalidInput("--port is for --http: over stdio there is no port")
    if http:
        ensure_port_free("127.0.0.1", 8765 if port is None else port)
    try:
        from ..integrations.mcp import create_server, serve_http, serve_stdio
        mf = open_db(db, embedder=embedder)
        server = create_server(mf, reader=None if owner else [label for label in reader_labels if label],
                               namespace=namespace)
    except ImportError as exc:
        raise click.ClickException(str(exc)) from None
    rights = server.memfold_tools.describe_rights()
    try:
        if http:
            serve_http(server, 8765 if port is None else port,
                       on_ready=lambda url: click.echo(f"memfold mcp: serving {db} at {url} {rights}", err=True))
        else:
            click.echo(f"memfold mcp: serving {db} over stdio {rights}", err=True)
            serve_stdio(server)
    except KeyboardInterrupt:
        pass
    finally:
        mf.close()


