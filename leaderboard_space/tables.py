"""Data shaping for the leaderboard: records in, pandas tables out. No Gradio here, so it is tested directly.

* :func:`records_frame` — one row per ``explainer_score`` record (long form), malformed records skipped
  with a warning;
* :func:`explainer_summary` — one row per explainer, numeric (value, CI low, CI high per metric);
* :func:`explainer_table` — the same, formatted for display (``0.623 [0.581, 0.664]``), filtered and sorted;
* :func:`property_scores` — the Co-12 properties per explainer on a 0..1 scale where up is better (radar).

Aggregation: when several records (seeds, base models, configs, regimes) fall into one cell, the value is
the mean of their values and the interval is the envelope ``[min ci_low, max ci_high]`` of their intervals —
a conservative summary, not a new bootstrap.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

MA = "mass_accuracy"
METRIC_LABELS: dict[str, str] = {
    "mass_accuracy": "MA",
    "relative_mass_accuracy": "RMA",
    "mass_accuracy_gap": "MA gap",
    "model_randomisation_check": "MRC",
    "small_noise_check": "SNC",
    "label_difference": "LD",
    "methods_agreement": "DMA",
    "sparsity": "SP",
    "covariate_complexity": "CVR",
    "relevance_rank_accuracy": "Rank acc.",
    "auprc": "AUPRC",
    # faithfulness to the model (gecobench.evaluation.faithfulness; absent from records run with --no-faithfulness)
    "comprehensiveness": "Compr.",
    "sufficiency": "Suff.",
    "leave_one_out_tau": "LOO tau",
}
PROPERTY_KEYS = [
    "model_randomisation_check", "small_noise_check", "label_difference", "methods_agreement", "sparsity",
    "covariate_complexity",
]
RANKING_KEYS = ["relevance_rank_accuracy", "auprc"]


def _registry_directions() -> dict[str, int]:
    """Which way is better, from the metric registry (``gecobench.metrics.METRICS_META``) when installed, else
    the registry's values as of this writing. A record's own ``metrics[key]["direction"]`` wins over both."""
    directions = {key: 1 for key in METRIC_LABELS}
    directions.update({"small_noise_check": -1, "methods_agreement": -1, "covariate_complexity": -1})
    try:
        from gecobench.metrics import METRICS_META
    except ImportError:
        return directions
    for key, meta in METRICS_META.items():
        text = str(meta.get("direction") or "").lower()
        if key in directions and text in ("higher", "lower"):
            directions[key] = 1 if text == "higher" else -1
    return directions


DEFAULT_DIRECTION: dict[str, int] = _registry_directions()
GROUPS = ["female", "male", "non-binary"]
SOURCE_LABELS = {"builtin": "built-in", "plugin": "plug-in", "submission": "submission", "self-reported": "self-reported ⚠"}
RUNTIME = "s / sentence"


@dataclass
class Filters:
    """What the Explainers tab shows. Empty lists mean "all"."""

    configs: list[str] = field(default_factory=list)
    regimes: list[str] = field(default_factory=list)
    base_models: list[str] = field(default_factory=list)
    search: str = ""
    sort_by: str = "MA"
    descending: bool = True
    show_baselines: bool = True


def _number(value: Any) -> float:
    # called ~40 times per record: exact-type checks first (bool is an int subclass and means "not a number")
    kind = value.__class__
    if kind is float:
        return value
    if kind is int:
        return float(value)
    if value is None or kind is bool:
        return np.nan
    if isinstance(value, (int, float)):
        return float(value)
    raise ValueError(f"expected a number or null, got {value!r}")


def _direction(metric: Mapping[str, Any]) -> int | None:
    return _direction_of(str(metric.get("direction") or ""))


@functools.lru_cache(maxsize=256)
def _direction_of(direction: str) -> int | None:
    text = direction.lower()
    if "lower" in text or text in ("-1", "min", "minimise", "minimize"):
        return -1
    if "higher" in text or text in ("1", "+1", "max", "maximise", "maximize"):
        return 1
    return None


def _record_row(record: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    explainer, model, dataset = record["explainer"], record["model"], record["dataset"]
    row: dict[str, Any] = {
        "record_id": record["record_id"],
        "explainer": str(explainer["name"]),
        "version": str(explainer["version"]),
        "source": str(explainer.get("source") or "builtin"),
        "is_baseline": bool(explainer.get("is_baseline", False)),
        "model_independent": bool(explainer.get("model_independent", False)),
        "regime": str(model["regime"]),
        "base_model": str(model["base_model"]),
        "config": str(dataset["config"]),
        "seed": model.get("seed"),
        "created_at": record.get("provenance", {}).get("created_at"),
        "package_version": record.get("provenance", {}).get("package_version"),
        "schema_version": record.get("schema_version"),
        RUNTIME: _number((record.get("runtime") or {}).get("seconds_per_sentence")),
    }
    directions: dict[str, int] = {}
    metrics = record["metrics"]
    if not isinstance(metrics, Mapping) or MA not in metrics:
        raise ValueError("metrics has no mass_accuracy")
    for key, metric in metrics.items():
        if not isinstance(metric, Mapping):
            raise ValueError(f"metrics.{key} is not an object")
        row[key] = _number(metric.get("value"))
        row[f"{key}__lo"] = _number(metric.get("ci_low"))
        row[f"{key}__hi"] = _number(metric.get("ci_high"))
        direction = _direction(metric)
        if direction is not None:
            directions[key] = direction
    for group, values in (record.get("groups") or {}).items():
        if not isinstance(values, Mapping):
            raise ValueError(f"groups.{group} is not an object")
        # the schema stores the number under "mass_accuracy"; a metric-value object ("value") is accepted too
        value = values.get(MA, values.get("value"))
        row[f"group:{group}"] = _number(value)
        row[f"group:{group}__lo"] = _number(values.get("ci_low"))
        row[f"group:{group}__hi"] = _number(values.get("ci_high"))
    return row, directions


@dataclass
class RecordsFrame:
    """The long table of explainer records plus what was learnt while building it."""

    frame: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    directions: dict[str, int] = field(default_factory=dict)

    @property
    def metric_keys(self) -> list[str]:
        return [k for k in METRIC_LABELS if k in self.frame.columns and self.frame[k].notna().any()]


def records_frame(records: Iterable[Mapping[str, Any]]) -> RecordsFrame:
    """One row per ``explainer_score`` record; other record types are ignored, malformed ones become warnings."""
    rows, warnings, directions = [], [], {}
    for position, record in enumerate(records):
        if not isinstance(record, Mapping) or record.get("record_type") != "explainer_score":
            continue
        try:
            row, found = _record_row(record)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            what = err.args[0] if isinstance(err, KeyError) else err
            warnings.append(f"skipped explainer record {record.get('record_id', f'#{position}')}: {type(err).__name__}: {what}")
            continue
        rows.append(row)
        directions.update(found)
    frame = pd.DataFrame(rows)
    return RecordsFrame(frame=frame, warnings=warnings, directions=directions)


def _as_records_frame(data: RecordsFrame | Iterable[Mapping[str, Any]]) -> RecordsFrame:
    return data if isinstance(data, RecordsFrame) else records_frame(data)


def filter_frame(frame: pd.DataFrame, filters: Filters) -> pd.DataFrame:
    """Rows of the long table that pass ``filters`` (config, regime, base model, search text, baselines)."""
    if frame.empty:
        return frame
    mask = pd.Series(True, index=frame.index)
    for column, chosen in (("config", filters.configs), ("regime", filters.regimes), ("base_model", filters.base_models)):
        if chosen:
            mask &= frame[column].isin(list(chosen))
    if filters.search.strip():
        needle = filters.search.strip().lower()
        haystack = frame["explainer"].str.lower() + " " + frame["source"].str.lower() + " " + frame["version"].str.lower()
        mask &= haystack.str.contains(needle, regex=False)
    if not filters.show_baselines:
        mask &= ~frame["is_baseline"]
    return frame[mask]


def _kind(rows: pd.DataFrame) -> str:
    if rows["is_baseline"].any():
        return "baseline" + (" (model-independent)" if rows["model_independent"].all() else "")
    sources = sorted(set(rows["source"]))
    return ", ".join(SOURCE_LABELS.get(s, s) for s in sources)


def explainer_label(name: str, kind: str) -> str:
    """The explainer's name with a visible marker for baselines and self-reported results."""
    if kind.startswith("baseline"):
        return f"{name} [baseline]"
    if "self-reported" in kind:
        return f"{name} [self-reported]"
    return name


def explainer_summary(data: RecordsFrame | Iterable[Mapping[str, Any]], filters: Filters | None = None) -> pd.DataFrame:
    """One numeric row per explainer: MA per (regime, config) and every other metric as value / lo / hi.

    Columns: ``Explainer``, ``Kind``, ``Versions``, ``Records``, then for each metric label ``L`` the
    columns ``L``, ``L lo``, ``L hi`` (``MA <regime> · <config>`` for the per-cell MA, ``MA`` for the mean
    over all shown records, ``MA female`` … for the groups), and ``s / sentence``.
    """
    data = _as_records_frame(data)
    filters = filters or Filters()
    frame = filter_frame(data.frame, filters)
    if frame.empty:
        return pd.DataFrame(columns=["Explainer", "Kind", "Versions", "Records"])
    metric_keys = [k for k in METRIC_LABELS if k in frame.columns and frame[k].notna().any()]
    group_keys = [g for g in GROUPS if f"group:{g}" in frame.columns and frame[f"group:{g}"].notna().any()]
    by_explainer = frame.groupby("explainer", sort=True)
    summary = pd.DataFrame({
        "Explainer": [explainer_label(str(name), _kind(rows)) for name, rows in by_explainer],
        "Kind": [_kind(rows) for _, rows in by_explainer],
        "Versions": [", ".join(sorted(set(rows["version"]))) for _, rows in by_explainer],
        "Records": by_explainer.size().astype(int).to_numpy(),
    })
    blocks = [summary]
    # vectorised: mean of values, envelope of intervals, per explainer (and per regime × config for MA)
    columns = [(METRIC_LABELS[k], k) for k in metric_keys] + [(f"MA {g}", f"group:{g}") for g in group_keys]
    for label, key in columns:
        blocks.append(_aggregate(by_explainer, key, label))
    cells = frame.groupby(["explainer", "regime", "config"], sort=True)
    cell_mean = cells[MA].mean().unstack(["regime", "config"])
    cell_lo = cells[f"{MA}__lo"].min().unstack(["regime", "config"])
    cell_hi = cells[f"{MA}__hi"].max().unstack(["regime", "config"])
    per_cell = {}
    for regime, config in sorted(cell_mean.columns):
        label = f"MA {regime} · {config}"
        per_cell[label] = cell_mean[(regime, config)].to_numpy()
        per_cell[f"{label} lo"] = cell_lo[(regime, config)].to_numpy()
        per_cell[f"{label} hi"] = cell_hi[(regime, config)].to_numpy()
    blocks.append(pd.DataFrame(per_cell))
    blocks.append(pd.DataFrame({RUNTIME: by_explainer[RUNTIME].mean().to_numpy()}))
    summary = pd.concat([b.reset_index(drop=True) for b in blocks], axis=1)
    return sort_summary(summary, filters.sort_by, filters.descending)


def _aggregate(by_explainer: Any, key: str, label: str) -> pd.DataFrame:
    """Mean value and interval envelope of one metric column per explainer (NaN where nothing is defined)."""
    def column(name: str, how: str) -> np.ndarray:
        if name not in by_explainer.obj.columns:
            return np.full(by_explainer.ngroups, np.nan)
        return getattr(by_explainer[name], how)().to_numpy(dtype=float)

    return pd.DataFrame({label: column(key, "mean"), f"{label} lo": column(f"{key}__lo", "min"),
                         f"{label} hi": column(f"{key}__hi", "max")})


def sort_keys(summary: pd.DataFrame) -> list[str]:
    """Columns the table can be sorted by (value columns, not their CI bounds)."""
    return [c for c in summary.columns if not c.endswith((" lo", " hi")) and c not in ("Kind", "Versions")]


def sort_summary(summary: pd.DataFrame, sort_by: str | None, descending: bool = True) -> pd.DataFrame:
    """Sort by a value column (missing values last); an unknown column raises ValueError naming it."""
    if not sort_by or summary.empty:
        return summary.reset_index(drop=True)
    if sort_by not in summary.columns:
        raise ValueError(f"cannot sort by {sort_by!r}; choose one of {sort_keys(summary)}")
    key = summary[sort_by]
    if sort_by == "MA gap":  # the gap is signed; the best explainer is the one closest to zero
        ordered = summary.assign(_k=key.abs()).sort_values("_k", ascending=descending, na_position="last", kind="stable")
        return ordered.drop(columns="_k").reset_index(drop=True)
    return summary.sort_values(sort_by, ascending=not descending, na_position="last", kind="stable").reset_index(drop=True)


def format_value(value: float, low: float = np.nan, high: float = np.nan, digits: int = 3) -> str:
    """``0.623 [0.581, 0.664]``; ``–`` when undefined; the interval only when both ends are known."""
    if value is None or not np.isfinite(value):
        return "–"
    text = f"{value:.{digits}f}"
    if low is not None and high is not None and np.isfinite(low) and np.isfinite(high):
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


def display_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Merge each value with its interval into one text column, keeping the summary's row order."""
    if summary.empty:
        return summary
    columns: dict[str, Any] = {}
    for column in summary.columns:
        if column.endswith((" lo", " hi")):
            continue
        if f"{column} lo" in summary.columns:
            columns[column] = [
                format_value(v, lo, hi)
                for v, lo, hi in zip(summary[column], summary[f"{column} lo"], summary[f"{column} hi"])
            ]
        elif column == RUNTIME:
            columns[column] = ["–" if not np.isfinite(v) else f"{v:.4f}" for v in summary[column]]
        else:
            columns[column] = summary[column].tolist()
    return pd.DataFrame(columns)


def explainer_table(data: RecordsFrame | Iterable[Mapping[str, Any]], filters: Filters | None = None) -> pd.DataFrame:
    """The Explainers tab's table: one formatted row per explainer, filtered and sorted."""
    return display_table(explainer_summary(data, filters))


def property_scores(summary: pd.DataFrame, directions: Mapping[str, int] | None = None) -> pd.DataFrame:
    """Co-12 properties per explainer rescaled to 0..1 across the explainers shown, flipped so that 1 is best.

    Rows: explainers; columns: property labels present in ``summary``. With one explainer (or all equal)
    a property scores 0.5, since there is nothing to compare it with.
    """
    directions = {**DEFAULT_DIRECTION, **(directions or {})}
    labels = [(key, METRIC_LABELS[key]) for key in PROPERTY_KEYS if METRIC_LABELS[key] in summary.columns]
    scores = pd.DataFrame(index=summary["Explainer"] if "Explainer" in summary else [])
    for key, label in labels:
        values = summary[label].to_numpy(dtype=float) * directions.get(key, 1)
        finite = np.isfinite(values)
        if not finite.any():
            continue
        low, high = np.nanmin(values), np.nanmax(values)
        scaled = np.full(values.shape, 0.5) if high == low else (values - low) / (high - low)
        scaled[~finite] = np.nan
        scores[label] = scaled
    return scores


def choices(data: RecordsFrame) -> dict[str, list[str]]:
    """Distinct configs, regimes and base models (for the filter dropdowns)."""
    frame = data.frame
    if frame.empty:
        return {"configs": [], "regimes": [], "base_models": []}
    return {
        "configs": sorted(set(frame["config"])),
        "regimes": sorted(set(frame["regime"])),
        "base_models": sorted(set(frame["base_model"])),
    }


def versions_line(documents: Sequence[Mapping[str, Any]]) -> str:
    """``N records (…) · schema versions · package versions`` for the status line."""
    kinds: dict[str, int] = {}
    schemas, packages = set(), set()
    for doc in documents:
        kinds[str(doc.get("record_type"))] = kinds.get(str(doc.get("record_type")), 0) + 1
        schemas.add(str(doc.get("schema_version")))
        packages.add(str((doc.get("provenance") or {}).get("package_version")))
    parts = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    return (f"{len(documents)} records ({parts or 'none'}) · schema {', '.join(sorted(schemas)) or '–'} · "
            f"gecobench-hub {', '.join(sorted(packages)) or '–'}")
