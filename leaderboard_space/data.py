"""Reading the results store for the Space, incrementally.

The store is append-only, so a document once read and validated never changes: :class:`ResultsLoader`
keeps every parsed document keyed by (path, size, mtime) and a refresh reads and validates only the files
it has not seen. A Hub store (``hf://`` or ``$GECOBENCH_RESULTS_REPO``) is read through
:meth:`gecobench.store.HubStore.read_all`, whose snapshot download is itself incremental.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gecobench
from gecobench.records import SCHEMA_VERSION, RecordValidationError, load_record_json
from gecobench.store import LocalStore, open_results_store


@dataclass
class LoadedResults:
    """Valid documents, warnings for skipped ones, and where they came from."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: str = ""
    changed: bool = True  # False when a local store had no new, changed or removed files since the last load

    @property
    def explainer_records(self) -> list[dict[str, Any]]:
        return [d for d in self.documents if d.get("record_type") == "explainer_score"]

    @property
    def bias_records(self) -> list[dict[str, Any]]:
        return [d for d in self.documents if d.get("record_type") == "model_bias"]


def _cache_stamp() -> str:
    return f"gecobench {gecobench.__version__} / schema {SCHEMA_VERSION}"


def describe_location(location: str | None) -> str:
    """Where the results come from, in words (the argument, the environment, or the default folder)."""
    if location:
        return location
    if os.environ.get("GECOBENCH_RESULTS_REPO"):
        return f"hf://datasets/{os.environ['GECOBENCH_RESULTS_REPO']}"
    return os.environ.get("GECOBENCH_RESULTS", "results")


def default_cache_dir() -> Path:
    """Where the Space keeps its validated-record cache: ``$GECOBENCH_CACHE`` or ``~/.cache/gecobench``."""
    return Path(os.environ.get("GECOBENCH_CACHE", Path.home() / ".cache" / "gecobench"))


class ResultsLoader:
    """Loads the results store, re-reading only new files of a local store on each :meth:`load`.

    What was read is also kept on disk (``cache_dir``, one pickle per store): a restarted Space trusts an entry
    only while its file keeps the same size and modification time — files of an append-only store never change —
    and re-validates everything when the package or the record schema version changes. ``cache_dir=False``
    turns the disk cache off.
    """

    def __init__(self, location: str | None = None, cache_dir: str | os.PathLike[str] | bool | None = None) -> None:
        self.location = location
        self._seen: dict[Path, tuple[tuple[int, int], dict[str, Any] | None, str | None]] = {}
        self._lock = threading.Lock()
        self._cache_dir = None if cache_dir is False else Path(cache_dir) if cache_dir else default_cache_dir()
        self._cache_writer: threading.Thread | None = None

    def wait_for_cache(self, timeout: float | None = None) -> None:
        """Block until the last disk-cache write finished (tests, benchmarks, clean shutdown)."""
        if self._cache_writer is not None:
            self._cache_writer.join(timeout)

    def _cache_file(self, store: LocalStore) -> Path | None:
        if self._cache_dir is None:
            return None
        key = hashlib.sha256(str(store.root.resolve()).encode("utf-8")).hexdigest()[:16]
        return self._cache_dir / f"space-records-{key}.pkl"

    def _read_cache(self, store: LocalStore) -> None:
        path = self._cache_file(store)
        if path is None or not path.is_file():
            return
        try:
            with open(path, "rb") as handle:
                payload = pickle.load(handle)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            return  # a damaged cache is only slower: everything is read again
        if payload.get("stamp") == _cache_stamp():
            self._seen = {Path(p): entry for p, entry in payload["entries"].items()}

    def _write_cache(self, store: LocalStore) -> None:
        """Save the cache in a background thread, so the first page does not wait for the pickling."""
        path = self._cache_file(store)
        if path is None:
            return
        snapshot = dict(self._seen)
        thread = threading.Thread(target=self._dump_cache, args=(path, snapshot), daemon=True, name="space-cache")
        thread.start()
        self._cache_writer = thread

    @staticmethod
    def _dump_cache(path: Path, entries: dict[Path, Any]) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".space-records-", dir=path.parent)
            with os.fdopen(fd, "wb") as handle:
                pickle.dump({"stamp": _cache_stamp(), "entries": {str(p): e for p, e in entries.items()}},
                            handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home (some Space hardware) only costs the next cold start

    def load(self) -> LoadedResults:
        source = describe_location(self.location)
        try:
            store = open_results_store(self.location)
        except Exception as err:  # a missing hub library or bad token must not take the Space down
            return LoadedResults(warnings=[f"cannot open the results store {source}: {err}"], source=source)
        if not isinstance(store, LocalStore):
            try:
                report = store.read_all()
            except Exception as err:  # network, auth, missing repo: show it, keep the Space up
                return LoadedResults(warnings=[f"cannot read the results store {source}: {err}"], source=source)
            return LoadedResults(documents=report.documents, warnings=report.warnings, source=source)
        with self._lock:
            return self._load_local(store, source)

    def _load_local(self, store: LocalStore, source: str) -> LoadedResults:
        result = LoadedResults(source=source)
        if not store.root.exists():
            return result
        first_load = not self._seen
        if first_load:
            self._read_cache(store)
        seen_now = {}
        changed = False
        for path in store.iter_paths():
            try:
                stat = path.stat()
            except OSError as err:
                result.warnings.append(f"skipped {path}: {err}")
                continue
            key = (stat.st_size, stat.st_mtime_ns)
            cached = self._seen.get(path)
            if cached is None or cached[0] != key:
                cached = (key, *self._read(path))
                changed = True
            seen_now[path] = cached
            document, warning = cached[1], cached[2]
            if document is not None:
                result.documents.append(document)
            if warning is not None:
                result.warnings.append(warning)
        result.changed = changed or len(seen_now) != len(self._seen) or first_load
        if changed or len(seen_now) != len(self._seen):
            self._seen = seen_now
            self._write_cache(store)
        self._seen = seen_now
        return result

    @staticmethod
    def _read(path: Path) -> tuple[dict[str, Any] | None, str | None]:
        try:
            document = load_record_json(path.read_bytes())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecordValidationError, ValueError) as err:
            return None, f"skipped {path}: {err}"
        return document, None
