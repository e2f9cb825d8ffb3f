"""The shared contracts: the word/token rule, the explainer registry, record validation and the append-only store."""

from __future__ import annotations

import json
import math
import os
import threading

import numpy as np
import pytest
import torch

from gecobench.explainers.base import Explainer, get_explainer_class, register_explainer
from gecobench.provenance import (
    base_provenance,
    cpu_model,
    fingerprint_rows,
    machine_description,
)
from gecobench.records import (
    SCHEMA_VERSION,
    RecordValidationError,
    expected_record_id,
    record_id_for,
    validate_record,
)
from gecobench.store import DocumentExistsError, LocalStore
from gecobench.words import fold_token_scores_to_words, tokenize_words


def test_fold_takes_absolute_value_and_sums_per_word_dropping_special_tokens():
    scores = [10.0, -1.0, 2.0, -0.5, 7.0]
    word_ids = [None, 0, 0, 1, None]
    folded = fold_token_scores_to_words(scores, word_ids)
    assert folded.tolist() == [3.0, 0.5]


def test_fold_keeps_words_without_tokens_as_zero_and_checks_lengths():
    assert fold_token_scores_to_words([1.0], [0], n_words=3).tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="word_ids"):
        fold_token_scores_to_words([1.0, 2.0], [0])
    with pytest.raises(ValueError, match="n_words"):
        fold_token_scores_to_words([1.0, 2.0], [0, 3], n_words=2)


def test_tokenize_words_keeps_word_ids_for_multi_token_and_spaced_words(bert_tokenizer):
    encoding, word_ids = tokenize_words(bert_tokenizer, [["Mx. ", "Bennet", "dances"], ["He", "sings"]])
    first = word_ids[0]
    assert first[0] is None  # [CLS]
    assert sorted({w for w in first if w is not None}) == [0, 1, 2]
    assert first.count(0) >= 2  # "Mx." splits into "mx" + "."
    assert encoding["input_ids"].shape[0] == 2
    assert word_ids[1][-1] is None  # padding of the shorter sentence carries no word


def test_tokenize_words_from_its_cache_equals_the_tokenizer(bert_tokenizer):
    """A batch assembled from cached sentences is the tokenizer's own output: every field padded to the longest
    on the right, the same word ids, truncation at ``max_length``; a sentence repeated in a batch, and one
    tokenized before in another batch, come out the same."""
    import copy

    import gecobench.words as words_module

    tokenizer = copy.deepcopy(bert_tokenizer)  # a cache of its own
    batches = [
        [["Mx. ", "Bennet", "dances"], ["He", "sings"], ["parent's sibling", "waved", "at", "her"]],
        [["He", "sings"], ["She", "is", "an", "extraordinarily", "unconventional", "aunt"], ["He", "sings"]],
        [["x"] * 40, ["Mx. ", "Bennet", "dances"]],
    ]
    for max_length in (128, 8):
        for batch in batches:
            cleaned = [[w.strip() or w for w in sentence] for sentence in batch]
            for padding, tensors in ((True, "pt"), (False, None)):
                direct = tokenizer(cleaned, is_split_into_words=True, truncation=True, max_length=max_length,
                                   padding=padding, return_tensors=tensors)
                encoding, word_ids = tokenize_words(tokenizer, batch, max_length=max_length, padding=padding,
                                                    return_tensors=tensors, cache=True)
                assert set(encoding.keys()) == set(direct.keys())
                for name in direct:
                    if tensors == "pt":
                        assert encoding[name].dtype == direct[name].dtype
                        assert torch.equal(encoding[name], direct[name]), name
                    else:
                        assert encoding[name] == direct[name], name
                assert word_ids == [direct.word_ids(i) for i in range(len(batch))]
    cache = words_module._token_caches[tokenizer]
    assert len(cache) == len({(m, tuple(w.strip() or w for w in s)) for m in (128, 8) for b in batches for s in b})
    # a tokenizer given a new token encodes otherwise: the cache does not answer for it
    before, _ = tokenize_words(tokenizer, [["He", "sings", "zxqv"]], padding=False, return_tensors=None, cache=True)
    tokenizer.add_tokens(["zxqv"])
    after, _ = tokenize_words(tokenizer, [["He", "sings", "zxqv"]], padding=False, return_tensors=None, cache=True)
    assert after["input_ids"] == tokenizer([["He", "sings", "zxqv"]], is_split_into_words=True)["input_ids"]
    assert after["input_ids"] != before["input_ids"]


def test_the_token_cache_keeps_its_most_recent_sentences(bert_tokenizer, monkeypatch):
    import copy

    import gecobench.words as words_module

    tokenizer = copy.deepcopy(bert_tokenizer)
    monkeypatch.setattr(words_module, "TOKEN_CACHE_SENTENCES", 3)
    for word in ("one", "two", "three", "four"):
        tokenize_words(tokenizer, [["say", word]], cache=True)
    tokenize_words(tokenizer, [["say", "two"]], cache=True)  # used again: the most recent
    tokenize_words(tokenizer, [["say", "five"]], cache=True)
    kept = [key[2] for key in words_module._token_caches[tokenizer]]
    assert kept == [("say", "four"), ("say", "two"), ("say", "five")]
    tokenize_words(tokenizer, [["say", "six"]])  # without cache=True the tokenizer answers; nothing is kept
    assert [key[2] for key in words_module._token_caches[tokenizer]] == kept


def _score_record(**overrides):
    record = {
        "schema_version": SCHEMA_VERSION,
        "record_type": "explainer_score",
        "explainer": {"name": "saliency", "version": "1.0.0", "params": {}},
        "model": {"regime": "OLA", "base_model": "minilm", "seed": 0},
        "dataset": {"name": "geco", "config": "binary_all", "split": "test", "fingerprint": "abc"},
        "protocol": {"target": "true_label"},
        "metrics": {"mass_accuracy": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}},
        "counts": {"n_sentences": 10, "n_scored": 9, "n_undefined": 1},
        "runtime": {"seconds_per_sentence": 0.1},
        "provenance": base_provenance(seed=0),
    }
    record.update(overrides)
    try:
        record.setdefault("record_id", expected_record_id(record))
    except (KeyError, TypeError):  # a deliberately broken record has no identity: any well-formed id
        record.setdefault("record_id", record_id_for({"k": json.dumps(record, sort_keys=True, default=str)}))
    return record


def test_valid_record_passes_and_broken_ones_name_the_field():
    validate_record(_score_record())
    with pytest.raises(RecordValidationError, match="dataset"):
        validate_record(_score_record(dataset={"name": "geco"}))
    with pytest.raises(RecordValidationError, match="non-finite"):
        validate_record(_score_record(metrics={"mass_accuracy": {"value": math.nan}}))
    with pytest.raises(RecordValidationError, match="record_type"):
        validate_record(_score_record(record_type="nope"))
    with pytest.raises(RecordValidationError, match="schema_version"):
        validate_record(_score_record(schema_version="1.0"))  # before signed gaps and the full identity


def test_stored_record_text_is_parsed_strictly_and_validated():
    from gecobench.records import load_record_json

    text = json.dumps(_score_record())
    assert load_record_json(text.encode())["record_type"] == "explainer_score"
    for bad_number in ("NaN", "Infinity", "-Infinity", "1e999"):
        broken = text.replace('"value": 0.5', f'"value": {bad_number}')
        with pytest.raises(RecordValidationError, match="non-finite"):
            load_record_json(broken)
    with pytest.raises(RecordValidationError, match="not valid JSON"):
        load_record_json(text[: len(text) // 2])  # a partial write
    with pytest.raises(RecordValidationError, match="metrics"):
        load_record_json(text.replace('"value": 0.5', '"value": "high"'))


def test_record_id_is_stable_and_order_independent():
    assert record_id_for({"a": 1, "b": [1, 2]}) == record_id_for({"b": [1, 2], "a": 1})
    assert record_id_for({"a": 1}) != record_id_for({"a": 2})
    assert fingerprint_rows([{"x": 1}]) != fingerprint_rows([{"x": 2}])


def test_store_is_append_only_and_atomic(tmp_path):
    store = LocalStore(tmp_path)
    record = _score_record()
    path = store.append(record)
    assert json.loads(open(path).read())["record_id"] == record["record_id"]
    changed = dict(record, metrics={"mass_accuracy": {"value": 0.9}})
    with pytest.raises(DocumentExistsError):
        store.append(changed)
    assert store.read("explainer_score", record["record_id"])["metrics"]["mass_accuracy"]["value"] == 0.5
    assert not [p for p in os.listdir(tmp_path / "explainer_score") if p.endswith(".tmp")]


def test_store_skips_malformed_documents_with_a_warning(tmp_path):
    store = LocalStore(tmp_path)
    store.append(_score_record())
    (tmp_path / "explainer_score" / "broken.json").write_text('{"record_type": "explainer_score"')
    (tmp_path / "explainer_score" / "partial.json").write_text(json.dumps({"record_type": "explainer_score"}))
    report = store.read_all()
    assert len(report.documents) == 1
    assert len(report.warnings) == 2 and all("skipped" in w for w in report.warnings)


def test_concurrent_appends_of_the_same_id_keep_exactly_one(tmp_path):
    store = LocalStore(tmp_path)
    record = _score_record()
    outcomes: list[str] = []

    def write():
        try:
            store.append(record)
            outcomes.append("written")
        except DocumentExistsError:
            outcomes.append("exists")

    threads = [threading.Thread(target=write) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("written") == 1 and outcomes.count("exists") == 15
    assert len(store.read_all().documents) == 1


def test_registry_rejects_bad_names_and_finds_registered_classes():
    with pytest.raises(ValueError, match="name"):

        @register_explainer
        class Bad(Explainer):  # noqa: F811
            name = "Bad Name"

            def explain(self, model, tokenizer, words, targets):
                return []

    @register_explainer
    class ConstantForTest(Explainer):
        name = "constant_for_test"

        def explain(self, model, tokenizer, words, targets):
            return [np.ones(len(w)) for w in words]

    assert get_explainer_class("constant_for_test") is ConstantForTest
    with pytest.raises(KeyError, match="known"):
        get_explainer_class("does_not_exist")


def test_a_benchmark_names_the_cpu_it_ran_on(monkeypatch, tmp_path) -> None:
    """Speed figures differ by a third between the CPU kinds this project runs on: the machine line names the model
    read from /proc/cpuinfo, and falls back to what platform knows where there is none."""
    import platform

    from gecobench import provenance

    described = machine_description()
    assert cpu_model() in described and f"Python {platform.python_version()}" in described
    assert "torch " in described
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9B14\n")
    real_path = provenance.Path
    monkeypatch.setattr(provenance, "Path", lambda p: cpuinfo if p == "/proc/cpuinfo" else real_path(p))
    assert cpu_model() == "AMD EPYC 9B14"
    monkeypatch.setattr(provenance, "Path", lambda p: tmp_path / "missing" if p == "/proc/cpuinfo" else real_path(p))
    monkeypatch.setattr(platform, "processor", lambda: "")
    assert cpu_model() == platform.machine()
