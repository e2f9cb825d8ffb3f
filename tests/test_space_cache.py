"""The Space's validated-record disk cache: restarts skip validation, changed files are read again."""

from __future__ import annotations

import json

import pytest

import leaderboard_space.data as space_data
from gecobench.store import LocalStore
from leaderboard_space.data import ResultsLoader
from leaderboard_space.sample_records import sample_records


@pytest.fixture
def store_root(tmp_path):
    store = LocalStore(tmp_path / "results")
    for record in sample_records(6, with_bias=False):
        store.append(record)
    return store.root


def test_a_restarted_loader_trusts_the_cache_and_rereads_changed_files(store_root, tmp_path, monkeypatch):
    first = ResultsLoader(str(store_root), cache_dir=tmp_path / "cache")
    loaded = first.load()
    first.wait_for_cache()
    assert len(loaded.documents) == 6 and list((tmp_path / "cache").glob("space-records-*.pkl"))

    def refuse(_text):
        raise AssertionError("a cached, unchanged file was parsed again")

    monkeypatch.setattr(space_data, "load_record_json", refuse)
    restarted = ResultsLoader(str(store_root), cache_dir=tmp_path / "cache").load()
    assert sorted(d["record_id"] for d in restarted.documents) == sorted(d["record_id"] for d in loaded.documents)
    assert restarted.changed  # a fresh process must still build its tables

    monkeypatch.undo()
    victim = sorted(store_root.rglob("*.json"))[0]
    victim.write_text(json.dumps({"record_type": "explainer_score"}) + " " * 50)  # damaged after caching
    again = ResultsLoader(str(store_root), cache_dir=tmp_path / "cache").load()
    assert len(again.documents) == 5 and any(victim.name in w for w in again.warnings)


def test_the_cache_is_ignored_after_a_schema_or_package_change(store_root, tmp_path, monkeypatch):
    loader = ResultsLoader(str(store_root), cache_dir=tmp_path / "cache")
    loader.load()
    loader.wait_for_cache()
    monkeypatch.setattr(space_data, "_cache_stamp", lambda: "gecobench 99 / schema 9.9")
    calls = []
    real = space_data.load_record_json
    monkeypatch.setattr(space_data, "load_record_json", lambda text: calls.append(1) or real(text))
    assert len(ResultsLoader(str(store_root), cache_dir=tmp_path / "cache").load().documents) == 6
    assert len(calls) == 6  # everything validated again


def test_a_damaged_cache_file_only_costs_a_cold_read(store_root, tmp_path):
    cache = tmp_path / "cache"
    loader = ResultsLoader(str(store_root), cache_dir=cache)
    loader.load()
    loader.wait_for_cache()
    for file in cache.glob("*.pkl"):
        file.write_bytes(b"not a pickle")
    assert len(ResultsLoader(str(store_root), cache_dir=cache).load().documents) == 6
    assert len(ResultsLoader(str(store_root), cache_dir=False).load().documents) == 6
