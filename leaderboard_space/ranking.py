"""The per-model ranking: pick a GECO config, a base model and a regime; see every explainer ranked by MA.

No Gradio here. One row per *record* (explainer × version × seed) of the chosen cell — nothing is pooled across
models, regimes, configs or seeds. Three small adapters carry the statistics and are the seams where the
evaluation's own functions plug in (see :mod:`gecobench.evaluation.leaderboard`):

* :func:`signed_gender_gap` — MA(male) − MA(female) with its interval, from a record;
* :func:`separated_from_next` — whether an explainer is distinguishable from the one ranked below it;
* :func:`chance_level` — the MA an explanation gets by chance (Uniform Random, else the ground-truth share).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gecobench import columns
from gecobench.flags import mark_text, ranked_apart
from gecobench.formatting import format_number, is_finite_number
from gecobench.gender import GAP_KEYS, gender_value
from gecobench.pooling import (
    across_seeds,
    metric_bounds,
    pool_records,
    pooled_comparison,
    record_comparison_label,
    tie_verdict,
)
from leaderboard_space.tables import (
    DEFAULT_DIRECTION,
    METRIC_LABELS,
    PROPERTY_KEYS,
    RANKING_KEYS,
)

CONFIG_ORDER = ("binary_all", "binary_subject", "nonbinary_all", "nonbinary_subject")
REGIME_ORDER = ("OLA", "ZS", "C", "CE", "CEf", "CEfAf")  # from scratch, then MiniLM from frozen to fully fine-tuned
GAP = columns.METRICS["mass_accuracy_gap"].label
#: the MA gaps to non-binary (non-binary configs only; left out of a ranking whose records have none)
NONBINARY_GAPS = {key: columns.METRICS[f"mass_accuracy_gap_{key}"].label for key in GAP_KEYS[1:]}
#: the largest |MA gap| over every gap of the config: the "best gap" is the smallest
LARGEST_GAP = columns.LARGEST_GAP.label
NOT_SEPARATED_MARK = "≈ next"
RANK_COLUMNS_METRICS = ["relative_mass_accuracy", *PROPERTY_KEYS, *RANKING_KEYS]


#: the Ranking's optional column groups (its "Columns shown" chooser), over :func:`model_ranking`'s columns; Rank,
#: Explainer, MA with its interval, Seeds and "vs next" are always shown. Faithfulness: the ground-truth measures
#: besides MA; properties: the Co-12 property checks (drawn in the radar below the table too); provenance: where
#: a row comes from. The downloads keep every column.
COLUMN_GROUPS: dict[str, list[str]] = {
    "Faithfulness": [METRIC_LABELS[k] for k in ("relative_mass_accuracy", *RANKING_KEYS)],
    "Gaps": [GAP, *NONBINARY_GAPS.values(), LARGEST_GAP],
    "Properties": [METRIC_LABELS[k] for k in PROPERTY_KEYS],
    "Provenance": ["Kind", "Interval", "Version", "Parameters", "Seed", "Sentences scored", "Model accuracy",
                   "Model", "Model card", "Dataset", "Dataset card", "Protocol", "Record"],
}
#: shown on a first visit: the numbers a ranking is read for; provenance (13 text columns) on request
DEFAULT_COLUMN_GROUPS: list[str] = ["Faithfulness", "Gaps", "Properties"]


def chosen_columns(shown: pd.DataFrame, groups: Iterable[str] | None) -> pd.DataFrame:
    """``shown`` (:func:`ranking_display`'s table) without the columns of the groups not in ``groups`` (each
    value column together with its ``95% CI`` column); ``None`` keeps every column."""
    if groups is None:
        return shown
    groups = list(groups)
    unknown = [g for g in groups if g not in COLUMN_GROUPS]
    if unknown:
        raise ValueError(f"unknown column group(s) {unknown}; known: {sorted(COLUMN_GROUPS)}")
    hidden = {c for name, cols in COLUMN_GROUPS.items() if name not in groups for c in cols}
    hidden |= {f"{c} 95% CI" for c in hidden}
    return shown[[c for c in shown.columns if c not in hidden]]


def _ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    """Known values in ``order`` first, then the rest alphabetically."""
    values = set(values)
    return [v for v in order if v in values] + sorted(values - set(order))


def _value(record: Mapping[str, Any], key: str, field_name: str = "value") -> float:
    block = (record.get("metrics") or {}).get(key)
    value = block.get(field_name) if isinstance(block, Mapping) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else np.nan


@dataclass
class CellChoices:
    """What can be chosen on the ranking tab, and the default (the first config, base model and regime)."""

    configs: list[str] = field(default_factory=list)
    base_models: list[str] = field(default_factory=list)
    regimes: list[str] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.configs


def cell_choices(records: Sequence[Mapping[str, Any]], config: str | None = None,
                 base_model: str | None = None) -> CellChoices:
    """Configs present; base models present for ``config``; regimes and seeds present for both."""
    configs = _ordered({r["dataset"]["config"] for r in records}, CONFIG_ORDER)
    if not configs:
        return CellChoices()
    config = config if config in configs else configs[0]
    in_config = [r for r in records if r["dataset"]["config"] == config]
    base_models = sorted({r["model"]["base_model"] for r in in_config})
    base_model = base_model if base_model in base_models else base_models[0]
    in_base = [r for r in in_config if r["model"]["base_model"] == base_model]
    regimes = _ordered({r["model"]["regime"] for r in in_base}, REGIME_ORDER)
    seeds = sorted({str(r["model"].get("seed")) for r in in_base})
    # several seeds: their mean (with the across-seed interval) first, as the paper reports; each seed after it
    return CellChoices(configs, base_models, regimes, [ALL_SEEDS, *seeds] if len(seeds) > 1 else seeds)


def seed_matches(record: Mapping[str, Any], seed: str | None) -> bool:
    """Whether ``record`` belongs to the seed choice ``seed`` (None, "" and :data:`ALL_SEEDS`: every seed)."""
    return not seed or seed == ALL_SEEDS or str(record["model"].get("seed")) == seed


def cell_records(records: Sequence[Mapping[str, Any]], config: str | None, base_model: str | None,
                 regime: str | None, seed: str | None = None) -> list[Mapping[str, Any]]:
    """The records of one (config, base model, regime[, seed]) cell (every seed for :data:`ALL_SEEDS`)."""
    return [r for r in records if r["dataset"]["config"] == config and r["model"]["base_model"] == base_model
            and r["model"]["regime"] == regime and seed_matches(r, seed)]


# ------------------------------------------------------------------------------------------------ the adapters

def signed_gender_gap(record: Mapping[str, Any]) -> tuple[float, float, float, str]:
    """MA(male) − MA(female) and its paired interval, as the record stores it (schema 2: the gap block names
    ``minuend``/``subtrahend``), and what the number means; NaN when the record has no gap."""
    block = (record.get("metrics") or {}).get("mass_accuracy_gap")
    if not isinstance(block, Mapping):
        return np.nan, np.nan, np.nan, "no gap in the record"
    value, low, high = (_value(record, "mass_accuracy_gap", f) for f in ("value", "ci_low", "ci_high"))
    if (block.get("minuend"), block.get("subtrahend")) == ("female", "male"):
        return -value, -high, -low, "male − female"
    return value, low, high, block.get("definition", "MA(male) − MA(female)").replace("MA(", "").replace(")", "")


def separated_from_next(better: Mapping[str, Any], worse: Mapping[str, Any]) -> bool | None:
    """Whether ``better`` is distinguishable in MA from ``worse`` (the next one down); None when unknown.

    The evaluation's paired comparison decides (``record["comparisons"]``: MA(this) − MA(other) with a paired
    bootstrap interval over source sentences, same sentences, same run): a ``tie`` is not separated. Records of
    different runs were not compared; then two 95% intervals that do not overlap count as separated and
    overlapping ones do not (a conservative check, not a paired test).
    """
    paired = (better.get("comparisons") or {}).get(record_comparison_label(worse))
    same_run = better.get("protocol") == worse.get("protocol") and (
        (better.get("model") or {}).get("checkpoint_sha256") == (worse.get("model") or {}).get("checkpoint_sha256"))
    if same_run and isinstance(paired, Mapping) and paired.get("verdict") in ("higher", "lower", "tie"):
        return paired["verdict"] != "tie"
    low_better, high_worse = _value(better, "mass_accuracy", "ci_low"), _value(worse, "mass_accuracy", "ci_high")
    if not (np.isfinite(low_better) and np.isfinite(high_worse)):
        return None
    return bool(low_better > high_worse)


def chance_level(records: Sequence[Mapping[str, Any]]) -> tuple[float, str]:
    """The MA of a chance explanation for these records: the Uniform Random baseline's MA when it was scored,
    else NaN. Returns (value, label)."""
    uniform = [_value(r, "mass_accuracy") for r in records if r["explainer"]["name"] == "uniform_random"]
    uniform = [v for v in uniform if np.isfinite(v)]
    if uniform:
        return float(np.mean(uniform)), "chance (Uniform Random)"
    return np.nan, "chance level unknown (no Uniform Random record)"


# ------------------------------------------------------------------------------------------------ the table

def _label(record: Mapping[str, Any]) -> str:
    explainer = record["explainer"]
    name = str(explainer["name"])
    if explainer.get("is_baseline"):
        return f"{name} [baseline]"
    # every flag of the record (self-reported, model-independent, explains the data not the model, matches the
    # ground truth: gecobench.flags, the one definition), on every view that names an explainer
    marks = mark_text(record)
    return f"{name} {marks}" if marks else name


def _protocol_text(protocol: Mapping[str, Any]) -> str:
    keys = ("split", "filter", "bootstrap_resamples", "max_sentence_groups", "target")
    return "; ".join(f"{k}={protocol[k]}" for k in keys if protocol.get(k) is not None)


def _model_text(model: Mapping[str, Any]) -> str:
    """The checkpoint a record scored: its card link when the record names one, else name and weights hash."""
    card = model.get("card_url") or (f"https://huggingface.co/{model['hub_id']}" if model.get("hub_id") else None)
    sha = str(model.get("checkpoint_sha256") or "")[:12]
    text = " ".join(p for p in (str(model.get("name") or ""), f"sha256:{sha}" if sha else "") if p)
    return f"{text} ({card})" if card else text


def _dataset_text(dataset: Mapping[str, Any]) -> str:
    fingerprint = str(dataset.get("fingerprint") or "")[:12]
    return f"{dataset.get('name', 'geco')}/{dataset.get('config')}/{dataset.get('split')} ({fingerprint})"


#: the range a pooled Mass Accuracy interval is cut to (:func:`gecobench.pooling.metric_bounds`)
MA_BOUNDS = metric_bounds("mass_accuracy")
#: the Ranking's seed choice that pools every seed of a cell (shown first when a cell has several seeds)
ALL_SEEDS = "mean over seeds"


def seed_text(seed: str) -> str:
    """The seed choice as a title says it: ``seed 2``, or ``mean over seeds`` for :data:`ALL_SEEDS`."""
    return ALL_SEEDS if seed == ALL_SEEDS else f"seed {seed}"


def seed_file_part(seed: str) -> str:
    """The seed choice as a download's file name says it: ``seed2``, or ``all-seeds`` for :data:`ALL_SEEDS`."""
    return "all-seeds" if seed == ALL_SEEDS else f"seed{seed}"


#: how a row's interval was computed (the ``Interval`` column)
BOOTSTRAP_INTERVAL, ACROSS_SEEDS_INTERVAL = "95% bootstrap over sentences (1 seed)", "95% t-interval across {n} seeds"
KIND_EXPLAINER, KIND_BASELINE, KIND_FLAGGED = "explainer", "baseline", "flagged"


def _pooled(values: Sequence[float | None], own: tuple[Any, Any], bounds: tuple[float | None, float | None] | None
            ) -> tuple[float, float, float]:
    """Mean and interval over a pool's seeds (:func:`gecobench.pooling.across_seeds`: the record's own interval
    with one seed, the 95 % t-interval across seeds with several, cut to ``bounds``), NaN where undefined."""
    value, low, high, _ = across_seeds(values, own, bounds)
    as_float = lambda v: float(v) if is_finite_number(v) else np.nan
    return as_float(value), as_float(low), as_float(high)


def _pool_column(pool: Sequence[Mapping[str, Any]], read: Callable[[Mapping[str, Any], str], Any],
                 bounds: tuple[float | None, float | None] | None) -> tuple[float, float, float]:
    """One value of a pool's records (``read(record, "value" | "ci_low" | "ci_high")``), pooled over its seeds
    within ``bounds`` (:func:`gecobench.pooling.metric_bounds` of what ``read`` reads)."""
    own = (read(pool[0], "ci_low"), read(pool[0], "ci_high")) if len(pool) == 1 else (None, None)
    return _pooled([read(record, "value") for record in pool], own, bounds)


def _signed_gap_part(record: Mapping[str, Any], end: str) -> float:
    value, low, high, _ = signed_gender_gap(record)
    return {"value": value, "ci_low": low, "ci_high": high}[end]


def _pools_separated(better: Sequence[Mapping[str, Any]], worse: Sequence[Mapping[str, Any]],
                     better_ma: tuple[float, float, float], worse_ma: tuple[float, float, float]) -> bool | None:
    """:func:`separated_from_next` for pools: one record each as there; over seeds the paired comparisons pooled
    across seeds (:func:`gecobench.pooling.pooled_comparison`), else non-overlapping across-seed intervals."""
    if len(better) == 1 and len(worse) == 1:
        return separated_from_next(better[0], worse[0])
    _, low, high, n = pooled_comparison(better, record_comparison_label(worse[0]))
    verdict = tie_verdict(low, high) if n else None
    if verdict is not None:
        return verdict != "tie"
    if not (np.isfinite(better_ma[1]) and np.isfinite(worse_ma[2])):
        return None
    return bool(better_ma[1] > worse_ma[2])


def model_ranking(records: Sequence[Mapping[str, Any]], record_link: Callable[[Mapping[str, Any]], str] | None = None,
                  cards: Callable[[Mapping[str, Any]], tuple[str, str]] | None = None) -> pd.DataFrame:
    """One numeric row per explainer of a cell — the records of one explainer that differ only in their seeds
    pooled (:func:`gecobench.pooling.pool_records`) — real explainers ranked by MA, baselines below them, ranked
    apart (``Rank`` is empty for a baseline: it is not a result to be ranked among explainers).

    With one seed a row shows that record's values and bootstrap intervals; with ``n`` seeds the mean over the
    seeds and the 95 % t-interval across them (``Seeds`` = n, ``Interval`` says which). Every gap of the config
    (male − female; on the non-binary configs each binary group − non-binary) and the largest |gap| over them.
    ``record_link(record) -> str`` names where a record file lives (default: its id); ``cards(record) -> (model
    card, dataset card)`` where the cards are ("" when unknown; default: both columns empty). ``record_id`` lists
    the pooled records' ids (``;``-separated), for the downloads.
    """
    columns = ["Rank", "Explainer", "MA", "MA lo", "MA hi", "Seeds", "vs next", GAP, f"{GAP} lo", f"{GAP} hi",
               *[f"{label}{end}" for label in NONBINARY_GAPS.values() for end in ("", " lo", " hi")], LARGEST_GAP,
               *[f"{METRIC_LABELS[k]}{end}" for k in RANK_COLUMNS_METRICS for end in ("", " lo", " hi")],
               "Kind", "Interval", "Version", "Parameters", "Seed",
               "Sentences scored", "Model accuracy", "Model", "Model card", "Dataset", "Dataset card", "Protocol",
               "Record", "record_id"]
    if not records:
        return pd.DataFrame(columns=columns)
    pools = pool_records(records)
    ma = [_pool_column(pool, lambda r, end: _value(r, "mass_accuracy", end), MA_BOUNDS) for pool in pools]
    baseline = [bool(pool[0]["explainer"].get("is_baseline")) for pool in pools]
    flagged = [not baseline[i] and any(ranked_apart(r) for r in pool) for i, pool in enumerate(pools)]
    # ranked apart, as the baselines: entries flagged as looked up from the data (gecobench.flags.ranked_apart)
    is_baseline = [b or f for b, f in zip(baseline, flagged)]
    # real explainers first, then the baselines and flagged entries; each by MA (undefined last), then by name
    order = sorted(range(len(pools)), key=lambda i: (is_baseline[i], -np.nan_to_num(ma[i][0], nan=-np.inf),
                                                     pools[i][0]["explainer"]["name"]))
    rows = []
    rank = 0
    for position, i in enumerate(order):
        pool, first = pools[i], pools[i][0]
        following = order[position + 1] if position + 1 < len(order) else None
        separated = True
        if following is not None and is_baseline[following] == is_baseline[i]:  # compared within its own list
            separated = _pools_separated(pool, pools[following], ma[i], ma[following])
        if not is_baseline[i]:
            rank += 1
        gap = _pool_column(pool, _signed_gap_part, metric_bounds("mass_accuracy_gap"))
        row = {
            "Rank": None if is_baseline[i] else rank, "Explainer": _label(first),
            "MA": ma[i][0], "MA lo": ma[i][1], "MA hi": ma[i][2], "Seeds": len(pool),
            "vs next": NOT_SEPARATED_MARK if separated is False else "",
            GAP: gap[0], f"{GAP} lo": gap[1], f"{GAP} hi": gap[2],
        }
        gaps = [gap[0]]
        for key, label in NONBINARY_GAPS.items():  # from by_gender, or the older mass_accuracy_gap_* blocks
            values = _pool_column(pool, lambda r, end, key=key: (gender_value(r, "mass_accuracy", "gaps", key)
                                                                 or {}).get(end), metric_bounds("mass_accuracy", "gaps"))
            row.update({label: values[0], f"{label} lo": values[1], f"{label} hi": values[2]})
            gaps.append(values[0])
        finite = [abs(g) for g in gaps if np.isfinite(g)]
        row[LARGEST_GAP] = max(finite) if finite else np.nan
        for key in RANK_COLUMNS_METRICS:  # every number with its interval (the record's, or across seeds)
            label = METRIC_LABELS[key]
            values = _pool_column(pool, lambda r, end, key=key: _value(r, key, end), metric_bounds(key))
            row.update({label: values[0], f"{label} lo": values[1], f"{label} hi": values[2]})
        model = first["model"]
        model_card, dataset_card = cards(first) if cards else ("", "")
        accuracies = [r["model"].get("accuracy_on_evaluated") for r in pool]
        accuracy = across_seeds([a for a in accuracies if is_finite_number(a)])[0]
        scored = sorted({int((r.get("counts") or {}).get("n_scored") or 0) for r in pool})
        row.update({
            "Kind": KIND_BASELINE if baseline[i] else KIND_FLAGGED if flagged[i] else KIND_EXPLAINER,
            "Interval": BOOTSTRAP_INTERVAL if len(pool) == 1 else ACROSS_SEEDS_INTERVAL.format(n=len(pool)),
            "Version": str(first["explainer"]["version"]),
            "Parameters": json.dumps(first["explainer"].get("params") or {}, sort_keys=True),
            "Seed": ", ".join(str(r["model"].get("seed")) for r in pool),
            "Sentences scored": scored[0] if len(scored) == 1 else f"{scored[0]}–{scored[-1]}",
            "Model accuracy": float(accuracy) if accuracy is not None else np.nan,
            "Model": _model_text(model) if len(pool) == 1 else f"{len(pool)} checkpoints: " + "; ".join(
                _model_text(r["model"]) for r in pool),
            "Model card": model_card,
            "Dataset": _dataset_text(first.get("dataset") or {}),
            "Dataset card": dataset_card,
            "Protocol": _protocol_text(first.get("protocol") or {}),
            "Record": " ; ".join(record_link(r) if record_link else str(r["record_id"]) for r in pool),
            "record_id": ";".join(str(r["record_id"]) for r in pool),
        })
        rows.append(row)
    table = pd.DataFrame(rows, columns=columns)
    table["Rank"] = table["Rank"].astype("Int64")
    # on a binary config there is one gap: no non-binary columns, and the largest |gap| would repeat it
    if table[list(NONBINARY_GAPS.values())].isna().all().all():
        table = table.drop(columns=[f"{label}{end}" for label in NONBINARY_GAPS.values() for end in ("", " lo", " hi")]
                           + [LARGEST_GAP])
    return table


def best_per_column(ranking: pd.DataFrame) -> dict[str, int]:
    """Row position of the best value of each metric column (direction from the metric registry; the gender
    gaps are best closest to zero, and the best gap over all of them is the smallest largest |gap|). Baselines are
    not candidates: beating chance is not a result."""
    best: dict[str, int] = {}
    if not len(ranking):
        candidates = []
    elif "Kind" in ranking.columns:  # neither baselines nor flagged entries
        candidates = (ranking["Kind"] == KIND_EXPLAINER).to_numpy()
    else:
        candidates = ~ranking["Explainer"].str.endswith("[baseline]")
    keys = {"MA": "mass_accuracy", GAP: None, **dict.fromkeys([*NONBINARY_GAPS.values(), LARGEST_GAP]),
            **{METRIC_LABELS[k]: k for k in RANK_COLUMNS_METRICS}}
    for column, key in keys.items():
        if column not in ranking.columns:
            continue
        values = ranking[column].to_numpy(dtype=float)
        if key is None:
            values = -np.abs(values)
        else:
            values = values * DEFAULT_DIRECTION.get(key, 1)
        values = np.where(np.asarray(candidates, dtype=bool) & np.isfinite(values), values, -np.inf)
        if len(values) and np.isfinite(values.max()):
            best[column] = int(np.argmax(values))
    return best


def _interval(low: float, high: float) -> str:
    return f"[{format_number(low)}, {format_number(high)}]" if np.isfinite(low) and np.isfinite(high) else "–"


def interval_columns(ranking: pd.DataFrame) -> list[str]:
    """The value columns of a ranking that come with ``<column> lo`` and ``<column> hi``."""
    return [c for c in ranking.columns if f"{c} lo" in ranking.columns and f"{c} hi" in ranking.columns]


def ranking_display(ranking: pd.DataFrame) -> pd.DataFrame:
    """The ranking for the screen: values rounded to three decimals, each value followed by its interval as one
    text column (``<column> 95% CI``), the value itself kept numeric so that the column sorts."""
    valued = interval_columns(ranking)
    bounds = [f"{c} {end}" for c in valued for end in ("lo", "hi")]
    hidden = bounds + [c for c in ("record_id",) if c in ranking.columns]  # the ids are the downloads' (Record: links)
    if ranking.empty:
        return ranking.drop(columns=hidden)
    shown = ranking.copy()
    if "Rank" in shown.columns:  # a baseline has no rank: a dash, not <NA>
        shown["Rank"] = [int(r) if pd.notna(r) else "–" for r in shown["Rank"]]
    for column in valued:
        shown.insert(shown.columns.get_loc(column) + 1, f"{column} 95% CI",
                     [_interval(lo, hi) for lo, hi in zip(ranking[f"{column} lo"], ranking[f"{column} hi"])])
    shown = shown.drop(columns=hidden)
    numeric = [c for c in shown.columns if shown[c].dtype.kind == "f"]
    shown[numeric] = shown[numeric].round(3)
    return shown


def pivot_by_regime(records: Sequence[Mapping[str, Any]], config: str | None, base_model: str | None,
                    seed: str | None = None, rank_by: str | None = None) -> pd.DataFrame:
    """Explainer × regime MA for one config and base model (one seed, or :data:`ALL_SEEDS`: the mean over the
    seeds of each cell, with the across-seed interval), numeric: ``<regime>``, ``<regime> lo``, ``<regime> hi``.

    Rows are *ranked*: real explainers by their MA in ``rank_by`` (the Ranking tab's regime; default: the mean of
    their MAs over the regimes), best first, then the baselines the same way (:attr:`pandas.DataFrame.attrs`
    ``["order"]`` says which). A cell with records of several protocols (two versions of an explainer) shows the
    newest one's value and is listed in the ``Note`` column."""
    chosen = [r for r in records if r["dataset"]["config"] == config and r["model"]["base_model"] == base_model
              and seed_matches(r, seed)]
    if not chosen:
        return pd.DataFrame(columns=["Explainer"])
    regimes = _ordered({r["model"]["regime"] for r in chosen}, REGIME_ORDER)
    cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    baselines: set[str] = set()
    for record in chosen:
        cells.setdefault((_label(record), record["model"]["regime"]), []).append(record)
        if record["explainer"].get("is_baseline"):
            baselines.add(_label(record))
    newest = lambda pool: max(str((r.get("provenance") or {}).get("created_at")) for r in pool)
    rows = []
    for name in sorted({name for name, _ in cells}):
        row: dict[str, Any] = {"Explainer": name}
        doubled = []
        for regime in regimes:
            pools = sorted(pool_records(cells.get((name, regime), [])), key=newest)
            value, low, high = (_pool_column(pools[-1], lambda r, end: _value(r, "mass_accuracy", end), MA_BOUNDS)
                                if pools
                                else (np.nan, np.nan, np.nan))
            row.update({regime: value, f"{regime} lo": low, f"{regime} hi": high})
            if len(pools) > 1:
                doubled.append(f"{regime}: {sum(map(len, pools))} records of {len(pools)} protocols, newest shown")
        row["Note"] = "; ".join(doubled)
        rows.append(row)
    table = pd.DataFrame(rows)
    key = rank_by if rank_by in regimes else None
    score = table[key] if key else table[regimes].mean(axis=1, skipna=True)
    table = table.assign(_baseline=table["Explainer"].isin(baselines), _score=-score.fillna(-np.inf))
    table = table.sort_values(["_baseline", "_score", "Explainer"], kind="stable").drop(columns=["_baseline", "_score"])
    if not table["Note"].astype(bool).any():
        table = table.drop(columns="Note")
    table = table.reset_index(drop=True)
    table.attrs["order"] = (f"ranked by MA in {key}" if key else "ranked by the mean MA over the regimes") + (
        ", best first; baselines below the real explainers")
    return table
