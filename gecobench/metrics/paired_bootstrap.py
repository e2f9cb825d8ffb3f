"""Differences of two mean Mass Accuracies with a bootstrap interval that respects pairing.

Two comparisons in GECOBench are paired by construction:

* the **gender gap** ``MA(male) − MA(female)``: the male and the female variant of one source sentence are a
  pair (same words apart from the gendered ones), so their MAs are correlated;
* the **explainer difference** ``MA(A) − MA(B)``: two explainers scored on the very same sentences.

Resampling the two sides independently ignores that correlation and gives intervals that are too wide (and,
for an unsigned gap, intervals that can never include 0). Here the unit that is resampled is the *cluster*
(the source sentence): each bootstrap draw picks source sentences with replacement and recomputes both means
from every variant of the drawn sentences. The statistic is the difference of the two means over defined
(finite) values, exactly as the point estimate is computed, so the interval and the value describe the same
number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _per_cluster_sums(values: np.ndarray, clusters: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Sum and count of the finite values of each cluster (undefined values are left out, never counted as 0)."""
    finite = np.isfinite(values)
    sums = np.bincount(clusters[finite], weights=values[finite], minlength=n_clusters)
    counts = np.bincount(clusters[finite], minlength=n_clusters).astype(np.float64)
    return sums, counts


def _as_vector(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one value per sentence, got shape {array.shape}")
    if np.isinf(array).any():
        raise ValueError(f"{name}: sentence {int(np.argmax(np.isinf(array)))} is infinite")
    return array


def _paired_inputs(
    values_a: Sequence[float] | np.ndarray, clusters_a: Sequence[Any], values_b: Sequence[float] | np.ndarray,
    clusters_b: Sequence[Any], n_resamples: int, confidence: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The checked inputs of a paired difference: both value vectors, each value's cluster as a code
    ``0..n_ids-1`` (numbered in order of first appearance, ``a`` before ``b``, so every statistic draws the same
    clusters for a seed), and ``n_ids``. Raises ValueError naming the argument that is wrong."""
    a = _as_vector(values_a, "values_a")
    b = _as_vector(values_b, "values_b")
    if len(clusters_a) != a.size:
        raise ValueError(f"clusters_a has {len(clusters_a)} entries for {a.size} values_a")
    if len(clusters_b) != b.size:
        raise ValueError(f"clusters_b has {len(clusters_b)} entries for {b.size} values_b")
    if n_resamples < 0:
        raise ValueError(f"n_resamples must be >= 0, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    ids = {c: i for i, c in enumerate(dict.fromkeys([*clusters_a, *clusters_b]))}
    codes_a = np.fromiter((ids[c] for c in clusters_a), dtype=np.int64, count=a.size)
    codes_b = np.fromiter((ids[c] for c in clusters_b), dtype=np.int64, count=b.size)
    return a, b, codes_a, codes_b, len(ids)


def clustered_mean_difference(
    values_a: Sequence[float] | np.ndarray, clusters_a: Sequence[Any], values_b: Sequence[float] | np.ndarray,
    clusters_b: Sequence[Any], n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
) -> dict[str, Any]:
    """``mean(a) − mean(b)`` over finite values, with a percentile bootstrap interval over shared clusters.

    Args:
        values_a: one value per sentence of side a (NaN = undefined, left out of both the value and the
            interval).
        clusters_a: the cluster (source sentence id) of every value of side a; any hashable ids. Only clusters
            with at least one defined value on *both* sides take part, so a draw always compares like with like.
        values_b: as ``values_a``, for side b.
        clusters_b: as ``clusters_a``, for side b.
        n_resamples: bootstrap draws (0: no interval).
        seed: seed of the draws.
        confidence: interval level.

    Returns:
        ``value`` (None when a side has no defined value in the shared clusters), ``ci_low``/``ci_high``
        (None without resamples), ``n_clusters`` (shared clusters used), ``n_a``/``n_b`` (values used per
        side).

    A difference that only shifts every pair by the same amount has a zero-width interval, which an
    unpaired bootstrap cannot give:

    >>> out = clustered_mean_difference([0.6, 0.7, 0.8], [1, 2, 3], [0.5, 0.6, 0.7], [1, 2, 3], 200, 0)
    >>> round(out["value"], 6), round(out["ci_low"], 6), round(out["ci_high"], 6), out["n_clusters"]
    (0.1, 0.1, 0.1, 3)
    """
    a, b, codes_a, codes_b, n_ids = _paired_inputs(values_a, clusters_a, values_b, clusters_b, n_resamples, confidence)
    sums_a, counts_a = _per_cluster_sums(a, codes_a, n_ids)
    sums_b, counts_b = _per_cluster_sums(b, codes_b, n_ids)
    shared = (counts_a > 0) & (counts_b > 0)
    sums_a, counts_a, sums_b, counts_b = sums_a[shared], counts_a[shared], sums_b[shared], counts_b[shared]
    n_clusters = int(shared.sum())
    out: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "n_clusters": n_clusters,
                           "n_a": int(counts_a.sum()), "n_b": int(counts_b.sum())}
    if n_clusters == 0:
        return out
    out["value"] = float(sums_a.sum() / counts_a.sum() - sums_b.sum() / counts_b.sum())
    if n_resamples:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
        # every drawn cluster has a defined value on both sides, so no denominator is 0
        differences = sums_a[draws].sum(1) / counts_a[draws].sum(1) - sums_b[draws].sum(1) / counts_b[draws].sum(1)
        alpha = (1.0 - confidence) / 2.0
        low, high = np.quantile(differences, [alpha, 1.0 - alpha])
        out["ci_low"], out["ci_high"] = float(low), float(high)
    return out


def clustered_difference(
    values_a: Sequence[float] | np.ndarray, clusters_a: Sequence[Any], values_b: Sequence[float] | np.ndarray,
    clusters_b: Sequence[Any], n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
    statistic: str = "mean",
) -> dict[str, Any]:
    """``statistic(a) − statistic(b)`` with the paired bootstrap over shared clusters; ``statistic`` is
    ``"mean"`` (:func:`clustered_mean_difference`) or ``"median"`` (:func:`clustered_median_difference`), the
    statistic the metric's own point estimate uses (log RMA is a median over sentences, every other a mean)."""
    if statistic == "mean":
        return clustered_mean_difference(values_a, clusters_a, values_b, clusters_b, n_resamples, seed, confidence)
    if statistic == "median":
        return clustered_median_difference(values_a, clusters_a, values_b, clusters_b, n_resamples, seed, confidence)
    raise ValueError(f"statistic must be 'mean' or 'median', got {statistic!r}")


def clustered_median_difference(
    values_a: Sequence[float] | np.ndarray, clusters_a: Sequence[Any], values_b: Sequence[float] | np.ndarray,
    clusters_b: Sequence[Any], n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
) -> dict[str, Any]:
    """``median(a) − median(b)`` over finite values, with the same paired bootstrap as
    :func:`clustered_mean_difference` (same clusters taking part, same draws for the same seed, same output).

    A draw is a multiset of clusters; each side's median of the drawn clusters' values (with multiplicity) is a
    weighted median, computed for every draw at once on the values sorted once.

    >>> out = clustered_median_difference([1.0, 5.0, 9.0], [1, 2, 3], [0.0, 4.0, 100.0], [1, 2, 3], 0)
    >>> out["value"], out["n_clusters"]
    (1.0, 3)
    """
    a, b, codes_a, codes_b, n_ids = _paired_inputs(values_a, clusters_a, values_b, clusters_b, n_resamples, confidence)
    _, counts_a = _per_cluster_sums(a, codes_a, n_ids)
    _, counts_b = _per_cluster_sums(b, codes_b, n_ids)
    shared = (counts_a > 0) & (counts_b > 0)
    n_clusters = int(shared.sum())
    # clusters renumbered 0..n_clusters-1 in the order of the mean version, so a seed draws the same clusters
    renumber = np.full(n_ids, -1, dtype=np.int64)
    renumber[shared] = np.arange(n_clusters)
    sides = []
    for values, codes in ((a, codes_a), (b, codes_b)):
        keep = np.isfinite(values) & shared[codes]
        order = np.argsort(values[keep], kind="stable")
        sides.append((values[keep][order], renumber[codes[keep]][order]))
    out: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "n_clusters": n_clusters,
                           "n_a": int(sides[0][0].size), "n_b": int(sides[1][0].size)}
    if n_clusters == 0:
        return out
    out["value"] = float(np.median(sides[0][0]) - np.median(sides[1][0]))
    if n_resamples:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
        offsets = (np.arange(n_resamples, dtype=np.int64) * n_clusters)[:, None]
        multiplicity = np.bincount((draws + offsets).ravel(), minlength=n_resamples * n_clusters).reshape(
            n_resamples, n_clusters)
        medians = [_weighted_medians(values, clusters, multiplicity) for values, clusters in sides]
        alpha = (1.0 - confidence) / 2.0
        low, high = np.quantile(medians[0] - medians[1], [alpha, 1.0 - alpha])
        out["ci_low"], out["ci_high"] = float(low), float(high)
    return out


def _weighted_medians(sorted_values: np.ndarray, clusters: np.ndarray, multiplicity: np.ndarray) -> np.ndarray:
    """Per draw (row of ``multiplicity``: how often each cluster was drawn), the median of ``sorted_values``
    each counted as often as its cluster was drawn — ``np.median`` of the draw's multiset, without building it."""
    cumulative = np.cumsum(multiplicity[:, clusters], axis=1)
    total = cumulative[:, -1]
    # element k (0-based) of the sorted multiset is the first value whose cumulative count exceeds k
    lower = np.argmax(cumulative > ((total - 1) // 2)[:, None], axis=1)
    upper = np.argmax(cumulative > (total // 2)[:, None], axis=1)
    return (sorted_values[lower] + sorted_values[upper]) / 2.0


def verdict(difference: dict[str, Any]) -> str | None:
    """``"higher"`` / ``"lower"`` when the interval excludes 0, ``"tie"`` when it includes 0, None without one."""
    low, high = difference.get("ci_low"), difference.get("ci_high")
    if low is None or high is None:
        return None
    if low > 0:
        return "higher"
    if high < 0:
        return "lower"
    return "tie"
