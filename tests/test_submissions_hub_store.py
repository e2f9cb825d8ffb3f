"""The Hub-backed requests store keeps the local store's guarantees, against an in-memory stand-in of the Hub."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from submissions import SubmissionError, TransitionError, submit_request
from submissions.hub_requests import HubRequestStore, open_requests_store
from submissions.requests import RequestStore

EXAMPLE = Path(__file__).resolve().parent.parent / "submissions" / "examples" / "gradient_norm_explainer.py"
META = {"name": "gradient_norm", "version": "1.0.0", "authors": "Ada", "description": "d", "license": "MIT",
        "contact": "ada@example.org"}


class ParentMovedError(Exception):
    """What the Hub answers (HTTP 412) when ``parent_commit`` is no longer the head."""

    response = SimpleNamespace(status_code=412)


class FakeHub:
    """One dataset repository: files, and a head that moves with every commit."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.commits = 0

    @property
    def head(self) -> str:
        return f"{self.commits:040d}"

    def repo_info(self, repo_id, repo_type):
        return SimpleNamespace(sha=self.head)

    def snapshot_download(self, repo_id, repo_type, revision, local_dir):
        assert revision == self.head
        for name, payload in self.files.items():
            target = Path(local_dir) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(payload)
        return local_dir

    def create_commit(self, repo_id, repo_type, parent_commit, operations, commit_message):
        if parent_commit != self.head:
            raise ParentMovedError("A commit has happened since the parent commit")
        for op in operations:
            assert op.path_in_repo not in self.files, "the store must never overwrite"
            self.files[op.path_in_repo] = op.path_or_fileobj
        self.commits += 1
        return SimpleNamespace(oid=self.head)


def test_requests_round_trip_through_the_hub_repository(tmp_path):
    hub = FakeHub()
    submitter_side = HubRequestStore("org/requests", api=hub, local_dir=tmp_path / "a")
    view = submit_request(submitter_side, "code", META, EXAMPLE.name, EXAMPLE.read_bytes(), submitter="ada")
    assert any(name.endswith("request.json") for name in hub.files)

    worker_side = HubRequestStore("org/requests", api=hub, local_dir=tmp_path / "b")
    assert [v.request_id for v in worker_side.list("PENDING")] == [view.request_id]
    worker_side.transition(view.request_id, "RUNNING", worker="w1")
    worker_side.transition(view.request_id, "FINISHED", result_record_ids=["abc"])
    assert [e["status"] for e in submitter_side.get(view.request_id).events] == ["PENDING"]  # stale copy
    submitter_side.refresh()
    assert submitter_side.get(view.request_id).status == "FINISHED"
    with pytest.raises(SubmissionError, match="duplicate"):
        submit_request(submitter_side, "code", META, EXAMPLE.name, EXAMPLE.read_bytes(), submitter="ada")


def test_two_workers_racing_for_one_request_cannot_both_claim_it(tmp_path):
    hub = FakeHub()
    first = HubRequestStore("org/requests", api=hub, local_dir=tmp_path / "a")
    view = submit_request(first, "code", META, EXAMPLE.name, EXAMPLE.read_bytes())
    second = HubRequestStore("org/requests", api=hub, local_dir=tmp_path / "b")
    pending = second.get(view.request_id)  # both workers saw PENDING ...
    first.transition(view.request_id, "RUNNING", worker="w1")  # ... the first one commits its claim
    second.refresh = lambda: None  # the second acts on its stale copy, as in a real race
    with pytest.raises(TransitionError, match="taken"):
        second._append_event(view.request_id, {"status": "RUNNING", "worker": "w2"}, len(pending.events))
    events = sorted(name for name in hub.files if "/events/" in name)
    assert len(events) == 2  # PENDING and the single RUNNING


def test_open_requests_store_picks_the_backend(tmp_path, monkeypatch):
    monkeypatch.delenv("GECOBENCH_REQUESTS_REPO", raising=False)
    assert type(open_requests_store(str(tmp_path))) is RequestStore
    import submissions.hub_requests as module

    made = []
    monkeypatch.setattr(module, "HubRequestStore", lambda repo, token=None: made.append(repo) or "hub")
    assert open_requests_store("hf://datasets/org/requests") == "hub" and made == ["org/requests"]
    monkeypatch.setenv("GECOBENCH_REQUESTS_REPO", "org/other")
    assert open_requests_store() == "hub" and made[-1] == "org/other"
