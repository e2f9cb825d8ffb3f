"""Submitting an explainer: validate at once, then file a PENDING request. Nothing runs here."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from submissions.requests import RequestStore, RequestView
from submissions.validation import (
    SubmissionError,
    validate_code,
    validate_file_name,
    validate_metadata,
    validate_precomputed,
    validate_submitter,
)


def _claim_key(name: str, version: str, content_sha256: str) -> str:
    return hashlib.sha256(f"{name}\0{version}\0{content_sha256}".encode()).hexdigest()[:40]


def submit_request(
    store: RequestStore,
    track: str,
    metadata: dict[str, Any],
    file_name: str,
    payload: bytes,
    submitter: str | None = None,
) -> RequestView:
    """Validate a submission and file it as a PENDING request.

    Refused with :class:`SubmissionError` (a clear message) when: metadata fields are missing, too long or
    unsafe; the file name is unsafe or has the wrong suffix; the file is too large or malformed; or the same
    name, version and content were already submitted (a FAILED request may be resubmitted by its submitter).
    Exactly one request is created per accepted call, also under concurrent submissions: the duplicate
    check claims a key file with an exclusive create.
    """
    if track not in ("code", "precomputed"):
        raise SubmissionError(f"track must be 'code' or 'precomputed', got {track!r}")
    cleaned = validate_metadata(metadata)
    submitter = validate_submitter(submitter)
    safe_name = validate_file_name(file_name, track)
    if track == "code":
        validate_code(payload, safe_name)
    else:
        validate_precomputed(payload, safe_name)
    content_sha256 = hashlib.sha256(payload).hexdigest()
    store.refresh()

    key = _claim_key(cleaned["name"], cleaned["version"], content_sha256)
    claims = store.root / "_claims"
    claims.mkdir(parents=True, exist_ok=True)
    previous: RequestView | None = None
    attempt = 0
    while True:
        claim = claims / f"{key}-{attempt:03d}.json"
        if claim.exists():
            try:
                previous = store.get(json.loads(claim.read_text())["request_id"])
            except (KeyError, json.JSONDecodeError, FileNotFoundError):
                previous = None  # a claim whose request is still being written: treat as taken
            if previous is None or previous.status != "FAILED":
                status = previous.status if previous else "PENDING"
                raise SubmissionError(
                    f"duplicate submission: {cleaned['name']} {cleaned['version']} with the same content is already "
                    f"{status}" + (f" (request {previous.request_id})" if previous else "")
                )
            if (previous.request.get("submitter") or None) != (submitter or None):
                raise SubmissionError(
                    f"{cleaned['name']} {cleaned['version']} FAILED as request {previous.request_id}; only its "
                    "submitter can resubmit it"
                )
            attempt += 1
            continue
        request_id = os.urandom(16).hex()
        try:
            store.write_new(claim, json.dumps({"request_id": request_id}).encode())
        except FileExistsError:
            continue  # another submission took this attempt number first; look again
        break

    request = {
        "request_id": request_id,
        "track": track,
        "metadata": cleaned,
        "payload_file": safe_name,
        "content_sha256": content_sha256,
        "submitter": submitter,
        "resubmission_of": previous.request_id if previous else None,
    }
    return store.create(request, payload)


def submit_file(
    store: RequestStore, track: str, metadata: dict[str, Any], path: str | Path, submitter: str | None = None
) -> RequestView:
    """:func:`submit_request` for a file on disk."""
    path = Path(path)
    if not path.is_file():
        raise SubmissionError(f"{path} is not a file")
    size = path.stat().st_size
    limit = (1 << 20) if track == "code" else (64 << 20)
    if size > limit:
        raise SubmissionError(f"{path.name} is {size} bytes; the limit for the {track} track is {limit} bytes")
    return submit_request(store, track, metadata, path.name, path.read_bytes(), submitter=submitter)


__all__ = ["SubmissionError", "submit_file", "submit_request"]
