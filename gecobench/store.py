"""Append-only stores for JSON documents: result records and submission requests.

* :class:`LocalStore` — a folder (default ``results/``). A document is written to a temporary file, fsynced
  and then *linked* to its final name, so a reader never sees half a file and an existing document is
  never overwritten (``os.link`` fails when the name exists).
* :class:`HubStore` — a Hugging Face dataset repository (``huggingface_hub``), same layout, one commit per
  document; an existing path is never overwritten.

Layout: ``<root>/<record_type>/<record_id>.json``. Reading validates every document and returns the bad
ones as warnings instead of raising, so a UI can show them and go on.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gecobench.records import RecordValidationError, load_record_json, validate_record

DEFAULT_RESULTS_DIR = "results"
RESULTS_ENV = "GECOBENCH_RESULTS"
RESULTS_REPO_ENV = "GECOBENCH_RESULTS_REPO"


class DocumentExistsError(FileExistsError):
    """The store already holds a document under this id; stores never overwrite."""


@dataclass
class ReadReport:
    """Documents read from a store, plus one warning per document that was skipped."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Store(Protocol):
    def append(self, document: dict[str, Any]) -> str: ...
    def exists(self, document_type: str, document_id: str) -> bool: ...
    def read_all(self, document_type: str | None = None) -> ReadReport: ...


def atomic_create(path: Path, payload: bytes) -> None:
    """Create ``path`` with ``payload`` atomically; raise :class:`DocumentExistsError` if it exists.

    The payload goes to a temporary file that is fsynced and then hard-linked to ``path``: readers never see a
    partial file, and of two writers racing for one name exactly one wins (``os.link`` refuses an existing name).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp_name, path)
        except FileExistsError:
            raise DocumentExistsError(f"{path} already exists; the store is append-only") from None
    finally:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass


class LocalStore:
    """An append-only folder of JSON documents, validated with ``validator`` on write and on read."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        validator: Callable[[dict[str, Any]], Any] = validate_record,
        type_field: str = "record_type",
        id_field: str = "record_id",
    ) -> None:
        self.root = Path(root or os.environ.get(RESULTS_ENV, DEFAULT_RESULTS_DIR))
        self.validator = validator
        self.type_field = type_field
        self.id_field = id_field

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def path_for(self, document_type: str, document_id: str) -> Path:
        for part in (document_type, document_id):
            if not part or "/" in part or "\\" in part or part.startswith("."):
                raise ValueError(f"invalid document type or id {part!r}")
        return self.root / document_type / f"{document_id}.json"

    def exists(self, document_type: str, document_id: str) -> bool:
        return self.path_for(document_type, document_id).exists()

    def _parse(self, text: str | bytes) -> dict[str, Any]:
        if self.validator is validate_record:
            return load_record_json(text)
        document = json.loads(text)
        self.validator(document)
        return document

    def append(self, document: dict[str, Any]) -> str:
        """Validate and add ``document``; return its path. Never overwrites."""
        self.validator(document)
        path = self.path_for(document[self.type_field], document[self.id_field])
        payload = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8")
        atomic_create(path, payload)
        return str(path)

    def document_files(self, document_type: str | None = None) -> list[str]:
        """Paths (as strings, sorted) of every stored document, hidden temporary files excluded."""
        base = self.root / document_type if document_type else self.root
        found: list[str] = []
        for folder, _, names in os.walk(base):  # a missing base yields nothing
            found.extend(os.path.join(folder, n) for n in names if n.endswith(".json") and not n.startswith("."))
        return sorted(found)  # strings, not Paths: sorting 10,000 takes milliseconds

    def read(self, document_type: str, document_id: str) -> dict[str, Any]:
        path = self.path_for(document_type, document_id)
        return self._parse(path.read_text(encoding="utf-8"))

    def read_file(self, path: str | Path) -> tuple[dict[str, Any] | None, str | None]:
        """One stored file: ``(document, None)``, or ``(None, warning)`` when it cannot be read or is invalid."""
        try:
            with open(path, "rb") as handle:
                return self._parse(handle.read()), None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecordValidationError, ValueError) as err:
            return None, f"skipped {path}: {err}"

    def read_all(self, document_type: str | None = None) -> ReadReport:
        """Every valid document (optionally of one type); invalid ones become warnings, never exceptions."""
        report = ReadReport()
        for path in self.document_files(document_type):
            document, warning = self.read_file(path)
            if document is not None:
                report.documents.append(document)
            if warning is not None:
                report.warnings.append(warning)
        return report


class HubStore:
    """An append-only store in a Hugging Face dataset repository (``repo_id``), same layout as LocalStore."""

    def __init__(
        self,
        repo_id: str,
        token: str | None = None,
        validator: Callable[[dict[str, Any]], Any] = validate_record,
        type_field: str = "record_type",
        id_field: str = "record_id",
        cache_dir: str | None = None,
    ) -> None:
        from huggingface_hub import HfApi

        self.repo_id = repo_id
        self.api = HfApi(token=token)
        self.validator = validator
        self.type_field = type_field
        self.id_field = id_field
        self.cache_dir = cache_dir

    def __repr__(self) -> str:
        return f"HubStore({self.repo_id!r})"

    def _path_in_repo(self, document_type: str, document_id: str) -> str:
        LocalStore(".").path_for(document_type, document_id)  # same name rules
        return f"{document_type}/{document_id}.json"

    def exists(self, document_type: str, document_id: str) -> bool:
        return self.api.file_exists(self.repo_id, self._path_in_repo(document_type, document_id), repo_type="dataset")

    def append(self, document: dict[str, Any]) -> str:
        self.validator(document)
        path_in_repo = self._path_in_repo(document[self.type_field], document[self.id_field])
        if self.exists(document[self.type_field], document[self.id_field]):
            raise DocumentExistsError(f"{self.repo_id}:{path_in_repo} already exists; the store is append-only")
        payload = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8")
        self.api.upload_file(
            path_or_fileobj=payload, path_in_repo=path_in_repo, repo_id=self.repo_id, repo_type="dataset",
            commit_message=f"Add {path_in_repo}",
        )
        return f"hf://datasets/{self.repo_id}/{path_in_repo}"

    def read_all(self, document_type: str | None = None) -> ReadReport:
        from huggingface_hub import snapshot_download

        pattern = f"{document_type}/*.json" if document_type else "*/*.json"
        local = snapshot_download(self.repo_id, repo_type="dataset", allow_patterns=[pattern], cache_dir=self.cache_dir)
        return LocalStore(local, validator=self.validator, type_field=self.type_field, id_field=self.id_field).read_all(
            document_type
        )


def open_results_store(location: str | None = None, token: str | None = None) -> LocalStore | HubStore:
    """The results store: a Hub dataset repo when ``location`` starts with ``hf://`` (or ``$GECOBENCH_RESULTS_REPO``
    is set), else a local folder (``location``, ``$GECOBENCH_RESULTS`` or ``results/``)."""
    repo = hub_repo_of(location, RESULTS_REPO_ENV)
    if repo:
        return HubStore(repo, token=token or os.environ.get("HF_TOKEN"))
    return LocalStore(location)


def hub_repo_of(location: str | None, repo_env: str) -> str | None:
    """The dataset repo id a store location names (``hf://[datasets/]OWNER/NAME``, or ``$repo_env`` when no
    location is given); None for a local folder."""
    if location and location.startswith("hf://"):
        return location.removeprefix("hf://").removeprefix("datasets/")
    if location is None and os.environ.get(repo_env):
        return os.environ[repo_env]
    return None
