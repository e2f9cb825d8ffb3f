"""How much BPI/BRI depend on the choice of templates: a percentile bootstrap whose resampling unit is the template.

The Spanish method fills 8 templates × 12 subjects × {male, female}. The sentences of one template share their
wording ("X se considera muy [MASK]."), so their predictions are not independent: a model's answer to a template
moves all its subjects together. The question an interval should answer is "would the indices change with other
templates of the same kind?", so a resample draws **templates** with replacement (as many as there are), and a
drawn template brings all its rows — every subject, both genders, every top-K prediction. Resampling rows or
sentences independently would treat the 1,920 predictions as independent and give intervals far too narrow.

A resample is a vector of counts (how often each template was drawn). The indices of a resample are those of
:func:`gecobench.metrics.bias_indices.bias_indices` on the table holding each template's rows that many times:
because BPI and BRI are ratios of sums, they are computed from per-template sums weighted by the counts, with the
same share, difference and overall-bias functions as the point values (``share_percent``,
``group_difference_array``, ``overall_bias_array``). The interval is the percentile interval of the resampled
values (``numpy.nanpercentile``, linear interpolation) over the resamples where the value is defined.
Deterministic for a given seed (``numpy.random.default_rng(seed)``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gecobench.metrics.bias_indices import (
    _check_rows,
    categorise,
    group_difference_array,
    overall_bias_array,
    share_percent,
)

RESAMPLING_UNIT = "template"
METHOD = "percentile bootstrap"
INDICES = ("bpi", "bri")


@dataclass(frozen=True)
class BootstrapSettings:
    """How the template bootstrap is run: resamples, seed and the interval's confidence level."""

    n_resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if not isinstance(self.n_resamples, (int, np.integer)) or isinstance(self.n_resamples, bool) \
                or self.n_resamples < 1:
            raise ValueError(f"n_resamples must be a positive integer, got {self.n_resamples!r}")
        if not isinstance(self.seed, (int, np.integer)) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not isinstance(self.confidence, (int, float)) or isinstance(self.confidence, bool) \
                or not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be a number strictly between 0 and 1, got {self.confidence!r}")

    def describe(self) -> dict[str, Any]:
        """The settings as a record stores them (in the protocol, so they are part of the record's identity)."""
        return {"method": METHOD, "resampling_unit": RESAMPLING_UNIT, "n_resamples": int(self.n_resamples),
                "seed": int(self.seed), "confidence": float(self.confidence)}


@dataclass(frozen=True)
class TemplateSums:
    """Per template, group and category: the summed probability (BPI) and summed rank score of adjectives (BRI).

    ``probability`` and ``rsv`` have shape ``(templates, groups, categories)``."""

    template_ids: list[Any]
    groups: list[str]
    categories: list[str]
    probability: np.ndarray
    rsv: np.ndarray


def template_sums(
    group: Sequence[str],
    word: Sequence[str],
    probability: Sequence[float],
    rank: Sequence[int],
    is_adjective: Sequence[bool],
    template: Sequence[Any],
    lexicon: Mapping[str, str],
    k: int,
) -> TemplateSums:
    """Check the prediction rows (as :func:`~gecobench.metrics.bias_indices.bias_indices` does) and sum them per
    template, group and category. ``template`` names each row's template (an int or a string)."""
    prob, ranks, adjective = _check_rows(group, word, probability, rank, is_adjective, k)
    if template is None or isinstance(template, (str, bytes, Mapping)) or not hasattr(template, "__len__"):
        raise ValueError(f"template: expected a list with one template id per prediction row, got {template!r:.40}")
    if len(template) != len(prob):
        raise ValueError(f"group has {len(prob)} rows but template has {len(template)}")
    for i, t in enumerate(template):
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer, str)):
            raise ValueError(f"template: row {i} is {t!r}; expected a template id (an integer or a string)")
    plain = [t.item() if isinstance(t, np.generic) else t for t in template]
    # ints and strings may mix (a user's template names): sort by type first, so the order is always defined
    template_ids = sorted(set(plain), key=lambda t: (str(type(t)), t))
    category_of, categories = categorise(word, lexicon)
    groups = sorted(set(group))
    position = {name: i for i, name in enumerate(template_ids)}
    t_index = np.array([position[t] for t in plain], dtype=np.int64)
    g_index = np.searchsorted(np.array(groups, dtype=object), np.array(list(group), dtype=object))
    c_index = np.searchsorted(np.array(categories, dtype=object), category_of)
    shape = (len(template_ids), len(groups), len(categories))
    probability_sums, rsv_sums = np.zeros(shape), np.zeros(shape)
    np.add.at(probability_sums, (t_index, g_index, c_index), prob)
    np.add.at(rsv_sums, (t_index, g_index, c_index), np.where(adjective, (k + 1 - ranks).astype(np.float64), 0.0))
    return TemplateSums(template_ids, groups, categories, probability_sums, rsv_sums)


def resample_counts(n_templates: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, n_templates)`` counts: how often each template is drawn in each resample (each row sums to
    ``n_templates``: templates drawn with replacement, as many as there are)."""
    if n_templates < 1:
        raise ValueError(f"n_templates must be at least 1, got {n_templates}")
    draws = np.random.default_rng(seed).integers(0, n_templates, size=(n_resamples, n_templates))
    counts = np.zeros((n_resamples, n_templates), dtype=np.int64)
    np.add.at(counts, (np.arange(n_resamples)[:, None], draws), 1)
    return counts


def indices_from_sums(sums: TemplateSums, weights: np.ndarray) -> dict[str, np.ndarray]:
    """BPI, BRI, their bias and overall bias of weighted templates.

    ``weights`` has shape ``(..., templates)`` (e.g. resample counts, or the identity matrix for each template
    alone); the result: ``bpi``/``bri`` ``(..., groups, categories)``, ``bias_bpi``/``bias_bri``
    ``(..., categories)``, ``overall_bpi``/``overall_bri`` ``(...)``."""
    weights = np.asarray(weights, dtype=np.float64)
    out: dict[str, np.ndarray] = {}
    for index, per_template in (("bpi", sums.probability), ("bri", sums.rsv)):
        totals = np.tensordot(weights, per_template, axes=([-1], [0]))  # (..., groups, categories)
        shares = share_percent(totals, totals.sum(axis=-1, keepdims=True))
        bias = group_difference_array(np.moveaxis(shares, -2, 0), sums.groups)  # (..., categories)
        out[index] = shares
        out[f"bias_{index}"] = bias
        out[f"overall_{index}"] = overall_bias_array(bias, sums.categories)
    return out


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The percentile interval over axis 0 (the resamples), ignoring NaN; returns ``(low, high, n_undefined)``
    with NaN bounds where no resample defines the value."""
    values = np.asarray(values, dtype=np.float64)
    tail = 100.0 * (1.0 - confidence) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "All-NaN slice": such a value gets no interval
        low, high = np.nanpercentile(values, [tail, 100.0 - tail], axis=0)
    return low, high, np.isnan(values).sum(axis=0)


def _number_or_none(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None  # a template whose group has no adjective: BRI undefined


def _interval(low: float, high: float, n_undefined: int) -> dict[str, Any]:
    block: dict[str, Any] = {"ci_low": float(low) if np.isfinite(low) else None,
                             "ci_high": float(high) if np.isfinite(high) else None}
    if n_undefined:
        block["n_undefined"] = int(n_undefined)  # resamples in which the value is undefined (no adjectives …)
    return block


def template_bootstrap(
    group: Sequence[str],
    word: Sequence[str],
    probability: Sequence[float],
    rank: Sequence[int],
    is_adjective: Sequence[bool],
    template: Sequence[Any],
    lexicon: Mapping[str, str],
    k: int,
    settings: BootstrapSettings | None = None,
) -> dict[str, Any]:
    """Percentile intervals of every BPI/BRI share, bias and overall bias, resampling templates with replacement.

    Returns a JSON-ready block shaped like the values it qualifies: ``bpi``/``bri`` ``{category: {group:
    {ci_low, ci_high}}}``, ``bias`` ``{"bpi"|"bri": {category: {ci_low, ci_high}}}``, ``overall`` ``{"bpi"|"bri":
    {ci_low, ci_high}}`` (an interval also has ``n_undefined`` when some resamples leave the value undefined),
    ``per_template`` ``{"template_ids": [...], "overall": {"bpi": [...], "bri": [...]}, "bias": {"bpi"|"bri":
    {category: [...]}}}`` (each template's own overall bias and bias per category — null where undefined — the
    spread behind the intervals), plus the settings (:meth:`BootstrapSettings.describe`) and
    ``n_templates``.
    """
    settings = settings or BootstrapSettings()
    sums = template_sums(group, word, probability, rank, is_adjective, template, lexicon, k)
    n_templates = len(sums.template_ids)
    if n_templates < 2:
        raise ValueError(
            f"template: a bootstrap over templates needs at least two templates, got {n_templates} "
            f"({sums.template_ids}); the interval would be the point value"
        )
    resampled = indices_from_sums(sums, resample_counts(n_templates, settings.n_resamples, settings.seed))
    alone = indices_from_sums(sums, np.eye(n_templates))

    block: dict[str, Any] = {**settings.describe(), "n_templates": n_templates, "bias": {}, "overall": {}}
    for index in INDICES:
        low, high, undefined = percentile_interval(resampled[index], settings.confidence)
        block[index] = {
            c: {g: _interval(low[gi, ci], high[gi, ci], undefined[gi, ci]) for gi, g in enumerate(sums.groups)}
            for ci, c in enumerate(sums.categories)
        }
        low, high, undefined = percentile_interval(resampled[f"bias_{index}"], settings.confidence)
        block["bias"][index] = {c: _interval(low[ci], high[ci], undefined[ci]) for ci, c in enumerate(sums.categories)}
        low, high, undefined = percentile_interval(resampled[f"overall_{index}"], settings.confidence)
        block["overall"][index] = _interval(low, high, undefined)
    block["per_template"] = {
        "template_ids": list(sums.template_ids),
        "overall": {index: [float(v) for v in alone[f"overall_{index}"]] for index in INDICES},
        "bias": {index: {c: [_number_or_none(v) for v in alone[f"bias_{index}"][:, ci]]
                         for ci, c in enumerate(sums.categories)} for index in INDICES},
    }
    return block
