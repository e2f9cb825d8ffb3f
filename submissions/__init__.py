"""Submitting explainers: request records, the requests store, validation, the sandbox and the queue worker.

* :func:`submit_request` / :func:`submit_file` — validate and file a PENDING request;
* :class:`RequestStore` — the append-only requests store with atomic status transitions;
* :func:`submissions.worker.process_queue` — run PENDING requests: RUNNING → FINISHED | FAILED;
* :func:`submissions.sandbox.run_submission` — run submitted code in an isolated process.
"""

from submissions.requests import STATUSES, RequestStore, RequestView, TransitionError
from submissions.submit import SubmissionError, submit_file, submit_request

__all__ = [
    "STATUSES",
    "RequestStore",
    "RequestView",
    "SubmissionError",
    "TransitionError",
    "submit_file",
    "submit_request",
]
