"""One validated reader for the package's fingerprinted JSON files: a model's evaluation columns
(:mod:`gecobench.evaluation.unit_columns`) and a checkpoint's test predictions (:mod:`gecobench.reference`).

Both are committed documents that later stages trust without the weights that made them, so both are read the same
way: the file must parse (plain or gzipped JSON), name its format, hold its required fields, and, where it records
its own fingerprint (field ``sha256``), hash to it — the SHA-256 of its canonical JSON
(:func:`gecobench.provenance.canonical_sha256`) without the fields that are not its content (``unhashed``: the
format name of a columns file, the provenance block of a prediction file) and without ``sha256`` itself. The callers
keep what is their own: the error class, the name of the kind of file in every message, which fields are required
(a columns file must record its fingerprint; a prediction file written before 1.0 records none) and the checks of
their content.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from gecobench.provenance import canonical_sha256

#: the field a fingerprinted document records its own fingerprint in
SHA256_FIELD = "sha256"


def payload_of(document: Mapping[str, Any], unhashed: Collection[str]) -> dict[str, Any]:
    """The part of ``document`` its fingerprint covers: every field but ``unhashed`` and :data:`SHA256_FIELD`."""
    return {k: v for k, v in document.items() if k not in unhashed and k != SHA256_FIELD}


def fingerprint(document: Mapping[str, Any], unhashed: Collection[str]) -> str:
    """The document's fingerprint: canonical SHA-256 of :func:`payload_of` (the same on every machine)."""
    return canonical_sha256(payload_of(document, unhashed))


def read_fingerprinted(path: str | os.PathLike[str], *, file_format: str, required: Sequence[str], kind: str,
                       unhashed: Collection[str], error: type[ValueError] = ValueError, compressed: bool = False,
                       unreadable: str | None = None) -> tuple[dict[str, Any], str]:
    """Read one fingerprinted JSON file; return ``(document, its fingerprint)``.

    Refused with ``error`` (every message starts with the file's path and says what is wrong, naming the file's
    ``kind``): unreadable (``unreadable``, default ``cannot read a <kind>``, with the parser's reason), not a JSON
    object of ``file_format``, without one of ``required``, or with a recorded ``sha256`` its content does not hash
    to (an edited or corrupt file). ``compressed``: the file is gzipped. A document without ``sha256`` is accepted
    unless ``required`` names it; its fingerprint is computed all the same."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        document = json.loads(gzip.decompress(raw) if compressed else raw)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise error(f"{path}: {unreadable or f'cannot read a {kind}'} ({err})") from None
    if not isinstance(document, dict) or document.get("format") != file_format:
        raise error(f"{path}: not a {kind} (expected format {file_format!r})")
    missing = [k for k in required if k not in document]
    if missing:
        raise error(f"{path}: missing field(s) {missing}")
    actual = fingerprint(document, unhashed)
    if SHA256_FIELD in document and document[SHA256_FIELD] != actual:
        raise error(f"{path}: its payload hashes to {actual[:16]}…, not the recorded "
                    f"{str(document[SHA256_FIELD])[:16]}…: the file was edited or is corrupt")
    return document, actual
