"""Per-sentence side files: written next to each record by the runner, read back by the Space's drill-down."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier

from gecobench.evaluation import EvaluationSettings, run_evaluation
from gecobench.evaluation.data import GecoRow
from gecobench.evaluation.sentence_scores import (
    read_sentence_scores,
    sentence_scores_document,
    side_file_path,
)
from gecobench.store import LocalStore

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, bert_tokenizer) -> str:
    folder = tmp_path_factory.mktemp("model") / "CE"
    make_tiny_bert_classifier(seed=0).save_pretrained(folder)
    bert_tokenizer.save_pretrained(folder)
    (folder / "gecobench_model.json").write_text(json.dumps({
        "regime": "CE", "base_model": "tiny-bert", "base_revision": None, "geco_config": "binary_all",
        "seed": 0, "num_labels": 2}))
    return str(folder)


def test_runner_writes_one_side_file_per_record_consistent_with_it(tiny_model, geco_dir, tmp_path) -> None:
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", max_groups=3, chunk_size=2,
                                  bootstrap=0, batch_size=4, properties=False)
    summary = run_evaluation(["saliency", "uniform_random"], [tiny_model], ["binary_all"], settings,
                             store_location=str(tmp_path / "r"), checkpoint_dir=tmp_path / "ck", progress=False)
    store = LocalStore(tmp_path / "r")
    report = store.read_all()
    # side files are not documents: the store lists records only, and none is skipped as malformed
    assert report.warnings == [] and len(report.documents) == len(summary.written) == 2
    for record in report.documents:
        side = read_sentence_scores(side_file_path(tmp_path / "r", record["record_id"]))
        assert side["record_id"] == record["record_id"]
        assert side["explainer"] == record["explainer"]["name"]
        assert len(side["sentences"]) == record["counts"]["n_scored"]
        per_sentence = np.array([s["mass_accuracy"] for s in side["sentences"]], dtype=float)
        # the record's MA is the mean of the per-sentence values; the side file rounds each to 4 significant digits
        assert np.nanmean(per_sentence) == pytest.approx(record["metrics"]["mass_accuracy"]["value"], abs=1e-3)
        for sentence in side["sentences"]:
            scores = np.abs(np.array(sentence["attributions"], dtype=float))
            truth = np.array(sentence["ground_truth"], dtype=bool)
            if scores.sum() > 0:
                assert sentence["mass_accuracy"] == pytest.approx(scores[truth].sum() / scores.sum(), rel=1e-3, abs=1e-3)


def test_document_rejects_misaligned_attributions() -> None:
    row = GecoRow(index=0, words=("she", "runs"), ground_truth=(1, 0), label=0, sentence_id=5)
    record = {"record_id": "abc", "explainer": {"name": "x"}}
    with pytest.raises(ValueError, match=r"row 0 \(sentence 5\) has 2 words but 3 attributions"):
        sentence_scores_document(record, [row], [np.ones(3)], [0.5])
    with pytest.raises(ValueError, match="1 rows, 2 attributions"):
        sentence_scores_document(record, [row], [np.ones(2), np.ones(2)], [0.5])


def test_reading_a_broken_side_file_names_the_file_and_the_sentence(tmp_path) -> None:
    not_gzip = tmp_path / "a.json.gz"
    not_gzip.write_text("{}")
    with pytest.raises(ValueError, match="a.json.gz: not a gzipped JSON"):
        read_sentence_scores(not_gzip)
    short = tmp_path / "b.json.gz"
    short.write_bytes(gzip.compress(json.dumps(
        {"sentences": [{"words": ["a", "b"], "ground_truth": [1, 0], "attributions": [0.1]}]}).encode()))
    with pytest.raises(ValueError, match=r"b.json.gz: sentences\[0\] has 2 words, 2 ground-truth values and 1"):
        read_sentence_scores(short)
    with pytest.raises(ValueError, match="invalid record id"):
        side_file_path(tmp_path, "../escape")
