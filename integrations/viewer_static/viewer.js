// memfold viewer: fills the server-rendered page shells from the JSON routes (/v1, /v1/view).
// Read-only: every request is a GET, except the API's POST /v1/search, which writes nothing.
// With API keys on, the page asks for one and sends it as X-API-Key (kept in sessionStorage).
(function () {
  "use strict";
  const body = document.body;
  const PAGE = body.dataset.page;
  const CONV = body.dataset.conversation;
  const view = document.getElementById("view");
  const keyForm = document.getElementById("key-form");
  let KEY = sessionStorage.getItem("memfold-key") || "";

  // -- helpers -------------------------------------------------------------------------------
  function render(...kids) {
    view.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
  }
  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }
  const enc = encodeURIComponent;
  function query(obj) {
    const parts = Object.entries(obj).filter(([, v]) => v !== "" && v !== null && v !== undefined)
      .map(([k, v]) => `${enc(k)}=${enc(v)}`);
    return parts.length ? "?" + parts.join("&") : "";
  }
  const urlParams = new URLSearchParams(location.search);
  const windowParams = () => ({
    budget: urlParams.get("budget") || "", output_reserve: urlParams.get("output_reserve") || "",
    hot_turns: urlParams.get("hot_turns") || "",
  });

  class Unauthorized extends Error {}

  async function api(path, options) {
    if (path.startsWith("/v1/view/") && urlParams.has("reader")) {  // a narrower reader chosen on the page
      path += (path.includes("?") ? "&" : "?") + "reader=" + enc(urlParams.get("reader"));
    }
    const headers = Object.assign({ "Accept": "application/json" }, (options && options.headers) || {});
    if (KEY) headers["X-API-Key"] = KEY;
    const response = await fetch(path, Object.assign({}, options || {}, { headers }));
    const data = await response.json().catch(() => ({ error: response.statusText }));
    if (response.status === 401) { askKey(data.error); throw new Unauthorized(data.error); }
    if (!response.ok) throw new Error(`${data.type || response.status}: ${data.error}`);
    return data;
  }

  function askKey(message) {
    keyForm.hidden = false;
    document.getElementById("key-error").textContent = message || "";
    render(el("p", { class: "note", text: "This viewer needs an API key." }));
  }

  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    KEY = document.getElementById("api-key").value.trim();
    sessionStorage.setItem("memfold-key", KEY);
    keyForm.hidden = true;
    start();
  });

  function fail(error) {
    if (error instanceof Unauthorized) return;
    render(el("p", { class: "error", text: String(error.message || error) }));
  }

  const toolCalls = (calls) => (calls && calls.length ? (calls.map((c) => c.function ?
    `call ${c.function.name}(${c.function.arguments})` : JSON.stringify(c)).join("\n")) : "");
  const labelList = (labels) => (labels && labels.length ? labels.join(", ") : "none");
  const timeSpan = (a, b) => (a === b ? a : `${a} – ${b}`);
  const span = (a, b) => (a === b ? `turn ${a}` : `turns ${a}–${b}`);
  const SECTION_ORDER = ["system", "system_note", "protected", "memories", "cards", "turns", "hot_turns", "fold_card"];

  function windowForm(settings, onChange) {
    const field = (name, label, value) => el("label", {}, label + " ",
      el("input", { name, type: "number", min: "0", value: value, size: "7" }));
    const form = el("form", { class: "window-form", id: "window-form" },
      field("budget", "budget", settings.budget), field("output_reserve", "output reserve", settings.output_reserve),
      field("hot_turns", "hot turns", settings.hot_turns),
      el("label", { title: "comma-separated labels, 'none' for none; empty: the viewer's reader" }, "reader ",
        el("input", { name: "reader", type: "text", value: urlParams.get("reader") || "", size: "12",
          placeholder: "the viewer's" })),
      el("button", { type: "submit", text: "apply" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      for (const name of ["budget", "output_reserve", "hot_turns"]) urlParams.set(name, form.elements[name].value);
      const reader = form.elements.reader.value.trim();
      if (reader) urlParams.set("reader", reader); else urlParams.delete("reader");
      history.replaceState(null, "", location.pathname + "?" + urlParams.toString());
      onChange().then(showReader).catch(fail);
    });
    return form;
  }

  function meter(total, usable) {
    const pct = usable ? Math.min(100, Math.round((100 * total) / usable)) : 0;
    return el("div", { class: "meter" + (total > usable ? " over" : ""), id: "meter" },
      el("div", { class: "meter-fill", style: `width:${pct}%` }),
      el("span", { class: "meter-text", text: `${total} / ${usable} tokens` }));
  }

  function sectionBar(sections, usable, id) {
    const bar = el("div", { class: "section-bar", id: id || null });
    const total = SECTION_ORDER.reduce((n, s) => n + (sections[s] || 0), 0);
    const scale = Math.max(total, usable || 0) || 1;
    for (const name of SECTION_ORDER) {
      const tokens = sections[name] || 0;
      if (!tokens) continue;
      bar.append(el("div", { class: `seg seg-${name}`, style: `width:${(100 * tokens) / scale}%`,
        title: `${name}: ${tokens} tokens`, "data-section": name }, el("span", { text: `${name} ${tokens}` })));
    }
    const legend = el("ul", { class: "legend" }, SECTION_ORDER.map((name) =>
      el("li", { class: `seg-${name}` }, `${name}: ${sections[name] || 0}`)));
    return el("div", {}, bar, legend);
  }

  function messageList(messages, id) {
    return el("ol", { class: "messages", id: id || null }, messages.map((m) =>
      el("li", { class: `msg seg-border-${m.section || "x"}`, "data-ref": m.ref || null },
        el("div", { class: "msg-head", text: `${m.section || ""} · ${m.role}${m.name ? " (" + m.name + ")" : ""}` +
          (m.ref ? ` · ${m.ref}` : "") }),
        el("pre", { class: "msg-body", text: (m.content === null || m.content === undefined ? "" : String(m.content)) +
          toolCalls(m.tool_calls) }))));
  }

  function chip(node) {
    const kind = node.kind === "card" ? `card d${node.depth}` : `turn ${node.role || ""}`;
    return el("span", {
      class: `chip ${kind}${node.hot ? " hot" : ""}${node.fresh ? " new" : ""}`, "data-ref": node.ref,
      title: node.kind === "card" ? `${node.ref} depth ${node.depth}, ${span(node.first_seq, node.last_seq)}` : node.ref,
    }, el("b", { text: node.ref }), " ", el("small", { text: `${node.shown_tokens ?? node.tokens}` }));
  }

  // -- the conversation: strip, tree, search ------------------------------------------------------
  function treeNode(node, query) {
    const li = el("li", { class: `node ${node.kind}${node.in_window ? "" : " folded"}`, "data-ref": node.ref });
    const head = el("div", { class: "node-head" });
    if (node.kind === "card") {
      const button = el("button", { class: "toggle", type: "button", "aria-expanded": "false",
        "data-ref": node.ref, text: "+" });
      button.addEventListener("click", () => toggle(li, node, button));
      head.append(button, el("b", { text: node.ref }),
        ` depth ${node.depth} · ${span(node.first_seq, node.last_seq)} · ${timeSpan(node.start_text, node.end_text)}` +
        ` · labels ${labelList(node.labels)} · ${node.tokens} tokens from ${node.source_tokens}` +
        (node.stale ? " · stale" : ""));
      li.append(head, el("div", { class: "node-text", text: node.text }));
    } else {
      head.append(el("b", { text: node.ref }), ` turn ${node.seq} · ${node.role}${node.name ? " (" + node.name + ")" : ""}` +
        ` · ${node.created_text} · labels ${labelList(node.labels)} · ${node.tokens} tokens`);
      const pre = el("pre", { class: "verbatim" });
      highlight(pre, (node.content || "") + toolCalls(node.tool_calls), query);
      li.append(head, pre);
    }
    return li;
  }

  function highlight(target, text, query) {
    target.replaceChildren();
    const words = (query || "").split(/\s+/).filter((w) => w.length > 1)
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    if (!words.length) { target.textContent = text; return; }
    const re = new RegExp(`(${words.join("|")})`, "gi");
    text.split(re).forEach((part, i) => target.append(i % 2 ? el("mark", { text: part }) : part));
  }

  async function toggle(li, node, button) {
    const open = li.querySelector(":scope > ul.children");
    if (open) { open.remove(); button.textContent = "+"; button.setAttribute("aria-expanded", "false"); return open; }
    const data = await api(`/v1/view/conversations/${enc(CONV)}/children/${enc(node.ref)}`);
    const ul = el("ul", { class: "children" }, data.children.map((c) => treeNode(c, state.query)));
    li.append(ul);
    button.textContent = "−";
    button.setAttribute("aria-expanded", "true");
    return ul;
  }

  const state = { query: "" };

  async function openPath(path) {
    let scope = document.getElementById("tree");
    let li = null;
    for (const ref of path) {
      li = scope.querySelector(`:scope > li[data-ref="${ref}"]`);
      if (!li) return null;
      if (ref === path[path.length - 1]) break;
      let ul = li.querySelector(":scope > ul.children");
      if (!ul) {
        const button = li.querySelector(":scope > .node-head > button.toggle");
        ul = await toggle(li, { ref }, button);
      }
      scope = ul;
    }
    return li;
  }

  async function treePage() {
    const data = await api(`/v1/view/conversations/${enc(CONV)}/tree${query(windowParams())}`);
    const conv = data.conversation;
    const searchForm = el("form", { id: "search-form", class: "search" },
      el("input", { id: "search", type: "search", placeholder: "search turns and cards (recall tool)", size: "40" }),
      el("button", { type: "submit", text: "search" }));
    const hitsBox = el("ol", { id: "hits", class: "hits" });
    const tree = el("ul", { id: "tree", class: "tree" }, data.strip.map((n) => treeNode(n, "")));
    render(
      el("p", { class: "facts" }, `namespace ${conv.namespace} · family ${conv.family_id} · labels ${labelList(conv.labels)}` +
        ` · ${data.turns} turns visible · ${data.strip.length} items in the window`),
      windowForm(data.settings, treePage),
      meter(data.total_tokens, data.usable_tokens),
      data.fits ? null : el("p", { class: "error", text: data.error }),
      el("div", { class: "strip", id: "strip" }, data.strip.map(chip)),
      el("h2", { text: "Card tree" }),
      el("p", { class: "note", text: "Top level: the window. + opens a card one level; folded originals are dimmed." }),
      searchForm, hitsBox, tree);
    searchForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const q = document.getElementById("search").value.trim();
      state.query = q;
      document.querySelectorAll("li.node.hit").forEach((n) => n.classList.remove("hit"));
      if (!q) { hitsBox.replaceChildren(); return; }
      try {
        const result = await api(`/v1/view/conversations/${enc(CONV)}/search${query({ q })}`);
        hitsBox.replaceChildren(...result.hits.map((h) => el("li", { "data-ref": h.ref },
          el("b", { text: h.ref }), ` ${span(h.first_seq, h.last_seq)} · ${h.path.join(" › ")} · `, h.snippet)));
        if (!result.hits.length) hitsBox.append(el("li", { text: "no hits" }));
        for (const hit of result.hits) {
          const li = await openPath(hit.path);
          if (li) {
            li.classList.add("hit");
            const pre = li.querySelector(":scope > pre.verbatim");
            if (pre) highlight(pre, pre.textContent, q);
          }
        }
        hitsBox.dataset.done = "1";
      } catch (error) { fail(error); }
    });
  }

  // -- the compiled context and the time slider -----------------------------------------------------
  async function contextPage() {
    const p = windowParams();
    const [tree, now] = await Promise.all([
      api(`/v1/view/conversations/${enc(CONV)}/tree${query(p)}`),
      api(`/v1/view/conversations/${enc(CONV)}/context${query(p)}`)]);
    const last = tree.last_seq;
    const slider = el("input", { id: "slider", type: "range", min: last ? "1" : "0", max: String(last),
      value: String(last), step: "1" });
    const sliderLabel = el("span", { id: "slider-label" });
    const replay = el("div", { id: "replay" });
    const nowBox = el("section", { id: "now" }, el("h2", { text: "Now: the messages of the next model call" }));
    if (now.fits) {
      nowBox.append(meter(now.total_tokens, now.usable_tokens), sectionBar(now.sections, now.usable_tokens, "now-bar"),
        messageList(now.sections_detail.flatMap((s) => s.messages.map((m, i) =>
          Object.assign({ section: s.name, ref: s.refs[i] && s.name !== "protected" && s.name !== "memories" &&
            s.name !== "system_note" ? s.refs[i] : null }, m))), "now-messages"));
    } else {
      nowBox.append(el("p", { class: "error", id: "now-error", text: now.error }));
    }
    render(windowForm(now.settings, contextPage), nowBox,
      el("section", {}, el("h2", { text: "Replay: the context right after turn N" }),
        el("p", { class: "note", text: "Rebuilt from the archive and the fold events of the log." }),
        el("label", {}, "turn ", slider, " ", sliderLabel), replay));
    async function show() {
      const seq = slider.value;
      if (!last) { replay.replaceChildren(el("p", { text: "no turns yet" })); return; }
      const at = await api(`/v1/view/conversations/${enc(CONV)}/at/${seq}${query(p)}`);
      if (String(at.seq) !== slider.value) return;  // a newer move is on its way
      sliderLabel.textContent = `${at.seq} / ${last} (${at.at_text})` + (at.next && at.next.role === "assistant" ?
        ` · the model call that wrote ${at.next.ref} read this context` : "");
      replay.replaceChildren(meter(at.total_tokens, at.usable_tokens),
        el("div", { class: "strip", id: "replay-strip" }, at.items.map(chip)),
        sectionBar(at.sections, at.usable_tokens, "replay-bar"), messageList(at.messages, "replay-messages"));
      replay.dataset.seq = String(at.seq);
    }
    slider.addEventListener("input", () => show().catch(fail));
    await show();
  }

  // -- memories ------------------------------------------------------------------------------------
  function table(id, headers, rows) {
    return el("table", { id }, el("thead", {}, el("tr", {}, headers.map((h) => el("th", { text: h })))),
      el("tbody", {}, rows.map((r) => el("tr", { class: r.cls || null }, r.cells.map((c) =>
        el("td", {}, c instanceof Node ? c : String(c ?? "")))))));
  }
  const f3 = (x) => (typeof x === "number" ? x.toFixed(3) : x);

  function sourceList(sources) {
    return el("ul", {}, (sources || []).map((s) => el("li", { class: "source", "data-ref": s.ref },
      s.kind === "turn" ? `${s.ref} (${s.conversation_id} turn ${s.seq}, ${s.role}): ${s.content}` :
        s.kind === "record" ? `${s.ref} (${s.type}, ${s.status}): ${s.content}` : s.ref,
      s.sources && s.sources.length ? sourceList(s.sources) : null)));
  }

  async function memoriesPage() {
    const ns = urlParams.get("namespace") || body.dataset.namespace || "";
    const at = urlParams.get("at") || "";
    const [who, names] = await Promise.all([api("/v1/view/whoami"), api("/v1/view/namespaces")]);
    const select = el("select", { name: "namespace", id: "namespace" }, el("option", { value: "", text: "all namespaces" }),
      names.namespaces.map((n) => el("option", { value: n, text: n, selected: n === ns })));
    const time = el("input", { name: "at", id: "at", type: "number", step: "any", value: at || who.now });
    const reader = el("input", { name: "reader", type: "text", value: urlParams.get("reader") || "", size: "12",
      placeholder: "the viewer's" });
    const form = el("form", { class: "window-form", id: "memories-form" }, el("label", {}, "namespace ", select),
      el("label", {}, " score at time ", time), el("label", {}, " reader ", reader),
      el("button", { type: "submit", text: "show" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      urlParams.set("namespace", select.value);
      urlParams.set("at", time.value);
      if (reader.value.trim()) urlParams.set("reader", reader.value.trim()); else urlParams.delete("reader");
      history.replaceState(null, "", location.pathname + "?" + urlParams.toString());
      memoriesPage().then(showReader).catch(fail);
    });
    const q = { namespace: ns };
    const [mem, chains, runs, prot] = await Promise.all([
      api(`/v1/view/memories${query({ namespace: ns, at })}`), api(`/v1/view/chains${query(q)}`),
      api(`/v1/view/runs${query(q)}`), api(`/v1/view/protected${query(q)}`)]);
    const rec = (r) => `#${r.id} ${r.content}`;
    render(form,
      el("h2", { text: `Typed stores at ${mem.at_text}` }),
      el("p", { class: "note", text: "score = importance × recency × access; recency = 0.5^((time − written) / half-life), " +
        "access = 1 + weight × reads (reads are not logged: the current count)." }),
      table("records", ["id", "namespace", "type", "key", "content", "status then", "importance", "recency", "access",
        "score", "labels"], mem.records.map((r) => ({ cls: r.status === "active" ? null : "inactive", cells: [
        r.record.id, r.record.namespace, r.record.type, r.record.key, r.record.content, r.status, f3(r.importance),
        f3(r.recency), f3(r.access), f3(r.score), labelList(r.record.labels)] }))),
      el("h2", { text: "Supersession chains (retired → active)" }),
      el("ul", { id: "chains" }, chains.chains.map((chain) => el("li", {}, chain.map((r, i) =>
        el("span", { class: r.status === "active" ? "active" : "inactive" }, (i ? " → " : "") + rec(r) + ` [${r.status}]`))))),
      chains.chains.length ? null : el("p", { class: "note", text: "no supersessions" }),
      el("h2", { text: "Evictions" }),
      table("evictions", ["record", "at", "score then", "capacity", "content"], chains.evictions.map((e) => ({ cells: [
        `#${e.record.id}`, e.event.at, f3(e.event.details.score), e.event.details.capacity, e.record.content] }))),
      el("h2", { text: "Consolidation runs" }),
      el("ol", { id: "runs" }, runs.runs.map((run) => el("li", {},
        `run #${run.id} ${run.namespace} · ${run.trigger} · ${run.status} · ${run.episodes_consumed} episodes, ` +
        `${run.turns_consumed} turns consumed · ${run.facts_written} facts, ${run.rules_written} rules`,
        el("ul", {}, run.products.map((p) => el("li", { class: "product" }, `${p.record.type} #${p.record.id} ` +
          `${p.record.key || ""}: ${p.record.content} [${p.record.status}]`,
          sourceList(p.sources))))))),
      el("h2", { text: "Protected channel" }),
      table("protected", ["id", "kind", "text", "state", "due", "labels", "history"], prot.records.map((r) => ({
        cls: r.state === "active" ? null : "inactive", cells: [`P${r.id}`, r.kind, r.text, r.state, r.due_at ?? "",
          labelList(r.labels), r.history.map((h) => `${h.kind} @${h.at}${h.cause ? " (" + h.cause + ")" : ""}`).join(" → ")] }))));
  }

  // -- the growth demo -----------------------------------------------------------------------------
  async function growthPage() {
    const data = await api(`/v1/view/conversations/${enc(CONV)}/growth${query(windowParams())}`);
    const frames = data.frames;
    const stepper = el("input", { id: "step", type: "range", min: "1", max: String(frames.length || 1), value: "1" });
    const label = el("span", { id: "step-label" });
    const play = el("button", { id: "play", type: "button", text: "play" });
    const stage = el("div", { id: "stage" });
    let timer = null;
    function cardTree(ref, depth, inWindow) {
      const card = data.cards[ref];
      const turn = data.turns[ref];
      if (turn) return el("li", { class: `node turn${inWindow ? "" : " folded"}`, "data-ref": ref },
        el("b", { text: ref }), ` ${turn.role}${turn.name ? "(" + turn.name + ")" : ""}: `,
        turn.content || "", turn.tool_calls ? toolCalls(turn.tool_calls) : "");
      if (!card) return el("li", { class: "node folded", "data-ref": ref, text: ref });
      return el("li", { class: `node card${inWindow ? "" : " folded"}`, "data-ref": ref },
        el("b", { text: ref }), ` depth ${card.depth}: ${card.text}`,
        el("ul", { class: "children" }, card.covers.map((c) => cardTree(c, depth + 1, false))));
    }
    function frameAt(i) {
      const frame = frames[i];
      if (!frame) { stage.replaceChildren(el("p", { text: "no turns" })); return; }
      const fresh = new Set(frame.new_cards);
      label.textContent = `turn ${frame.seq} / ${frames.length} (${frame.at_text})` +
        (frame.new_cards.length ? ` · folded into ${frame.new_cards.join(", ")}` : "");
      stage.replaceChildren(meter(frame.total_tokens, frame.usable_tokens),
        el("div", { class: "strip", id: "growth-strip" }, frame.items.map((n) =>
          chip(Object.assign({}, n, { fresh: fresh.has(n.ref) })))),
        sectionBar(frame.sections, frame.usable_tokens, "growth-bar"),
        el("ul", { class: "tree", id: "growth-tree" }, frame.items.map((n) => cardTree(n.ref, 0, true))));
      stage.dataset.seq = String(frame.seq);
    }
    stepper.addEventListener("input", () => frameAt(Number(stepper.value) - 1));
    play.addEventListener("click", () => {
      if (timer) { clearInterval(timer); timer = null; play.textContent = "play"; return; }
      if (Number(stepper.value) >= frames.length) stepper.value = "1";
      play.textContent = "pause";
      frameAt(Number(stepper.value) - 1);
      timer = setInterval(() => {
        if (Number(stepper.value) >= frames.length) { clearInterval(timer); timer = null; play.textContent = "play"; return; }
        stepper.value = String(Number(stepper.value) + 1);
        frameAt(Number(stepper.value) - 1);
      }, Number(urlParams.get("speed") || 700));
    });
    render(windowForm(data.settings, growthPage),
      el("p", {}, play, " ", stepper, " ", label), stage);
    frameAt(0);
  }

  // -- the index -----------------------------------------------------------------------------------
  async function indexPage() {
    const [convs, names] = await Promise.all([api("/v1/conversations"), api("/v1/view/namespaces")]);
    render(
      table("conversations", ["conversation", "namespace", "family", "labels", "views"], convs.conversations.map((c) => ({
        cells: [el("a", { href: `/conversation/${enc(c.id)}`, text: c.id }), c.namespace, c.family_id, labelList(c.labels),
          el("span", {}, el("a", { href: `/conversation/${enc(c.id)}/context`, text: "context" }), " · ",
            el("a", { href: `/conversation/${enc(c.id)}/growth`, text: "growth" }))] }))),
      el("h2", { text: "Memories by namespace" }),
      el("ul", { id: "namespaces" }, names.namespaces.map((n) =>
        el("li", {}, el("a", { href: `/memories?namespace=${enc(n)}`, text: n })))));
  }

  async function showReader() {
    const who = await api("/v1/view/whoami");
    document.getElementById("who").textContent =
      `reading as ${who.reader === null ? "the owner (every label)" : "labels: " + labelList(who.reader)}` +
      (who.key ? ` · key ${who.key}` : "") + (who.read_only ? " · read-only" : "");
  }

  async function start() {
    try {
      await showReader();
      const pages = { index: indexPage, tree: treePage, context: contextPage, memories: memoriesPage, growth: growthPage };
      await pages[PAGE]();
      showReader();
      body.dataset.ready = "1";
    } catch (error) { fail(error); }
  }
  start();
})();
