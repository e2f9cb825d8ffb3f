"""The batched attribution engine: one validated score per word for every sentence, fast.

:func:`attribute` sorts the sentences by token length, cuts the sorted list into batches of at most
``tokens_per_batch`` token positions (one forward pass fits the CPU cache) where padding plus a per-batch cost is
least (:func:`plan_batches`), calls the explainer once per batch and puts the results back in the caller's order.
Every explainer output is checked by :func:`validate_word_scores` (one finite score per word), token-level outputs
are folded to words with the shared rule. Batched scores equal those of the same explainer run one sentence at a
time (``batch_size=1``): padded positions are masked out, references of padded positions equal the input, and
random explainers draw one stream per sentence.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from gecobench.explainers.base import Explainer, TokenAttributions
from gecobench.explainers.inputs import CALL_COST_TOKENS, DEFAULT_MAX_LENGTH, pack_by_length
from gecobench.words import fold_token_scores_to_words, tokenize_words

#: token positions per batch when neither the caller nor the explainer says otherwise
DEFAULT_TOKENS_PER_BATCH = 1024
#: The fixed cost of one explainer call on a batch of :data:`DEFAULT_TOKENS_PER_BATCH`, in the token positions the
#: same time computes: a gradient method's call is a forward and a backward pass plus encoding and folding, about
#: two forward calls' fixed cost (``CALL_COST_TOKENS`` each). On 32 test sentences of the reference MiniLM the
#: greedy fill this replaced padded 1,092 positions for 799 tokens (batches of 30 and 2 sentences); with this
#: cost: 866 in batches of 14, 15 and 3 (BENCHMARKS.md, "Against ferret").
BATCH_COST_TOKENS = 2 * CALL_COST_TOKENS


class AttributionError(ValueError):
    """An explainer returned something that is not one finite score per word."""


@dataclass
class AttributionResult:
    """Word scores in the caller's order, per-sentence diagnostics (e.g. IG convergence deltas), the protocol."""

    scores: list[np.ndarray]
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)
    protocol: dict[str, Any] = field(default_factory=dict)


def validate_word_scores(
    explainer_name: str,
    outputs: Any,
    words: Sequence[Sequence[str]],
    sentence_indices: Sequence[int] | None = None,
) -> list[np.ndarray]:
    """Check an explainer's output for a batch and return float64 word scores.

    Args:
        explainer_name: named in every error message.
        outputs: what ``explain`` returned: one array (or :class:`TokenAttributions`) per sentence.
        words: the batch's sentences.
        sentence_indices: the caller's index of each sentence, used in error messages (default ``0..n-1``).

    Raises:
        AttributionError: wrong number of outputs, wrong shape or length, NaN or infinite values; the message
            names the explainer and the sentence.
    """
    indices = list(range(len(words))) if sentence_indices is None else list(sentence_indices)
    if not isinstance(outputs, (list, tuple)):
        raise AttributionError(
            f"explainer {explainer_name!r} must return a list with one entry per sentence, got {type(outputs).__name__}"
        )
    if len(outputs) != len(words):
        raise AttributionError(
            f"explainer {explainer_name!r} returned {len(outputs)} results for a batch of {len(words)} sentences "
            f"(sentences {indices[0]}..{indices[-1]})"
        )
    checked = []
    for output, sentence, index in zip(outputs, words, indices):
        where = f"explainer {explainer_name!r}, sentence {index}"
        if isinstance(output, TokenAttributions):
            try:
                output = fold_token_scores_to_words(output.scores, output.word_ids, len(sentence))
            except ValueError as error:
                raise AttributionError(f"{where}: bad token attributions: {error}") from None
        try:
            scores = np.asarray(output, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise AttributionError(f"{where}: scores are not numeric ({error})") from None
        if scores.shape != (len(sentence),):
            raise AttributionError(f"{where}: expected {len(sentence)} word scores (shape ({len(sentence)},)), got shape {scores.shape}")
        if np.isnan(scores).any():
            raise AttributionError(f"{where}: NaN score at word(s) {np.flatnonzero(np.isnan(scores)).tolist()}")
        if np.isinf(scores).any():
            raise AttributionError(f"{where}: infinite score at word(s) {np.flatnonzero(np.isinf(scores)).tolist()}")
        checked.append(scores)
    return checked


def token_lengths(tokenizer: Any, words: Sequence[Sequence[str]], max_length: int = DEFAULT_MAX_LENGTH) -> list[int]:
    """Number of tokens (special tokens included, after truncation) of each sentence."""
    encoding, _ = tokenize_words(tokenizer, words, max_length=max_length, padding=False, return_tensors=None,
                                 cache=True)
    return [len(ids) for ids in encoding["input_ids"]]


def plan_batches(lengths: Sequence[int], batch_size: int | None, tokens_per_batch: int,
                 padded: bool = True) -> list[list[int]]:
    """Group sentence indices into batches of similar length.

    Sentences are sorted by length (stable, so ties keep their order). With ``batch_size`` the sorted list is cut
    into runs of that many sentences. Otherwise each batch holds at most ``tokens_per_batch`` positions
    (``sentences * longest``; a lone longer sentence gets a batch of its own), and:

    * ``padded`` (the explainer runs the padded batch through the model: the gradient methods): the runs minimise
      the padded positions plus a fixed cost per batch, :data:`BATCH_COST_TOKENS` at the default budget and in
      proportion to the budget (a budget divided among a sentence's many inputs, or multiplied for a small model
      by :func:`~gecobench.explainers.inputs.token_budget_scale`, counts positions of another size). The rule is
      :func:`~gecobench.explainers.inputs.pack_by_length`'s, by which the perturbation methods pack their rows.
    * not ``padded`` (the explainer packs its own model inputs by length, so the batch's padding costs nothing):
      each batch is filled while the budget allows, the fewest batches.
    """
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be >= 1 or None, got {batch_size}")
    if tokens_per_batch < 1:
        raise ValueError(f"tokens_per_batch must be >= 1, got {tokens_per_batch}")
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    if batch_size is not None:
        return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    if padded:
        batch_cost = BATCH_COST_TOKENS * tokens_per_batch / DEFAULT_TOKENS_PER_BATCH
        return [[int(i) for i in batch] for batch in pack_by_length(lengths, tokens_per_batch, batch_cost)]
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        if current and (len(current) + 1) * lengths[index] > tokens_per_batch:
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def _check_inputs(words: Sequence[Sequence[str]], targets: Sequence[int]) -> None:
    if len(words) != len(targets):
        raise ValueError(f"got {len(words)} sentences but {len(targets)} targets")
    for index, (sentence, target) in enumerate(zip(words, targets)):
        if isinstance(sentence, str) or len(sentence) == 0:
            raise ValueError(f"sentence {index} must be a non-empty list of words, got {sentence!r}")
        if not all(isinstance(word, str) for word in sentence):
            raise ValueError(f"sentence {index} contains a non-string word")
        if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or target < 0:
            raise ValueError(f"target {index} must be a non-negative class index, got {target!r}")


def attribute_detailed(
    explainer: Explainer,
    model: Any,
    tokenizer: Any,
    words: Sequence[Sequence[str]],
    targets: Sequence[int],
    batch_size: int | None = None,
    seed: int = 0,
    progress: bool = False,
    tokens_per_batch: int | None = None,
    max_length: int = DEFAULT_MAX_LENGTH,
) -> AttributionResult:
    """:func:`attribute` plus diagnostics (per sentence, caller's order) and the explainer's protocol."""
    _check_inputs(words, targets)
    # the built-ins' token budget follows the model's size (a small model's passes are mostly overhead)
    sizing = explainer.sized_for(model) if hasattr(explainer, "sized_for") else contextlib.nullcontext()
    with sizing:
        return _attribute_detailed(explainer, model, tokenizer, words, targets, batch_size, seed, progress,
                                   tokens_per_batch, max_length)


def _attribute_detailed(explainer: Explainer, model: Any, tokenizer: Any, words: Sequence[Sequence[str]],
                        targets: Sequence[int], batch_size: int | None, seed: int, progress: bool,
                        tokens_per_batch: int | None, max_length: int) -> AttributionResult:
    targets = [int(t) for t in targets]
    budget = tokens_per_batch or getattr(explainer, "tokens_per_forward", DEFAULT_TOKENS_PER_BATCH)
    if getattr(explainer, "model_independent", False) and batch_size is None:
        batches = [list(range(len(words)))]
    else:
        # Methods that expand a sentence into many model inputs (IG steps, samples) get fewer sentences per
        # batch, so their long internal batches stay length-homogeneous instead of padded.
        expansion = max(1, int(getattr(explainer, "rows_per_sentence", 1)))
        batches = plan_batches(token_lengths(tokenizer, words, max_length), batch_size, max(1, budget // expansion),
                               padded=not getattr(explainer, "packs_rows_by_length", False))

    # Random explainers that follow the built-ins' convention derive per-sentence streams from the run seed;
    # the global generators are seeded too so third-party explainers are at least reproducible.
    if hasattr(explainer, "set_seed"):
        explainer.set_seed(seed)
    torch.manual_seed(seed)
    np.random.seed(seed % (2**32))
    random.seed(seed)

    was_training = bool(getattr(model, "training", False)) if model is not None else False
    if model is not None and hasattr(model, "eval"):
        model.eval()  # dropout would make scores random and batch-dependent
    scores: list[np.ndarray | None] = [None] * len(words)
    diagnostics: dict[str, list[Any]] = {}
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(words), desc=f"explain:{explainer.name}", unit="sent")
    try:
        for batch in batches:
            batch_words = [list(words[i]) for i in batch]
            outputs = explainer.explain(model, tokenizer, batch_words, [targets[i] for i in batch])
            for index, checked in zip(batch, validate_word_scores(explainer.name, outputs, batch_words, batch)):
                scores[index] = checked
            for key, values in (getattr(explainer, "last_diagnostics", None) or {}).items():
                values = np.asarray(values).reshape(-1)
                if values.shape[0] != len(batch):
                    raise AttributionError(
                        f"explainer {explainer.name!r}: diagnostic {key!r} has {values.shape[0]} values for "
                        f"{len(batch)} sentences"
                    )
                slot = diagnostics.setdefault(key, [None] * len(words))
                for index, value in zip(batch, values):
                    slot[index] = value
            if bar is not None:
                bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()
        if was_training:
            model.train()
    missing = [i for i, s in enumerate(scores) if s is None]
    if missing:  # a planning bug, never silently drop sentences
        raise AttributionError(f"explainer {explainer.name!r}: no scores produced for sentences {missing[:10]}")
    return AttributionResult(
        scores=[s for s in scores if s is not None],
        diagnostics={key: np.asarray(values, dtype=np.float64) for key, values in diagnostics.items()},
        protocol=explainer.protocol() if hasattr(explainer, "protocol") else {"explainer": explainer.name},
    )


def summarize_diagnostics(diagnostics: dict[str, Sequence[float] | np.ndarray]) -> dict[str, dict[str, float | int]]:
    """Per-sentence diagnostics (e.g. IG's ``n_steps`` and ``completeness_error``) summarised for a record.

    Each diagnostic becomes ``{"n", "mean", "median", "min", "max"}`` over its finite values (``n`` counts them);
    a diagnostic with no finite value is left out.
    """
    summary: dict[str, dict[str, float | int]] = {}
    for key, values in sorted(diagnostics.items()):
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        values = values[np.isfinite(values)]
        if values.size:
            summary[key] = {"n": int(values.size), "mean": float(values.mean()), "median": float(np.median(values)),
                            "min": float(values.min()), "max": float(values.max())}
    return summary


def attribute(
    explainer: Explainer,
    model: Any,
    tokenizer: Any,
    words: list[list[str]],
    targets: list[int],
    batch_size: int | None = None,
    seed: int = 0,
    progress: bool = False,
) -> list[np.ndarray]:
    """Validated word scores (one float64 array per sentence, in the caller's order).

    Args:
        explainer: any :class:`~gecobench.explainers.base.Explainer` (e.g. ``get_explainer("saliency")``).
        model: a model of the zoo contract.
        tokenizer: the model's tokenizer.
        words: sentences as lists of words.
        targets: the class to explain for each sentence.
        batch_size: sentences per call of the explainer; ``None`` (default) sizes batches by token count.
            ``batch_size=1`` is the one-sentence-at-a-time reference protocol.
        seed: run seed; the same seed gives the same scores whatever the batching.
        progress: show a tqdm progress bar.
    """
    return attribute_detailed(explainer, model, tokenizer, words, targets, batch_size, seed, progress).scores
