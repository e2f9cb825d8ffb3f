"""The explainer contract shared by built-in explainers and submissions.

An explainer is a small class with a ``name``, a ``version`` and one method,
:meth:`Explainer.explain`, that takes ``(model, tokenizer, batch of word lists, target classes)`` and
returns one score per word for every sentence. It never sees ground truth.

Token-level explainers may return :class:`TokenAttributions` instead; the engine folds them to words with
the shared rule (:func:`gecobench.words.fold_token_scores_to_words`: ``|score|`` per token, summed per word).

Explainers are found by name through the registry (:func:`get_explainer`), which also loads classes that
installed packages advertise in the ``gecobench.explainers`` entry-point group::

    [options.entry_points]
    gecobench.explainers =
        my_method = my_package.module:MyExplainer
"""

from __future__ import annotations

import abc
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, ClassVar

import numpy as np

ENTRY_POINT_GROUP = "gecobench.explainers"
_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,63}$")


@dataclass
class TokenAttributions:
    """Token-level scores for one sentence with the tokenizer's ``word_ids`` (``None`` for special tokens)."""

    scores: np.ndarray
    word_ids: list[int | None]


class Explainer(abc.ABC):
    """Base class of every explainer.

    Subclasses set ``name`` (lower-case identifier), ``version`` and, when the scores do not depend on the
    model at all (e.g. a dataset statistic), ``model_independent = True`` so the leaderboard can label it.
    Constructor keyword arguments are the explainer's protocol parameters; :meth:`params` reports them
    and every result record stores them.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1.0.0"
    model_independent: ClassVar[bool] = False
    is_baseline: ClassVar[bool] = False
    description: ClassVar[str] = ""

    def __init__(self, **params: Any) -> None:
        self._params = dict(params)

    def params(self) -> dict[str, Any]:
        """The protocol parameters this instance was built with (JSON-serialisable)."""
        return dict(self._params)

    def protocol(self) -> dict[str, Any]:
        """How this explainer's scores are made, recorded with every result (name, version, parameters…).

        Built-ins add the shared protocol (attribution point, reference input, reductions); see
        ``docs/explainers.md``.
        """
        return {
            "explainer": self.name,
            "version": self.version,
            "model_independent": self.model_independent,
            "is_baseline": self.is_baseline,
            "params": self.params(),
        }

    def fit(self, words: Sequence[Sequence[str]], labels: Sequence[int]) -> None:
        """Optional: learn from the train split (sentences and class labels only, never ground truth)."""

    @abc.abstractmethod
    def explain(
        self,
        model: Any,
        tokenizer: Any,
        words: Sequence[Sequence[str]],
        targets: Sequence[int],
    ) -> list[np.ndarray | TokenAttributions]:
        """Return, for each sentence, one score per word (or a :class:`TokenAttributions`)."""


_REGISTRY: dict[str, type[Explainer]] = {}
_ENTRY_POINTS_LOADED = False


def register_explainer(cls: type[Explainer]) -> type[Explainer]:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME_PATTERN.match(name):
        raise ValueError(
            f"explainer class {cls.__qualname__} needs a `name` of 2-64 lower-case letters, digits or "
            f"underscores starting with a letter, got {name!r}"
        )
    existing = _REGISTRY.get(name)
    if existing is not None and existing is not cls and existing.__qualname__ != cls.__qualname__:
        raise ValueError(f"explainer name {name!r} is already registered by {existing.__module__}.{existing.__qualname__}")
    _REGISTRY[name] = cls
    return cls


def _load_entry_points() -> None:
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        cls = entry.load()
        if cls.name not in _REGISTRY:
            register_explainer(cls)


def _load_builtins() -> None:
    # Importing the modules registers the built-in explainers.
    from gecobench.explainers import builtin, partition  # noqa: F401


def available_explainers() -> list[str]:
    """Names of all registered explainers (built-ins, then installed plug-ins)."""
    _load_builtins()
    _load_entry_points()
    return sorted(_REGISTRY)


def get_explainer_class(name: str) -> type[Explainer]:
    """The class registered under ``name``; a ``KeyError`` lists the known names."""
    _load_builtins()
    _load_entry_points()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown explainer {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def get_explainer(name: str, **params: Any) -> Explainer:
    """Instantiate the explainer registered under ``name`` with protocol parameters ``params``."""
    return get_explainer_class(name)(**params)
