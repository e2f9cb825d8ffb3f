"""The paper's explainers, registered under their names (importing this module registers them).

Gradient methods (Captum): ``saliency``, ``input_x_gradient``, ``deeplift``, ``guided_backprop``,
``integrated_gradients``, ``gradient_shap``. Perturbation methods: ``lime`` (the ``lime`` package's weighted
ridge fit, LimeTextExplainer's sampling and kernel), ``kernel_shap`` (Captum ``KernelShap``). Baselines:
``uniform_random`` and ``pattern_variant`` (model-independent). Partition SHAP (``partition_shap``) is in
:mod:`gecobench.explainers.partition`.

The shared protocol (see ``docs/explainers.md``) is in :data:`PROTOCOL` and in every explainer's
:meth:`~gecobench.explainers.base.Explainer.protocol`.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import torch

from gecobench.explainers.base import Explainer, register_explainer
from gecobench.explainers.inputs import (
    ATTRIBUTION_POINTS,
    AUTOCAST_DTYPES,
    DEFAULT_MAX_LENGTH,
    EmbeddingForward,
    EncodedBatch,
    check_precision,
    encode_batch,
    even_chunk,
    fold_batch,
    model_device,
    outputs_without_words,
    pack_by_length,
    parameters_frozen,
    sentence_seed,
    token_budget_scale,
)
from gecobench.explainers.quadrature import (
    AdaptiveSimpson,
    clenshaw_curtis_nodes,
    clenshaw_curtis_weights,
)
from gecobench.explainers.stability import (
    check_growth,
    next_sample_count,
    split_half_agreement,
    split_half_error,
)
from gecobench.words import tokenize_words

#: ``n_samples=adaptive``: LIME's and Kernel SHAP's accuracy-target mode (the same word as Partition SHAP's)
ADAPTIVE_SAMPLES = "adaptive"
#: the accuracy target of that mode: split-half error, first and largest sample count per sentence, how the count
#: grows between rounds (Kernel SHAP's)
ADAPTIVE_DEFAULTS: dict[str, Any] = {"tolerance": 0.2, "min_samples": 32, "max_samples": 1024, "growth": "doubling"}
#: LIME's sample designs: ``independent`` (LimeTextExplainer's: every row drawn on its own) and ``paired`` (every
#: second row the complement of the one before: the same distribution per row, less variance in the fit)
LIME_SAMPLING = ("independent", "paired")
#: LIME's accuracy target (its default since 4.0.0; 5.0.0: paired samples grown to the projected need; 6.0.0: the
#: first round at least 18 samples per word, tolerance 0.25). Why the floor: a split-half error measured on halves
#: with fewer samples than the sentence has words (32 samples, 20 words) compares two ridge fits that the penalty
#: pulls towards the same small coefficients, so it reads low and stops sentences whose scores are still mostly
#: noise; on OLA 5.0.0 then allocated its samples worse than an even spread. With halves of 9 samples per word the
#: error means what it says. Chosen against ferret's LIME on a fresh OLA, a fresh CEfAf and a reference MiniLM and
#: checked on a fourth model it was not chosen on (BENCHMARKS.md, "LIME 6.0.0").
LIME_ADAPTIVE_DEFAULTS: dict[str, Any] = {"tolerance": 0.25, "min_samples": 32, "max_samples": 1024,
                                         "growth": "projected", "min_samples_per_word": 18}

#: How many token positions one forward (or forward + backward) pass should hold: large enough to amortise
#: per-call overhead, small enough for the activations to stay in cache (tuned with bench/bench_explainers.py).
DEFAULT_TOKENS_PER_FORWARD = 1024

#: How each attribution point is described in a record's protocol (``attribution_point`` parameter).
ATTRIBUTION_POINT_TEXT: dict[str, str] = {
    "embedding_block": "output of the embedding block (base_model.embeddings: word + position + token-type "
                       "embeddings, LayerNorm); the word-embedding output for a model without one",
    "word_embeddings": "output of model.get_input_embeddings() (position/token-type embeddings added once, by the model)",
}

PROTOCOL: dict[str, Any] = {
    "attribution_point": ATTRIBUTION_POINT_TEXT["embedding_block"],
    "reference_input": "[CLS] + [PAD]*(n-2) + [SEP] of the same length (special tokens kept), through the same "
                       "layers as the input up to the attribution point",
    "hidden_reduction": "signed sum over the embedding dimension",
    "word_rule": "gecobench.words.fold_token_scores_to_words: |score| per token, summed per word",
    "perturbation": "whole words removed: every token of a removed word dropped, the rest closing up (special tokens kept)",
    "target": "the class passed by the caller (evaluation default: the true label; option: the predicted label)",
    "max_length": DEFAULT_MAX_LENGTH,
}
#: The ``perturbation`` entry of ``removal="mask_tokens"`` (LIME's and Partition SHAP's option; ferret's LIME and
#: ``shap``'s text masker remove tokens this way)
MASKED_TOKENS_PERTURBATION = ("whole words removed, every token of a removed word replaced by the tokenizer's mask "
                              "token, the other tokens in their positions (special tokens kept)")
#: LIME's ways of removing a word: ``delete`` (LimeTextExplainer's: the text closes up; the default) and
#: ``mask_tokens`` (each of its tokens becomes the mask token, positions kept: ferret's rule)
LIME_REMOVALS = ("delete", "mask_tokens")


def mask_removal_options(tokenizer: Any, removal: str, explainer: str) -> dict[str, Any]:
    """:func:`~gecobench.explainers.inputs.outputs_without_words`'s ``mask_id``/``collapse_masks`` for a removal
    rule: ``delete`` none (the tokens are dropped), ``mask`` one mask token per run of removed words,
    ``mask_tokens`` one per token of a removed word. A rule that masks needs the tokenizer's mask token."""
    if removal == "delete":
        return {}
    mask_id = getattr(tokenizer, "mask_token_id", None)
    if mask_id is None:
        raise ValueError(f"{explainer}:removal={removal} needs a tokenizer with a mask token; "
                         f"{type(tokenizer).__name__} has none: use removal='delete'")
    return {"mask_id": int(mask_id), "collapse_masks": removal != "mask_tokens"}


def _flag(value: Any, name: str) -> bool:
    """A boolean parameter, from a bool or its spelling on the command line; anything else is refused."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"{name} must be true or false, got {value!r}")


#: For each built-in whose default definition changed since the published zero-shot reference bundles: the
#: version those bundles hold, and the parameters under which the current code computes that version's default
#: (``get_explainer(name, **params)``; LIME 4.0.0 also changed its default budget, hence ``n_samples=100``).
#: The published zero-shot reference bundles made with those versions are checked against them
#: (``tests/test_reference.py``); a run never reads them for the current versions (their checkpoint keys differ).
PREVIOUS_DEFAULTS: dict[str, tuple[str, dict[str, Any]]] = {
    "saliency": ("1.0.0", {"attribution_point": "word_embeddings"}),
    "input_x_gradient": ("1.0.0", {"attribution_point": "word_embeddings"}),
    "guided_backprop": ("1.0.0", {"attribution_point": "word_embeddings", "abs": True}),
    "deeplift": ("1.0.0", {"attribution_point": "word_embeddings", "multiply_by_inputs": True}),
    "integrated_gradients": ("4.0.0", {"attribution_point": "word_embeddings", "output": "logit"}),
    "gradient_shap": ("1.0.0", {"attribution_point": "word_embeddings", "output": "logit"}),
    "lime": ("2.0.0", {"output": "logit", "n_samples": 100}),
    "kernel_shap": ("2.0.0", {"output": "logit"}),
    "partition_shap": ("3.0.0", {"output": "logit"}),
    "uniform_random": ("1.0.0", {"per": "word"}),
    "pattern_variant": ("1.0.0", {"fit_on": "train", "unit": "word", "label": "one_hot"}),
}


class BuiltinExplainer(Explainer):
    """Common machinery: run-seed handling, speed knobs kept out of the recorded protocol parameters."""

    #: keys of ``PROTOCOL`` that apply to this explainer
    protocol_keys: ClassVar[tuple[str, ...]] = ()
    #: whether the explainer runs the model (then ``precision`` chooses the precision it runs it in)
    runs_model: ClassVar[bool] = False

    def __init__(self, tokens_per_forward: int | None = None, precision: str = "float32", **params: Any) -> None:
        if check_precision(precision) != "float32":
            if not self.runs_model:
                raise ValueError(f"{self.name} does not run the model: precision={precision!r} would change nothing")
            # a parameter (so part of the record's identity) only when it is not float32: the records made before
            # the parameter existed keep their identity
            params["precision"] = precision
        super().__init__(**params)
        if tokens_per_forward is not None and int(tokens_per_forward) < 1:
            raise ValueError(f"tokens_per_forward must be >= 1, got {tokens_per_forward}")
        # A speed knob: it changes how work is chunked, never the scores, so it is not a protocol parameter.
        # None: the default budget, which the engine scales to the model it explains (:meth:`sized_for`).
        self._fixed_tokens_per_forward = None if tokens_per_forward is None else int(tokens_per_forward)
        self.tokens_per_forward = self._fixed_tokens_per_forward or DEFAULT_TOKENS_PER_FORWARD
        self.seed = 0
        self.last_diagnostics: dict[str, np.ndarray] = {}

    @contextmanager
    def sized_for(self, model: Any) -> Iterator[None]:
        """Within the block, the token budget fits ``model``: the default times
        :func:`~gecobench.explainers.inputs.token_budget_scale` (a budget given to the constructor stays)."""
        if self._fixed_tokens_per_forward is not None:
            yield
            return
        outer, self.tokens_per_forward = self.tokens_per_forward, DEFAULT_TOKENS_PER_FORWARD * token_budget_scale(model)
        try:
            yield
        finally:
            self.tokens_per_forward = outer

    @property
    def precision(self) -> str:
        """The precision the model runs in (:func:`~gecobench.explainers.inputs.running_in`)."""
        return self._params.get("precision", "float32")

    def set_seed(self, seed: int) -> None:
        """The run seed; random explainers derive one stream per sentence from it (see ``sentence_seed``)."""
        self.seed = int(seed)

    def protocol(self) -> dict[str, Any]:
        out = super().protocol()
        out.update({key: PROTOCOL[key] for key in self.protocol_keys})
        return out

    def rows_per_forward(self, n_tokens: int) -> int:
        """Most input rows of ``n_tokens`` tokens one forward pass should hold (the token budget)."""
        return max(1, self.tokens_per_forward // max(1, n_tokens))

    @property
    def rows_per_sentence(self) -> int:
        """Model inputs one sentence expands to (IG steps, samples…); the engine sizes sentence batches by it."""
        return 1

    #: whether the explainer packs its own model inputs into passes by length (``pack_by_length``), so the
    #: padding of the sentence batch the engine hands it costs nothing (see ``engine.plan_batches``)
    packs_rows_by_length: ClassVar[bool] = False


# --------------------------------------------------------------------------------------------- gradient methods


class InputGradientMemo:
    """The last input gradients of the target output, so Saliency and Input×Gradient share one forward+backward.

    Both differentiate the same function (:class:`~gecobench.explainers.inputs.EmbeddingForward` of the same model,
    output and attribution point) at the same inputs; an evaluation runs them one after the other over the same
    sentences, in the same batches (both size batches alike). The gradient is kept under a key of everything it
    depends on: the model (held weakly, so an entry dies with its model and a new model at a recycled address never
    matches), every parameter's storage address and in-place version counter (weights edited in place or
    replaced miss), its mode, the output, attribution point and precision, the batch's token ids, mask, token
    types and targets, and the input dtype. Entries are
    evicted oldest first beyond ``max_bytes``. A hit returns the very tensor computed before (equal scores, no
    model call); the second method's recorded seconds then exclude the shared pass.
    """

    def __init__(self, max_bytes: int = 192 * 2**20) -> None:
        self.max_bytes = int(max_bytes)
        self._entries: OrderedDict[tuple, tuple[weakref.ref, torch.Tensor]] = OrderedDict()
        self.hits = self.misses = 0

    @staticmethod
    def key(model: Any, forward: EmbeddingForward, batch: EncodedBatch, inputs: torch.Tensor,
            target: torch.Tensor) -> tuple:
        tensors = (batch.input_ids, batch.attention_mask, batch.token_type_ids, target)
        return (id(model), bool(getattr(model, "training", False)),
                tuple((p.data_ptr(), p._version) for p in model.parameters()) if isinstance(model, torch.nn.Module)
                else (),
                forward.output, forward.attribution_point, forward.precision, str(inputs.dtype), str(inputs.device),
                tuple(None if t is None else (tuple(t.shape), t.detach().cpu().numpy().tobytes()) for t in tensors))

    def get(self, key: tuple, model: Any) -> torch.Tensor | None:
        entry = self._entries.get(key)
        if entry is None or entry[0]() is not model:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry[1]

    def put(self, key: tuple, model: Any, gradient: torch.Tensor) -> None:
        try:
            reference = weakref.ref(model)
        except TypeError:  # a model that cannot be referenced weakly is never cached
            return
        self._entries[key] = (reference, gradient.detach())
        while self._entries and self.nbytes() > self.max_bytes:
            self._entries.popitem(last=False)

    def nbytes(self) -> int:
        return sum(g.numel() * g.element_size() for _, g in self._entries.values())

    def clear(self) -> None:
        self._entries.clear()


#: the memo Saliency, Input×Gradient and (on a model without ``nn.ReLU`` modules) Guided Backprop share (one per process)
INPUT_GRADIENTS = InputGradientMemo()


class GradientExplainer(BuiltinExplainer):
    """Attribution with respect to the attribution point's output (default: the embedding block's, see
    :mod:`gecobench.explainers.inputs`), for a whole padded batch at once.

    ``attribution_point="word_embeddings"`` explains at the word-embedding lookup instead, as every gradient
    built-in did before 2026-12 (their versions before this one).
    """

    protocol_keys = ("attribution_point", "reference_input", "hidden_reduction", "word_rule", "target", "max_length")
    runs_model = True
    #: whether :meth:`attribute_embeddings` reads the reference input (else it is given ``None``)
    uses_reference: ClassVar[bool] = True

    def __init__(self, attribution_point: str = "embedding_block", **kwargs: Any) -> None:
        if attribution_point not in ATTRIBUTION_POINTS:
            raise ValueError(f"attribution_point must be one of {', '.join(ATTRIBUTION_POINTS)}, got {attribution_point!r}")
        super().__init__(attribution_point=attribution_point, **kwargs)

    def protocol(self) -> dict[str, Any]:
        out = super().protocol()
        out["attribution_point"] = ATTRIBUTION_POINT_TEXT[self._params["attribution_point"]]
        return out

    def output_dtype(self, inputs: torch.Tensor) -> torch.dtype:
        """The precision the model's outputs are computed in: bfloat16 under ``precision=bfloat16`` (their rounding
        then sets how small a difference of outputs can be told from noise), else the inputs' dtype."""
        return AUTOCAST_DTYPES.get(self.precision, inputs.dtype)

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]) -> list[np.ndarray]:
        batch = encode_batch(tokenizer, words, model_device(model))
        forward = EmbeddingForward(model, self._params.get("output", "logit"), self._params["attribution_point"],
                                   self.precision)
        # requires_grad up front: Captum warns when it has to switch it on itself
        inputs = forward.embed(batch.input_ids, batch.attention_mask, batch.token_type_ids).detach().requires_grad_(True)
        # the reference's embedding pass only for the methods that read it
        baselines = (forward.embed(batch.reference_ids, batch.attention_mask, batch.token_type_ids).detach()
                     if self.uses_reference else None)
        target = torch.as_tensor(list(targets), dtype=torch.long, device=inputs.device)
        with torch.enable_grad(), parameters_frozen(model), warnings.catch_warnings():
            # Captum announces every time that it hooks ReLU/nonlinear modules; that is the documented behaviour
            warnings.filterwarnings("ignore", message=r"Setting (forward, )?backward hooks", category=UserWarning)
            token_scores = self.attribute_embeddings(forward, batch, inputs, baselines, target, list(words), list(targets))
        return fold_batch(token_scores, batch)

    def additional_args(self, batch: EncodedBatch) -> tuple[torch.Tensor, ...]:
        if batch.token_type_ids is None:
            return (batch.attention_mask,)
        return (batch.attention_mask, batch.token_type_ids)

    def attribute_embeddings(
        self,
        forward: EmbeddingForward,
        batch: EncodedBatch,
        inputs: torch.Tensor,
        baselines: torch.Tensor | None,
        target: torch.Tensor,
        words: list[Sequence[str]],
        targets: list[int],
    ) -> torch.Tensor:
        raise NotImplementedError

    def target_gradient(self, forward: EmbeddingForward, batch: EncodedBatch, inputs: torch.Tensor,
                        target: torch.Tensor) -> torch.Tensor:
        """Gradient of each sentence's target output with respect to ``inputs``: one forward and one backward for
        the whole batch (what Captum's ``Saliency`` computes), shared through :data:`INPUT_GRADIENTS`."""
        key = INPUT_GRADIENTS.key(forward.model, forward, batch, inputs, target)
        gradient = INPUT_GRADIENTS.get(key, forward.model)
        if gradient is None:
            outputs = forward(inputs, *self.additional_args(batch))
            # sentences are independent rows, so the gradient of the sum is every row's own gradient
            (gradient,) = torch.autograd.grad(outputs.gather(1, target[:, None]).sum(), inputs)
            INPUT_GRADIENTS.put(key, forward.model, gradient)
        return gradient


@register_explainer
class SaliencyExplainer(GradientExplainer):
    """Captum ``Saliency``: the gradient of the target output (absolute value by default, as in Captum)."""

    name = "saliency"
    version = "2.0.0"  # 2.0.0: at the embedding block's output (1.x: at the word-embedding lookup)
    description = "Gradient of the target output w.r.t. the embedding block's output (Captum Saliency, abs=True)."

    def __init__(self, abs: bool = True, **kwargs: Any) -> None:
        super().__init__(abs=_flag(abs, "abs"), **kwargs)

    uses_reference = False

    def attribute_embeddings(self, forward, batch, inputs, baselines, target, words, targets):
        # Captum's Saliency computed directly (one autograd call), the gradient shared with Input×Gradient
        gradient = self.target_gradient(forward, batch, inputs, target)
        return gradient.abs() if self._params["abs"] else gradient


@register_explainer
class InputXGradientExplainer(GradientExplainer):
    """Captum ``InputXGradient``: embedding times gradient."""

    name = "input_x_gradient"
    version = "2.0.0"  # 2.0.0: at the embedding block's output (1.x: at the word-embedding lookup)
    description = "Embedding-block output times the gradient of the target output (Captum InputXGradient)."

    uses_reference = False

    def attribute_embeddings(self, forward, batch, inputs, baselines, target, words, targets):
        # Captum's InputXGradient computed directly, the gradient shared with Saliency
        return inputs.detach() * self.target_gradient(forward, batch, inputs, target)


@register_explainer
class GuidedBackpropExplainer(GradientExplainer):
    """Captum ``GuidedBackprop``. It overrides the backward pass of ``nn.ReLU`` modules only: on GELU models
    (BERT, MiniLM) it returns the plain gradient (see docs/explainers.md), and then takes it from the gradient
    Saliency and Input×Gradient share (:data:`INPUT_GRADIENTS`) instead of running Captum's identical pass.

    By default (2.0.0) the guided gradient is summed over the embedding dimension *with its sign*, then the word
    rule takes ``|·|`` per token, as the authors do (``xai/methods.py``, ``get_guided_backprop_attributions``).
    ``abs=True`` (1.x) takes the absolute value before the sum, as Saliency does; on a GELU model that made it
    identical to Saliency. At the embedding block's output the signed sum no longer vanishes (1.x explained at
    the LayerNorm's input, where any gradient sums to zero over the hidden dimension).
    """

    name = "guided_backprop"
    version = "2.0.0"  # 2.0.0: embedding block, signed hidden sum (1.x: word embeddings, |.| before the sum)
    description = "Captum GuidedBackprop (ReLU modules only) at the embedding block, signed sum over the hidden dimension."

    def __init__(self, abs: bool = False, **kwargs: Any) -> None:
        super().__init__(abs=_flag(abs, "abs"), **kwargs)

    uses_reference = False

    def attribute_embeddings(self, forward, batch, inputs, baselines, target, words, targets):
        if has_relu_modules(forward):
            from captum.attr import GuidedBackprop

            guided = GuidedBackprop(forward).attribute(inputs, target=target,
                                                       additional_forward_args=self.additional_args(batch))
        else:
            # Captum's GuidedBackprop hooks nn.ReLU modules and nothing else: without one it computes the plain
            # gradient of the target, the very gradient Saliency and Input×Gradient share (same scores, one
            # forward+backward fewer per batch in an evaluation)
            guided = self.target_gradient(forward, batch, inputs, target)
        return guided.abs() if self._params["abs"] else guided


def has_relu_modules(module: torch.nn.Module) -> bool:
    """True when ``module`` holds an ``nn.ReLU``: the only modules Captum's Guided Backprop changes the backward of."""
    return any(isinstance(m, torch.nn.ReLU) for m in module.modules())


@register_explainer
class DeepLiftExplainer(GradientExplainer):
    """Captum ``DeepLift`` (rescale rule) against the ``[CLS] [PAD]… [SEP]`` reference.

    By default (2.0.0) the attributions are DeepLift's *multipliers* (``multiply_by_inputs=False``), as the
    authors compute them (``xai/methods.py``, ``get_deeplift_attributions``: ``multiply_by_inputs=None``, which
    Captum treats as false); ``multiply_by_inputs=True`` (1.x) multiplies them by ``input - reference``, which
    on a model without supported nonlinear modules is Input×Gradient against the reference.

    The rescale rule applies only to Captum's supported nonlinear *modules* (ReLU, ELU, LeakyReLU, Sigmoid, Tanh,
    Softplus, Softmax, MaxPool); everything else — GELU, functional softmax in attention, LayerNorm — passes the
    plain gradient. On a HF BERT classifier that leaves the pooler's ``nn.Tanh`` as the one rescaled nonlinearity.
    """

    name = "deeplift"
    version = "2.0.0"  # 2.0.0: embedding block, multipliers only (1.x: word embeddings, x (input - reference))
    description = "Captum DeepLift (rescale) multipliers w.r.t. the [CLS][PAD]..[SEP] reference at the embedding block."
    rows_per_sentence = 2  # Captum runs input and reference through the model in one batch

    def __init__(self, multiply_by_inputs: bool = False, **kwargs: Any) -> None:
        super().__init__(multiply_by_inputs=_flag(multiply_by_inputs, "multiply_by_inputs"), **kwargs)

    def attribute_embeddings(self, forward, batch, inputs, baselines, target, words, targets):
        from captum.attr import DeepLift

        return DeepLift(forward, multiply_by_inputs=self._params["multiply_by_inputs"]).attribute(
            inputs, baselines=baselines, target=target, additional_forward_args=self.additional_args(batch)
        )


@register_explainer
class IntegratedGradientsExplainer(GradientExplainer):
    """Integrated Gradients from the ``[CLS] [PAD]… [SEP]`` reference with an accuracy target.

    By default (``n_steps=None``) the path integral is refined per sentence until its **completeness error** is
    at most ``tolerance``. The completeness error is IG's own check on its integral (Sundararajan et al., 2017):
    the attributions must add up to the output difference they explain,

        error = |sum(attributions) - (f(x) - f(reference))| / |f(x) - f(reference)|

    (the denominator is floored at ``sqrt(eps(dtype))`` so a sentence whose output hardly moves from the
    reference is judged on an absolute gap, not on 0/0).

    ``method`` names the rule:

    * ``"adaptive_simpson"`` (the adaptive default, 4.0.0): a locally adaptive Simpson rule on the Clenshaw–Curtis
      nodes of level ``max_steps`` (:class:`~gecobench.explainers.quadrature.AdaptiveSimpson`). It starts from
      ``min_steps / 2`` panels (``min_steps - 1`` interior nodes) and, each round, halves the panel with the
      largest local error estimate of every sentence still above the tolerance (two new nodes), so nodes go
      where the integrand varies instead of doubling everywhere. In the rule's variable the path's ends weigh
      nothing, so their gradients are never taken: f(x) and f(reference) come from one forward-only pass.
    * ``"clenshaw_curtis"`` (3.0.0's adaptive default): nested Clenshaw–Curtis levels ``min_steps``,
      ``2 min_steps``, … ``max_steps`` intervals (:mod:`gecobench.explainers.quadrature`). Each level reuses
      every gradient of the coarser ones, so a sentence that stops at level ``n`` has cost ``n + 1`` gradient
      evaluations in all; both ends of the path are nodes, so f(x) and f(reference) come from the same passes.
      The gradients are computed here (interpolated embeddings → forward → autograd), only for the sentences
      still above the tolerance and only at the new nodes of each level, packed by length into passes of about
      ``tokens_per_forward`` positions.
    * Captum's rules (``"gausslegendre"``, ``"riemann_*"``; 2.0.0's adaptive rule, and every fixed count):
      Captum's ``IntegratedGradients``. Adaptive, ``min_steps`` (default 8) steps doubled until ``max_steps``;
      the points do not nest, so a sentence stopping at 32 steps has cost 8 + 16 + 32 (plus Captum's two
      forward passes per round for its convergence delta).

    A fixed ``n_steps=N`` runs N Captum steps (``method`` defaults to ``"gausslegendre"``) for every sentence,
    as version 1 did (the paper's protocol: ``n_steps=200``).

    After each call ``last_diagnostics`` holds, per sentence: ``n_steps`` (gradient evaluations of the returned
    attributions: the interior nodes used by adaptive Simpson, which also pays two forward-only rows; ``n + 1`` at
    Clenshaw–Curtis level ``n``; N for N Captum steps), ``completeness_error`` (as above) and
    ``convergence_delta`` (the signed gap ``sum(attributions) - (f(x) - f(reference))``).
    """

    name = "integrated_gradients"
    # 5.0.0: at the embedding block's output (4.x and before: the word-embedding lookup); 4.0.0: adaptive default
    # is locally adaptive Simpson (3.x: nested Clenshaw-Curtis; 2.x: Gauss-Legendre doubling; 1.x: a fixed 200 steps)
    version = "5.0.0"
    description = (
        "Integrated Gradients from the [CLS][PAD]..[SEP] reference, a locally adaptive Simpson rule refined per "
        "sentence where the integrand varies until completeness error <= 1%."
    )
    #: Captum's rules, usable with a fixed ``n_steps`` (Gauss–Legendre also adaptively)
    CAPTUM_METHODS: ClassVar[tuple[str, ...]] = (
        "gausslegendre", "riemann_right", "riemann_left", "riemann_middle", "riemann_trapezoid",
    )
    NESTED_METHOD: ClassVar[str] = "clenshaw_curtis"
    SIMPSON_METHOD: ClassVar[str] = "adaptive_simpson"
    #: first level when ``min_steps`` is not given: 8 intervals (7 interior nodes) for adaptive Simpson, 4 intervals
    #: (5 nodes) nested, 8 steps for Captum's rules (2.x)
    SIMPSON_MIN_STEPS: ClassVar[int] = 8
    NESTED_MIN_STEPS: ClassVar[int] = 4
    CAPTUM_MIN_STEPS: ClassVar[int] = 8

    def __init__(
        self, n_steps: int | None = None, method: str | None = None, tolerance: float = 0.01,
        min_steps: int | None = None, max_steps: int = 256, output: str = "probability", **kwargs: Any,
    ) -> None:
        # The target's softmax probability by default: what the authors' IG explains (xai/methods.py,
        # get_integrated_gradients_attributions, LayerIntegratedGradients on their softmax forward_function), while
        # their plain-gradient methods differentiate the logit (SkippingEmbedding returns the logits);
        # output="logit" is the 4.x definition.
        if output not in ("logit", "probability"):
            raise ValueError(f"output must be 'logit' or 'probability', got {output!r}")
        kwargs["output"] = output
        known = (self.SIMPSON_METHOD, self.NESTED_METHOD, *self.CAPTUM_METHODS)
        own_rules = (self.SIMPSON_METHOD, self.NESTED_METHOD)
        if method is not None and method not in known:
            raise ValueError(f"method must be one of {', '.join(known)}, got {method!r}")
        if n_steps is not None:
            if int(n_steps) < 1:
                raise ValueError(f"n_steps must be >= 1 or None (adaptive), got {n_steps}")
            if method in own_rules:
                raise ValueError(
                    f"method={method!r} is adaptive only (leave n_steps unset); a fixed n_steps runs "
                    f"one of Captum's rules: {', '.join(self.CAPTUM_METHODS)}"
                )
            super().__init__(n_steps=int(n_steps), method=method or "gausslegendre", **kwargs)
            return
        method = method or self.SIMPSON_METHOD
        if not 0 < float(tolerance) < 1:
            raise ValueError(f"tolerance must be a relative completeness error in (0, 1), got {tolerance}")
        if min_steps is None:
            min_steps = {self.SIMPSON_METHOD: self.SIMPSON_MIN_STEPS, self.NESTED_METHOD: self.NESTED_MIN_STEPS}.get(
                method, self.CAPTUM_MIN_STEPS)
        min_steps = int(min_steps)
        if min_steps < 1:
            raise ValueError(f"min_steps must be >= 1, got {min_steps}")
        if int(max_steps) < min_steps:
            raise ValueError(f"max_steps ({max_steps}) must be >= min_steps ({min_steps})")
        if method in own_rules:
            ratio = int(max_steps) // min_steps
            if int(max_steps) % min_steps or ratio & (ratio - 1):
                raise ValueError(
                    f"max_steps ({max_steps}) must be min_steps ({min_steps}) times a power of two for "
                    f"{method!r}: its intervals are halved, each finer grid containing the nodes of the one before"
                )
        if method == self.SIMPSON_METHOD and min_steps % 2:
            raise ValueError(
                f"min_steps ({min_steps}) must be even for {method!r}: it starts from min_steps / 2 Simpson panels "
                f"of two intervals each"
            )
        super().__init__(
            n_steps=None, method=method, tolerance=float(tolerance), min_steps=min_steps,
            max_steps=int(max_steps), **kwargs,
        )

    @property
    def adaptive(self) -> bool:
        """True when the step count is chosen per sentence (``n_steps=None``)."""
        return self._params["n_steps"] is None

    @property
    def nested(self) -> bool:
        """True for the nested Clenshaw–Curtis rule (gradients computed here, reused across levels)."""
        return self._params["method"] == self.NESTED_METHOD

    @property
    def locally_adaptive(self) -> bool:
        """True for the adaptive Simpson rule (gradients computed here, panels halved where needed)."""
        return self._params["method"] == self.SIMPSON_METHOD

    def step_schedule(self) -> list[int]:
        """Levels tried in turn: ``min_steps`` doubled until ``max_steps`` (the last one is ``max_steps``).

        Gauss–Legendre: steps (gradient evaluations) per round. Clenshaw–Curtis: intervals ``n`` of each level,
        ``n + 1`` nodes, of which the ``n / 2 + 1`` shared with the level before are not evaluated again. Adaptive
        Simpson: only the first (its starting steps) and the last (the finest grid its panels can be halved down
        to) are used; its panels are halved one at a time, not level by level.
        """
        if not self.adaptive:
            return [self._params["n_steps"]]
        steps, schedule = self._params["min_steps"], []
        while steps < self._params["max_steps"]:
            schedule.append(steps)
            steps *= 2
        return schedule + [self._params["max_steps"]]

    @property
    def packs_rows_by_length(self) -> bool:  # type: ignore[override]
        return self.locally_adaptive or self.nested  # the fixed-step path runs the padded batch

    @property
    def rows_per_sentence(self) -> int:
        # Adaptive: the first round decides the batch; later rounds only re-run the few unconverged sentences.
        first = self.step_schedule()[0]
        if self.locally_adaptive:
            return first - 1  # interior nodes of the first level (the ends' forward-only rows are cheap)
        return first + 1 if self.nested else first

    def attribute_embeddings(self, forward, batch, inputs, baselines, target, words, targets):
        if self.locally_adaptive:
            return self._attribute_simpson(forward, batch, inputs, baselines, target)
        if self.nested:
            return self._attribute_nested(forward, batch, inputs, baselines, target)
        n_sentences = inputs.shape[0]
        lengths = torch.as_tensor(batch.lengths)
        extra = self.additional_args(batch)
        attributions = torch.zeros_like(inputs)
        steps_used = np.zeros(n_sentences, dtype=np.int64)
        errors = np.zeros(n_sentences)
        deltas = np.zeros(n_sentences)
        pending = np.arange(n_sentences)
        tolerance = self._params.get("tolerance", 0.0)
        for n_steps in self.step_schedule():
            # the unconverged sentences only, cut to the longest of them (its padding is masked anyway)
            width = int(lengths[pending].max())
            rows = torch.as_tensor(pending, device=inputs.device)
            attribution, delta = self._integrate(
                forward, inputs[rows, :width], baselines[rows, :width], target[rows],
                tuple(t[rows, :width] for t in extra), n_steps,
            )
            attributions[rows, :width] = attribution
            attributions[rows, width:] = 0
            gap = delta.detach().to(torch.float64).cpu().numpy().reshape(-1)
            total = attribution.detach().to(torch.float64).sum(dim=(1, 2)).cpu().numpy()
            steps_used[pending], deltas[pending] = n_steps, gap
            errors[pending] = completeness_error(gap, total - gap, self.output_dtype(inputs))
            pending = pending[errors[pending] > tolerance]
            if len(pending) == 0:
                break
        self.last_diagnostics = {"convergence_delta": deltas, "n_steps": steps_used, "completeness_error": errors}
        return attributions

    def _attribute_nested(
        self, forward: EmbeddingForward, batch: EncodedBatch, inputs: torch.Tensor, baselines: torch.Tensor,
        target: torch.Tensor,
    ) -> torch.Tensor:
        """Nested Clenshaw–Curtis IG: ``(B, T, 1)`` token scores (hidden dimension already summed, float64).

        Every node's gradient is reduced at once to its per-token contribution ``sum_h (x - b)_h * grad_h``:
        the attribution is linear in the gradients, so any level's result is a weighted sum of those
        contributions and the full ``(T, H)`` gradients need not be kept.
        """
        n_sentences = inputs.shape[0]
        lengths = batch.lengths
        levels = self.step_schedule()
        finest = levels[-1]
        # contributions[i][j]: sentence i's per-token contribution at node j of the finest level's grid
        contributions: list[dict[int, torch.Tensor]] = [{} for _ in range(n_sentences)]
        # f(reference) and f(x): the outputs at the path's two ends, nodes 0 and `finest`
        ends = np.zeros((n_sentences, 2))
        scores = torch.zeros(inputs.shape[:2] + (1,), dtype=torch.float64, device=inputs.device)
        steps_used = np.zeros(n_sentences, dtype=np.int64)
        errors = np.zeros(n_sentences)
        deltas = np.zeros(n_sentences)
        pending = np.arange(n_sentences)
        tolerance = self._params["tolerance"]
        for number, level in enumerate(levels):
            stride = finest // level
            level_nodes = np.arange(0, finest + 1, stride)
            # the nodes the coarser level did not have (all of them on the first level)
            new_nodes = level_nodes if number == 0 else level_nodes[1::2]
            self._gradients_at_nodes(
                forward, batch, inputs, baselines, target, [(i, int(j)) for i in pending for j in new_nodes],
                finest, contributions, ends,
            )
            weights = torch.as_tensor(clenshaw_curtis_weights(level), dtype=torch.float64, device=inputs.device)
            for i in pending:
                length = lengths[i]
                token_scores = weights @ torch.stack([contributions[i][int(j)] for j in level_nodes])
                scores[i, :length, 0] = token_scores
                deltas[i] = float(token_scores.sum()) - (ends[i, 1] - ends[i, 0])
            steps_used[pending] = level + 1
            errors[pending] = completeness_error(deltas[pending], ends[pending, 1] - ends[pending, 0],
                                                 self.output_dtype(inputs))
            pending = pending[errors[pending] > tolerance]
            if len(pending) == 0:
                break
        self.last_diagnostics = {"convergence_delta": deltas, "n_steps": steps_used, "completeness_error": errors}
        return scores

    def _attribute_simpson(
        self, forward: EmbeddingForward, batch: EncodedBatch, inputs: torch.Tensor, baselines: torch.Tensor,
        target: torch.Tensor,
    ) -> torch.Tensor:
        """Locally adaptive Simpson IG: ``(B, T, 1)`` token scores (hidden dimension already summed, float64).

        One forward-only pass gives f(reference) and f(x); then the first level's interior nodes for every
        sentence; then rounds in which each sentence still above the tolerance halves its worst panel. A round's
        new nodes, all sentences together, are packed by length into passes of about ``tokens_per_forward``.
        """
        n_sentences = inputs.shape[0]
        lengths = batch.lengths
        finest = self._params["max_steps"]
        rules = [AdaptiveSimpson(finest, self._params["min_steps"], lengths[i]) for i in range(n_sentences)]
        # f(reference) and f(x): nodes 0 and `finest`, forward only (their weight in the rule is zero)
        ends = np.zeros((n_sentences, 2))
        self._gradients_at_nodes(forward, batch, inputs, baselines, target,
                                 [(i, j) for i in range(n_sentences) for j in (0, finest)], finest, None, ends)
        difference = ends[:, 1] - ends[:, 0]
        contributions: list[dict[int, torch.Tensor]] = [{} for _ in range(n_sentences)]
        rows = [(i, j) for i in range(n_sentences) for j in rules[i].initial_nodes()]
        self._gradients_at_nodes(forward, batch, inputs, baselines, target, rows, finest, contributions, None)
        for i, j in rows:
            rules[i].add(j, contributions[i][j].cpu().numpy())
        for rule in rules:
            rule.start()
        deltas = np.zeros(n_sentences)
        errors = np.zeros(n_sentences)
        pending = list(range(n_sentences))
        tolerance = self._params["tolerance"]
        while pending:
            for i in pending:
                deltas[i] = float(rules[i].estimate().sum()) - difference[i]
            errors[pending] = completeness_error(deltas[pending], difference[pending], self.output_dtype(inputs))
            pending = [i for i in pending if errors[i] > tolerance]
            # a sentence whose panels are all one finest step wide stops here, above the tolerance (diagnostics)
            proposals = {i: rules[i].next_nodes() for i in pending}
            pending = [i for i in pending if proposals[i]]
            rows = [(i, j) for i in pending for j in proposals[i]]
            if not rows:
                break
            self._gradients_at_nodes(forward, batch, inputs, baselines, target, rows, finest, contributions, None)
            for i, j in rows:
                rules[i].add(j, contributions[i][j].cpu().numpy())
            for i in pending:
                rules[i].refine()
        scores = torch.zeros(inputs.shape[:2] + (1,), dtype=torch.float64, device=inputs.device)
        for i, rule in enumerate(rules):
            scores[i, : lengths[i], 0] = torch.as_tensor(rule.estimate(), dtype=torch.float64, device=inputs.device)
        steps_used = np.array([rule.n_nodes for rule in rules], dtype=np.int64)
        self.last_diagnostics = {"convergence_delta": deltas, "n_steps": steps_used, "completeness_error": errors}
        return scores

    def _gradients_at_nodes(
        self, forward: EmbeddingForward, batch: EncodedBatch, inputs: torch.Tensor, baselines: torch.Tensor,
        target: torch.Tensor, rows: list[tuple[int, int]], finest: int,
        contributions: list[dict[int, torch.Tensor]] | None, ends: np.ndarray | None,
    ) -> None:
        """Gradients at ``(sentence, node)`` rows, packed by length into passes of about the token budget.

        Node ``j`` of the finest level (``finest`` intervals) is ``alpha = (1 - cos(j pi / finest)) / 2``; the
        row's input is ``lerp(reference, x, alpha)``, exact at both ends. Fills ``contributions`` and, when given,
        ``ends`` (the outputs at nodes ``0`` and ``finest``). With ``contributions=None`` the passes are
        forward-only (no autograd) and only ``ends`` is filled.
        """
        lengths = batch.lengths
        extra = self.additional_args(batch)
        alphas = clenshaw_curtis_nodes(finest)
        for members in pack_by_length([lengths[i] for i, _ in rows], self.tokens_per_forward):
            pass_rows = [rows[m] for m in members]
            width = max(lengths[i] for i, _ in pass_rows)
            index = torch.as_tensor([i for i, _ in pass_rows], device=inputs.device)
            alpha = torch.as_tensor([alphas[j] for _, j in pass_rows], dtype=inputs.dtype, device=inputs.device)
            start, end = baselines[index, :width].detach(), inputs[index, :width].detach()
            with torch.set_grad_enabled(contributions is not None):
                path = torch.lerp(start, end, alpha[:, None, None]).detach().requires_grad_(contributions is not None)
                outputs = forward(path, *(t[index, :width] for t in extra))
                picked = outputs.gather(1, target[index][:, None])[:, 0]
                if contributions is not None:
                    (gradient,) = torch.autograd.grad(picked.sum(), path)
                    per_token = (gradient * (end - start)).sum(dim=-1).detach().to(torch.float64)
            picked = picked.detach().to(torch.float64).cpu().numpy()
            for r, (i, j) in enumerate(pass_rows):
                if contributions is not None:
                    contributions[i][j] = per_token[r, : lengths[i]]
                if ends is None:
                    continue
                if j == 0:
                    ends[i, 0] = picked[r]
                elif j == finest:
                    ends[i, 1] = picked[r]

    def _integrate(
        self, forward: EmbeddingForward, inputs: torch.Tensor, baselines: torch.Tensor, target: torch.Tensor,
        extra: tuple[torch.Tensor, ...], n_steps: int,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Captum IG with ``n_steps`` for these sentences, the steps in passes of about the token budget."""
        from captum.attr import IntegratedGradients

        n_sentences, n_tokens = inputs.shape[:2]
        steps_per_forward = even_chunk(n_steps, self.rows_per_forward(n_tokens) // n_sentences)
        return IntegratedGradients(forward).attribute(
            inputs,
            baselines=baselines,
            target=target,
            additional_forward_args=extra,
            n_steps=n_steps,
            method=self._params["method"],
            internal_batch_size=steps_per_forward * n_sentences,
            return_convergence_delta=True,
        )


def completeness_error(gap: np.ndarray, output_difference: np.ndarray, dtype: torch.dtype) -> np.ndarray:
    """``|gap| / |f(x) - f(reference)|`` per sentence, the denominator floored for outputs that hardly move.

    ``gap`` is IG's signed completeness gap ``sum(attributions) - (f(x) - f(reference))``; ``dtype`` is the
    precision the outputs were computed in. The floor, ``sqrt(eps(dtype))`` (about 3e-4 in float32, 0.09 in
    bfloat16), is the size below which a difference of two outputs of order one is mostly rounding; a sentence
    whose output difference is that small is judged by the absolute gap. (With float32's floor, bfloat16 outputs
    that hardly move — a randomised model's — never met the tolerance: 255 steps instead of 7.)
    """
    floor = float(np.sqrt(torch.finfo(dtype).eps))
    difference = np.abs(np.asarray(output_difference, dtype=np.float64))
    return np.abs(np.asarray(gap, dtype=np.float64)) / np.maximum(difference, floor)


@register_explainer
class GradientShapExplainer(GradientExplainer):
    """Gradient SHAP: ``E[grad f(b + a (x + e - b))] * (x + e - b)`` over ``a ~ U(0, 1)``, ``e ~ N(0, stdevs²)``.

    The estimator of Captum's ``GradientShap`` with the one ``[CLS] [PAD]… [SEP]`` baseline, written out here so
    every sentence draws its own random stream: Captum draws one stream for the whole batch, which would make a
    sentence's scores depend on the batch it lands in. Noise is added to the sentence's tokens only, never to
    batch padding.
    """

    name = "gradient_shap"
    version = "2.0.0"  # 2.0.0: at the embedding block's output (1.x: at the word-embedding lookup)
    description = "Gradient SHAP with the [CLS][PAD]..[SEP] baseline, per-sentence random draws (Captum's estimator)."

    def __init__(self, n_samples: int = 5, stdevs: float = 0.0, output: str = "probability", **kwargs: Any) -> None:
        if int(n_samples) < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        if float(stdevs) < 0:
            raise ValueError(f"stdevs must be >= 0, got {stdevs}")
        # The target's probability by default, as the authors' GradientShap on their softmax forward_function
        # (xai/methods.py, get_gradient_shap_attributions); output="logit" is the 1.x definition.
        if output not in ("logit", "probability"):
            raise ValueError(f"output must be 'logit' or 'probability', got {output!r}")
        super().__init__(n_samples=int(n_samples), stdevs=float(stdevs), output=output, **kwargs)

    @property
    def rows_per_sentence(self) -> int:
        return self._params["n_samples"]

    def attribute_embeddings(self, forward, batch, inputs, baselines, target, words, targets):
        n_samples, stdevs = self._params["n_samples"], self._params["stdevs"]
        inputs = inputs.detach()
        n_sentences, n_tokens, hidden = inputs.shape
        alphas, noise = [], torch.zeros((n_sentences, n_samples, n_tokens, hidden), dtype=inputs.dtype)
        for i, length in enumerate(batch.lengths):
            generator = torch.Generator().manual_seed(sentence_seed(self.seed, words[i], targets[i]))
            alphas.append(torch.rand(n_samples, generator=generator, dtype=torch.float64))
            if stdevs > 0:
                noise[i, :, :length] = torch.randn((n_samples, length, hidden), generator=generator, dtype=torch.float64).to(inputs.dtype) * stdevs
        alpha = torch.stack(alphas).to(device=inputs.device, dtype=inputs.dtype)  # (B, S)
        noisy = inputs.unsqueeze(1) + noise.to(inputs.device)  # (B, S, T, H)
        delta = noisy - baselines.unsqueeze(1)
        points = (baselines.unsqueeze(1) + alpha[:, :, None, None] * delta).reshape(-1, n_tokens, hidden)
        extra = [t.repeat_interleave(n_samples, dim=0) for t in self.additional_args(batch)]
        row_target = target.repeat_interleave(n_samples)
        grads = []
        chunk = even_chunk(points.shape[0], self.rows_per_forward(n_tokens))
        for start in range(0, points.shape[0], chunk):
            point = points[start : start + chunk].clone().requires_grad_(True)
            output = forward(point, *[t[start : start + chunk] for t in extra])
            picked = output.gather(1, row_target[start : start + chunk, None]).sum()
            grads.append(torch.autograd.grad(picked, point)[0])
        grad = torch.cat(grads).reshape(n_sentences, n_samples, n_tokens, hidden)
        per_sample = grad * delta
        self.last_diagnostics = {"split_half_agreement": self._split_half_agreement(per_sample, batch)}
        return per_sample.mean(dim=1)

    @staticmethod
    def _split_half_agreement(per_sample: torch.Tensor, batch: EncodedBatch) -> np.ndarray:
        """Per sentence: agreement of the word scores from the first and the second half of its samples."""
        half = per_sample.shape[1] // 2
        if half == 0:
            return np.full(per_sample.shape[0], np.nan)
        first = fold_batch(per_sample[:, :half].mean(dim=1), batch)
        second = fold_batch(per_sample[:, half : 2 * half].mean(dim=1), batch)
        return np.array([split_half_agreement(a, b) for a, b in zip(first, second)])


# ----------------------------------------------------------------------------------------- perturbation methods


class PerturbationExplainer(BuiltinExplainer):
    """Whole-word perturbations: every token of a removed word is dropped and the sentence closes up.

    **Sample budget.** ``n_samples=N`` draws N samples for every sentence (a fixed budget, as before the adaptive
    versions; Kernel SHAP's default). ``n_samples=adaptive`` or ``None`` (LIME's default since its 4.0.0) sets an
    accuracy target instead, as adaptive Integrated Gradients does for its steps: each sentence starts from ``min_samples``
    (or ``min_samples_per_word`` times its words, where that is more: LIME's default, 18) and its samples grow, round by round, until its **split-half error** is at most ``tolerance`` or
    ``max_samples`` is reached: ``growth=doubling`` doubles them, ``growth=projected`` goes to the count at which the
    error, falling as ``1/sqrt(n)``, would meet the tolerance (at least ``n + n/4``, at most ``2n``;
    :func:`~gecobench.explainers.stability.next_sample_count`). The split-half error
    (:func:`~gecobench.explainers.stability.split_half_error`) is the estimated relative L2 error of the word
    scores, from the scores fitted on each half of the sentence's samples; it costs no model call. A sentence's
    samples only grow (its random stream goes on where it stopped, so a sentence that stops at ``n`` samples
    has exactly the scores of the fixed budget ``n_samples=n``), outputs of samples drawn in an earlier round
    are reused, and every round evaluates the new samples of all sentences still above the tolerance together
    (each at its own count).
    Diagnostics per sentence: ``n_samples`` (samples the returned scores are fitted on), ``split_half_error``
    and ``split_half_agreement``.
    """

    protocol_keys = ("perturbation", "target", "max_length")
    runs_model = True
    #: the accuracy target of ``n_samples=adaptive`` when ``tolerance``/``min_samples``/``max_samples`` are not given
    adaptive_defaults: ClassVar[dict[str, Any]] = ADAPTIVE_DEFAULTS

    def __init__(
        self, n_samples: int | None, output: str = "probability", perturbations_per_eval: int | None = None,
        deduplicate: bool = True, tolerance: float | None = None, min_samples: int | None = None,
        max_samples: int | None = None, growth: str | None = None, min_samples_per_word: int | None = None,
        **kwargs: Any,
    ) -> None:
        if output not in ("logit", "probability"):
            raise ValueError(f"output must be 'logit' or 'probability', got {output!r}")
        if perturbations_per_eval is not None and int(perturbations_per_eval) < 1:
            raise ValueError(f"perturbations_per_eval must be >= 1, got {perturbations_per_eval}")
        if n_samples == ADAPTIVE_SAMPLES:  # `lime:n_samples=adaptive` on the command line
            n_samples = None
        if n_samples is not None:
            target = {k: v for k, v in (("tolerance", tolerance), ("min_samples", min_samples),
                                        ("max_samples", max_samples), ("growth", growth),
                                        ("min_samples_per_word", min_samples_per_word)) if v is not None}
            if target:  # a fixed budget has no accuracy target: refuse rather than silently ignore it
                raise ValueError(f"{', '.join(target)} set the accuracy target of n_samples=adaptive; with the fixed "
                                 f"budget n_samples={n_samples} they do nothing (give n_samples=adaptive)")
            if int(n_samples) < 2:
                raise ValueError(f"n_samples must be >= 2 or 'adaptive', got {n_samples}")
            super().__init__(n_samples=int(n_samples), output=output, **kwargs)
        else:
            tolerance = self.adaptive_defaults["tolerance"] if tolerance is None else tolerance
            min_samples = self.adaptive_defaults["min_samples"] if min_samples is None else min_samples
            max_samples = self.adaptive_defaults["max_samples"] if max_samples is None else max_samples
            growth = self.adaptive_defaults["growth"] if growth is None else growth
            if not 0 < float(tolerance) < 10:
                raise ValueError(f"tolerance must be a relative split-half error in (0, 10), got {tolerance}")
            if int(min_samples) < 4:
                raise ValueError(f"min_samples must be >= 4 (two halves of at least two samples), got {min_samples}")
            if int(max_samples) < int(min_samples):
                raise ValueError(f"max_samples ({max_samples}) must be >= min_samples ({min_samples})")
            # recorded where the class's target has a floor per word (LIME) or one is asked for, so Kernel SHAP's
            # adaptive records keep their parameters
            if min_samples_per_word is None:
                min_samples_per_word = self.adaptive_defaults.get("min_samples_per_word")
            per_word = {}
            if min_samples_per_word is not None:
                if int(min_samples_per_word) != float(min_samples_per_word) or int(min_samples_per_word) < 0:
                    raise ValueError(f"min_samples_per_word must be a whole number >= 0, got {min_samples_per_word}")
                per_word = {"min_samples_per_word": int(min_samples_per_word)}
            super().__init__(n_samples=None, output=output, tolerance=float(tolerance), min_samples=int(min_samples),
                             max_samples=int(max_samples), growth=check_growth(growth), **per_word, **kwargs)
        # Speed knobs only (results do not change): None = as many perturbed inputs per forward pass as the
        # token budget allows; deduplicate = evaluate a perturbation drawn several times once.
        self.perturbations_per_eval = None if perturbations_per_eval is None else int(perturbations_per_eval)
        self.deduplicate = bool(deduplicate)

    @property
    def adaptive(self) -> bool:
        """True when the sample count is chosen per sentence (``n_samples=None``)."""
        return self._params["n_samples"] is None

    def first_count(self) -> int:
        """The smallest first-round sample count: the fixed budget, or ``min_samples``."""
        return self._params["n_samples"] or self._params["min_samples"]

    def first_counts(self, n_words: Sequence[int]) -> list[int]:
        """Each sentence's sample count in the first round: the fixed budget; adaptive, ``min_samples`` or
        ``min_samples_per_word`` times its words, whichever is more, at most ``max_samples``."""
        if not self.adaptive:
            return [self.first_count()] * len(n_words)
        per_word = self._params.get("min_samples_per_word", 0)
        return [min(self._params["max_samples"], max(self._params["min_samples"], per_word * int(n)))
                for n in n_words]

    def next_round(self, pending: Sequence[int], counts: dict[int, int], error: np.ndarray,
                   n_words: Sequence[int]) -> list[int]:
        """The sentences of ``pending`` that need another round, their ``counts`` raised to that round's: adaptive
        only, a sentence of several words whose split-half error is above the tolerance (or unmeasured) and whose
        count is under ``max_samples``. A one-word sentence has nothing to rank: its first sample set is final."""
        if not self.adaptive:
            return []
        tolerance, most = self._params["tolerance"], self._params["max_samples"]
        going_on = [i for i in pending if n_words[i] > 1 and not error[i] <= tolerance and counts[i] < most]
        for i in going_on:
            counts[i] = next_sample_count(counts[i], float(error[i]), tolerance, most, self._params["growth"])
        return going_on

    @property
    def packs_rows_by_length(self) -> bool:  # type: ignore[override]
        return self.perturbations_per_eval is None  # else Captum's fixed count of rows per pass

    def outputs_without_words(
        self, model: Any, tokenizer: Any, batch: EncodedBatch, keep_words: Sequence[tuple[int, np.ndarray]]
    ) -> list[np.ndarray]:
        """Model outputs of the perturbed sentences (see :func:`~gecobench.explainers.inputs.outputs_without_words`)."""
        return outputs_without_words(
            EmbeddingForward(model, self._params["output"], precision=self.precision), model, batch, keep_words,
            tokenizer.pad_token_id,
            rows_per_forward=self.perturbations_per_eval, tokens_per_forward=self.tokens_per_forward,
            deduplicate=self.deduplicate, **self.removal_options(tokenizer),
        )

    def removal_options(self, tokenizer: Any) -> dict[str, Any]:
        """How a removed word leaves the text, as :func:`~gecobench.explainers.inputs.outputs_without_words`'s
        ``mask_id``/``collapse_masks``: nothing here (its tokens are dropped)."""
        return {}

    def cached_outputs(
        self, model: Any, tokenizer: Any, batch: EncodedBatch, rows: dict[int, np.ndarray],
        cache: dict[int, dict[bytes, np.ndarray]],
    ) -> dict[int, np.ndarray]:
        """Outputs of each sentence's ``(R, n_words)`` keep-rows, evaluating only rows not in ``cache`` (filled
        here): all sentences' new rows in one packed evaluation. Returns ``(R, n_classes)`` per sentence."""
        requests = []
        for i, keep in rows.items():
            seen = cache.setdefault(i, {})
            new = [row for row in keep if np.ascontiguousarray(row).tobytes() not in seen]
            if new:
                # sorted distinct rows: a first round evaluates exactly what the fixed budget's one call does
                requests.append((i, np.unique(np.asarray(new), axis=0) if self.deduplicate else np.asarray(new)))
        if requests:
            for (i, keep), out in zip(requests, self.outputs_without_words(model, tokenizer, batch, requests)):
                for row, value in zip(keep, out):
                    cache[i][np.ascontiguousarray(row).tobytes()] = value
        return {i: np.stack([cache[i][np.ascontiguousarray(row).tobytes()] for row in keep]) for i, keep in rows.items()}

    @property
    def rows_per_sentence(self) -> int:
        return self.first_count()


def word_first_tokens(word_ids: Sequence[int | None], n_words: int) -> np.ndarray:
    """Index of each word's first token (-1 for words lost to truncation)."""
    first = np.full(n_words, -1, dtype=np.int64)
    for position, word in enumerate(word_ids):
        if word is not None and first[word] < 0:
            first[word] = position
    return first


@register_explainer
class LimeExplainer(PerturbationExplainer):
    """LIME on whole words: LimeTextExplainer's sampling, cosine distance and exponential kernel (width 25), the
    ``lime`` package's weighted ridge fit (``LimeBase``'s, solved in closed form: :func:`weighted_ridge_coefficients`).
    As LimeTextExplainer does, a removed word is gone from the text the model reads. All perturbed sentences of a
    batch are evaluated together, sorted by length and packed to the token budget. Word score = ``|ridge
    coefficient|``.

    **The budget follows the sentence** (the default since 4.0.0, ``n_samples=adaptive``; ``None`` is the same): a
    first round of 18 samples per word (``min_samples_per_word``; at least 32, at most 1024), then more until the
    split-half error of the word scores is at most ``tolerance`` (0.25), at most 1024 (see
    :class:`PerturbationExplainer`), so a sentence whose scores settle stops and one that needs more samples gets
    them. The samples come in complementary pairs (``sampling="paired"``, since 5.0.0: every second sample removes
    exactly the words the one before kept, which LimeTextExplainer's distribution gives the same probability; less
    variance in the fit) and a sentence grows to the count its error projects (``growth="projected"``) rather than
    doubling. The floor per word (6.0.0) is what makes the error trustworthy: with halves smaller than the sentence
    has words, two ridge fits agree because the penalty shrinks both, and 5.0.0 stopped such sentences at 32
    samples. ``min_samples_per_word=0,tolerance=0.175`` is the 5.0.0 default,
    ``growth=doubling,sampling=independent,tolerance=0.15,min_samples_per_word=0`` the 4.0.0 one. A fixed budget
    (``n_samples=N``) draws independently, as LimeTextExplainer does, unless ``sampling=paired`` is given:
    ``n_samples=100`` gives the 3.0.0 default's scores, and a fixed budget drawn independently keeps version 4.0.0
    (:meth:`version_for`). The authors' LIME (``xai/methods.py``, ``get_lime_attributions``: Captum's ``LimeBase``)
    draws a fixed number per sentence (Captum's default, 50), ferret's ``min(tokens², 5000)``; the accuracy target
    is a documented departure (docs/reproducing.md). Against ferret's LIME: BENCHMARKS.md, "LIME 6.0.0".
    """

    name = "lime"
    # 6.0.0: the first round at least 18 samples per word (min_samples_per_word), tolerance 0.25: 5.0.0's split-half
    # error, measured on halves smaller than the sentence, stopped sentences early and missed 3x ferret on MiniLMs.
    # 5.0.0: the accuracy target draws paired samples (sampling=paired) and grows them to the projected need
    # (growth=projected; 4.x doubled them), tolerance 0.175: 4.0.0 missed 3x ferret's speed on MiniLM models
    # (issue 36). A fixed budget drawn independently did not change: it keeps 4.0.0 (version_for).
    # 4.0.0: the accuracy target by default (split-half error <= 0.15, 32..1024 samples per sentence; 3.x: a fixed
    # 100 samples, now n_samples=100), because a budget fixed on one model missed ferret's MA on another (issue 36);
    # 3.0.0: explains the target class's probability (2.x: its logit); 2.0.0: removed words are dropped from the
    # text (1.x: [PAD] in place).
    version = "6.0.0"
    description = ("LIME (lime package's ridge, whole words removed) on the target probability, paired samples per "
                   "sentence, from 18 per word until the split-half error <= 0.25 (at most 1024; n_samples=N: a "
                   "fixed budget); |coefficient| per word.")
    adaptive_defaults = LIME_ADAPTIVE_DEFAULTS

    @classmethod
    def version_for(cls, params: dict[str, Any]) -> str:
        # 5.0.0 and 6.0.0 changed how the accuracy target draws and grows its samples; a fixed budget drawn independently
        # draws and fits as in 4.0.0, so its records (the reference grid's lime:n_samples=50) keep their identity
        four = params.get("n_samples") is not None and "sampling" not in params and "removal" not in params
        return "4.0.0" if four else cls.version

    def __init__(self, n_samples: int | str | None = ADAPTIVE_SAMPLES, kernel_width: float = 25.0, output: str = "probability",
                 sampling: str | None = None, removal: str = "delete", **kwargs: Any) -> None:
        if float(kernel_width) <= 0:
            raise ValueError(f"kernel_width must be > 0, got {kernel_width}")
        if sampling is not None and sampling not in LIME_SAMPLING:
            raise ValueError(f"sampling must be one of {', '.join(LIME_SAMPLING)}, got {sampling!r}")
        if removal not in LIME_REMOVALS:
            raise ValueError(f"removal must be one of {', '.join(LIME_REMOVALS)}, got {removal!r}")
        fixed = n_samples not in (None, ADAPTIVE_SAMPLES)
        # A fixed budget draws as LimeTextExplainer does unless told otherwise, and records `sampling` only then, so
        # `lime:n_samples=N` keeps 4.0.0's parameters and scores; the accuracy target pairs by default and says so.
        # `removal` likewise is recorded only when it is not LimeTextExplainer's deletion.
        sampling = sampling or ("independent" if fixed else "paired")
        extra = {} if fixed and sampling == "independent" else {"sampling": sampling}
        if removal != "delete":
            extra["removal"] = removal
        super().__init__(n_samples=n_samples, output=output, kernel_width=float(kernel_width), **extra, **kwargs)
        self.sampling = sampling
        self.removal = removal

    def protocol(self) -> dict[str, Any]:
        out = super().protocol()
        if self.removal == "mask_tokens":
            out["perturbation"] = MASKED_TOKENS_PERTURBATION
        return out

    def removal_options(self, tokenizer: Any) -> dict[str, Any]:
        return mask_removal_options(tokenizer, self.removal, self.name)

    @property
    def rows_per_sentence(self) -> int:
        # The perturbed rows of all sentences in a batch are packed by length together, so a batch of many
        # sentences adds no padding, only better-filled forward passes: let the engine batch like Saliency.
        return 1

    def sample_masks(self, n_words: int, rng: np.random.Generator, n_samples: int | None = None,
                     start: int = 0, previous: np.ndarray | None = None) -> np.ndarray:
        """Rows ``start .. n_samples - 1`` of the ``(n_samples, n_words)`` 0/1 sample matrix; row 0 keeps every
        word. Each row removes a number of words drawn uniformly from 1 to ``n_words - 1`` and then which ones
        (LimeTextExplainer's scheme); with ``sampling="paired"`` every even row is the complement of the row before
        it (it removes exactly the words that row kept), which LimeTextExplainer's distribution gives the same
        probability. Rows are drawn one after the other from ``rng``, so drawing rows ``0..n-1`` and then
        ``n..m-1`` from the same stream gives the ``m`` rows of one draw (``previous``: row ``start - 1``, needed
        when ``start`` is even and the rows are paired)."""
        n_samples = self._params["n_samples"] if n_samples is None else int(n_samples)
        paired = self.sampling == "paired"
        masks = np.ones((n_samples - start, n_words), dtype=np.int64)
        for row in range(max(start, 1), n_samples):
            if paired and row % 2 == 0:
                before = masks[row - start - 1] if row > start else previous
                if before is None:
                    raise ValueError(f"row {row} of a paired draw is the complement of row {row - 1}: pass it as previous")
                masks[row - start] = 1 - before
                continue
            n_removed = int(rng.integers(1, max(n_words, 2)))
            masks[row - start, rng.choice(n_words, size=n_removed, replace=False)] = 0
        return masks

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]) -> list[np.ndarray]:
        batch = encode_batch(tokenizer, words, model_device(model))
        n_sentences = len(words)
        rngs = [np.random.default_rng(sentence_seed(self.seed, words[i], targets[i])) for i in range(n_sentences)]
        masks = [np.zeros((0, batch.n_words[i]), dtype=np.int64) for i in range(n_sentences)]
        cache: dict[int, dict[bytes, np.ndarray]] = {}
        scores: list[np.ndarray] = [np.zeros(n) for n in batch.n_words]
        agreement, error = np.full(n_sentences, np.nan), np.full(n_sentences, np.nan)
        used = np.zeros(n_sentences, dtype=np.int64)
        pending = list(range(n_sentences))
        counts = dict(zip(pending, self.first_counts(batch.n_words)))
        while pending:
            for i in pending:
                previous = masks[i][-1] if len(masks[i]) else None
                masks[i] = np.vstack([masks[i], self.sample_masks(batch.n_words[i], rngs[i], counts[i], len(masks[i]),
                                                                  previous)])
            outputs = self.cached_outputs(model, tokenizer, batch, {i: masks[i] for i in pending}, cache)
            for i in pending:
                scores[i], agreement[i], error[i] = self.fit_sentence(masks[i], outputs[i][:, int(targets[i])])
                used[i] = len(masks[i])
            pending = self.next_round(pending, counts, error, batch.n_words)
        self.last_diagnostics = {"split_half_agreement": agreement, "split_half_error": error,
                                 "n_samples": used.astype(np.float64)}
        return scores

    def fit_sentence(self, masks: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, float, float]:
        """One sentence's word scores from its ``(n, n_words)`` samples (row 0 the whole sentence) and the model's
        outputs for the target on them, with the split-half agreement and error of the fits on each half (NaN
        where a half would be empty): what a round of :meth:`explain` computes for the sentence."""
        kernel_weights = lime_kernel_weights(masks, self._params["kernel_width"])
        fit = functools.partial(self._fit, masks, labels, kernel_weights)
        scores = fit(np.arange(len(masks)))
        # stability: a fit on each half of the perturbed samples, both with the unperturbed row 0 as LIME has
        # (paired: whole pairs in each half, so each half is a paired draw too)
        half = (len(masks) - 1) // 2
        if self.sampling == "paired":
            half -= half % 2
        if half < 1:
            return scores, float("nan"), float("nan")
        first, second = np.arange(1, 1 + half), np.arange(1 + half, 1 + 2 * half)
        first_scores, second_scores = fit(np.r_[0, first]), fit(np.r_[0, second])
        # outputs that no perturbation moves leave nothing to estimate: the fits' coefficients are then float64
        # rounding of the weighted mean, and the ratio of two such roundings means nothing
        error = 0.0 if np.ptp(labels) == 0 else split_half_error(first_scores, second_scores)
        return scores, split_half_agreement(first_scores, second_scores), error

    @staticmethod
    def _fit(masks: np.ndarray, labels: np.ndarray, kernel_weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """|ridge coefficient| per word, fitted on the samples ``rows`` (row 0: the unperturbed sentence)."""
        return np.abs(weighted_ridge_coefficients(masks[rows], labels[rows], kernel_weights[rows]))


def lime_kernel_weights(masks: np.ndarray, kernel_width: float = 25.0) -> np.ndarray:
    """LimeTextExplainer's sample weights for ``(n_samples, n_words)`` 0/1 keep-rows: the cosine distance of each row
    to the whole sentence (all ones), in percent, through the exponential kernel ``sqrt(exp(-d² / width²))``."""
    masks = np.asarray(masks)
    norms = np.linalg.norm(masks, axis=1) * np.sqrt(masks.shape[1])
    cosine = np.divide(masks.sum(axis=1), norms, out=np.zeros(len(masks)), where=norms > 0)
    distances = (1.0 - cosine) * 100
    return np.sqrt(np.exp(-(distances**2) / kernel_width**2))


def weighted_ridge_coefficients(features: np.ndarray, targets: np.ndarray, sample_weights: np.ndarray,
                                alpha: float = 1.0) -> np.ndarray:
    """The coefficients of the ``lime`` package's fit, ``LimeBase.explain_instance_with_data`` with
    ``feature_selection="none"`` (scikit-learn's ``Ridge(alpha=1, fit_intercept=True)`` with the kernel weights as
    ``sample_weight``), solved here in closed form: the weighted means of features and targets are taken out (the
    intercept is not penalised), then ``(Xc' W Xc + alpha I) beta = Xc' W yc``. The same estimate to float64
    rounding (``tests/test_adaptive_samplers.py`` checks it against ``LimeBase``); LimeBase's input validation,
    R² score and local prediction cost 5 ms a fit, more than a small model's forward passes (2026-12-06)."""
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64).reshape(-1)
    w = np.asarray(sample_weights, dtype=np.float64).reshape(-1)
    total = w.sum()
    centred_x = x - (w @ x) / total
    centred_y = y - (w @ y) / total
    weighted_x = centred_x * w[:, None]
    gram = centred_x.T @ weighted_x
    gram[np.diag_indices_from(gram)] += alpha
    return np.linalg.solve(gram, weighted_x.T @ centred_y)


@functools.cache
def _replaying_kernel_shap() -> type:
    """A Captum ``KernelShap`` whose sampler yields recorded coalitions in order instead of drawing new ones."""
    from captum.attr import KernelShap

    class ReplayingKernelShap(KernelShap):
        def __init__(self, forward_func: Any, coalitions: torch.Tensor) -> None:
            self.coalitions = coalitions.round().to(torch.long)
            super().__init__(forward_func)

        def kernel_shap_perturb_generator(self, original_inp: Any, **kwargs: Any) -> Any:
            for row in self.coalitions:
                yield row[None]

    return ReplayingKernelShap


class _CoalitionsDrawn(Exception):
    """Stops a recording run at its first model call, carrying the coalitions it asked the model for."""

    def __init__(self, coalitions: torch.Tensor) -> None:
        super().__init__("coalitions recorded")
        self.coalitions = coalitions


@register_explainer
class KernelShapExplainer(PerturbationExplainer):
    """Captum ``KernelShap`` on whole words, word score = ``|Shapley estimate|``.

    Captum samples coalitions of the sentence's words and fits the weighted linear model; the function it
    explains maps a 0/1 coalition to the model's output on the sentence with the other words removed, so
    the "all absent" baseline is ``[CLS] [SEP]``.

    By default 25 coalitions per sentence, the authors' fixed count (``xai/methods.py``,
    ``get_kernel_shap_attributions``: Captum's ``KernelShap``, ``n_samples=25``). ``n_samples=adaptive`` follows
    the sentence instead: from 32, doubled until the split-half error of the word scores is at most 0.2, at most
    1024 (see :class:`PerturbationExplainer`); Captum draws the coalitions one after the other from the
    sentence's seed, so a round of ``2n`` coalitions starts with the ``n`` of the round before and only the new
    ones are evaluated. Not the default (unlike LIME's, 4.0.0): on fresh OLA and CEfAf models it reached the MA
    of a fixed 500 samples (0.448 / 0.453 and 0.666 / 0.652) but at about half the speed of that budget, 2.2× ferret's
    Partition SHAP on CEfAf (the target is 3×; ferret has no Kernel SHAP); BENCHMARKS.md, "LIME's budget follows
    the sentence".

    Instead of Captum's default of one model call per coalition, a batch is explained in three steps per round:
    Captum's sampling is run for every sentence and stopped at its first model call (the coalitions do not
    depend on model outputs), the coalitions of all sentences are evaluated together (sorted by length, packed
    to the token budget, repeats evaluated once), and Captum runs again on the recorded coalitions and their
    outputs to fit its linear model. The scores equal Captum's own loop (``perturbations_per_eval=1``).
    """

    name = "kernel_shap"
    # 3.0.0: explains the target class's probability (2.x: its logit); 2.0.0: removed words are dropped from the
    # text (1.x: [PAD] in place). The accuracy-target mode (n_samples=adaptive) is a parameter: the default's
    # scores did not change, so neither did the version (LIME's became its default in its 4.0.0, this one did not).
    version = "3.0.0"
    description = ("Captum KernelShap on whole words (removed words dropped) on the target probability, 25 "
                   "coalitions per sentence as the authors' (n_samples=adaptive: doubled until the split-half "
                   "error <= 0.2); |estimate| per word.")

    def __init__(self, n_samples: int | str | None = 25, output: str = "probability", **kwargs: Any) -> None:
        super().__init__(n_samples=n_samples, output=output, **kwargs)

    @property
    def rows_per_sentence(self) -> int:
        # As for LIME: the coalitions of all sentences in a batch are packed by length together.
        return 1

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]) -> list[np.ndarray]:
        batch = encode_batch(tokenizer, words, model_device(model))
        scores = [np.zeros(n) for n in batch.n_words]
        # words lost to truncation are not players
        present = [word_first_tokens(batch.word_ids[i], batch.n_words[i]) >= 0 for i in range(len(words))]
        seeds = [sentence_seed(self.seed, words[i], targets[i]) for i in range(len(words))]

        def keep_matrix(i: int, coalitions: torch.Tensor) -> np.ndarray:
            keep = np.ones((coalitions.shape[0], batch.n_words[i]), dtype=np.int64)
            keep[:, present[i]] = coalitions.round().to(torch.int64).cpu().numpy()
            return keep

        def evaluate(pairs: list[tuple[int, torch.Tensor]]) -> list[torch.Tensor]:
            outputs = self.outputs_without_words(model, tokenizer, batch, [(i, keep_matrix(i, c)) for i, c in pairs])
            return [torch.from_numpy(out) for out in outputs]

        n_players = [int(p.sum()) for p in present]
        agreement = np.full(len(words), np.nan)
        error = np.full(len(words), np.nan)
        used = np.zeros(len(words), dtype=np.int64)
        if self.perturbations_per_eval is not None and not self.adaptive:
            # Captum's own loop: its samples are evaluated as drawn, perturbations_per_eval rows per model call.
            for i in (i for i in range(len(words)) if n_players[i] > 0):
                asked: list[tuple[torch.Tensor, torch.Tensor]] = []

                def sentence_forward(
                    coalitions: torch.Tensor, i: int = i, asked: list[tuple[torch.Tensor, torch.Tensor]] = asked,
                ) -> torch.Tensor:
                    out = evaluate([(i, coalitions)])[0]
                    asked.append((coalitions.detach().clone(), out))
                    return out

                scores[i][present[i]] = self._shapley(
                    sentence_forward, n_players[i], seeds[i], int(targets[i]), self.perturbations_per_eval
                )
                used[i] = sum(c.shape[0] for c, _ in asked)
                if n_players[i] > 1:
                    halves = self._half_estimates(
                        torch.cat([c for c, _ in asked]), torch.cat([o for _, o in asked]), seeds[i], int(targets[i]))
                    if halves is not None:
                        agreement[i], error[i] = split_half_agreement(*halves), split_half_error(*halves)
            self.last_diagnostics = {"split_half_agreement": agreement, "split_half_error": error,
                                     "n_samples": used.astype(np.float64)}
            return scores

        cache: dict[int, dict[bytes, np.ndarray]] = {}
        pending = [i for i in range(len(words)) if n_players[i] > 0]
        counts = dict(zip(pending, self.first_counts([n_players[i] for i in pending])))
        while pending:
            # 1. the coalitions each sentence's run asks for (a one-player sentence: just "with" and "without" it)
            coalitions: dict[int, torch.Tensor] = {}
            for i in pending:
                try:
                    self._shapley(self._stop_at_model_call, n_players[i], seeds[i], int(targets[i]), counts[i],
                                  n_samples=counts[i])
                except _CoalitionsDrawn as drawn:
                    coalitions[i] = drawn.coalitions
                else:
                    raise RuntimeError("kernel_shap: Captum fitted its model without calling it; cannot record its coalitions")
            # 2. every sentence's coalitions not evaluated in an earlier round, in one packed evaluation
            computed = self.cached_outputs(model, tokenizer, batch, {i: keep_matrix(i, c) for i, c in coalitions.items()},
                                           cache)
            # 3. Captum again, on the recorded coalitions, reading the outputs computed in step 2
            for i, c in coalitions.items():
                out = torch.from_numpy(computed[i])
                forward = functools.partial(self._replay, c, out)
                scores[i][present[i]] = self._shapley(forward, c.shape[1], seeds[i], int(targets[i]), counts[i],
                                                      replay=c, n_samples=counts[i])
                used[i] = c.shape[0]
                if n_players[i] > 1:
                    halves = self._half_estimates(c, out, seeds[i], int(targets[i]))
                    if halves is not None:
                        agreement[i], error[i] = split_half_agreement(*halves), split_half_error(*halves)
            # one player: its value is exact after the first round
            pending = self.next_round(pending, counts, error, n_players)
        self.last_diagnostics = {"split_half_agreement": agreement, "split_half_error": error,
                                 "n_samples": used.astype(np.float64)}
        return scores

    def _half_estimates(self, coalitions: torch.Tensor, outputs: torch.Tensor, seed: int,
                        target: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Captum's fit on each half of the sampled coalitions (both halves keep the all-present and all-absent
        coalitions Captum always evaluates first); no model call, the outputs are reused. ``None``: too few."""
        half = (coalitions.shape[0] - 2) // 2
        if half < 1:
            return None
        estimates = []
        for rows in (torch.arange(2, 2 + half), torch.arange(2 + half, 2 + 2 * half)):
            rows = torch.cat([torch.tensor([0, 1]), rows])
            subset, subset_outputs = coalitions[rows], outputs[rows]
            forward = functools.partial(self._replay, subset, subset_outputs)
            estimates.append(self._shapley(forward, coalitions.shape[1], seed, target, len(rows), replay=subset,
                                           n_samples=len(rows)))
        return estimates[0], estimates[1]

    def _shapley(
        self, players_forward: Any, n_players: int, seed: int, target: int, per_eval: int,
        replay: torch.Tensor | None = None, n_samples: int | None = None,
    ) -> np.ndarray:
        """|Captum KernelShap estimate| per player; ``players_forward`` maps 0/1 rows over the players to outputs.

        Captum draws its coalitions from ``seed``, or, with ``replay``, takes these recorded ones in order.
        """
        if n_players == 1:
            # One player: its Shapley value is exactly f(sentence) - f(sentence without it).
            both = players_forward(torch.tensor([[1.0], [0.0]], dtype=torch.float64))
            return np.array([abs(float(both[0, target] - both[1, target]))])
        from captum.attr import KernelShap

        explainer = KernelShap(players_forward) if replay is None else _replaying_kernel_shap()(players_forward, replay)
        # Captum samples on the CPU from torch's default generator: seed it, then give the caller's state back
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(seed)
            attributions = explainer.attribute(
                torch.ones((1, n_players), dtype=torch.float64),
                baselines=torch.zeros((1, n_players), dtype=torch.float64),
                target=target,
                n_samples=self._params["n_samples"] if n_samples is None else n_samples,
                perturbations_per_eval=per_eval,
            )
        return np.abs(attributions[0].cpu().numpy())

    @staticmethod
    def _stop_at_model_call(coalitions: torch.Tensor) -> torch.Tensor:
        raise _CoalitionsDrawn(coalitions.detach().clone())

    @staticmethod
    def _replay(recorded: torch.Tensor, outputs: torch.Tensor, coalitions: torch.Tensor) -> torch.Tensor:
        if not torch.equal(coalitions, recorded):
            raise RuntimeError("kernel_shap: Captum asked for other coalitions than the recorded ones; cannot replay")
        return outputs


# -------------------------------------------------------------------------------------------------- baselines


@register_explainer
class UniformRandomExplainer(BuiltinExplainer):
    """Baseline: independent ``U(0, 1)`` draws, one random stream per sentence.

    By default (``per="token"``, 2.0.0) one draw per word piece of the model's tokenizer, summed per word by the
    word rule, as the authors draw it (``xai/methods.py``, ``get_uniform_random_attributions``: ``torch.rand`` of
    the token ids' shape): a word of ``k`` tokens scores the sum of ``k`` draws. ``per="word"`` (1.x) draws one
    score per word. Only the tokenizer is used, never the model.
    """

    name = "uniform_random"
    version = "2.0.0"  # 2.0.0: drawn per token, summed per word (1.x: one draw per word)
    model_independent = True
    is_baseline = True
    description = "Baseline: uniform random token scores, summed per word."
    UNITS: ClassVar[tuple[str, ...]] = ("token", "word")

    def __init__(self, per: str = "token", **kwargs: Any) -> None:
        if per not in self.UNITS:
            raise ValueError(f"uniform_random: per must be one of {', '.join(self.UNITS)}, got {per!r}")
        super().__init__(per=per, **kwargs)

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]) -> list[np.ndarray]:
        streams = [np.random.default_rng(sentence_seed(self.seed, sentence, target))
                   for sentence, target in zip(words, targets)]
        if self._params["per"] == "word":
            return [rng.uniform(size=len(sentence)) for rng, sentence in zip(streams, words)]
        from gecobench.words import fold_token_scores_to_words

        _, word_ids = tokenize_words(tokenizer, words, max_length=DEFAULT_MAX_LENGTH, padding=False, return_tensors=None)
        out = []
        for rng, sentence, ids in zip(streams, words, word_ids):
            word_tokens = [w for w in ids if w is not None]  # the sentence's word pieces, special tokens left out
            out.append(fold_token_scores_to_words(rng.uniform(size=len(word_tokens)), word_tokens, len(sentence)))
        return out


@register_explainer
class PatternVariantExplainer(BuiltinExplainer):
    """Baseline: the covariance between each vocabulary item's tf-idf feature and the label (Haufe et al.'s
    activation pattern of a linear model), the same for every sentence.

    Defaults (2.0.0) as the authors compute their "Covariance" baseline (``xai/main.py``,
    ``prepare_data_for_covariance_calculation``, ``apply_xai_methods``; ``xai/methods.py``,
    ``calculate_covariance_between_words_target``): fitted on the **split being explained** (``fit_on="explained"``;
    the runner hands it over), on the **word pieces** of the model's tokenizer (``unit="word_piece"``), with the
    **integer label** (``label="integer"``: ``cov(tfidf_j, y)``, one pattern whatever the target). A token scores
    ``|pattern|`` of its piece, summed per word by the word rule; pieces unseen in the fit score 0.

    The 1.x definition: ``fit_on="train"``, ``unit="word"`` (lower-cased whole words), ``label="one_hot"``
    (for class ``c`` the pattern is ``cov(tfidf_j, 1[y == c])``, the target class's row is used; in the binary case
    ``±cov(tfidf_j, y)``).
    """

    name = "pattern_variant"
    version = "2.0.0"  # 2.0.0: explained split, word pieces, integer label (1.x: train split, words, one-hot)
    model_independent = True
    is_baseline = True
    description = "Baseline: |cov(tf-idf word-piece feature, label)| fitted on the explained split, summed per word."
    FIT_SPLITS: ClassVar[tuple[str, ...]] = ("explained", "train")
    UNITS: ClassVar[tuple[str, ...]] = ("word_piece", "word")
    LABELS: ClassVar[tuple[str, ...]] = ("integer", "one_hot")

    def __init__(self, fit_on: str = "explained", unit: str = "word_piece", label: str = "integer", **kwargs: Any) -> None:
        for parameter, value, allowed in (("fit_on", fit_on, self.FIT_SPLITS), ("unit", unit, self.UNITS),
                                          ("label", label, self.LABELS)):
            if value not in allowed:
                raise ValueError(f"pattern_variant: {parameter} must be one of {', '.join(allowed)}, got {value!r}")
        super().__init__(fit_on=fit_on, unit=unit, label=label, **kwargs)
        self._fitted: tuple[list[list[str]], np.ndarray] | None = None
        # per tokenizer (by identity; the entry keeps it alive, so its id is not reused): vocabulary and patterns
        self._patterns: dict[int | None, tuple[Any, dict[str, int], np.ndarray]] = {}

    @property
    def fit_split(self) -> str:
        """The split :meth:`fit` must be given: ``"explained"`` (the one being explained) or ``"train"``."""
        return self._params["fit_on"]

    def fit(self, words: Sequence[Sequence[str]], labels: Sequence[int]) -> None:
        if len(words) != len(labels):
            raise ValueError(f"fit got {len(words)} sentences but {len(labels)} labels")
        if len(words) < 2:
            raise ValueError("pattern_variant.fit needs at least two sentences")
        y = np.asarray(labels)
        if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
            raise ValueError("pattern_variant.fit: labels must be non-negative integers")
        # The features need the tokenizer for word pieces, which only explain() receives: computed there, once
        # per tokenizer.
        self._fitted = ([list(sentence) for sentence in words], y)
        self._patterns = {}

    def _pattern(self, tokenizer: Any) -> tuple[dict[str, int], np.ndarray]:
        """The fitted vocabulary (feature -> column) and the patterns ``(n_rows, n_vocabulary)``."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        assert self._fitted is not None
        by_piece = self._params["unit"] == "word_piece"
        key = id(tokenizer) if by_piece else None
        if key not in self._patterns or self._patterns[key][0] is not (tokenizer if by_piece else None):
            sentences, y = self._fitted
            documents = ([pieces for pieces, _ in _word_pieces(tokenizer, sentences)] if by_piece
                         else [_lower_words(s) for s in sentences])
            vectorizer = TfidfVectorizer(analyzer=_identity)
            features = vectorizer.fit_transform(documents).toarray()
            indicator = (y[:, None].astype(np.float64) if self._params["label"] == "integer"
                         else np.eye(int(y.max()) + 1)[y])
            centred = features - features.mean(axis=0)
            patterns = ((indicator - indicator.mean(axis=0)).T @ centred) / (len(y) - 1)
            vocabulary = {item: int(j) for item, j in vectorizer.vocabulary_.items()}
            self._patterns[key] = (tokenizer if by_piece else None, vocabulary, patterns)
        return self._patterns[key][1:]

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]) -> list[np.ndarray]:
        if self._fitted is None:
            where = "the split being explained" if self.fit_split == "explained" else "the train split"
            raise RuntimeError(f"pattern_variant must be fitted on {where} first: call fit(words, labels)")
        vocabulary, patterns = self._pattern(tokenizer)
        n_classes = int(self._fitted[1].max()) + 1
        from gecobench.words import fold_token_scores_to_words

        out = []
        pieces = _word_pieces(tokenizer, words) if self._params["unit"] == "word_piece" else None
        for k, (sentence, target) in enumerate(zip(words, targets)):
            if not 0 <= int(target) < max(n_classes, 2):
                raise ValueError(f"pattern_variant: target {target} outside the fitted classes 0..{n_classes - 1}")
            row = patterns[0] if self._params["label"] == "integer" else patterns[int(target)]
            if pieces is None:
                out.append(np.array([abs(row[vocabulary[w]]) if w in vocabulary else 0.0 for w in _lower_words(sentence)]))
                continue
            sentence_pieces, piece_words = pieces[k]
            token_scores = [row[vocabulary[p]] if p in vocabulary else 0.0 for p in sentence_pieces]
            out.append(fold_token_scores_to_words(token_scores, piece_words, len(sentence)))
        return out


def _identity(document: list[str]) -> list[str]:
    return document


def _word_pieces(tokenizer: Any, sentences: Sequence[Sequence[str]]) -> list[tuple[list[str], list[int]]]:
    """Each sentence's word pieces (special tokens left out): their ids, as strings for the vectorizer, and the
    word each belongs to.

    The authors decode every piece to a string and feed the pieces to a ``CountVectorizer``; its default token
    pattern drops one-character pieces and the ``##`` of continuation pieces, so ``"a"`` and ``"##s"`` never get a
    feature there. Here every piece is a feature (by its id), which is what their vocabulary of pieces intends.
    """
    encoding, word_ids = tokenize_words(tokenizer, sentences, max_length=DEFAULT_MAX_LENGTH, padding=False, return_tensors=None)
    return [([str(t) for t, w in zip(ids, wids) if w is not None], [w for w in wids if w is not None])
            for ids, wids in zip(encoding["input_ids"], word_ids)]


def _lower_words(sentence: Sequence[str]) -> list[str]:
    return [word.strip().lower() for word in sentence]
