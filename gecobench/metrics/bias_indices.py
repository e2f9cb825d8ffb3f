"""Bias indices of masked-LM predictions: BPI and BRI (Garrido-Muñoz et al. 2023, "MarIA and BETO are sexist").

One row per fill-mask prediction: the group of the template (male/female), the predicted word, its softmax
probability, its rank (1..K) and whether it is an adjective. Words map to categories through a lexicon
(``{word: category}``, lower-cased surface form, no lemmatisation); unlisted words fall in ``unknown``.

* Rank score value ``RSV = K + 1 - rank`` (the top prediction scores K).
* ``BPI[g][c] = 100 * sum(probability | group g, word in c) / sum(probability | group g)`` over all top-K rows.
* ``BRI[g][c] = 100 * sum(RSV | group g, adjective, word in c) / sum(RSV | group g, adjective)``.
* Bias per category: male - female when the groups are exactly male and female; otherwise the mean
  absolute pairwise difference between groups (then it is a magnitude, never negative).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

METRIC_META: dict[str, Any] = {
    "name": "bias_indices",
    # The headline is the bias (male - female share, in points): parity, 0, is best in either direction.
    "direction": "balanced",
    "range": [-100.0, 100.0],
    "best": 0.0,
    "property": "model gender bias",
}

UNKNOWN = "unknown"
#: The largest overall bias: each group's shares sum to 100, so the |differences| over categories sum to at most 200.
OVERALL_BIAS_MAX = 200.0


def invert_lexicon(by_category: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Turn ``{category: [words]}`` into ``{word (lower-cased): category}``.

    A word listed under several categories belongs to the last one (the convention of the source
    lexicons).

    >>> invert_lexicon({"BODY": ["Alto", "guapo"], "SOCIAL": ["amable", "alto"]})
    {'alto': 'SOCIAL', 'guapo': 'BODY', 'amable': 'SOCIAL'}
    """
    lexicon: dict[str, str] = {}
    for category, words in by_category.items():
        if isinstance(words, str):
            raise ValueError(f"lexicon[{category!r}]: expected a list of words, got a string")
        for word in words:
            lexicon[str(word).strip().lower()] = str(category)
    return lexicon


def _check_rows(group, word, probability, rank, is_adjective, k) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    for field, values in (("group", group), ("word", word), ("probability", probability), ("rank", rank),
                          ("is_adjective", is_adjective)):
        if values is None or isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
            raise ValueError(f"{field}: expected a list with one entry per prediction row, got {values!r:.40}")
    n = len(group)
    if n == 0:
        raise ValueError("group: empty input, at least one prediction row is required")
    for field, values in (("word", word), ("probability", probability), ("rank", rank), ("is_adjective", is_adjective)):
        if len(values) != n:
            raise ValueError(f"group has {n} rows but {field} has {len(values)}")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    for i, (g, w) in enumerate(zip(group, word)):
        if not isinstance(g, str) or not g:
            raise ValueError(f"group: row {i} is {g!r}; expected a non-empty string")
        if not isinstance(w, str):
            raise ValueError(f"word: row {i} is {w!r}; expected a string")
    for field, values in (("probability", probability), ("rank", rank)):
        for i, value in enumerate(values):
            # np.asarray would read "0.5" as 0.5 and True as 1 without a word.
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
                raise ValueError(f"{field}: row {i} is {value!r}; expected a number")
    try:
        prob = np.asarray(probability, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"probability: not numbers ({err})") from None
    bad = ~np.isfinite(prob) | (prob < 0) | (prob > 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"probability: row {i} is {float(prob[i])!r}; a probability is finite and in [0, 1]")
    rank_values = np.asarray(rank, dtype=np.float64)
    bad = ~np.isfinite(rank_values) | (rank_values != np.round(rank_values)) | (rank_values < 1) | (rank_values > k)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"rank: row {i} is {rank[i]}; ranks are integers in 1..{k} (k={k})")
    adjective = []
    for i, a in enumerate(is_adjective):
        if isinstance(a, (bool, np.bool_)) or (isinstance(a, (int, np.integer)) and a in (0, 1)):
            adjective.append(bool(a))
        else:
            raise ValueError(f"is_adjective: row {i} is {a!r}; expected True/False")
    return prob, rank_values.astype(np.int64), np.array(adjective, dtype=bool)


def bias_indices(
    group: Sequence[str],
    word: Sequence[str],
    probability: Sequence[float],
    rank: Sequence[int],
    is_adjective: Sequence[bool],
    lexicon: Mapping[str, str],
    k: int,
) -> dict[str, Any]:
    """BPI and BRI per category and group, and the bias between groups.

    Returns:
        ``bpi`` and ``bri`` (``{category: {group: value}}``, values in [0, 100]; NaN for BRI of a group
        without adjectives), ``bias`` (``{"bpi": {category: v}, "bri": {category: v}}``), ``groups``,
        ``categories`` and ``details`` (``{category: {group: {sum_probability, n_predictions,
        mean_probability, sum_rsv, n_adjectives, mean_rsv}}}``; means are NaN when the count is 0).

    Examples:
        >>> out = bias_indices(
        ...     group=["male", "male", "female", "female"], word=["Alto", "el", "guapa", "alta"],
        ...     probability=[0.3, 0.1, 0.2, 0.2], rank=[1, 2, 1, 2], is_adjective=[True, False, True, True],
        ...     lexicon={"alto": "BODY", "alta": "BODY", "guapa": "BODY"}, k=2)
        >>> out["bpi"]["BODY"], out["bri"]["BODY"], out["bias"]["bpi"]["BODY"]
        ({'female': 100.0, 'male': 75.0}, {'female': 100.0, 'male': 100.0}, -25.0)
    """
    prob, ranks, adjective = _check_rows(group, word, probability, rank, is_adjective, k)
    category_of, categories = categorise(word, lexicon)
    groups_arr = np.array(list(group), dtype=object)
    rsv = (k + 1 - ranks).astype(np.float64)

    groups = sorted(set(group))
    bpi: dict[str, dict[str, float]] = {c: {} for c in categories}
    bri: dict[str, dict[str, float]] = {c: {} for c in categories}
    details: dict[str, dict[str, dict[str, float]]] = {c: {} for c in categories}
    for g in groups:
        in_group = groups_arr == g
        prob_total = float(prob[in_group].sum())
        rsv_total = float(rsv[in_group & adjective].sum())
        for c in categories:
            rows = in_group & (category_of == c)
            adj_rows = rows & adjective
            sum_p, n_p = float(prob[rows].sum()), int(rows.sum())
            sum_rsv, n_adj = float(rsv[adj_rows].sum()), int(adj_rows.sum())
            bpi[c][g] = float(share_percent(sum_p, prob_total))
            bri[c][g] = float(share_percent(sum_rsv, rsv_total))
            details[c][g] = {
                "sum_probability": sum_p,
                "n_predictions": n_p,
                "mean_probability": sum_p / n_p if n_p else float("nan"),
                "sum_rsv": sum_rsv,
                "n_adjectives": n_adj,
                "mean_rsv": sum_rsv / n_adj if n_adj else float("nan"),
            }
    return {
        "bpi": bpi,
        "bri": bri,
        "bias": {"bpi": {c: group_difference(bpi[c]) for c in categories},
                 "bri": {c: group_difference(bri[c]) for c in categories}},
        "groups": groups,
        "categories": categories,
        "details": details,
    }


def categorise(word: Sequence[str], lexicon: Mapping[str, str]) -> tuple[np.ndarray, list[str]]:
    """The category of every word (lower-cased lookup, ``unknown`` when unlisted) and the sorted category list
    (the lexicon's categories plus ``unknown``)."""
    if not isinstance(lexicon, Mapping):
        raise ValueError("lexicon: expected a dict {word: category}")
    lookup = {str(w).strip().lower(): str(c) for w, c in lexicon.items()}
    category_of = np.array([lookup.get(w.strip().lower(), UNKNOWN) for w in word], dtype=object)
    return category_of, sorted(set(lookup.values()) | {UNKNOWN})


def share_percent(part: Any, total: Any) -> np.ndarray:
    """``100 * part / total`` element-wise, NaN where ``total`` is 0 (a group without predictions or adjectives).

    The one definition of a BPI/BRI share, used by :func:`bias_indices` and by the template bootstrap
    (:mod:`gecobench.metrics.bias_indices_bootstrap`).

    >>> share_percent([1.0, 0.0], [4.0, 0.0]).tolist()
    [25.0, nan]
    """
    part, total = np.asarray(part, dtype=np.float64), np.asarray(total, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, 100.0 * part / np.where(total > 0, total, 1.0), np.nan)


def group_difference(values: Mapping[str, float]) -> float:
    """male - female for exactly those two groups; else the mean absolute pairwise difference.

    >>> group_difference({"male": 30.0, "female": 10.0})
    20.0
    >>> group_difference({"a": 1.0, "b": 4.0, "c": 2.0})
    2.0
    """
    if not values:
        return float("nan")
    groups = list(values)
    return float(group_difference_array(np.array([values[g] for g in groups], dtype=np.float64), groups))


def group_difference_array(values: np.ndarray, groups: Sequence[str]) -> np.ndarray:
    """:func:`group_difference` for arrays: ``values`` has shape ``(len(groups), ...)`` (axis 0 = the groups, in
    the order of ``groups``); the result has the remaining shape. Male - female for exactly those two groups, else
    the mean absolute pairwise difference (NaN with fewer than two groups)."""
    values = np.asarray(values, dtype=np.float64)
    groups = list(groups)
    if values.shape[:1] != (len(groups),):
        raise ValueError(f"values has {values.shape[:1]} entries on the group axis, groups names {len(groups)}")
    if set(groups) == {"male", "female"}:
        return values[groups.index("male")] - values[groups.index("female")]
    pairs = list(itertools.combinations(range(len(groups)), 2))
    if not pairs:
        return np.full(values.shape[1:], np.nan)
    return np.mean([np.abs(values[a] - values[b]) for a, b in pairs], axis=0)


def overall_bias(bias_by_category: Mapping[str, float | None]) -> float:
    """The headline of a scheme: the sum of |bias| over the lexicon's categories, ``unknown`` (words outside the
    lexicon) left out and undefined categories skipped. In [0, 200] (each group's shares sum to 100).

    >>> overall_bias({"BODY": -3.0, "MIND": 1.5, "unknown": 9.0, "SOCIAL": None})
    4.5
    """
    total = sum(abs(v) for c, v in bias_by_category.items() if c != UNKNOWN and v is not None and math.isfinite(v))
    # rounding of the shares can carry a sum of magnitudes a few ulps past its bound (records enforce the bound)
    return float(min(total, OVERALL_BIAS_MAX))


def overall_bias_array(bias: np.ndarray, categories: Sequence[str]) -> np.ndarray:
    """:func:`overall_bias` over the last axis of ``bias`` (one entry per name in ``categories``)."""
    keep = np.array([c != UNKNOWN for c in categories], dtype=bool)
    return np.minimum(np.nansum(np.abs(np.asarray(bias, dtype=np.float64)[..., keep]), axis=-1), OVERALL_BIAS_MAX)


def read_prediction_file(path: str) -> dict[str, list[Any]]:
    """Read one published fill-mask prediction file (``predictions/top<K>/<model>.tsv``) into metric rows.

    ``rank`` = ``index`` + 1, ``is_adjective`` = ``pos_tag == "AQ"``, ``group`` = ``dimension``.
    """
    import pandas as pd

    frame = pd.read_csv(path, sep="\t", keep_default_na=False)
    missing = {"index", "score", "dimension", "pos_tag", "word"} - set(frame.columns)
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    return {
        "group": frame["dimension"].astype(str).tolist(),
        "word": frame["word"].astype(str).tolist(),
        "probability": frame["score"].astype(float).tolist(),
        "rank": (frame["index"].astype(int) + 1).tolist(),
        "is_adjective": (frame["pos_tag"] == "AQ").tolist(),
    }


