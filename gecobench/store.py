"""Append-only stores for JSON documents: result records and submission requests.

* :class:`LocalStore` — a folder (default ``results/``). A document is written to a temporary file, fsynced
  and then *linked* to its final name, so a reader never sees half a file and an existing document is
  never overwritten (``os.link`` fails when the name exists).
* :class:`HubStore` — a Hugging Face dataset repository (``huggingface_hub``), same layout, one commit per
  document; an existing path is never overwritten.

Layout: ``<root>/<record_type>/<record_id>.json``. A local store may also be made of **parts**: other store folders
beside it, named in ``<root>/parts.json``, whose documents it reads as its own (:meth:`LocalStore.add_part`). The
reference store uses them so that promoting a seed names the folder its units were committed to instead of copying
every record (a copy doubles what the repository's history carries; ``reference/README.md``). Parts are read, never
written: a document is always written under ``<root>``. Writing refuses, and reading skips with a warning (so a UI
can show them and go on), every document that is not a valid record: schema, non-finite numbers, values
outside their metric's range, an id that is not the hash of the record's identity, a second document with an
id already read (a duplicate), a file over the size cap, nesting beyond the depth limit, bytes that are not
UTF-8 JSON. Nothing a store holds makes :meth:`LocalStore.read_all` raise.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gecobench.records import (
    MAX_RECORD_BYTES,
    MAX_RECORD_DEPTH,
    RecordValidationError,
    load_record_json,
    load_stored_record,
    nesting_depth,
    validate_record,
    validate_stored_record,
)

DEFAULT_RESULTS_DIR = "results"
#: the file at a local store's root that names its parts (:meth:`LocalStore.add_part`)
PARTS_FILE = "parts.json"
PARTS_FORMAT = "gecobench-store-parts/1"
MAX_PARTS_BYTES = 64 * 1024
RESULTS_ENV = "GECOBENCH_RESULTS"
RESULTS_REPO_ENV = "GECOBENCH_RESULTS_REPO"


@contextlib.contextmanager
def bulk_reading() -> Iterator[None]:
    """Pause the cyclic garbage collector while many documents are parsed.

    Every parsed document stays alive, so each full collection walks all of them again: with the identity and
    depth checks of a read, collections took longer than the reading itself on 10,000 records. JSON documents
    hold no reference cycles, so nothing is lost by collecting once, afterwards (as the interpreter does when
    collection is re-enabled and its thresholds are crossed).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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
    """An append-only folder of JSON documents, validated with ``validator`` on write and on read.

    The default validator is the results store's (:func:`gecobench.records.validate_stored_record`); other
    document kinds (submission requests) pass their own. Every kind gets the size cap (``max_bytes``), the
    depth limit and the duplicate-id check on read.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        validator: Callable[[dict[str, Any]], Any] = validate_stored_record,
        type_field: str = "record_type",
        id_field: str = "record_id",
        max_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        self.root = Path(root or os.environ.get(RESULTS_ENV, DEFAULT_RESULTS_DIR))
        self.validator = validator
        self.type_field = type_field
        self.id_field = id_field
        self.max_bytes = max_bytes

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def path_for(self, document_type: str, document_id: str) -> Path:
        for part in (document_type, document_id):
            if not part or "/" in part or "\\" in part or part.startswith("."):
                raise ValueError(f"invalid document type or id {part!r}")
        return self.root / document_type / f"{document_id}.json"

    def exists(self, document_type: str, document_id: str) -> bool:
        """Whether the store holds this document, under its root or in one of its parts."""
        self.path_for(document_type, document_id)  # the name rules, before any folder is looked at
        return self._locate(document_type, document_id) is not None

    def _locate(self, document_type: str, document_id: str) -> Path | None:
        for folder in self.folders():
            path = folder / document_type / f"{document_id}.json"
            if path.exists():
                return path
        return None

    # -- parts ----------------------------------------------------------------------------------------------
    def parts(self) -> tuple[list[Path], list[str]]:
        """The folders of this store's parts (``<root>/parts.json``), and a warning for each entry that is not
        used. A part must be a relative path to an existing folder inside the folder that holds the root (a
        sibling store, or one further down beside it), neither the root nor inside it; parts of parts are not
        followed. A missing, unreadable or malformed parts file gives no parts (and, unless missing, a warning):
        like every document, it never makes reading raise."""
        path = self.root / PARTS_FILE
        if not path.is_file():
            return [], []
        try:
            if path.stat().st_size > MAX_PARTS_BYTES:
                raise ValueError(f"more than {MAX_PARTS_BYTES} bytes")
            document = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(document, dict) or document.get("format") != PARTS_FORMAT:
                raise ValueError(f"not a {PARTS_FORMAT} document")
            entries = document.get("parts")
            if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
                raise ValueError("'parts' must be a list of relative paths")
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
            return [], [f"skipped the parts of {self.root}: {path.name}: {err}"]
        root = self.root.resolve()
        folders, warnings = [], []
        for entry in entries:
            candidate = (self.root / entry).resolve()
            problem = None
            if not entry or entry.startswith("/") or "\\" in entry:
                problem = "not a relative POSIX path"
            elif candidate == root or root in candidate.parents or not candidate.is_relative_to(root.parent):
                problem = f"outside {root.parent} or inside the store itself"
            elif not candidate.is_dir():
                problem = "no such folder"
            if problem:
                warnings.append(f"skipped part {entry!r} of {self.root}: {problem}")
            elif candidate not in folders:
                folders.append(candidate)
        return folders, warnings

    def folders(self) -> list[Path]:
        """The root, then every usable part (:meth:`parts`): where the store's documents and side files are."""
        return [self.root, *self.parts()[0]]

    def add_part(self, folder: str | os.PathLike[str]) -> Path:
        """Name ``folder`` (a store folder beside this one, see :meth:`parts`) in ``parts.json``; return the
        parts file. Adding a part already named changes nothing. Refused (ValueError) for a folder a reader would
        skip, and while a document of the part has the id of one this store already holds (it would be read
        twice)."""
        target = Path(folder).resolve()
        root = self.root.resolve()
        entry = os.path.relpath(target, root).replace(os.sep, "/")
        if target == root or root in target.parents or not target.is_relative_to(root.parent):
            raise ValueError(f"{folder}: a part must be a folder inside {root.parent}, not the store {root} or "
                             "inside it")
        if not target.is_dir():
            raise ValueError(f"{folder}: no such folder")
        current, warnings = self.parts()
        if warnings:  # rewriting the file would drop what a reader skips now: it is the maintainer's to mend
            raise ValueError(f"{self.root / PARTS_FILE} does not read ({warnings[0]}): fix it before adding a part")
        if target in current:
            return self.root / PARTS_FILE
        mine = {Path(p).relative_to(f).as_posix() for f in self.folders() for p in _json_documents(f, None)}
        clash = sorted(Path(p).relative_to(target).as_posix() for p in _json_documents(target, None)
                       if Path(p).relative_to(target).as_posix() in mine)
        if clash:
            raise ValueError(f"{folder}: {len(clash)} document(s) already in {self.root} ({clash[0]}, …)")
        document = {"format": PARTS_FORMAT,
                    "parts": [os.path.relpath(p, root).replace(os.sep, "/") for p in current] + [entry]}
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / PARTS_FILE
        fd, tmp_name = tempfile.mkstemp(prefix=f".{PARTS_FILE}.", suffix=".tmp", dir=self.root)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(document, indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)  # the parts file is the one file a store replaces: readers see old or new
        return path

    def _parse(self, text: str | bytes) -> dict[str, Any]:
        if len(text) > self.max_bytes:
            raise ValueError(f"{len(text)} bytes is more than a document may hold ({self.max_bytes} bytes)")
        if self.validator is validate_stored_record:
            return load_stored_record(text)
        if self.validator is validate_record:
            return load_record_json(text)
        try:
            document = json.loads(text)
        except RecursionError:
            raise ValueError("not valid JSON: nested too deeply") from None
        if nesting_depth(document, MAX_RECORD_DEPTH) > MAX_RECORD_DEPTH:
            raise ValueError(f"nested more than {MAX_RECORD_DEPTH} levels deep")
        self.validator(document)
        return document

    def append(self, document: dict[str, Any]) -> str:
        """Validate and add ``document``; return its path. Never overwrites.

        Raises:
            RecordValidationError / ValueError: the document is invalid (see the module docstring) or larger
                than ``max_bytes``; nothing is written.
            DocumentExistsError: a document with this id is already stored.
        """
        self.validator(document)
        path = self.path_for(document[self.type_field], document[self.id_field])
        payload = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8")
        if len(payload) > self.max_bytes:
            raise ValueError(f"{path.name}: {len(payload)} bytes is more than a document may hold ({self.max_bytes})")
        elsewhere = self._locate(document[self.type_field], document[self.id_field])
        if elsewhere is not None and elsewhere != path:
            raise DocumentExistsError(f"{elsewhere} (a part of {self.root}) already holds this document; the store "
                                      "is append-only")
        atomic_create(path, payload)
        return str(path)

    def document_files(self, document_type: str | None = None, folders: Sequence[Path] | None = None) -> list[str]:
        """Paths (as strings, sorted) of every stored document, hidden temporary files excluded.

        Documents live in ``<document_type>/`` folders (:meth:`path_for`) of the root and of each part
        (:meth:`parts`), the root's listed first: a JSON file at a folder's top is a companion of the store's card
        (the reference dataset's ``zoo_summary.json``) or the parts file, not a document, as for
        :meth:`HubStore.read_all`, whose ``*/*.json`` pattern leaves it out too. ``folders``: :meth:`folders`, read
        once by a caller that needs the parts file's warnings too."""
        found: list[str] = []
        for folder in self.folders() if folders is None else folders:  # the root's first (a duplicate names it)
            found.extend(_json_documents(folder, document_type))
        return found

    def read(self, document_type: str, document_id: str) -> dict[str, Any]:
        path = self._locate(document_type, document_id) or self.path_for(document_type, document_id)
        return self._parse(path.read_text(encoding="utf-8"))

    def read_file(self, path: str | Path) -> tuple[dict[str, Any] | None, str | None]:
        """One stored file: ``(document, None)``, or ``(None, warning)`` when it cannot be read or is invalid.

        Never raises: a file larger than ``max_bytes`` is not read (and of one that grows while it is read, no
        more than ``max_bytes + 1`` bytes), and any error of parsing or validation becomes the warning.
        """
        try:
            with open(path, "rb") as handle:
                # The size from fstat on the open file, not read(max_bytes + 1): that allocates the whole cap for
                # every file, which made reading a 10,000-record store four times slower.
                size = os.fstat(handle.fileno()).st_size
                payload = b"" if size > self.max_bytes else handle.read(size + 1)
                too_large = size > self.max_bytes or len(payload) > self.max_bytes
            if too_large:
                return None, f"skipped {path}: more than {self.max_bytes} bytes, the most a document may hold"
            document = self._parse(payload)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecordValidationError, ValueError) as err:
            return None, f"skipped {path}: {err}"
        except Exception as err:  # noqa: BLE001 (whatever else a hostile file provokes must not stop the reader)
            return None, f"skipped {path}: {type(err).__name__}: {err}"
        if not isinstance(document, dict):
            return None, f"skipped {path}: not a JSON object"
        return document, None

    def read_all(self, document_type: str | None = None) -> ReadReport:
        """Every valid document (optionally of one type); invalid ones become warnings, never exceptions.

        A document whose id was already read (a copy under another file name) is skipped with a warning
        naming the first file: it would otherwise be counted twice.
        """
        report = ReadReport()
        parts, part_warnings = self.parts()  # the parts file read once: its folders and its warnings
        report.warnings.extend(part_warnings)
        paths = self.document_files(document_type, [self.root, *parts])
        first_seen: dict[tuple[Any, Any], str] = {}
        with bulk_reading():
            for path in paths:
                document, warning = self.read_file(path)
                if document is not None:
                    warning = duplicate_warning(document, path, first_seen, self.type_field, self.id_field)
                    if warning is None:
                        report.documents.append(document)
                if warning is not None:
                    report.warnings.append(warning)
        return report


def _json_documents(store_root: Path, document_type: str | None) -> list[str]:
    """Paths (strings, sorted) of the JSON documents under one store folder: ``<type>/*.json`` below it (JSON files
    at its top, the parts file and a card's companions, are not documents), hidden temporary files excluded."""
    base = store_root / document_type if document_type else store_root
    found: list[str] = []
    for folder, _, names in os.walk(base):  # a missing base yields nothing
        if document_type is None and folder == os.fspath(base):  # os.walk yields the top as given
            continue
        found.extend(os.path.join(folder, n) for n in names if n.endswith(".json") and not n.startswith("."))
    return sorted(found)  # strings, not Paths: sorting 10,000 takes milliseconds


def duplicate_warning(
    document: dict[str, Any], path: str, first_seen: dict[tuple[Any, Any], str], type_field: str, id_field: str
) -> str | None:
    """None for the first document with its (type, id), remembered in ``first_seen``; a warning for a repeat."""
    key = (document.get(type_field), document.get(id_field))
    if key in first_seen:
        return f"skipped {path}: duplicate of {first_seen[key]} (same {id_field} {key[1]})"
    first_seen[key] = str(path)
    return None


class HubStore:
    """An append-only store in a Hugging Face dataset repository (``repo_id``), same layout as LocalStore."""

    def __init__(
        self,
        repo_id: str,
        token: str | None = None,
        validator: Callable[[dict[str, Any]], Any] = validate_stored_record,
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
        if len(payload) > MAX_RECORD_BYTES:
            raise ValueError(f"{path_in_repo}: {len(payload)} bytes is more than a document may hold ({MAX_RECORD_BYTES})")
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
