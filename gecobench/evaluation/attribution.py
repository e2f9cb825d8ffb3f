"""One call that turns (explainer, model, sentences, targets) into validated word scores.

A thin wrapper over the shared engine ``gecobench.explainers.engine.attribute`` (batching, token→word folding,
validation) that also seeds Python's, NumPy's and torch's global RNGs, so explainers that draw from them are
reproducible chunk by chunk.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from gecobench.explainers.base import Explainer
from gecobench.explainers.engine import (
    AttributionResult,
    attribute_detailed,
    summarize_diagnostics,
)

__all__ = ["attribute_words", "attribute_words_detailed", "summarize_diagnostics"]


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def attribute_words_detailed(
    explainer: Explainer, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int],
    batch_size: int = 8, seed: int = 0,
) -> AttributionResult:
    """:func:`attribute_words` plus the explainer's per-sentence diagnostics (e.g. IG's steps and error)."""
    if len(words) != len(targets):
        raise ValueError(f"{len(words)} sentences but {len(targets)} targets")
    if not words:
        return AttributionResult(scores=[])
    _seed_everything(seed)
    return attribute_detailed(explainer, model, tokenizer, [list(w) for w in words], list(targets),
                              batch_size=batch_size, seed=seed, progress=False)


def attribute_words(
    explainer: Explainer, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int],
    batch_size: int = 8, seed: int = 0,
) -> list[np.ndarray]:
    """Word scores for every sentence, computed in batches of ``batch_size`` with RNGs seeded by ``seed``."""
    result = attribute_words_detailed(explainer, model, tokenizer, words, targets, batch_size, seed)
    return [np.asarray(s, dtype=np.float64) for s in result.scores]
