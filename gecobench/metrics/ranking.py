"""Ground-truth ranking metrics beside Mass Accuracy: Relevance Rank Accuracy and AUPRC.

Both rank a sentence's words by ``|score|`` and compare that ranking with the GECO ground-truth mask.
Undefined sentences (NaN), as for Mass Accuracy: all-zero attribution or no ground-truth word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gecobench.metrics._ragged import check_binary, check_same_shape, flatten

RANKING_META: dict[str, dict[str, Any]] = {
    "relevance_rank_accuracy": {
        "name": "relevance_rank_accuracy", "property": "correctness (ground truth)", "direction": "higher",
        "range": [0.0, 1.0], "best": 1.0,
    },
    "auprc": {
        "name": "auprc", "property": "correctness (ground truth)", "direction": "higher",
        "range": [0.0, 1.0], "best": 1.0,
    },
}


def _pairs(attributions: Sequence[Sequence[float]], ground_truth: Sequence[Sequence[int]]):
    scores = flatten(attributions, "attributions")
    mask = flatten(ground_truth, "ground_truth")
    check_same_shape(scores, mask, "attributions", "ground_truth")
    check_binary(mask, "ground_truth")
    return zip(scores.split(np.abs(scores.flat)), mask.split(mask.flat))


def relevance_rank_accuracy_one(abs_scores: np.ndarray, truth: np.ndarray) -> float:
    """Precision@|GT| of one sentence, ties at the cut-off shared out by their expected value.

    The top ``k = |GT|`` words by ``|score|`` are taken. Words tied with the k-th score are broken at random
    in expectation: if ``r`` of the ``t`` tied words fit in the top k and ``g`` of them are ground truth, they
    contribute ``r * g / t`` hits. The result therefore does not depend on word order.

    >>> relevance_rank_accuracy_one(np.array([0.9, 0.1, 0.5, 0.0]), np.array([1, 0, 1, 0]))
    1.0
    >>> relevance_rank_accuracy_one(np.array([1.0, 1.0, 1.0, 1.0]), np.array([1, 0, 0, 0]))
    0.25
    """
    k = int(truth.sum())
    if k == 0 or abs_scores.sum() <= 0:
        return float("nan")
    threshold = np.sort(abs_scores)[::-1][k - 1]
    above = abs_scores > threshold
    tied = abs_scores == threshold
    free_slots = k - int(above.sum())
    hits = float(truth[above].sum()) + free_slots * float(truth[tied].sum()) / float(tied.sum())
    return hits / k


def relevance_rank_accuracy_per_sentence(
    attributions: Sequence[Sequence[float]], ground_truth: Sequence[Sequence[int]]
) -> np.ndarray:
    """Relevance Rank Accuracy of every sentence (NaN where undefined).

    >>> relevance_rank_accuracy_per_sentence([[0.9, 0.0, 0.0, 0.1], [0.0, 0.0]], [[1, 1, 0, 0], [1, 0]])
    array([0.5, nan])
    """
    return np.array([relevance_rank_accuracy_one(s, h) for s, h in _pairs(attributions, ground_truth)])


def average_precision_one(abs_scores: np.ndarray, truth: np.ndarray) -> float:
    """Average precision of ``|score|`` against the mask; tied scores form one threshold.

    ``AP = sum_n (R_n - R_{n-1}) P_n`` over the distinct score thresholds, highest first (the step-wise area
    under the precision-recall curve, no interpolation).

    >>> average_precision_one(np.array([0.9, 0.1, 0.5, 0.0]), np.array([1, 0, 0, 1]))
    0.75
    """
    n_truth = float(truth.sum())
    if n_truth == 0 or abs_scores.sum() <= 0:
        return float("nan")
    order = np.argsort(-abs_scores, kind="stable")
    sorted_scores = abs_scores[order]
    true_positives = np.cumsum(truth[order])
    # The last position of each run of equal scores is where that threshold's precision/recall is read.
    last_of_threshold = np.r_[np.nonzero(np.diff(sorted_scores))[0], sorted_scores.size - 1]
    tp = true_positives[last_of_threshold]
    precision = tp / (last_of_threshold + 1)
    recall = tp / n_truth
    recall_steps = np.diff(np.r_[0.0, recall])
    return float(np.clip(np.sum(recall_steps * precision), 0.0, 1.0))


def auprc_per_sentence(
    attributions: Sequence[Sequence[float]], ground_truth: Sequence[Sequence[int]]
) -> np.ndarray:
    """AUPRC (average precision) of every sentence (NaN where undefined).

    >>> auprc_per_sentence([[0.9, 0.0, 0.0, 0.1], [1.0, 1.0]], [[1, 1, 0, 0], [0, 0]])
    array([0.75,  nan])
    """
    return np.array([average_precision_one(s, h) for s, h in _pairs(attributions, ground_truth)])
