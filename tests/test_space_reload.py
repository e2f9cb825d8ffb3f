"""The Space's loader re-reads only what changed in an append-only local store."""

from __future__ import annotations

import json

import pytest
from _sample_records import sample_records

from gecobench.store import LocalStore
from leaderboard_space.data import ResultsLoader


@pytest.fixture
def store_root(tmp_path):
    store = LocalStore(tmp_path / "results")
    for record in sample_records(6, with_bias=False):
        store.append(record)
    return store.root


def test_a_page_load_parses_only_new_or_changed_files(store_root, monkeypatch):
    loader = ResultsLoader(str(store_root))
    first = loader.load()
    assert len(first.documents) == 6 and first.changed

    parsed = []
    real = LocalStore.read_file
    monkeypatch.setattr(LocalStore, "read_file", lambda self, path: parsed.append(1) or real(self, path))
    again = loader.load()
    assert parsed == [] and not again.changed
    assert sorted(d["record_id"] for d in again.documents) == sorted(d["record_id"] for d in first.documents)

    victim = min(store_root.rglob("*.json"))
    victim.write_text(json.dumps({"record_type": "explainer_score"}) + " " * 50)  # damaged after the first read
    damaged = loader.load()
    assert parsed == [1] and damaged.changed
    assert len(damaged.documents) == 5 and any(victim.name in w for w in damaged.warnings)

    victim.unlink()
    removed = loader.load()
    assert removed.changed and len(removed.documents) == 5 and not removed.warnings


def test_a_new_loader_reads_everything_and_skips_a_partial_file(store_root):
    partial = store_root / "explainer_score" / "partial.json"
    partial.write_text('{"schema_version": "1.0", "record_type": "explainer_sc')
    loaded = ResultsLoader(str(store_root)).load()
    assert len(loaded.documents) == 6
    assert len(loaded.warnings) == 1 and "partial.json" in loaded.warnings[0] and "not valid JSON" in loaded.warnings[0]
