"""The gender groups of GECO, the signed gaps between them, and how a record's ``by_gender`` block is read.

One definition for the evaluation (which writes the block, :mod:`gecobench.evaluation.by_gender`), the record
schema (:mod:`gecobench.records`), the terminal leaderboard and the Space (which read it). Pure Python, so the
Space imports it without torch.

A gap is always *signed*: ``metric(minuend) − metric(subtrahend)``. Male − female is defined on every config;
on the non-binary configs each binary group − non-binary is added. Whether a positive gap favours the minuend
depends on the metric's direction (higher- or lower-is-better), which every gap block repeats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gecobench.domain import LABEL_NAMES

#: the class labels of GECO, in label order (label 0 = female, 1 = male, 2 = non-binary)
GENDER_GROUPS: tuple[str, ...] = LABEL_NAMES

# The one definition of the gender gaps, used by records, the CLI, the Space and the docs: the first group's
# value minus the second's. Male − female is the headline (defined on every config).
GAP_PAIRS: tuple[tuple[str, str], ...] = (("male", "female"), ("male", "non-binary"), ("female", "non-binary"))

#: how the intervals of the gaps are computed (stated in every record's ``by_gender`` block)
GAP_INTERVAL = "paired percentile bootstrap over source sentences (gender variants resampled together)"

#: the record's top-level key of the per-gender block
BY_GENDER = "by_gender"

#: the metrics a record holds per gender, in the order tables show them, and how a gap's definition writes each
#: (``MA(male) − MA(female)``)
METRIC_SYMBOLS: dict[str, str] = {
    "mass_accuracy": "MA", "relative_mass_accuracy": "log RMA", "relevance_rank_accuracy": "RRA", "auprc": "AUPRC",
    "model_randomisation_check": "MRC", "small_noise_check": "SNC", "label_difference": "LD",
    "methods_agreement": "DMA", "sparsity": "SP", "covariate_complexity": "CVR",
    "comprehensiveness": "Compr.", "sufficiency": "Suff.", "leave_one_out_tau": "LOO tau",
}


def gap_key(minuend: str, subtrahend: str) -> str:
    """The key of a gap in ``by_gender.metrics.<metric>.gaps``: ``male_minus_female``, ``male_minus_nonbinary`` …"""
    return f"{minuend.replace('-', '')}_minus_{subtrahend.replace('-', '')}"


#: every gap key, in the order of :data:`GAP_PAIRS`
GAP_KEYS: tuple[str, ...] = tuple(gap_key(a, b) for a, b in GAP_PAIRS)


def gap_label(minuend: str, subtrahend: str) -> str:
    """How a gap is named in tables: ``male−female``."""
    return f"{minuend}−{subtrahend}"


def gap_definition(minuend: str, subtrahend: str, metric: str = "MA") -> str:
    """How a gap is written everywhere: ``MA(male) − MA(female)``."""
    return f"{metric}({minuend}) − {metric}({subtrahend})"


def gender_metrics(record: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """``{metric: entry}`` of a record's ``by_gender`` block; empty for records written before it existed."""
    block = record.get(BY_GENDER)
    metrics = block.get("metrics") if isinstance(block, Mapping) else None
    return {k: v for k, v in metrics.items() if isinstance(v, Mapping)} if isinstance(metrics, Mapping) else {}


def gender_value(record: Mapping[str, Any], metric: str, part: str, key: str) -> Mapping[str, Any] | None:
    """One block of ``by_gender``: ``part`` is ``"groups"`` (``key`` a group) or ``"gaps"`` (``key`` a gap key).

    For the Mass Accuracy of a record without ``by_gender`` (schema < 2.1), the record's older blocks answer:
    ``groups`` (per-group MA) and the ``mass_accuracy_gap*`` metrics, so old and new records read alike.
    """
    entry = gender_metrics(record).get(metric)
    if entry is not None:
        found = (entry.get(part) or {}).get(key)
        return found if isinstance(found, Mapping) else None
    if metric != "mass_accuracy":
        return None
    if part == "groups":
        group = (record.get("groups") or {}).get(key)
        if not isinstance(group, Mapping):
            return None
        return {"value": group.get("mass_accuracy", group.get("value")), "ci_low": group.get("ci_low"),
                "ci_high": group.get("ci_high")}
    legacy = "mass_accuracy_gap" if key == GAP_KEYS[0] else f"mass_accuracy_gap_{key}"
    found = (record.get("metrics") or {}).get(legacy)
    return found if isinstance(found, Mapping) else None


def gender_sentences_text(entry: Mapping[str, Any], short: bool = False) -> str:
    """Which sentences a metric's per-gender numbers come from, in words: ``all scored`` or ``first 32 source
    sentences (properties subsample)`` (``short``: ``first 32 (properties)``, for the terminal)."""
    sentences = entry.get("sentences") or {}
    subsample, limit = sentences.get("subsample"), sentences.get("max_sentence_groups")
    if not subsample:
        return "all scored"
    if short:
        return f"first {limit} ({subsample})" if limit else subsample
    return f"first {limit} source sentences ({subsample} subsample)" if limit else f"{subsample} subsample"
