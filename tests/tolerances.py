"""Floating-point tolerances derived from the dtype and the scale of the values compared.

A result computed in a floating-point dtype carries a rounding error of about ``eps * |value|`` per operation;
a sum, a dot product, a forward pass or a least-squares fit accumulates several of them, and which ones depends
on the kernel the CPU (or GPU) gets: SIMD width, thread count and blocking change the order of the additions.
So a check must allow a few units in the last place (ulps) of accumulated error *at the scale of the values*:
a fixed ``atol=1e-6`` on float32 scores of size 3 allows about 3 ulps, and a purely element-wise relative check
of a score near zero allows none (its error comes from the large terms that cancelled into it, not from its own
size). These helpers state the tolerance once, from ``numpy.finfo``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Units in the last place of accumulated error a check allows: the error of an explainer's scores relative to
# the largest score measures a few ulps to a few tens of ulps (kernel_shap's float32 fit: 6 ulps on one CPU,
# 2 on another); 64 leaves room for other kernels while staying far below any real difference.
ACCUMULATED_ULPS = 64


def ulp_tolerance(dtype: np.dtype | type, scale: float, ulps: int = ACCUMULATED_ULPS) -> float:
    """Absolute tolerance for values of magnitude ``scale`` computed in ``dtype``: ``ulps * eps(dtype) * scale``."""
    info = np.finfo(dtype)
    return float(ulps * info.eps * max(abs(float(scale)), float(info.tiny)))


def relative_ulp_tolerance(dtype: np.dtype | type, ulps: int = ACCUMULATED_ULPS) -> float:
    """The same tolerance as a fraction of the scale (for errors already divided by the largest value)."""
    return ulp_tolerance(dtype, 1.0, ulps)


def max_error_relative_to_largest(actual: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> float:
    """Largest ``|actual - expected|`` of each sentence divided by that sentence's largest ``|expected|`` score.

    Measured against the largest score, not element-wise: a near-zero score inherits the rounding error of the
    large terms that cancelled into it, so its own relative error is unbounded on any machine.
    """
    if len(actual) != len(expected):
        raise ValueError(f"{len(actual)} sentences of scores compared with {len(expected)}")
    worst = 0.0
    for index, (a, e) in enumerate(zip(actual, expected)):
        a, e = np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64)
        if a.shape != e.shape:
            raise ValueError(f"sentence {index}: scores of shape {a.shape} compared with {e.shape}")
        if e.size == 0:
            continue
        scale = float(np.max(np.abs(e)))
        difference = float(np.max(np.abs(a - e)))
        worst = max(worst, difference / scale if scale > 0 else (0.0 if difference == 0 else np.inf))
    return worst
