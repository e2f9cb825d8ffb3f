"""One call that turns (explainer, model, sentences, targets) into validated word scores.

Uses the shared engine ``gecobench.explainers.engine.attribute`` (batching, token→word folding, validation).
When the engine is not installed (a partial checkout), a minimal path with the same contract is used: the
explainer's output is folded with :func:`gecobench.words.fold_token_scores_to_words` and checked for length
and finiteness, so a broken explainer still fails loudly.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from gecobench.explainers.base import Explainer, TokenAttributions
from gecobench.words import fold_token_scores_to_words


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def _minimal_attribute(
    explainer: Explainer, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int],
    batch_size: int, seed: int,
) -> list[np.ndarray]:
    _seed_everything(seed)
    out: list[np.ndarray] = []
    for start in range(0, len(words), batch_size):
        batch_words = [list(w) for w in words[start:start + batch_size]]
        raw = explainer.explain(model, tokenizer, batch_words, list(targets[start:start + batch_size]))
        if len(raw) != len(batch_words):
            raise ValueError(f"explainer {explainer.name!r} returned {len(raw)} results for {len(batch_words)} sentences")
        for sentence, scores in zip(batch_words, raw):
            if isinstance(scores, TokenAttributions):
                scores = fold_token_scores_to_words(scores.scores, scores.word_ids, n_words=len(sentence))
            array = np.asarray(scores, dtype=np.float64)
            if array.shape != (len(sentence),):
                raise ValueError(
                    f"explainer {explainer.name!r} returned shape {array.shape} for a sentence of {len(sentence)} words"
                )
            if not np.all(np.isfinite(array)):
                raise ValueError(f"explainer {explainer.name!r} returned non-finite scores")
            out.append(array)
    return out


def attribute_words(
    explainer: Explainer, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int],
    batch_size: int = 8, seed: int = 0,
) -> list[np.ndarray]:
    """Word scores for every sentence, computed in batches of ``batch_size`` with RNGs seeded by ``seed``."""
    if len(words) != len(targets):
        raise ValueError(f"{len(words)} sentences but {len(targets)} targets")
    if not words:
        return []
    try:
        from gecobench.explainers.engine import attribute  # type: ignore[attr-defined]
    except ImportError:
        attribute = None
    if attribute is None:
        return _minimal_attribute(explainer, model, tokenizer, words, targets, batch_size, seed)
    _seed_everything(seed)
    scores = attribute(explainer, model, tokenizer, [list(w) for w in words], list(targets),
                       batch_size=batch_size, seed=seed, progress=False)
    return [np.asarray(s, dtype=np.float64) for s in scores]
