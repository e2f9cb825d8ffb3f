"""Synthetic, schema-valid result records for tests, benchmarks and the docs' screenshots.

A maintainers' helper, not part of the package (the wheel ships only what the Space runs): the tests import it
through ``tests/conftest.py``, the benchmarks and ``screenshot_space.py`` from this folder.

The numbers are random draws, not results: they exist so that the Space can be exercised end to end
without running an evaluation. Every generated record passes :func:`gecobench.records.validate_record`.
"""

from __future__ import annotations

import random
from typing import Any

from gecobench.provenance import base_provenance
from gecobench.records import (
    SCHEMA_VERSION,
    explainer_score_identity,
    model_bias_identity,
    record_id_for,
    validate_record,
)

SAMPLE_EXPLAINERS: list[dict[str, Any]] = [
    {"name": "integrated_gradients", "source": "builtin"},
    {"name": "gradient_shap", "source": "builtin"},
    {"name": "saliency", "source": "builtin"},
    {"name": "deeplift", "source": "builtin"},
    {"name": "lime", "source": "builtin"},
    {"name": "kernel_shap", "source": "builtin"},
    {"name": "uniform_random", "source": "builtin", "is_baseline": True, "model_independent": True},
    {"name": "pattern_variant", "source": "builtin", "is_baseline": True, "model_independent": True},
    {"name": "my_attention_rollout", "source": "submission"},
    {"name": "vendor_method", "source": "self-reported"},
]
SAMPLE_REGIMES = ["from_scratch", "classifier_only", "last_layers", "full_finetune"]
SAMPLE_BASE_MODELS = ["bert-base-uncased", "all-MiniLM-L6-v2"]
SAMPLE_CONFIGS = ["binary_all", "binary_subject", "nonbinary_all", "nonbinary_subject"]  # geco_dataset.GECO_CONFIGS
CO12_AND_RANKING_KEYS = [
    "model_randomisation_check", "small_noise_check", "label_difference", "methods_agreement", "sparsity",
    "covariate_complexity", "relevance_rank_accuracy", "auprc",
]
SPANISH_CATEGORIES = ["BODY", "FEELING", "MIND", "BEHAVIOR", "SOCIAL"]
SAMPLE_MASKED_LMS = ["dccuchile/bert-base-spanish-wwm-cased", "PlanTL-GOB-ES/roberta-base-bne", "bert-base-multilingual-cased"]


def _metric(rng: random.Random, centre: float, spread: float = 0.04, n: int = 200) -> dict[str, Any]:
    value = min(1.0, max(0.0, rng.gauss(centre, 0.05)))
    return {
        "value": round(value, 4),
        "ci_low": round(max(0.0, value - spread), 4),
        "ci_high": round(min(1.0, value + spread), 4),
        "n_scored": n,
        "n_undefined": 0,
    }


def make_explainer_record(
    explainer: str = "integrated_gradients",
    regime: str = "full_finetune",
    config: str = "binary_all",
    base_model: str = "bert-base-uncased",
    seed: int = 0,
    *,
    source: str = "builtin",
    is_baseline: bool = False,
    model_independent: bool = False,
    version: str = "1.0.0",
    with_properties: bool = True,
    rng: random.Random | None = None,
    provenance: dict[str, Any] | None = None,
    validate: bool = True,
    with_gender: bool = False,
) -> dict[str, Any]:
    """One valid ``explainer_score`` record with random but plausible metric values (``validate=False`` skips the
    schema check, for benchmarks that generate thousands; the records are built the same way); ``with_gender``
    adds a ``by_gender`` block (every metric per group, every gap), as schema 2.1 records have."""
    rng = rng or random.Random(hash((explainer, regime, config, base_model, seed)) & 0xFFFF)
    groups = ["female", "male"] + (["non-binary"] if "nonbinary" in config.replace("_", "") else [])
    ma_centre = 0.2 if is_baseline else rng.uniform(0.3, 0.8)
    metrics = {
        "mass_accuracy": _metric(rng, ma_centre),
        "relative_mass_accuracy": _metric(rng, ma_centre * 1.2),
    }
    group_values = {group: _metric(rng, ma_centre) for group in groups}
    metrics["mass_accuracy_gap"] = {
        "value": round(group_values["male"]["value"] - group_values["female"]["value"], 4),
        "ci_low": None, "ci_high": None,
    }
    if with_properties:
        for key in CO12_AND_RANKING_KEYS:
            metrics[key] = _metric(rng, rng.uniform(0.2, 0.9))
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "record_type": "explainer_score",
        "record_id": "0" * 32,
        "explainer": {
            "name": explainer, "version": version, "params": {}, "model_independent": model_independent,
            "is_baseline": is_baseline, "source": source,
            "submission_id": f"sub-{explainer}" if source in ("submission", "self-reported") else None,
        },
        "model": {
            "regime": regime, "base_model": base_model, "base_revision": None, "seed": seed,
            "checkpoint_sha256": None, "zero_shot_method": None,
        },
        "dataset": {"name": "geco", "config": config, "split": "test", "fingerprint": "synthetic"},
        "protocol": {"synthetic": True},
        "metrics": metrics,
        "groups": {
            group: {"mass_accuracy": v["value"], "ci_low": v["ci_low"], "ci_high": v["ci_high"], "n_scored": v["n_scored"]}
            for group, v in group_values.items()
        },
        "counts": {"n_sentences": 200, "n_scored": 200, "n_undefined": 0},
        "runtime": {"seconds_per_sentence": round(rng.uniform(0.001, 0.5), 4), "total_seconds": None},
        "provenance": provenance or base_provenance(seed),
    }
    if with_gender:
        record["by_gender"] = _by_gender(rng, metrics, groups)
    record["record_id"] = record_id_for(explainer_score_identity(record))
    return validate_record(record) if validate else record


def _by_gender(rng: random.Random, metrics: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    """A plausible ``by_gender`` block: each metric's value per group near its overall value, the gaps between."""
    from gecobench.gender import GAP_INTERVAL, GAP_PAIRS, gap_key

    entries = {}
    for name, block in metrics.items():
        if name.startswith("mass_accuracy_gap") or block.get("value") is None:
            continue
        values = {g: _metric(rng, block["value"]) for g in groups}
        gaps = {}
        for a, b in GAP_PAIRS:
            if a in values and b in values:
                gap = round(values[a]["value"] - values[b]["value"], 4)
                gaps[gap_key(a, b)] = {"value": gap, "ci_low": round(gap - 0.02, 4), "ci_high": round(gap + 0.02, 4),
                                       "n_source_sentences": 100}
        entries[name] = {"statistic": "median" if name == "relative_mass_accuracy" else "mean", "direction": None,
                         "sentences": {"subsample": None, "max_sentence_groups": None, "n_sentences": 200,
                                       "n_source_sentences": 100},
                         "groups": {g: {k: v[k] for k in ("value", "ci_low", "ci_high", "n_scored")}
                                    for g, v in values.items()},
                         "gaps": gaps}
    return {"interval": GAP_INTERVAL, "metrics": entries}


def make_bias_record(model_id: str = "dccuchile/bert-base-spanish-wwm-cased", rng: random.Random | None = None,
                     schemes: tuple[str, ...] = ("supersenses_top10",),
                     provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """One valid ``model_bias`` record with BPI/BRI per category and group."""
    rng = rng or random.Random(model_id)
    scheme_blocks = {}
    for scheme in schemes:
        block: dict[str, Any] = {"bias": {}}
        for index in ("bpi", "bri"):
            per_category = {
                category: {"male": round(rng.uniform(0, 0.4), 4), "female": round(rng.uniform(0, 0.4), 4)}
                for category in SPANISH_CATEGORIES
            }
            block[index] = per_category
            block["bias"][index] = {c: round(v["male"] - v["female"], 4) for c, v in per_category.items()}
        scheme_blocks[scheme] = block
    record = {
        "schema_version": SCHEMA_VERSION,
        "record_type": "model_bias",
        "record_id": "0" * 32,  # replaced below by the hash of the identity
        "masked_lm": {"model_id": model_id, "revision": None, "source": "recorded (published predictions)"},
        "templates": {"name": "synthetic"},
        "protocol": {"k": 10, "schemes": sorted(schemes)},
        "schemes": scheme_blocks,
        "provenance": provenance or base_provenance(None),
    }
    record["record_id"] = record_id_for(model_bias_identity(record))
    return validate_record(record)


def sample_records(n_explainer_records: int | None = None, seed: int = 0, with_bias: bool = True,
                   validate: bool = True, with_gender: bool = False) -> list[dict[str, Any]]:
    """A mixed list of records: the full explainer × regime × config × base-model grid (or ``n`` of them,
    cycling through seeds) plus one ``model_bias`` record per sample masked LM."""
    rng = random.Random(seed)
    provenance = base_provenance(seed)  # computed once: 10,000 git calls would dominate a benchmark
    grid = [
        (spec, regime, config, base)
        # explainers vary fastest, so that a small n still shows every explainer (baselines included)
        for base in SAMPLE_BASE_MODELS for config in SAMPLE_CONFIGS
        for regime in SAMPLE_REGIMES for spec in SAMPLE_EXPLAINERS
    ]
    total = len(grid) if n_explainer_records is None else n_explainer_records
    records = []
    for i in range(total):
        spec, regime, config, base = grid[i % len(grid)]
        records.append(make_explainer_record(
            spec["name"], regime, config, base, seed=i // len(grid), source=spec["source"],
            is_baseline=spec.get("is_baseline", False), model_independent=spec.get("model_independent", False),
            rng=rng, provenance=provenance, validate=validate, with_gender=with_gender,
        ))
    if with_bias:
        records.extend(make_bias_record(model_id, rng=rng, provenance=provenance) for model_id in SAMPLE_MASKED_LMS)
    return records
