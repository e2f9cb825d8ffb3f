"""Turn word scores into the metric blocks of an ``explainer_score`` record.

One path for every number: the per-sentence values come from the plain functions in ``gecobench.metrics`` that
the ``evaluate`` modules in ``metrics/`` wrap (``mass_accuracy_per_sentence``, ``relative_mass_accuracy``), computed
once; the headline, the per-gender values and the gaps are summaries of those same arrays
(:mod:`gecobench.evaluation.by_gender`). Undefined values (NaN) never reach a record: they become ``null`` with a
``reason``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from gecobench.evaluation.data import LABEL_NAMES
from gecobench.gender import GAP_INTERVAL, GAP_PAIRS, gap_definition
from gecobench.metrics.mass_accuracy import mass_accuracy_per_sentence, summarize
from gecobench.metrics.module_paths import module_path
from gecobench.metrics.paired_bootstrap import clustered_difference, clustered_mean_difference, verdict
from gecobench.metrics.relative_mass_accuracy import relative_mass_accuracy


def finite_or_none(value: Any) -> float | None:
    """A float for the record, or None when the value is missing or not finite."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@cache
def load_metric_module(name: str) -> Any:
    """The ``evaluate`` module ``name``, loaded once per process from wherever the package runs (a checkout's
    ``metrics/`` or the installed wheel's ``gecobench/metric_modules/``, through :func:`module_path`). The records
    are computed with the functions it wraps; tests compare the two."""
    import evaluate

    return evaluate.load(module_path(name))


def bootstrap_statistic_ci(values: np.ndarray, statistic: Callable[[np.ndarray], float], n_resamples: int,
                           seed: int, confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of any statistic of finite ``values`` (None when there is nothing to resample)."""
    data = np.asarray(values, dtype=np.float64)
    data = data[np.isfinite(data)]
    if n_resamples <= 0 or data.size == 0:
        return None, None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, data.size, size=(n_resamples, data.size))
    stats = np.array([statistic(data[row]) for row in idx])
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return float(low), float(high)


#: what a record's ``computed_with`` names: the function the ``evaluate`` module wraps, and the module
MASS_ACCURACY_FUNCTION = "gecobench.metrics.mass_accuracy.mass_accuracy_per_sentence (evaluate:metrics/mass_accuracy)"
RMA_FUNCTION = ("gecobench.metrics.relative_mass_accuracy.relative_mass_accuracy "
                "(evaluate:metrics/relative_mass_accuracy)")


def per_sentence_mass_accuracy(attributions: Sequence[np.ndarray], ground_truth: Sequence[Sequence[int]]
                               ) -> np.ndarray:
    """Per-sentence MA (NaN where undefined) by the function the ``metrics/mass_accuracy`` module wraps."""
    return mass_accuracy_per_sentence([np.asarray(a, dtype=np.float64) for a in attributions],
                                      [list(g) for g in ground_truth])


def headline_mass_accuracy(attributions: list[np.ndarray], ground_truth: list[list[int]], bootstrap: int,
                           seed: int) -> tuple[dict[str, Any], np.ndarray]:
    """The record's ``mass_accuracy`` block and the per-sentence MA: what ``metrics/mass_accuracy`` returns
    (its ``module_result`` is :func:`~gecobench.metrics.mass_accuracy.summarize` of the same array)."""
    per_sentence = per_sentence_mass_accuracy(attributions, ground_truth)
    block = {**mass_accuracy_block(per_sentence, bootstrap, seed), "computed_with": MASS_ACCURACY_FUNCTION}
    return block, per_sentence


def mass_accuracy_block(per_sentence: np.ndarray, bootstrap: int, seed: int) -> dict[str, Any]:
    """The record's ``mass_accuracy``-style block (value = mean) for per-sentence MA values."""
    summary = summarize(per_sentence, bootstrap=bootstrap, seed=seed)
    block = {
        "value": finite_or_none(summary["mean"]), "median": finite_or_none(summary["median"]),
        "ci_low": finite_or_none(summary["ci_low"]), "ci_high": finite_or_none(summary["ci_high"]),
        "n_scored": summary["n_scored"], "n_undefined": summary["n_undefined"],
    }
    if block["value"] is None:
        block["reason"] = "no sentence has a defined Mass Accuracy"
    return block


# GAP_PAIRS (gecobench.gender) is the one definition of the gender gaps: the first group's value minus the second's,
# so a positive MA gap means explanations are more correct for the first group.


def gap_metric_key(minuend: str, subtrahend: str) -> str:
    """The record's metric key of a gap: ``mass_accuracy_gap`` for male − female (the headline, defined on
    every config), ``mass_accuracy_gap_<a>_minus_<b>`` for the non-binary pairs."""
    if (minuend, subtrahend) == GAP_PAIRS[0]:
        return "mass_accuracy_gap"
    return f"mass_accuracy_gap_{minuend.replace('-', '')}_minus_{subtrahend.replace('-', '')}"


def score_correctness(
    attributions: list[np.ndarray], ground_truth: list[list[int]], labels: Sequence[int],
    reference_attributions: list[np.ndarray] | None, reference_reason: str | None, bootstrap: int, seed: int,
    *, source_sentences: Sequence[Any], by_gender: Any = None,
) -> tuple[dict[str, Any], dict[str, Any], np.ndarray]:
    """MA (mean, median, CI), RMA against a reference model, MA per gender group and the signed group gaps.

    ``source_sentences`` gives every sentence's source sentence id: the gender variants of one source sentence
    are a pair, resampled together by the gaps' bootstrap. ``by_gender`` (a
    :class:`~gecobench.evaluation.by_gender.GenderView` of these sentences) receives the per-sentence MA and
    log RMA. Returns ``(metrics, groups, per_sentence_ma)``.
    """
    from gecobench.evaluation.by_gender import GenderBreakdown, ScoredSentences  # it imports this module

    if len(source_sentences) != len(attributions):
        raise ValueError(f"source_sentences has {len(source_sentences)} entries for {len(attributions)} sentences")
    if len(labels) != len(attributions):
        raise ValueError(f"labels has {len(labels)} entries for {len(attributions)} sentences")
    ma_block, per_sentence = headline_mass_accuracy(attributions, ground_truth, bootstrap, seed)
    metrics: dict[str, Any] = {"mass_accuracy": ma_block}

    metrics["relative_mass_accuracy"], log_rma = _rma_block(per_sentence, reference_attributions, ground_truth,
                                                            reference_reason, bootstrap, seed)
    # One computation of the per-group MA and the gaps: the per-gender breakdown's (the caller's, or one of these
    # sentences made here); the record's ``groups`` and ``mass_accuracy_gap*`` are read from it, so they are the
    # by_gender block's numbers by construction. Its seeds are the run's (groups) and seed + 1 (gaps), as before.
    view = by_gender if by_gender is not None else GenderBreakdown(bootstrap, seed).on(
        ScoredSentences.of(labels, list(source_sentences)))
    if (view.breakdown.bootstrap, view.breakdown.seed) != (int(bootstrap), int(seed)):
        raise ValueError("by_gender must use the scorer's bootstrap and seed (one computation per number)")
    view.add("mass_accuracy", per_sentence)
    if log_rma is not None:
        view.add("relative_mass_accuracy", log_rma, statistic="median")

    groups: dict[str, Any] = {}
    for name, block in view.breakdown.group_blocks("mass_accuracy").items():
        groups[name] = {"mass_accuracy": block["value"], "median": block["median"], "ci_low": block["ci_low"],
                        "ci_high": block["ci_high"], "n_scored": block["n_scored"],
                        "n_undefined": block["n_undefined"], "n_sentences": block["n_sentences"]}
    for (minuend, subtrahend), block in view.breakdown.gap_blocks("mass_accuracy").items():
        metrics[gap_metric_key(minuend, subtrahend)] = block
    if "mass_accuracy_gap" not in metrics:
        metrics["mass_accuracy_gap"] = {
            "value": None, "ci_low": None, "ci_high": None, "definition": gap_definition(*GAP_PAIRS[0]),
            "reason": "the scored sentences lack a male or a female group"}
    return metrics, groups, per_sentence


def gap_block(per_sentence: np.ndarray, labels: np.ndarray, source_sentences: Sequence[Any], minuend: str,
              subtrahend: str, bootstrap: int, seed: int, *, metric: str = "MA", statistic: str = "mean",
              ) -> dict[str, Any]:
    """Signed gap ``metric(minuend) − metric(subtrahend)`` with a paired bootstrap interval over source sentences.

    ``per_sentence`` holds one value of the metric per sentence (NaN where undefined); ``statistic`` is the
    metric's own (``mean``; ``median`` for log RMA). Only source sentences with a defined value in both groups take
    part (the pairs), so value and interval compare the same sentences; ``n_source_sentences`` says how many.
    """
    values = np.asarray(per_sentence, dtype=np.float64)
    labels = np.asarray(labels)
    first = labels == LABEL_NAMES.index(minuend)
    second = labels == LABEL_NAMES.index(subtrahend)
    sources = np.asarray(source_sentences, dtype=object)
    result = clustered_difference(values[first], list(sources[first]), values[second], list(sources[second]),
                                  bootstrap, seed, statistic=statistic)
    block: dict[str, Any] = {
        "value": finite_or_none(result["value"]), "ci_low": finite_or_none(result["ci_low"]),
        "ci_high": finite_or_none(result["ci_high"]), "minuend": minuend, "subtrahend": subtrahend,
        "definition": gap_definition(minuend, subtrahend, metric), "interval": GAP_INTERVAL,
        "n_source_sentences": result["n_clusters"], "n_scored": result["n_a"] + result["n_b"],
    }
    if block["value"] is None:
        block["reason"] = (f"no source sentence has a defined {metric} for both its {minuend} and its "
                           f"{subtrahend} variant")
    return block


def _rma_block(per_sentence: np.ndarray, reference_attributions: list[np.ndarray] | None,
               ground_truth: list[list[int]], reference_reason: str | None, bootstrap: int, seed: int
               ) -> tuple[dict[str, Any], np.ndarray | None]:
    """The record's ``relative_mass_accuracy`` block and the per-sentence log RMA (None without a reference),
    both from one call of the function the ``metrics/relative_mass_accuracy`` module wraps."""
    if reference_attributions is None:
        return {"value": None, "ci_low": None, "ci_high": None,
                "reason": reference_reason or "no zero-shot reference model"}, None
    reference_ma = per_sentence_mass_accuracy(reference_attributions, ground_truth)
    to_list = lambda a: [None if not np.isfinite(x) else float(x) for x in a]
    result = relative_mass_accuracy(to_list(per_sentence), to_list(reference_ma))
    ci_low, ci_high = bootstrap_statistic_ci(result["log_rma"], np.median, bootstrap, seed)
    block = {"value": finite_or_none(result["median_log_rma"]), "ratio_of_means": finite_or_none(result["ratio_of_means"]),
             "ci_low": ci_low, "ci_high": ci_high, "n_scored": result["n_scored"], "n_undefined": result["n_excluded"],
             "statistic": "median of ln(MA / MA_zero_shot) over sentences", "computed_with": RMA_FUNCTION}
    if block["value"] is None:
        block["reason"] = "no sentence has a defined MA for both the model and the zero-shot reference"
    return block, result["log_rma"]


def paired_comparisons(per_sentence_by_explainer: dict[str, np.ndarray], source_sentences: Sequence[Any],
                       bootstrap: int, seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    """For every ordered pair of explainers of one run: ``MA(this) − MA(other)`` on the sentences both define,
    with a paired bootstrap interval over source sentences and a verdict (``higher``/``lower``/``tie``).

    ``per_sentence_by_explainer`` maps an explainer's label to its per-sentence MA on the *same* sentences, in
    the same order as ``source_sentences``. Returns ``{this: {other: block}}``; the (other, this) block is the
    mirror image of (this, other), computed from the same draws.
    """
    sources = list(source_sentences)
    out: dict[str, dict[str, dict[str, Any]]] = {label: {} for label in per_sentence_by_explainer}
    labels = list(per_sentence_by_explainer)
    for i, this in enumerate(labels):
        for other in labels[i + 1:]:
            a = np.asarray(per_sentence_by_explainer[this], dtype=np.float64)
            b = np.asarray(per_sentence_by_explainer[other], dtype=np.float64)
            if a.shape != b.shape or a.size != len(sources):
                raise ValueError(f"explainers {this!r} and {other!r} were not scored on the same "
                                 f"{len(sources)} sentences ({a.size} and {b.size} values)")
            both = np.isfinite(a) & np.isfinite(b)
            kept_sources = [s for s, keep in zip(sources, both) if keep]
            result = clustered_mean_difference(a[both], kept_sources, b[both], kept_sources, bootstrap, seed)
            forward = {"value": finite_or_none(result["value"]), "ci_low": finite_or_none(result["ci_low"]),
                       "ci_high": finite_or_none(result["ci_high"]), "n_scored": int(both.sum()),
                       "n_source_sentences": result["n_clusters"]}
            forward["verdict"] = verdict(forward)
            backward = {**forward, "value": _negated(forward["value"]), "ci_low": _negated(forward["ci_high"]),
                        "ci_high": _negated(forward["ci_low"])}
            backward["verdict"] = verdict(backward)
            out[this][other], out[other][this] = forward, backward
    return out


def _negated(value: float | None) -> float | None:
    return None if value is None else -value
