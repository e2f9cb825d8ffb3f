"""Turn word scores into the metric blocks of an ``explainer_score`` record.

The headline Mass Accuracy (MA) and Relative Mass Accuracy (RMA) are computed by the ``evaluate`` modules in
``metrics/`` (loaded once per process from :func:`gecobench.metrics.module_path`: the checkout's ``metrics/`` or
the copy an installed wheel carries); the per-sentence arrays the
gender-group breakdown, the confidence intervals and the property metrics need come from the plain functions in
``gecobench.metrics``. Undefined values (NaN) never reach a record: they become ``null`` with a ``reason``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from gecobench.evaluation.data import LABEL_NAMES
from gecobench.metrics.mass_accuracy import summarize
from gecobench.metrics.paired_bootstrap import clustered_mean_difference, verdict
from gecobench.metrics.relative_mass_accuracy import relative_mass_accuracy
from gecobench.metrics.module_paths import module_path


def finite_or_none(value: Any) -> float | None:
    """A float for the record, or None when the value is missing or not finite."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@cache
def load_metric_module(name: str) -> Any:
    """The ``evaluate`` module ``name``, loaded once per process from wherever the package runs (a checkout's
    ``metrics/`` or the installed wheel's ``gecobench/metric_modules/``, through :func:`module_path`)."""
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


def headline_mass_accuracy(attributions: list[np.ndarray], ground_truth: list[list[int]], bootstrap: int,
                           seed: int) -> tuple[dict[str, Any], np.ndarray]:
    """The record's ``mass_accuracy`` block and the per-sentence MA, from the ``metrics/mass_accuracy`` module."""
    module = load_metric_module("mass_accuracy")
    result = module.compute(attributions=[np.asarray(a, dtype=np.float64).tolist() for a in attributions],
                            ground_truth=[list(g) for g in ground_truth], return_per_sentence=True,
                            bootstrap=bootstrap, seed=seed)
    per_sentence = np.array([np.nan if v is None else v for v in result["per_sentence"]], dtype=np.float64)
    block = {"value": finite_or_none(result["mass_accuracy"]), "median": finite_or_none(result["median"]),
             "ci_low": finite_or_none(result.get("ci_low")), "ci_high": finite_or_none(result.get("ci_high")),
             "n_scored": int(result["n_scored"]), "n_undefined": int(result["n_undefined"]),
             "computed_with": "evaluate:metrics/mass_accuracy"}
    if block["value"] is None:
        block["reason"] = "no sentence has a defined Mass Accuracy"
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


# The one definition of the gender gap, used by records, the CLI, the Space and the docs: the first group's
# MA minus the second's, so a positive gap means explanations are more correct for the first group.
GAP_PAIRS: tuple[tuple[str, str], ...] = (("male", "female"), ("male", "non-binary"), ("female", "non-binary"))


def gap_metric_key(minuend: str, subtrahend: str) -> str:
    """The record's metric key of a gap: ``mass_accuracy_gap`` for male − female (the headline, defined on
    every config), ``mass_accuracy_gap_<a>_minus_<b>`` for the non-binary pairs."""
    if (minuend, subtrahend) == GAP_PAIRS[0]:
        return "mass_accuracy_gap"
    return f"mass_accuracy_gap_{minuend.replace('-', '')}_minus_{subtrahend.replace('-', '')}"


def gap_definition(minuend: str, subtrahend: str) -> str:
    """How a gap is written everywhere: ``MA(male) − MA(female)``."""
    return f"MA({minuend}) − MA({subtrahend})"


def score_correctness(
    attributions: list[np.ndarray], ground_truth: list[list[int]], labels: Sequence[int],
    reference_attributions: list[np.ndarray] | None, reference_reason: str | None, bootstrap: int, seed: int,
    *, source_sentences: Sequence[Any],
) -> tuple[dict[str, Any], dict[str, Any], np.ndarray]:
    """MA (mean, median, CI), RMA against a reference model, MA per gender group and the signed group gaps.

    ``source_sentences`` gives every sentence's source sentence id: the gender variants of one source sentence
    are a pair, resampled together by the gaps' bootstrap. Returns ``(metrics, groups, per_sentence_ma)``.
    """
    if len(source_sentences) != len(attributions):
        raise ValueError(f"source_sentences has {len(source_sentences)} entries for {len(attributions)} sentences")
    ma_block, per_sentence = headline_mass_accuracy(attributions, ground_truth, bootstrap, seed)
    metrics: dict[str, Any] = {"mass_accuracy": ma_block}

    metrics["relative_mass_accuracy"] = _rma_block(per_sentence, attributions, reference_attributions,
                                                   ground_truth, reference_reason, bootstrap, seed)

    labels_arr = np.asarray(labels)
    groups: dict[str, Any] = {}
    for label, name in enumerate(LABEL_NAMES):
        mask = labels_arr == label
        if not mask.any():
            continue
        block = mass_accuracy_block(per_sentence[mask], bootstrap, seed)
        groups[name] = {"mass_accuracy": block["value"], "median": block["median"], "ci_low": block["ci_low"],
                        "ci_high": block["ci_high"], "n_scored": block["n_scored"],
                        "n_undefined": block["n_undefined"], "n_sentences": int(mask.sum())}
    sources = list(source_sentences)
    for minuend, subtrahend in GAP_PAIRS:
        if minuend in groups and subtrahend in groups:
            metrics[gap_metric_key(minuend, subtrahend)] = gap_block(
                per_sentence, labels_arr, sources, minuend, subtrahend, bootstrap, seed + 1)
    if "mass_accuracy_gap" not in metrics:
        metrics["mass_accuracy_gap"] = {
            "value": None, "ci_low": None, "ci_high": None, "definition": gap_definition(*GAP_PAIRS[0]),
            "reason": "the scored sentences lack a male or a female group"}
    return metrics, groups, per_sentence


def gap_block(per_sentence: np.ndarray, labels: np.ndarray, source_sentences: Sequence[Any], minuend: str,
              subtrahend: str, bootstrap: int, seed: int) -> dict[str, Any]:
    """Signed gap ``MA(minuend) − MA(subtrahend)`` with a paired bootstrap interval over source sentences.

    Only source sentences with a defined MA in both groups take part (the pairs), so value and interval
    compare the same sentences; ``n_source_sentences`` says how many.
    """
    first = labels == LABEL_NAMES.index(minuend)
    second = labels == LABEL_NAMES.index(subtrahend)
    sources = np.asarray(source_sentences, dtype=object)
    result = clustered_mean_difference(per_sentence[first], list(sources[first]), per_sentence[second],
                                       list(sources[second]), bootstrap, seed)
    block: dict[str, Any] = {
        "value": finite_or_none(result["value"]), "ci_low": finite_or_none(result["ci_low"]),
        "ci_high": finite_or_none(result["ci_high"]), "minuend": minuend, "subtrahend": subtrahend,
        "definition": gap_definition(minuend, subtrahend),
        "interval": "paired percentile bootstrap over source sentences (gender variants resampled together)",
        "n_source_sentences": result["n_clusters"], "n_scored": result["n_a"] + result["n_b"],
    }
    if block["value"] is None:
        block["reason"] = f"no source sentence has a defined MA for both its {minuend} and its {subtrahend} variant"
    return block


def _rma_block(per_sentence: np.ndarray, attributions: list[np.ndarray], reference_attributions: list[np.ndarray] | None,
               ground_truth: list[list[int]], reference_reason: str | None, bootstrap: int, seed: int) -> dict[str, Any]:
    if reference_attributions is None:
        return {"value": None, "ci_low": None, "ci_high": None,
                "reason": reference_reason or "no zero-shot reference model"}
    _, reference_ma = headline_mass_accuracy(reference_attributions, ground_truth, 0, seed)
    to_list = lambda a: [None if not np.isfinite(x) else float(x) for x in a]
    # The per-sentence log ratios (for the CI) come from the math function; the headline from the module.
    result = relative_mass_accuracy(to_list(per_sentence), to_list(reference_ma))
    headline = load_metric_module("relative_mass_accuracy").compute(
        predictions=to_list(per_sentence), references=to_list(reference_ma))
    result.update({k: headline[k] for k in ("median_log_rma", "ratio_of_means", "n_scored", "n_excluded")})
    computed_with = "evaluate:metrics/relative_mass_accuracy"
    ci_low, ci_high = bootstrap_statistic_ci(result["log_rma"], np.median, bootstrap, seed)
    block = {"value": finite_or_none(result["median_log_rma"]), "ratio_of_means": finite_or_none(result["ratio_of_means"]),
             "ci_low": ci_low, "ci_high": ci_high, "n_scored": result["n_scored"], "n_undefined": result["n_excluded"],
             "statistic": "median of ln(MA / MA_zero_shot) over sentences", "computed_with": computed_with}
    if block["value"] is None:
        block["reason"] = "no sentence has a defined MA for both the model and the zero-shot reference"
    return block


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
