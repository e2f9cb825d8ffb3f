"""Integrated Gradients of the logit, for the tests of its quadrature rules.

Those tests check each rule on integrands whose exact value is known (additive and low-degree polynomial
models), which the logit gives and the softmax probability (IG's default since 5.0.0, as the GECOBench authors'
IG explains) does not.
"""

from __future__ import annotations

from typing import Any

from gecobench.explainers import get_explainer


def logit_ig(**params: Any):
    """``integrated_gradients`` with ``output="logit"`` (the 4.x output) and the given parameters."""
    return get_explainer("integrated_gradients", **{"output": "logit", **params})
