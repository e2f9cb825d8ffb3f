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
from gecobench.formatting import format_number
from gecobench.gender import GAP_KEYS, gender_value
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
    return CellChoices(configs, base_models, regimes, seeds)


def cell_records(records: Sequence[Mapping[str, Any]], config: str | None, base_model: str | None,
                 regime: str | None, seed: str | None = None) -> list[Mapping[str, Any]]:
    """The records of one (config, base model, regime[, seed]) cell."""
    return [r for r in records if r["dataset"]["config"] == config and r["model"]["base_model"] == base_model
            and r["model"]["regime"] == regime and (not seed or str(r["model"].get("seed")) == seed)]


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
    from gecobench.pooling import record_comparison_label

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
    if explainer.get("source") == "self-reported":
        return f"{name} [self-reported]"
    return name


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


def model_ranking(records: Sequence[Mapping[str, Any]], record_link: Callable[[Mapping[str, Any]], str] | None = None,
                  cards: Callable[[Mapping[str, Any]], tuple[str, str]] | None = None) -> pd.DataFrame:
    """One numeric row per record of a cell, best MA first, with provenance.

    ``record_link(record) -> str`` names where the record file lives (default: its id); ``cards(record) ->
    (model card, dataset card)`` where the cards are ("" when unknown; default: both columns empty).
    """
    columns = ["Rank", "Explainer", "MA", "MA lo", "MA hi", "vs next", GAP, f"{GAP} lo", f"{GAP} hi",
               *[f"{label}{end}" for label in NONBINARY_GAPS.values() for end in ("", " lo", " hi")], LARGEST_GAP,
               *[f"{METRIC_LABELS[k]}{end}" for k in RANK_COLUMNS_METRICS for end in ("", " lo", " hi")],
               "Version", "Parameters", "Seed",
               "Sentences scored", "Model accuracy", "Model", "Model card", "Dataset", "Dataset card", "Protocol",
               "Record"]
    if not records:
        return pd.DataFrame(columns=columns)
    ordered = sorted(records, key=lambda r: (-np.nan_to_num(_value(r, "mass_accuracy"), nan=-np.inf),
                                             r["explainer"]["name"]))
    rows = []
    for position, record in enumerate(ordered):
        gap, gap_low, gap_high, _ = signed_gender_gap(record)
        following = ordered[position + 1] if position + 1 < len(ordered) else None
        separated = separated_from_next(record, following) if following is not None else True
        row = {
            "Rank": position + 1, "Explainer": _label(record),
            "MA": _value(record, "mass_accuracy"), "MA lo": _value(record, "mass_accuracy", "ci_low"),
            "MA hi": _value(record, "mass_accuracy", "ci_high"),
            "vs next": NOT_SEPARATED_MARK if separated is False else "",
            GAP: gap, f"{GAP} lo": gap_low, f"{GAP} hi": gap_high,
        }
        gaps = [gap]
        for key, label in NONBINARY_GAPS.items():  # from by_gender, or the older mass_accuracy_gap_* blocks
            block = gender_value(record, "mass_accuracy", "gaps", key) or {}
            values = [block.get(f) for f in ("value", "ci_low", "ci_high")]
            values = [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan for v in values]
            row.update({label: values[0], f"{label} lo": values[1], f"{label} hi": values[2]})
            gaps.append(values[0])
        finite = [abs(g) for g in gaps if np.isfinite(g)]
        row[LARGEST_GAP] = max(finite) if finite else np.nan
        for key in RANK_COLUMNS_METRICS:  # every number with the interval its record carries
            label = METRIC_LABELS[key]
            row.update({label: _value(record, key), f"{label} lo": _value(record, key, "ci_low"),
                        f"{label} hi": _value(record, key, "ci_high")})
        model = record["model"]
        model_card, dataset_card = cards(record) if cards else ("", "")
        accuracy = model.get("accuracy_on_evaluated")
        row.update({
            "Version": str(record["explainer"]["version"]),
            "Parameters": json.dumps(record["explainer"].get("params") or {}, sort_keys=True),
            "Seed": str(model.get("seed")),
            "Sentences scored": int((record.get("counts") or {}).get("n_scored") or 0),
            "Model accuracy": float(accuracy) if isinstance(accuracy, (int, float)) else np.nan,
            "Model": _model_text(model),
            "Model card": model_card,
            "Dataset": _dataset_text(record.get("dataset") or {}),
            "Dataset card": dataset_card,
            "Protocol": _protocol_text(record.get("protocol") or {}),
            "Record": record_link(record) if record_link else str(record["record_id"]),
        })
        rows.append(row)
    table = pd.DataFrame(rows, columns=columns)
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
    candidates = ~ranking["Explainer"].str.endswith("[baseline]") if len(ranking) else []
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
    if ranking.empty:
        return ranking.drop(columns=bounds)
    shown = ranking.copy()
    for column in valued:
        shown.insert(shown.columns.get_loc(column) + 1, f"{column} 95% CI",
                     [_interval(lo, hi) for lo, hi in zip(ranking[f"{column} lo"], ranking[f"{column} hi"])])
    shown = shown.drop(columns=bounds)
    numeric = [c for c in shown.columns if shown[c].dtype.kind == "f"]
    shown[numeric] = shown[numeric].round(3)
    return shown


def pivot_by_regime(records: Sequence[Mapping[str, Any]], config: str | None, base_model: str | None,
                    seed: str | None = None) -> pd.DataFrame:
    """Explainer × regime MA for one config and base model (one seed). A cell with several records (two
    versions of an explainer) shows the newest one's value and is listed in the ``Note`` column."""
    chosen = [r for r in records if r["dataset"]["config"] == config and r["model"]["base_model"] == base_model
              and (not seed or str(r["model"].get("seed")) == seed)]
    if not chosen:
        return pd.DataFrame(columns=["Explainer"])
    regimes = _ordered({r["model"]["regime"] for r in chosen}, REGIME_ORDER)
    cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in chosen:
        cells.setdefault((_label(record), record["model"]["regime"]), []).append(record)
    explainers = sorted({name for name, _ in cells})
    rows = []
    for name in explainers:
        row: dict[str, Any] = {"Explainer": name}
        doubled = []
        for regime in regimes:
            found = sorted(cells.get((name, regime), []),
                           key=lambda r: str((r.get("provenance") or {}).get("created_at")))
            row[regime] = round(_value(found[-1], "mass_accuracy"), 3) if found else np.nan
            if len(found) > 1:
                doubled.append(f"{regime}: {len(found)} records, newest shown")
        row["Note"] = "; ".join(doubled)
        rows.append(row)
    table = pd.DataFrame(rows)
    if not table["Note"].astype(bool).any():
        table = table.drop(columns="Note")
    return table
