"""Words are the unit of GECOBench: the shared rules that move between words and tokens.

Datasets give words, models tokenize them with ``is_split_into_words=True`` and keep ``word_ids``;
explainers that work on tokens fold their scores back to words with :func:`fold_token_scores_to_words`,
the one rule every part of the hub uses (absolute value per token, sum per word, tokens without a word
such as ``[CLS]``/``[SEP]``/padding dropped).
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np


def fold_token_scores_to_words(
    token_scores: Sequence[float] | np.ndarray,
    word_ids: Sequence[int | None],
    n_words: int | None = None,
) -> np.ndarray:
    """Fold token-level scores to word level: ``|score|`` per token, summed per word.

    Args:
        token_scores: one score per token.
        word_ids: one word index (or ``None`` for special and padding tokens) per token, as returned by
            a fast tokenizer's ``BatchEncoding.word_ids()``.
        n_words: number of words in the sentence; defaults to ``max(word_ids) + 1``. Words that received
            no token (possible after truncation) get 0.

    Returns:
        A float64 array with one non-negative score per word.

    >>> fold_token_scores_to_words([0.5, -1.0, 2.0, 0.25, 9.0], [None, 0, 0, 1, None])
    array([3.  , 0.25])
    """
    scores = np.asarray(token_scores, dtype=np.float64)
    if scores.ndim != 1:
        raise ValueError(f"token_scores must be one-dimensional, got shape {scores.shape}")
    if len(word_ids) != scores.shape[0]:
        raise ValueError(
            f"token_scores has {scores.shape[0]} tokens but word_ids has {len(word_ids)} entries"
        )
    ids = np.array([_word_index(w, position) for position, w in enumerate(word_ids)], dtype=np.int64)
    if n_words is None:
        n_words = int(ids.max()) + 1 if ids.size and ids.max() >= 0 else 0
    keep = ids >= 0
    if keep.any() and ids[keep].max() >= n_words:
        raise ValueError(f"word_ids refer to word {int(ids[keep].max())} but n_words is {n_words}")
    return np.bincount(ids[keep], weights=np.abs(scores[keep]), minlength=n_words).astype(np.float64)


def _word_index(word_id: Any, position: int) -> int:
    """One ``word_ids`` entry as an index, -1 for None; anything else (-1, 1.5, "0", True) is refused.

    -1 is how the folding marks a token without a word, so a -1 in the input would be dropped silently,
    and ``int()`` would truncate 1.5 to word 1.
    """
    if word_id is None:
        return -1
    if isinstance(word_id, (bool, np.bool_)) or not isinstance(word_id, (int, np.integer)):
        raise ValueError(  # noqa: TRY004 (bad input data: ValueError, as everywhere in the metrics)
            f"word_ids: token {position} is {word_id!r}; expected a word index (an int >= 0) or None"
        )
    if word_id < 0:
        raise ValueError(f"word_ids: token {position} is {int(word_id)}; word indices are >= 0 (None for no word)")
    return int(word_id)


#: Sentences kept per tokenizer by :func:`tokenize_words` (a seed of the reference grid has 3,220 test sentences).
TOKEN_CACHE_SENTENCES = 65536
_token_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_token_caches_lock = threading.Lock()


def clear_token_cache() -> None:
    """Forget every tokenized sentence (benchmarks time each method with its own tokenization)."""
    with _token_caches_lock:
        _token_caches.clear()


def _sentence_cache(tokenizer: Any) -> OrderedDict | None:
    """The per-sentence token cache of ``tokenizer``; None for a tokenizer that is not a Hugging Face one (whose
    fields and padding this module cannot vouch for) or cannot be weakly referenced."""
    transformers = sys.modules.get("transformers")
    hugging_face = getattr(transformers, "PreTrainedTokenizerBase", None) if transformers is not None else None
    if hugging_face is None or not isinstance(tokenizer, hugging_face):
        return None
    try:
        with _token_caches_lock:
            return _token_caches.setdefault(tokenizer, OrderedDict())
    except TypeError:
        return None


def tokenize_words(
    tokenizer: Any,
    batch_words: Sequence[Sequence[str]],
    max_length: int = 128,
    padding: bool | str = True,
    return_tensors: str | None = "pt",
    cache: bool = False,
) -> tuple[Any, list[list[int | None]]]:
    """Tokenize pre-split sentences and return the encoding with its per-sentence ``word_ids``.

    Words that contain spaces in the release (``"Mx. "``, ``"parent's sibling"``) stay one word: the
    tokenizer splits them into several tokens that all carry the same word id.

    With ``cache`` (the attribution engine's calls), each sentence is tokenized once per Hugging Face tokenizer
    (and ``max_length``): the engine plans its batches from every sentence's length and then encodes each batch,
    an evaluation explains the same sentences with every explainer, and on a small model (OLA) the tokenizer's
    per-call cost was a third of Integrated Gradients' time. The cache holds each sentence's unpadded ids, word ids
    and the tokenizer's other per-token fields; a batch is padded from it on the right exactly as the tokenizer
    pads (``padding=True``: to the longest; tests compare the two). Other padding modes, and tokenizers that pad on
    the left, are passed to the tokenizer as they are. Off by default: a fast tokenizer keeps the truncation and
    padding of its last call and saves them in ``tokenizer.json``, a file of a checkpoint's function fingerprint,
    so where a tokenizer may be saved (training, the zoo) every call reaches it as before.
    """
    cleaned = [[w.strip() or w for w in words] for words in batch_words]
    pads = padding in (True, "longest")
    store = (_sentence_cache(tokenizer) if cache and (pads or padding in (False, "do_not_pad"))
             and getattr(tokenizer, "padding_side", "right") == "right"
             and not (pads and getattr(tokenizer, "pad_token_id", None) is None) else None)
    if store is None:
        encoding = tokenizer(cleaned, is_split_into_words=True, truncation=True, max_length=max_length,
                             padding=padding, return_tensors=return_tensors)
        return encoding, [encoding.word_ids(i) for i in range(len(cleaned))]
    # a tokenizer given new tokens since (add_tokens) encodes otherwise: its size is part of the key
    keys = [(len(tokenizer), max_length, tuple(words)) for words in cleaned]
    with _token_caches_lock:  # entries held here stay valid if another thread evicts them meanwhile
        found = {k: store[k] for k in keys if k in store}
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        fresh = tokenizer([list(k[2]) for k in missing], is_split_into_words=True, truncation=True,
                          max_length=max_length, padding=False)
        for i, key in enumerate(missing):
            found[key] = ({name: list(fresh[name][i]) for name in fresh.keys()}, fresh.word_ids(i))
    with _token_caches_lock:
        store.update(found)
        for key in keys:
            store.move_to_end(key)
        while len(store) > TOKEN_CACHE_SENTENCES:
            store.popitem(last=False)
    entries = [found[key] for key in keys]
    names = list(entries[0][0]) if entries else ["input_ids", "attention_mask"]
    columns: dict[str, list[list[int]]] = {name: [entry[name] for entry, _ in entries] for name in names}
    word_ids = [list(wids) for _, wids in entries]
    if pads and entries:
        longest = max(len(ids) for ids in columns["input_ids"])
        fill = {"input_ids": tokenizer.pad_token_id, "attention_mask": 0,
                "token_type_ids": getattr(tokenizer, "pad_token_type_id", 0), "special_tokens_mask": 1}
        for name, rows in columns.items():
            columns[name] = [row + [fill.get(name, 0)] * (longest - len(row)) for row in rows]
        word_ids = [wids + [None] * (longest - len(wids)) for wids in word_ids]
    else:
        columns = {name: [list(row) for row in rows] for name, rows in columns.items()}
    from transformers import BatchEncoding

    return BatchEncoding(columns, tensor_type=return_tensors), word_ids
