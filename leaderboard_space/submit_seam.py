"""The Submit tab's seam to the submissions package: one call for the form, one for the queue table.

Everything the Space does with submissions goes through :func:`submit_form` and :func:`queue_frame`, so the
UI never touches request files itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

QUEUE_COLUMNS = ["status", "name", "version", "track", "submitted_at", "updated_at", "reason", "log_excerpt", "request_id"]
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
    if not file_path:
        return "❌ Please upload a file: a .py explainer (code track) or .jsonl/.parquet attributions (precomputed track)."
    cleaned = {k: v for k, v in metadata.items() if v not in (None, "")}
    try:
        view = submit_file(_store(requests_location), track, cleaned, Path(file_path), submitter=submitter or None)
    except SubmissionError as err:
        return f"❌ Not submitted: {err}"
    return f"✅ Submitted {view.request['metadata']['name']} {view.request['metadata']['version']} as request {view.request_id} (status {view.status})."


def queue_frame(requests_location: str | None) -> tuple[pd.DataFrame, str]:
    """(table, message): every request, newest first, with status, reason and log excerpt."""
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
        rows.append({c: row.get(c, "") for c in QUEUE_COLUMNS})
    if not rows:
        return pd.DataFrame(columns=QUEUE_COLUMNS), "The queue is empty."
    counts = pd.Series([v.status for v in views]).value_counts()
    return pd.DataFrame(rows, columns=QUEUE_COLUMNS), " · ".join(f"{s}: {n}" for s, n in counts.items())
