"""Attribution: explainers turned into validated word scores, for one call and for one chunk of a run.

* :func:`attribute_words` / :func:`attribute_words_detailed` — a thin wrapper over the shared engine
  ``gecobench.explainers.engine.attribute`` (batching, token→word folding, validation) that also seeds Python's,
  NumPy's and torch's global RNGs, so explainers that draw from them are reproducible chunk by chunk.
* :func:`compute_chunk` — one explainer's attributions of every kind on one chunk of a run (the model's, its
  randomised and noisy copies', other targets', the zero-shot reference's, faithfulness), as a typed
  :class:`ChunkAttributions`: what the chunk's checkpoint holds and what the records are scored from.
  :func:`precomputed_chunk` is the same for attributions computed elsewhere (a submission's).
* :func:`locate_failure` — what the report of an explainer that raised on a chunk says.

The model, its zero-shot reference and its perturbed copies get the same per-chunk seed
(:func:`attribution_seed`), so a stochastic explainer uses the same random numbers on each (common random numbers).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from gecobench.evaluation.data import GecoSplit
from gecobench.evaluation.faithfulness import FaithfulnessProbe, to_checkpoint
from gecobench.evaluation.modelling import LoadedModel, PerturbedCopies, mean_over_other_targets
from gecobench.evaluation.precomputed import PrecomputedExplainer
from gecobench.evaluation.settings import EvaluationSettings, ExplainerSpec, comparison_label
from gecobench.evaluation.summary import ExplainerFailure
from gecobench.explainers.base import Explainer
from gecobench.explainers.engine import (
    AttributionResult,
    attribute_detailed,
    summarize_diagnostics,
)

if TYPE_CHECKING:
    from gecobench.evaluation.zero_shot import ZeroShotReference

__all__ = ["SCORE_KINDS", "ChunkAttributions", "InputError", "add_faithfulness", "attribute_words",
           "attribute_words_detailed", "attribution_seed", "compute_chunk", "explain_chunk", "locate_failure",
           "precomputed_chunk", "summarize_diagnostics"]

#: the kinds of word scores a chunk holds per explainer (None where a kind was not computed on the chunk)
SCORE_KINDS = ("main", "reference", "randomised", "noisy", "other_target", "faithfulness")


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def attribute_words_detailed(
    explainer: Explainer, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int],
    batch_size: int = 8, seed: int = 0,
) -> AttributionResult:
    """:func:`attribute_words` plus the explainer's per-sentence diagnostics (e.g. IG's steps and error)."""
    if len(words) != len(targets):
        raise ValueError(f"{len(words)} sentences but {len(targets)} targets")
    if not words:
        return AttributionResult(scores=[])
    _seed_everything(seed)
    return attribute_detailed(explainer, model, tokenizer, [list(w) for w in words], list(targets),
                              batch_size=batch_size, seed=seed, progress=False)


def attribute_words(
    explainer: Explainer, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int],
    batch_size: int = 8, seed: int = 0,
) -> list[np.ndarray]:
    """Word scores for every sentence, computed in batches of ``batch_size`` with RNGs seeded by ``seed``."""
    result = attribute_words_detailed(explainer, model, tokenizer, words, targets, batch_size, seed)
    return [np.asarray(s, dtype=np.float64) for s in result.scores]


def _stable_seed(*parts: Any) -> int:
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return int(digest[:8], 16) % (2**31 - 1)


def attribution_seed(settings: EvaluationSettings, spec: ExplainerSpec, chunk_id: int) -> int:
    """The run seed an explainer gets for one chunk: the same for the model, its zero-shot reference and its
    randomised and noisy copies (common random numbers), different between explainers and chunks."""
    return _stable_seed(settings.seed, spec.name, spec.params, chunk_id)


@dataclass
class ChunkAttributions:
    """One explainer's attributions on one chunk's kept rows.

    ``scores``: kind (:data:`SCORE_KINDS`) → one word-score list per kept row, or None where the kind was not
    computed on this chunk; plus ``diagnostics`` (the explainer's per-sentence diagnostics, name → column) for
    attributions computed here. ``seconds``: ``total`` and ``main`` wall seconds (and, when computed here,
    ``faithfulness`` and the process's ``cpu`` seconds). ``reference_source``: where the zero-shot reference's
    scores came from (:data:`~gecobench.evaluation.published_reference.COMPUTED`, a published bundle, a
    submission's own), None without a reference."""

    scores: dict[str, Any]
    seconds: dict[str, float]
    reference_source: str | None = None
    #: the checkpoint payload this was read from, None when computed by this run
    checkpoint: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_checkpoint(cls, payload: dict[str, Any]) -> ChunkAttributions:
        return cls(scores=payload["scores"], seconds=payload["seconds"],
                   reference_source=payload.get("reference_source"), checkpoint=payload)

    @property
    def resumed(self) -> bool:
        """Whether this was read back from a checkpoint (the work of an earlier run) rather than computed."""
        return self.checkpoint is not None

    def gathered(self) -> dict[str, Any]:
        """The chunk's entry for this explainer as gathered, stored in unit columns and scored into records. A
        resumed chunk's entry is its checkpoint payload as read, as it has always been, so the columns of a
        resumed and of an uninterrupted run are what they were before this type existed."""
        if self.checkpoint is not None:
            return self.checkpoint
        return {"scores": self.scores, "seconds": self.seconds, "reference_source": self.reference_source}


class InputError(Exception):
    """A run input (a checkpoint, a published bundle) that does not fit, met while computing an explainer's chunk:
    it stops the run (its ``__cause__`` is re-raised), where an explainer's own error is reported and skipped."""


def explain_chunk(explainer: Explainer, spec: ExplainerSpec, lm: LoadedModel, perturbed: PerturbedCopies,
                  split: GecoSplit, rows: list[int], chunk_id: int, settings: EvaluationSettings
                  ) -> tuple[dict[str, Any], float]:
    """The model's own word scores on a chunk's kept rows plus the property metrics' extra scores.

    Returns ``(scores by kind, seconds spent on the model's own attributions)``.
    """
    words = [list(split.rows[i].words) for i in rows]
    targets = [split.rows[i].label for i in rows]
    seed = attribution_seed(settings, spec, chunk_id)
    # The randomised and noisy copies are explained with the same seed as the model (common random numbers),
    # so MRC and SNC of a stochastic explainer compare like with like.
    run = lambda model, tok, tg: [s.tolist() for s in attribute_words(
        explainer, model, tok, words, tg, batch_size=settings.batch_size, seed=seed)]
    scores: dict[str, Any] = {kind: None for kind in SCORE_KINDS}
    # An explainer whose other-target scores follow from the same model outputs (Partition SHAP) keeps them for
    # the label-difference pass while this chunk's models are alive and unchanged.
    reuse = getattr(explainer, "outputs_reused", None)
    with reuse() if callable(reuse) else contextlib.nullcontext():
        start = time.perf_counter()
        main = attribute_words_detailed(explainer, lm.model, lm.tokenizer, words, targets, settings.batch_size, seed)
        scores["main"] = [s.tolist() for s in main.scores]
        # per-sentence explainer diagnostics (IG: steps used, completeness error), summarised in the record
        scores["diagnostics"] = {key: values.tolist() for key, values in main.diagnostics.items()}
        main_seconds = time.perf_counter() - start
        if settings.properties_in_chunk(chunk_id):
            scores["randomised"] = run(perturbed.randomised, lm.tokenizer, targets)
            scores["noisy"] = run(perturbed.noisy, lm.tokenizer, targets)
            scores["other_target"] = mean_over_other_targets(
                lambda other: run(lm.model, lm.tokenizer, other), targets, lm.num_labels)
    return scores, main_seconds


def add_faithfulness(scores: dict[str, Any], probe: FaithfulnessProbe | None, split: GecoSplit,
                     kept: list[int]) -> None:
    """Put the chunk's comprehensiveness/sufficiency/LOO-tau columns into ``scores`` (None when switched off or
    outside the faithfulness subsample: the caller passes no probe then)."""
    if probe is None or scores.get("main") is None:
        scores["faithfulness"] = None
        return
    results = probe.evaluate([list(split.rows[i].words) for i in kept], [split.rows[i].label for i in kept],
                             scores["main"]) if kept else []
    scores["faithfulness"] = to_checkpoint(results)


def compute_chunk(explainer: Explainer, spec: ExplainerSpec, lm: LoadedModel, perturbed: PerturbedCopies,
                  split: GecoSplit, chunk: list[list[int]], chunk_id: int, kept: list[int],
                  settings: EvaluationSettings, reference: ZeroShotReference | None,
                  probe: FaithfulnessProbe | None) -> ChunkAttributions:
    """One explainer's scores of every kind on one chunk (the model's, the property copies', the zero-shot
    reference's, faithfulness), with the seconds they took and where the reference came from: what the chunk's
    checkpoint holds. The reference's scores are its scores on every scorable row of the chunk, of which the rows
    this model kept are picked (:meth:`~gecobench.evaluation.zero_shot.ZeroShotReference.chunk_scores`)."""
    start, cpu_start = time.perf_counter(), time.process_time()
    scores, main_seconds = explain_chunk(explainer, spec, lm, perturbed, split, kept, chunk_id, settings)
    reference_source = None
    if reference is not None and not kept:
        scores["reference"] = []
    elif reference is not None:
        by_row, reference_source = reference.chunk_scores(explainer, spec, chunk, chunk_id)
        scores["reference"] = [by_row[i] for i in kept]
    faithfulness_start = time.perf_counter()
    add_faithfulness(scores, probe, split, kept)
    # wall seconds (what a record's runtime reports) and the process's CPU seconds for the chunk (what it cost
    # when other work shared the cores; a resumed run adds them up)
    seconds = {"total": time.perf_counter() - start, "main": main_seconds,
               "faithfulness": time.perf_counter() - faithfulness_start, "cpu": time.process_time() - cpu_start}
    return ChunkAttributions(scores=scores, seconds=seconds, reference_source=reference_source)


def precomputed_chunk(explainer: PrecomputedExplainer, split: GecoSplit, kept: list[int],
                      settings: EvaluationSettings, with_reference: bool, chunk_id: int,
                      probe: FaithfulnessProbe | None) -> ChunkAttributions:
    """A chunk's scores read from a precomputed explainer (no model is run; nothing to checkpoint), with the
    faithfulness columns of the model's probe."""
    wanted = ["main"] + (["randomised", "noisy", "other_target"] if settings.properties_in_chunk(chunk_id) else [])
    wanted += ["reference"] if with_reference else []
    scores: dict[str, Any] = {kind: None for kind in SCORE_KINDS}
    scores.update(explainer.chunk_scores([split.rows[i] for i in kept], wanted))
    seconds = (explainer.seconds_per_row or 0.0) * len(kept)
    add_faithfulness(scores, probe, split, kept)
    return ChunkAttributions(scores=scores, seconds={"total": seconds, "main": seconds},
                             reference_source=explainer.source if with_reference else None)


def locate_failure(explainer: Explainer, spec: ExplainerSpec, lm: LoadedModel, split: GecoSplit, config: str,
                   chunk_id: int, kept: list[int], settings: EvaluationSettings, err: BaseException
                   ) -> ExplainerFailure:
    """What the report of a raising explainer says. The sentence is singled out by explaining the chunk's
    sentences one at a time on the model until one raises (only after a failure, so it costs nothing otherwise);
    when none raises alone (the error came from a batch, a perturbed copy or the reference), the chunk's
    sentences are named."""
    found = None
    for row in kept:
        try:
            attribute_words(explainer, lm.model, lm.tokenizer, [list(split.rows[row].words)], [split.rows[row].label],
                            batch_size=1, seed=attribution_seed(settings, spec, chunk_id))
        except Exception:  # noqa: BLE001 - looking for the sentence it fails on
            found = row
            break
    sentence_ids = ([split.rows[found].sentence_id] if found is not None
                    else list(dict.fromkeys(split.rows[i].sentence_id for i in kept)))
    return ExplainerFailure(explainer=comparison_label(spec, explainer), model=lm.name, config=config,
                            chunk=chunk_id, sentence_ids=sentence_ids, error_type=type(err).__name__,
                            message=str(err)[:500], sentence_found=found is not None)
