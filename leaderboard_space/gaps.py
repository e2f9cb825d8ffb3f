"""The Ranking tab's gender-gap view: every metric of a model's records by gender group, every signed gap.

No Gradio here. One row per record × metric of the chosen cell (config × base model × regime × seed), in the
order of :data:`gecobench.gender.METRIC_SYMBOLS`: each group's value with its interval, every gap the config
allows (male − female; on the non-binary configs each binary group − non-binary too) with its paired interval,
and the largest of those gaps in absolute value. The *best gap* of a metric is the non-baseline explainer whose
largest |gap| is smallest (:func:`best_gap_rows`). Records written before the per-gender block (schema < 2.1) give
their Mass Accuracy rows only (:func:`gecobench.gender.gender_value`).

The view's columns are declared once, in :data:`GAP_VIEW_COLUMNS` (name and definition), which the table, its
legend and the glossary read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gecobench.gender import (
    GAP_PAIRS,
    GENDER_GROUPS,
    gap_key,
    gap_label,
    gender_metrics,
    gender_sentences_text,
    gender_value,
)
from gecobench.pooling import across_seeds, metric_bounds, pool_records
from leaderboard_space.tables import METRIC_LABELS

LARGEST = "Largest |gap|"
LARGEST_PAIR = "Largest gap"
GAP_LABELS = {gap_key(a, b): f"Gap {gap_label(a, b)}" for a, b in GAP_PAIRS}

#: (column, definition) of the gap view, in display order; the value columns also get ``lo``/``hi`` bounds
GAP_VIEW_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Explainer", "the explainer ([baseline]: does not look at the model)"),
    ("Metric", "the record's metric (see the Glossary); its direction says whether a positive gap favours "
               "the first group (higher is better) or the second (lower is better)"),
    ("Direction", "which way the metric is better"),
    ("Sentences", "the sentences the metric was computed on: all scored, or the first N source sentences "
                  "(the properties and faithfulness subsamples)"),
    ("Seeds", ("how many seeds the row pools: with several, each value is the mean over the seeds and its "
               "interval the 95 % t-interval across them; with one, the record's own interval")),
    *((f"{group}", f"the metric on the {group} variants, with its 95% bootstrap interval") for group in GENDER_GROUPS),
    *((GAP_LABELS[gap_key(a, b)], f"metric({a}) − metric({b}) on the same source sentences, with its paired "
                                  "bootstrap interval over source sentences (0 inside: no detectable gap)")
      for a, b in GAP_PAIRS),
    (LARGEST, "the largest absolute gap of the row over every gap the config has; the best gap of a metric is "
              "the non-baseline explainer with the smallest"),
    (LARGEST_PAIR, "the groups of the largest gap"),
    ("Record", "the record file"),
)
VALUE_COLUMNS = [*GENDER_GROUPS, *GAP_LABELS.values()]

_DIRECTIONS = {"higher": "higher is better", "lower": "lower is better"}


def _number(block: Mapping[str, Any] | None, field: str) -> float:
    value = (block or {}).get(field)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else np.nan


def _label(record: Mapping[str, Any]) -> str:
    explainer = record["explainer"]
    name = str(explainer["name"])
    return f"{name} [baseline]" if explainer.get("is_baseline") else name


def _metrics_of(record: Mapping[str, Any]) -> list[str]:
    """The metrics a record holds per gender, in the Space's order; MA alone for an older record."""
    held = gender_metrics(record)
    if not held:
        return ["mass_accuracy"] if record.get("groups") else []
    return [k for k in METRIC_LABELS if k in held] + sorted(set(held) - set(METRIC_LABELS))


def _pooled(blocks: Sequence[Mapping[str, Any] | None], bounds: tuple[float | None, float | None] | None
            ) -> tuple[float, float, float]:
    """A value of a pool's records: the record's own value and interval with one seed, else the mean over the seeds
    and the 95 % t-interval across them cut to ``bounds`` (:func:`gecobench.pooling.across_seeds`)."""
    blocks = [b or {} for b in blocks]
    own = (blocks[0].get("ci_low"), blocks[0].get("ci_high")) if len(blocks) == 1 else (None, None)
    value, low, high, _ = across_seeds([b.get("value") for b in blocks], own, bounds)
    as_float = lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan
    return as_float(value), as_float(low), as_float(high)


def gender_gaps(records: Sequence[Mapping[str, Any]], record_link: Any = None) -> pd.DataFrame:
    """One numeric row per explainer × metric — records that differ only in their seeds pooled (``Seeds``; mean
    and across-seed interval, as on the Ranking) — group values, every gap (``lo``/``hi`` bounds beside each), the
    largest |gap| and its groups. Explainers in MA order (as the ranking), metrics in the Space's order."""
    columns = [c for c, _ in GAP_VIEW_COLUMNS]
    full = [c for column in columns for c in ([column, f"{column} lo", f"{column} hi"] if column in VALUE_COLUMNS
                                             else [column])]
    if not records:
        return pd.DataFrame(columns=full)
    pools = pool_records(records)
    ma = [_pooled([(r.get("metrics") or {}).get("mass_accuracy") for r in pool], None)[0] for pool in pools]
    ordered = [pools[i] for i in sorted(range(len(pools)), key=lambda i: (-np.nan_to_num(ma[i], nan=-np.inf),
                                                                          pools[i][0]["explainer"]["name"]))]
    rows = []
    for pool in ordered:
        record = pool[0]
        held = list(dict.fromkeys(m for r in pool for m in _metrics_of(r)))
        for metric in held:
            entry = gender_metrics(record).get(metric) or {}
            direction = entry.get("direction") or ((record.get("metrics") or {}).get(metric) or {}).get("direction")
            row: dict[str, Any] = {
                "Explainer": _label(record), "Metric": METRIC_LABELS.get(metric, metric),
                "Direction": _DIRECTIONS.get(str(direction), "higher is better" if metric == "mass_accuracy" else "–"),
                "Sentences": gender_sentences_text(entry), "Seeds": len(pool),
            }
            for group in GENDER_GROUPS:
                value, low, high = _pooled([gender_value(r, metric, "groups", group) for r in pool],
                                           metric_bounds(metric, "groups"))
                row.update({group: value, f"{group} lo": low, f"{group} hi": high})
            largest, largest_pair = np.nan, ""
            for minuend, subtrahend in GAP_PAIRS:
                label = GAP_LABELS[gap_key(minuend, subtrahend)]
                value, low, high = _pooled([gender_value(r, metric, "gaps", gap_key(minuend, subtrahend))
                                            for r in pool], metric_bounds(metric, "gaps"))
                row.update({label: value, f"{label} lo": low, f"{label} hi": high})
                if np.isfinite(value) and not abs(value) <= largest:  # NaN-safe: the first finite gap wins
                    largest, largest_pair = abs(value), gap_label(minuend, subtrahend)
            row.update({LARGEST: largest, LARGEST_PAIR: largest_pair,
                        "Record": " ; ".join(record_link(r) if record_link else str(r["record_id"]) for r in pool),
                        "record_id": ";".join(str(r["record_id"]) for r in pool)})
            rows.append(row)
    frame = pd.DataFrame(rows, columns=[*full, "record_id"])
    # a gap column no record of the cell defines (the non-binary gaps on a binary config) is left out
    empty = [c for c in VALUE_COLUMNS if frame[c].isna().all()]
    return frame.drop(columns=[f"{c}{end}" for c in empty for end in ("", " lo", " hi")])


def best_gap_rows(gaps: pd.DataFrame) -> dict[str, int]:
    """Per metric label, the row position of its best gap: the smallest largest-|gap| among non-baseline rows
    (baselines do not compete: a model-independent explanation has no gap to speak of)."""
    best: dict[str, int] = {}
    if gaps.empty:
        return best
    candidates = ~gaps["Explainer"].str.endswith("[baseline]") & np.isfinite(gaps[LARGEST].to_numpy(dtype=float))
    for metric, rows in gaps[candidates].groupby("Metric", sort=False):
        best[str(metric)] = int(gaps.index.get_loc(rows[LARGEST].idxmin()))
    return best


def gaps_legend() -> str:
    """The view's legend, from :data:`GAP_VIEW_COLUMNS`."""
    return "Every metric by gender. " + " · ".join(f"**{name}**: {definition}"
                                                    for name, definition in GAP_VIEW_COLUMNS[3:-1])
