"""Faithfulness of word attributions to the model (ERASER / ferret): comprehensiveness, sufficiency, AOPC, LOO tau.

Unlike Mass Accuracy these metrics do not use the ground truth: they ask whether the words an explanation ranks
highest are the ones the *model* relies on, by removing words and reading the model's probability of the
explained class ``p`` again (DeYoung et al. 2020, ERASER; Attanasio et al. 2023, ferret):

* **rationale** at removal fraction ``q``: the top ``floor(q * n)`` of the sentence's ``n`` words by
  ``|score|`` (ties by position, earlier first), leaving out words scored 0 (:func:`rationale_sizes`);
* **comprehensiveness** at ``q``: ``p(x) - p(x without the rationale)``. High = the top words carried the
  prediction;
* **sufficiency** at ``q``: ``p(x) - p(only the rationale)``. Low = the top words alone suffice;
* **AOPC** of either: the mean over the fractions ``0.1, 0.2, ..., 1.0`` whose rationale is non-empty and differs
  from the previous one (:func:`counted_in_aopc`), ferret's defaults;
* **leave-one-out tau**: Kendall's tau-b between ``|attribution|`` and every word's leave-one-out effect
  ``p(x) - p(x without that word)``. Near 1 = the ranking matches the model's one-word sensitivities.

Words, not tokens, are removed, the way the perturbation explainers remove them: every token of a removed word
is dropped and the sentence closes up (special tokens stay). A sentence without any counted rationale (an all-zero
attribution) is undefined (NaN), excluded from aggregates and counted, as for Mass Accuracy. Sentences shorter
than 10 words are averaged over fewer fractions (``floor(0.1 * 9) = 0`` words is no rationale).

This module is the math only; :mod:`gecobench.evaluation.faithfulness` calls the model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gecobench.metrics._ragged import flatten

#: ferret's removal fractions (10 %, 20 %, ..., 100 % of the words), the AOPC bins its evaluators average over
DEFAULT_REMOVAL_FRACTIONS: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))

FAITHFULNESS_META: dict[str, dict[str, Any]] = {
    "comprehensiveness": {
        "name": "comprehensiveness", "property": "faithfulness (model)", "direction": "higher",
        "range": [-1.0, 1.0], "best": 1.0,
    },
    "sufficiency": {
        "name": "sufficiency", "property": "faithfulness (model)", "direction": "lower",
        "range": [-1.0, 1.0], "best": -1.0,
    },
    "leave_one_out_tau": {
        "name": "leave_one_out_tau", "property": "faithfulness (model)", "direction": "higher",
        "range": [-1.0, 1.0], "best": 1.0,
    },
}


def check_fractions(fractions: Sequence[float]) -> np.ndarray:
    """Removal fractions as a float64 array; each in (0, 1], at least one.

    >>> check_fractions([0.1, 0.5])
    array([0.1, 0.5])
    """
    values = np.asarray(fractions, dtype=np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("fractions: need at least one removal fraction")
    bad = np.flatnonzero(~np.isfinite(values) | (values <= 0) | (values > 1))
    if bad.size:
        raise ValueError(f"fractions: index {int(bad[0])} is {float(values[bad[0]])!r}; every fraction must be in (0, 1]")
    return values


def ranking(scores: np.ndarray) -> np.ndarray:
    """Word indices from the highest ``|score|`` to the lowest; ties keep their order in the sentence.

    >>> ranking(np.array([0.1, -0.9, 0.5, 0.9])).tolist()
    [1, 3, 2, 0]
    """
    return np.argsort(-np.abs(np.asarray(scores, dtype=np.float64)), kind="stable")


def rationale_sizes(scores: np.ndarray, fractions: Sequence[float] = DEFAULT_REMOVAL_FRACTIONS) -> np.ndarray:
    """Words in the rationale at each fraction ``q``: ``floor(q * n)``, but only words with a non-zero score.

    ferret's rule (``perc``, ``only_pos``): the top ``floor(q * n)`` words, of which those scored 0 are left out
    (a zero says "not important", so it is never part of a rationale). 0 = no rationale at that fraction.

    >>> rationale_sizes(np.array([0.5, 0.0, 0.2, 0.1, 0.0]), [0.1, 0.2, 0.4, 1.0]).tolist()
    [0, 1, 2, 3]
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    values = check_fractions(fractions)
    # a hair of slack so 0.3 * 10 = 2.9999999999999996 counts as 3 words, as a reader would expect
    counts = np.floor(values * scores.size + 1e-9).astype(np.int64)
    return np.minimum(counts, int(np.count_nonzero(scores)))


def counted_in_aopc(sizes: np.ndarray) -> np.ndarray:
    """Which fractions the AOPC averages over: a non-empty rationale that differs from the previous one counted.

    As in ferret, a fraction whose rationale repeats the last one (same size, so the same nested top-k set) is
    not counted twice.

    >>> counted_in_aopc(np.array([0, 1, 1, 2, 2, 3])).tolist()
    [False, True, False, True, False, True]
    """
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    counted = np.zeros(sizes.size, dtype=bool)
    last = 0
    for index, size in enumerate(sizes):
        if size > 0 and size != last:
            counted[index], last = True, int(size)
    return counted


def removal_keep_masks(scores: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """0/1 keep-matrices ``(len(sizes), n_words)`` of one sentence for comprehensiveness and for sufficiency.

    Row ``f`` of the first drops the top ``sizes[f]`` words (everything else kept); row ``f`` of the second
    keeps only them. The model reads the sentence with the zeros removed.

    >>> comprehensive, sufficient = removal_keep_masks(np.array([0.1, 0.9, 0.5]), np.array([1, 2]))
    >>> comprehensive.tolist(), sufficient.tolist()
    ([[1, 0, 1], [1, 0, 0]], [[0, 1, 0], [0, 1, 1]])
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    order = ranking(scores)
    # rank_of[j] = position of word j in the ranking; word j is in the rationale when rank_of[j] < size
    rank_of = np.empty(scores.size, dtype=np.int64)
    rank_of[order] = np.arange(scores.size)
    in_top = rank_of[None, :] < np.asarray(sizes, dtype=np.int64).reshape(-1)[:, None]
    return (~in_top).astype(np.int64), in_top.astype(np.int64)


def leave_one_out_keep_masks(n_words: int) -> np.ndarray:
    """``(n_words, n_words)`` keep-matrix: row ``j`` removes word ``j`` only.

    >>> leave_one_out_keep_masks(3).tolist()
    [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    """
    return 1 - np.eye(int(n_words), dtype=np.int64)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b (ties corrected) of two equally long vectors; NaN when either is constant or has < 2 values.

    Computed over all pairs (sentences are short), so it needs nothing beyond numpy and agrees with
    ``scipy.stats.kendalltau``.

    >>> kendall_tau_b([1, 2, 3], [1, 2, 3]), kendall_tau_b([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    >>> round(kendall_tau_b([1, 2, 2, 3], [1, 3, 2, 4]), 6)
    0.912871
    """
    a, b = np.asarray(x, dtype=np.float64).reshape(-1), np.asarray(y, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"kendall_tau_b: vectors of different lengths {a.size} and {b.size}")
    if a.size < 2:
        return float("nan")
    upper = np.triu_indices(a.size, k=1)
    da = np.sign(a[:, None] - a[None, :])[upper]
    db = np.sign(b[:, None] - b[None, :])[upper]
    untied_a, untied_b = np.count_nonzero(da), np.count_nonzero(db)
    if untied_a == 0 or untied_b == 0:
        return float("nan")
    return float(np.clip(np.sum(da * db) / math.sqrt(untied_a * untied_b), -1.0, 1.0))


def aopc_per_sentence(full_probability: Sequence[float], perturbed_probability: Sequence[Sequence[float]],
                      field: str = "perturbed_probability") -> np.ndarray:
    """Area over the perturbation curve per sentence: the mean of ``p(x) - p(perturbed x)`` over its rationales.

    Args:
        full_probability: per sentence, the model's probability of the explained class on the whole sentence.
        perturbed_probability: per sentence, that probability on each perturbed sentence (one per counted
            rationale; any number, an empty list for a sentence without a rationale).
        field: the input's name in error messages.

    Returns:
        float64 array, one value per sentence, NaN where the sentence has no perturbation (undefined).

    >>> aopc_per_sentence([0.9, 0.8, 0.7], [[0.7, 0.1], [0.9], []]).round(6).tolist()
    [0.5, -0.1, nan]
    """
    full = np.asarray(full_probability, dtype=np.float64).reshape(-1)
    if full.size == 0:
        raise ValueError("full_probability: empty input")
    if len(perturbed_probability) != full.size:
        raise ValueError(f"{field}: {len(perturbed_probability)} sentences but full_probability has {full.size}")
    bad = np.flatnonzero(~np.isfinite(full) | (full < 0) | (full > 1))
    if bad.size:
        raise ValueError(f"full_probability: sentence {int(bad[0])} is {float(full[bad[0]])!r}; probabilities must be in [0, 1]")
    out = np.full(full.size, np.nan)
    for index, row in enumerate(perturbed_probability):
        try:
            values = np.asarray(row if row is not None else [], dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{field}: sentence {index} is not a list of numbers ({error})") from None
        wrong = np.flatnonzero(~np.isfinite(values) | (values < 0) | (values > 1))
        if wrong.size:
            raise ValueError(f"{field}: sentence {index} position {int(wrong[0])} is {float(values[wrong[0]])!r}; "
                             "probabilities must be in [0, 1]")
        if values.size:
            out[index] = float(np.mean(full[index] - values))
    return out


def comprehensiveness_per_sentence(full_probability: Sequence[float],
                                   probability_without_rationale: Sequence[Sequence[float]]) -> np.ndarray:
    """AOPC comprehensiveness per sentence: mean over rationales of ``p(x) - p(x without the rationale)``.

    >>> comprehensiveness_per_sentence([0.9], [[0.7, 0.1]]).round(6).tolist()
    [0.5]
    """
    return aopc_per_sentence(full_probability, probability_without_rationale, "probability_without_rationale")


def sufficiency_per_sentence(full_probability: Sequence[float],
                             probability_rationale_only: Sequence[Sequence[float]]) -> np.ndarray:
    """AOPC sufficiency per sentence: mean over rationales of ``p(x) - p(only the rationale of x)``.

    >>> sufficiency_per_sentence([0.9], [[0.5, 0.9]]).round(6).tolist()
    [0.2]
    """
    return aopc_per_sentence(full_probability, probability_rationale_only, "probability_rationale_only")


def leave_one_out_tau_per_sentence(attributions: Sequence[Sequence[float]],
                                   leave_one_out: Sequence[Sequence[float]]) -> np.ndarray:
    """Kendall tau-b between ``|attribution|`` and the leave-one-out drop of every word, per sentence.

    NaN where the sentence has one word, its attribution is all zero, or its leave-one-out effects are all
    equal (no ranking to compare).

    >>> leave_one_out_tau_per_sentence([[0.1, 0.9, 0.5], [0.0, 0.0]], [[0.0, 0.6, 0.2], [0.3, 0.1]]).tolist()
    [1.0, nan]
    """
    scores = flatten(attributions, "attributions", allow_empty_sentence=False)
    effects = flatten(leave_one_out, "leave_one_out", allow_empty_sentence=False)
    if not np.array_equal(scores.lengths, effects.lengths):
        index = int(np.flatnonzero(scores.lengths != effects.lengths)[0]) if scores.n_sentences == effects.n_sentences else None
        where = f"sentence {index} has {scores.lengths[index]} attributions but {effects.lengths[index]} values" \
            if index is not None else f"{scores.n_sentences} sentences of attributions but {effects.n_sentences}"
        raise ValueError(f"leave_one_out: {where}")
    out = np.full(scores.n_sentences, np.nan)
    for index, (s, e) in enumerate(zip(scores.split(np.abs(scores.flat)), effects.split(effects.flat))):
        if s.sum() > 0:
            out[index] = kendall_tau_b(s, e)
    return out
