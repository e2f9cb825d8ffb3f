"""Result records: one JSON document per scored unit, with a versioned schema.

Two record types share the store:

* ``explainer_score`` — one explainer × model × GECO config × seed, scored on the test split;
* ``model_bias`` — one masked language model scored on the Spanish templates (BPI/BRI).

Every record carries ``schema_version``, a ``record_id`` derived from its identity (so a re-run of the same
unit is recognised), and a ``provenance`` block (package version, git commit, library versions, seed, time).
Records are validated on write and on read (:func:`validate_record`). The schema is documented in
``docs/reference/records.md``; bump :data:`SCHEMA_VERSION` on any change that alters the meaning of a field.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import threading
from typing import Any

import jsonschema

# 2.0: signed gender gaps with paired intervals, common random numbers for the RMA reference and the property
# copies, paired explainer comparisons, and an identity that covers every input of a number (1.x ids differ).
# 2.1: the optional ``by_gender`` block (every metric per gender group, signed gaps with paired intervals); named
# correctness filters (protocol.filter paper | per_model | none; 2.0 records say all_gender_variants_correct for
# per_model) and the optional ``filter`` block (sentence set scored, the paper's shared subset and the models that
# defined it). 2.0 records, which lack both blocks, stay valid.
# 2.2: the explainers a record's cross-explainer numbers (DMA, the paired comparisons) were computed against move
# from ``protocol.compared_explainers`` (part of the identity: a rerun beside other explainers wrote a duplicate of
# every record) to the optional ``agreement`` block, outside the identity; ``explainer.source`` ``user`` (an
# explainer loaded from a user's module) with ``explainer.source_sha256``, the fingerprint of its code, part of
# its identity. 2.1 and 2.0 records stay valid and keep their ids (their identity reads their protocol as stored).
# Also in 2.2: the optional ``flags`` block (model_independent, self_reported, data_not_model, matches_ground_truth;
# gecobench.flags) and the optional ``controls`` block (a code submission's MA on the hub's hidden control models,
# gecobench.controls). 2.0 and 2.1 records, which lack both, stay valid; gecobench.flags.flags_of derives their flags.
SCHEMA_VERSION = "2.2"
RECORD_TYPES = ("explainer_score", "model_bias")

_METRIC_VALUE = {
    "type": "object",
    "required": ["value"],
    "properties": {
        "value": {"type": ["number", "null"]},
        "ci_low": {"type": ["number", "null"]},
        "ci_high": {"type": ["number", "null"]},
        "median": {"type": ["number", "null"]},
        "n_scored": {"type": "integer", "minimum": 0},
        "n_undefined": {"type": "integer", "minimum": 0},
        "reason": {"type": "string", "description": "why value is null"},
        "direction": {"type": ["string", "null"]},
        "computed_with": {"type": "string"},
    },
}

_PROVENANCE = {
    "type": "object",
    "required": ["package_version", "git_commit", "created_at"],
    "properties": {
        "package_version": {"type": "string"},
        "git_commit": {"type": "string"},
        "created_at": {"type": "string"},
        "libraries": {"type": "object"},
        "seed": {"type": ["integer", "null"]},
    },
}

_SHA256 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
#: the sentences a record scored, by filter (gecobench.evaluation.filters); the shared subset's fingerprint is also
#: in ``protocol.filter_subset_sha256`` (part of the identity), its defining models only here
_FILTER_BLOCK: dict[str, Any] = {
    "type": "object",
    "required": ["name", "n_source_sentences", "scored_fingerprint"],
    "additionalProperties": False,
    "properties": {
        "name": {"enum": ["paper", "per_model", "none"]},
        "n_source_sentences": {"type": "integer", "minimum": 0,
                               "description": "source sentences scored (all their gender variants)"},
        "n_sentences": {"type": "integer", "minimum": 0},
        "scored_fingerprint": {**_SHA256, "description": "SHA-256 of the config and the sorted source-sentence "
                                                         "ids scored"},
        "subset_fingerprint": {**_SHA256, "description": "paper: the shared subset's fingerprint"},
        "subset_n_source_sentences": {"type": "integer", "minimum": 0},
        "defined_by": {"type": "array", "items": {"type": "string"},
                       "description": "checkpoint SHA-256 of the models whose predictions defined the set"},
        "zero_shot_counted": {"type": "boolean"},
        "subset_source": {"enum": ["computed", "file"]},
    },
}

EXPLAINER_SCORE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "GECOBench explainer_score record",
    "type": "object",
    "required": [
        "schema_version", "record_type", "record_id", "explainer", "model", "dataset",
        "protocol", "metrics", "counts", "runtime", "provenance",
    ],
    "properties": {
        "schema_version": {"type": "string"},
        "record_type": {"const": "explainer_score"},
        "record_id": {"type": "string", "pattern": "^[0-9a-f]{16,64}$"},
        "explainer": {
            "type": "object",
            "required": ["name", "version", "params"],
            "properties": {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "params": {"type": "object"},
                "diagnostics": {
                    "type": "object",
                    "description": "per-sentence explainer diagnostics summarised over the scored sentences, "
                                   "e.g. integrated_gradients: n_steps, completeness_error",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["n", "mean", "median", "min", "max"],
                        "properties": {"n": {"type": "integer", "minimum": 0}, "mean": {"type": "number"},
                                       "median": {"type": "number"}, "min": {"type": "number"},
                                       "max": {"type": "number"}},
                    },
                },
                "model_independent": {"type": "boolean"},
                "is_baseline": {"type": "boolean"},
                "source": {"enum": ["builtin", "user", "submission", "self-reported", "plugin"],
                           "description": "builtin: defined in gecobench; user: a user's module or class "
                                          "(plugin: the same, records before 2.2); submission / self-reported: "
                                          "the queue"},
                "source_sha256": {"type": ["string", "null"],
                                  "description": "a user explainer's fingerprint of its source, version and "
                                                 "parameters (gecobench.evaluation.origin.source_fingerprint)"},
                "submission_id": {"type": ["string", "null"]},
                "submission_sha256": {"type": ["string", "null"]},
            },
        },
        "model": {
            "type": "object",
            "required": ["regime", "base_model", "seed"],
            "properties": {
                "regime": {"type": "string"},
                "base_model": {"type": "string"},
                "base_revision": {"type": ["string", "null"]},
                "seed": {"type": ["integer", "null"]},
                "checkpoint_sha256": {"type": ["string", "null"]},
                "training_fingerprint": {"type": ["string", "null"],
                                         "description": "hash of the checkpoint's training inputs (schedule, "
                                                        "learning rates, train config…)"},
                "zero_shot_method": {"type": ["string", "null"]},
                "name": {"type": "string"},
                "train_config": {"type": ["string", "null"]},
                "num_labels": {"type": "integer", "minimum": 1},
                "accuracy_on_scored": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                "accuracy_on_evaluated": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                "zero_shot_reference": {"type": ["string", "null"]},
                "zero_shot_reference_sha256": {"type": ["string", "null"]},
                "zero_shot_reference_source": {
                    "type": ["string", "null"],
                    "description": "where the RMA reference attributions came from: computed (by this run or "
                                   "from its checkpoints), published:<bundle SHA-256> (a published zero-shot "
                                   "reference bundle), the submission's own, or mixed: …"},
            },
        },
        "dataset": {
            "type": "object",
            "required": ["name", "config", "split", "fingerprint"],
            "properties": {
                "name": {"type": "string"},
                "config": {"type": "string"},
                "split": {"type": "string"},
                "fingerprint": {"type": "string"},
            },
        },
        "protocol": {"type": "object"},
        "filter": _FILTER_BLOCK,
        "metrics": {"type": "object", "required": ["mass_accuracy"], "additionalProperties": _METRIC_VALUE},
        "groups": {
            "type": "object",
            "description": "Mass Accuracy per gender group (class label of the sentence)",
            "propertyNames": {"enum": ["female", "male", "non-binary"]},
            "additionalProperties": {
                "type": "object",
                "required": ["mass_accuracy", "n_scored"],
                "properties": {
                    "mass_accuracy": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                    "median": {"type": ["number", "null"]},
                    "ci_low": {"type": ["number", "null"]},
                    "ci_high": {"type": ["number", "null"]},
                    "n_scored": {"type": "integer", "minimum": 0},
                    "n_undefined": {"type": "integer", "minimum": 0},
                    "n_sentences": {"type": "integer", "minimum": 0},
                },
            },
        },
        "by_gender": {
            "type": "object",
            "description": "every metric of the record per gender group, and the signed gaps between the groups "
                           "with paired bootstrap intervals over source sentences (gecobench.evaluation.by_gender)",
            "required": ["metrics"],
            "properties": {
                "interval": {"type": "string"},
                "gap": {"type": "string"},
                "metrics": {"type": "object"},  # one entry per metric: _gender_metric_schema, set below
            },
        },
        "agreement": {
            "type": "object",
            "description": "the explainers this record's cross-explainer numbers (the fields in covers) were "
                           "computed against; outside the identity (schema 2.2)",
            "required": ["compared_explainers", "compared_set_sha256"],
            "properties": {
                "compared_explainers": {"type": "array", "items": {"type": "string"}},
                "compared_set_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                "covers": {"type": "array", "items": {"type": "string"}},
            },
        },
        "comparisons": {
            "type": "object",
            "description": "other explainer of the run -> paired bootstrap interval of MA(this) − MA(other) "
                           "on the same sentences",
            "additionalProperties": {
                "type": "object",
                "required": ["value", "ci_low", "ci_high"],
                "properties": {
                    "value": {"type": ["number", "null"]},
                    "ci_low": {"type": ["number", "null"]},
                    "ci_high": {"type": ["number", "null"]},
                    "verdict": {"enum": ["higher", "lower", "tie", None]},
                    "n_scored": {"type": "integer", "minimum": 0},
                    "n_source_sentences": {"type": "integer", "minimum": 0},
                },
            },
        },
        "counts": {
            "type": "object",
            "required": ["n_sentences", "n_scored"],
            "properties": {
                "n_sentences": {"type": "integer", "minimum": 0},
                "n_scored": {"type": "integer", "minimum": 0},
                "n_undefined": {"type": "integer", "minimum": 0},
                "n_filtered_out": {"type": "integer", "minimum": 0},
                "n_malformed_groups": {"type": "integer", "minimum": 0},
            },
        },
        "runtime": {
            "type": "object",
            "properties": {
                "seconds_per_sentence": {"type": ["number", "null"], "minimum": 0},
                "total_seconds": {"type": ["number", "null"], "minimum": 0},
                "n_processes": {"type": "integer", "minimum": 1},
            },
        },
        "provenance": _PROVENANCE,
        "flags": {
            "type": "object",
            "description": "the marks every view shows (gecobench.flags): model-independent, self-reported, "
                           "explains the data not the model, matches the ground truth",
            "required": ["model_independent", "self_reported", "data_not_model", "matches_ground_truth"],
            "properties": {
                "model_independent": {"type": "boolean"},
                "self_reported": {"type": "boolean"},
                "data_not_model": {"type": "boolean"},
                "matches_ground_truth": {"type": "boolean"},
                "controls_scored": {"type": "boolean"},
                "ground_truth_match": {
                    "type": "object",
                    "properties": {"share": {"type": "number", "minimum": 0, "maximum": 1},
                                   "n_scored": {"type": "integer", "minimum": 0},
                                   "tolerance": {"type": "number", "minimum": 0},
                                   "flagged": {"type": "boolean"}},
                },
            },
        },
        "controls": {
            "type": "object",
            "description": "MA on the hub's hidden control models (gecobench.controls), whose correct explanation "
                           "is a secret set of non-gendered words",
            "required": ["mass_accuracy", "chance_mass_accuracy", "n_controls"],
            "properties": {
                "mass_accuracy": _METRIC_VALUE,
                "chance_mass_accuracy": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                "n_controls": {"type": "integer", "minimum": 0},
                "what": {"type": "string"},
            },
        },
    },
}

MODEL_BIAS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "GECOBench model_bias record (Spanish masked-LM templates)",
    "type": "object",
    "required": [
        "schema_version", "record_type", "record_id", "masked_lm", "templates", "protocol",
        "schemes", "provenance",
    ],
    "properties": {
        "schema_version": {"type": "string"},
        "record_type": {"const": "model_bias"},
        "record_id": {"type": "string", "pattern": "^[0-9a-f]{16,64}$"},
        "masked_lm": {
            "type": "object",
            "required": ["model_id"],
            "properties": {
                "model_id": {"type": "string"},
                "revision": {"type": ["string", "null"]},
                "source": {"enum": ["live", "recorded (published predictions)"]},
                "checkpoint_sha256": {"type": ["string", "null"]},
            },
        },
        "templates": {"type": "object"},
        "counts": {
            "type": "object",
            "description": "predictions, adjectives and sentences that went into the scores",
            "properties": {
                "n_predictions": {"type": "integer", "minimum": 0},
                "n_adjectives": {"type": "integer", "minimum": 0},
                "n_sentences": {"type": "integer", "minimum": 0},
            },
        },
        "recorded_from": {
            "type": "object",
            "description": "for recorded (published) predictions: where the prediction file comes from",
            "required": ["repository", "commit", "file"],
            "properties": {
                "repository": {"type": "string"},
                "commit": {"type": "string"},
                "file": {"type": "string"},
                "sha256": {"type": "string"},
            },
        },
        "protocol": {
            "type": "object",
            "properties": {
                "bootstrap": {
                    "type": "object",
                    "description": "settings of the bootstrap over templates behind the schemes' intervals",
                    "required": ["method", "resampling_unit", "n_resamples", "seed", "confidence"],
                    "properties": {
                        "method": {"const": "percentile bootstrap"},
                        "resampling_unit": {"const": "template"},
                        "n_resamples": {"type": "integer", "minimum": 1},
                        "seed": {"type": "integer", "minimum": 0},
                        "confidence": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    },
                },
            },
        },
        "schemes": {
            "type": "object",
            "description": "lexicon scheme name -> {bpi, bri, bias: {bpi, bri}} as returned by bias_indices, and "
                           "optionally overall {bpi, bri} and uncertainty (the bootstrap over templates)",
            "additionalProperties": {
                "type": "object",
                "required": ["bpi", "bri", "bias"],
            },
        },
        "provenance": _PROVENANCE,
    },
}

# |ln(a / b)| for two doubles in (0, 1] is at most ln(1 / 5e-324) ≈ 744.4: a larger log-ratio is not a number any
# computation of the metric can give.
_LOG_RATIO_LIMIT = 745.0
# Metrics records carry that the registry does not declare, with the range their definition gives.
_DERIVED_RANGES: dict[str, tuple[float | None, float | None]] = {
    "mass_accuracy_gap": (-1.0, 1.0),  # a difference of two Mass Accuracies
    "relative_mass_accuracy": (-_LOG_RATIO_LIMIT, _LOG_RATIO_LIMIT),  # median log ratio of two Mass Accuracies
}


def _numeric_bound(bound: Any) -> float | None:
    """A declared range bound as a number; None for an open end (or a bound such as "1 / number of groups")."""
    return bound if isinstance(bound, (int, float)) and not isinstance(bound, bool) else None


def metric_ranges() -> dict[str, tuple[float | None, float | None]]:
    """``{metric: (low, high)}`` for every metric with a numeric bound: the registry
    (``gecobench.metrics.METRICS_META``) plus the record's derived metrics."""
    from gecobench.metrics import METRICS_META

    ranges = {}
    for name, meta in METRICS_META.items():
        low, high = (list(meta.get("range") or []) + [None, None])[:2]
        ranges[name] = (_numeric_bound(low), _numeric_bound(high))
    ranges.update(_DERIVED_RANGES)
    return {name: bounds for name, bounds in ranges.items() if bounds != (None, None)}


def _schema_bound(bound: float) -> float | int:
    """A bound as the schema should hold it: jsonschema-rs compares with an integer bound about five times faster
    than with the same float bound (8 instead of 45 µs per record), so integral bounds are written as ints."""
    return int(bound) if float(bound).is_integer() else bound


def _bounded(schema: dict[str, Any], fields: tuple[str, ...], low: float | None, high: float | None) -> dict[str, Any]:
    """A copy of an object schema whose number ``fields`` must lie in [low, high] (null stays allowed)."""
    bounded = copy.deepcopy(schema)
    for field in fields:
        if low is not None:
            bounded["properties"][field]["minimum"] = _schema_bound(low)
        if high is not None:
            bounded["properties"][field]["maximum"] = _schema_bound(high)
    return bounded


def _add_value_ranges() -> None:
    """Values outside their metric's range are schema errors (checked by jsonschema-rs at Rust speed on every
    read): every number of a metric block, the per-group Mass Accuracy blocks, and BPI/BRI (numbers or null in
    [0, 100]) and their bias (in [-100, 100]) of model_bias records."""
    block_numbers = ("value", "ci_low", "ci_high", "median")
    EXPLAINER_SCORE_SCHEMA["properties"]["metrics"]["properties"] = {
        name: _bounded(_METRIC_VALUE, block_numbers, low, high) for name, (low, high) in metric_ranges().items()
    }
    group = EXPLAINER_SCORE_SCHEMA["properties"]["groups"]["additionalProperties"]
    group.update(_bounded(group, ("median", "ci_low", "ci_high"), 0, 1))
    gender_metrics = EXPLAINER_SCORE_SCHEMA["properties"]["by_gender"]["properties"]["metrics"]
    gender_metrics["properties"] = {name: _gender_metric_schema(low, high) for name, (low, high) in metric_ranges().items()}
    gender_metrics["additionalProperties"] = _gender_metric_schema(None, None)

    def table(low: int, high: int) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": {"type": ["number", "null"], "minimum": low, "maximum": high}}

    share = {"type": "object", "additionalProperties": table(0, 100)}  # {category: {group: share}}
    bias = {"type": "object", "additionalProperties": table(-100, 100)}  # {index: {category: difference}}
    from gecobench.metrics.bias_indices import OVERALL_BIAS_MAX

    overall_max = int(_schema_bound(OVERALL_BIAS_MAX))
    MODEL_BIAS_SCHEMA["properties"]["schemes"]["additionalProperties"]["properties"] = {
        "bpi": share, "bri": share, "bias": bias,
        # the sum of |bias| over the lexicon's categories: each group's shares sum to 100, so at most 200
        "overall": table(0, overall_max),
        "uncertainty": _template_uncertainty_schema(overall_max),
    }


def _gender_metric_schema(low: float | None, high: float | None) -> dict[str, Any]:
    """One metric's entry of ``by_gender``: its value per group within the metric's range ``[low, high]``, and
    the signed gaps within ``[low − high, high − low]`` (a difference of two values in range)."""
    from gecobench.gender import GAP_KEYS, GENDER_GROUPS

    number = {"type": ["number", "null"]}
    count = {"type": "integer", "minimum": 0}
    value = {"type": "object", "required": ["value", "ci_low", "ci_high"],
             "properties": {"value": number, "ci_low": number, "ci_high": number, "median": number,
                            "n_scored": count, "n_undefined": count, "reason": {"type": "string"}}}
    gap = copy.deepcopy(value)
    gap["properties"]["n_source_sentences"] = count
    span = None if low is None or high is None else high - low
    return {
        "type": "object",
        "required": ["statistic", "sentences", "groups", "gaps"],
        "properties": {
            "statistic": {"enum": ["mean", "median"]},
            "direction": {"type": ["string", "null"]},
            "sentences": {"type": "object", "required": ["subsample"], "properties": {
                "subsample": {"enum": [None, "properties", "faithfulness"]},
                "max_sentence_groups": {"type": ["integer", "null"], "minimum": 1},
                "n_sentences": count, "n_source_sentences": count}},
            "groups": {"type": "object", "propertyNames": {"enum": list(GENDER_GROUPS)},
                       "additionalProperties": _bounded(value, ("value", "ci_low", "ci_high", "median"), low, high)},
            # a gap's groups and sign are its key: gecobench.gender.gap_key(minuend, subtrahend)
            "gaps": {"type": "object", "propertyNames": {"enum": list(GAP_KEYS)},
                     "additionalProperties": _bounded(gap, ("value", "ci_low", "ci_high"),
                                                      None if span is None else -span, span)},
        },
    }


def _template_uncertainty_schema(overall_max: int) -> dict[str, Any]:
    """A scheme's ``uncertainty`` block (``gecobench.metrics.bias_indices_bootstrap.template_bootstrap``): intervals
    shaped like the values they qualify, bounded like them, and each template's own overall bias."""

    def interval(low: int, high: int) -> dict[str, Any]:
        bound = {"type": ["number", "null"], "minimum": low, "maximum": high}
        return {"type": "object", "required": ["ci_low", "ci_high"], "additionalProperties": False,
                "properties": {"ci_low": bound, "ci_high": bound, "n_undefined": {"type": "integer", "minimum": 0}}}

    def by_index(inner: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "required": ["bpi", "bri"], "additionalProperties": False,
                "properties": {"bpi": inner, "bri": inner}}

    share_intervals = {"type": "object", "additionalProperties": {"type": "object",
                                                                  "additionalProperties": interval(0, 100)}}
    settings = MODEL_BIAS_SCHEMA["properties"]["protocol"]["properties"]["bootstrap"]
    return {
        "type": "object",
        "required": [*settings["required"], "n_templates", "bpi", "bri", "bias", "overall", "per_template"],
        "properties": {
            **settings["properties"],
            "n_templates": {"type": "integer", "minimum": 2},
            "bpi": share_intervals,
            "bri": share_intervals,
            "bias": by_index({"type": "object", "additionalProperties": interval(-100, 100)}),
            "overall": by_index(interval(0, overall_max)),
            "per_template": {
                "type": "object",
                "required": ["template_ids", "overall"],
                "properties": {
                    "template_ids": {"type": "array", "items": {"type": ["integer", "string"]}},
                    "overall": by_index({"type": "array",
                                         "items": {"type": "number", "minimum": 0, "maximum": overall_max}}),
                    "bias": by_index({"type": "object", "additionalProperties": {
                        "type": "array", "items": {"type": ["number", "null"], "minimum": -100, "maximum": 100}}}),
                },
            },
        },
    }


_add_value_ranges()
SCHEMAS = {"explainer_score": EXPLAINER_SCORE_SCHEMA, "model_bias": MODEL_BIAS_SCHEMA}


class RecordValidationError(ValueError):
    """A record does not follow its schema; the message names the record and the offending field."""


def _non_finite_paths(value: Any, path: str = "") -> list[str]:
    if isinstance(value, float) and not math.isfinite(value):
        return [path or "<root>"]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite_paths(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _non_finite_paths(v, f"{path}[{i}]")]
    return []


@functools.cache
def _fast_check_for(record_type: str) -> Any:
    """The schema compiled by ``jsonschema-rs`` (Rust): ~5 µs per valid record, ten times fastjsonschema and
    a thousand times ``jsonschema``, which is what lets the Space read 10,000 records at its first start.
    It only answers valid or not; errors are explained by ``jsonschema`` (:func:`_validator_for`)."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(SCHEMAS[record_type])


@functools.cache
def _validator_for(record_type: str) -> Any:
    """A compiled validator per record type: ``jsonschema.validate`` re-checks the schema on every call, which
    made reading a 10,000-record store take minutes."""
    schema = SCHEMAS[record_type]
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _reject_constant(name: str) -> Any:
    raise RecordValidationError(f"non-finite number {name} in a record (use null for undefined)")


# A record holds aggregates only (a few KB); anything near this size is not a record and is not parsed.
MAX_RECORD_BYTES = 1024 * 1024
# The deepest nesting a record needs is about 6 (schemes/…/bias/bpi/category); 32 leaves room and keeps every
# reader of a record (jsonschema, json.dumps, the Space) far from Python's recursion limit.
MAX_RECORD_DEPTH = 32


def nesting_depth(value: Any, limit: int) -> int:
    """Depth of nested lists/dicts in ``value`` (a scalar is 0), without recursion; stops counting past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth) for child in children if isinstance(child, (dict, list)))
    return deepest


# orjson serialises containers nested up to this many levels and refuses deeper ones ("Recursion limit reached").
_ORJSON_MAX_DEPTH = 254


_DEPTH_PROBES = threading.local()


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists/dicts more than ``limit`` levels deep, at C speed.

    Walking a record in Python (:func:`nesting_depth`) costs as much as parsing and validating it, which would
    double the cold load of a large store. ``orjson.dumps`` walks it in C and refuses more than
    ``_ORJSON_MAX_DEPTH`` levels: placed at the bottom of ``_ORJSON_MAX_DEPTH - limit`` nested one-element
    lists (built once per thread and limit), the value is refused exactly when its own depth exceeds ``limit``.
    """
    import orjson

    if not 0 <= limit < _ORJSON_MAX_DEPTH:
        return nesting_depth(value, limit) > limit
    probes = _DEPTH_PROBES.__dict__.setdefault("by_limit", {})
    if limit not in probes:
        innermost: list[Any] = [None]
        outermost = innermost
        for _ in range(_ORJSON_MAX_DEPTH - limit - 1):
            outermost = [outermost]
        probes[limit] = (outermost, innermost)
    outermost, innermost = probes[limit]
    innermost[0] = value
    try:
        orjson.dumps(outermost)
    except orjson.JSONEncodeError as err:
        if "recursion" in str(err).lower():
            return True
        return nesting_depth(value, limit) > limit  # not a depth problem: answer the slow way
    finally:
        innermost[0] = None
    return False


def load_stored_record(text: str | bytes) -> dict[str, Any]:
    """Parse a stored record within size and depth limits, validate it, and check its id against its identity.

    The read path of the results store: whatever a file holds, the outcome is a record or a
    :class:`RecordValidationError` (never ``RecursionError``/``MemoryError``), so one file cannot stop a reader.
    """
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > MAX_RECORD_BYTES:
        raise RecordValidationError(f"{size} bytes is more than a record may hold ({MAX_RECORD_BYTES} bytes)")
    record = load_record_json(text)
    check_record_id(record)
    return record


def validate_stored_record(record: Any) -> dict[str, Any]:
    """What the results store accepts on write: a valid record (schema, finite numbers, values within their
    metric's range) within the size and depth limits, whose id is the hash of its identity."""
    if nested_deeper_than(record, MAX_RECORD_DEPTH):
        raise RecordValidationError(
            f"record {record.get('record_id', '?') if isinstance(record, dict) else '?'}: nested more than "
            f"{MAX_RECORD_DEPTH} levels deep"
        )
    validate_record(record)
    size = len(json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    if size > MAX_RECORD_BYTES:
        raise RecordValidationError(
            f"record {record.get('record_id', '?')}: {size} bytes is more than a record may hold ({MAX_RECORD_BYTES})"
        )
    check_record_id(record)
    return record


def load_record_json(text: str | bytes) -> dict[str, Any]:
    """Parse and validate one stored record (the read path of large stores).

    ``orjson`` parses about three times faster than ``json`` and refuses ``NaN``, ``Infinity`` and numbers
    that overflow to infinity, which spares the validation its walk over every number. On a parse error the
    standard parser runs once more, only to name the problem."""
    import orjson

    try:
        record = orjson.loads(text)
    except orjson.JSONDecodeError as fast_error:
        if "depth limit" in str(fast_error) or "recursion" in str(fast_error).lower():
            # The standard parser would recurse as deep and end in RecursionError: answer here.
            raise RecordValidationError(f"not valid JSON: nested too deeply ({fast_error})") from None
        try:
            json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as err:
            raise RecordValidationError(f"not valid JSON: {err}") from None
        except RecursionError:
            raise RecordValidationError("not valid JSON: nested too deeply") from None
        raise RecordValidationError(f"non-finite number in a record ({fast_error}); use null for undefined") from None
    if nested_deeper_than(record, MAX_RECORD_DEPTH):
        raise RecordValidationError(f"nested more than {MAX_RECORD_DEPTH} levels deep; a record needs far fewer")
    return validate_record(record, check_finite=False)


def validate_record(record: Any, check_finite: bool = True) -> dict[str, Any]:
    """Validate a record against the schema of its ``record_type``; return it unchanged or raise.

    ``check_finite=False`` skips the search for NaN/infinite numbers, for records parsed by
    :func:`load_record_json`, which cannot contain them."""
    if not isinstance(record, dict):
        raise RecordValidationError(f"a record must be a JSON object, got {type(record).__name__}")
    record_type = record.get("record_type")
    if record_type not in SCHEMAS:
        raise RecordValidationError(
            f"record {record.get('record_id', '?')}: unknown record_type {record_type!r}; expected one of {RECORD_TYPES}"
        )
    major = str(record.get("schema_version", "")).split(".")[0]
    if major != SCHEMA_VERSION.split(".")[0]:
        raise RecordValidationError(
            f"record {record.get('record_id', '?')}: schema_version {record.get('schema_version')!r} is not "
            f"compatible with this package's {SCHEMA_VERSION}"
        )
    # Before the schema, whose range checks would otherwise report inf as merely "greater than the maximum".
    bad = []
    if check_finite:
        try:
            json.dumps(record, allow_nan=False)  # C speed on the common, finite path
        except ValueError:
            bad = _non_finite_paths(record)
        except (TypeError, RecursionError):
            pass  # not JSON at all (a set, a numpy scalar, too deep): the schema check below names it
    if bad:
        raise RecordValidationError(
            f"record {record.get('record_id', '?')}: non-finite numbers at {', '.join(bad)} (use null for undefined)"
        )
    try:
        valid = _fast_check_for(record_type).is_valid(record)
    except (ValueError, TypeError):  # a value JSON cannot hold (set, numpy int…): let jsonschema judge
        valid = False
    if not valid:
        error = jsonschema.exceptions.best_match(_validator_for(record_type).iter_errors(record))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "<root>"
            raise RecordValidationError(f"record {record.get('record_id', '?')}: field {where}: {error.message}") from None
        try:
            json.dumps(record)
        except (TypeError, ValueError) as err:
            raise RecordValidationError(f"record {record.get('record_id', '?')}: not JSON-serialisable: {err}") from None
    if record_type == "model_bias":
        _check_template_uncertainty(record)
    return record


def _interval_problems(block: Any, path: str) -> list[str]:
    """Intervals under ``block`` (any nesting of dicts ending in {ci_low, ci_high}) whose low end is above the high."""
    if not isinstance(block, dict):
        return []
    if "ci_low" in block and "ci_high" in block:
        low, high = block["ci_low"], block["ci_high"]
        if low is not None and high is not None and low > high:
            return [f"{path}: ci_low {low} > ci_high {high}"]
        return []
    return [p for key, value in block.items() for p in _interval_problems(value, f"{path}/{key}")]


def _check_template_uncertainty(record: dict[str, Any]) -> None:
    """What the schema cannot say about the intervals over templates: each interval is ordered, there is one
    per-template value per template, and the settings in a scheme match ``protocol.bootstrap`` (which is part of
    the record's identity, so a record cannot carry intervals from other settings than its id says)."""
    settings = (record.get("protocol") or {}).get("bootstrap")
    problems: list[str] = []
    for scheme, block in record["schemes"].items():
        uncertainty = block.get("uncertainty")
        if uncertainty is None:
            continue
        where = f"schemes/{scheme}/uncertainty"
        if settings is None:
            problems.append(f"{where}: intervals without protocol.bootstrap (their settings belong in the identity)")
        else:
            differing = sorted(key for key in settings if uncertainty.get(key) != settings[key])
            if differing:
                problems.append(f"{where}: {', '.join(differing)} not as in protocol.bootstrap")
        per_template = uncertainty["per_template"]
        n_templates = uncertainty["n_templates"]
        lengths = {"template_ids": len(per_template["template_ids"]),
                   **{f"overall/{index}": len(values) for index, values in per_template["overall"].items()},
                   **{f"bias/{index}/{category}": len(values)
                      for index, by_category in (per_template.get("bias") or {}).items()
                      for category, values in by_category.items()}}
        for name, length in lengths.items():
            if length != n_templates:
                problems.append(f"{where}/per_template/{name}: {length} values for n_templates {n_templates}")
        problems.extend(_interval_problems(uncertainty, where))
    if problems:
        raise RecordValidationError(f"record {record.get('record_id', '?')}: field {problems[0]}"
                                    + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))


def record_id_for(identity: dict[str, Any]) -> str:
    """A stable 32-hex-digit id from the fields that identify a scored unit."""
    canonical = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def explainer_score_identity(record: dict[str, Any]) -> dict[str, Any]:
    """Everything that changes an explainer_score record's numbers; its hash is the record id.

    * the explainer: name, version and parameters;
    * the checkpoint: regime, base model and its revision, training seed, training-schedule fingerprint
      (``model.training_fingerprint``) and the checkpoint's content hash;
    * the data: GECO config, split and data fingerprint;
    * the protocol block as a whole: run seed, filter, sentences scored (``max_sentence_groups``), properties
      on/off and their parameters, bootstrap, the RMA reference checkpoint and the random-stream rule (records
      before schema 2.2 also hold the set of compared explainers there, ``protocol.compared_explainers``; from
      2.2 it is in the ``agreement`` block, outside the identity, so an explainer's record does not depend on
      the explainers it ran beside);
    * for a submission (``explainer.source`` ``submission`` or ``self-reported``, issue #16): its origin — source,
      submission id and the SHA-256 of the submitted file — so a submission named like a built-in cannot take
      over the built-in's record, and two submitters with one name and version do not collapse into one;
    * for a user's explainer (``explainer.source`` ``user``): the fingerprint of its code, version and parameters
      (``explainer.source_sha256``), so an edited explainer with an unchanged version gets a new record.

    Two records with equal identities were computed from the same inputs; anything else gets a new id.
    """
    explainer, model, dataset = record["explainer"], record["model"], record["dataset"]
    identity = {
        "explainer": [explainer["name"], explainer["version"], explainer.get("params", {})],
        "model": [
            model["regime"], model["base_model"], model.get("base_revision"), model.get("seed"),
            model.get("training_fingerprint"), model.get("checkpoint_sha256"),
        ],
        "dataset": [dataset["config"], dataset["split"], dataset["fingerprint"]],
        "protocol": record.get("protocol", {}),
    }
    source = explainer.get("source") or "builtin"
    if source in ("submission", "self-reported"):
        identity["explainer_origin"] = [source, explainer.get("submission_id"), explainer.get("submission_sha256")]
    elif source == "user":
        identity["explainer_origin"] = [source, explainer.get("source_sha256")]
    return identity


def model_bias_identity(record: dict[str, Any]) -> dict[str, Any]:
    """The identity of a model_bias record: masked LM (id, revision, source, checkpoint), templates, protocol and,
    for recorded predictions, the hash of the prediction file."""
    masked_lm = record["masked_lm"]
    templates = record.get("templates") or {}
    return {
        "record_type": "model_bias",
        "model": [masked_lm["model_id"], masked_lm.get("revision"), masked_lm.get("source"),
                  masked_lm.get("checkpoint_sha256")],
        "templates": [templates.get("config"), templates.get("fingerprint")],
        "protocol": record.get("protocol", {}),
        "recorded_from": (record.get("recorded_from") or {}).get("sha256"),
    }


# Looked up when called (not copied), so a change to what an identity contains applies everywhere at once.
IDENTITY_FUNCTIONS = {"explainer_score": "explainer_score_identity", "model_bias": "model_bias_identity"}


def expected_record_id(record: dict[str, Any]) -> str:
    """The id a record must carry: :func:`record_id_for` of its type's identity function."""
    identity_function = globals()[IDENTITY_FUNCTIONS[record["record_type"]]]
    return record_id_for(identity_function(record))


def check_record_id(record: dict[str, Any]) -> None:
    """Refuse a record whose ``record_id`` is not the hash of its identity (a copy under a new id would be
    counted twice, and a hand-edited identity would pass as the original unit)."""
    try:
        expected = expected_record_id(record)
    except (KeyError, TypeError, AttributeError) as err:
        raise RecordValidationError(f"record {record.get('record_id', '?')}: cannot compute its identity ({err!r})") from None
    if record.get("record_id") != expected:
        raise RecordValidationError(
            f"record {record.get('record_id', '?')}: record_id is not the hash of the record's identity "
            f"(expected {expected}); ids come from gecobench.records.record_id_for"
        )


def identity_mismatch(record: dict[str, Any]) -> str | None:
    """Why a stored record's id is not the hash of its identity, or None when it is (see :func:`check_record_id`)."""
    try:
        check_record_id(record)
    except RecordValidationError as err:
        return str(err)
    return None
