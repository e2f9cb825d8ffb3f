"""Checks made at submit time, before anything runs: metadata, file names, sizes, and the payload's form."""

from __future__ import annotations

import ast
import json
import math
import re
import threading
from pathlib import PurePosixPath
from typing import Any

REQUIRED_METADATA = ("name", "version", "authors", "description", "license", "contact")
METADATA_LIMITS = {"name": 64, "version": 32, "authors": 500, "description": 5000, "license": 100, "contact": 200,
                   "model_set": 64}
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{1,63}", re.ASCII)
# Semantic versioning 2.0.0, ASCII only (``\d`` would also take other scripts' digits without re.ASCII).
VERSION_PATTERN = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?", re.ASCII)
SUBMITTER_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}", re.ASCII)
FILE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
CODE_SUFFIXES = (".py",)
PRECOMPUTED_SUFFIXES = (".jsonl", ".parquet")
MAX_CODE_BYTES = 1 << 20  # 1 MiB
MAX_PRECOMPUTED_BYTES = 64 << 20  # 64 MiB
PRECOMPUTED_FIELDS = ("model", "config", "sentence_id", "label", "attributions")
# Bounds on parsing what a submitter sends, so that no input turns into MemoryError or RecursionError.
MAX_CODE_NODES = 200_000
MAX_CODE_DEPTH = 100
MAX_JSON_LINE_BYTES = 1 << 20
MAX_JSON_DEPTH = 8
MAX_JSON_INT_DIGITS = 18
MAX_ATTRIBUTIONS_PER_ROW = 4096
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


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
    if not NAME_PATTERN.fullmatch(cleaned["name"]):
        raise SubmissionError(
            f"metadata field 'name' = {cleaned['name']!r} must be 2-64 lower-case letters, digits or underscores "
            "starting with a letter (no paths, dots or slashes)"
        )
    if not VERSION_PATTERN.fullmatch(cleaned["version"]):
        raise SubmissionError(
            f"metadata field 'version' = {cleaned['version']!r} must be an ASCII semantic version such as 1.0.0 "
            "(MAJOR.MINOR.PATCH, optionally -prerelease or +build)")
    return cleaned


def validate_submitter(submitter: Any) -> str | None:
    """A submitter name (optional): 1-64 ASCII letters, digits, ``_ . @ -``, starting with a letter or digit."""
    if submitter is None or (isinstance(submitter, str) and not submitter.strip()):
        return None
    if not isinstance(submitter, str):
        raise SubmissionError(f"submitter must be text, got {type(submitter).__name__}")
    text = submitter.strip()
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise SubmissionError("submitter contains control characters")
    if len(text) > 64:
        raise SubmissionError(f"submitter is {len(text)} characters long; the limit is 64")
    if not SUBMITTER_PATTERN.fullmatch(text):
        raise SubmissionError(f"submitter {text!r} may hold only ASCII letters, digits and _ . @ - "
                              "(starting with a letter or digit)")
    return text


def validate_file_name(file_name: str, track: str) -> str:
    """A bare, safe file name with a suffix that fits the track."""
    name = PurePosixPath(str(file_name).replace("\\", "/")).name
    if name != str(file_name) or ".." in str(file_name) or not FILE_NAME_PATTERN.match(name):
        raise SubmissionError(f"file name {file_name!r} is not allowed: use a plain name such as my_explainer.py")
    suffixes = CODE_SUFFIXES if track == "code" else PRECOMPUTED_SUFFIXES
    if not name.endswith(suffixes):
        raise SubmissionError(f"file {name!r} must end with {' or '.join(suffixes)} for the {track} track")
    return name


# CPython 3.11 builds AST objects with interpreter-wide recursion bookkeeping that two threads parsing at once can
# corrupt ("SystemError: AST constructor recursion depth mismatch", python/cpython#106905); requests submitted
# concurrently (one thread each) parse one at a time.
_PARSE_LOCK = threading.Lock()


def validate_code(source: bytes, file_name: str) -> None:
    """The code must be UTF-8 Python that parses and defines a class with ``name`` and ``explain``.

    Nothing is executed here: the code only ever runs inside the sandbox.
    """
    if len(source) > MAX_CODE_BYTES:
        raise SubmissionError(f"{file_name} is {len(source)} bytes; the limit for code is {MAX_CODE_BYTES} bytes")
    try:
        text = source.decode("utf-8")
        with _PARSE_LOCK:
            tree = ast.parse(text, filename=file_name)
    except UnicodeDecodeError:
        raise SubmissionError(f"{file_name} is not UTF-8 text") from None
    except SyntaxError as err:
        raise SubmissionError(f"{file_name} does not parse: line {err.lineno}: {err.msg}") from None
    except (RecursionError, MemoryError):
        raise SubmissionError(f"{file_name} is nested too deeply to parse (the limit is {MAX_CODE_DEPTH} levels)") from None
    _check_tree_size(tree, file_name)
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


def _check_tree_size(tree: ast.AST, file_name: str) -> None:
    """Refuse syntax trees with too many nodes or too deep a nesting (walked without recursion)."""
    count = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_CODE_NODES:
            raise SubmissionError(f"{file_name} has more than {MAX_CODE_NODES} syntax nodes; simplify the code")
        if depth > MAX_CODE_DEPTH:
            line = getattr(node, "lineno", "?")
            raise SubmissionError(f"{file_name} line {line}: code nested more than {MAX_CODE_DEPTH} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


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
                yield number, _parse_json_line(line, number, file_name)

        try:
            lines = list(_lines())
        except UnicodeDecodeError:
            raise SubmissionError(f"{file_name} is not UTF-8 text") from None
    seen: dict[tuple[str, str, int, int], tuple[int, list[float]]] = {}
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
        if len(scores) > MAX_ATTRIBUTIONS_PER_ROW:
            raise SubmissionError(f"{file_name} line {number}: 'attributions' has {len(scores)} values; the limit is "
                                  f"{MAX_ATTRIBUTIONS_PER_ROW}")
        if any(isinstance(v, (bool, str, bytes)) for v in scores):
            raise SubmissionError(f"{file_name} line {number}: 'attributions' must hold numbers only")
        try:
            values = [float(v) for v in scores]
        except (TypeError, ValueError, OverflowError):
            raise SubmissionError(f"{file_name} line {number}: 'attributions' must hold numbers only") from None
        if not all(math.isfinite(v) for v in values):
            raise SubmissionError(f"{file_name} line {number}: 'attributions' holds NaN or infinite values")
        for key in ("model", "config"):
            if not isinstance(row[key], str) or not row[key] or len(row[key]) > 200:
                raise SubmissionError(f"{file_name} line {number}: {key!r} must be non-empty text of at most 200 characters")
        sentence_id = _integral(row["sentence_id"], "sentence_id", number, file_name)
        label = _integral(row["label"], "label", number, file_name)
        key = (row["model"], row["config"], sentence_id, label)
        if key in seen:
            first_line, first_values = seen[key]
            if first_values != values:
                raise SubmissionError(
                    f"{file_name} lines {first_line} and {number}: conflicting attributions for model {key[0]!r}, "
                    f"config {key[1]!r}, sentence_id {sentence_id}, label {label}")
            continue  # an exact repeat says nothing new
        seen[key] = (number, values)
        yield {"model": row["model"], "config": row["config"], "sentence_id": sentence_id, "label": label,
               "attributions": values}


def _integral(value: Any, field: str, number: int, file_name: str) -> int:
    """An integer field: an int, or a float with no fractional part (parquet stores some ids as floats)."""
    if isinstance(value, bool):
        raise SubmissionError(f"{file_name} line {number}: {field!r} must be an integer, got a boolean")
    if hasattr(value, "item") and not isinstance(value, (list, dict)):
        value = value.item()  # numpy scalars from parquet
    if isinstance(value, int):
        result = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        result = int(value)
    else:
        raise SubmissionError(f"{file_name} line {number}: {field!r} must be an integer, got {value!r:.40}")
    if not 0 <= result < 2**53:
        raise SubmissionError(f"{file_name} line {number}: {field!r} = {result} is out of range (0 to 2**53)")
    return result


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_JSON_INT_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits (the limit is {MAX_JSON_INT_DIGITS})")
    return int(text)


def _parse_json_line(line: str, number: int, file_name: str) -> Any:
    """One JSON line, parsed within bounds on size, nesting depth and integer length."""
    if len(line) > MAX_JSON_LINE_BYTES:
        raise SubmissionError(f"{file_name} line {number}: {len(line)} characters; the limit per line is "
                              f"{MAX_JSON_LINE_BYTES}")
    depth = deepest = 0
    for ch in _JSON_STRING.sub('""', line):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    if deepest > MAX_JSON_DEPTH:
        raise SubmissionError(f"{file_name} line {number}: JSON nested {deepest} levels deep; the limit is {MAX_JSON_DEPTH}")
    try:
        return json.loads(line, parse_int=_bounded_int)
    except json.JSONDecodeError as err:
        raise SubmissionError(f"{file_name} line {number}: not valid JSON ({err.msg})") from None
    except (ValueError, RecursionError) as err:
        raise SubmissionError(f"{file_name} line {number}: {err}") from None
