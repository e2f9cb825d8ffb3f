"""Clenshaw–Curtis quadrature on [0, 1]: the nested rule behind adaptive Integrated Gradients.

Level ``n`` has the ``n + 1`` nodes ``(1 - cos(k pi / n)) / 2``, ``k = 0..n`` (both ends included). Level ``2n``
contains every node of level ``n`` (node ``k`` of level ``n`` is node ``2k`` of level ``2n``), so refining from
``n`` to ``2n`` costs only the ``n`` new nodes: an integrand evaluated once is reused by every finer level.
The rule integrates polynomials up to degree ``n`` exactly (``n + 1`` for even ``n``, by symmetry).

Weights follow the cosine-series formula (Clenshaw & Curtis, 1960; Waldvogel, 2006), computed in float64:

    w_k = c_k / n * (1 - sum_{j=1}^{floor(n/2)} b_j / (4 j^2 - 1) * cos(2 j k pi / n))

with ``c_0 = c_n = 1``, ``c_k = 2`` otherwise, ``b_j = 1`` for ``j = n/2`` and ``2`` otherwise. That formula is for
[-1, 1] (weights sum to 2); on [0, 1] they are halved.
"""

from __future__ import annotations

import numpy as np


def _check_level(n: int) -> int:
    if isinstance(n, bool) or int(n) != n or int(n) < 1:
        raise ValueError(f"a Clenshaw-Curtis level is a number of intervals >= 1, got {n!r}")
    return int(n)


def clenshaw_curtis_nodes(n: int) -> np.ndarray:
    """The ``n + 1`` nodes of level ``n`` on [0, 1], ascending, float64 (exactly 0 and 1 at the ends)."""
    n = _check_level(n)
    return (1.0 - np.cos(np.arange(n + 1) * np.pi / n)) / 2.0


def clenshaw_curtis_weights(n: int) -> np.ndarray:
    """The ``n + 1`` weights of level ``n`` on [0, 1] (float64, summing to 1), in the order of the nodes."""
    n = _check_level(n)
    k = np.arange(n + 1)
    j = np.arange(1, n // 2 + 1)
    b = np.where(2 * j == n, 1.0, 2.0)
    series = (b / (4.0 * j**2 - 1.0))[None, :] * np.cos(2.0 * np.outer(k, j) * np.pi / n)
    c = np.where((k == 0) | (k == n), 1.0, 2.0)
    return c / n * (1.0 - series.sum(axis=1)) / 2.0
