"""How stable a sampled explanation is: the agreement of the attributions made from two halves of its samples.

Sampling explainers (Gradient SHAP, LIME) average or fit over random samples; with too few samples their word
scores depend on the draw. Splitting a sentence's samples into two halves and explaining from each half alone
gives two independent estimates; their correlation over the sentence's words (the *split-half agreement*) is 1
when the ranking of the words is settled and near 0 when it is noise. It costs no model call: the halves reuse
the outputs the explainer computed anyway. It describes half the samples, so it understates the stability of
the full estimate (Spearman–Brown: a full-sample reliability ``2r / (1 + r)``).
"""

from __future__ import annotations

import numpy as np


def split_half_agreement(first_half: np.ndarray, second_half: np.ndarray) -> float:
    """Pearson correlation of two word-score vectors of one sentence; NaN when it is undefined.

    Undefined: fewer than three words (two points always correlate perfectly, one way or the other), or a half
    that scores every word the same (nothing to agree on).
    """
    first = np.asarray(first_half, dtype=np.float64).reshape(-1)
    second = np.asarray(second_half, dtype=np.float64).reshape(-1)
    if first.shape != second.shape:
        raise ValueError(f"the two halves score {first.size} and {second.size} words; they must score the same sentence")
    if first.size < 3:
        return float("nan")
    for half in (first, second):
        # all scores equal up to float64 rounding: no ranking to agree on
        if np.ptp(half) <= 64 * np.finfo(np.float64).eps * np.abs(half).max():
            return float("nan")
    first, second = first - first.mean(), second - second.mean()
    return float(np.clip((first @ second) / np.sqrt((first @ first) * (second @ second)), -1.0, 1.0))


def split_half_error(first_half: np.ndarray, second_half: np.ndarray) -> float:
    """Estimated relative L2 error of the estimate made from *all* the samples, from the estimates ``a`` and ``b``
    of its two halves: ``||a - b|| / ||a + b||``.

    Why this ratio: for an estimate that averages its samples, the full estimate is ``(a + b) / 2`` and, the halves
    being independent, its sampling error is about ``||a - b|| / 2`` (the difference of two independent halves has
    twice the variance of one half, which has twice that of the whole). A weighted fit (LIME's ridge, Kernel SHAP's
    regression) is not a plain average, but the same reasoning holds to first order. 0 when the halves agree
    exactly (both all-zero included); it can exceed 1 when they disagree in sign.
    """
    first = np.asarray(first_half, dtype=np.float64).reshape(-1)
    second = np.asarray(second_half, dtype=np.float64).reshape(-1)
    if first.shape != second.shape:
        raise ValueError(f"the two halves score {first.size} and {second.size} words; they must score the same sentence")
    difference = float(np.linalg.norm(first - second))
    total = float(np.linalg.norm(first + second))
    if difference == 0.0:
        return 0.0
    return difference / total if total > 0 else float("inf")


def sample_schedule(min_samples: int, max_samples: int) -> list[int]:
    """Sample counts of an adaptive sampler's rounds: ``min_samples`` doubled until ``max_samples`` (the last one)."""
    if int(min_samples) < 1 or int(max_samples) < int(min_samples):
        raise ValueError(f"need 1 <= min_samples <= max_samples, got {min_samples} and {max_samples}")
    counts, n = [], int(min_samples)
    while n < int(max_samples):
        counts.append(n)
        n *= 2
    return counts + [int(max_samples)]
