"""A model's evaluation columns, stored: what every record of one (model, config) is scored from, without weights.

:func:`gecobench.evaluation.runner.run_evaluation` gathers, per model, one chunk per ``chunk_size`` sentence
groups: the rows, the model's predicted class of every row, the rows kept (every scorable one under the ``none``
filter) and per explainer the word-score columns of every kind (the model's own attributions, its zero-shot
reference's, the randomised, noisy and other-target copies' on the properties subsample, the faithfulness columns
on the faithfulness subsample, the explainer's diagnostics) with their seconds. Every metric of a record is a
function of these columns and the split, computed by :func:`gecobench.evaluation.records.build_records`; a record of another filter is the same
function of the same columns cut down to that filter's rows (:func:`gecobench.evaluation.chunks.filtered_chunk`). So a file holding them lets a
machine without the weights write the records of the paper's filter once its shared subset is known
(:func:`gecobench.evaluation.runner.derive_records`).

The file is gzipped JSON (``gecobench-unit-columns/1``). Floats must come back bit for bit, or a derived record
would not be the record a run writes: a list of floats that float32 holds exactly (attributions are computed in
float32) is stored as little-endian float32 bytes (base64), any other list of floats as float64 bytes; everything
else as plain JSON. Reading validates the format, the config and data fingerprint, the SHA-256 of the payload
(:func:`columns_sha256`, which a reference unit's marker records) and the shape of every chunk.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gecobench.fingerprinted import fingerprint, read_fingerprinted

COLUMNS_FORMAT = "gecobench-unit-columns/1"
_F32, _F64 = "__f32__", "__f64__"
#: the fields of a columns document its fingerprint leaves out (besides ``sha256``, :mod:`gecobench.fingerprinted`)
_UNHASHED = ("format",)
_CHUNK_FIELDS = ("chunk", "groups", "rows", "predictions", "kept", "malformed", "explainers")


class UnitColumnsError(ValueError):
    """A columns file that cannot be used: unreadable, another format, config or data, edited, or malformed."""


def _is_float_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(type(v) is float for v in value)


def _pack(values: list[float]) -> dict[str, Any]:
    as64 = np.asarray(values, dtype=np.float64)
    as32 = as64.astype(np.float32)
    # only where float32 holds every value exactly (NaN compares unequal, so NaN-free lists only)
    if np.array_equal(as32.astype(np.float64), as64):
        return {_F32: base64.b64encode(as32.astype("<f4").tobytes()).decode("ascii")}
    return {_F64: base64.b64encode(as64.astype("<f8").tobytes()).decode("ascii")}


def encode(value: Any) -> Any:
    """``value`` with every non-empty list of Python floats packed (lossless: see the module docstring)."""
    if _is_float_list(value):
        return _pack(value)
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


def decode(value: Any) -> Any:
    """The inverse of :func:`encode`: packed lists back as lists of Python floats."""
    if isinstance(value, dict):
        if set(value) == {_F32}:
            return np.frombuffer(base64.b64decode(value[_F32]), dtype="<f4").astype(np.float64).tolist()
        if set(value) == {_F64}:
            return np.frombuffer(base64.b64decode(value[_F64]), dtype="<f8").tolist()
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def columns_sha256(payload: Mapping[str, Any]) -> str:
    """SHA-256 of a columns document's encoded payload (canonical JSON): what a unit marker names it by."""
    return fingerprint(payload, _UNHASHED)


#: a model's zero-shot reference column that is, bit for bit, the zero-shot model's own attributions of the unit
SAME_AS_ZERO_SHOT = "same as the zero-shot model's main column"


def columns_document(config: str, split: Any, explainer_keys: list[str], entry: Mapping[str, Any],
                     zero_shot: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The file's document for one model's entry of ``run_evaluation(unit_columns=...)``.

    ``zero_shot`` (the written document of the unit's zero-shot model): a chunk's reference column equal to the
    zero-shot model's own attributions of the same rows (what the runner uses as the RMA reference when it evaluates
    the zero-shot model in the same run) is stored as :data:`SAME_AS_ZERO_SHOT`, bound to that document's SHA-256:
    the reference columns are a third of a unit's bytes otherwise."""
    chunks = [_plain_chunk(c) for c in entry["chunks"]]
    shared = 0
    if zero_shot is not None:
        theirs = {c["chunk"]: c for c in decode(zero_shot["chunks"])}
        for chunk in chunks:
            other = theirs.get(chunk["chunk"])
            if other is None or other["kept"] != chunk["kept"]:
                continue
            explainers = {}
            for key, result in chunk["explainers"].items():
                scores = result.get("scores") or {}
                own = ((other["explainers"].get(key) or {}).get("scores") or {}).get("main")
                if scores.get("reference") is not None and scores["reference"] == own:
                    result = {**result, "scores": {**scores, "reference": SAME_AS_ZERO_SHOT}}
                    shared += 1
                explainers[key] = result
            chunk["explainers"] = explainers
    payload = {"config": config, "split": split.split, "dataset_fingerprint": split.fingerprint,
               "explainer_keys": list(explainer_keys), "model": entry["model"], "reference": entry["reference"],
               "reference_reason": entry.get("reference_reason"), "n_processes": entry.get("n_processes", 1),
               "zero_shot_columns_sha256": zero_shot["sha256"] if shared else None,
               "chunks": encode(chunks)}
    return {"format": COLUMNS_FORMAT, "sha256": columns_sha256(payload), **payload}


def _plain_chunk(chunk: Mapping[str, Any]) -> dict[str, Any]:
    """A gathered chunk as JSON sees it (row keys as text); the resume bookkeeping left out (not a result)."""
    return {"chunk": int(chunk["chunk"]), "groups": chunk["groups"], "rows": chunk["rows"],
            "predictions": {str(k): int(v) for k, v in chunk["predictions"].items()}, "kept": chunk["kept"],
            "malformed": int(chunk["malformed"]), "explainers": chunk["explainers"]}


def write_columns(path: str | os.PathLike[str], document: Mapping[str, Any]) -> Path:
    """Write atomically (mtime 0 in the gzip header: the same columns give the same bytes)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_bytes(gzip.compress(json.dumps(document, separators=(",", ":")).encode("utf-8"), mtime=0))
    partial.replace(path)
    return path


def read_columns(path: str | os.PathLike[str], split: Any = None, sha256: str | None = None,
                 zero_shot: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read and validate one columns file; with ``split``, refused unless made on that config, split and data;
    with ``sha256``, unless its payload has that hash. A file whose reference columns are the zero-shot model's
    needs ``zero_shot``, what this function returned for that model's file (refused unless its SHA-256 is the one
    recorded). Returns the entry ``derive_records`` takes (chunks decoded, row keys as integers, reference columns
    filled in) under ``"entry"``, and the document's other fields."""
    path = Path(path)
    document, actual = read_fingerprinted(
        path, file_format=COLUMNS_FORMAT, kind="columns file", unhashed=_UNHASHED, error=UnitColumnsError,
        compressed=True, unreadable="not a gzipped JSON columns file",
        required=("sha256", "config", "split", "dataset_fingerprint", "explainer_keys", "model", "chunks"))
    if sha256 is not None and actual != sha256:
        raise UnitColumnsError(f"{path}: payload {actual[:16]}…, the unit marker names {sha256[:16]}…")
    if split is not None and (document["config"] != split.config or document["split"] != split.split
                              or document["dataset_fingerprint"] != split.fingerprint):
        raise UnitColumnsError(f"{path}: columns of {document['config']}/{document['split']} on data "
                               f"{str(document['dataset_fingerprint'])[:16]}…, not of this run's {split.config}/"
                               f"{split.split} ({split.fingerprint[:16]}…)")
    chunks = decode(document["chunks"])
    if not isinstance(chunks, list):
        raise UnitColumnsError(f"{path}: 'chunks' is not a list")
    wanted = document.get("zero_shot_columns_sha256")
    if wanted is not None and (zero_shot is None or zero_shot.get("sha256") != wanted):
        raise UnitColumnsError(f"{path}: its reference columns are those of the zero-shot columns {wanted[:16]}…; "
                               + ("not given" if zero_shot is None else
                                  f"given {str(zero_shot.get('sha256'))[:16]}…"))
    theirs = {c["chunk"]: c for c in zero_shot["entry"]["chunks"]} if wanted is not None else {}
    for position, chunk in enumerate(chunks):
        lacking = [k for k in _CHUNK_FIELDS if not isinstance(chunk, dict) or k not in chunk]
        if lacking:
            raise UnitColumnsError(f"{path}: chunks[{position}] lacks {lacking}")
        if chunk["chunk"] != position:
            raise UnitColumnsError(f"{path}: chunks[{position}] is chunk {chunk['chunk']}: chunks out of order")
        chunk["predictions"] = {int(k): int(v) for k, v in chunk["predictions"].items()}
        if not set(chunk["kept"]) <= set(chunk["rows"]) or set(chunk["predictions"]) != set(chunk["rows"]):
            raise UnitColumnsError(f"{path}: chunk {position}'s kept rows or predictions are not its rows")
        wrong = [key for key in document["explainer_keys"] if key not in chunk["explainers"]]
        if wrong:
            raise UnitColumnsError(f"{path}: chunk {position} has no columns of {wrong}")
        for key, result in chunk["explainers"].items():
            scores = result.get("scores") or {}
            if scores.get("reference") == SAME_AS_ZERO_SHOT:
                other = theirs.get(position)
                if other is None or other["kept"] != chunk["kept"] or key not in other["explainers"]:
                    raise UnitColumnsError(f"{path}: chunk {position}, {key}: the zero-shot columns lack its rows")
                scores["reference"] = [list(r) for r in other["explainers"][key]["scores"]["main"]]
            main = scores.get("main")
            if main is not None and len(main) != len(chunk["kept"]):
                raise UnitColumnsError(f"{path}: chunk {position}, {key}: {len(main)} attribution rows for "
                                       f"{len(chunk['kept'])} kept rows")
        chunk.setdefault("resumed_seconds", 0.0)
        chunk.setdefault("resumed_cpu_seconds", 0.0)
    entry = {"chunks": chunks, "model": document["model"], "reference": document.get("reference"),
             "reference_reason": document.get("reference_reason"), "n_processes": document.get("n_processes", 1)}
    return {**{k: v for k, v in document.items() if k != "chunks"}, "entry": entry}
