"""Relative Mass Accuracy: a model's Mass Accuracy divided by a baseline model's on the same sentences.

The GECOBench paper compares fine-tuning regimes against zero-shot BERT: ``RMA = MA / MA_baseline`` per
sentence. RMA > 1 (log RMA > 0) means the model under study puts more mass on the ground truth than the
baseline. A pair is excluded when either value is undefined (NaN/None) or zero (the ratio or its logarithm
is then undefined).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

METRIC_META: dict[str, Any] = {
    "name": "relative_mass_accuracy",
    "direction": "higher",
    # Unbounded: median ln(RMA) lies in (-inf, inf); 0 means "as good as the baseline".
    "range": [None, None],
    "best": None,
    "neutral": 0.0,
    "property": "correctness relative to a baseline model",
}


def _as_mass_accuracies(values: Sequence[float | None], field: str) -> np.ndarray:
    if values is None:
        raise ValueError(f"{field}: missing (None); expected one Mass Accuracy (or None) per sentence")
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise ValueError(f"{field}: expected a list of Mass Accuracies, got {type(values).__name__}")
    if len(values) == 0:
        raise ValueError(f"{field}: empty input")
    for i, v in enumerate(values):
        # np.array would turn "0.5" into 0.5 and True into 1.0 without a word.
        if v is not None and (isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number))):
            raise ValueError(f"{field}: sentence {i} is {v!r}; expected a Mass Accuracy (a number) or None")
    arr = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{field}: expected one Mass Accuracy per sentence, got shape {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError(f"{field}: sentence {int(np.argmax(np.isinf(arr)))} is infinite")
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{field}: sentence {i} is {float(arr[i])!r}; a Mass Accuracy lies in [0, 1]")
    return arr


def relative_mass_accuracy(
    mass_accuracy: Sequence[float | None], baseline_mass_accuracy: Sequence[float | None]
) -> dict[str, Any]:
    """Compare per-sentence Mass Accuracy with a baseline's on the same sentences.

    Returns:
        ``median_log_rma`` (median of ln(MA / MA_baseline) over scored pairs), ``ratio_of_means``
        (mean MA / mean MA_baseline over the same pairs), ``n_scored``, ``n_excluded`` and ``log_rma``
        (per sentence, NaN where excluded).

    >>> out = relative_mass_accuracy([0.8, 0.5, None, 0.0], [0.4, 0.5, 0.3, 0.2])
    >>> round(out["median_log_rma"], 4), round(out["ratio_of_means"], 4), out["n_scored"], out["n_excluded"]
    (0.3466, 1.4444, 2, 2)
    """
    ma = _as_mass_accuracies(mass_accuracy, "predictions")
    base = _as_mass_accuracies(baseline_mass_accuracy, "references")
    if ma.shape != base.shape:
        raise ValueError(f"predictions has {ma.size} sentences but references has {base.size}")
    keep = np.isfinite(ma) & np.isfinite(base) & (ma > 0) & (base > 0)
    log_rma = np.full(ma.shape, np.nan)
    log_rma[keep] = np.log(ma[keep]) - np.log(base[keep])
    n_scored = int(keep.sum())
    return {
        "median_log_rma": float(np.median(log_rma[keep])) if n_scored else float("nan"),
        "ratio_of_means": float(ma[keep].mean() / base[keep].mean()) if n_scored else float("nan"),
        "n_scored": n_scored,
        "n_excluded": int(ma.size - n_scored),
        "log_rma": log_rma,
    }
