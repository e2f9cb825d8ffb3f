"""Mass Accuracy (Wilming et al. 2025, GECOBench): the share of attribution mass on ground-truth words.

For one sentence with word attributions ``s`` and ground-truth mask ``h`` (1 = the word carries the gender
signal), ``MA = sum_j |s_j| h_j / sum_j |s_j|``. MA lies in [0, 1]; higher is better; 1 means every bit of
attribution mass falls on ground-truth words.

A sentence is *undefined* (NaN) when its attribution is all zero (no mass to distribute) or when it has no
ground-truth word (nothing to hit). Undefined sentences are excluded from the aggregates and counted in
``n_undefined`` by :func:`summarize`: they are never scored as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gecobench.metrics._ragged import Ragged, check_binary, check_same_shape, flatten, scale_by_sentence_peak
from gecobench.words import fold_token_scores_to_words

METRIC_META: dict[str, Any] = {
    "name": "mass_accuracy",
    "direction": "higher",
    "range": [0.0, 1.0],
    "best": 1.0,
    "property": "correctness (ground truth)",
}


def mass_accuracy_per_sentence(
    attributions: Sequence[Sequence[float]], ground_truth: Sequence[Sequence[int]]
) -> np.ndarray:
    """Mass Accuracy of every sentence, vectorised over ragged sentences.

    Args:
        attributions: per sentence, one score per word (any sign; the absolute value is used).
        ground_truth: per sentence, 0/1 per word, same lengths as ``attributions``.

    Returns:
        float64 array with one value per sentence; NaN where the sentence is undefined (all-zero
        attribution, or no ground-truth word).

    The paper's example: ground truth (1, 1, 0, 0) and scores (0.9, 0, 0, 0.1).

    >>> mass_accuracy_per_sentence([[0.9, 0.0, 0.0, 0.1]], [[1, 1, 0, 0]])
    array([0.9])
    >>> mass_accuracy_per_sentence([[-2.0, 2.0], [0.0, 0.0], [1.0, 1.0]], [[1, 0], [1, 0], [0, 0]])
    array([0.5, nan, nan])
    """
    scores = flatten(attributions, "attributions")
    mask = flatten(ground_truth, "ground_truth", keep_integer_dtype=True)
    check_same_shape(scores, mask, "attributions", "ground_truth")
    check_binary(mask, "ground_truth")
    return _mass_accuracy_flat(np.abs(scores.flat), mask.flat, scores)


def mass_accuracy_flat(
    scores: np.ndarray, ground_truth: np.ndarray, lengths: Sequence[int] | np.ndarray
) -> np.ndarray:
    """Mass Accuracy of sentences already concatenated into flat arrays (the fastest entry point).

    Args:
        scores: all word attributions, sentence after sentence.
        ground_truth: the matching 0/1 mask.
        lengths: number of words of each sentence (sums to ``len(scores)``).

    >>> mass_accuracy_flat(np.array([0.9, 0.0, 0.0, 0.1, 1.0, 3.0]), np.array([1, 1, 0, 0, 0, 1]), [4, 2])
    array([0.9 , 0.75])
    """
    flat_scores = np.asarray(scores, dtype=np.float64)
    flat_mask = np.asarray(ground_truth)
    sizes = np.asarray(lengths, dtype=np.int64)
    if flat_scores.ndim != 1 or flat_mask.shape != flat_scores.shape:
        raise ValueError(f"scores {flat_scores.shape} and ground_truth {flat_mask.shape} must be flat and equal-sized")
    if sizes.ndim != 1 or (sizes < 0).any() or int(sizes.sum()) != flat_scores.size:
        raise ValueError(f"lengths must be non-negative and sum to {flat_scores.size}, got sum {int(sizes.sum())}")
    layout = Ragged(flat=flat_scores, lengths=sizes)
    if not np.isfinite(flat_scores).all():
        sentence, word = layout.sentence_at(int(np.argmin(np.isfinite(flat_scores))))
        raise ValueError(f"scores: sentence {sentence} has a NaN or infinite value at position {word}")
    check_binary(Ragged(flat=flat_mask, lengths=sizes), "ground_truth")
    return _mass_accuracy_flat(np.abs(flat_scores), flat_mask, layout)


def _mass_accuracy_flat(abs_scores: np.ndarray, mask: np.ndarray, layout: Ragged) -> np.ndarray:
    """The vectorised core: per-sentence sums by ``np.add.reduceat`` on the concatenated sentences.

    Each sentence is first scaled by a power of two that brings its largest ``|score|`` into [0.5, 1)
    (exact, so the ratio is unchanged), so that scores of 1e308 cannot overflow the sum to infinity (which
    gave MA 0) and scores of 1e-308 are not summed in the subnormal range.
    """
    abs_scores = scale_by_sentence_peak(abs_scores, layout)
    total = layout.per_sentence_sum(abs_scores)
    on_truth = layout.per_sentence_sum(abs_scores * mask)
    n_truth = layout.per_sentence_sum(mask)
    defined = (total > 0) & (n_truth > 0)
    result = np.full(layout.n_sentences, np.nan)
    # Clip because float summation can overshoot 1 by an ulp when all mass is on the ground truth.
    result[defined] = np.clip(on_truth[defined] / total[defined], 0.0, 1.0)
    return result


def mass_accuracy_loop(
    attributions: Sequence[Sequence[float]], ground_truth: Sequence[Sequence[int]]
) -> np.ndarray:
    """Reference implementation, one sentence at a time (used to check and benchmark the vectorised one).

    >>> mass_accuracy_loop([[0.9, 0.0, 0.0, 0.1]], [[1, 1, 0, 0]])
    array([0.9])
    """
    out = np.full(len(attributions), np.nan)
    for i, (s, h) in enumerate(zip(attributions, ground_truth)):
        a = np.abs(np.asarray(s, dtype=np.float64))
        m = np.asarray(h, dtype=np.float64)
        if a.size and a.max() > 0:
            a = np.ldexp(a, -np.frexp(a.max())[1])  # scale-safe and exact, as the vectorised version
        total = a.sum()
        if total > 0 and m.sum() > 0:
            out[i] = min(1.0, float((a * m).sum() / total))
    return out


# Token scores at least this large are scaled down before folding (a word of a few such tokens would sum to inf).
_FOLD_OVERFLOW_GUARD = 2.0**1000


def fold_token_attributions(
    attributions: Sequence[Sequence[float]],
    word_ids: Sequence[Sequence[int | None]],
    ground_truth: Sequence[Sequence[int]],
) -> list[np.ndarray]:
    """Turn token-level attributions into word-level ones with the hub's single folding rule.

    Each sentence is folded with :func:`gecobench.words.fold_token_scores_to_words` (absolute value per
    token, summed per word, tokens without a word dropped) to as many words as its ground truth has. A
    sentence whose scores reach 2**1000 is first scaled by a power of two so that the sums stay finite (MA,
    RRA and AUPRC, the callers, do not depend on the scale).

    >>> fold_token_attributions([[9.0, -1.0, 2.0, 0.5]], [[None, 0, 0, 1]], [[1, 0]])
    [array([3. , 0.5])]
    """
    for field, value in (("attributions", attributions), ("word_ids", word_ids), ("ground_truth", ground_truth)):
        if value is None or isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
            raise ValueError(f"{field}: expected a list with one entry per sentence, got {type(value).__name__}")
    if len(attributions) != len(word_ids):
        raise ValueError(f"attributions has {len(attributions)} sentences but word_ids has {len(word_ids)}")
    if len(attributions) != len(ground_truth):
        raise ValueError(
            f"attributions has {len(attributions)} sentences but ground_truth has {len(ground_truth)}"
        )
    folded = []
    for i, (scores, ids, truth) in enumerate(zip(attributions, word_ids, ground_truth)):
        for field, value in (("attributions", scores), ("word_ids", ids), ("ground_truth", truth)):
            if value is None or isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
                raise ValueError(f"{field}: sentence {i} is {value!r}; expected a list")
        raw_scores = np.asarray(scores)
        if raw_scores.dtype.kind not in "biuf":
            raise ValueError(f"attributions: sentence {i} holds something other than numbers ({raw_scores.dtype})")
        if raw_scores.size and raw_scores.dtype.kind == "f":
            peak = float(np.max(np.abs(raw_scores)))
            if np.isfinite(peak) and peak >= _FOLD_OVERFLOW_GUARD:
                # Summing a word's tokens could overflow; every metric that folds is scale-invariant, so an
                # exact power-of-two scaling keeps its answer.
                raw_scores = np.ldexp(raw_scores.astype(np.float64), -int(np.frexp(peak)[1]))
        try:
            folded.append(fold_token_scores_to_words(raw_scores, ids, n_words=len(truth)))
        except ValueError as err:
            message = str(err).removeprefix("word_ids: ")
            raise ValueError(f"word_ids: sentence {i}: {message}") from None
    return folded


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, n_resamples: int, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean.

    Args:
        values: finite per-sentence values (drop undefined ones first).
        n_resamples: number of bootstrap resamples (> 0).
        seed: seed of the resampling, so the interval is reproducible.
        confidence: coverage of the interval, in (0, 1).

    Returns:
        ``(low, high)``; ``(nan, nan)`` when ``values`` is empty.

    >>> bootstrap_ci([0.5, 0.5, 0.5], n_resamples=100, seed=0)
    (0.5, 0.5)
    """
    if n_resamples <= 0:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return (float("nan"), float("nan"))
    if not np.isfinite(data).all():
        raise ValueError("bootstrap_ci: values must be finite; drop undefined sentences first")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    # Resample in chunks so that a million sentences times a thousand resamples never sits in memory.
    chunk = max(1, min(n_resamples, 20_000_000 // max(1, data.size)))
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        idx = rng.integers(0, data.size, size=(stop - start, data.size))
        means[start:stop] = data[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(low), float(high))


def summarize(per_sentence: Sequence[float] | np.ndarray, bootstrap: int = 0, seed: int = 0) -> dict[str, Any]:
    """Aggregate per-sentence values, excluding undefined (NaN) sentences.

    Returns:
        ``mean``, ``median`` (NaN when nothing is scored), ``n_scored``, ``n_undefined``, and ``ci_low`` /
        ``ci_high`` (95 % percentile bootstrap of the mean with ``bootstrap`` resamples; None when
        ``bootstrap`` is 0).

    >>> out = summarize([0.9, float("nan"), 0.5])
    >>> round(out["mean"], 3), out["median"], out["n_scored"], out["n_undefined"]
    (0.7, 0.7, 2, 1)
    """
    values = np.asarray(per_sentence, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"per_sentence must be one value per sentence, got shape {values.shape}")
    if np.isinf(values).any():
        raise ValueError(f"per_sentence: sentence {int(np.argmax(np.isinf(values)))} is infinite")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    scored = values[~np.isnan(values)]
    out: dict[str, Any] = {
        "mean": float(scored.mean()) if scored.size else float("nan"),
        "median": float(np.median(scored)) if scored.size else float("nan"),
        "n_scored": int(scored.size),
        "n_undefined": int(values.size - scored.size),
        "ci_low": None,
        "ci_high": None,
    }
    if bootstrap:
        out["ci_low"], out["ci_high"] = bootstrap_ci(scored, bootstrap, seed)
    return out


def module_result(
    name: str, per_sentence: Sequence[float] | np.ndarray, return_per_sentence: bool = False, bootstrap: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """The output dictionary every per-sentence ``evaluate`` module of the hub returns.

    ``{name: mean, "median", "n_scored", "n_undefined"}``, plus ``per_sentence`` (None where undefined) when
    asked and ``ci_low``/``ci_high`` with ``bootstrap`` resamples.

    >>> module_result("sparsity", [0.5, float("nan")], return_per_sentence=True)
    {'sparsity': 0.5, 'median': 0.5, 'n_scored': 1, 'n_undefined': 1, 'per_sentence': [0.5, None]}
    """
    summary = summarize(per_sentence, bootstrap=bootstrap, seed=seed)
    result: dict[str, Any] = {
        name: summary["mean"],
        "median": summary["median"],
        "n_scored": summary["n_scored"],
        "n_undefined": summary["n_undefined"],
    }
    if return_per_sentence:
        result["per_sentence"] = [None if np.isnan(v) else float(v) for v in np.asarray(per_sentence, dtype=np.float64)]
    if bootstrap:
        result["ci_low"], result["ci_high"] = summary["ci_low"], summary["ci_high"]
    return result
