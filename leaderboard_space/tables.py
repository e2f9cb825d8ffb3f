"""Data shaping for the leaderboard: records in, pandas tables out. No Gradio here, so it is tested directly.

* :func:`records_frame` — one row per ``explainer_score`` record (long form), malformed records skipped
  with a warning;
* :func:`explainer_summary` — one numeric row per explainer *and model* (regime × base × config), pooled over
  seeds only (value, CI low, CI high per metric, ``Seeds``, ``Differs by``, ``vs best``);
* :func:`explainer_table` — the same, formatted for display (``0.623 [0.581, 0.664]``), filtered and sorted;
* :func:`property_scores` — the Co-12 properties per row on a 0..1 scale where up is better (radar).

Aggregation (no silent pooling, :mod:`gecobench.pooling`): records fall into one row only when they differ
in nothing but their seeds (training seed, checkpoint, run seed, zero-shot reference). A row of ``n`` seeds
shows the mean over seeds and, for ``n >= 2``, the 95 % t-interval across seeds; a row of one seed keeps its
record's bootstrap interval. Rows of one explainer on one model that differ otherwise stay separate, and
``Differs by`` names the parameters that tell them apart. ``vs best`` compares each row with the best MA of its
model through the paired bootstrap interval the run recorded (``tie`` when it includes 0).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gecobench import columns
from gecobench.flags import MARKS, mark_text
from gecobench.formatting import format_interval
from gecobench.pooling import (
    across_seeds,
    across_seeds_t,
    distinguishing_fields,
    identity_fields,
    metric_bounds,
    pooling_key,
    record_comparison_label,
    tie_verdict,
)

MA = "mass_accuracy"
#: metric key → header label, from the one column model (:mod:`gecobench.columns`)
METRIC_LABELS: dict[str, str] = dict(columns.METRIC_LABELS)
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
SOURCE_LABELS = {"builtin": "built-in", "user": "user", "plugin": "plug-in", "submission": "submission", "self-reported": "self-reported ⚠"}
RUNTIME = "s / sentence"


#: what the All models tab shows, in words that match :func:`explainer_summary` (shown above its table)
ACROSS_MODELS_TEXT = (
    "**One row per explainer and model** (config × regime × base model) for the models the filters keep — never "
    "averaged across models, regimes or configs. Records that differ only in their seeds are pooled into one row: "
    "*Seeds* says how many; with several, the value is the mean over the seeds and the interval the 95 % "
    "t-interval across seeds (cut to the metric's range); with one, the record's own 95 % bootstrap interval over "
    "sentences. Rows of one "
    "explainer and model that differ otherwise stay apart, and *Differs by* names the difference. *vs best* "
    "compares with the best **real explainer** of the model (baselines are never the best). For one model at a "
    "time, ranked, use the Ranking tab.")


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


def _record_row(record: Mapping[str, Any], identities: dict[str, dict[str, str]] | None = None
                ) -> tuple[dict[str, Any], dict[str, int]]:
    """One long-table row and the metric directions found; ``identities`` caches
    :func:`gecobench.pooling.identity_fields` per pooling key (records of one pool share them)."""
    explainer, model, dataset = record["explainer"], record["model"], record["dataset"]
    row: dict[str, Any] = {
        "record_id": record["record_id"],
        "explainer": str(explainer["name"]),
        "version": str(explainer["version"]),
        "source": str(explainer.get("source") or "builtin"),
        "is_baseline": bool(explainer.get("is_baseline", False)),
        "model_independent": bool(explainer.get("model_independent", False)),
        # every flag of the record as bracketed marks (gecobench.flags: the one definition), shown by the name
        "marks": mark_text(record),
        "regime": str(model["regime"]),
        "base_model": str(model["base_model"]),
        "config": str(dataset["config"]),
        "seed": model.get("seed"),
        "created_at": record.get("provenance", {}).get("created_at"),
        "package_version": record.get("provenance", {}).get("package_version"),
        "schema_version": record.get("schema_version"),
        RUNTIME: _number((record.get("runtime") or {}).get("seconds_per_sentence")),
        # what the pooling and the paired comparisons need (gecobench.pooling)
        "pool_key": (pool_key := pooling_key(record)),
        "identity": _cached_identity(record, pool_key, identities if identities is not None else {}),
        "comparison_label": record_comparison_label(record),
        "comparisons": dict(record.get("comparisons") or {}),
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


def _cached_identity(record: Mapping[str, Any], pool_key: str, cache: dict[str, dict[str, str]]) -> dict[str, str]:
    if pool_key not in cache:
        cache[pool_key] = identity_fields(record)
    return cache[pool_key]


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
    identities: dict[str, dict[str, str]] = {}
    for position, record in enumerate(records):
        if not isinstance(record, Mapping) or record.get("record_type") != "explainer_score":
            continue
        try:
            row, found = _record_row(record, identities)
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
    return _kind_of(bool(rows["is_baseline"].any()), bool(rows["model_independent"].all()), sorted(set(rows["source"])))


def _kind_of(any_baseline: bool, all_model_independent: bool, sources: Sequence[str]) -> str:
    if any_baseline:
        return "baseline" + (" (model-independent)" if all_model_independent else "")
    # Submissions measured (or declared) model-independent are labelled like the baselines (issue #16).
    independent = " (model-independent)" if all_model_independent else ""
    return ", ".join(SOURCE_LABELS.get(s, s) for s in sorted(sources)) + independent


def _pool_marks(marks: Iterable[str]) -> str:
    """The union of the records' bracketed marks, in the flags' order (a pool shows every flag any record has)."""
    found = {m for text in marks for m in re.findall(r"\[[^\]]+\]", str(text or ""))}
    return " ".join(f"[{mark}]" for mark in MARKS.values() if f"[{mark}]" in found)


def explainer_label(name: str, kind: str, marks: str = "") -> str:
    """The explainer's name with a visible marker for baselines, then every flag (``marks``:
    :func:`gecobench.flags.mark_text`); without marks, from its kind (self-reported, model-independent)."""
    if kind.startswith("baseline"):
        return f"{name} [baseline]"
    if marks:
        return f"{name} {marks}"
    if "self-reported" in kind:
        return f"{name} [self-reported]"
    if "model-independent" in kind:
        return f"{name} [model-independent]"
    return name


MODEL_COLUMNS = ["Config", "Regime", "Base model"]


def explainer_summary(data: RecordsFrame | Iterable[Mapping[str, Any]], filters: Filters | None = None) -> pd.DataFrame:
    """One numeric row per explainer and model (regime × base model × config), pooled over seeds only.

    Columns: ``Explainer``, ``Kind``, ``Versions``, ``Config``, ``Regime``, ``Base model``, ``Seeds`` (records
    pooled), ``Records``, ``Differs by`` (the parameters that set the row apart, :func:`gecobench.pooling.
    distinguishing_fields`), ``vs best``, then for each metric label ``L`` the columns ``L``, ``L lo``, ``L hi``
    (``MA female`` … for the groups), and ``s / sentence``. Rows are grouped by model, best MA first.
    """
    data = _as_records_frame(data)
    filters = filters or Filters()
    frame = filter_frame(data.frame, filters)
    if frame.empty:
        return pd.DataFrame(columns=["Explainer", "Kind", "Versions", *MODEL_COLUMNS, "Seeds", "Records"])
    metric_keys = [k for k in METRIC_LABELS if k in frame.columns and frame[k].notna().any()]
    group_keys = [g for g in GROUPS if f"group:{g}" in frame.columns and frame[f"group:{g}"].notna().any()]
    pools = frame.groupby(["config", "regime", "base_model", "explainer", "pool_key"], sort=True)
    keys = pools.size().index  # one entry per pool, in the pools' order (columns of one column each: fast)
    kinds = [_kind_of(baseline, independent, sources) for baseline, independent, sources in zip(
        pools["is_baseline"].any(), pools["model_independent"].all(), pools["source"].agg(lambda x: sorted(set(x))))]
    summary = pd.DataFrame({
        "Explainer": [explainer_label(str(name), kind, marks) for name, kind, marks in zip(
            keys.get_level_values("explainer"), kinds, pools["marks"].agg(_pool_marks))],
        "Kind": kinds,
        "Versions": pools["version"].agg(lambda x: ", ".join(sorted(set(x)))).to_numpy(),
        "Config": keys.get_level_values("config"),
        "Regime": keys.get_level_values("regime"),
        "Base model": keys.get_level_values("base_model"),
        "Seeds": pools.size().astype(int).to_numpy(),
        "Records": pools.size().astype(int).to_numpy(),
        "Differs by": distinguishing_fields(list(pools["identity"].first())),
        # the records behind each row, for the downloads (display_table leaves them out)
        "record_id": pools["record_id"].agg(lambda ids: ";".join(map(str, ids))).to_numpy(),
    })
    blocks = [summary]
    columns = [(METRIC_LABELS[k], k) for k in metric_keys] + [(f"MA {g}", f"group:{g}") for g in group_keys]
    for label, key in columns:
        blocks.append(_aggregate(pools, key, label))
    blocks.append(pd.DataFrame({RUNTIME: pools[RUNTIME].mean().to_numpy()}))
    summary = pd.concat([b.reset_index(drop=True) for b in blocks], axis=1)
    summary.insert(summary.columns.get_loc("Records") + 2, "vs best",
                   _vs_best(summary, list(pools["comparison_label"].first()), list(pools["comparisons"].agg(list))))
    return sort_summary(summary, filters.sort_by, filters.descending)


def _aggregate(pools: Any, key: str, label: str) -> pd.DataFrame:
    """Per pool: mean over seeds; interval = the record's own with one seed, else the 95 % t-interval across
    seeds cut to the metric's range (:func:`gecobench.pooling.across_seeds`, vectorised here); NaN where nothing is
    defined."""
    n = pools.ngroups
    if key not in pools.obj.columns:
        return pd.DataFrame({label: np.full(n, np.nan), f"{label} lo": np.full(n, np.nan),
                             f"{label} hi": np.full(n, np.nan)})
    values = pools[key]
    mean = values.mean().to_numpy(dtype=float)
    count = values.count().to_numpy()
    size = pools.size().to_numpy()
    std = values.std(ddof=1).to_numpy(dtype=float)
    t = np.array([across_seeds_t(int(c)) for c in count])
    with np.errstate(invalid="ignore", divide="ignore"):
        half = t * std / np.sqrt(count)
    single = (size == 1) & (count == 1)
    own_lo = pools[f"{key}__lo"].first().to_numpy(dtype=float)
    own_hi = pools[f"{key}__hi"].first().to_numpy(dtype=float)
    lowest, highest = (metric_bounds("mass_accuracy", "groups") if key.startswith("group:")
                       else metric_bounds(key)) or (None, None)
    pooled_low, pooled_high = mean - half, mean + half
    if lowest is not None:
        pooled_low = np.maximum(pooled_low, lowest)
    if highest is not None:
        pooled_high = np.minimum(pooled_high, highest)
    low = np.where(single, own_lo, np.where(count >= 2, pooled_low, np.nan))
    high = np.where(single, own_hi, np.where(count >= 2, pooled_high, np.nan))
    return pd.DataFrame({label: mean, f"{label} lo": low, f"{label} hi": high})


def _vs_best(summary: pd.DataFrame, labels: list[str], comparisons: list[list[dict[str, Any]]]) -> list[str]:
    """``best`` for the highest MA of each model (config × regime × base) among the real explainers (baselines are
    never the best), else ``tie``/``lower`` from the best
    row's paired comparisons with this explainer (interval of MA(best) − MA(this) includes 0 or not, pooled over
    seeds like the values); ``–`` when the two were not compared in one run."""
    marks = ["–"] * len(summary)
    ma_label = METRIC_LABELS[MA]
    if ma_label not in summary.columns:
        return marks
    for _, cell in summary.groupby(MODEL_COLUMNS, sort=False):
        # the best is a real explainer: Pattern Variant is an oracle and Uniform Random chance, neither a result
        ranked = cell.loc[~cell["Kind"].str.startswith("baseline"), ma_label].dropna()
        if ranked.empty:
            continue
        best = int(ranked.idxmax())
        for index in cell.index:
            if index == best:
                marks[index] = "best"
                continue
            other = labels[index]
            differences = [c[other] for c in comparisons[best] if other in c]
            if not differences:
                continue
            own = (differences[0].get("ci_low"), differences[0].get("ci_high")) if len(differences) == 1 else (None, None)
            _, low, high, _ = across_seeds([d.get("value") for d in differences], own,
                                           metric_bounds("mass_accuracy", "difference"))
            marks[index] = {"higher": "lower", "tie": "tie", "lower": "higher"}.get(tie_verdict(low, high) or "", "–")
    return marks


def sort_keys(summary: pd.DataFrame) -> list[str]:
    """Columns the table can be sorted by (value columns, not their CI bounds)."""
    return [c for c in summary.columns
            if not c.endswith((" lo", " hi")) and c not in ("Kind", "Versions", "Differs by", "vs best", "record_id")]


def sort_summary(summary: pd.DataFrame, sort_by: str | None, descending: bool = True) -> pd.DataFrame:
    """Sort by a value column (missing values last); an unknown column raises ValueError naming it."""
    if not sort_by or summary.empty:
        return summary.reset_index(drop=True)
    if sort_by not in summary.columns:
        raise ValueError(f"cannot sort by {sort_by!r}; choose one of {sort_keys(summary)}")
    key = summary[sort_by]
    # rows stay grouped by model (config × regime × base): the default view is per model, never across them
    by_model = [c for c in MODEL_COLUMNS if c in summary.columns and c != sort_by]
    declared = columns.by_label(sort_by)
    if declared is not None and declared.direction == columns.ZERO:  # signed gap: the best is closest to zero
        ordered = summary.assign(_k=key.abs()).sort_values([*by_model, "_k"], ascending=[True] * len(by_model) + [descending],
                                                           na_position="last", kind="stable")
        return ordered.drop(columns="_k").reset_index(drop=True)
    return summary.sort_values([*by_model, sort_by], ascending=[True] * len(by_model) + [not descending],
                               na_position="last", kind="stable").reset_index(drop=True)


def display_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Merge each value with its interval into one text column, keeping the summary's row order."""
    if summary.empty:
        return summary
    columns: dict[str, Any] = {}
    for column in summary.columns:
        if column.endswith((" lo", " hi")) or column == "record_id":
            continue
        if f"{column} lo" in summary.columns:
            columns[column] = [
                format_interval(v, lo, hi)
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
    scores = pd.DataFrame(index=row_labels(summary) if "Explainer" in summary else [])
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


def row_labels(summary: pd.DataFrame) -> list[str]:
    """A name per summary row: the explainer, plus its model (and what sets it apart) when the summary shows
    several models or several rows of one explainer."""
    if not set(MODEL_COLUMNS) <= set(summary.columns):
        return list(summary["Explainer"])
    models = summary[MODEL_COLUMNS].astype(str).agg(" · ".join, axis=1)
    labels = list(summary["Explainer"])
    if models.nunique() > 1:
        labels = [f"{e} · {m}" for e, m in zip(labels, models)]
    if "Differs by" in summary.columns:
        labels = [f"{e} ({d})" if d else e for e, d in zip(labels, summary["Differs by"])]
    return labels


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
