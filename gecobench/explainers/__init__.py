"""Explainers: the contract, the registry, the built-in methods and the batched attribution engine."""

from gecobench.explainers.base import (
    Explainer,
    TokenAttributions,
    available_explainers,
    get_explainer,
    get_explainer_class,
    register_explainer,
)

__all__ = [
    "Explainer",
    "TokenAttributions",
    "available_explainers",
    "get_explainer",
    "get_explainer_class",
    "register_explainer",
]
