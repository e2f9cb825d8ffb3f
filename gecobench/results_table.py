"""``explainer_score`` records as a table: one row per record, numeric columns per metric.

The one place records become a :class:`pandas.DataFrame`: :meth:`gecobench.Results.to_pandas`, the Python front
door's :func:`gecobench.load_results` and the Space's downloads use it. A row holds

* the record's id and identity columns (explainer, version, parameters, source; regime, base model, seed,
  checkpoint; GECO config, split, data fingerprint; filter and protocol), its counts, runtime and provenance: the
  columns of the parquet export (:func:`gecobench.results_export.flatten_explainer_score`, one definition);
* every metric's ``<metric>.value``, ``<metric>.ci_low`` and ``<metric>.ci_high`` (floats, NaN where the record
  has none), and the legacy per-group MA ``mass_accuracy.<group>``;
* from the record's ``by_gender`` block (:mod:`gecobench.gender`), every metric per gender group,
  ``<metric>.<group>.value`` / ``.ci_low`` / ``.ci_high``, and every signed gap,
  ``<metric>.<gap>.value`` / ``.ci_low`` / ``.ci_high`` with ``<gap>`` e.g. ``male_minus_female``
  (metric(male) − metric(female)).

Pure pandas: importing it loads no torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gecobench.gender import gender_metrics
from gecobench.results_export import METRIC_FIELDS, flatten_explainer_score

#: columns of the flattened export that are not table columns: the record verbatim (it is ``Results.records``)
LEFT_OUT = ("record_json",)
#: the columns a short view (:func:`summary_columns`) starts with
SUMMARY_IDENTITY = ("explainer", "explainer_version", "explainer_params", "regime", "base_model", "config", "filter",
                    "n_scored")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def explainer_score_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """One table row of an ``explainer_score`` record (see the module docstring for its columns)."""
    row = {k: v for k, v in flatten_explainer_score(dict(record)).items() if k not in LEFT_OUT}
    for metric, entry in gender_metrics(record).items():
        for part in ("groups", "gaps"):
            for key, block in sorted((entry.get(part) or {}).items()):
                for field in METRIC_FIELDS:
                    row[f"{metric}.{key}.{field}"] = _number(block.get(field))
    return row


def is_numeric_column(name: str) -> bool:
    """Whether a column holds a metric's number (a value, an interval end, a group's or a gap's)."""
    return "." in name and not name.startswith(("record_", "explainer", "protocol"))


def records_frame(records: Iterable[Mapping[str, Any]]) -> Any:
    """The records (``explainer_score`` ones; others are left out) as a :class:`pandas.DataFrame`, one row each,
    in the order given; every metric column is ``float64`` (NaN where a record has no value)."""
    import pandas as pd

    rows = [explainer_score_row(r) for r in records if r.get("record_type") == "explainer_score"]
    columns: list[str] = []
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    frame = pd.DataFrame([[row.get(c) for c in columns] for row in rows], columns=columns)
    for column in columns:
        if is_numeric_column(column):
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    return frame


def summary_columns(frame: Any) -> list[str]:
    """A short view's columns: who, then MA with its interval, the other metrics' values, every metric's
    per-group value and gap value (no interval columns but MA's)."""
    identity = [c for c in SUMMARY_IDENTITY if c in frame.columns]
    ma = [c for c in ("mass_accuracy.value", "mass_accuracy.ci_low", "mass_accuracy.ci_high") if c in frame.columns]
    values = [c for c in frame.columns if c.endswith(".value") and c not in ma]
    return identity + ma + values


__all__ = ["explainer_score_row", "is_numeric_column", "records_frame", "summary_columns"]
