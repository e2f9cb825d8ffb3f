"""The zero-shot reference of relative mass accuracy (RMA): which model it is, and its word scores per chunk.

A trained model's RMA compares its mass accuracy with that of the zero-shot (ZS) model of its own base.
:func:`find_zero_shot_reference` finds that model among the run's models or next to a model's folder.
:class:`ZeroShotReference` gives its word scores on every scorable row of a chunk (before any model's filter),
computed once per (reference, explainer, chunk) and checkpointed in a unit keyed by what they depend on
(:func:`reference_unit`), or read from a published bundle (:mod:`gecobench.evaluation.published_reference`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gecobench.evaluation.attribution import InputError, attribute_words, attribution_seed
from gecobench.evaluation.checkpoints import CheckpointStore, checkpoint_key, reference_unit_name
from gecobench.evaluation.chunks import scorable_rows, split_into_chunks
from gecobench.evaluation.data import GecoSplit
from gecobench.evaluation.filters import ZERO_SHOT_REGIME
from gecobench.evaluation.modelling import LoadedModel
from gecobench.evaluation.published_reference import COMPUTED, PublishedReferences
from gecobench.evaluation.settings import EvaluationSettings, ExplainerSpec
from gecobench.explainers.base import Explainer

__all__ = ["ZERO_SHOT_REGIME", "ZeroShotReference", "check_zero_shot", "find_zero_shot_reference",
           "reference_chunk_attributions", "reference_chunk_rows", "reference_unit"]


def find_zero_shot_reference(model: LoadedModel, candidates: Sequence[str | LoadedModel]
                             ) -> tuple[str | LoadedModel | None, str | None]:
    """A ZS model of the same base among ``candidates`` (folders or loaded models) or next to the model (its
    folder, or the candidate loaded model itself); else (None, reason)."""
    if model.regime == ZERO_SHOT_REGIME:
        return None, "the model is the zero-shot reference itself (RMA = 0 by definition)"
    if model.regime == "OLA":
        # OLA borrows only a tokenizer: there is no pretrained model whose zero-shot version it departs from.
        return None, "OLA is trained from scratch; RMA compares a model with the zero-shot model of its own base"
    pool = list(candidates)
    in_folder = Path(model.path).is_dir()  # a model object has no folder to look next to
    parent = Path(model.path).parent
    if in_folder and parent.is_dir():
        pool += [str(p) for p in sorted(parent.iterdir()) if (p / "gecobench_model.json").is_file()]
    # The zoo layout (<config>/<regime>/seed<N>, the reference's): the zero-shot model is <config>/ZS/seed*, the
    # same seed's first. Without this a model set without its ZS checkpoint (the queue's, a user's run on one
    # reference model) got no RMA although the reference zoo holds it.
    zoo_zero_shot = parent.parent / ZERO_SHOT_REGIME
    if in_folder and zoo_zero_shot.is_dir() and zoo_zero_shot != parent:
        same_seed = zoo_zero_shot / Path(model.path).name
        pool += [str(p) for p in [same_seed, *sorted(zoo_zero_shot.iterdir())]
                 if (p / "gecobench_model.json").is_file()]
    for path in pool:
        if isinstance(path, LoadedModel):
            if (path.path != model.path and path.regime == ZERO_SHOT_REGIME
                    and path.base_model == model.base_model):
                return path, None
            continue
        info_file = Path(path) / "gecobench_model.json"
        if not info_file.is_file() or Path(path).resolve() == Path(model.path).resolve():
            continue
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{info_file}: invalid JSON ({err})") from None
        if info.get("regime") == ZERO_SHOT_REGIME and info.get("base_model") == model.base_model:
            return path, None
    return None, f"no zero-shot (ZS) model of base {model.base_model!r} among or next to the models"


def check_zero_shot(path: str | LoadedModel) -> None:
    """An explicitly named RMA reference must be a zero-shot checkpoint (a silent fallback would hide a typo)."""
    if isinstance(path, LoadedModel):
        if path.regime != ZERO_SHOT_REGIME:
            raise ValueError(f"zero-shot reference {path.name}: its regime is {path.regime!r}, not {ZERO_SHOT_REGIME!r}")
        return
    info_file = Path(path) / "gecobench_model.json"
    if not info_file.is_file():
        raise FileNotFoundError(f"zero-shot reference {path}: no gecobench_model.json (not a zoo checkpoint folder)")
    try:
        regime = json.loads(info_file.read_text(encoding="utf-8")).get("regime")
    except json.JSONDecodeError as err:
        raise ValueError(f"{info_file}: invalid JSON ({err})") from None
    if regime != ZERO_SHOT_REGIME:
        raise ValueError(f"zero-shot reference {path}: its regime is {regime!r}, not {ZERO_SHOT_REGIME!r}")


def reference_unit(reference: Any, split: GecoSplit, reference_protocol: dict[str, Any]) -> str:
    """Checkpoint unit of a zero-shot reference's scores (every scorable row, so no filter in the key; the model by
    what it computes, so a zero-shot model rebuilt from the same base, on any CPU, shares it)."""
    return reference_unit_name(reference.function_sha256, split.fingerprint, reference_protocol)


def reference_chunk_rows(split: GecoSplit, settings: EvaluationSettings) -> list[list[int]]:
    """Per chunk, the rows a zero-shot reference unit covers: every scorable row, whatever the filter."""
    return [scorable_rows(split, chunk) for chunk in split_into_chunks(split, settings)]


def reference_chunk_attributions(explainer: Explainer, spec: ExplainerSpec, reference: LoadedModel,
                                 split: GecoSplit, rows: Sequence[int], chunk_id: int,
                                 settings: EvaluationSettings) -> list[list[float]]:
    """A zero-shot reference's word scores on ``rows`` of chunk ``chunk_id``, computed as the runner computes (and a
    bundle publishes) them: the chunk's run seed, the protocol's batching, each row's label as the target."""
    return [s.tolist() for s in attribute_words(
        explainer, reference.model, reference.tokenizer, [list(split.rows[i].words) for i in rows],
        [split.rows[i].label for i in rows], batch_size=settings.batch_size,
        seed=attribution_seed(settings, spec, chunk_id))]


@dataclass
class ZeroShotReference:
    """The RMA reference of one model on one split: the zero-shot model, where its scores are checkpointed
    (``checkpoints``, in the unit of ``reference_protocol``: :meth:`EvaluationSettings.attribution_protocol`)
    and the published bundles that may hold them."""

    model: LoadedModel
    split: GecoSplit
    settings: EvaluationSettings
    checkpoints: CheckpointStore
    reference_protocol: dict[str, Any]
    published: PublishedReferences

    @property
    def unit(self) -> str:
        return reference_unit(self.model, self.split, self.reference_protocol)

    def chunk_scores(self, explainer: Explainer, spec: ExplainerSpec, chunk: list[list[int]], chunk_id: int
                     ) -> tuple[dict[int, list[float]], str]:
        """The zero-shot reference's word scores on every scorable row of a chunk (before any model's filter),
        and where they came from (:data:`~gecobench.evaluation.published_reference.COMPUTED` or a published
        bundle).

        Computed once per (reference, explainer, chunk) and checkpointed, then shared by every model of that base:
        each model picks the rows it kept. When the run evaluates the zero-shot model itself on every scorable
        row, its own attributions are this checkpoint (:func:`~gecobench.evaluation.runner.run_evaluation` saves
        them), so nothing is computed twice. A published bundle of the same unit is read instead of computing; it
        is not copied into the checkpoints, so they hold only what this machine computed.

        Common random numbers: the reference is explained with the *same* run seed as the model's own
        attributions (:func:`~gecobench.evaluation.attribution.explain_chunk`), so an explainer that draws one
        stream per sentence from its run seed (the built-ins' ``sentence_seed`` convention) uses the same random
        numbers for a sentence on both models. The log RMA of a stochastic explainer then measures the models'
        difference, not resampling noise: a model-independent explainer (Uniform Random, Pattern Variant) gets
        exactly 0.
        """
        split = self.split
        rows = scorable_rows(split, chunk)
        unit = self.unit
        key = checkpoint_key(spec, explainer)
        try:  # an unreadable checkpoint or a bundle that does not fit is the run's input, not the explainer, failing
            cached = self.checkpoints.load(unit, key, chunk_id, rows)
            if cached is not None:
                return dict(zip(rows, cached["scores"]["reference"])), COMPUTED
            bundle, truncated = self.published.covering(
                unit, reference_unit(self.model, split, {**self.reference_protocol, "max_sentence_groups": None}))
            scores = (bundle.chunk_scores(key, chunk_id, rows, [split.rows[i].words for i in rows], truncated)
                      if bundle is not None else None)
        except ValueError as err:
            raise InputError(err) from err
        if bundle is not None and scores is not None:
            return dict(zip(rows, scores)), bundle.source
        scores = reference_chunk_attributions(explainer, spec, self.model, split, rows, chunk_id, self.settings)
        self.checkpoints.save(unit, key, chunk_id, rows, {"reference": scores}, 0.0)
        return dict(zip(rows, scores)), COMPUTED
