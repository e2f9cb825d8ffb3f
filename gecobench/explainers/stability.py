"""How stable a sampled explanation is: the agreement of the attributions made from two halves of its samples.

Sampling explainers (Gradient SHAP, LIME) average or fit over random samples; with too few samples their word
scores depend on the draw. Splitting a sentence's samples into two halves and explaining from each half alone
gives two independent estimates; their correlation over the sentence's words (the *split-half agreement*) is 1
when the ranking of the words is settled and near 0 when it is noise. It costs no model call: the halves reuse
the outputs the explainer computed anyway. It describes half the samples, so it understates the stability of
the full estimate (Spearman–Brown: a full-sample reliability ``2r / (1 + r)``).
"""

from __future__ import annotations

import math

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


#: How a sentence's samples grow between the rounds of an adaptive sampler (``growth`` parameter of LIME and
#: Kernel SHAP): ``doubling`` (LIME 4.0.0, Kernel SHAP's) or ``projected`` (:func:`next_sample_count`).
GROWTH_RULES = ("doubling", "projected")
#: the projected count's margin over what a 1/sqrt(n) error needs: one more round costs a fit, not model calls, but a
#: count just short of the tolerance costs a round of its own
PROJECTION_MARGIN = 1.1


def check_growth(growth: str) -> str:
    """``growth`` if it names one of :data:`GROWTH_RULES`; otherwise a ``ValueError`` that lists them."""
    if growth not in GROWTH_RULES:
        raise ValueError(f"growth must be one of {', '.join(GROWTH_RULES)}, got {growth!r}")
    return growth


def next_sample_count(n: int, error: float, tolerance: float, max_samples: int, growth: str = "doubling") -> int:
    """A sentence's sample count in the next round of an adaptive sampler, after a round of ``n`` samples whose
    split-half error is ``error`` (above ``tolerance``; NaN when it could not be measured).

    ``doubling``: ``2n``. ``projected``: the count at which the error would meet the tolerance if it falls as
    ``1/sqrt(n)`` (an average's sampling error does), ``n (error / tolerance)^2`` with a 10 % margin, kept between
    ``n + n/4`` (a smaller step seldom changes the verdict on a noisy error) and ``2n`` (an error measured on few
    samples is noisy: never more than the doubling's step); unmeasured errors double. Doubling stops a sentence up
    to twice past the count it needed; the projection stops it near that count when the error falls as assumed
    (LIME's fell slower on MiniLM models: BENCHMARKS.md, "LIME 5.0.0"). Never more than ``max_samples``.
    """
    if check_growth(growth) == "doubling" or not math.isfinite(error) or tolerance <= 0:
        return min(int(max_samples), 2 * int(n))
    wanted = math.ceil(n * (error / tolerance) ** 2 * PROJECTION_MARGIN)
    return min(int(max_samples), max(n + math.ceil(n / 4), min(2 * n, wanted)))
