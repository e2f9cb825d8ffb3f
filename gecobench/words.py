"""Words are the unit of GECOBench: the shared rules that move between words and tokens.

Datasets give words, models tokenize them with ``is_split_into_words=True`` and keep ``word_ids``;
explainers that work on tokens fold their scores back to words with :func:`fold_token_scores_to_words`,
the one rule every part of the hub uses (absolute value per token, sum per word, tokens without a word
such as ``[CLS]``/``[SEP]``/padding dropped).
"""

from __future__ import annotations

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


def tokenize_words(
    tokenizer: Any,
    batch_words: Sequence[Sequence[str]],
    max_length: int = 128,
    padding: bool | str = True,
    return_tensors: str | None = "pt",
) -> tuple[Any, list[list[int | None]]]:
    """Tokenize pre-split sentences and return the encoding with its per-sentence ``word_ids``.

    Words that contain spaces in the release (``"Mx. "``, ``"parent's sibling"``) stay one word: the
    tokenizer splits them into several tokens that all carry the same word id.
    """
    cleaned = [[w.strip() or w for w in words] for words in batch_words]
    encoding = tokenizer(
        cleaned,
        is_split_into_words=True,
        truncation=True,
        max_length=max_length,
        padding=padding,
        return_tensors=return_tensors,
    )
    word_ids = [encoding.word_ids(i) for i in range(len(cleaned))]
    return encoding, word_ids
