"""Reading the results store for the Space, incrementally.

The store is append-only, so a document once read and validated never changes: :class:`ResultsLoader`
keeps every parsed document keyed by (path, size, mtime) and a refresh reads and validates only the files
it has not seen. A Hub store (``hf://`` or ``$GECOBENCH_RESULTS_REPO``) is read through
:meth:`gecobench.store.HubStore.read_all`, whose snapshot download is itself incremental.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

from gecobench.store import (
    LocalStore,
    bulk_reading,
    duplicate_warning,
    open_results_store,
)


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


def describe_location(location: str | None) -> str:
    """Where the results come from, in words (the argument, the environment, or the default folder)."""
    if location:
        return location
    if os.environ.get("GECOBENCH_RESULTS_REPO"):
        return f"hf://datasets/{os.environ['GECOBENCH_RESULTS_REPO']}"
    return os.environ.get("GECOBENCH_RESULTS", "results")


class ResultsLoader:
    """Loads the results store, re-reading only new files of a local store on each :meth:`load`.

    A restarted Space reads everything again: with ``orjson`` and ``jsonschema-rs`` 10,000 records take about
    0.6 s, as fast as the pickled disk cache this class used to keep (and whose background write competed with
    the first page for the interpreter).
    """

    def __init__(self, location: str | None = None) -> None:
        self.location = location
        self._seen: dict[str, tuple[tuple[int, int], dict[str, Any] | None, str | None]] = {}
        self._lock = threading.Lock()

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
        with self._lock, bulk_reading():
            return self._load_local(store, source)

    def _load_local(self, store: LocalStore, source: str) -> LoadedResults:
        result = LoadedResults(source=source)
        if not store.root.exists():
            return result
        first_load = not self._seen
        seen_now = {}
        changed = False
        first_file_of_id: dict[tuple[Any, Any], str] = {}
        for path in store.document_files():  # plain strings: 10,000 Path objects would cost ~0.1 s
            try:
                stat = os.stat(path)
            except OSError as err:
                result.warnings.append(f"skipped {path}: {err}")
                continue
            key = (stat.st_size, stat.st_mtime_ns)
            cached = self._seen.get(path)
            if cached is None or cached[0] != key:
                cached = (key, *store.read_file(path))
                changed = True
            seen_now[path] = cached
            document, warning = cached[1], cached[2]
            if document is not None:
                # A copy of a record under another file name would be counted twice: the first file wins.
                warning = duplicate_warning(document, path, first_file_of_id, store.type_field, store.id_field)
                if warning is None:
                    result.documents.append(document)
            if warning is not None:
                result.warnings.append(warning)
        result.changed = changed or len(seen_now) != len(self._seen) or first_load
        self._seen = seen_now
        return result
