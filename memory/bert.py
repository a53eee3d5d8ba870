"""A BERT sentence encoder in numpy: all-MiniLM-L6-v2 without torch (issue 18, points 2-3).

Invariant kept here: :class:`BertEncoder` (behind
:class:`~memfold.memory.embeddings.MiniLMEmbedder`) gives the **same vectors** as
sentence-transformers for the same model (cosine >= 0.9999 per text, the same nearest
neighbours; ``tests/test_minilm.py`` checks it on real LoCoMo turns), so the embedder stores them
under the same ``model_id`` and vectors stored by either embedder stay valid for the other. What it saves is torch: importing torch and sentence-transformers costs
about 4 s and 900 MB of resident memory; this embedder loads in about 0.3 s and holds the model's
90 MB of float32 weights plus numpy, and imports neither torch nor sentence-transformers.

The parts that are not memfold's business come from well-kept libraries: the weights are read
with ``safetensors`` (``safe_open(..., framework="numpy")``) and the text is tokenized by Hugging
Face ``tokenizers`` from the model's own ``tokenizer.json`` (truncated to the model's
``max_seq_length``, 256 for all-MiniLM-L6-v2, as sentence-transformers does; the file's own
truncation and fixed padding to 128 are replaced). Only the forward pass is written here, in
float32, exactly as ``transformers``' ``BertModel`` computes it:

* embeddings: word + absolute position + token type 0, then LayerNorm (eps from ``config.json``);
* per layer (6): self-attention with 12 heads, the attention mask added as the float32 minimum
  on padded keys, softmax, output projection, residual + LayerNorm; feed-forward with GELU in
  its exact erf form, residual + LayerNorm;
* sentence-transformers' mean pooling over the non-padded tokens, then L2 normalisation.

numpy has no ``erf``: :func:`erf` is the float32 rational approximation Eigen and XLA use for
their own ``erf`` (maximum absolute error about 5e-7 against :func:`math.erf`, a few float32
units in the last place; a test checks it), so scipy is not needed.

Speed and memory: texts are tokenized first, sorted by token count and cut into batches of at
most :data:`BATCH_TOKENS` tokens (padded to the longest text of the batch) and
:data:`ATTENTION_BYTES` of attention scores, so a batch of short turns pays no padding for one
long text and the activations stay under about 100 MB (a batch of at most :data:`PACKED_TEXTS`
texts of unequal length, such as a search's query with the turn just appended, runs unpadded:
:meth:`BertEncoder.encode_packed`); rows go back to the caller's order. The
dense weights are kept as row-major ``(in, out)`` copies (BLAS is about 4x faster on a one-row
query with them than with transposed views). The matrix products run
in numpy's BLAS, which uses every core unless ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS``
limit it (``bench/bench_embedder.py`` measures both).

::

    BertEncoder       the loaded weights and tokenizer; embed(texts) -> (n, hidden) float32 unit rows
    load_encoder(path) one BertEncoder per model directory and process
    erf(x)            float32 error function, element-wise
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .errors import EmbeddingError

#: at most this many tokens (batch rows x padded length) per forward pass: bounds the activations
#: (about 30 MB at 4,096 tokens) while keeping BLAS products large enough to be fast
BATCH_TOKENS = 4096
#: at most this many texts per forward pass (short texts: the attention products stay small)
BATCH_TEXTS = 128
#: at most this many bytes of attention scores (rows x heads x tokens x tokens float32) per pass:
#: long texts go in fewer rows (10 texts of 256 tokens)
ATTENTION_BYTES = 32 * 2**20

#: a batch of at most this many texts of unequal length runs unpadded (:meth:`BertEncoder.encode_packed`:
#: each text attends to its own tokens in a loop, so the loop stays short)
PACKED_TEXTS = 8

_ENCODERS: dict[str, "BertEncoder"] = {}
_ENCODERS_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A child forked while another thread of its parent was loading a model (the facade's
    background load, ``memfold-embedder-preload``) inherits the lock held and no thread to release
    it: it would wait for ever at its first embedding. The child gets a free lock; the cache holds
    only encoders whose load finished, so it loads its own copy of any other."""
    global _ENCODERS_LOCK
    _ENCODERS_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)

# Eigen's / XLA's float32 erf: x * P(x^2) / Q(x^2) on [-4, 4] (erf is +-1 in float32 outside)
_ERF_ALPHA = tuple(np.float32(c) for c in (
    -2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
    -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02))
_ERF_BETA = tuple(np.float32(c) for c in (
    -1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
    -1.42647390514189e-02))


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of a float32 array, element-wise (float32 result, same shape).

    Maximum absolute error about 5e-7 (checked against :func:`math.erf` in the tests)."""
    x = np.asarray(x, dtype=np.float32)
    x = np.clip(x, np.float32(-4.0), np.float32(4.0), out=np.empty_like(x))
    x2 = x * x
    p = np.full_like(x, _ERF_ALPHA[0])
    for c in _ERF_ALPHA[1:]:
        p *= x2
        p += c
    p *= x
    q = np.full_like(x, _ERF_BETA[0])
    for c in _ERF_BETA[1:]:
        q *= x2
        q += c
    p /= q
    return p


_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def _gelu_(x: np.ndarray, rows: int = 512) -> np.ndarray:
    """BERT's GELU in its exact erf form, ``0.5 * x * (1 + erf(x / sqrt(2)))``, in place on the
    2-D float32 ``x``, ``rows`` rows at a time (the temporaries stay a few MB); returns ``x``."""
    for start in range(0, x.shape[0], rows):
        part = x[start:start + rows]
        g = erf(part * _INV_SQRT2)
        g += np.float32(1.0)
        g *= np.float32(0.5)
        part *= g
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as torch)."""
    mean = x.mean(axis=-1, keepdims=True)
    x = x - mean
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    x *= 1.0 / np.sqrt(var + np.float32(eps))
    x *= weight
    x += bias
    return x


class BertEncoder:
    """A BERT sentence encoder loaded from a sentence-transformers model directory: the weights
    (``model.safetensors``), the tokenizer (``tokenizer.json``) and the settings
    (``config.json``, ``sentence_bert_config.json``, ``1_Pooling/config.json``).

    :param path: the model directory.
    :raises EmbeddingError: if a file is missing, or the model is not a mean-pooled BERT with
        absolute positions and GELU (the only kind this forward pass computes).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        root = Path(path)
        try:
            from safetensors import safe_open
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(f"the numpy embedder needs safetensors and tokenizers ({exc}): "
                                 "pip install safetensors tokenizers") from None
        try:
            config = json.loads((root / "config.json").read_text())
            st_config = json.loads((root / "sentence_bert_config.json").read_text())
            pooling = json.loads((root / "1_Pooling" / "config.json").read_text())
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"cannot read the model settings in {str(root)!r}: {exc}") from None
        problems = []
        if config.get("model_type") != "bert":
            problems.append(f"model_type {config.get('model_type')!r} (needs 'bert')")
        if config.get("hidden_act") != "gelu":
            problems.append(f"hidden_act {config.get('hidden_act')!r} (needs 'gelu')")
        if config.get("position_embedding_type", "absolute") != "absolute":
            problems.append(f"position_embedding_type {config.get('position_embedding_type')!r}")
        if not pooling.get("pooling_mode_mean_tokens") or any(
                pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                         "pooling_mode_mean_sqrt_len_tokens")):
            problems.append("pooling other than mean over tokens")
        if st_config.get("do_lower_case"):
            problems.append("do_lower_case in sentence_bert_config.json")
        if problems:
            raise EmbeddingError(f"the numpy embedder cannot run the model in {str(root)!r}: "
                                 f"{'; '.join(problems)}. Use SentenceTransformerEmbedder for it")
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers_n = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_tokens = min(int(st_config.get("max_seq_length") or 512), int(config["max_position_embeddings"]))
        try:
            self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
            # the file pads to a fixed 128 and truncates at 128; sentence-transformers truncates at
            # max_seq_length and pads to the longest text of a batch (this class pads itself)
            self.tokenizer.no_padding()
            self.tokenizer.enable_truncation(max_length=self.max_tokens)
            weights = self._read_weights(safe_open, root / "model.safetensors")
        except EmbeddingError:
            raise
        except Exception as exc:  # a missing or damaged file becomes one clear error
            raise EmbeddingError(f"cannot load the model in {str(root)!r}: {exc}") from None
        self._set_weights(weights)

    @staticmethod
    def _read_weights(safe_open: Any, file: Path) -> dict[str, np.ndarray]:
        out = {}
        with safe_open(str(file), framework="numpy") as f:
            for name in f.keys():
                if name.endswith("position_ids") or name.startswith("pooler."):
                    continue  # position ids are 0..n-1 here; the pooler is not used by mean pooling
                key = name[5:] if name.startswith("bert.") else name
                out[key] = np.ascontiguousarray(f.get_tensor(name), dtype=np.float32)
        return out

    def _set_weights(self, w: dict[str, np.ndarray]) -> None:
        """Take the weights out of ``w`` (popped, so each original goes as soon as its copy is made)."""
        try:
            self.word = w.pop("embeddings.word_embeddings.weight")
            self.position = w.pop("embeddings.position_embeddings.weight")
            self.token_type0 = w.pop("embeddings.token_type_embeddings.weight")[0].copy()
            self.emb_norm = (w.pop("embeddings.LayerNorm.weight"), w.pop("embeddings.LayerNorm.bias"))
            self.layers = []
            t = np.ascontiguousarray  # (in, out) row-major copies: BLAS is several times faster on a
            # few rows (a query) with these than with transposed views of the (out, in) weights
            for i in range(self.layers_n):
                p = f"encoder.layer.{i}."
                a = p + "attention.self."
                # one product for query, key and value: (hidden, 3 * hidden)
                qkv = np.concatenate([w.pop(a + "query.weight"), w.pop(a + "key.weight"), w.pop(a + "value.weight")])
                qkv_b = np.concatenate([w.pop(a + "query.bias"), w.pop(a + "key.bias"), w.pop(a + "value.bias")])
                self.layers.append((
                    t(qkv.T), qkv_b,
                    t(w.pop(p + "attention.output.dense.weight").T), w.pop(p + "attention.output.dense.bias"),
                    w.pop(p + "attention.output.LayerNorm.weight"), w.pop(p + "attention.output.LayerNorm.bias"),
                    t(w.pop(p + "intermediate.dense.weight").T), w.pop(p + "intermediate.dense.bias"),
                    t(w.pop(p + "output.dense.weight").T), w.pop(p + "output.dense.bias"),
                    w.pop(p + "output.LayerNorm.weight"), w.pop(p + "output.LayerNorm.bias"),
                ))
        except KeyError as exc:
            raise EmbeddingError(f"the model's weights lack {exc.args[0]!r}: not a BERT encoder") from None

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, with ``[CLS]``/``[SEP]``, truncated to :attr:`max_tokens`.

        One ``encode`` per text, not ``encode_batch``: tokenizing costs about 1% of the forward
        pass, so tokenizers' own thread pool is left out (the only threads are BLAS's)."""
        encode = self.tokenizer.encode
        return [encode(str(t)).ids for t in texts]

    def _after_attention(self, context: np.ndarray, x: np.ndarray, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b,
                         n2_w, n2_b) -> np.ndarray:
        """One layer past its self-attention: output projection, residual and LayerNorm, then the
        GELU feed-forward, residual and LayerNorm (``(rows, hidden)`` in, ``(rows, hidden)`` out;
        the same for a padded batch and a packed one)."""
        a = context @ o_w
        a += o_b
        a += x
        a = _layer_norm(a, n1_w, n1_b, self.eps)
        f = a @ i_w
        f += i_b
        f = _gelu_(f) @ f_w
        f += f_b
        f += a
        return _layer_norm(f, n2_w, n2_b, self.eps)

    def encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled last hidden states of one padded batch.

        :param ids: ``(batch, tokens) int64`` token ids, padded with 0.
        :param mask: ``(batch, tokens) float32``, 1 for a real token, 0 for padding.
        :returns: ``(batch, hidden) float32`` (not normalised).
        """
        b, t = ids.shape
        h, heads = self.hidden, self.heads
        d = h // heads
        x = self.word[ids]
        x += self.position[:t]
        x += self.token_type0
        x = _layer_norm(x, *self.emb_norm, self.eps).reshape(b * t, h)
        # padded keys get the float32 minimum added, as transformers' extended attention mask
        bias = ((np.float32(1.0) - mask) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(d))
        for (qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b) in self.layers:
            qkv = x @ qkv_w
            qkv += qkv_b
            qkv = qkv.reshape(b, t, 3, heads, d).transpose(2, 0, 3, 1, 4)  # (3, b, heads, t, d)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(b * t, h)
            del scores, qkv, q, k, v
            x = self._after_attention(context, x, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b)
        x = x.reshape(b, t, h)
        summed = np.einsum("bth,bt->bh", x, mask)
        counts = np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        return (summed / counts).astype(np.float32, copy=False)

    def encode_packed(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """Mean-pooled last hidden states of a few texts of unequal length, with no padding: the
        dense products run over every text's real tokens stacked (one product per weight, as in a
        padded batch, but over ``sum(lengths)`` rows instead of ``rows x longest``) and each text
        attends only to its own tokens. The same arithmetic as :meth:`encode` on the real tokens
        (a padded key adds exactly 0 to a softmax), so the vectors agree to float32 rounding;
        a search's query and the one new turn it embeds (13 and 162 tokens, say) cost one pass
        of 175 rows instead of two passes, or one padded pass of 324 (issue 18, point 2).

        :param ids: token ids of each text (with ``[CLS]``/``[SEP]``), each non-empty.
        :returns: ``(len(ids), hidden) float32`` (not normalised).
        """
        h, heads = self.hidden, self.heads
        d = h // heads
        lengths = [len(i) for i in ids]
        starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        spans = list(zip(starts[:-1].tolist(), starts[1:].tolist()))
        flat = np.concatenate([np.asarray(i, dtype=np.int64) for i in ids])
        x = self.word[flat]
        x += self.position[np.concatenate([np.arange(n) for n in lengths])]
        x += self.token_type0
        x = _layer_norm(x, *self.emb_norm, self.eps)
        scale = np.float32(1.0 / math.sqrt(d))
        context = np.empty_like(x)
        for (qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b) in self.layers:
            qkv = x @ qkv_w
            qkv += qkv_b
            for s, e in spans:
                part = qkv[s:e].reshape(e - s, 3, heads, d).transpose(1, 2, 0, 3)  # (3, heads, t, d)
                q, k, v = part[0], part[1], part[2]
                scores = q @ k.transpose(0, 2, 1)
                scores *= scale
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context[s:e] = (scores @ v).transpose(1, 0, 2).reshape(e - s, h)
            x = self._after_attention(context, x, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b)
        summed = np.add.reduceat(x, starts[:-1], axis=0)
        return (summed / np.asarray(lengths, dtype=np.float32)[:, None]).astype(np.float32, copy=False)

    def embed(self, texts: Sequence[str], *, batch_tokens: int = BATCH_TOKENS,
              batch_texts: int = BATCH_TEXTS) -> np.ndarray:
        """``(len(texts), hidden) float32`` unit rows, in the order of ``texts``."""
        ids = self.token_ids(texts)
        out = np.zeros((len(ids), self.hidden), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        score_bytes = 4 * self.heads  # per row and token pair
        start = 0
        while start < len(order):
            # the batch grows while (rows x longest) stays within the token budget and the
            # attention scores within theirs; texts are sorted by length, so the last one added
            # is the longest
            end = start + 1
            while end < len(order) and end - start < batch_texts:
                width = len(ids[order[end]])
                if (end - start + 1) * width > batch_tokens or \
                        (end - start + 1) * width * width * score_bytes > ATTENTION_BYTES:
                    break
                end += 1
            rows = order[start:end]
            width = len(ids[rows[-1]])
            if 1 < len(rows) <= PACKED_TEXTS and len(ids[rows[0]]) < width:
                out[rows] = self.encode_packed([ids[i] for i in rows])  # a few texts of unequal length
                start = end
                continue
            batch = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.float32)
            for r, i in enumerate(rows):
                batch[r, :len(ids[i])] = ids[i]
                mask[r, :len(ids[i])] = 1.0
            out[rows] = self.encode(batch, mask)
            start = end
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out /= norms
        return out


def load_encoder(path: str | os.PathLike) -> BertEncoder:
    """The :class:`BertEncoder` of ``path``, loaded once per process (thread-safe: a second
    caller waits for the first load instead of loading another copy)."""
    key = str(Path(path).resolve())
    with _ENCODERS_LOCK:
        enc = _ENCODERS.get(key)
        if enc is None:
            enc = _ENCODERS[key] = BertEncoder(key)
        return enc
