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
