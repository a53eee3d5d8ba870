"""The viewer (issue 19): a local web page over the HTTP API that shows what the model sees.

``memfold view DB`` serves it with uvicorn on 127.0.0.1; :func:`create_viewer_app` builds the
ASGI app. Pages are server-rendered HTML shells (``/``, ``/conversation/ID``, ``.../context``,
``.../growth``, ``/memories``) that one hand-written script (``viewer_static/viewer.js``) fills from
JSON: the read routes of the HTTP API under ``/v1`` and the viewer's own under ``/v1/view``. No
build step, no front-end dependency.

Invariants kept here:

* **Read-only.** The facade is opened with ``read_only=True`` (every write is refused by the
  storage), the API's writing routes are not mounted, and the viewer's routes compile with
  :meth:`Conversation.preview_context` (no compaction, no access counted). A test compares the
  database bytes before and after a session of clicks.
* **One reader.** The viewer runs as ``reader`` (its labels; ``None``: the owner). With API keys
  every request needs one (the page asks for it and sends ``X-API-Key``); the key's labels are
  then cut down to the viewer's reader and its namespaces still apply. Nothing shown needs a
  label the reader lacks: every route passes the reader to the facade.
"""

from __future__ import annotations

import dataclasses
import html
from urllib.parse import quote
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Query
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse

from .. import BudgetError, InvalidInput, MemFold, MemfoldError, NotFound, PermissionDenied, Reader, __version__
from ..window.settings import WindowSettings
from .http import API_PREFIX, ApiKey, Caller, Service, Svc, Who, create_app

STATIC = Path(__file__).with_name("viewer_static")
VIEW_PREFIX = f"{API_PREFIX}/view"
#: the API's routes the viewer mounts: reads only (no context, which may compact; no memories/read,
#: which counts accesses)
READ_ROUTES = {
    ("GET", f"{API_PREFIX}/health"), ("GET", f"{API_PREFIX}/conversations"),
    ("GET", f"{API_PREFIX}/conversations/{{conversation_id}}"),
    ("GET", f"{API_PREFIX}/conversations/{{conversation_id}}/turns"),
    ("GET", f"{API_PREFIX}/conversations/{{conversation_id}}/cards/{{ref}}"),
    ("GET", f"{API_PREFIX}/conversations/{{conversation_id}}/cards/{{ref}}/expand"),
    ("GET", f"{API_PREFIX}/conversations/{{conversation_id}}/protected"),
    ("POST", f"{API_PREFIX}/search"), ("GET", f"{API_PREFIX}/memories"),
    ("GET", f"{API_PREFIX}/memories/{{record_id}}"), ("GET", f"{API_PREFIX}/protected"),
    ("GET", f"{API_PREFIX}/events"),
}


class ViewerService(Service):
    """The API's service, reading as the viewer's reader: each caller's labels are cut down to
    ``reader`` (``None``: the owner, every label)."""

    def __init__(self, memfold: MemFold, keys: list[ApiKey] | None, reader: list[str] | None,
                 window: WindowSettings) -> None:
        super().__init__(memfold, keys)
        self.reader = None if reader is None else sorted(set(reader))
        self.window = window

    def identify(self, presented: str | None) -> Caller:
        caller = super().identify(presented)
        key = caller.key
        if self.reader is None:
            return caller
        if key is None:
            return Caller(ApiKey(name="viewer", digest="", namespaces=("*",), labels=frozenset(self.reader)))
        labels = set(self.reader) if key.owner else set(key.labels) & set(self.reader)
        return Caller(ApiKey(name=key.name, digest=key.digest, namespaces=key.namespaces, labels=frozenset(labels)))


def _reading(reader: str | None = Query(
        None, description="Read as fewer labels than the viewer's reader: comma-separated labels, 'none' for none "
                          "(default: the viewer's reader)."), caller: Caller = Who) -> Caller:
    """The caller, reading as the labels ``reader`` names when given: a narrower reader for one
    view (a label the viewer's own reader lacks is refused, 403)."""
    if reader is None:
        return caller
    wanted = [] if reader.strip().lower() in ("", "none") else [x.strip() for x in reader.split(",") if x.strip()]
    labels = Reader.of(wanted).labels  # InvalidInput for a bad label name
    held = caller.reader
    if held is not None and not labels <= held.labels:
        missing = ", ".join(sorted(labels - held.labels))
        raise PermissionDenied(f"the viewer reads without the label(s) {missing}: it cannot show more than its reader "
                               f"({', '.join(sorted(held.labels)) or 'no label'})")
    key = caller.key
    return Caller(ApiKey(name=key.name if key is not None else "viewer", digest=key.digest if key is not None else "",
                         namespaces=key.namespaces if key is not None else ("*",), labels=frozenset(labels)))


Reading = Depends(_reading)


def _labels(caller: Caller) -> list[str] | None:
    reader = caller.reader
    return None if reader is None else sorted(reader.labels)


def _settings(svc: ViewerService, budget: int | None, output_reserve: int | None, hot_turns: int | None) -> dict[str, Any]:
    """The window overrides of one request (the viewer's defaults where not given)."""
    base = svc.window
    reserve = output_reserve if output_reserve is not None else (
        base.output_reserve_tokens if budget is None else min(base.output_reserve_tokens, budget // 4))
    out = {"budget": budget or base.budget_tokens, "output_reserve": reserve,
           "hot_turns": base.hot_turns if hot_turns is None else hot_turns}
    if out["output_reserve"] >= out["budget"]:
        raise InvalidInput(f"output_reserve {out['output_reserve']} must be below the budget {out['budget']}")
    return out


def _window_args(svc: ViewerService, s: dict[str, Any]) -> tuple[tuple[int, int], dict[str, Any]]:
    """``(budget, output_reserve)`` and every other field of the viewer's window settings, with the
    request's hot tail: the conversation's own settings start from the facade's, not the viewer's."""
    fields = {f.name: getattr(svc.window, f.name) for f in dataclasses.fields(svc.window)}
    fields.pop("budget_tokens"), fields.pop("output_reserve_tokens")
    fields["hot_turns"] = s["hot_turns"]
    return (s["budget"], s["output_reserve"]), fields


def _node(item: Any, clock: Any, *, in_window: bool) -> dict[str, Any]:
    """A tree node for a card or a turn (the API's item shape plus ``in_window`` and its times as
    text, ``t=6`` or ISO 8601)."""
    data = item.to_dict()
    if hasattr(item, "covers"):
        return {**data, "kind": "card", "ref": item.ref, "in_window": in_window, "children": len(item.covers),
                "start_text": clock.format(item.start_at), "end_text": clock.format(item.end_at)}
    return {**data, "kind": "turn", "ref": f"t{item.id}", "in_window": in_window, "children": 0,
            "created_text": clock.format(item.created_at)}


router = APIRouter(prefix=VIEW_PREFIX, tags=["viewer"])
Q_BUDGET = Query(None, ge=1, description="budget_tokens (default: the viewer's)")
Q_RESERVE = Query(None, ge=0, description="output_reserve_tokens")
Q_HOT = Query(None, ge=0, description="hot_turns")


@router.get("/whoami", summary="The viewer's reader and defaults")
def whoami(svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    w = svc.window
    return {"version": __version__, "auth": bool(svc.keys), "reader": _labels(caller),
            "key": None if caller.key is None or caller.key.name == "viewer" else caller.key.name,
            "read_only": svc.memfold.storage.meta.read_only(),
            "window": {"budget": w.budget_tokens, "output_reserve": w.output_reserve_tokens, "hot_turns": w.hot_turns},
            "clock": svc.memfold.clock.kind, "now": svc.memfold.clock.now(),
            "token_counter": svc.memfold.token_counter.id}


@router.get("/namespaces", summary="Namespaces with conversations or memories the caller may see")
def namespaces(svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    with svc.lock:
        mf = svc.memfold
        names = {mf.archive.conversation_row(cid)["namespace"] for cid in mf.conversations()}
        names |= set(mf.memory.namespaces())
        return {"namespaces": sorted(n for n in names if caller.may(n))}


@router.get("/conversations/{conversation_id:conversation_id}/tree", summary="The strip (the catalog) and the top of the card tree")
def tree(conversation_id: str, budget: int | None = Q_BUDGET, output_reserve: int | None = Q_RESERVE,
         hot_turns: int | None = Q_HOT, svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    s = _settings(svc, budget, output_reserve, hot_turns)
    reader = _labels(caller)
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        args, extra = _window_args(svc, s)
        items = conv.catalog_view()
        cards = conv.cards.get_many([i.item_id for i in items if i.kind == "card"])
        turns = conv.turns_by_id([i.item_id for i in items if i.kind == "turn"])
        try:
            compiled = conv.preview_context(*args, reader=reader, **extra)
            fits, error = True, None
        except BudgetError as exc:
            compiled, fits, error = None, False, str(exc)
        hot = set(compiled["hot_refs"]) if compiled else set()
        nodes = []
        for item in items:
            source = cards.get(item.item_id) if item.kind == "card" else turns.get(item.item_id)
            if source is None or not caller.can_read(source.labels) or getattr(source, "erased", False):
                continue
            if item.kind == "turn" and item.role == "system":
                continue
            nodes.append({**_node(source, svc.memfold.clock, in_window=True), "shown_tokens": item.tokens, "hot": item.ref in hot})
        history = conv.history(reader=reader)
        return {
            "conversation": svc.memfold.archive.conversation_row(conv.id), "settings": s,
            "strip": nodes, "fits": fits, "error": error,
            "total_tokens": compiled["total_tokens"] if compiled else sum(n["shown_tokens"] for n in nodes),
            "usable_tokens": s["budget"] - s["output_reserve"],
            "sections": compiled["sections"] if compiled else None,
            "turns": len(history), "last_seq": history[-1].seq if history else 0,
        }


@router.get("/conversations/{conversation_id:conversation_id}/children/{ref}", summary="A card's children as tree nodes (dimmed: folded)")
def children(conversation_id: str, ref: str, svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        items = conv.expand(ref, reader=_labels(caller))
        return {"ref": ref, "children": [_node(i, svc.memfold.clock, in_window=False) for i in items]}


@router.get("/conversations/{conversation_id:conversation_id}/search", summary="The recall tool's search, with each hit's path in the tree")
def search(conversation_id: str, q: str = Query(..., min_length=1), k: int = Query(10, ge=1, le=100),
           svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    reader = _labels(caller)
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        in_window = {i.ref for i in conv.catalog_view()}
        hits = []
        for hit in conv.search(q, k, reader=reader):
            path, ref = [hit.ref], hit.ref
            while ref not in in_window:
                parents = conv.describe(ref, reader=reader).get("parents") or []
                if not parents:
                    break
                ref = parents[-1]
                path.insert(0, ref)
            hits.append({**hit.to_dict(), "path": path})
        return {"query": q, "hits": hits}


@router.get("/conversations/{conversation_id:conversation_id}/context", summary="The compiled context now, by section (no write)")
def context(conversation_id: str, budget: int | None = Q_BUDGET, output_reserve: int | None = Q_RESERVE,
            hot_turns: int | None = Q_HOT, svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    s = _settings(svc, budget, output_reserve, hot_turns)
    args, extra = _window_args(svc, s)
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        try:
            return {"fits": True, "settings": s, **conv.preview_context(*args, reader=_labels(caller), **extra)}
        except BudgetError as exc:
            return {"fits": False, "settings": s, "error": f"{exc} (a model call at this budget would fold first; "
                                                           "the viewer never folds)"}


@router.get("/conversations/{conversation_id:conversation_id}/at/{seq}", summary="The compiled context right after turn SEQ")
def context_at(conversation_id: str, seq: int, budget: int | None = Q_BUDGET, output_reserve: int | None = Q_RESERVE,
               hot_turns: int | None = Q_HOT, svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    if seq < 1:
        raise InvalidInput(f"seq must be a turn number >= 1, got {seq}")
    s = _settings(svc, budget, output_reserve, hot_turns)
    args, extra = _window_args(svc, s)
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        return {"settings": s, **conv.context_at(seq, *args, reader=_labels(caller), **extra)}


@router.get("/conversations/{conversation_id:conversation_id}/growth", summary="The strip after every turn, for the growth demo")
def growth(conversation_id: str, budget: int | None = Q_BUDGET, output_reserve: int | None = Q_RESERVE,
           hot_turns: int | None = Q_HOT, svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    s = _settings(svc, budget, output_reserve, hot_turns)
    args, extra = _window_args(svc, s)
    reader = _labels(caller)
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        frames = conv.timeline(*args, reader=reader, **extra)
        cards: dict[str, Any] = {}
        for frame in frames:
            for ref in frame["new_cards"]:
                card = conv.cards.get(int(ref[1:]))
                cards[ref] = {"ref": ref, "depth": card.depth, "covers": list(card.covers), "text": card.text,
                              "first_seq": card.first_seq, "last_seq": card.last_seq, "tokens": card.tokens}
        turns = {f"t{t.id}": {"ref": f"t{t.id}", "seq": t.seq, "role": t.role, "content": t.content, "tokens": t.tokens,
                              "name": t.name, "tool_calls": t.tool_calls} for t in conv.history(reader=reader)}
        return {"settings": s, "frames": frames, "cards": cards, "turns": turns}


@router.get("/memories", summary="Records with their status and score factors at a chosen time")
def memories(namespace: str | None = None, at: float | None = None, svc: ViewerService = Svc,
             caller: Caller = Reading) -> dict[str, Any]:
    if namespace is not None:
        caller.check_namespace(namespace)
    with svc.lock:
        mf = svc.memfold
        when = mf.clock.now() if at is None else mf.clock.coerce(at)
        rows = [r for r in mf.memories_at(namespace, when, reader=_labels(caller))
                if caller.may(r.record.namespace)]
        return {"at": when, "at_text": mf.clock.format(when), "records": [r.to_dict() for r in rows]}


@router.get("/chains", summary="Supersession chains (oldest first, the active value last) and evictions")
def chains(namespace: str | None = None, svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    if namespace is not None:
        caller.check_namespace(namespace)
    with svc.lock:
        mf = svc.memfold
        records = {r.id: r for r in mf.memory.list(namespace, include_inactive=True)
                   if caller.may(r.namespace) and caller.can_read(r.labels)}
        out = []
        for record in records.values():
            if record.supersedes is not None or record.superseded_by is None:
                continue
            chain, cur = [record], record
            while cur.superseded_by is not None and cur.superseded_by in records:
                cur = records[cur.superseded_by]
                chain.append(cur)
            out.append([r.to_dict() for r in chain])
        evictions = []
        for event in mf.memory.events(namespace, kind="evict"):
            record = records.get(event.record_id)
            if record is not None:
                evictions.append({"event": event.to_dict(), "record": record.to_dict()})
        return {"chains": out, "evictions": evictions}


def _sources(mf: MemFold, caller: Caller, provenance: Any, depth: int = 0) -> list[dict[str, Any]]:
    """The sources a derived record cites, readable by ``caller``: turns verbatim, records with
    their content and (one level down) their own source turns; others by reference only."""
    out: list[dict[str, Any]] = []
    for source in provenance:
        kind, _, raw = str(source).partition(":")
        if not raw.isdigit():
            out.append({"ref": source})
            continue
        try:
            if kind == "turn":
                turn = mf.archive.get(int(raw))
                if caller.can_read(turn.labels) and not turn.erased and caller.may(svc_namespace(mf, turn)):
                    out.append({"ref": f"t{turn.id}", "kind": "turn", "conversation_id": turn.conversation_id,
                                "seq": turn.seq, "role": turn.role, "content": turn.content})
            elif kind == "record":
                record = mf.memory.get(int(raw))
                if caller.can_read(record.labels) and caller.may(record.namespace):
                    out.append({"ref": source, "kind": "record", "type": record.type, "status": record.status,
                                "content": record.content,
                                "sources": _sources(mf, caller, record.provenance, depth + 1) if depth == 0 else []})
            else:
                out.append({"ref": source})
        except MemfoldError:
            out.append({"ref": source, "missing": True})
    return out


def svc_namespace(mf: MemFold, turn: Any) -> str:
    return mf.archive.conversation_row(turn.conversation_id)["namespace"]


@router.get("/runs", summary="Consolidation runs with the facts and rules each wrote and their source turns")
def runs(namespace: str | None = None, svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    if namespace is not None:
        caller.check_namespace(namespace)
    with svc.lock:
        mf = svc.memfold
        products: dict[int, list[Any]] = {}
        for record in mf.memory.list(namespace, include_inactive=True):
            run_id = record.metadata.get("consolidation_run")
            if isinstance(run_id, int) and caller.may(record.namespace) and caller.can_read(record.labels):
                products.setdefault(run_id, []).append(record)
        out = []
        for run in mf.runs(namespace):
            if not caller.may(run.namespace):
                continue
            facts = []
            for record in products.get(run.id, []):
                facts.append({"record": record.to_dict(), "sources": _sources(mf, caller, record.provenance)})
            out.append({**run.to_dict(), "products": facts})
        return {"runs": out}


@router.get("/protected", summary="Protected records with each one's state history")
def protected(namespace: str | None = None, svc: ViewerService = Svc, caller: Caller = Reading) -> dict[str, Any]:
    if namespace is not None:
        caller.check_namespace(namespace)
    with svc.lock:
        mf = svc.memfold
        records = [r for r in mf.protected.list(namespace=namespace, state=None, reader=caller.reader)
                   if caller.may(r.namespace)]
        history: dict[int, list[dict[str, Any]]] = {}
        for event in mf.memory.events(namespace):
            kind, _, raw = event.subject.partition(":")
            if kind == "protected" and raw.isdigit():
                history.setdefault(int(raw), []).append(event.to_dict())
        return {"records": [{**r.to_dict(), "history": history.get(r.id, [])} for r in records]}


# -- pages -----------------------------------------------------------------------------------------
PAGES = {"index": "Conversations", "tree": "Conversation", "context": "Compiled context", "memories": "Memories",
         "growth": "Growth demo"}


def page(kind: str, *, conversation: str | None = None, namespace: str | None = None) -> str:
    """The HTML shell of one view; the script fills it from the JSON routes."""
    esc = html.escape
    data = {"page": kind, "conversation": conversation or "", "namespace": namespace or ""}
    attrs = " ".join(f'data-{k}="{esc(v)}"' for k, v in data.items())
    nav = ['<a href="/">conversations</a>', '<a href="/memories">memories</a>']
    if conversation:
        q = esc(conversation)
        base = esc(f"/conversation/{quote(conversation, safe='')}")
        nav += [f'<a href="{base}">tree</a>', f'<a href="{base}/context">context</a>',
                f'<a href="{base}/growth">growth</a>']
        title = f"{PAGES[kind]}: {q}"
    else:
        title = PAGES[kind]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>memfold · {title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/viewer.css"></head>
<body {attrs}>
<header><strong>memfold viewer</strong> <nav>{' · '.join(nav)}</nav> <span id="who"></span></header>
<form id="key-form" hidden><label>API key <input id="api-key" type="password" autocomplete="off"></label>
<button type="submit">use key</button> <span id="key-error"></span></form>
<main id="main"><h1>{title}</h1><div id="view" aria-live="polite">loading…</div></main>
<script src="/static/viewer.js"></script>
</body></html>
"""


def create_viewer_app(memfold: MemFold, *, reader: list[str] | None = None, keys: list[ApiKey] | None = None,
                      window: WindowSettings | None = None) -> FastAPI:
    """The viewer's ASGI app over ``memfold`` (open it with ``read_only=True``; the caller closes it).

    :param reader: the labels the viewer reads with (``None``: the owner, every label).
    :param keys: API keys (:func:`memfold.integrations.http.load_keys`); with keys the page asks for one.
    :param window: the default window settings of the views (the facade's when ``None``).
    """
    app = create_app(memfold, keys=keys, routes=READ_ROUTES)
    app.state.memfold_service = ViewerService(memfold, keys or None, reader, window or memfold.window)
    app.include_router(router)

    @app.get("/", include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(page("index"))

    @app.get("/memories", include_in_schema=False)
    def memories_page(namespace: str | None = None) -> HTMLResponse:
        return HTMLResponse(page("memories", namespace=namespace))

    @app.get("/conversation/{conversation_id:conversation_id}", include_in_schema=False)
    def tree_page(conversation_id: str) -> HTMLResponse:
        return HTMLResponse(page("tree", conversation=conversation_id))

    @app.get("/conversation/{conversation_id:conversation_id}/{view}", include_in_schema=False)
    def conversation_page(conversation_id: str, view: str) -> HTMLResponse:
        if view not in ("context", "growth"):
            return HTMLResponse(page("index"), status_code=404)
        return HTMLResponse(page(view, conversation=conversation_id))

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> FileResponse:
        path = STATIC / name
        if name not in {p.name for p in STATIC.iterdir()}:
            raise NotFound(f"no static file {name!r}")
        return FileResponse(path)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> RedirectResponse:
        return RedirectResponse("/static/favicon.svg")

    return app


def view_url(host: str, port: int) -> str:
    """The URL the viewer prints."""
    return f"http://{host}:{port}/"


def make_server(memfold: MemFold, *, host: str = "127.0.0.1", port: int = 8700, reader: list[str] | None = None,
                keys: list[ApiKey] | None = None, window: WindowSettings | None = None, log_level: str = "warning",
                on_ready: Any = None):
    """A ``uvicorn.Server`` for the viewer (``run()`` it; set ``should_exit`` to stop it);
    ``on_ready(url)`` is called once the socket listens, with the port actually bound.

    :raises InvalidInput: for a non-loopback ``host`` without keys (checked before binding).
    """
    import uvicorn

    from .http import check_bind

    check_bind(host, keys)
    config = uvicorn.Config(create_viewer_app(memfold, reader=reader, keys=keys, window=window), host=host,
                            port=port, log_level=log_level)
    server = uvicorn.Server(config)
    if on_ready is not None:
        original = server.startup

        async def startup(sockets=None):
            await original(sockets=sockets)
            bound = port
            for srv in server.servers:
                for sock in srv.sockets:
                    bound = sock.getsockname()[1]
            on_ready(view_url(host, bound))

        server.startup = startup  # type: ignore[method-assign]
    return server


def serve(memfold: MemFold, **options: Any) -> None:
    """Serve the viewer until interrupted (``memfold view``); options as for :func:`make_server`."""
    make_server(memfold, **options).run()


__all__ = ["ViewerService", "create_viewer_app", "make_server", "page", "serve", "view_url"]
