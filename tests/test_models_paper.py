"""The paper's OLA and regimes, checked against the authors' definitions (braindatalab/gecobench).

OLA = ``training/simple_model.py`` ``VanillaAttentionClassifier``; regimes = ``training/bert.py`` ``train_model``
with the ``bert_*`` entries of the authors' config. See ``gecobench/models/ola.py`` and ``regimes.py``.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier
from tolerances import ulp_tolerance

from gecobench.models import (
    OLAConfig,
    OLAForSequenceClassification,
    ResidualOLAConfig,
    ResidualOLAForSequenceClassification,
    apply_regime,
    default_schedule_for,
    load_zoo_model,
    make_schedule,
    regime_trainable_names,
    train_regime,
)
from gecobench.models.training import INFO_FILE, optimisation_step

V, H = 50, 64


def _ola(seed: int = 0, labels: int = 2, masking: str = "keys") -> OLAForSequenceClassification:
    torch.manual_seed(seed)
    return OLAForSequenceClassification(OLAConfig(vocab_size=V, num_labels=labels, attention_masking=masking)).eval()


def _atol(reference: torch.Tensor) -> float:
    return ulp_tolerance(np.float32, float(reference.detach().abs().max()))


# ---------------------------------------------------------------------------------------------- OLA


def test_ola_parameters_are_exactly_the_authors_architecture():
    model = _ola(labels=3)
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    assert shapes == {
        "embeddings.weight": (V, H),
        "attention.key.weight": (H, H), "attention.key.bias": (H,),
        "attention.query.weight": (H, H), "attention.query.bias": (H,),
        "attention.value.weight": (H, H), "attention.value.bias": (H,),
        "pooler.dense.weight": (H, H), "pooler.dense.bias": (H,),
        "classifier.weight": (3, H), "classifier.bias": (3,),
    }
    kinds = [type(m) for m in model.modules()]
    assert kinds.count(torch.nn.Embedding) == 1, "one word embedding, no position / token-type embeddings"
    assert not any(issubclass(k, torch.nn.LayerNorm) for k in kinds)
    linears = {n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    assert linears == {"attention.key", "attention.query", "attention.value", "pooler.dense", "classifier"}, \
        "no attention output projection"
    assert model.get_input_embeddings() is model.embeddings
    assert model.config.dropout == 0.0


def test_ola_forward_is_softmax_attention_then_cls_pooler_without_residual():
    """The logits equal the definition written out by hand from the weights (no residual, no LayerNorm)."""
    model = _ola(seed=1)
    ids = torch.tensor([[1, 7, 9, 4, 0, 0], [1, 3, 5, 8, 2, 6]])
    mask = (ids != 0).long()
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_attentions=True)
        x = model.embeddings.weight[ids]
        att = model.attention
        scores = att.query(x) @ att.key(x).transpose(1, 2) / math.sqrt(H)
        scores = scores.masked_fill(mask[:, None, :] == 0, float("-inf"))
        weights = torch.softmax(scores, -1)
        pooled = torch.tanh(model.pooler.dense((weights @ att.value(x))[:, 0]))
        expected = model.classifier(pooled)
    assert torch.allclose(out.logits, expected, rtol=0, atol=_atol(expected))
    (returned,) = out.attentions
    assert returned.shape == (2, 1, 6, 6)
    assert torch.allclose(returned[:, 0], weights, rtol=0, atol=ulp_tolerance(np.float32, 1.0))
    assert float(returned[0, 0, :, 4:].abs().max()) == 0.0, "padding keys get no attention"


def test_ola_output_does_not_depend_on_batch_padding():
    model = _ola(seed=2)
    short = torch.tensor([[1, 7, 9, 2]])
    alone = model(input_ids=short, attention_mask=torch.ones_like(short)).logits
    batch = torch.tensor([[1, 7, 9, 2, 0, 0, 0], [1, 3, 5, 8, 4, 6, 2]])
    batched = model(input_ids=batch, attention_mask=(batch != 0).long()).logits
    assert torch.allclose(alone[0], batched[0], rtol=0, atol=_atol(alone))
    # what fills the padding does not matter either
    other_fill = batch.clone()
    other_fill[0, 4:] = torch.tensor([11, 12, 13])
    refilled = model(input_ids=other_fill, attention_mask=(batch != 0).long()).logits
    assert torch.allclose(refilled[0], batched[0], rtol=0, atol=_atol(alone))
    # the inputs_embeds path gives the same logits
    via_embeds = model(inputs_embeds=model.get_input_embeddings()(batch), attention_mask=(batch != 0).long()).logits
    assert torch.allclose(via_embeds, batched, rtol=0, atol=_atol(batched))


def test_authors_query_masking_option_depends_on_padding_as_theirs():
    """``attention_masking="queries"`` masks padding query rows only, so real tokens see padding keys."""
    keys, queries = _ola(seed=3, masking="keys"), _ola(seed=3, masking="queries")
    short = torch.tensor([[1, 7, 9, 2]])
    padded = torch.tensor([[1, 7, 9, 2, 0, 0, 0]])
    with torch.no_grad():
        alone = queries(input_ids=short, attention_mask=torch.ones_like(short)).logits
        in_batch = queries(input_ids=padded, attention_mask=(padded != 0).long()).logits
        # without padding both maskings are the same model
        assert torch.allclose(alone, keys(input_ids=short).logits, rtol=0, atol=_atol(alone))
        assert (alone - in_batch).abs().max() > 100 * _atol(alone)
        weights = queries(input_ids=padded, attention_mask=(padded != 0).long(), output_attentions=True).attentions[0]
    assert float(weights[0, 0, 0, 4:].sum()) > 0, "a real query attends to padding keys in the authors' masking"
    with pytest.raises(ValueError, match="attention_masking"):
        OLAConfig(vocab_size=V, num_labels=2, attention_masking="rows")


def test_ola_keeps_pytorch_default_init():
    torch.manual_seed(0)
    model = OLAForSequenceClassification(OLAConfig(vocab_size=4000, num_labels=2))
    emb = model.embeddings.weight.detach()
    # nn.Embedding's N(0, 1): the sample std of 256,000 draws is within a few 1/sqrt(2n) of 1
    assert abs(float(emb.std()) - 1.0) < 10 / math.sqrt(2 * emb.numel())
    # nn.Linear's Kaiming-uniform bound 1/sqrt(fan_in), not transformers' N(0, 0.02)
    bound = 1 / math.sqrt(H)
    weight = model.attention.query.weight.detach()
    assert float(weight.abs().max()) <= bound and float(weight.abs().max()) > 0.9 * bound


def test_ola_round_trips_through_auto_classes(tmp_path):
    from transformers import AutoModelForSequenceClassification

    model = _ola(seed=4, labels=3, masking="queries")
    ids = torch.tensor([[1, 5, 6, 2, 0]])
    mask = (ids != 0).long()
    model.save_pretrained(tmp_path)
    loaded = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()
    assert isinstance(loaded, OLAForSequenceClassification) and loaded.config.attention_masking == "queries"
    expected = model(input_ids=ids, attention_mask=mask).logits
    assert torch.allclose(loaded(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).logits,
                          expected, rtol=0, atol=_atol(expected))


def _write_pre_1_0_ola_checkpoint(folder, bert_tokenizer) -> ResidualOLAForSequenceClassification:
    """A checkpoint as 0.x wrote it: the residual model, labelled ``model_type = "gecobench_ola"``."""
    torch.manual_seed(5)
    model = ResidualOLAForSequenceClassification(
        ResidualOLAConfig(vocab_size=bert_tokenizer.vocab_size, num_labels=2, max_position_embeddings=64)).eval()
    model.save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "gecobench_ola"
    config["architectures"] = ["OLAForSequenceClassification"]
    (folder / "config.json").write_text(json.dumps(config))
    bert_tokenizer.save_pretrained(folder)
    (folder / INFO_FILE).write_text(json.dumps({"regime": "OLA", "base_model": "x", "base_revision": "y",
                                                "geco_config": "binary_all", "seed": 0, "num_labels": 2}))
    return model


def test_pre_1_0_ola_checkpoint_loads_as_the_residual_model_or_fails_clearly(tmp_path, bert_tokenizer):
    from transformers import AutoModelForSequenceClassification

    old = _write_pre_1_0_ola_checkpoint(tmp_path, bert_tokenizer)
    model, _, info = load_zoo_model(tmp_path)
    assert isinstance(model, ResidualOLAForSequenceClassification) and info["regime"] == "OLA"
    ids = torch.tensor([[101, 2002, 2187, 102]])
    expected = old(input_ids=ids).logits
    assert torch.allclose(model(input_ids=ids).logits, expected, rtol=0, atol=_atol(expected))
    with pytest.raises(ValueError, match="pre-1.0 GECOBench OLA checkpoint"):
        AutoModelForSequenceClassification.from_pretrained(tmp_path)


# ------------------------------------------------------------------------------------- OLA schedule


def test_ola_trains_with_the_authors_schedule_by_default():
    assert default_schedule_for("OLA") == "ola_paper"
    assert default_schedule_for("CEf") == "default"
    s = make_schedule("ola_paper")
    authors = {"optimizer": "adam", "lr": 0.01, "weight_decay": 0.1, "adam_eps": 1e-5, "batch_size": 64, "epochs": 200}
    assert {k: getattr(s, k) for k in authors} == authors
    assert s.warmup_fraction == pytest.approx(0.1) and s.patience >= s.epochs and not s.authors_trainer_quirks


def test_train_regime_ola_uses_its_schedule_and_adam(tmp_path, geco_dir, tiny_base):
    out = train_regime("OLA", "binary_all", 0, tmp_path / "ola", base_model=str(tiny_base), data_dir=geco_dir,
                       epochs=2, max_train_sentences=24, max_eval_sentences=12, show_progress=False)
    info = json.loads((out / INFO_FILE).read_text())
    planned = make_schedule("ola_paper", epochs=2, max_train_sentences=24, max_eval_sentences=12)
    assert info["schedule"] == dataclasses.asdict(planned)
    assert info["learning_rate"] == 0.01 and info["architecture"] == "OLAForSequenceClassification"


def test_authors_trainer_quirks_accumulate_and_clip_after_the_step():
    from accelerate import Accelerator

    accelerator = Accelerator(cpu=True)

    class Toy(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.tensor([3.0, -4.0]))

        def forward(self, x):
            return type("Out", (), {"loss": (self.w * x).sum()})()

    seen = []

    class Recording(torch.optim.SGD):
        def step(self, closure=None):
            seen.append(self.param_groups[0]["params"][0].grad.clone())
            return super().step(closure)

    def run(quirks: bool) -> list[torch.Tensor]:
        seen.clear()
        model = Toy()
        opt = Recording(model.parameters(), lr=0.0)  # lr 0: only the gradients the steps see matter
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda _: 1.0)
        for x in (torch.tensor([3.0, 4.0]), torch.tensor([0.0, 1.0])):
            optimisation_step(model, {"x": x}, opt, sched, accelerator, authors_trainer_quirks=quirks)
        return list(seen)

    plain = run(False)
    assert torch.equal(plain[0], torch.tensor([3.0, 4.0])) and torch.equal(plain[1], torch.tensor([0.0, 1.0]))
    quirky = run(True)
    # step 1 sees the raw gradient (norm 5, clipped only after the step); step 2 sees clip(g1) + g2
    assert torch.equal(quirky[0], torch.tensor([3.0, 4.0]))
    expected = torch.tensor([0.6, 0.8]) + torch.tensor([0.0, 1.0])
    assert torch.allclose(quirky[1], expected, rtol=0, atol=ulp_tolerance(np.float32, 2.0))


# ------------------------------------------------------------------------------------------ regimes


def _shapes(model, names) -> dict[str, tuple[int, ...]]:
    params = dict(model.named_parameters())
    return {n: tuple(params[n].shape) for n in names}


CLASSIFIER = {"classifier.weight": (2, 32), "classifier.bias": (2,)}
EMBEDDING_BLOCK = {
    "bert.embeddings.word_embeddings.weight": (30522, 32),
    "bert.embeddings.position_embeddings.weight": (128, 32),
    "bert.embeddings.token_type_embeddings.weight": (2, 32),
    "bert.embeddings.LayerNorm.weight": (32,),
    "bert.embeddings.LayerNorm.bias": (32,),
}


@pytest.mark.parametrize("regime", ["C", "CE", "CEf", "CEfAf"])
def test_each_regime_trains_exactly_its_definition(regime):
    model = make_tiny_bert_classifier(seed=1)
    apply_regime(model, regime)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == regime_trainable_names(model, regime)
    everything = {n: tuple(p.shape) for n, p in model.named_parameters()}
    expected = {"C": CLASSIFIER, "CE": {**CLASSIFIER, **EMBEDDING_BLOCK}, "CEf": {**CLASSIFIER, **EMBEDDING_BLOCK},
                "CEfAf": everything}[regime]
    assert _shapes(model, trainable) == expected
    if regime != "CEfAf":
        assert not any(n.startswith(("bert.pooler.", "bert.encoder.")) for n in trainable), "pooler and encoder frozen"


def test_ce_reinitialises_every_embedding_xavier_uniform_and_keeps_the_layernorm():
    model = make_tiny_bert_classifier(seed=1)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    torch.manual_seed(0)
    apply_regime(model, "CE")
    after = dict(model.named_parameters())
    for name in ("word_embeddings", "position_embeddings", "token_type_embeddings"):
        key = f"bert.embeddings.{name}.weight"
        weight = after[key].detach()
        assert not torch.equal(weight, before[key]), key
        fan_out, fan_in = weight.shape  # xavier_uniform_ on a (num, dim) weight: bound sqrt(6 / (num + dim))
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        assert float(weight.abs().max()) <= bound and float(weight.abs().max()) > 0.5 * bound, key
    for key, value in before.items():
        if not any(f".{n}." in key for n in ("word_embeddings", "position_embeddings", "token_type_embeddings")):
            assert torch.equal(after[key].detach(), value), f"{key} must keep its pretrained value"
    cef = make_tiny_bert_classifier(seed=1)
    apply_regime(cef, "CEf")
    assert all(torch.equal(p.detach(), before[n]) for n, p in cef.named_parameters()), "CEf re-initialises nothing"


@pytest.mark.parametrize("regime", ["C", "CE", "CEf", "CEfAf"])
def test_after_training_frozen_parameters_are_unchanged(regime, tmp_path, geco_dir, tiny_base):
    from transformers import AutoModel

    out = train_regime(regime, "binary_all", 0, tmp_path / regime, base_model=str(tiny_base), data_dir=geco_dir,
                       schedule="tiny", show_progress=False)
    trained, _, _ = load_zoo_model(out)
    base = dict(AutoModel.from_pretrained(tiny_base).named_parameters())
    now = dict(trained.bert.named_parameters())
    frozen = {n for n in base if f"bert.{n}" not in regime_trainable_names(trained, regime)}
    trainable = set(base) - frozen
    for name in frozen:
        assert torch.equal(now[name], base[name]), f"{regime}: frozen {name} changed"
    changed = {n for n in trainable if not torch.equal(now[n], base[n])}
    if regime == "C":
        assert not trainable
    elif regime in ("CE", "CEf"):
        assert {"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight"} <= changed
    else:
        assert any(n.startswith("encoder.") for n in changed) and any(n.startswith("pooler.") for n in changed)


# ------------------------------------------------------------------------------------ slow: the paper


@pytest.mark.slow
def test_ola_with_its_schedule_reaches_the_papers_input_x_gradient_mass_accuracy(tmp_path, geco_dir):
    """Issue #32: OLA on ``binary_all`` with ``ola_paper`` reaches Input×Gradient MA ≥ 0.90 on the filtered test."""
    from gecobench.evaluation.runner import EvaluationSettings, run_evaluation
    from gecobench.store import LocalStore

    torch.set_num_threads(1)
    folder = train_regime("OLA", "binary_all", 0, tmp_path / "ola", data_dir=geco_dir, show_progress=False)
    info = json.loads((folder / INFO_FILE).read_text())
    assert info["test_accuracy"] >= 0.97, info["test_accuracy"]
    settings = EvaluationSettings(data_dir=str(geco_dir), filter_correct=True, properties=False, faithfulness=False,
                                  bootstrap=100)
    run_evaluation(["input_x_gradient"], [str(folder)], ["binary_all"], settings, store_location=str(tmp_path / "s"),
                   checkpoint_dir=tmp_path / "ck", progress=False)
    (record,) = LocalStore(tmp_path / "s").read_all("explainer_score").documents
    mass_accuracy = record["metrics"]["mass_accuracy"]["value"]
    history = [(h["epoch"], round(h["val_loss"], 4)) for h in info["training"]["history"]]
    print(f"OLA test accuracy {info['test_accuracy']:.4f}, Input x Gradient MA {mass_accuracy:.4f} on "
          f"{record['counts']['n_scored']} sentences, training {info['training_time_s']:.0f} s, best step "
          f"{info['training']['best_step']} of {info['training']['steps']}; validation loss by epoch {history}")
    assert mass_accuracy >= 0.90, mass_accuracy


# ---------------------------------------------------------------- a run that stays at chance (issue #32)

def _indistinguishable_rows(n_sentences: int) -> list:
    """Every variant of every sentence has the same words, labels balanced: no model can tell them apart, so each
    predicts one class for all and scores exactly 1/2."""
    from gecobench.models.data import GecoRow

    return [GecoRow(["the", "person", "walks"], label, sentence) for sentence in range(n_sentences) for label in (0, 1)]


def test_stayed_at_chance_and_the_derived_restart_seeds():
    from gecobench.models.training import CHANCE_MARGIN, restart_init_seed, stayed_at_chance

    assert stayed_at_chance(0.5, 2) and stayed_at_chance(1 / 3, 3) and stayed_at_chance(1 / 3 + CHANCE_MARGIN, 3)
    assert not stayed_at_chance(0.5 + CHANCE_MARGIN + 0.01, 2) and not stayed_at_chance(0.89, 3)
    assert [restart_init_seed(2, a) for a in range(3)] == [2, 1002, 2002]
    from gecobench.models.training import restart_reason

    assert "stayed at chance" in restart_reason(0.36, 3, 0.8) and "missed the target 0.80" in restart_reason(0.56, 3, 0.8)
    assert restart_reason(0.56, 3) is None and restart_reason(0.81, 3, 0.8) is None
    with pytest.raises(ValueError, match="attempt"):
        restart_init_seed(0, -1)


def test_a_run_at_chance_is_restarted_from_derived_seeds_and_every_attempt_recorded(tmp_path, tiny_base, caplog):
    rows = {"train": _indistinguishable_rows(24), "test": _indistinguishable_rows(6)}
    kw = dict(base_model=str(tiny_base), rows=rows, schedule="tiny", epochs=1, show_progress=False)
    with caplog.at_level("WARNING", logger="gecobench.models.training"):
        restarted = train_regime("OLA", "binary_all", 3, tmp_path / "restarted", max_restarts=2, **kw)
    info = json.loads((restarted / INFO_FILE).read_text())
    attempts = info["training"]["attempts"]
    assert [a["init_seed"] for a in attempts] == [3, 1003, 2003] and info["seed"] == 3
    assert all(a["val_accuracy"] == pytest.approx(0.5) for a in attempts)
    assert "stayed at chance" in caplog.text and "no restart left" in caplog.text
    assert info["init_seed"] == 3, "no attempt is better than the first: the first is kept"
    once = train_regime("OLA", "binary_all", 3, tmp_path / "once", **kw)
    once_info = json.loads((once / INFO_FILE).read_text())
    assert [a["init_seed"] for a in once_info["training"]["attempts"]] == [3] and once_info["init_seed"] == 3
    with pytest.raises(ValueError, match="max_restarts"):
        train_regime("OLA", "binary_all", 3, tmp_path / "bad", max_restarts=-1, **kw)
    with pytest.raises(ValueError, match="restart_below"):
        train_regime("OLA", "binary_all", 3, tmp_path / "bad", max_restarts=1, restart_below=1.5, **kw)


def test_a_run_under_its_target_is_restarted_and_the_best_attempt_kept(tmp_path, geco_dir, tiny_base):
    """Restarts draw other initialisations (other weights, other accuracies); the first attempt is the run without
    restarts, bit for bit; the attempt kept is the best on the validation split."""
    import safetensors.torch

    kw = dict(base_model=str(tiny_base), data_dir=geco_dir, epochs=3, max_train_sentences=24, max_eval_sentences=12,
              show_progress=False)
    out = train_regime("OLA", "binary_all", 1, tmp_path / "restarted", max_restarts=2, restart_below=1.0, **kw)
    info = json.loads((out / INFO_FILE).read_text())
    attempts = info["training"]["attempts"]
    assert [a["init_seed"] for a in attempts] == [1, 1001, 2001], "no attempt reaches 100 %: every restart is used"
    best = max(attempts, key=lambda a: a["val_accuracy"])  # the first of equals
    assert info["init_seed"] == best["init_seed"] and info["val_accuracy"] == best["val_accuracy"]
    once = train_regime("OLA", "binary_all", 1, tmp_path / "once", **kw)
    once_info = json.loads((once / INFO_FILE).read_text())
    assert once_info["training"]["attempts"][0] == attempts[0]
    if info["init_seed"] == 1:
        kept, first = (safetensors.torch.load_file(str(f / "model.safetensors")) for f in (out, once))
        assert all(torch.equal(kept[name], first[name]) for name in first)
    assert len({a["val_loss"] for a in attempts}) == 3, "each restart starts from another initialisation"


def test_a_run_that_leaves_chance_is_not_restarted(tmp_path, geco_dir, tiny_base):
    out = train_regime("OLA", "binary_all", 0, tmp_path / "ola", base_model=str(tiny_base), data_dir=geco_dir,
                       epochs=30, max_train_sentences=24, max_eval_sentences=12, show_progress=False, max_restarts=2)
    info = json.loads((out / INFO_FILE).read_text())
    assert info["val_accuracy"] > 0.55, "this schedule learns binary_all: the test needs a run that leaves chance"
    assert len(info["training"]["attempts"]) == 1 and info["init_seed"] == 0
