"""Request records: one submission and its status history, in an append-only requests store.

A request is stored as a folder ``<root>/<request_id>/``:

* ``request.json`` — the immutable submission (metadata, track, content hash, submitter, time);
* ``payload/`` — the submitted file (explainer code, or precomputed attributions);
* ``events/NNNN.json`` — one immutable event per status change, numbered from 0.

The current status is the last event. A status change creates the next event file with an exclusive
create (``os.link`` onto a new name), so two workers can never both move a request from PENDING to RUNNING:
the second one finds the sequence number taken and backs off. Nothing is ever overwritten.

Statuses: ``PENDING → RUNNING → FINISHED | FAILED``; a FAILED request can be resubmitted (a new request that
names the old one in ``resubmission_of``).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from gecobench.provenance import utc_now
from gecobench.store import atomic_create

REQUEST_SCHEMA_VERSION = "1.0"
STATUSES = ("PENDING", "RUNNING", "FINISHED", "FAILED")
# RUNNING → PENDING is the stale-lease recovery only: a request whose worker died is re-queued once.
TRANSITIONS = {"PENDING": {"RUNNING", "FAILED"}, "RUNNING": {"FINISHED", "FAILED", "PENDING"}, "FINISHED": set(),
               "FAILED": set()}
TRACKS = ("code", "precomputed")
DEFAULT_REQUESTS_DIR = "requests"
REQUESTS_ENV = "GECOBENCH_REQUESTS"

REQUEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "GECOBench submission request",
    "type": "object",
    "required": [
        "schema_version", "record_type", "request_id", "track", "metadata", "payload_file", "content_sha256",
        "submitted_at",
    ],
    "properties": {
        "schema_version": {"type": "string"},
        "record_type": {"const": "request"},
        "request_id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
        "track": {"enum": list(TRACKS)},
        "metadata": {
            "type": "object",
            "required": ["name", "version", "authors", "description", "license", "contact"],
            "properties": {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "authors": {"type": "string"},
                "description": {"type": "string"},
                "license": {"type": "string"},
                "contact": {"type": "string"},
                "model_set": {"type": "string"},
            },
        },
        "payload_file": {"type": "string"},
        "content_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "submitter": {"type": ["string", "null"]},
        "submitted_at": {"type": "string"},
        "resubmission_of": {"type": ["string", "null"]},
    },
}

EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["status", "at", "sequence"],
    "properties": {
        "status": {"enum": list(STATUSES)},
        "at": {"type": "string"},
        "sequence": {"type": "integer", "minimum": 0},
        "reason": {"type": ["string", "null"]},
        "log_excerpt": {"type": ["string", "null"]},
        "worker": {"type": ["string", "null"]},
        "result_record_ids": {"type": "array", "items": {"type": "string"}},
        "isolation": {"type": ["object", "null"]},
        "lease_expires_at": {"type": ["string", "null"]},
        "recovered": {"type": "boolean"},
    },
}

_EVENT_NAME = re.compile(r"^\d{4}\.json$")
MAX_EVENT_BYTES = 64 << 10
MAX_REQUEST_BYTES = 64 << 10


class TransitionError(RuntimeError):
    """A status change that the state machine forbids, or that another worker made first."""


@dataclass
class RequestView:
    """A request with its full status history."""

    request: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    # Set when an event file is malformed, out of sequence or an illegal transition: the events before it
    # define the status, and the worker leaves the request alone (it never crashes on a forged event).
    integrity_error: str | None = None

    @property
    def request_id(self) -> str:
        return self.request["request_id"]

    @property
    def status(self) -> str:
        return self.events[-1]["status"] if self.events else "PENDING"

    @property
    def last_event(self) -> dict[str, Any]:
        return self.events[-1] if self.events else {}

    def summary(self) -> dict[str, Any]:
        """A flat row for tables (the Space's queue, the CLI)."""
        meta = self.request["metadata"]
        last = self.last_event
        return {
            "request_id": self.request_id,
            "name": meta["name"],
            "version": meta["version"],
            "track": self.request["track"],
            "status": self.status,
            "submitted_at": self.request["submitted_at"],
            "updated_at": last.get("at"),
            "reason": last.get("reason") or "",
            "log_excerpt": last.get("log_excerpt") or "",
            "result_record_ids": last.get("result_record_ids", []),
        }


class RequestStore:
    """The local requests store (default ``requests/`` or ``$GECOBENCH_REQUESTS``)."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root or os.environ.get(REQUESTS_ENV, DEFAULT_REQUESTS_DIR))

    def __repr__(self) -> str:
        return f"RequestStore({str(self.root)!r})"

    def write_new(self, path: Path, payload: bytes) -> None:
        """Create a new file; ``FileExistsError`` when it exists. Every write of the store goes through here."""
        atomic_create(path, payload)

    def refresh(self) -> None:
        """Bring the local view up to date (a no-op for a local folder; the Hub store downloads)."""

    def _folder(self, request_id: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{32}", request_id or ""):
            raise ValueError(f"invalid request id {request_id!r}")
        return self.root / request_id

    def payload_path(self, request_id: str) -> Path:
        request = self.get(request_id).request
        return self._folder(request_id) / "payload" / request["payload_file"]

    def create(self, request: dict[str, Any], payload: bytes) -> RequestView:
        """Store a new request with its payload and its PENDING event."""
        request = dict(request)
        request.setdefault("request_id", uuid.uuid4().hex)
        request.setdefault("schema_version", REQUEST_SCHEMA_VERSION)
        request.setdefault("record_type", "request")
        request.setdefault("submitted_at", utc_now())
        jsonschema.validate(request, REQUEST_SCHEMA)
        folder = self._folder(request["request_id"])
        self.write_new(folder / "payload" / request["payload_file"], payload)
        self.write_new(folder / "request.json", json.dumps(request, indent=2, sort_keys=True).encode("utf-8"))
        self._append_event(request["request_id"], {"status": "PENDING"}, expected_sequence=0)
        return self.get(request["request_id"])

    def _events(self, request_id: str) -> tuple[list[dict[str, Any]], str | None]:
        """The valid prefix of the request's events, and what is wrong with the first invalid one (or None)."""
        events: list[dict[str, Any]] = []
        folder = self._folder(request_id) / "events"
        if not folder.exists():
            return events, "no events"
        names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
        for index, name in enumerate(names):
            where = f"request {request_id} event file {name}"
            if not _EVENT_NAME.match(name) or int(name[:4]) != index:
                return events, f"{where}: unexpected name (expected {index:04d}.json)"
            path = folder / name
            try:
                if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_EVENT_BYTES:
                    return events, f"{where}: not a regular file of at most {MAX_EVENT_BYTES} bytes"
                event = json.loads(path.read_text(encoding="utf-8"))
                jsonschema.validate(event, EVENT_SCHEMA)
            except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
                return events, f"{where}: not readable JSON ({type(err).__name__})"
            except jsonschema.ValidationError as err:
                return events, f"{where}: {err.message}"
            if event["sequence"] != index:
                return events, f"{where}: sequence {event['sequence']} does not match its position {index}"
            previous = events[-1]["status"] if events else None
            if (previous is None and event["status"] != "PENDING") or (
                    previous is not None and event["status"] not in TRANSITIONS[previous]):
                return events, f"{where}: illegal transition {previous} -> {event['status']}"
            events.append(event)
        return events, None if events else "no events"

    def _append_event(self, request_id: str, event: dict[str, Any], expected_sequence: int) -> dict[str, Any]:
        event = {"at": utc_now(), "sequence": expected_sequence, **event}
        jsonschema.validate(event, EVENT_SCHEMA)
        # The file name is the sequence number alone, so the exclusive create *is* the claim of the slot.
        path = self._folder(request_id) / "events" / f"{expected_sequence:04d}.json"
        try:
            self.write_new(path, json.dumps(event, indent=2, sort_keys=True).encode("utf-8"))
        except FileExistsError:
            raise TransitionError(
                f"request {request_id}: status slot {expected_sequence} was taken by another worker"
            ) from None
        return event

    def transition(self, request_id: str, new_status: str, **details: Any) -> dict[str, Any]:
        """Move a request to ``new_status`` if the state machine allows it; atomic across workers."""
        if new_status not in STATUSES:
            raise ValueError(f"unknown status {new_status!r}; expected one of {STATUSES}")
        self.refresh()
        view = self.get(request_id)
        if new_status not in TRANSITIONS[view.status]:
            raise TransitionError(f"request {request_id}: cannot go from {view.status} to {new_status}")
        return self._append_event(request_id, {"status": new_status, **details}, expected_sequence=len(view.events))

    def get(self, request_id: str) -> RequestView:
        folder = self._folder(request_id)
        request_path = folder / "request.json"
        if not request_path.exists():
            raise KeyError(f"no request {request_id} in {self}")
        if request_path.is_symlink() or request_path.stat().st_size > MAX_REQUEST_BYTES:
            raise ValueError(f"{request_path}: not a regular file of at most {MAX_REQUEST_BYTES} bytes")
        request = json.loads(request_path.read_text(encoding="utf-8"))
        try:
            jsonschema.validate(request, REQUEST_SCHEMA)
        except jsonschema.ValidationError as err:
            raise ValueError(f"{request_path}: {err.message}") from None
        if request["request_id"] != request_id:
            raise ValueError(f"{request_path}: request_id {request['request_id']} does not match its folder")
        events, problem = self._events(request_id)
        return RequestView(request=request, events=events, integrity_error=problem)

    def iter_requests(self) -> Iterator[RequestView]:
        if not self.root.exists():
            return
        for folder in sorted(self.root.iterdir()):
            if folder.is_dir() and (folder / "request.json").exists():
                try:
                    yield self.get(folder.name)
                except (ValueError, KeyError, OSError, UnicodeDecodeError, RecursionError):
                    continue  # a malformed or forged request folder is no request (json errors are ValueErrors)

    def list(self, status: str | None = None) -> list[RequestView]:
        """All requests (optionally of one status), oldest first."""
        self.refresh()
        views = [v for v in self.iter_requests() if status is None or v.status == status]
        return sorted(views, key=lambda v: (v.request["submitted_at"], v.request_id))
