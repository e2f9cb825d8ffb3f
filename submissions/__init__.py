"""Submitting explainers: request records, the requests store, validation, the sandbox and the queue worker.

* :func:`submit_request` / :func:`submit_file` — validate and file a PENDING request;
* :class:`RequestStore` — the append-only requests store with atomic status transitions;
* :func:`submissions.worker.process_queue` — run PENDING requests: RUNNING → FINISHED | FAILED;
* :func:`submissions.sandbox.run_submission` — run submitted code in an isolated process.

The names below load on first use, so that importing the package (as ``gecobench --help`` does to list the jobs of
:mod:`submissions.cli`) loads neither the stores nor numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from geco_common.lazy import lazy_names

if TYPE_CHECKING:  # what the lazy names are, for type checkers and the API reference
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

__getattr__, __dir__ = lazy_names(__name__, globals(), {
    "STATUSES": "submissions.requests", "RequestStore": "submissions.requests",
    "RequestView": "submissions.requests", "TransitionError": "submissions.requests",
    "SubmissionError": "submissions.submit", "submit_file": "submissions.submit",
    "submit_request": "submissions.submit"})
