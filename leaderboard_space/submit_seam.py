"""The Submit tab's seam to the submissions package: one call for the form, one for the queue table.

Everything the Space does with submissions goes through :func:`submit_form` and :func:`queue_frame`, so the
UI never touches request files itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

QUEUE_COLUMNS = ["status", "score", "name", "version", "track", "submitted_at", "updated_at", "reason", "log_excerpt",
                 "request_id"]
STATUS_MARK = {"PENDING": "⏳ PENDING", "RUNNING": "⚙️ RUNNING", "FINISHED": "✅ FINISHED", "FAILED": "❌ FAILED"}


def _store(requests_location: str | None):
    from submissions.hub_requests import open_requests_store

    return open_requests_store(requests_location)


def submit_form(
    requests_location: str | None,
    track: str,
    metadata: dict[str, Any],
    file_path: str | None,
    submitter: str | None = None,
) -> str:
    """File a submission from the form's fields and uploaded file; return a message for the user.

    A refused submission (missing field, bad file, duplicate) returns the submission package's reason instead
    of raising, so the form can show it.
    """
    from leaderboard_space.hub_config import READ_ONLY_MESSAGE, stores_from_env
    from submissions import SubmissionError, submit_file

    if requests_location is None and stores_from_env().read_only:
        return READ_ONLY_MESSAGE
    problems = form_problems(track, metadata, file_path)
    if problems:
        return "❌ Not submitted — please fix:\n" + "\n".join(f"- {p}" for p in problems)
    cleaned = {k: v for k, v in metadata.items() if v not in (None, "")}
    try:
        view = submit_file(_store(requests_location), track, cleaned, Path(file_path), submitter=submitter or None)
    except SubmissionError as err:
        return f"❌ Not submitted: {err}"
    return f"✅ Submitted {view.request['metadata']['name']} {view.request['metadata']['version']} as request {view.request_id} (status {view.status})."


def form_problems(track: str, metadata: dict[str, Any], file_path: str | None) -> list[str]:
    """Every problem of the form at once (the submissions package stops at the first): each missing or malformed
    field, a missing file or one whose suffix does not fit the track. An empty list: the form looks complete."""
    from submissions.validation import (
        CODE_SUFFIXES,
        METADATA_LIMITS,
        NAME_PATTERN,
        PRECOMPUTED_SUFFIXES,
        REQUIRED_METADATA,
        VERSION_PATTERN,
    )

    problems = []
    text = {k: str(v or "").strip() for k, v in metadata.items()}
    for key in REQUIRED_METADATA:
        if not text.get(key):
            problems.append(f"**{key}** is required")
    for key, value in text.items():
        if key in METADATA_LIMITS and len(value) > METADATA_LIMITS[key]:
            problems.append(f"**{key}** is {len(value)} characters long; the limit is {METADATA_LIMITS[key]}")
    if text.get("name") and not NAME_PATTERN.match(text["name"]):
        problems.append(f"**name** {text['name']!r} must be 2-64 lower-case letters, digits or underscores, "
                        "starting with a letter")
    if text.get("version") and not VERSION_PATTERN.match(text["version"]):
        problems.append(f"**version** {text['version']!r} must look like 1.0.0")
    if track not in ("code", "precomputed"):
        problems.append(f"**track** must be code or precomputed, not {track!r}")
    suffixes = CODE_SUFFIXES if track == "code" else PRECOMPUTED_SUFFIXES
    if not file_path:
        problems.append("**file**: upload a .py explainer (code track) or .jsonl/.parquet attributions "
                        "(precomputed track)")
    elif not str(file_path).endswith(suffixes):
        problems.append(f"**file** {Path(file_path).name!r} must end with {' or '.join(suffixes)} for the {track} track")
    return problems


def queue_frame(requests_location: str | None, score_of: Any = None) -> tuple[pd.DataFrame, str]:
    """(table, message): every request, newest first, with status, reason and log excerpt; for a finished
    request its score, ``score_of(result_record_ids) -> str`` (default: none shown)."""
    try:
        views = _store(requests_location).list()
    except ImportError as err:
        return pd.DataFrame(columns=QUEUE_COLUMNS), f"The submissions package is not installed ({err})."
    except Exception as err:  # an unreadable store must not break the tab
        return pd.DataFrame(columns=QUEUE_COLUMNS), f"Cannot read the requests store: {err}"
    rows = []
    for view in reversed(views):
        row = view.summary()
        row["status"] = STATUS_MARK.get(row["status"], row["status"])
        row["log_excerpt"] = (row.get("log_excerpt") or "")[-500:]
        row["score"] = score_of(row.get("result_record_ids") or []) if score_of and view.status == "FINISHED" else ""
        rows.append({c: row.get(c, "") for c in QUEUE_COLUMNS})
    if not rows:
        return pd.DataFrame(columns=QUEUE_COLUMNS), "The queue is empty."
    counts = pd.Series([v.status for v in views]).value_counts()
    return pd.DataFrame(rows, columns=QUEUE_COLUMNS), " · ".join(f"{s}: {n}" for s, n in counts.items())
