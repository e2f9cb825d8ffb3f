"""The requests store in a Hugging Face dataset repository, with the same guarantees as the local folder.

A local working copy (``snapshot_download``) serves every read. Every new file — a request, its payload, a
status event, a duplicate-check claim — is pushed as its own commit with ``parent_commit`` set to the
revision the copy was taken at, so the Hub refuses the commit when anyone else committed in between. The
store then re-downloads and reports the file as taken (``FileExistsError``), which the callers already treat
as "another worker/submitter was first": a request is claimed by exactly one worker, duplicates are refused,
and nothing is ever overwritten.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from gecobench.store import atomic_create, hub_repo_of
from submissions.requests import RequestStore

REQUESTS_REPO_ENV = "GECOBENCH_REQUESTS_REPO"


class HubRequestStore(RequestStore):
    """A :class:`~submissions.requests.RequestStore` whose files live in the dataset repo ``repo_id``."""

    def __init__(self, repo_id: str, token: str | None = None, local_dir: str | os.PathLike[str] | None = None,
                 api: Any = None) -> None:
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        self.api = api
        self.repo_id = repo_id
        super().__init__(local_dir or tempfile.mkdtemp(prefix="gecobench-requests-"))
        self.revision: str | None = None
        self.refresh()

    def __repr__(self) -> str:
        return f"HubRequestStore({self.repo_id!r})"

    def refresh(self) -> None:
        """Mirror the repository's current revision into the local working copy."""
        info = self.api.repo_info(self.repo_id, repo_type="dataset")
        if info.sha == self.revision:
            return
        staging = Path(tempfile.mkdtemp(prefix="gecobench-requests-sync-"))
        try:
            self.api.snapshot_download(self.repo_id, repo_type="dataset", revision=info.sha, local_dir=str(staging))
            if self.root.exists():
                shutil.rmtree(self.root)
            shutil.copytree(staging, self.root, ignore=shutil.ignore_patterns(".cache", ".gitattributes"))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self.revision = info.sha

    def write_new(self, path: Path, payload: bytes) -> None:
        from huggingface_hub import CommitOperationAdd

        self.refresh()
        if path.exists():
            raise FileExistsError(f"{path} already exists in {self.repo_id}")
        path_in_repo = path.relative_to(self.root).as_posix()
        try:
            commit = self.api.create_commit(
                repo_id=self.repo_id, repo_type="dataset", parent_commit=self.revision,
                operations=[CommitOperationAdd(path_in_repo=path_in_repo, path_or_fileobj=payload)],
                commit_message=f"Add {path_in_repo}",
            )
        except Exception as err:  # noqa: BLE001 - a moved parent (412/409) means someone else was first
            self.revision = None  # force a fresh download before anything else
            self.refresh()
            if path.exists() or _is_conflict(err):
                raise FileExistsError(f"{path_in_repo}: another writer committed first ({err})") from None
            raise
        atomic_create(path, payload)
        self.revision = getattr(commit, "oid", None) or self.api.repo_info(self.repo_id, repo_type="dataset").sha


def _is_conflict(err: Exception) -> bool:
    status = getattr(getattr(err, "response", None), "status_code", None)
    return status in (409, 412) or "parent" in str(err).lower()


def open_requests_store(location: str | None = None, token: str | None = None) -> RequestStore:
    """``hf://datasets/OWNER/NAME`` (or ``$GECOBENCH_REQUESTS_REPO``) → :class:`HubRequestStore`; else a folder."""
    repo = hub_repo_of(location, REQUESTS_REPO_ENV)
    if repo:
        return HubRequestStore(repo, token=token or os.environ.get("HF_TOKEN"))
    return RequestStore(location)
