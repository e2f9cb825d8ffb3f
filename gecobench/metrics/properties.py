"""Property metrics of explanations (Co-12 properties of Nauta et al. 2023, as implemented by XAIB).

All are computed per sentence on word-level attributions and then averaged. Every sentence is normalised on
its own, never over a batch::

    p_j = |s_j| / sum_k |s_k|          (a probability distribution over the sentence's words)

A sentence whose attribution is all zero has no distribution and is undefined (NaN). XAIB min-max
normalises over the whole batch instead, which makes a sentence's score depend on which other sentences
share its batch; per-sentence normalisation does not.

Distances between two explanations of the same sentence use the total variation distance
``TV(p, q) = 1/2 * sum_j |p_j - q_j|`` in [0, 1]: 0 for identical distributions, 1 for disjoint supports.
It is bounded, symmetric, does not depend on the sign or scale of the raw scores, and reads as "the share of
attribution mass that must move".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gecobench.metrics._ragged import Ragged, check_same_shape, flatten

PROPERTY_META: dict[str, dict[str, Any]] = {
    "model_randomisation_check": {
        "name": "model_randomisation_check", "property": "correctness", "direction": "higher",
        "range": [0.0, 1.0], "best": 1.0,
    },
    "small_noise_check": {
        "name": "small_noise_check", "property": "continuity", "direction": "lower",
        "range": [0.0, 1.0], "best": 0.0,
    },
    "label_difference": {
        "name": "label_difference", "property": "contrastivity", "direction": "higher",
        "range": [0.0, 1.0], "best": 1.0,
    },
    "methods_agreement": {
        "name": "methods_agreement", "property": "coherence", "direction": "lower",
        "range": [0.0, 1.0], "best": 0.0,
    },
    "sparsity": {
        "name": "sparsity", "property": "compactness", "direction": "higher",
        "range": [0.0, 1.0], "best": 1.0,
    },
    "covariate_complexity": {
        "name": "covariate_complexity", "property": "covariate complexity", "direction": "lower",
        "range": [0.0, 1.0], "best": 0.0,
    },
}

Ragged2D = Sequence[Sequence[float]]


def _normalise(scores: Ragged) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence |s| / sum |s| on the flat array; returns (p, defined per sentence).

    Computed on the magnitudes scaled by each sentence's maximum (:meth:`Ragged.scaled_magnitudes`), so
    1e308 scores do not overflow the sum and 1e-308 scores are not summed as subnormals.
    """
    magnitude = scores.scaled_magnitudes()
    total = scores.per_sentence_sum(magnitude)
    defined = total > 0
    safe_total = np.where(defined, total, 1.0)
    return magnitude / safe_total[scores.sentence_of], defined


def normalise_attributions(attributions: Ragged2D) -> list[np.ndarray]:
    """Each sentence as a distribution ``|s| / sum |s|``; an all-zero sentence becomes all NaN.

    >>> normalise_attributions([[1.0, -3.0], [0.0, 0.0]])
    [array([0.25, 0.75]), array([nan, nan])]
    """
    scores = flatten(attributions, "attributions")
    p, defined = _normalise(scores)
    p = np.where(defined[scores.sentence_of], p, np.nan)
    return scores.split(p)


def total_variation_per_sentence(
    first: Ragged2D, second: Ragged2D, first_field: str = "predictions", second_field: str = "references"
) -> np.ndarray:
    """Total variation distance between the normalised attributions of the same sentences.

    NaN where either sentence's attribution is all zero.

    >>> total_variation_per_sentence([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]], [[0.0, 2.0], [-5.0, -5.0], [1.0, 0.0]])
    array([ 1.,  0., nan])
    """
    a = flatten(first, first_field)
    b = flatten(second, second_field)
    check_same_shape(a, b, first_field, second_field)
    p, p_defined = _normalise(a)
    q, q_defined = _normalise(b)
    tv = 0.5 * a.per_sentence_sum(np.abs(p - q))
    tv = np.clip(tv, 0.0, 1.0)
    tv[~(p_defined & q_defined)] = np.nan
    return tv


def model_randomisation_check_per_sentence(trained: Ragged2D, randomised: Ragged2D) -> np.ndarray:
    """MRC: TV distance between the trained model's and a re-initialised model's attributions (higher is better).

    >>> model_randomisation_check_per_sentence([[1.0, 0.0, 0.0]], [[0.0, 1.0, 1.0]])
    array([1.])
    """
    return total_variation_per_sentence(trained, randomised, "predictions", "references")


def small_noise_check_per_sentence(clean: Ragged2D, noisy: Ragged2D) -> np.ndarray:
    """SNC: TV distance between attributions of an input and of the same input with small embedding noise.

    Lower is better (a continuous explanation barely moves).

    >>> small_noise_check_per_sentence([[3.0, 1.0]], [[2.0, 2.0]])
    array([0.25])
    """
    return total_variation_per_sentence(clean, noisy, "predictions", "references")


def label_difference_per_sentence(target_a: Ragged2D, target_b: Ragged2D) -> np.ndarray:
    """LD: TV distance between explanations of the same sentence for two different target classes.

    Higher is better (a contrastive explanation changes with the class explained).

    >>> label_difference_per_sentence([[1.0, 0.0]], [[1.0, 1.0]])
    array([0.5])
    """
    return total_variation_per_sentence(target_a, target_b, "predictions", "references")


def methods_agreement_per_sentence(attributions: Ragged2D, others: Sequence[Ragged2D]) -> np.ndarray:
    """DMA: per sentence, mean TV distance from one explainer to each other explainer (lower is better).

    Other explainers undefined on a sentence are left out of its mean; NaN when the explainer itself or
    all others are undefined there.

    >>> methods_agreement_per_sentence([[1.0, 0.0]], [[[1.0, 0.0]], [[0.0, 1.0]]])
    array([0.5])
    """
    if others is None or len(others) == 0:
        raise ValueError("others: at least one other explainer's attributions are required")
    distances = np.vstack([
        total_variation_per_sentence(attributions, other, "predictions", f"others[{i}]")
        for i, other in enumerate(others)
    ])
    n_defined = np.sum(~np.isnan(distances), axis=0)
    sums = np.nansum(distances, axis=0)
    out = np.full(distances.shape[1], np.nan)
    out[n_defined > 0] = sums[n_defined > 0] / n_defined[n_defined > 0]
    return out


def methods_agreement_by_explainer(attributions: Mapping[str, Ragged2D]) -> dict[str, np.ndarray]:
    """DMA of every explainer against all the others, ``{name: per-sentence values}``.

    >>> out = methods_agreement_by_explainer({"a": [[1.0, 0.0]], "b": [[1.0, 0.0]], "c": [[0.0, 1.0]]})
    >>> {name: values.tolist() for name, values in out.items()}
    {'a': [0.5], 'b': [0.5], 'c': [1.0]}
    """
    if not isinstance(attributions, Mapping) or len(attributions) < 2:
        raise ValueError("attributions: expected a dict of at least two explainers {name: attributions}")
    names = list(attributions)
    return {
        name: methods_agreement_per_sentence(attributions[name], [attributions[o] for o in names if o != name])
        for name in names
    }


def sparsity_per_sentence(attributions: Ragged2D) -> np.ndarray:
    """SP: Gini index (Hurley & Rickard 2009) of the normalised attributions; higher = sparser.

    ``G = 1 - 2 * sum_k p_(k) * (n - k + 1/2) / n`` with ``p`` sorted ascending. 0 for a uniform
    attribution, ``1 - 1/n`` when one word holds all mass (so the maximum grows with sentence length).
    NaN for an all-zero attribution.

    >>> sparsity_per_sentence([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 5.0], [0.0, 0.0]])
    array([0.  , 0.75,  nan])
    """
    scores = flatten(attributions, "attributions")
    p, defined = _normalise(scores)
    order = np.lexsort((p, scores.sentence_of))
    starts = np.concatenate([[0], np.cumsum(scores.lengths)[:-1]])
    sorted_sentence = scores.sentence_of[order]
    rank = np.arange(p.size) - starts[sorted_sentence] + 1
    n = scores.lengths[sorted_sentence].astype(np.float64)
    weighted = p[order] * (n - rank + 0.5) / n
    gini = 1.0 - 2.0 * np.bincount(sorted_sentence, weights=weighted, minlength=scores.n_sentences)
    gini = np.clip(gini, 0.0, 1.0)
    gini[~defined] = np.nan
    return gini


def covariate_complexity_per_sentence(attributions: Ragged2D) -> np.ndarray:
    """CVR: normalised Shannon entropy ``H(p) / ln(n)`` of the normalised attributions; lower = simpler.

    0 when one word holds all mass, 1 for a uniform attribution. NaN for an all-zero attribution or a
    one-word sentence (``ln 1 = 0``: no complexity to measure).

    >>> covariate_complexity_per_sentence([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 5.0], [2.0]])
    array([ 1.,  0., nan])
    """
    scores = flatten(attributions, "attributions")
    p, defined = _normalise(scores)
    plogp = np.zeros_like(p)
    positive = p > 0
    plogp[positive] = p[positive] * np.log(p[positive])
    entropy = 0.0 - scores.per_sentence_sum(plogp)  # 0.0 - x avoids a printed -0.
    lengths = scores.lengths.astype(np.float64)
    out = np.full(scores.n_sentences, np.nan)
    ok = defined & (lengths > 1)
    out[ok] = np.clip(entropy[ok] / np.log(lengths[ok]), 0.0, 1.0)
    return out
