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
import inspect
import re
from collections.abc import Callable, Sequence
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

    **Versions.** The class's ``version`` is its latest definition. An instance's ``version`` is the version of
    the definition its parameters select (:meth:`version_for`): when a release changes the scores of some
    settings only, the settings it leaves alone keep their earlier version, so records, checkpoints and published
    attributions made with them keep their identity.
    """

    name: ClassVar[str]
    #: the latest definition's version on the class; on an instance, the version of its parameters' definition
    version: str = "1.0.0"
    model_independent: ClassVar[bool] = False
    is_baseline: ClassVar[bool] = False
    description: ClassVar[str] = ""

    def __init__(self, **params: Any) -> None:
        self._params = dict(params)
        if type(self).version_for.__func__ is not Explainer.version_for.__func__:  # type: ignore[attr-defined]
            # only a class that names versions per setting gets an instance attribute: a plug-in's `version` (a
            # class attribute, or a property) is left as it wrote it
            self.version = type(self).version_for(self._params)

    @classmethod
    def version_for(cls, params: dict[str, Any]) -> str:
        """The version of the definition that the protocol parameters ``params`` select: ``cls.version`` unless the
        latest release left the scores of these settings unchanged (a subclass then names their earlier version)."""
        return cls.version

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

    #: The split :meth:`fit` is given: ``"train"`` or ``"explained"`` (the split being explained; the paper's
    #: Pattern Variant baseline). An instance may decide it from its parameters (a property).
    fit_split: ClassVar[str] = "train"

    def fit(self, words: Sequence[Sequence[str]], labels: Sequence[int]) -> None:  # noqa: B027 - optional hook
        """Optional: learn from sentences and class labels (never ground truth) of the split ``fit_split`` names."""

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


def known_parameters(cls: type[Explainer]) -> list[str] | None:
    """The keyword parameters ``cls`` declares (its ``__init__`` and those it passes ``**kwargs`` on to), sorted;
    ``None`` when it declares none of its own (it inherits :class:`Explainer`'s ``**params``: anything goes).

    The chain stops at a constructor without ``**kwargs`` (it takes nothing else) or at :class:`Explainer`, whose
    ``**params`` only records what the subclasses pass it.
    """
    if cls.__init__ is Explainer.__init__:
        return None
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is Explainer or klass is object:
            break
        if "__init__" not in vars(klass):
            continue
        parameters = list(inspect.signature(vars(klass)["__init__"]).parameters.values())[1:]
        names.update(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return sorted(names)


def check_parameters(name: str, cls: type[Explainer], params: dict[str, Any]) -> None:
    """Refuse parameters ``cls`` does not declare, naming them and the known ones (a misspelt parameter would
    otherwise run the default and be recorded as if it had been used)."""
    known = known_parameters(cls)
    unknown = sorted(set(params) - set(known)) if known is not None else []
    if unknown:
        raise ValueError(f"explainer {name!r}: unknown parameter{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}; known: {', '.join(known) or '(none)'}")


def get_explainer(name: str, **params: Any) -> Explainer:
    """Instantiate the explainer registered under ``name`` with protocol parameters ``params``.

    Every explainer made from a name (the command line's ``name:key=value`` specs, the reference plan, the
    submission worker) is made here, so an unknown parameter is refused here, with the known ones listed.
    """
    cls = get_explainer_class(name)
    check_parameters(name, cls, params)
    return cls(**params)


def fit_explainers(
    explainers: Sequence[Explainer], explained: Callable[[], Sequence[Any]], train: Callable[[], Sequence[Any]],
    on_error: Callable[[Explainer, Exception], None] | None = None,
) -> None:
    """Fit every explainer that learns from data (it overrides :meth:`Explainer.fit`) on the split its
    ``fit_split`` names: ``explained()`` or ``train()`` give that split's rows (objects with ``words`` and
    ``label``, e.g. :class:`~gecobench.evaluation.data.GecoRow`), each read at most once.

    ``on_error`` (fail-soft, the evaluation's): an exception raised by an explainer's ``fit`` is passed to it
    with the explainer, and the others are still fitted; without it the exception propagates. Reading the data
    is not the explainer's doing: its errors always propagate."""
    learners = [e for e in explainers if type(e).fit is not Explainer.fit]
    data: dict[str, tuple[list[list[str]], list[int]]] = {}
    for explainer in learners:
        split = getattr(explainer, "fit_split", "train")
        if split not in ("train", "explained"):
            raise ValueError(f"explainer {explainer.name!r}: fit_split must be 'train' or 'explained', got {split!r}")
        if split not in data:
            rows = explained() if split == "explained" else train()
            data[split] = ([list(r.words) for r in rows], [int(r.label) for r in rows])
        if on_error is None:
            explainer.fit(*data[split])
            continue
        try:
            explainer.fit(*data[split])
        except Exception as err:  # noqa: BLE001 - fail-soft: the caller reports it and skips the explainer
            on_error(explainer, err)
