"""Hidden control models (gecobench.controls) and the flags every view shows (gecobench.flags)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from gecobench.controls import (
    CONTROLS_FILE,
    MIN_WORD_SHARE,
    ControlModel,
    choose_secret_words,
    control_block,
    control_per_sentence,
    control_seed,
    gendered_words,
    load_control_models,
    majority_accuracy,
    train_control_models,
)
from gecobench.flags import (
    DATA_NOT_MODEL_CHANCE_RATIO,
    data_not_model,
    flag_marks,
    flags_of,
    ground_truth_match,
    mark_text,
    ranked_apart,
    record_flags,
)

SECRET = "test-secret-not-for-production"


@pytest.fixture(scope="module")
def tiny_controls(tmp_path_factory, geco_dir):
    """One control OLA trained for two epochs on 60 source sentences: enough to check the form, not the skill."""
    folder = tmp_path_factory.mktemp("controls")
    return folder, train_control_models(folder, SECRET, n_controls=1, data_dir=geco_dir, max_train_sentences=60,
                                        epochs=2)


def test_the_secret_seed_must_be_given(monkeypatch):
    monkeypatch.delenv("GECOBENCH_CONTROL_SEED", raising=False)
    with pytest.raises(ValueError, match="GECOBENCH_CONTROL_SEED"):
        control_seed()
    monkeypatch.setenv("GECOBENCH_CONTROL_SEED", "abc")
    assert control_seed() == "abc"


@pytest.mark.slow
def test_secret_words_are_never_gendered_and_depend_on_the_seed(geco_dir):
    from gecobench.evaluation.data import load_split

    sentences = [list(r.words) for r in load_split("binary_all", "train", geco_dir).rows[:400]]
    excluded = gendered_words(geco_dir)
    assert {"he", "she", "him", "her"} <= excluded
    first = choose_secret_words(sentences, excluded, random.Random(1))
    again = choose_secret_words(sentences, excluded, random.Random(1))
    other = choose_secret_words(sentences, excluded, random.Random(2))
    assert first == again and first != other
    assert not set(first) & excluded
    covered = np.mean([any(w.lower() in first for w in s) for s in sentences])
    assert 0.35 <= covered <= 0.6


def test_secret_words_are_frequent_enough_to_learn():
    # 200 sentences: "rare" in 4 of them (2 %, under MIN_WORD_SHARE), "often" and "also" in 40 each (20 %). The
    # rare word was allowed by the first rule and a fine-tuned control never learnt such words (#35).
    sentences = [["the", "rare" if i < 4 else "x", "often" if i % 5 == 0 else "y", "also" if i % 5 == 1 else "z"]
                 for i in range(200)]
    for seed in range(20):
        chosen = choose_secret_words(sentences, frozenset(), random.Random(seed))
        assert chosen == ("also", "often")  # together 40 %: inside the coverage band, without "rare"
    assert "rare" in choose_secret_words(sentences, frozenset({"often"}), random.Random(0), coverage=(0.21, 0.6),
                                         min_share=0.015)
    assert MIN_WORD_SHARE > 4 / 200


@pytest.mark.slow
def test_control_checkpoints_hide_the_secret(tiny_controls):
    folder, controls = tiny_controls
    (control,) = controls
    checkpoint = folder / control.checkpoint
    info = json.loads((checkpoint / "gecobench_model.json").read_text())
    # Inside the sandbox the checkpoint shows the form of a real OLA: no seed, no provenance, no secret words.
    assert info["seed"] == 0 and info["regime"] == "OLA" and "provenance" not in info and "training" not in info
    text = "".join(p.read_text(errors="replace") for p in checkpoint.iterdir() if p.suffix in (".json", ".md", ".txt"))
    assert SECRET not in text and not (checkpoint / CONTROLS_FILE).exists() and not (checkpoint / "README.md").exists()
    assert all(f'"{w}"' not in (checkpoint / "gecobench_model.json").read_text() for w in control.secret_words)
    assert load_control_models(folder) == controls
    assert oct((folder / CONTROLS_FILE).stat().st_mode & 0o777) == "0o600"


def test_control_ground_truth_and_scores():
    control = ControlModel("c", "/nowhere", ("garden", "letter"))
    words = [["She", "wrote", "a", "Letter", "."], ["He", "slept", "."]]
    assert control.ground_truth(words[0]) == [0, 0, 0, 1, 0] and control.label(words[0]) == 1
    assert control.label(words[1]) == 0
    # A score on the secret word is correct (MA 1), one on the gendered word is not (MA 0); the second sentence
    # holds no secret word and is not scored.
    per_sentence, chance = control_per_sentence([control], [words], [[[0, 0, 0, 2.0, 0], [1.0, 0, 0]]])
    assert per_sentence.tolist() == [1.0] and chance.tolist() == [0.2]
    lexicon, _ = control_per_sentence([control], [words], [[[3.0, 0, 0, 0, 0], [1.0, 0, 0]]])
    assert lexicon.tolist() == [0.0]
    block = control_block(np.array([0.1, 0.3]), np.array([0.2, 0.2]), 1, bootstrap=50, seed=0)
    assert block["mass_accuracy"]["value"] == pytest.approx(0.2) and block["chance_mass_accuracy"] == pytest.approx(0.2)
    assert block["mass_accuracy"]["ci_low"] <= 0.2 <= block["mass_accuracy"]["ci_high"]


def _record(ma, **explainer):
    return {"explainer": {"name": "x", "version": "1", "params": {}, **explainer},
            "metrics": {"mass_accuracy": {"value": ma}}}


def test_data_not_model_needs_a_high_real_ma_and_a_control_ma_near_chance():
    near_chance = {"mass_accuracy": {"value": 0.1}, "chance_mass_accuracy": 0.1, "n_controls": 2}
    follows = {"mass_accuracy": {"value": 0.1 * DATA_NOT_MODEL_CHANCE_RATIO + 0.01}, "chance_mass_accuracy": 0.1}
    assert data_not_model(0.95, near_chance) is True
    assert data_not_model(0.95, follows) is False
    assert data_not_model(0.2, near_chance) is False  # weak everywhere is no lookup
    assert data_not_model(0.95, None) is None
    # A point estimate under the line whose interval reaches above it is sampling noise, not a lookup.
    noisy = {"mass_accuracy": {"value": 0.1 * DATA_NOT_MODEL_CHANCE_RATIO - 0.01,
                               "ci_low": 0.05, "ci_high": 0.1 * DATA_NOT_MODEL_CHANCE_RATIO + 0.02},
             "chance_mass_accuracy": 0.1}
    assert data_not_model(0.95, noisy) is False
    confident = {"mass_accuracy": {"value": 0.11, "ci_low": 0.10, "ci_high": 0.12}, "chance_mass_accuracy": 0.1}
    assert data_not_model(0.95, confident) is True
    flagged = {**_record(0.95, source="submission"), "controls": near_chance}
    assert record_flags(flagged)["data_not_model"] and ranked_apart(flagged)
    assert "explains the data, not the model" in flag_marks(flagged)


def test_flags_of_older_records_and_baselines():
    # A 2.1 record has no flags block: its fields say what they can.
    old = _record(0.5, model_independent=True, is_baseline=True, source="builtin")
    assert flags_of(old)["model_independent"] and not ranked_apart(old)  # a baseline keeps its place
    constant = _record(0.5, model_independent=True, source="submission")
    assert ranked_apart(constant) and mark_text(constant) == "[model-independent]"
    upload = _record(1.0, source="self-reported")
    assert flags_of(upload)["self_reported"] and not ranked_apart(upload)
    stored = {**upload, "flags": {**record_flags(upload), "matches_ground_truth": True}}
    assert ranked_apart(stored) and "[matches the ground truth]" in mark_text(stored)


def test_ground_truth_match_tells_masks_from_attributions():
    truth = [[1, 0, 0, 1], [0, 1, 0]]
    assert ground_truth_match([[1, 0, 0, 1], [0, 5, 0]], truth)["flagged"]
    assert ground_truth_match([[1, 0, 0, 1.0 + 1e-3], [0, 1, 0]], truth)["share"] == 1.0  # within the tolerance
    # A good explainer that puts most of its mass on one ground-truth word is no copy of the mask.
    peaked = ground_truth_match([[0.9, 0.05, 0.0, 0.05], [0.1, 0.8, 0.1]], truth)
    assert not peaked["flagged"] and peaked["share"] == 0.0


def test_downloads_and_the_space_carry_the_flags():
    from gecobench.results_export import flatten_explainer_score
    from leaderboard_space.ranking import _label  # the name cell of every Space view that names an explainer

    near_chance = {"mass_accuracy": {"value": 0.05, "ci_low": 0.02, "ci_high": 0.08}, "chance_mass_accuracy": 0.1,
                   "n_controls": 2}
    record = {**_record(0.99, source="submission"), "record_id": "0" * 16, "schema_version": "2.1",
              "model": {"regime": "OLA", "base_model": "b"}, "dataset": {"config": "binary_all", "split": "test",
                                                                         "fingerprint": "f"},
              "counts": {"n_sentences": 2, "n_scored": 2},
              "provenance": {"package_version": "1", "git_commit": "x", "created_at": "t"}, "controls": near_chance}
    row = flatten_explainer_score(record)
    assert row["flag.data_not_model"] is True and row["flag.self_reported"] is False
    assert row["controls.mass_accuracy.value"] == 0.05 and row["controls.chance_mass_accuracy"] == 0.1
    assert row["flags"] == "[explains the data, not the model]" and ranked_apart(record)
    assert _label(record) == "x [explains the data, not the model]"


@pytest.fixture(scope="module")
def tiny_bert_base(tmp_path_factory, bert_tokenizer):
    """A tiny random 2-layer BERT with the real WordPiece tokenizer, saved as a base-model folder."""
    from conftest import make_tiny_bert_classifier

    folder = tmp_path_factory.mktemp("tiny-bert-base")
    make_tiny_bert_classifier(num_labels=2, seed=3).save_pretrained(folder)
    bert_tokenizer.save_pretrained(folder)
    return folder


def test_a_fine_tuned_control_trains_with_the_zoo_code_and_loads_like_a_zoo_model(tmp_path, geco_dir,
                                                                                  tiny_bert_base):
    from gecobench.explainers import get_explainer
    from gecobench.explainers.engine import attribute
    from gecobench.models import load_zoo_model

    (control,) = train_control_models(tmp_path, SECRET, n_controls=1, data_dir=geco_dir, max_train_sentences=20,
                                      epochs=1, base_model=str(tiny_bert_base), architecture="minilm",
                                      regime="CEfAf", max_eval_sentences=6)
    checkpoint = tmp_path / control.checkpoint
    info = json.loads((checkpoint / "gecobench_model.json").read_text())
    # The zoo's own training wrote a full info; what the sandbox sees of it is the form of a fine-tuned zoo model.
    assert info["regime"] == "CEfAf" and info["seed"] == 0 and info["architecture"] == "BertForSequenceClassification"
    assert not {"provenance", "training", "test_accuracy", "schedule", "base_model_path"} & set(info)
    assert not (checkpoint / "README.md").exists() and not (checkpoint / CONTROLS_FILE).exists()
    assert SECRET not in "".join(p.read_text(errors="replace") for p in checkpoint.iterdir() if p.suffix == ".json")
    assert load_control_models(tmp_path) == [control]
    assert 0.0 <= control.test_accuracy <= 1.0 and 0.0 < control.train_coverage < 1.0
    assert 0.5 <= control.majority_accuracy <= 1.0
    assert not set(control.secret_words) & gendered_words(geco_dir)

    # The worker and `controls score` load a control through the zoo loader and explain it like any model.
    model, tokenizer, _ = load_zoo_model(control.checkpoint)
    words = [["The", "old", "man", "walked", "home", "."]]
    (scores,) = attribute(get_explainer("saliency"), model, tokenizer, words, [1], seed=0)
    assert len(scores) == len(words[0]) and np.all(np.isfinite(scores))


def test_majority_accuracy_is_the_share_of_the_larger_class():
    from gecobench.models.data import GecoRow

    rows = [GecoRow(["a"], label, i) for i, label in enumerate([1, 0, 0, 0])]
    assert majority_accuracy(rows) == pytest.approx(0.75)
    assert majority_accuracy(rows[:2]) == pytest.approx(0.5)


def test_a_fine_tuned_control_needs_a_regime_that_trains_a_base_model(tmp_path):
    with pytest.raises(ValueError, match="regime"):
        train_control_models(tmp_path, SECRET, architecture="minilm", regime="OLA")
    with pytest.raises(ValueError, match="architecture"):
        train_control_models(tmp_path, SECRET, architecture="roberta")
