"""Quadrature on [0, 1] for adaptive Integrated Gradients: nested Clenshaw–Curtis levels (IG 3.0.0) and a locally
adaptive Simpson rule on the same nodes (:class:`AdaptiveSimpson`, IG 4.0.0).

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


class AdaptiveSimpson:
    """Locally adaptive Simpson rule for one sentence's path integral ``int_0^1 g(alpha) d alpha`` (vector ``g``).

    The integral is taken in ``theta``, with ``alpha = (1 - cos theta) / 2`` (the Clenshaw–Curtis substitution):

        int_0^1 g(alpha) d alpha = int_0^pi g(alpha(theta)) sin(theta) / 2 d theta

    on the uniform grid ``theta_j = j pi / finest``, so node ``j`` is node ``j`` of Clenshaw–Curtis level
    ``finest`` (:func:`clenshaw_curtis_nodes`). The substitution packs nodes towards both ends of the path, where
    a classifier's output usually turns, and its Jacobian ``sin(theta) / 2`` vanishes at the ends: the gradients
    at ``alpha = 0`` and ``alpha = 1`` are never needed (only the outputs there, for the completeness check).

    The interval starts as ``first / 2`` Simpson panels of two grid steps of ``finest / first`` each. Each
    :meth:`refine` halves the one panel whose local error indicator is largest (two new nodes, its quarter points),
    so nodes go where the integrand varies instead of doubling everywhere as a nested rule must. The indicator of
    a first-level panel is the L1 norm of Simpson minus the trapezoid rule on it; a halved panel's two halves get
    half the L1 norm of the change ``S(left) + S(right) - S(panel)`` each, the error estimate of the coarser
    Simpson value. The L1 norm over tokens (not the norm of the sum) keeps errors that cancel in the total from
    hiding. A halved panel's value is Richardson-corrected: ``(S(left) + S(right) - S(panel)) / 15`` is added,
    shared equally by the halves (Boole's rule on the panel), until a half is halved in turn.
    """

    def __init__(self, finest: int, first: int, size: int) -> None:
        finest, first = _check_level(finest), _check_level(first)
        ratio = finest // first
        if first % 2 or finest % first or ratio & (ratio - 1):
            raise ValueError(
                f"adaptive Simpson needs an even first level ({first}) that divides finest ({finest}) by a power "
                f"of two: panels of two steps are halved until one step of the finest level"
            )
        self.finest, self.first = finest, first
        theta = np.arange(finest + 1) * np.pi / finest
        # d alpha per grid index: (sin theta / 2) * (pi / finest); exactly 0 at both ends
        self._jacobian = np.sin(theta) / 2.0 * (np.pi / finest)
        self._jacobian[[0, -1]] = 0.0
        self._values: dict[int, np.ndarray] = {0: np.zeros(size), finest: np.zeros(size)}
        self._panels: dict[tuple[int, int], tuple[np.ndarray, float]] = {}
        self._chosen: tuple[int, int] | None = None

    def initial_nodes(self) -> list[int]:
        """Grid indices of the first level's interior nodes (the ends are never needed)."""
        step = self.finest // self.first
        return list(range(step, self.finest, step))

    def add(self, index: int, value: np.ndarray) -> None:
        """``g`` at grid node ``index`` (one entry per token)."""
        self._values[int(index)] = self._jacobian[int(index)] * np.asarray(value, dtype=np.float64)

    @property
    def n_nodes(self) -> int:
        """Interior nodes evaluated so far (gradient evaluations)."""
        return len(self._values) - 2

    def _simpson(self, a: int, b: int) -> np.ndarray:
        return (b - a) / 6.0 * (self._values[a] + 4.0 * self._values[(a + b) // 2] + self._values[b])

    def start(self) -> None:
        """Builds the first panels, once :meth:`initial_nodes` are all added."""
        width = 2 * (self.finest // self.first)
        for a in range(0, self.finest, width):
            b = a + width
            simpson = self._simpson(a, b)
            trapezoid = (b - a) / 2.0 * (self._values[a] + self._values[b])
            self._panels[(a, b)] = (simpson, float(np.abs(simpson - trapezoid).sum()))

    def estimate(self) -> np.ndarray:
        """The integral now: the sum of the panels' values."""
        return np.sum([value for value, _ in self._panels.values()], axis=0)

    def next_nodes(self) -> list[int]:
        """The quarter points of the panel to halve next; empty when every panel is already two finest steps."""
        refinable = [(indicator, panel) for panel, (_, indicator) in self._panels.items() if panel[1] - panel[0] >= 4]
        if not refinable:
            self._chosen = None
            return []
        # ties (equal indicators) go to the leftmost panel, so the choice never depends on dict order
        _, self._chosen = max(refinable, key=lambda item: (item[0], -item[1][0]))
        a, b = self._chosen
        quarter = (b - a) // 4
        return [a + quarter, b - quarter]

    def refine(self) -> None:
        """Halves the panel :meth:`next_nodes` chose, once its two new nodes are added."""
        if self._chosen is None:
            raise RuntimeError("refine() needs next_nodes() to have chosen a panel")
        a, b = self._chosen
        middle = (a + b) // 2
        del self._panels[(a, b)]
        coarse = self._simpson(a, b)
        left, right = self._simpson(a, middle), self._simpson(middle, b)
        change = left + right - coarse
        indicator = float(np.abs(change).sum()) / 2.0
        self._panels[(a, middle)] = (left + change / 30.0, indicator)
        self._panels[(middle, b)] = (right + change / 30.0, indicator)
        self._chosen = None
