"""Checks made at submit time, before anything runs: metadata, file names, sizes, and the payload's form."""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import PurePosixPath
from typing import Any

REQUIRED_METADATA = ("name", "version", "authors", "description", "license", "contact")
METADATA_LIMITS = {"name": 64, "version": 32, "authors": 500, "description": 5000, "license": 100, "contact": 200,
                   "model_set": 64}
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
VERSION_PATTERN = re.compile(r"^\d+(\.\d+){0,2}([-+][0-9A-Za-z.]+)?$")
FILE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
CODE_SUFFIXES = (".py",)
PRECOMPUTED_SUFFIXES = (".jsonl", ".parquet")
MAX_CODE_BYTES = 1 << 20  # 1 MiB
MAX_PRECOMPUTED_BYTES = 64 << 20  # 64 MiB
PRECOMPUTED_FIELDS = ("model", "config", "sentence_id", "label", "attributions")


class SubmissionError(ValueError):
    """A submission refused at submit time; the message says what to fix."""


def validate_metadata(metadata: dict[str, Any]) -> dict[str, str]:
    """Return cleaned metadata or raise :class:`SubmissionError` naming the offending field."""
    if not isinstance(metadata, dict):
        raise SubmissionError("metadata must be a mapping of field name to text")
    missing = [key for key in REQUIRED_METADATA if not str(metadata.get(key) or "").strip()]
    if missing:
        raise SubmissionError(f"metadata is missing required field(s): {', '.join(missing)}")
    cleaned: dict[str, str] = {}
    for key, value in metadata.items():
        if key not in METADATA_LIMITS:
            raise SubmissionError(f"unknown metadata field {key!r}; allowed: {', '.join(METADATA_LIMITS)}")
        if value is None:
            continue
        text = str(value).strip()
        if len(text) > METADATA_LIMITS[key]:
            raise SubmissionError(f"metadata field {key!r} is {len(text)} characters long; the limit is {METADATA_LIMITS[key]}")
        if any(ord(ch) < 32 and ch not in "\n\t" for ch in text):
            raise SubmissionError(f"metadata field {key!r} contains control characters")
        cleaned[key] = text
    if not NAME_PATTERN.match(cleaned["name"]):
        raise SubmissionError(
            f"metadata field 'name' = {cleaned['name']!r} must be 2-64 lower-case letters, digits or underscores "
            "starting with a letter (no paths, dots or slashes)"
        )
    if not VERSION_PATTERN.match(cleaned["version"]):
        raise SubmissionError(f"metadata field 'version' = {cleaned['version']!r} must look like 1.0.0")
    return cleaned


def validate_file_name(file_name: str, track: str) -> str:
    """A bare, safe file name with a suffix that fits the track."""
    name = PurePosixPath(str(file_name).replace("\\", "/")).name
    if name != str(file_name) or ".." in str(file_name) or not FILE_NAME_PATTERN.match(name):
        raise SubmissionError(f"file name {file_name!r} is not allowed: use a plain name such as my_explainer.py")
    suffixes = CODE_SUFFIXES if track == "code" else PRECOMPUTED_SUFFIXES
    if not name.endswith(suffixes):
        raise SubmissionError(f"file {name!r} must end with {' or '.join(suffixes)} for the {track} track")
    return name


def validate_code(source: bytes, file_name: str) -> None:
    """The code must be UTF-8 Python that parses and defines a class with ``name`` and ``explain``.

    Nothing is executed here: the code only ever runs inside the sandbox.
    """
    if len(source) > MAX_CODE_BYTES:
        raise SubmissionError(f"{file_name} is {len(source)} bytes; the limit for code is {MAX_CODE_BYTES} bytes")
    try:
        tree = ast.parse(source.decode("utf-8"), filename=file_name)
    except UnicodeDecodeError:
        raise SubmissionError(f"{file_name} is not UTF-8 text") from None
    except SyntaxError as err:
        raise SubmissionError(f"{file_name} does not parse: line {err.lineno}: {err.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            assigns = {t.id for n in node.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
            assigns |= {n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
            if "explain" in methods and "name" in assigns:
                return
    raise SubmissionError(
        f"{file_name} defines no explainer: expected a class with a `name` attribute and an `explain` method "
        "(see submissions/examples/)"
    )


def validate_precomputed(payload: bytes, file_name: str) -> int:
    """Check the form of a precomputed-attributions file; return its number of rows.

    Each row: ``model``, ``config``, ``sentence_id``, ``label`` (the gender variant) and ``attributions``
    (one finite number per word). Coverage of the model set is checked by the worker, which has the data.
    """
    if len(payload) > MAX_PRECOMPUTED_BYTES:
        raise SubmissionError(f"{file_name} is {len(payload)} bytes; the limit is {MAX_PRECOMPUTED_BYTES} bytes")
    rows = list(iter_precomputed_rows(payload, file_name))
    if not rows:
        raise SubmissionError(f"{file_name} holds no rows")
    return len(rows)


def iter_precomputed_rows(payload: bytes, file_name: str):
    """Yield validated rows of a precomputed-attributions file (JSONL or parquet)."""
    if file_name.endswith(".parquet"):
        import io

        import pandas as pd

        try:
            frame = pd.read_parquet(io.BytesIO(payload))
        except Exception as err:  # noqa: BLE001 - any parse failure is the submitter's to fix
            raise SubmissionError(f"{file_name} is not a readable parquet file: {err}") from None
        records = frame.to_dict(orient="records")
        lines = ((i + 1, row) for i, row in enumerate(records))
    else:
        def _lines():
            for number, line in enumerate(payload.decode("utf-8", errors="strict").splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as err:
                    raise SubmissionError(f"{file_name} line {number}: not valid JSON ({err.msg})") from None

        try:
            lines = list(_lines())
        except UnicodeDecodeError:
            raise SubmissionError(f"{file_name} is not UTF-8 text") from None
    for number, row in lines:
        if not isinstance(row, dict):
            raise SubmissionError(f"{file_name} line {number}: each row must be a JSON object")
        missing = [f for f in PRECOMPUTED_FIELDS if f not in row]
        if missing:
            raise SubmissionError(f"{file_name} line {number}: missing field(s) {', '.join(missing)}")
        scores = row["attributions"]
        scores = list(scores) if not isinstance(scores, (str, bytes, dict)) and hasattr(scores, "__iter__") else None
        if scores is None or not scores:
            raise SubmissionError(f"{file_name} line {number}: 'attributions' must be a non-empty list of numbers")
        try:
            values = [float(v) for v in scores]
        except (TypeError, ValueError):
            raise SubmissionError(f"{file_name} line {number}: 'attributions' must hold numbers only") from None
        if not all(math.isfinite(v) for v in values):
            raise SubmissionError(f"{file_name} line {number}: 'attributions' holds NaN or infinite values")
        yield {
            "model": str(row["model"]),
            "config": str(row["config"]),
            "sentence_id": int(row["sentence_id"]),
            "label": int(row["label"]),
            "attributions": values,
        }
