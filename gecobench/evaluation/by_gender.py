"""Every metric of a record by gender: its value per gender group and the signed gaps between groups.

The scorers (:func:`~gecobench.evaluation.scoring.score_correctness`,
:func:`~gecobench.evaluation.properties.score_properties`, :func:`~gecobench.evaluation.properties.score_agreement`,
:func:`~gecobench.evaluation.faithfulness.score_faithfulness`) compute each metric's per-sentence values once, with
the plain functions the ``evaluate`` modules wrap, and summarise them into the record's overall block. Given a
:class:`GenderView`, they hand the same per-sentence values to it, and :class:`GenderBreakdown` summarises them by
group with the *same* summary functions (:func:`statistic_block`) and takes the gaps with the paired bootstrap
the Mass Accuracy gap has always used (:func:`~gecobench.evaluation.scoring.gap_block`). So a per-gender number is
the overall number's computation on one group's sentences — never a second copy of a metric.

Sentences: a metric's per-gender numbers use the sentences its overall number uses. The property metrics and
faithfulness may run on a subsample (the first N source sentences, ``protocol.properties_max_sentence_groups`` /
``faithfulness_max_sentence_groups``); their gaps are then on that subsample, and the record says so in
``by_gender.metrics.<metric>.sentences``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gecobench.evaluation.data import LABEL_NAMES
from gecobench.evaluation.properties import summary_block
from gecobench.evaluation.scoring import bootstrap_statistic_ci, finite_or_none, gap_block
from gecobench.gender import GAP_INTERVAL, GAP_PAIRS, GENDER_GROUPS, METRIC_SYMBOLS, gap_key
from gecobench.metrics import METRICS_META

STATISTICS = ("mean", "median")
#: what a group's and a gap's block in ``by_gender`` keep (``reason`` only where the value is null)
GROUP_FIELDS = ("value", "ci_low", "ci_high", "n_scored", "n_undefined", "reason")
GAP_FIELDS = ("value", "ci_low", "ci_high", "n_source_sentences", "reason")

assert LABEL_NAMES == GENDER_GROUPS, "the evaluation's labels and the record's gender groups must agree"


@dataclass(frozen=True)
class ScoredSentences:
    """Who the sentences of one set of per-sentence values are: each one's class label (its gender variant) and
    source sentence, and which subsample of the scored sentences they are (None: all of them)."""

    labels: np.ndarray
    sources: tuple[Any, ...]
    subsample: str | None = None
    max_sentence_groups: int | None = None

    @classmethod
    def of(cls, labels: Sequence[int], sources: Sequence[Any], subsample: str | None = None,
           max_sentence_groups: int | None = None) -> ScoredSentences:
        labels_array = np.asarray(labels, dtype=np.int64).reshape(-1)
        if labels_array.size != len(sources):
            raise ValueError(f"{labels_array.size} labels for {len(sources)} source sentence ids")
        return cls(labels_array, tuple(sources), subsample, max_sentence_groups if subsample else None)


def statistic_block(name: str, per_sentence: np.ndarray, statistic: str, bootstrap: int, seed: int) -> dict[str, Any]:
    """A metric's summary of per-sentence values: the record's overall block and each group's block alike.

    ``mean``: :func:`~gecobench.evaluation.properties.summary_block` (mean over defined sentences, bootstrap
    interval of the mean). ``median`` (log RMA): median over defined sentences, bootstrap interval of the median.
    """
    if statistic == "mean":
        return summary_block(name, per_sentence, bootstrap, seed)
    if statistic != "median":
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    values = np.asarray(per_sentence, dtype=np.float64)
    defined = values[np.isfinite(values)]
    ci_low, ci_high = bootstrap_statistic_ci(defined, np.median, bootstrap, seed)
    block = {"value": finite_or_none(np.median(defined)) if defined.size else None, "ci_low": ci_low,
             "ci_high": ci_high, "n_scored": int(defined.size), "n_undefined": int(values.size - defined.size),
             "direction": METRICS_META.get(name, {}).get("direction")}
    if block["value"] is None:
        block["reason"] = "undefined on every scored sentence"
    return block


class GenderView:
    """What a scorer hands its per-sentence values to: a :class:`GenderBreakdown` bound to the sentences the
    scorer scored (see :meth:`GenderBreakdown.on`)."""

    def __init__(self, breakdown: GenderBreakdown, sentences: ScoredSentences) -> None:
        self.breakdown, self.sentences = breakdown, sentences

    def add(self, name: str, per_sentence: Sequence[float] | np.ndarray, statistic: str = "mean") -> None:
        self.breakdown.add(name, per_sentence, self.sentences, statistic)


class GenderBreakdown:
    """Collects per-sentence values of a record's metrics and builds its ``by_gender`` block.

    Group blocks use the run's ``seed`` (as the overall blocks); the gaps ``seed + 1``, as the Mass Accuracy
    gap always has, so ``by_gender``'s MA gap and ``metrics.mass_accuracy_gap`` are one number.
    """

    def __init__(self, bootstrap: int, seed: int) -> None:
        self.bootstrap, self.seed = int(bootstrap), int(seed)
        self._entries: dict[str, dict[str, Any]] = {}
        #: per metric, the untrimmed group and gap blocks (the record's ``groups`` and ``mass_accuracy_gap*``
        #: are read from them: one computation for the per-group numbers, wherever they are shown)
        self._full: dict[str, dict[str, dict[str, Any]]] = {}

    def on(self, sentences: ScoredSentences) -> GenderView:
        return GenderView(self, sentences)

    def add(self, name: str, per_sentence: Sequence[float] | np.ndarray, sentences: ScoredSentences,
            statistic: str = "mean") -> None:
        """Summarise one metric's per-sentence values by group and take every gap the groups present allow."""
        values = np.asarray(per_sentence, dtype=np.float64).reshape(-1)
        if values.size != sentences.labels.size:
            raise ValueError(f"{name}: {values.size} per-sentence values for {sentences.labels.size} sentences")
        # A record holds 13 metrics × up to 3 groups and 3 gaps: each block keeps what cannot be derived (the
        # groups and the sign are in the gap's key, the interval's method in the block's header).
        groups: dict[str, Any] = {}
        full_groups: dict[str, Any] = {}
        for label, group in enumerate(GENDER_GROUPS):
            mask = sentences.labels == label
            if mask.any():
                block = statistic_block(name, values[mask], statistic, self.bootstrap, self.seed)
                full_groups[group] = {**block, "n_sentences": int(mask.sum())}
                groups[group] = {k: block[k] for k in GROUP_FIELDS if k in block}
        gaps: dict[str, Any] = {}
        full_gaps: dict[tuple[str, str], Any] = {}
        for minuend, subtrahend in GAP_PAIRS:
            if minuend in groups and subtrahend in groups:
                block = gap_block(values, sentences.labels, sentences.sources, minuend, subtrahend, self.bootstrap,
                                  self.seed + 1, metric=METRIC_SYMBOLS.get(name, name), statistic=statistic)
                full_gaps[(minuend, subtrahend)] = block
                gaps[gap_key(minuend, subtrahend)] = {k: block[k] for k in GAP_FIELDS if k in block}
        self._full[name] = {"groups": full_groups, "gaps": full_gaps}
        self._entries[name] = {
            "statistic": statistic,
            "direction": METRICS_META.get(name, {}).get("direction"),
            "sentences": {"subsample": sentences.subsample, "max_sentence_groups": sentences.max_sentence_groups,
                          "n_sentences": int(values.size),
                          "n_source_sentences": len(set(sentences.sources))},
            "groups": groups,
            "gaps": gaps,
        }

    def group_blocks(self, name: str) -> dict[str, dict[str, Any]]:
        """Metric ``name``'s full block per gender group present (the summary's fields and ``n_sentences``)."""
        return dict(self._full[name]["groups"])

    def gap_blocks(self, name: str) -> dict[tuple[str, str], dict[str, Any]]:
        """Metric ``name``'s full :func:`~gecobench.evaluation.scoring.gap_block` per (minuend, subtrahend)."""
        return dict(self._full[name]["gaps"])

    def block(self) -> dict[str, Any]:
        """The record's ``by_gender`` block (metrics in the order they were added)."""
        return {"interval": GAP_INTERVAL,
                "gap": "gaps.<a>_minus_<b> = metric(a) − metric(b), the metric's own statistic (mean, or median "
                       "for log RMA) on each group's sentences of the source sentences both define; read with the "
                       "metric's direction",
                "metrics": dict(self._entries)}
