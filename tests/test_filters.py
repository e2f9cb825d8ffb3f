"""The correctness filters: the paper's one shared sentence subset per config (across regimes and seeds), the
per-model filter, none; subset files given to a run; the filter fields of records, old records still read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier

from gecobench.evaluation import EvaluationSettings, run_evaluation
from gecobench.evaluation.data import load_split
from gecobench.evaluation.filters import (
    FilterSubset,
    FilterSubsetError,
    load_filter_subsets,
    load_subset,
    record_filter,
    subset_fingerprint,
)
from gecobench.records import (
    SCHEMA_VERSION,
    expected_record_id,
    validate_record,
    validate_stored_record,
)
from gecobench.store import LocalStore

torch.set_num_threads(1)

N_GROUPS = 6
FAST = {"max_groups": N_GROUPS, "chunk_size": 2, "bootstrap": 20, "batch_size": 4, "properties": False,
        "faithfulness": False}
#: per model (regime, seed): the sentence groups (positions in the split) it misclassifies in one variant. The
#: trained models disagree, so the shared subset is smaller than any model's own; the zero-shot model is wrong
#: exactly where the trained ones all agree, so counting it would leave nothing.
WRONG = {("CE", 0): {1}, ("CE", 1): {2}, ("C", 0): {1, 4}, ("ZS", 0): {0, 3, 5}}
SHARED = [0, 3, 5]  # every group no trained model gets wrong


def _weight_key(model) -> float:
    return round(float(model.classifier.weight.detach().sum()), 6)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory, bert_tokenizer, geco_dir) -> dict:
    """Four tiny checkpoints of one base in zoo layout (two seeds of CE, C, ZS) and what each one gets wrong."""
    root = tmp_path_factory.mktemp("filter-zoo")
    paths, wrong_by_key = {}, {}
    for i, ((regime, seed), wrong) in enumerate(WRONG.items()):
        folder = root / "binary_all" / regime / f"seed{seed}"
        model = make_tiny_bert_classifier(seed=10 + i)
        model.save_pretrained(folder)
        bert_tokenizer.save_pretrained(folder)
        (folder / "gecobench_model.json").write_text(json.dumps({
            "regime": regime, "base_model": "tiny-bert", "base_revision": None, "geco_config": "binary_all",
            "seed": seed, "num_labels": 2}))
        paths[(regime, seed)] = str(folder)
        wrong_by_key[_weight_key(model)] = wrong
    split = load_split("binary_all", "test", str(geco_dir))
    return {"paths": paths, "wrong": wrong_by_key, "split": split}


@pytest.fixture
def scripted_predictions(zoo, monkeypatch):
    """Each tiny model predicts the true label except on one variant of the groups WRONG names for it."""
    from gecobench.evaluation import chunks

    split = zoo["split"]
    where = {tuple(split.rows[i].words): (g, split.rows[i].label, i == group[0])
             for g, group in enumerate(split.groups[:N_GROUPS]) for i in group}

    def predict(model, tokenizer, words, batch_size=16):
        wrong = zoo["wrong"][_weight_key(model)]
        out = []
        for w in words:
            group, label, first = where[tuple(w)]
            out.append(1 - label if group in wrong and first else label)
        return np.array(out)

    monkeypatch.setattr(chunks, "predict", predict)
    return where


def _sentence_ids(split, positions) -> list[int]:
    return sorted(split.rows[split.groups[g][0]].sentence_id for g in positions)


def _records(root: Path) -> list[dict]:
    report = LocalStore(root).read_all("explainer_score")
    assert report.warnings == []
    return report.documents


def test_paper_filter_is_one_subset_per_config_across_regimes_and_seeds(zoo, scripted_predictions, geco_dir,
                                                                         tmp_path) -> None:
    split = zoo["split"]
    models = list(zoo["paths"].values())
    summary = run_evaluation(["uniform_random"], models, ["binary_all"], EvaluationSettings(data_dir=str(geco_dir),
                             **FAST), store_location=str(tmp_path / "r"), checkpoint_dir=tmp_path / "ck",
                             progress=False, filters=("paper", "per_model", "none"))
    records = _records(tmp_path / "r")
    assert len(records) == len(models) * 3
    by_filter: dict[str, list[dict]] = {}
    for record in records:
        by_filter.setdefault(record["filter"]["name"], []).append(record)
        assert record["protocol"]["filter"] == record["filter"]["name"]

    # paper: every record of the config (every regime, both seeds, ZS too) on the intersection of the trained models
    shared = _sentence_ids(split, SHARED)
    subset = summary.filter_subsets["binary_all"]
    assert list(subset.source_sentence_ids) == shared and subset.size == len(shared)
    assert subset.fingerprint == subset_fingerprint("binary_all", shared)
    assert {m["regime"] for m in subset.defined_by} == {"CE", "C"} and not subset.zero_shot_counted
    assert len(subset.defined_by) == 3  # CE seed 0, CE seed 1, C seed 0
    paper = by_filter["paper"]
    assert len(paper) == len(models)
    assert {r["protocol"]["filter_subset_sha256"] for r in paper} == {subset.fingerprint}
    assert {r["filter"]["subset_fingerprint"] for r in paper} == {subset.fingerprint}
    assert {r["filter"]["scored_fingerprint"] for r in paper} == {subset.fingerprint}
    assert {r["filter"]["n_source_sentences"] for r in paper} == {len(shared)}
    assert {r["counts"]["n_scored"] for r in paper} == {2 * len(shared)}
    assert all(r["filter"]["defined_by"] == subset.defining_checkpoints for r in paper)
    zero_shot = [r for r in paper if r["model"]["regime"] == "ZS"]
    assert zero_shot[0]["model"]["accuracy_on_scored"] == pytest.approx(0.5)  # scored there, wrong on a variant each

    # per_model: each model its own correctly classified groups, so the sets differ between models
    per_model = {(r["model"]["regime"], r["model"]["seed"]): r for r in by_filter["per_model"]}
    for key, wrong in WRONG.items():
        own = _sentence_ids(split, [g for g in range(N_GROUPS) if g not in wrong])
        assert per_model[key]["filter"]["scored_fingerprint"] == subset_fingerprint("binary_all", own), key
        assert per_model[key]["filter"]["n_source_sentences"] == len(own)
        assert "filter_subset_sha256" not in per_model[key]["protocol"]
    assert len({r["filter"]["scored_fingerprint"] for r in per_model.values()}) == len(WRONG)

    # none: every scorable sentence of the run
    everything = _sentence_ids(split, range(N_GROUPS))
    assert {r["filter"]["scored_fingerprint"] for r in by_filter["none"]} == {
        subset_fingerprint("binary_all", everything)}
    assert {r["counts"]["n_scored"] for r in by_filter["none"]} == {r["counts"]["n_sentences"] for r in records}


def test_zero_shot_defines_the_subset_only_when_asked_or_alone(zoo, scripted_predictions, geco_dir) -> None:
    from gecobench.evaluation.runner import compute_paper_subset

    split = zoo["split"]
    settings = EvaluationSettings(data_dir=str(geco_dir), **FAST)
    everyone = compute_paper_subset(list(zoo["paths"].values()), split, settings, include_zero_shot=True)
    assert everyone.size == 0 and everyone.zero_shot_counted  # ZS is wrong on exactly the shared groups
    alone = compute_paper_subset([zoo["paths"][("ZS", 0)]], split, settings)
    assert list(alone.source_sentence_ids) == _sentence_ids(split, [1, 2, 4]) and alone.zero_shot_counted


def test_a_run_given_a_subset_file_scores_exactly_it(zoo, scripted_predictions, geco_dir, tmp_path) -> None:
    split = zoo["split"]
    chosen = _sentence_ids(split, [1, 4])
    subset = FilterSubset("binary_all", "test", split.fingerprint, tuple(chosen),
                          defined_by=({"name": "elsewhere", "regime": "CE", "seed": 9, "checkpoint_sha256": "ab"},))
    path = subset.write(tmp_path / "filters" / "binary_all.json")
    assert load_subset(path) == subset and load_filter_subsets(tmp_path) == {"binary_all": subset}
    summary = run_evaluation(["uniform_random"], [zoo["paths"][("CE", 0)]], ["binary_all"],
                             EvaluationSettings(data_dir=str(geco_dir), **FAST), store_location=str(tmp_path / "r"),
                             checkpoint_dir=tmp_path / "ck", progress=False, filter_subsets=path)
    (record,) = _records(tmp_path / "r")
    # CE seed 0 misclassifies group 1, which the given subset holds: the file, not the model, decides
    assert record["filter"]["scored_fingerprint"] == subset.fingerprint == record["protocol"]["filter_subset_sha256"]
    assert record["filter"]["subset_source"] == "file" and record["counts"]["n_scored"] == 4
    assert record["model"]["accuracy_on_scored"] == pytest.approx(0.75)
    assert summary.filter_subsets["binary_all"] == subset

    def refused(document: dict, match: str) -> None:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(document))
        with pytest.raises(FilterSubsetError, match=match):
            run_evaluation(["uniform_random"], [zoo["paths"][("CE", 0)]], ["binary_all"],
                           EvaluationSettings(data_dir=str(geco_dir), **FAST), store_location=str(tmp_path / "r2"),
                           checkpoint_dir=tmp_path / "ck", progress=False, filter_subsets=bad)

    good = subset.to_json()
    other = FilterSubset("binary_subject", "test", split.fingerprint, tuple(chosen)).to_json()
    refused(other, r"none for \[.binary_all.\]")
    refused({**good, "fingerprint": "0" * 64}, "fingerprint")
    refused({**good, "source_sentence_ids": chosen[:1]}, "fingerprint")  # ids edited, fingerprint not
    refused({**good, "dataset_fingerprint": "f" * 64}, "data fingerprint")
    refused({"config": "binary_all"}, "not a filter subset")
    with pytest.raises(FilterSubsetError, match="wrong config"):
        load_filter_subsets({"binary_all": FilterSubset("binary_subject", "test", split.fingerprint, (1,))})
    with pytest.raises(FilterSubsetError, match="config 'binary_subject' given for a run on 'binary_all'"):
        FilterSubset("binary_subject", "test", split.fingerprint, tuple(chosen)).check_for(split)
    assert not (tmp_path / "r2").exists() or _records(tmp_path / "r2") == []


def test_settings_keep_the_boolean_api_and_refuse_unknown_filters() -> None:
    assert EvaluationSettings().filter == "paper"
    assert EvaluationSettings(filter_correct=True).filter == "paper"
    assert EvaluationSettings(filter_correct=False).protocol()["filter"] == "none"
    assert EvaluationSettings(filter="all_gender_variants_correct").filter == "per_model"
    import dataclasses

    assert dataclasses.replace(EvaluationSettings(filter="none"), bootstrap=5).filter == "none"
    with pytest.raises(ValueError, match="unknown correctness filter 'strict'"):
        EvaluationSettings(filter="strict")


def _legacy(record: dict) -> dict:
    """A record as 0.6 wrote it: schema 2.0, the per-model filter under its old name, no filter block."""
    old = json.loads(json.dumps(record))
    old.pop("filter")
    old.pop("agreement", None)  # 2.2's; 2.0 held the compared set in the protocol
    old["schema_version"] = "2.0"
    old["protocol"] = {k: v for k, v in old["protocol"].items() if k != "filter_subset_sha256"}
    old["protocol"]["filter"] = "all_gender_variants_correct"
    old["record_id"] = expected_record_id(old)
    return old


def test_old_records_still_read_everywhere_filters_are_read(zoo, scripted_predictions, geco_dir, tmp_path) -> None:
    from gecobench.evaluation import leaderboard_text
    from gecobench.paper_comparison import index_records
    from gecobench.reference import ReferencePlan, coverage
    from leaderboard_space import sources

    run_evaluation(["uniform_random"], [zoo["paths"][("CE", 0)]], ["binary_all"],
                   EvaluationSettings(data_dir=str(geco_dir), **FAST), store_location=str(tmp_path / "new"),
                   checkpoint_dir=tmp_path / "ck", progress=False, filters=("paper", "none"))
    new = _records(tmp_path / "new")
    assert SCHEMA_VERSION == "2.2" and {r["schema_version"] for r in new} == {"2.2"}
    paper = next(r for r in new if r["filter"]["name"] == "paper")
    old = _legacy(paper)
    validate_stored_record(old)
    store = LocalStore(tmp_path / "mixed")
    for record in [*new, old]:
        store.append(record)
    records = _records(tmp_path / "mixed")
    assert len(records) == 3
    # the Space: the old name reads as per_model; the paper's shared subset is the default view when present
    assert sources.filter_of(old) == "per_model" and record_filter(old["protocol"]) == "per_model"
    assert sources.chosen_filter(records, None) == "paper"
    assert sources.chosen_filter([old], sources.PAPER_FILTER) == "per_model"
    assert sources.chosen_filter([old], "all_gender_variants_correct") == "per_model"
    assert len(sources.with_filter(records, "per_model")) == 1
    assert [value for _, value in sources.filter_choices(records)] == ["paper", "none", "per_model"]
    # the leaderboard and the paper comparison read both
    assert "uniform_random" in leaderboard_text(store)
    assert list(index_records(records, filtered=True).values()) == [paper]  # the shared subset wins
    assert list(index_records([old], filtered=True).values()) == [old]
    # the reference's coverage counts cells by filter name
    plan = ReferencePlan(seeds=(0,), configs=("binary_all",), regimes=("ZS", "CE"), explainers=("uniform_random",))
    present = coverage(plan, records, filters=("paper", "per_model", "none"))["present"]
    assert {cell[-1] for cell in present} == {"paper", "per_model", "none"}


def test_filter_block_schema_refuses_unknown_names(zoo, scripted_predictions, geco_dir, tmp_path) -> None:
    from gecobench.records import RecordValidationError

    run_evaluation(["uniform_random"], [zoo["paths"][("CE", 0)]], ["binary_all"],
                   EvaluationSettings(data_dir=str(geco_dir), filter="none", **FAST),
                   store_location=str(tmp_path / "r"), checkpoint_dir=tmp_path / "ck", progress=False)
    (record,) = _records(tmp_path / "r")
    broken = json.loads(json.dumps(record))
    broken["filter"]["name"] = "all_gender_variants_correct"
    with pytest.raises(RecordValidationError, match="filter"):
        validate_record(broken)
    broken = json.loads(json.dumps(record))
    broken["filter"]["scored_fingerprint"] = "not-a-hash"
    with pytest.raises(RecordValidationError, match="filter"):
        validate_record(broken)
