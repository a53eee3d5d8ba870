"""LoCoMo recall ideas, each measured alone and together with leave-one-conversation-out CV (issue 18 point 7).

A numpy re-implementation of the search's ranking (in-conversation BM25 with prefixes and stop
words, all-MiniLM-L6-v2 cosine, neighbour support, linear fusion; ``cand=100`` mimics the
library's candidate depth) over the six dev conversations, fast enough to try many settings: each
idea's weights are chosen per fold on the other five conversations by recall@10, and the held-out
figure (``LOO``) is printed beside the in-sample best (``in``) for recall@1/5/10. The ideas that
raised the LOO figure are built into the library (memfold.memory.recall_priors) and measured
end to end by ``bench/locomo_recall.py``; this script is the record of every one tried.

Turn and question vectors are computed once and cached in ``--cache`` (about 1-2 minutes); the
round-6 rows (``r6_*``: which text a turn and a question are embedded as, and what was tried on
top) add vectors of other text forms to the same cache (``locomo-ideas-extra.pkl``, about 3 minutes);
the round-7 rows (``r7_*``: learned fusion, session features, Rocchio and PRF from the first
ranking, a length prior) use the same vectors (``r7_learned`` needs scikit-learn and scipy); so do
the round-8 rows (``r8_*``: a time prior for "when" questions, dates shifted by a turn's time words,
a second vector per turn with its previous one, query tokenisation variants).
Run: ``python bench/locomo_ideas.py [--mode hybrid|bm25] [--only NAME ...] [--cache DIR]``.
LoCoMo is CC BY-NC 4.0: evaluation only, never shipped.
"""
import argparse, itertools, math, os, pickle, re, sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from memfold.memory.search import STOP_WORDS, index_tokens, query_tokens  # noqa: E402
from memfold.memory import search as _search  # noqa: E402
from memfold.memory.query_analysis import asks_when, mentions_time, relative_windows  # noqa: E402


def prepare(cache: Path, data: Path) -> list:
    """Per conversation: texts (``speaker: text``), texts without the speaker label, speakers,
    session numbers and times, questions with evidence, and both sets of vectors (cached)."""
    path = cache / "locomo-ideas.pkl"
    if path.exists():
        return pickle.load(open(path, "rb"))
    import json
    from locomo_recall import CATEGORIES, normalize_evidence, session_turns, turn_text
    from memfold.memory.embeddings import make_embedder
    emb = make_embedder("default")
    convs = []
    for s in json.loads(data.read_text()):
        c = s["conversation"]
        pairs = session_turns(c)
        texts = [turn_text(t) for _, t in pairs]
        bare = [t.get("text", "") + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else "") for _, t in pairs]
        dias = [t["dia_id"] for _, t in pairs]
        valid = set(dias)
        qs = []
        for qa in s["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            ev = normalize_evidence(qa.get("evidence"), valid)
            if ev:
                qs.append(dict(q=str(qa["question"]), ev=ev, cat=qa["category"]))
        convs.append(dict(sid=s["sample_id"], texts=texts, texts_np=bare, dias=dias,
                          sess=[int(d.split(":")[0][1:]) for d in dias], times=[w.timestamp() for w, _ in pairs],
                          speakers=[t["speaker"] for _, t in pairs], spk=(c["speaker_a"], c["speaker_b"]), qs=qs,
                          tv=np.asarray(emb.embed_batch(texts)), tv_np=np.asarray(emb.embed_batch(bare)),
                          qv=np.asarray(emb.embed_batch([q["q"] for q in qs]))))
        print(f"  {s['sample_id']}: {len(texts)} turns embedded", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    pickle.dump(convs, open(path, "wb"))
    return convs



def strip_names(text: str, names) -> str:
    """``text`` without the speakers' names (and their possessive ``'s``)."""
    for n in names:
        text = re.sub(r"\b" + re.escape(n) + r"('s)?\b", "", text)
    return " ".join(text.split())


def prepare_extra(cache: Path, convs: list) -> list:
    """Round 6's extra vectors per conversation (cached): ``qv_nn``, the questions without the
    speakers' names; ``tv_ctx``, each turn with the previous one before it (no labels)."""
    path = cache / "locomo-ideas-extra.pkl"
    if path.exists():
        return pickle.load(open(path, "rb"))
    from memfold.memory.embeddings import make_embedder
    emb = make_embedder("default")
    out = []
    for c in convs:
        bare = c["texts_np"]
        ctx = [(bare[i - 1] + " " if i else "") + bare[i] for i in range(len(bare))]
        out.append(dict(qv_nn=np.asarray(emb.embed_batch([strip_names(q["q"], c["spk"]) for q in c["qs"]])),
                        tv_ctx=np.asarray(emb.embed_batch(ctx))))
        print(f"  {c['sid']}: extra vectors", file=sys.stderr)
    pickle.dump(out, open(path, "wb"))
    return out


def add_content_questions(cache: Path, convs: list, extra: list) -> None:
    """``qv_cw`` per conversation (cached beside the extra vectors): the questions without the
    speakers' names and without stop words (only their content words)."""
    if all("qv_cw" in e for e in extra):
        return
    from memfold.memory.embeddings import make_embedder
    emb = make_embedder("default")
    for c, e in zip(convs, extra):
        qs = [" ".join(w for w in strip_names(q["q"], c["spk"]).split() if w.lower().strip("?,.!") not in STOP_WORDS)
              or q["q"] for q in c["qs"]]
        e["qv_cw"] = np.asarray(emb.embed_batch(qs))
    pickle.dump(extra, open(cache / "locomo-ideas-extra.pkl", "wb"))

convs: list = []

class C:
    def __init__(s, cv):
        s.__dict__.update(cv)
        s.toks = [Counter(index_tokens(t)) for t in s.texts]
        s.len = np.array([sum(c.values()) for c in s.toks], float)
        s.vocab = set().union(*s.toks)
        s.N = len(s.texts)
        s.dix = {d: i for i, d in enumerate(s.dias)}
        s._tf = {}
        s.sess = np.array(s.sess); s.times = np.array(s.times)
        s.spk_arr = np.array(s.speakers)
    def tf(s, tok, prefix=True):
        key = (tok, prefix)
        if key not in s._tf:  # "a|b": either (round 8's tokenisation rows; index tokens never hold "|")
            alts = tok.split("|")
            words = [w for w in s.vocab if any(w.startswith(a) for a in alts)] if prefix else alts
            s._tf[key] = np.array([sum(c.get(w, 0) for w in words) for c in s.toks], float)
        return s._tf[key]
CS: list = []

def bm25(c, toks, k1=1.2, b=0.75, weights=None):
    tot = np.zeros(c.N); avg = c.len.mean()
    for j, (t, p) in enumerate(toks):
        tf = c.tf(t, p); df = (tf > 0).sum()
        if not df: continue
        idf = math.log((c.N - df + 0.5) / (df + 0.5)); idf = idf if idf > 0 else 1e-6
        w = 1.0 if weights is None else weights[j]
        tot += w * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * c.len / avg))
    return tot

def nb(x, w, wn=None):
    wn = w if wn is None else wn
    out = x.copy()
    out[1:] += w * x[:-1]   # previous turn's signal
    out[:-1] += wn * x[1:]  # next turn's signal
    return out

def rank_scores(score, ok):
    s = np.where(ok, score, -np.inf)
    order = np.lexsort((np.arange(len(s)), -s))
    return [i for i in order[:20] if np.isfinite(s[i])]

def recall(c, q, ranked, ks=(1, 5, 10)):
    ev = set(c.dix[d] for d in q['ev'])
    return {k: len(ev & set(ranked[:k])) / len(ev) for k in ks}

def evaluate(fn, grid):
    """fn(c, q, qi, cfg) -> ranked list. returns per-question rows: list of (conv idx, {cfg: recall})"""
    rows = []
    for ci, c in enumerate(CS):
        for qi, q in enumerate(c.qs):
            rows.append((ci, {cfg: recall(c, q, fn(c, q, qi, cfg)) for cfg in grid}))
    return rows

def cv(rows, grid):
    n = len(rows); held = {1: 0, 5: 0, 10: 0}; chosen = []
    for ci in range(len(CS)):
        train = [r for s, r in rows if s != ci]
        best = max(grid, key=lambda g: (sum(r[g][10] for r in train), -grid.index(g)))
        chosen.append(best)
        for s, r in rows:
            if s == ci:
                for k in held: held[k] += r[best][k]
    ins = max(grid, key=lambda g: sum(r[g][10] for _, r in rows))
    insv = {k: sum(r[ins][k] for _, r in rows) / n for k in (1, 5, 10)}
    return {k: round(v / n, 4) for k, v in held.items()}, {k: round(v, 4) for k, v in insv.items()}, ins, chosen

MONTHS = {m: i+1 for i, m in enumerate('january february march april may june july august september october november december'.split())}
MON = '(' + '|'.join(MONTHS) + ')'
def parse_dates(q):
    """-> list of (start_ts, end_ts) windows named in the question"""
    s = q.lower(); out = []
    for m in re.finditer(rf'\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{MON},?\s*(\d{{4}})', s):
        d = datetime(int(m.group(3)), MONTHS[m.group(2)], int(m.group(1)), tzinfo=timezone.utc).timestamp(); out.append((d, d+86400))
    for m in re.finditer(rf'\b{MON}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s*(\d{{4}})', s):
        d = datetime(int(m.group(3)), MONTHS[m.group(1)], int(m.group(2)), tzinfo=timezone.utc).timestamp(); out.append((d, d+86400))
    if not out:
        for m in re.finditer(rf'\b{MON},?\s+(\d{{4}})', s):
            y, mo = int(m.group(2)), MONTHS[m.group(1)]
            a = datetime(y, mo, 1, tzinfo=timezone.utc).timestamp()
            b = datetime(y + (mo == 12), mo % 12 + 1, 1, tzinfo=timezone.utc).timestamp(); out.append((a, b))
    if not out:
        for m in re.finditer(r'\b(?:in|during|of)\s+(20\d\d)\b', s):
            y = int(m.group(1)); out.append((datetime(y,1,1,tzinfo=timezone.utc).timestamp(), datetime(y+1,1,1,tzinfo=timezone.utc).timestamp()))
    return out
def date_prox(c, wins, tau_days):
    """1 inside a window, decaying exp(-distance/tau) outside"""
    best = np.zeros(c.N)
    for a, b in wins:
        dist = np.maximum(0, np.maximum(a - c.times, c.times - b)) / 86400.0
        best = np.maximum(best, np.exp(-dist / tau_days))
    return best
_raw = {}
def raw_bm25(c, ci, qi, toks, k1=1.2, b=0.75, tag=''):
    key = (ci, qi, k1, b, tag)
    if key not in _raw: _raw[key] = bm25(c, toks, k1, b)
    return _raw[key]
def fused(c, ci, qi, q, *, bw=0.4, nw=0.3, mode='hybrid', k1=1.2, b=0.75, date_w=0.0, tau=3.0, spk_w=0.0,
          sess_w=0.0, sess_agg='max', nwn=None, drop_names=False, when_w=0.0):
    toks = query_tokens(q['q'])
    tag = ''
    if drop_names:
        names = {n.lower() for n in c.spk}
        t2 = [t for t in toks if t[0] not in names]
        if t2: toks = t2; tag = 'dn'
    raw = raw_bm25(c, ci, qi, toks, k1, b, tag); mx = raw.max() or 1.0
    bn = nb(raw, nw, nwn) / mx
    if mode == 'bm25':
        s, ok = bn, raw > 0
    else:
        cos = c.tv @ c.qv[qi]
        s = bw * bn + (1 - bw) * nb(cos, nw, nwn); ok = (raw > 0) | (cos >= 0.2)
    if date_w:
        wins = parse_dates(q['q'])
        if wins:
            s = s + date_w * date_prox(c, wins, tau) * (s.max() if s.max() > 0 else 1)
    if spk_w:
        ql = q['q'].lower(); named = [n for n in c.spk if n.lower() in ql]
        if len(named) == 1:
            s = s + spk_w * (c.spk_arr == named[0]) * s.max()
    if sess_w:
        sess_s = np.zeros(c.N)
        for sv in np.unique(c.sess):
            m = c.sess == sv
            sess_s[m] = s[m].max() if sess_agg == 'max' else np.sort(s[m])[-3:].mean()
        s = s + sess_w * sess_s
    return s, ok
def _grid_rows(fn, grid, fixed):
    """Recall of every question under each setting of ``grid`` (dicts of ``fn``'s parameters, over
    ``fixed``): ``(keys, [(conversation index, {key: recall})])``, the rows :func:`cv` reads."""
    keys = [tuple(sorted(g.items())) for g in grid]
    rows = []
    for ci, c in enumerate(CS):
        for qi, q in enumerate(c.qs):
            rows.append((ci, {k: recall(c, q, rank_scores(*fn(c, ci, qi, q, **{**fixed, **g})))
                              for k, g in zip(keys, grid)}))
    return keys, rows


def _run_grid(fn, name, grid, fixed):
    """The grid over ``fn``, cross-validated: prints LOO and in-sample, returns the rows."""
    keys, rows = _grid_rows(fn, grid, fixed)
    held, ins, best, chosen = cv(rows, keys)
    print(f"{name:<28} LOO {held[1]:.3f} {held[5]:.3f} {held[10]:.3f} | in {ins[1]:.3f} {ins[5]:.3f} {ins[10]:.3f} | {dict(best)}", flush=True)
    return rows


def run(name, grid, **fixed):
    """grid: list of dicts of params"""
    return _run_grid(fused, name, grid, fixed)

TEMPORAL = ['yesterday', 'last', 'ago', 'week', 'weekend', 'month', 'year', 'today', 'tomorrow', 'next', 'recent', 'just', 'few', 'since', 'before', 'after']
def bm25_extra(c, ci, qi, q, *, prf_w=0.0, prf_m=5, prf_e=10, when_w=0.0, k1=1.2, b=0.75, base_raw=None):
    """extra BM25 signal: PRF terms and 'when' temporal words"""
    extra = np.zeros(c.N)
    if when_w and q['q'].lower().startswith('when'):
        key = (ci, qi, 'when', k1, b)
        if key not in _raw: _raw[key] = bm25(c, [(t, False) for t in TEMPORAL], k1, b)
        extra += when_w * _raw[key]
    if prf_w:
        key = (ci, qi, 'prf', prf_m, prf_e, k1, b)
        if key not in _raw:
            qt = {t for t, _ in query_tokens(q['q'])}
            top = np.argsort(-base_raw)[:prf_m]
            w = Counter()
            for i in top:
                if base_raw[i] <= 0: continue
                L = c.len[i] or 1
                for t, n in c.toks[i].items():
                    if t in STOP_WORDS or t in qt or len(t) < 3 or t in {x.lower() for x in c.spk}: continue
                    w[t] += base_raw[i] * n / L
            terms = [t for t, _ in w.most_common(prf_e)]
            tw = [w[t] for t in terms]; mxw = max(tw) if tw else 1
            _raw[key] = bm25(c, [(t, False) for t in terms], k1, b, [x / mxw for x in tw]) if terms else np.zeros(c.N)
        extra += prf_w * _raw[key]
    return extra

def fused2(c, ci, qi, q, *, bw=0.4, nw=0.3, mode='hybrid', k1=1.2, b=0.75, date_w=0.0, tau=10.0, spk_w=0.0,
           sess_w=0.0, prf_w=0.0, prf_m=5, prf_e=10, when_w=0.0, cand=None, nw2=0.0, len_w=0.0, len_form="cap",
           extra=None, extra_top=None):
    toks = query_tokens(q['q'])
    raw = raw_bm25(c, ci, qi, toks, k1, b, '')
    if prf_w or when_w:
        raw = raw + bm25_extra(c, ci, qi, q, prf_w=prf_w, prf_m=prf_m, prf_e=prf_e, when_w=when_w, k1=k1, b=b, base_raw=raw)
    mx = raw.max() or 1.0
    def nb2(x):
        o = nb(x, nw)
        if nw2:
            o[2:] += nw2 * x[:-2]; o[:-2] += nw2 * x[2:]
        return o
    bn = nb2(raw) / mx
    if mode == 'bm25':
        s, ok = bn, raw > 0
    else:
        cos = c.tv @ c.qv[qi]
        s = bw * bn + (1 - bw) * nb2(cos); ok = (raw > 0) | (cos >= 0.2)
    if cand:  # library: only the top `cand` of each ranker and their neighbours are scored
        m = np.zeros(c.N, bool); m[np.argsort(-raw)[:cand]] = raw[np.argsort(-raw)[:cand]] > 0
        if mode != 'bm25': m[np.argsort(-cos)[:cand]] = True
        m2 = m.copy(); m2[1:] |= m[:-1]; m2[:-1] |= m[1:]
        ok = ok & m2
    top = s[ok].max() if ok.any() else 1.0
    if date_w:
        wins = parse_dates(q['q'])
        if wins: s = s + date_w * date_prox(c, wins, tau) * top
    if spk_w:
        ql = q['q'].lower(); named = [n for n in c.spk if re.search(r'\b' + n.lower() + r'\b', ql)]
        if len(named) == 1: s = s + spk_w * (c.spk_arr == named[0]) * top
    if len_w:
        s = s + len_w * top * length_prior(c.len, len_form)
    if extra is not None:  # round 8: a prior of its own per turn (already weighted), before the session prior
        s = s + top * top_only(c, s, ok, extra, extra_top)
    if sess_w:
        sess_s = np.zeros(c.N); sm = np.where(ok, s, 0)
        for sv in np.unique(c.sess):
            m = c.sess == sv; sess_s[m] = sm[m].max()
        s = s + sess_w * sess_s
    return s, ok

def top_only(c, s, ok, extra, k):
    """``extra`` kept only for the best ``k`` candidates ``ok`` by ``s`` (all of them for ``k`` None):
    the library reads the texts of only those (round 8's time prior)."""
    if not k:
        return extra
    best = np.argsort(-np.where(ok, s, -np.inf), kind="stable")[:k]
    return np.where(np.isin(np.arange(c.N), best) & ok, extra, 0.0)

def run2(name, grid, **fixed):
    return _run_grid(fused2, name, grid, fixed)



# -- round 6 (issue 18 point 7, r6recall): which text is embedded, dense-side options -----------
EXTRA: list = []  # per conversation: extra vectors (``--extra``): qv_nn (questions without the
#                   speakers' names), tv_ctx (previous turn + this one, both without the label)


def vectors(c, ci, tv):
    """The turn vectors of one text form: ``tv`` (``speaker: text``), ``tv_np`` (no label),
    ``tv_ctx`` (previous turn + this one, no label), ``mix`` (mean of tv and tv_np)."""
    if tv == "tv":
        return c.tv
    if tv == "tv_np":
        return c.tv_np
    if tv == "mix":
        return c.tv + c.tv_np
    return EXTRA[ci][tv]


def fused3(c, ci, qi, q, *, tv="tv_np", qv="qv", nwd=None, dnorm=None, **kw):
    """:func:`fused2` with the dense side varied: the turn text form (``tv``), the question's
    (``qv``: ``qv_nn`` without speaker names, ``maxq`` the better of both per turn), a separate
    dense neighbour weight ``nwd``, the cosine rescaled per query (``dnorm``: ``max`` divides by
    the best cosine, ``mm`` maps [median, max] to [0, 1])."""
    T = vectors(c, ci, tv)
    qvec = c.qv[qi] if qv == "qv" else EXTRA[ci]["qv_nn" if qv == "maxq" else qv][qi]
    cos = T @ qvec
    if qv == "maxq":
        cos = np.maximum(T @ c.qv[qi], T @ EXTRA[ci]["qv_nn"][qi])
    if tv == "mix":
        cos = cos / 2
    okcos = cos
    if dnorm == "max":
        cos = cos / (cos.max() or 1.0)
    elif dnorm == "mm":
        med = np.median(cos); cos = (cos - med) / ((cos.max() - med) or 1.0)
    return _fused_cos(c, ci, qi, q, cos, okcos, nwd=nwd, **kw)


def _fused_cos(c, ci, qi, q, cos, okcos, *, bw=0.4, nw=0.3, nwd=None, mode='hybrid', k1=1.2, b=0.75, date_w=0.0,
               tau=10.0, spk_w=0.0, sess_w=0.0, cand=None, name_w=1.0, sess_top=1, raw=None, sess_cos_w=0.0,
               sess_bm_w=0.0, len_w=0.0, len_form="log", bm_depth=None, extra=None, extra_top=None):
    """:func:`fused2` (no PRF) with the cosine given; ``name_w`` weighs the speakers' names among
    the BM25 query words, ``sess_top`` the session prior's mean of its best ``sess_top`` candidates;
    ``raw`` replaces the BM25 scores (round 7's feedback); ``sess_cos_w`` / ``sess_bm_w`` add the
    best cosine / normalised BM25 among a turn's session's candidates (round 7); ``len_w`` a length
    prior (round 7): a turn gains ``len_w`` × the best score × its length's :func:`length_prior`."""
    toks = query_tokens(q['q'])
    if raw is not None:
        pass
    elif name_w != 1.0:
        names = {n.lower() for n in c.spk}
        key = (ci, qi, 'nw', name_w)
        if key not in _raw:
            _raw[key] = bm25(c, toks, k1, b, [name_w if t in names else 1.0 for t, _ in toks])
        raw = _raw[key]
    else:
        raw = raw_bm25(c, ci, qi, toks, k1, b, '')
    if bm_depth:  # the library: a turn past BM25's first bm_depth (HYBRID_BM25_DEPTH x the candidate depth) has no BM25 score
        raw = np.where(np.isin(np.arange(c.N), np.argsort(-raw, kind="stable")[:bm_depth]), raw, 0.0)
    mx = raw.max() or 1.0
    bn = nb(raw, nw) / mx
    s = bw * bn + (1 - bw) * nb(cos, nw if nwd is None else nwd); ok = (raw > 0) | (okcos >= 0.2)
    if cand:
        m = np.zeros(c.N, bool); top_b = np.argsort(-raw)[:cand]; m[top_b] = raw[top_b] > 0
        m[np.argsort(-cos)[:cand]] = True
        m2 = m.copy(); m2[1:] |= m[:-1]; m2[:-1] |= m[1:]
        ok = ok & m2
    top = s[ok].max() if ok.any() else 1.0
    if date_w:
        wins = parse_dates(q['q'])
        if wins: s = s + date_w * date_prox(c, wins, tau) * top
    if spk_w:
        ql = q['q'].lower(); named = [n for n in c.spk if re.search(r'\b' + n.lower() + r'\b', ql)]
        if len(named) == 1: s = s + spk_w * (c.spk_arr == named[0]) * top
    if len_w:
        s = s + len_w * top * length_prior(c.len, len_form)
    if extra is not None:  # round 8: a prior of its own per turn (already weighted), before the session prior
        s = s + top * top_only(c, s, ok, extra, extra_top)
    if sess_w:
        sess_s = np.zeros(c.N); sm = np.where(ok, s, 0)
        for sv in np.unique(c.sess):
            m = c.sess == sv; sess_s[m] = sm[m].max() if sess_top == 1 else np.sort(sm[m])[-sess_top:].mean()
        s = s + sess_w * sess_s
    if sess_cos_w or sess_bm_w:
        s = s + sess_cos_w * session_best(c, cos, ok) + sess_bm_w * session_best(c, raw / mx, ok)
    return s, ok


def length_prior(lengths, form="log"):
    """A turn's length (index tokens) as a prior in about [0, 1]: ``log``, log(1 + len) / log(1 + 64);
    ``rel``, log(len / the conversation's mean length), clipped to [-1, 1]; ``cap``, min(len / 40, 1)."""
    if form == "log":
        return np.log1p(lengths) / math.log1p(64)
    if form == "rel":
        return np.clip(np.log(np.maximum(lengths, 1) / lengths.mean()), -1, 1)
    return np.minimum(lengths / 40.0, 1.0)


def session_best(c, values, ok):
    """Each turn's session's best ``values`` among the candidates ``ok`` (0 for none)."""
    out = np.zeros(c.N); sm = np.where(ok, values, 0)
    for sv in np.unique(c.sess):
        m = c.sess == sv; out[m] = sm[m].max()
    return out


def run3(name, grid, **fixed):
    """:func:`run2` over :func:`fused3`; prints LOO and in-sample, returns the rows."""
    return _run_grid(fused3, name, grid, fixed)

# -- round 7 (issue 18 point 7, r7recall): feedback from the first ranking, learned fusion ---------
def fused7(c, ci, qi, q, *, roc_w=0.0, roc_k=3, roc_norm=False, prf_w=0.0, prf_m=5, prf_e=10, prf_src="fused", **kw):
    """Round 6's ranking (:func:`fused3`, turns without the label, the names-free question) and,
    when ``roc_w`` or ``prf_w`` is set, a second pass fed back from the first one's best turns:
    dense Rocchio (the question vector plus ``roc_w`` × the mean vector of the best ``roc_k``,
    ``roc_norm``: renormalised) and pseudo-relevance feedback (the ``prf_e`` most distinctive words
    of the best ``prf_m`` turns, weighted by tf-idf × the turn's score, added to BM25 with weight
    ``prf_w``; ``prf_src`` "fused": the best turns of the fused ranking, "bm25" of BM25 alone)."""
    s, ok = fused3(c, ci, qi, q, tv="tv_np", qv="qv_nn", **kw)
    if not (roc_w or prf_w):
        return s, ok
    T, qvec = c.tv_np, EXTRA[ci]["qv_nn"][qi]
    first = np.where(ok, s, -np.inf)
    cos = T @ qvec
    if roc_w:
        best = np.argsort(-first)[:roc_k]
        v = qvec + roc_w * T[best].mean(0)
        if roc_norm:
            v = v / (np.linalg.norm(v) or 1.0)
        cos2 = T @ v
    else:
        cos2 = cos
    raw = raw_bm25(c, ci, qi, query_tokens(q['q']), 1.2, 0.75, '')
    if prf_w:
        key = (ci, qi, 'prf7', prf_m, prf_e, prf_src)
        if key not in _raw:
            src = first if prf_src == "fused" else np.where(raw > 0, raw, -np.inf)
            qt = {t for t, _ in query_tokens(q['q'])} | {n.lower() for n in c.spk}
            w = Counter()
            for i in np.argsort(-src)[:prf_m]:
                if not np.isfinite(src[i]):
                    continue
                for t, n in c.toks[i].items():
                    if t in STOP_WORDS or t in qt or len(t) < 3:
                        continue
                    df = (c.tf(t, False) > 0).sum()
                    w[t] += (src[i] / (src.max() or 1)) * n * math.log(c.N / df)
            terms = [t for t, _ in w.most_common(prf_e)]
            mxw = max((w[t] for t in terms), default=1.0)
            _raw[key] = bm25(c, [(t, False) for t in terms], 1.2, 0.75, [w[t] / mxw for t in terms]) if terms else np.zeros(c.N)
        raw = raw + prf_w * _raw[key]
    return _fused_cos(c, ci, qi, q, cos2, cos, raw=raw, **kw)


def run7(name, grid, **fixed):
    """:func:`run3` over :func:`fused7`."""
    return _run_grid(fused7, name, grid, fixed)


#: round 7's per-candidate features for learned fusion (:func:`learned_fusion`)
LF_NAMES = ["bn", "bn_nb", "cos", "cos_nb", "cos_rel", "date", "spk", "sess_best", "sess_cos", "sess_bm", "lrank_bm",
            "lrank_dense", "lrank_fused", "fused", "has_bm", "qcov", "loglen", "img"]
LF_FUSED = ("fused", "lrank_fused", "sess_best")  # the ones that carry the hand-built score


def _ranks(x, ok):
    r = np.full(len(x), 1e4)
    idx = np.flatnonzero(ok)
    r[idx[np.argsort(-x[idx], kind="stable")]] = np.arange(1, len(idx) + 1)
    return r


def lf_rows(bw=0.3, nw=0.3, date_w=0.8, tau=10.0, spk_w=0.3, sess_w=0.4):
    """Per question: the candidates of round 6's ranking (tv_np, qv_nn, cand=100) with the features
    of ``LF_NAMES``, their evidence labels and the hand-built score."""
    out = []
    for ci, c in enumerate(CS):
        names = {n.lower() for n in c.spk}
        for qi, q in enumerate(c.qs):
            cos = c.tv_np @ EXTRA[ci]["qv_nn"][qi]
            toks = query_tokens(q["q"])
            raw = raw_bm25(c, ci, qi, toks, 1.2, 0.75, ""); mx = raw.max() or 1.0
            s, ok = _fused_cos(c, ci, qi, q, cos, cos, bw=bw, nw=nw, date_w=date_w, tau=tau, spk_w=spk_w, sess_w=sess_w, cand=100)
            s0 = bw * nb(raw, nw) / mx + (1 - bw) * nb(cos, nw)
            top = s0[ok].max() if ok.any() else 1.0
            wins = parse_dates(q["q"]); dp = date_prox(c, wins, tau) if wins else np.zeros(c.N)
            named = [n for n in c.spk if re.search(r"\b" + n.lower() + r"\b", q["q"].lower())]
            sp = (c.spk_arr == named[0]).astype(float) if len(named) == 1 else np.zeros(c.N)
            s1 = s0 + date_w * dp * top + spk_w * sp * top
            bn = raw / mx
            qt = [t for t, _ in toks if t not in names]
            cov = sum((c.tf(t, True) > 0).astype(float) for t in qt) / max(len(qt), 1) if qt else np.zeros(c.N)
            F = np.stack([bn, np.r_[0, bn[:-1]] + np.r_[bn[1:], 0], cos, np.r_[0, cos[:-1]] + np.r_[cos[1:], 0],
                          cos - (cos[ok].max() if ok.any() else 1), dp, sp, session_best(c, s1, ok) / top,
                          session_best(c, cos, ok), session_best(c, bn, ok), np.log(_ranks(raw, ok & (raw > 0))),
                          np.log(_ranks(cos, ok)), np.log(_ranks(s, ok)), s / top, (raw > 0).astype(float),
                          cov, np.log1p(c.len), np.array(["[image:" in t for t in c.texts], float)], 1)
            idx = np.flatnonzero(ok); ev = {c.dix[d] for d in q["ev"]}
            out.append(dict(ci=ci, F=F[idx], idx=idx, y=np.array([i in ev for i in idx], float), ev=ev, base=s[idx]))
    return out


def _lf_recall(rows, scores):
    out = {1: 0.0, 5: 0.0, 10: 0.0}
    for r, sc in zip(rows, scores):
        top = [r["idx"][i] for i in np.lexsort((r["idx"], -sc))[:10]]
        for k in out:
            out[k] += len(r["ev"] & set(top[:k])) / len(r["ev"])
    return out


def _lf_fit(train, cols, model, l2):
    """A scorer fit on ``train``: ``point`` logistic regression per candidate (scikit-learn),
    ``list`` a linear softmax over each question's candidates (the evidence as the target
    distribution, L2 ``l2`` × 1e-3), ``gbdt`` gradient-boosted trees (depth 3, 200 rounds)."""
    X = np.vstack([r["F"][:, cols] for r in train]); y = np.concatenate([r["y"] for r in train])
    mu, sd = X.mean(0), X.std(0) + 1e-9
    if model == "point":
        from sklearn.linear_model import LogisticRegression
        m = LogisticRegression(C=1.0, max_iter=2000).fit((X - mu) / sd, y)
        return lambda r: m.decision_function((r["F"][:, cols] - mu) / sd)
    if model == "gbdt":
        from sklearn.ensemble import HistGradientBoostingClassifier
        m = HistGradientBoostingClassifier(max_depth=3, max_iter=200, learning_rate=0.05).fit(X, y)
        return lambda r: m.decision_function(r["F"][:, cols])
    from scipy.optimize import minimize
    data = [((r["F"][:, cols] - mu) / sd, r["y"] / r["y"].sum()) for r in train if r["y"].sum() > 0]

    def loss(w):
        total, grad = 0.0, np.zeros_like(w)
        for Xq, yq in data:
            z = Xq @ w; z = z - z.max(); p = np.exp(z); p /= p.sum()
            total -= (yq * np.log(p + 1e-300)).sum(); grad -= Xq.T @ (yq - p)
        return total / len(data) + l2 * 1e-3 * (w @ w) / 2, grad / len(data) + l2 * 1e-3 * w
    w = minimize(loss, np.zeros(len(cols)), jac=True, method="L-BFGS-B").x
    return lambda r: ((r["F"][:, cols] - mu) / sd) @ w


def learned_fusion():
    """Round 7, idea 1: fusion learned per fold on the other five conversations. "strict" builds
    the hand-built score among the features with the priors' weights chosen per fold (as
    ``r6_qnn_grid`` does), "defaults" with the defaults; "no fused" leaves it out."""
    grid = P(bw=(0.3, 0.4, 0.5), nw=(0.3, 0.45), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6))
    rows = run3("priors per fold (r6_qnn_grid)", grid, qv="qv_nn", cand=100)
    chosen = cv(rows, [tuple(sorted(g.items())) for g in grid])[3]
    built = {}

    def rows_of(cfg):
        key = tuple(sorted(cfg.items()))
        if key not in built:
            built[key] = lf_rows(**cfg)
        return built[key]
    default = dict(bw=0.3, nw=0.3, date_w=0.8, tau=10.0, spk_w=0.3, sess_w=0.4)
    everything = list(range(len(LF_NAMES)))
    base = [i for i, n in enumerate(LF_NAMES) if n not in ("qcov", "loglen", "img")]
    no_fused = [i for i in everything if LF_NAMES[i] not in LF_FUSED]
    for name, cols, model, l2, strict in [
            ("pointwise LR, 15 features", base, "point", 0, False),
            ("GBDT, 15 features", base, "gbdt", 0, False),
            ("listwise, 15 features, l2 10", base, "list", 10.0, True),
            ("listwise, 15 features, l2 30", base, "list", 30.0, True),
            ("listwise, 15 features, l2 100", base, "list", 100.0, True),
            ("listwise, 15 features, l2 30, defaults", base, "list", 30.0, False),
            ("listwise, 18 features, l2 30", everything, "list", 30.0, True),
            ("listwise, no fused score, l2 30", no_fused, "list", 30.0, False)]:
        held, n = {1: 0.0, 5: 0.0, 10: 0.0}, 0
        for ci in range(len(CS)):
            rs = rows_of({**default, **dict(chosen[ci])} if strict else default)
            score = _lf_fit([r for r in rs if r["ci"] != ci], cols, model, l2)
            test = [r for r in rs if r["ci"] == ci]; n += len(test)
            for k, v in _lf_recall(test, [score(r) for r in test]).items():
                held[k] += v
        rs = rows_of(default); score = _lf_fit(rs, cols, model, l2)
        ins = _lf_recall(rs, [score(r) for r in rs])
        print(f"{name + (' (strict)' if strict else ''):<28} LOO {held[1] / n:.3f} {held[5] / n:.3f} {held[10] / n:.3f} | "
              f"in {ins[1] / n:.3f} {ins[5] / n:.3f} {ins[10] / n:.3f}", flush=True)


# -- round 8 (issue 18 point 7, r8recall): time words, dates shifted by them, tokenisation, neighbour vectors
def time_flags(c):
    """Per turn, 1 when its text says a time word (the library's :func:`mentions_time`)."""
    if getattr(c, "_time", None) is None:
        c._time = np.array([mentions_time(t) for t in c.texts_np], float)
    return c._time


def shifted_prox(c, wins, tau):
    """Per turn saying a time word, how close the time it names ("yesterday" -> the day before its
    session, "two weeks ago"; :func:`relative_windows` from the turn's time) is to the question's
    date windows (``exp(-days / tau)``); 0 for a turn naming none."""
    if getattr(c, "_shift", None) is None:
        c._shift = [relative_windows(t, float(w)) if f else [] for t, w, f in zip(c.texts_np, c.times, time_flags(c))]
    out = np.zeros(c.N)
    for i, ws in enumerate(c._shift):
        for a, b in ws:
            mid = (a + b) / 2
            for qa, qb in wins:
                out[i] = max(out[i], math.exp(-max(0.0, qa - mid, mid - qb) / 86400.0 / tau))
    return out


def r8_extra(c, q, time_w, shift_w, tau):
    """Round 8's extra prior: ``time_w`` for a turn saying a time word when the question asks when
    (:func:`asks_when`), ``shift_w`` × :func:`shifted_prox` when the question names a date."""
    extra = np.zeros(c.N)
    if time_w and asks_when(q["q"]):
        extra += time_w * time_flags(c)
    if shift_w:
        wins = parse_dates(q["q"])
        if wins:
            extra += shift_w * shifted_prox(c, wins, tau)
    return extra if extra.any() else None


def fused8(c, ci, qi, q, *, time_w=0.0, shift_w=0.0, ctx_a=0.0, extra_top=30, **kw):
    """Round 7's hybrid ranking (:func:`fused7` without feedback: turns without the label, the
    names-free question) plus :func:`r8_extra` for the best ``extra_top`` candidates (the library
    reads only their texts); ``ctx_a``: the cosine is max(the turn's, the previous turn + the
    turn's (``tv_ctx``) - ``ctx_a``), a second vector per turn."""
    qvec = EXTRA[ci]["qv_nn"][qi]
    cos = c.tv_np @ qvec
    if ctx_a:
        cos = np.maximum(cos, EXTRA[ci]["tv_ctx"] @ qvec - ctx_a)
    extra = r8_extra(c, q, time_w, shift_w, kw.get("tau", 10.0))
    return _fused_cos(c, ci, qi, q, cos, cos, extra=extra, extra_top=extra_top, **kw)


def fused8_bm25(c, ci, qi, q, *, time_w=0.0, shift_w=0.0, extra_top=30, **kw):
    """:func:`fused2` in BM25 mode plus :func:`r8_extra`."""
    return fused2(c, ci, qi, q, mode="bm25", extra=r8_extra(c, q, time_w, shift_w, kw.get("tau", 10.0)),
                  extra_top=extra_top, **kw)


def run8(name, grid, fn=fused8, base=None, **fixed):
    """:func:`run3` over ``fn``; with ``base`` (a dict), also the same CV over the settings of the
    grid that hold ``base`` (the figure without the idea, on the same grid)."""
    keys, rows = _grid_rows(fn, grid, fixed)
    out = [(name, cv(rows, keys))]
    if base:
        out.append(("... the same grid without it", cv(rows, [k for k in keys if all(dict(k)[a] == v for a, v in base.items())])))
    for label, (held, ins, best, chosen) in out:
        print(f"{label:<28} LOO {held[1]:.3f} {held[5]:.3f} {held[10]:.3f} | in {ins[1]:.3f} {ins[5]:.3f} {ins[10]:.3f} | "
              f"{dict(best)}; chosen per fold: {sorted(Counter(tuple(sorted(dict(x).items())) for x in chosen).items(), key=lambda kv: -kv[1])[:2]}",
              flush=True)
    return rows


def tokenisation(variant, base=query_tokens):
    """The query's BM25 words with one of round 8's tokenisation changes: ``plural4`` strips the
    ``s`` of a four-letter plural (dogs -> dog), ``ies`` matches a word in ``-ies`` by its ``-y``
    form too (hobbies -> hobby), ``ed`` a word in ``-ed`` that light_stem keeps by its root too
    (loved -> love, hiked -> hike)."""
    def tokens(text):
        out = []
        for t, p in base(text):
            if "plural4" in variant and len(t) == 4 and t.endswith("s") and not t.endswith("ss"):
                t = t[:-1]
            out.append((t, p))
        fix = {}
        for w in _search.literal_terms(text):
            st = _search.light_stem(w)
            if "ies" in variant and w.endswith("ies") and len(w) > 5:
                fix[st] = w[:-3] + "y|" + st
            if "ed" in variant and w.endswith("ed") and st == w and len(w) >= 5:
                fix[st] = w[:-1] + "|" + w[:-2] + "i|" + w
        return list(dict.fromkeys((fix.get(t, t), p) for t, p in out))
    return tokens


def r8_tok():
    """Round 8's tokenisation variants, hybrid (time prior on) and BM25 alone."""
    global query_tokens
    original = query_tokens
    try:
        for variant in ((), ("plural4",), ("ies",), ("ed",), ("plural4", "ies", "ed")):
            query_tokens = tokenisation(variant) if variant else original
            _raw.clear()
            for c in CS:
                c._tf = {}
            run8(f"tokens {'+'.join(variant) or 'as built'}", P(bw=(0.3, 0.4), nw=(0.3, 0.45)), time_w=0.1, cand=100,
                 len_w=0.3, len_form="cap", date_w=0.8, tau=10.0, spk_w=0.3, sess_w=0.4)
            run8(f"... BM25 alone", P(nw=(0.3, 0.45, 0.6)), fn=fused8_bm25, bw=1.0, time_w=0.1, cand=100, len_w=0.3,
                 len_form="cap", date_w=0.8, tau=10.0, spk_w=0.3, sess_w=0.4)
    finally:
        query_tokens = original
        _raw.clear()
        for c in CS:
            c._tf = {}


def diverse(c, s, ok, lam):
    """Greedy re-rank that charges ``lam`` x the best score per result already taken from a session."""
    s = np.where(ok, s, -np.inf)
    top = s[np.isfinite(s)].max() if np.isfinite(s).any() else 1
    order = list(np.argsort(-s)[:60])
    out, used = [], Counter()
    while order and len(out) < 20:
        best = max(order, key=lambda i: s[i] - lam * top * used[c.sess[i]])
        if not np.isfinite(s[best]):
            break
        out.append(best)
        order.remove(best)
        used[c.sess[best]] += 1
    return out


def run_diverse(name, lams, **fixed):
    keys = [(("lam", l),) for l in lams]
    rows = []
    for ci, c in enumerate(CS):
        for qi, q in enumerate(c.qs):
            s, ok = fused2(c, ci, qi, q, **fixed)
            rows.append((ci, {k: recall(c, q, diverse(c, s, ok, k[0][1])) for k in keys}))
    held, ins, best, _ = cv(rows, keys)
    print(f"{name:<28} LOO {held[1]:.3f} {held[5]:.3f} {held[10]:.3f} | in {ins[1]:.3f} {ins[5]:.3f} {ins[10]:.3f} | {dict(best)}", flush=True)


P = lambda **kw: [dict(zip(kw, v)) for v in itertools.product(*kw.values())]  # noqa: E731


def experiments(mode: str) -> dict:
    hy = mode == "hybrid"
    BW = (0.3, 0.4, 0.5) if hy else (1.0,)
    NW = (0.2, 0.3, 0.45)
    pri = dict(date_w=0.8, tau=10.0, spk_w=0.3, sess_w=0.4)
    NW2 = (0.3, 0.45) if hy else (0.3, 0.45, 0.6)
    return {
        "baseline": lambda: run("baseline", P(bw=BW, nw=NW), mode=mode),
        "date": lambda: run("date prior", P(bw=BW, nw=(0.3, 0.45), date_w=(0.4, 0.8, 1.6, 3.0), tau=(3.0, 10.0, 30.0)), mode=mode),
        "speaker": lambda: run("speaker prior", P(bw=BW, nw=(0.3, 0.45), spk_w=(0.2, 0.3, 0.5, 0.8)), mode=mode),
        "session": lambda: run("session prior", P(bw=BW, nw=(0.3, 0.45), sess_w=(0.4, 0.6, 1.0, 1.5)), mode=mode),
        "drop_names": lambda: run("names out of the query", P(bw=BW, nw=NW, drop_names=(True,)), mode=mode),
        "k1b": lambda: run("BM25 k1, b", P(bw=BW, nw=NW, k1=(0.9, 1.2, 1.6, 2.0), b=(0.4, 0.6, 0.75, 0.9)), mode=mode),
        "asym": lambda: run("asymmetric neighbours", P(bw=BW, nw=(0.1, 0.2, 0.3, 0.45), nwn=(0.1, 0.2, 0.3, 0.45)), mode=mode),
        "prf": lambda: run2("RM3-style PRF", P(bw=BW[:2], nw=(0.3, 0.45), prf_w=(0.1, 0.2, 0.4), prf_m=(3, 10), prf_e=(5, 15)), mode=mode),
        "when": lambda: run2("'when' temporal words", P(bw=BW[:2], nw=(0.3, 0.45), when_w=(0.05, 0.1, 0.2, 0.4)), mode=mode),
        "priors": lambda: run2("priors (built), cand=100", P(bw=BW, nw=NW2), mode=mode, cand=100, **pri),
        "priors_grid": lambda: run2("priors, weights per fold", P(bw=BW, nw=(0.45, 0.6), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6)), mode=mode, cand=100),
        "priors_grid_k1b": lambda: run2("... and k1 2.0, b 0.4", P(bw=BW, nw=(0.45, 0.6), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6)), mode=mode, cand=100, k1=2.0, b=0.4),
        "priors_grid_all": lambda: run2("priors, k1, b per fold, all scored", P(bw=BW[:2], nw=(0.3, 0.45), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.8), k1=(1.2, 2.0), b=(0.4, 0.75)), mode=mode),
        "label_grid": lambda: run2("speaker/session per fold", P(bw=BW, nw=NW2, spk_w=(0.3, 0.5), sess_w=(0.4, 0.6)), mode=mode, cand=100, date_w=0.8, tau=10.0),
        "priors_k1b": lambda: run2("priors + k1, b per fold", P(bw=BW, nw=NW2, k1=(1.2, 1.6, 2.0), b=(0.4, 0.6, 0.75)), mode=mode, cand=100, **pri),
        "priors_nw2": lambda: run2("priors + 2-hop neighbours", P(bw=BW, nw=(0.45,), nw2=(0.1, 0.2), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6)), mode=mode, cand=100),
        "priors_allcand": lambda: run2("priors, every turn scored", P(bw=BW, nw=(0.3, 0.45)), mode=mode, cand=None, **pri),
        # round 6: the text embedded for a turn and the dense side (fused3; tv_np = no speaker label)
        "r6_text": lambda: run3("turn text form per fold", P(tv=("tv", "tv_np", "mix", "tv_ctx"), bw=BW, nw=NW2), cand=100, **pri),
        "r6_tv": lambda: run3("label embedded", P(bw=BW, nw=NW2), tv="tv", cand=100, **pri),
        "r6_tv_np": lambda: run3("no label embedded", P(bw=BW, nw=NW2), tv="tv_np", cand=100, **pri),
        "r6_mix": lambda: run3("mean of both forms", P(bw=BW, nw=NW2), tv="mix", cand=100, **pri),
        "r6_ctx": lambda: run3("previous turn + turn", P(bw=BW, nw=NW2), tv="tv_ctx", cand=100, **pri),
        "r6_qnn": lambda: run3("question without names", P(qv=("qv", "qv_nn", "maxq"), bw=BW, nw=NW2), cand=100, **pri),
        "r6_nwd": lambda: run3("dense neighbour weight", P(bw=BW, nw=NW2, nwd=(0.15, 0.3, 0.45, 0.6)), cand=100, **pri),
        "r6_dnorm": lambda: run3("cosine rescaled", P(dnorm=(None, "max", "mm"), bw=(0.3, 0.4, 0.5, 0.6, 0.7), nw=NW2), cand=100, **pri),
        "r6_fusion": lambda: run3("fusion weights, wide", P(bw=(0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6), nw=(0.2, 0.3, 0.38, 0.45, 0.6)), cand=100, **pri),
        "r6_grid": lambda: run3("no label, priors per fold", P(bw=BW, nw=(0.3, 0.45), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6)), cand=100),
        "r6_qnn_only": lambda: run3("question without names (only)", P(bw=BW, nw=NW2), qv="qv_nn", cand=100, **pri),
        "r6_qnn_label": lambda: run3("... with the label embedded", P(bw=BW, nw=NW2), qv="qv_nn", tv="tv", cand=100, **pri),
        "r6_qnn_ctx": lambda: run3("... previous turn + turn", P(bw=BW, nw=NW2), qv="qv_nn", tv="tv_ctx", cand=100, **pri),
        "r6_qnn_grid": lambda: run3("... priors per fold", P(bw=BW, nw=(0.3, 0.45), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6)), qv="qv_nn", cand=100),
        "r6_qnn_fusion": lambda: run3("... fusion weights, wide", P(bw=(0.2, 0.25, 0.3, 0.35, 0.4, 0.5), nw=(0.2, 0.3, 0.38, 0.45, 0.6)), qv="qv_nn", cand=100, **pri),
        "r6_qnn_nwd": lambda: run3("... dense neighbour weight", P(bw=BW, nw=NW2, nwd=(0.15, 0.3, 0.45)), qv="qv_nn", cand=100, **pri),
        "r6_qcw": lambda: run3("question's content words only", P(qv=("qv_nn", "qv_cw"), bw=BW, nw=NW2), cand=100, **pri),
        "r6_qnn_depth": lambda: run3("... candidate depth", P(cand=(50, 100, 200), bw=BW, nw=NW2), qv="qv_nn", **pri),
        "r6_qnn_names": lambda: run3("... names' BM25 weight", P(name_w=(0.0, 0.25, 0.5, 1.0), bw=BW, nw=NW2), qv="qv_nn", cand=100, **pri),
        "r6_qnn_sess": lambda: run3("... session prior from its best 1-3", P(sess_top=(1, 2, 3), bw=BW, nw=NW2), qv="qv_nn", cand=100, **pri),
        "r6_qnn_k1b": lambda: run3("... BM25 k1, b per fold", P(bw=BW, nw=NW2, k1=(1.2, 1.6, 2.0), b=(0.4, 0.6, 0.75)), qv="qv_nn", cand=100, **pri),
        # round 7 (fused7: round 6's kept ranking, tv_np + qv_nn, and what was tried on top)
        "r7_base": lambda: run7("round 6 as built", P(bw=BW, nw=NW2), cand=100, **pri),
        "r7_sess": lambda: run7("+ session's best cosine / BM25", P(bw=BW, nw=NW2, sess_cos_w=(0.0, 0.1, 0.2, 0.4), sess_bm_w=(0.0, 0.05, 0.1, 0.2)), cand=100, **pri),
        "r7_sess_only": lambda: run7("session's best cosine / BM25 instead of the fused", P(bw=BW, nw=NW2, sess_cos_w=(0.1, 0.2, 0.4), sess_bm_w=(0.0, 0.1, 0.2)), cand=100, **{**pri, "sess_w": 0.0}),
        "r7_sess_grid": lambda: run7("+ session's best cosine / BM25, priors per fold", P(bw=(0.3, 0.4), nw=(0.3,), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6), sess_cos_w=(0.0, 0.1, 0.2), sess_bm_w=(0.0, 0.1)), cand=100),
        "r7_len": lambda: run7("+ a turn-length prior", P(bw=BW, nw=NW2, len_w=(0.0, 0.05, 0.1, 0.2, 0.3), len_form=("log", "rel", "cap")), cand=100, **pri),
        "r7_len_cap": lambda: run7("+ length prior min(len/40, 1)", P(bw=BW, nw=NW2, len_w=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5)), cand=100, len_form="cap", **pri),
        "r7_len_depth": lambda: (run7("BM25 scores 300 deep (round 6's library)", P(len_w=(0.0,)), bw=0.3, nw=0.3, cand=100, bm_depth=300, **pri),
                                 run7("... + length prior 0.3", P(len_w=(0.3,)), bw=0.3, nw=0.3, cand=100, len_form="cap", bm_depth=300, **pri)),
        "r7_len_grid": lambda: run7("+ length prior, priors per fold", P(bw=(0.3, 0.4), nw=(0.3, 0.45), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6), len_w=(0.0, 0.2, 0.3)), cand=100, len_form="cap"),
        "r7_len_bm25": lambda: run2("BM25 alone + a turn-length prior", P(bw=(1.0,), nw=(0.3, 0.45, 0.6), len_w=(0.0, 0.1, 0.2, 0.3, 0.5), len_form=("cap", "log")), mode="bm25", cand=100, **pri),
        "r7_len_bm25_03": lambda: run2("BM25 alone + length prior 0.3", P(bw=(1.0,), nw=(0.3, 0.45, 0.6)), mode="bm25", cand=100, len_w=0.3, len_form="cap", **pri),
        "r7_roc": lambda: run7("dense Rocchio from the fused top-k", P(bw=BW, nw=NW2, roc_w=(0.0, 0.1, 0.2, 0.4, 0.8), roc_k=(1, 3, 5, 10), roc_norm=(False, True)), cand=100, **pri),
        "r7_prf": lambda: run7("PRF from the fused top-m", P(prf_w=(0.0, 0.05, 0.1, 0.2, 0.4), prf_m=(3, 10), prf_e=(10, 20), prf_src=("fused", "bm25")), bw=0.3, nw=0.3, cand=100, **pri),
        "r7_learned": learned_fusion,
        # round 8 (fused8: round 7's kept ranking, length prior 0.3, and a time prior on top)
        "r8_time": lambda: run8("+ time words for 'when' questions", P(bw=BW, nw=NW2, time_w=(0.0, 0.05, 0.1, 0.2, 0.3)), cand=100, len_w=0.3, len_form="cap", **pri),
        "r8_time_all": lambda: run8("... every candidate, not the best 30", P(bw=BW, nw=NW2, time_w=(0.0, 0.05, 0.1, 0.2, 0.3)), cand=100, len_w=0.3, len_form="cap", extra_top=None, **pri),
        "r8_time_grid": lambda: run8("+ time words, every prior per fold", P(bw=(0.3, 0.4), nw=(0.3, 0.45), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6), len_w=(0.0, 0.2, 0.3), time_w=(0.0, 0.1, 0.2)), base=dict(time_w=0.0), cand=100, len_form="cap"),
        "r8_time_bm25": lambda: run8("BM25 alone + time words", P(nw=(0.3, 0.45, 0.6), time_w=(0.0, 0.05, 0.1, 0.2, 0.3)), fn=fused8_bm25, bw=1.0, cand=100, len_w=0.3, len_form="cap", **pri),
        "r8_time_bm25_01": lambda: run8("BM25 alone + time words 0.1", P(nw=(0.3, 0.45, 0.6), time_w=(0.1,)), fn=fused8_bm25, bw=1.0, cand=100, len_w=0.3, len_form="cap", **pri),
        "r8_time_bm25_grid": lambda: run8("BM25 alone + time words, every prior per fold", P(nw=(0.3, 0.45, 0.6), date_w=(0.8, 1.6), tau=(10.0, 30.0), spk_w=(0.3, 0.5), sess_w=(0.4, 0.6), len_w=(0.0, 0.2, 0.3), time_w=(0.0, 0.1, 0.2)), fn=fused8_bm25, base=dict(time_w=0.0), bw=1.0, cand=100, len_form="cap"),
        "r8_shift": lambda: run8("+ dates shifted by the turn's time words", P(shift_w=(0.0, 0.1, 0.2, 0.4, 0.8)), bw=0.3, nw=0.3, time_w=0.1, cand=100, len_w=0.3, len_form="cap", **pri),
        "r8_ctx": lambda: run8("+ max(cosine, previous + turn cosine - a)", P(ctx_a=(0.0, 0.05, 0.1, 0.15)), bw=0.3, nw=0.3, time_w=0.1, cand=100, len_w=0.3, len_form="cap", **pri),
        "r8_tok": r8_tok,
        "diverse": lambda: run_diverse("session diversity (MMR)", (0.0, 0.02, 0.05, 0.1, 0.2), bw=0.4 if hy else 1.0, nw=0.3 if hy else 0.45, mode=mode, cand=100, **pri),
    }


def todo_names(mode: str) -> list:
    return list(experiments(mode))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/memfold-locomo-ideas"))
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "bm25"))
    parser.add_argument("--only", nargs="*", default=None, help="experiment names (default: all)")
    parser.add_argument("--stem-index", action="store_true",
                        help="BM25 over lightly stemmed index tokens (a stemming tokenizer), the query's stemmed prefixes as before")
    parser.add_argument("--no-speaker-label", choices=("vectors", "both"), default=None,
                        help="embed (vectors) or index and embed (both) turns without the 'speaker: ' label")
    args = parser.parse_args()
    convs[:] = prepare(args.cache, args.data)
    for c in convs:
        if args.no_speaker_label == "both":
            c["texts"] = c["texts_np"]
        if args.no_speaker_label:
            c["tv"] = c["tv_np"]
    CS[:] = [C(c) for c in convs]
    if args.stem_index:
        from memfold.memory.search import light_stem
        for c in CS:
            c.toks = [Counter(light_stem(t) for t in index_tokens(text)) for text in c.texts]
            c.vocab = set().union(*c.toks)
    if set(args.only or todo_names(args.mode)) & {"r6_text", "r6_ctx", "r6_qnn", "r6_qnn_only", "r6_qnn_label", "r6_qnn_ctx", "r6_qnn_grid", "r6_qnn_fusion", "r6_qnn_nwd", "r6_qcw", "r6_qnn_depth", "r6_qnn_names", "r6_qnn_sess", "r6_qnn_k1b"} or any(n.startswith(("r7_", "r8_")) for n in (args.only or todo_names(args.mode))):  # they need the extra vectors
        EXTRA[:] = prepare_extra(args.cache, convs)
        if "r6_qcw" in (args.only or ()):
            add_content_questions(args.cache, convs, EXTRA)
    todo = experiments(args.mode)
    print(f"mode {args.mode}: figure LOO r@1 r@5 r@10 | in-sample best r@1 r@5 r@10 | in-sample best setting")
    for name in args.only or list(todo):
        todo[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
