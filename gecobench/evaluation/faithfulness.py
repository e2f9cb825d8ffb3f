"""Faithfulness evaluators that call the model: comprehensiveness, sufficiency (AOPC) and leave-one-out tau.

:class:`FaithfulnessProbe` turns (sentences, explained classes, word scores) into the model probabilities the
metrics need and the per-sentence values (:mod:`gecobench.metrics.faithfulness` has the math). Every perturbed
sentence — the whole sentence, each word left out, each rationale removed, each rationale alone — is built by
the engine's word removal (:func:`~gecobench.explainers.inputs.outputs_without_words`: every token of a removed
word dropped, the sentence closing up, exactly as LIME and Kernel SHAP see it) and all rows of a batch go
through the model together, sorted by length and packed into forward passes
(:func:`~gecobench.explainers.inputs.pack_by_length`); a row needed twice for a sentence is evaluated once.

A probe keeps every probability it computed per (sentence, class, perturbed sentence): the whole sentence and the
leave-one-out rows do not depend on the explainer, and explainers often agree on the top words, so in an
evaluation of ten explainers each distinct perturbed sentence goes through the model once.

:func:`score_faithfulness` turns a run's per-sentence values into the record's metric blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from gecobench.evaluation.properties import summary_block
from gecobench.explainers.inputs import (
    DEFAULT_MAX_LENGTH,
    EmbeddingForward,
    encode_batch,
    model_device,
    outputs_without_words,
)
from gecobench.metrics import faithfulness as faith

#: the record blocks this module writes, in the order the Space shows them
FAITHFULNESS_METRICS = ("comprehensiveness", "sufficiency", "leave_one_out_tau")

#: sentences whose perturbed rows go through the model in one packed evaluation (bounds memory, not results)
SENTENCES_PER_EVALUATION = 64


@dataclass
class SentenceFaithfulness:
    """One sentence's faithfulness: probabilities, curves over the removal fractions and the three values.

    ``*_curve[f]`` is ``p(x) - p(perturbed x)`` at fraction ``f`` (NaN where the rationale is empty);
    ``counted[f]`` says whether fraction ``f`` enters the AOPC. The three values are NaN when undefined.
    """

    full_probability: float
    comprehensiveness_curve: np.ndarray
    sufficiency_curve: np.ndarray
    counted: np.ndarray
    leave_one_out: np.ndarray
    comprehensiveness: float
    sufficiency: float
    leave_one_out_tau: float


class FaithfulnessProbe:
    """Comprehensiveness, sufficiency and leave-one-out tau of word scores on one model.

    Args:
        model: a model of the zoo contract (its softmax output is read).
        tokenizer: its tokenizer.
        fractions: removal fractions (default ferret's ``0.1, ..., 1.0``).
        tokens_per_forward: token positions per forward pass (a speed knob: results do not depend on it).
        max_length: tokenizer truncation, as for the explainers.
    """

    def __init__(self, model: Any, tokenizer: Any, fractions: Sequence[float] = faith.DEFAULT_REMOVAL_FRACTIONS,
                 tokens_per_forward: int = 1024, max_length: int = DEFAULT_MAX_LENGTH) -> None:
        if tokenizer.pad_token_id is None:
            raise ValueError("the tokenizer has no pad token; word removal pads the shortened sentences with it")
        self.model, self.tokenizer = model, tokenizer
        self.fractions = tuple(float(f) for f in faith.check_fractions(fractions))
        self.tokens_per_forward = int(tokens_per_forward)
        self.max_length = int(max_length)
        # (words, class) -> {keep-row bytes: probability}: a perturbed sentence is evaluated once per model, whichever
        # explainer asks for it (every explainer needs p(x) and the leave-one-out rows; rationales often coincide)
        self._row_cache: dict[tuple[tuple[str, ...], int], dict[bytes, float]] = {}

    def evaluate(self, words: Sequence[Sequence[str]], targets: Sequence[int],
                 scores: Sequence[Sequence[float]]) -> list[SentenceFaithfulness]:
        """Per-sentence faithfulness of ``scores`` (one score per word) for the classes ``targets``."""
        if not len(words) == len(targets) == len(scores):
            raise ValueError(f"got {len(words)} sentences, {len(targets)} targets and {len(scores)} score vectors")
        checked = []
        for index, (sentence, target, row) in enumerate(zip(words, targets, scores)):
            values = np.asarray(row, dtype=np.float64).reshape(-1)
            if isinstance(sentence, str) or len(sentence) == 0:
                raise ValueError(f"sentence {index} must be a non-empty list of words, got {sentence!r}")
            if values.size != len(sentence):
                raise ValueError(f"scores: sentence {index} has {values.size} scores for {len(sentence)} words")
            if not np.isfinite(values).all():
                raise ValueError(f"scores: sentence {index} has a NaN or infinite score at word "
                                 f"{int(np.flatnonzero(~np.isfinite(values))[0])}")
            if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or target < 0:
                raise ValueError(f"targets: entry {index} must be a non-negative class index, got {target!r}")
            checked.append(values)
        results: list[SentenceFaithfulness] = []
        was_training = bool(getattr(self.model, "training", False))
        self.model.eval()  # dropout would make the probabilities random
        try:
            for start in range(0, len(words), SENTENCES_PER_EVALUATION):
                stop = start + SENTENCES_PER_EVALUATION
                results += self._evaluate_batch([list(w) for w in words[start:stop]],
                                                [int(t) for t in targets[start:stop]], checked[start:stop])
        finally:
            if was_training:
                self.model.train()
        return results

    def _evaluate_batch(self, words: list[list[str]], targets: list[int], scores: list[np.ndarray]
                        ) -> list[SentenceFaithfulness]:
        # Every row a sentence needs: the whole sentence, each word left out, each rationale removed, each
        # rationale alone. Rows already evaluated for this sentence (by an earlier explainer) come from the cache.
        plans, pairs = [], []
        for i, (sentence, target, row) in enumerate(zip(words, targets, scores)):
            n_words = len(sentence)
            sizes = faith.rationale_sizes(row, self.fractions)
            without, only = faith.removal_keep_masks(row, sizes[sizes > 0])
            needed = np.vstack([np.ones((1, n_words), dtype=np.int64), faith.leave_one_out_keep_masks(n_words),
                                without, only]).astype(np.uint8)
            known = self._row_cache.setdefault((tuple(sentence), target), {})
            keys = [r.tobytes() for r in needed]
            missing = sorted({key: r for key, r in zip(keys, needed) if key not in known}.items())
            if missing:
                pairs.append((i, np.stack([r for _, r in missing]).astype(np.int64)))
            plans.append((keys, [key for key, _ in missing], sizes, known))
        if pairs:
            batch = encode_batch(self.tokenizer, words, model_device(self.model), self.max_length)
            outputs = outputs_without_words(
                EmbeddingForward(self.model, "probability"), self.model, batch, pairs, self.tokenizer.pad_token_id,
                tokens_per_forward=self.tokens_per_forward)
            for (i, _), out in zip(pairs, outputs):
                if targets[i] >= out.shape[1]:
                    raise ValueError(f"targets: entry {i} is class {targets[i]} but the model has {out.shape[1]} classes")
                _, missing_keys, _, known = plans[i]
                known.update(zip(missing_keys, out[:, targets[i]].tolist()))
        results = []
        for i, (keys, _, sizes, known) in enumerate(plans):
            n_words = len(words[i])
            probability = np.array([known[key] for key in keys])
            full = float(probability[0])
            leave_one_out = full - probability[1 : 1 + n_words]
            removed = probability[1 + n_words :]
            defined = sizes > 0
            n_defined = int(defined.sum())
            comprehensiveness = np.full(len(self.fractions), np.nan)
            sufficiency = np.full(len(self.fractions), np.nan)
            comprehensiveness[defined] = full - removed[:n_defined]
            sufficiency[defined] = full - removed[n_defined : 2 * n_defined]
            counted = faith.counted_in_aopc(sizes)
            tau = faith.leave_one_out_tau_per_sentence([scores[i]], [leave_one_out])[0]
            results.append(SentenceFaithfulness(
                full_probability=full, comprehensiveness_curve=comprehensiveness, sufficiency_curve=sufficiency,
                counted=counted, leave_one_out=leave_one_out, comprehensiveness=_aopc(comprehensiveness, counted),
                sufficiency=_aopc(sufficiency, counted), leave_one_out_tau=float(tau)))
        return results

    def forget(self) -> None:
        """Drop the remembered probabilities (the runner calls it per chunk: later chunks hold other sentences)."""
        self._row_cache.clear()

    def protocol(self) -> dict[str, Any]:
        """What a record says about how faithfulness was measured (part of its protocol)."""
        return faithfulness_protocol(self.fractions)


def faithfulness_protocol(fractions: Sequence[float] = faith.DEFAULT_REMOVAL_FRACTIONS) -> dict[str, Any]:
    """The protocol block of the faithfulness metrics for these removal fractions."""
    return {
        "removal_fractions": [float(f) for f in faith.check_fractions(fractions)],
        "rationale": "top floor(q * n_words) words by |score| (ties: earlier word first), zero scores left out",
        "aopc": "mean over fractions with a non-empty rationale that differs from the previous one (ferret)",
        "removal": "whole words dropped, the sentence closing up (special tokens kept), as LIME/Kernel SHAP",
        "output": "softmax probability of the explained class",
    }


def _aopc(curve: np.ndarray, counted: np.ndarray) -> float:
    """Mean of the curve over the counted fractions; NaN when none is counted (no rationale)."""
    return float(curve[counted].mean()) if counted.any() else float("nan")


def _nan_to_none(values: Any) -> Any:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 0:
        return None if not np.isfinite(array) else float(array)
    return [None if not np.isfinite(v) else float(v) for v in array.reshape(-1)]


def to_checkpoint(results: Sequence[SentenceFaithfulness]) -> dict[str, Any]:
    """A chunk's per-sentence faithfulness as JSON-ready columns (NaN written as null)."""
    return {
        "full_probability": [float(r.full_probability) for r in results],
        "comprehensiveness": [_nan_to_none(r.comprehensiveness) for r in results],
        "sufficiency": [_nan_to_none(r.sufficiency) for r in results],
        "leave_one_out_tau": [_nan_to_none(r.leave_one_out_tau) for r in results],
        "comprehensiveness_curve": [_nan_to_none(r.comprehensiveness_curve) for r in results],
        "sufficiency_curve": [_nan_to_none(r.sufficiency_curve) for r in results],
    }


def _column(parts: Sequence[dict[str, Any]], name: str) -> np.ndarray:
    values = [v for part in parts for v in part[name]]
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _curve(parts: Sequence[dict[str, Any]], name: str, n_fractions: int) -> np.ndarray:
    rows = [row for part in parts for row in part[name]]
    if not rows:
        return np.empty((0, n_fractions))
    return np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=np.float64)


def score_faithfulness(parts: Sequence[dict[str, Any] | None], fractions: Sequence[float], bootstrap: int,
                       seed: int, by_gender: Any = None) -> dict[str, dict[str, Any]]:
    """The record's ``comprehensiveness``, ``sufficiency`` and ``leave_one_out_tau`` blocks.

    ``parts`` are the chunks' :func:`to_checkpoint` columns in row order. Each block holds the mean over defined
    sentences with a bootstrap CI (as every property metric); comprehensiveness and sufficiency also hold the
    curve: the mean drop at every removal fraction (``by_fraction``). ``by_gender`` (a
    :class:`~gecobench.evaluation.by_gender.GenderView` of the parts' rows) receives the per-sentence values.
    """
    if any(part is None for part in parts):
        missing = {"value": None, "ci_low": None, "ci_high": None,
                   "reason": "faithfulness was not computed for every chunk of this run"}
        return {name: dict(missing) for name in FAITHFULNESS_METRICS}
    blocks: dict[str, dict[str, Any]] = {}
    for name in FAITHFULNESS_METRICS:
        values = _column(parts, name)
        block = summary_block(name, values, bootstrap, seed)
        if by_gender is not None:
            by_gender.add(name, values)
        if name != "leave_one_out_tau":
            curve = _curve(parts, f"{name}_curve", len(fractions))
            by_fraction = {}
            for f, fraction in enumerate(fractions):
                column = curve[:, f] if curve.size else np.empty(0)
                column = column[np.isfinite(column)]
                by_fraction[f"{fraction:g}"] = float(column.mean()) if column.size else None
            block["by_fraction"] = by_fraction
            block["statistic"] = "AOPC: mean over removal fractions of p(x) - p(perturbed x), then over sentences"
        else:
            block["statistic"] = "Kendall tau-b(|attribution|, leave-one-out drop), mean over sentences"
        blocks[name] = block
    return blocks


def faithfulness_scores(model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int],
                        scores: Sequence[Sequence[float]],
                        fractions: Sequence[float] = faith.DEFAULT_REMOVAL_FRACTIONS) -> list[SentenceFaithfulness]:
    """One-call form of :meth:`FaithfulnessProbe.evaluate` (no cache kept between calls)."""
    with torch.inference_mode():
        return FaithfulnessProbe(model, tokenizer, fractions).evaluate(words, targets, scores)
