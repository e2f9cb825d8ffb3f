"""Explainers made from what a user already has: a plain function, or a Captum attribution class.

Both are ordinary :class:`~gecobench.explainers.base.Explainer` objects, so the evaluation runs them exactly as it
runs the built-ins (batching, seeding, validation and the token→word rule of :mod:`gecobench.explainers.engine`).
They are not registered: the Python front door (:func:`gecobench.evaluate`) makes them from its ``explainers``
argument, and so can anyone passing ``instances`` to :func:`~gecobench.evaluation.runner.run_evaluation`.

* :class:`FunctionExplainer` wraps ``function(model, tokenizer, words, targets) -> word scores``, the signature of
  :meth:`Explainer.explain <gecobench.explainers.base.Explainer.explain>`: ``words`` is a batch of sentences (lists
  of words), ``targets`` their classes, and the function returns one array of word scores per sentence (or a
  :class:`~gecobench.explainers.base.TokenAttributions`). Its version is a fingerprint of the function's source
  code, so editing the function gives new checkpoints and a new record.
* :class:`CaptumExplainer` runs a Captum attribution class (``captum.attr.Saliency``, ``IntegratedGradients``,
  ``DeepLift``, …) where the gradient built-ins run theirs: at the output of the model's embedding block, against
  the ``[CLS] [PAD]… [SEP]`` reference (passed as ``baselines`` when the method takes them), summed over the hidden
  dimension with its sign and folded to words by the shared rule (|score| per token, summed per word). So
  ``CaptumExplainer(captum.attr.Saliency)`` computes what the built-in ``saliency`` computes.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gecobench.explainers.base import Explainer, TokenAttributions
from gecobench.explainers.builtin import GradientExplainer

_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,63}$")

#: the signature a plain-function explainer has (that of :meth:`Explainer.explain`)
WordScoreFunction = Callable[[Any, Any, Sequence[Sequence[str]], Sequence[int]],
                             "list[np.ndarray | TokenAttributions]"]


def explainer_name(text: str, fallback: str) -> str:
    """``text`` as an explainer name (lower-case letters, digits and underscores, starting with a letter, 2-64
    characters: the registry's rule), or ``fallback`` when nothing of it is left."""
    name = re.sub(r"[^a-z0-9_]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(text)).lower()).strip("_")
    name = re.sub(r"_+", "_", name)[:64]
    return name if _NAME_PATTERN.match(name) else fallback


def source_fingerprint(obj: Any) -> str:
    """12 hex digits over the source code of a function or class (its qualified name when the source cannot be
    read, e.g. a function typed into an interactive prompt): what a user explainer's version is made of."""
    try:
        text = inspect.getsource(obj)
    except (OSError, TypeError):
        text = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _user_source() -> str:
    """The ``source`` an adapter's records carry: ``user`` where the evaluation knows that label
    (:mod:`gecobench.evaluation.origin`), else ``builtin``, the label every explainer had before it (a record with
    a label its schema does not know would be refused). The adapters live in gecobench, but what they run is the
    user's."""
    try:
        from gecobench.evaluation.origin import USER
    except ImportError:
        return "builtin"
    return USER


class FunctionExplainer(Explainer):
    """An explainer made from a plain function ``(model, tokenizer, words, targets) -> word scores``.

    Args:
        function: called once per batch, as :meth:`Explainer.explain` is; it returns a list with one score array
            per sentence (one score per word) or :class:`~gecobench.explainers.base.TokenAttributions`.
        name: the name its records carry (default: the function's name, as an explainer name).
        version: its version (default: ``src-`` and a fingerprint of the function's source, so an edited
            function is never scored from the old one's checkpoints).
    """

    name = "user_function"
    version = "0"

    def __init__(self, function: WordScoreFunction, name: str | None = None, version: str | None = None) -> None:
        if not callable(function):
            raise TypeError(f"a function explainer needs a callable, got {type(function).__name__}")
        super().__init__()
        self.function = function
        self.__wrapped__ = function  # what the code fingerprint of a user's explainer reads
        self.source = _user_source()
        self.name = name if name is not None else explainer_name(getattr(function, "__name__", ""), "user_function")
        if not _NAME_PATTERN.match(self.name):
            raise ValueError(f"explainer name {self.name!r}: use 2-64 lower-case letters, digits or underscores, "
                             "starting with a letter")
        self.version = version if version is not None else f"src-{source_fingerprint(function)}"
        self.description = (inspect.getdoc(function) or "").split("\n")[0]

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]
                ) -> list[np.ndarray | TokenAttributions]:
        outputs = self.function(model, tokenizer, words, targets)
        # a function returning one 2-D array for a batch of equal-length sentences is still one row per sentence
        return list(outputs) if isinstance(outputs, (tuple, np.ndarray)) else outputs

    def __repr__(self) -> str:
        return f"FunctionExplainer({self.name!r}, version={self.version!r})"


def is_captum_attribution_class(obj: Any) -> bool:
    """Whether ``obj`` is a Captum attribution class (``captum.attr.Saliency`` …), not an instance."""
    if not isinstance(obj, type) or not str(getattr(obj, "__module__", "")).startswith("captum."):
        return False
    from captum.attr import Attribution

    return issubclass(obj, Attribution)


class CaptumExplainer(GradientExplainer):
    """A Captum attribution class run at the engine's attribution point (see the module docstring).

    Args:
        attribution_class: e.g. ``captum.attr.Saliency``; built as ``attribution_class(forward)`` where
            ``forward`` maps the attribution point's output to the model's outputs. Layer and neuron methods
            (they attribute at a layer of their own) are refused.
        name: the name its records carry (default ``captum_<class name>``, e.g. ``captum_saliency``).
        output: ``"logit"`` (default) or ``"probability"``: what the target output is.
        attribution_point: ``"embedding_block"`` (default, the built-ins') or ``"word_embeddings"``.
        **attribute_kwargs: passed to ``attribute`` on every call (e.g. ``n_steps=32``); recorded as parameters,
            so they must be JSON values.
    """

    name = "captum"

    def __init__(self, attribution_class: type, name: str | None = None, output: str = "logit",
                 attribution_point: str = "embedding_block", **attribute_kwargs: Any) -> None:
        if not is_captum_attribution_class(attribution_class):
            raise TypeError(f"{attribution_class!r} is not a Captum attribution class (e.g. captum.attr.Saliency)")
        from captum.attr import LayerAttribution, NeuronAttribution

        if issubclass(attribution_class, (LayerAttribution, NeuronAttribution)):
            raise TypeError(f"{attribution_class.__name__} attributes at a layer or neuron of its own; the engine "
                             "fixes the attribution point (the embedding block's output): pass the plain method "
                             "(e.g. IntegratedGradients instead of LayerIntegratedGradients)")
        reserved = {"inputs", "target", "additional_forward_args"} & set(attribute_kwargs)
        if reserved:
            raise ValueError(f"{attribution_class.__name__}: {sorted(reserved)} are set by the engine, not by you")
        if output not in ("logit", "probability"):
            raise ValueError(f"output must be 'logit' or 'probability', got {output!r}")
        self.attribution_class = attribution_class
        self.__wrapped__ = attribution_class
        self.source = _user_source()
        self.attribute_kwargs = dict(attribute_kwargs)
        super().__init__(attribution_point=attribution_point, output=output, **attribute_kwargs)
        import captum

        self.name = name if name is not None else explainer_name(f"captum_{attribution_class.__name__}", "captum")
        self.version = f"captum-{captum.__version__}"
        self.description = f"Captum {attribution_class.__name__} at the embedding block's output."

    def attribute_embeddings(self, forward, batch, inputs, baselines, target, words, targets):
        method = self.attribution_class(forward)
        kwargs = {"target": target, "additional_forward_args": self.additional_args(batch), **self.attribute_kwargs}
        if "baselines" in inspect.signature(method.attribute).parameters and "baselines" not in kwargs:
            kwargs["baselines"] = baselines
        attributions = method.attribute(inputs, **kwargs)
        # methods that can also return their convergence delta return (attributions, delta) when asked to
        return attributions[0] if isinstance(attributions, tuple) else attributions

    def __repr__(self) -> str:
        return f"CaptumExplainer({self.attribution_class.__name__}, params={self.params()})"


__all__ = ["CaptumExplainer", "FunctionExplainer", "explainer_name", "is_captum_attribution_class",
           "source_fingerprint"]
