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

import functools
import hashlib
import json
import math
from typing import Any

import jsonschema

SCHEMA_VERSION = "1.0"
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
                "model_independent": {"type": "boolean"},
                "is_baseline": {"type": "boolean"},
                "source": {"enum": ["builtin", "submission", "self-reported", "plugin"]},
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
                "zero_shot_method": {"type": ["string", "null"]},
                "name": {"type": "string"},
                "train_config": {"type": ["string", "null"]},
                "num_labels": {"type": "integer", "minimum": 1},
                "accuracy_on_scored": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                "accuracy_on_evaluated": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                "zero_shot_reference": {"type": ["string", "null"]},
                "zero_shot_reference_sha256": {"type": ["string", "null"]},
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
        "protocol": {"type": "object"},
        "schemes": {
            "type": "object",
            "description": "lexicon scheme name -> {bpi, bri, bias: {bpi, bri}} as returned by bias_indices",
            "additionalProperties": {
                "type": "object",
                "required": ["bpi", "bri", "bias"],
            },
        },
        "provenance": _PROVENANCE,
    },
}

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


def load_record_json(text: str | bytes) -> dict[str, Any]:
    """Parse and validate one stored record (the read path of large stores).

    ``orjson`` parses about three times faster than ``json`` and refuses ``NaN``, ``Infinity`` and numbers
    that overflow to infinity, which spares the validation its walk over every number. On a parse error the
    standard parser runs once more, only to name the problem."""
    import orjson

    try:
        record = orjson.loads(text)
    except orjson.JSONDecodeError as fast_error:
        try:
            json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as err:
            raise RecordValidationError(f"not valid JSON: {err}") from None
        raise RecordValidationError(f"non-finite number in a record ({fast_error}); use null for undefined") from None
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
    bad = []
    if check_finite:
        try:
            json.dumps(record, allow_nan=False)  # C speed on the common, finite path
        except ValueError:
            bad = _non_finite_paths(record)
    if bad:
        raise RecordValidationError(
            f"record {record.get('record_id', '?')}: non-finite numbers at {', '.join(bad)} (use null for undefined)"
        )
    return record


def record_id_for(identity: dict[str, Any]) -> str:
    """A stable 32-hex-digit id from the fields that identify a scored unit."""
    canonical = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def explainer_score_identity(record: dict[str, Any]) -> dict[str, Any]:
    """The identity of an explainer_score record: explainer, model, dataset config and protocol.

    A non-built-in explainer's origin (source, submission id, SHA-256 of the submitted file) is part of it
    (issue #16), so a submission cannot take over a built-in's record and two submitters with the same name
    and version do not collapse into one; built-in and plugin records keep the identity they always had.
    """
    identity = {
        "explainer": [record["explainer"]["name"], record["explainer"]["version"], record["explainer"].get("params", {})],
        "model": [
            record["model"]["regime"], record["model"]["base_model"], record["model"].get("seed"),
            record["model"].get("checkpoint_sha256"),
        ],
        "dataset": [record["dataset"]["config"], record["dataset"]["split"], record["dataset"]["fingerprint"]],
        "protocol": record.get("protocol", {}),
    }
    source = record["explainer"].get("source") or "builtin"
    if source in ("submission", "self-reported"):
        identity["explainer_origin"] = [source, record["explainer"].get("submission_id"),
                                        record["explainer"].get("submission_sha256")]
    return identity
