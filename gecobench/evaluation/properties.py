"""Property metrics (issue #8) and ranking metrics for a record, from the extra attributions the runner computes.

* MRC — the explainer on a re-initialised copy of the model (:func:`gecobench.evaluation.modelling.randomised_copy`);
* SNC — the explainer on a copy with a fixed Gaussian perturbation of the input embeddings
  (:func:`gecobench.evaluation.modelling.noisy_copy`, std = protocol ``small_noise_std``);
* LD — the explainer for the other class (binary) or the mean over the other classes (three classes);
* DMA — every explainer of the run against the others on the same sentences (computed after all explainers);
* SP, CVR, relevance rank accuracy, AUPRC — from the attributions and the ground truth only.

The math is in :mod:`gecobench.metrics.properties` and :mod:`gecobench.metrics.ranking`; this module only pairs
the arrays and summarises them (mean over defined sentences, bootstrap 95 % CI of the mean).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gecobench.evaluation.scoring import finite_or_none
from gecobench.metrics import METRICS_META, ranking
from gecobench.metrics import properties as prop
from gecobench.metrics.mass_accuracy import summarize

if TYPE_CHECKING:
    from gecobench.evaluation.settings import EvaluationSettings

PROPERTY_METRICS = ("model_randomisation_check", "small_noise_check", "label_difference", "methods_agreement")
ATTRIBUTION_ONLY_METRICS = ("sparsity", "covariate_complexity", "relevance_rank_accuracy", "auprc")


def summary_block(name: str, per_sentence: np.ndarray, bootstrap: int, seed: int) -> dict[str, Any]:
    """A record metric block: mean over defined sentences, bootstrap CI, counts and the metric's direction."""
    summary = summarize(np.asarray(per_sentence, dtype=np.float64), bootstrap=bootstrap, seed=seed)
    block = {"value": finite_or_none(summary["mean"]), "median": finite_or_none(summary["median"]),
             "ci_low": finite_or_none(summary["ci_low"]), "ci_high": finite_or_none(summary["ci_high"]),
             "n_scored": summary["n_scored"], "n_undefined": summary["n_undefined"],
             "direction": METRICS_META.get(name, {}).get("direction")}
    if block["value"] is None:
        block["reason"] = "undefined on every scored sentence"
    return block


def _missing(reason: str) -> dict[str, Any]:
    return {"value": None, "ci_low": None, "ci_high": None, "reason": reason}


def score_properties(
    scores: list[np.ndarray], ground_truth: list[list[int]], randomised: list[np.ndarray] | None,
    noisy: list[np.ndarray] | None, other_target: list[np.ndarray] | None, settings: EvaluationSettings,
    missing_reason: str | None = None, by_gender: Any = None,
) -> dict[str, Any]:
    """Blocks for MRC, SNC, LD (when their attributions were computed) and SP, CVR, RRA, AUPRC.

    ``by_gender`` (a :class:`~gecobench.evaluation.by_gender.GenderView` of the same sentences) receives every
    metric's per-sentence values, so its per-gender numbers are summaries of exactly these arrays."""
    b, s = settings.bootstrap, settings.seed
    per_sentence: dict[str, np.ndarray] = {
        "sparsity": prop.sparsity_per_sentence(scores),
        "covariate_complexity": prop.covariate_complexity_per_sentence(scores),
        "relevance_rank_accuracy": ranking.relevance_rank_accuracy_per_sentence(scores, ground_truth),
        "auprc": ranking.auprc_per_sentence(scores, ground_truth),
    }
    pairs = {
        "model_randomisation_check": (randomised, prop.model_randomisation_check_per_sentence),
        "small_noise_check": (noisy, prop.small_noise_check_per_sentence),
        "label_difference": (other_target, prop.label_difference_per_sentence),
    }
    out: dict[str, Any] = {}
    for name, (other, function) in pairs.items():
        if other is not None:
            per_sentence[name] = function(scores, other)
        else:
            out[name] = _missing(missing_reason or "property metrics were switched off (--no-properties)")
    for name, values in per_sentence.items():
        out[name] = summary_block(name, values, b, s)
        if by_gender is not None:
            by_gender.add(name, values)
    order = ("sparsity", "covariate_complexity", "relevance_rank_accuracy", "auprc", *pairs)
    return {name: out[name] for name in order}


def score_agreement(main_scores: dict[str, list[np.ndarray]], ground_truth: list[list[int]],
                    settings: EvaluationSettings, per_sentence: dict[str, np.ndarray] | None = None,
                    ) -> dict[str, dict[str, Any]]:
    """DMA block per explainer key: mean TV distance to every other explainer of the run on the same sentences.

    ``per_sentence``, when given, is filled with each explainer's per-sentence DMA (for its per-gender block)."""
    if len(main_scores) < 2:
        return {k: _missing("methods agreement needs at least two explainers in the run") for k in main_scores}
    per = prop.methods_agreement_by_explainer(main_scores)
    if per_sentence is not None:
        per_sentence.update(per)
    blocks = {}
    for key, values in per.items():
        block = summary_block("methods_agreement", values, settings.bootstrap, settings.seed)
        block["compared_with"] = sorted(k.rsplit("-", 1)[0] for k in main_scores if k != key)
        blocks[key] = block
    return blocks
