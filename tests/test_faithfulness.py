"""Faithfulness evaluators: the math by hand, the probe against an unbatched reference, the evaluate modules and
the record fields of an evaluation run."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier

from gecobench.evaluation import EvaluationSettings, run_evaluation
from gecobench.evaluation.faithfulness import (
    FaithfulnessProbe,
    score_faithfulness,
    to_checkpoint,
)
from gecobench.metrics import faithfulness as faith
from gecobench.store import LocalStore
from gecobench.words import tokenize_words

torch.set_num_threads(1)

# Probabilities are computed in float32 and lie in [0, 1]: batched and one-row-at-a-time passes differ only by
# the order of float32 sums, a few hundred ulps at most at this scale.
PROBABILITY_TOLERANCE = 512 * float(np.finfo(np.float32).eps)


# ------------------------------------------------------------------------------------------------ the math


def test_rationale_sizes_follow_ferret_floor_rule_and_skip_zero_scores():
    scores = np.array([0.5, 0.0, 0.2, 0.1, 0.0, 0.3, 0.7, 0.9, 0.4, 0.6, 0.8])  # 11 words, two zeros
    sizes = faith.rationale_sizes(scores)
    # floor(q * 11) = 1, 2, 3, 4, 5, 6, 7, 8, 9, 11 -> capped at the 9 non-zero words
    assert sizes.tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 9]
    assert faith.counted_in_aopc(sizes).tolist() == [True] * 9 + [False]
    # a 5-word sentence: 10 % of it is no word, 20 % and 30 % are both one word (counted once)
    short = faith.rationale_sizes(np.ones(5))
    assert short.tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5]
    assert faith.counted_in_aopc(short).tolist() == [False, True, False, True, False, True, False, True, False, True]
    assert faith.rationale_sizes(np.zeros(4)).tolist() == [0] * 10


def test_removal_masks_drop_or_keep_the_top_words_ties_broken_by_position():
    without, only = faith.removal_keep_masks(np.array([0.2, 0.9, 0.2, -1.0]), np.array([1, 2, 3]))
    # ranking by |score|: word 3, word 1, then the tie 0 before 2
    assert without.tolist() == [[1, 1, 1, 0], [1, 0, 1, 0], [0, 0, 1, 0]]
    assert (only == 1 - without).all()


def test_kendall_tau_b_matches_scipy_with_ties():
    from scipy.stats import kendalltau

    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 15))
        x, y = rng.integers(0, 4, n).astype(float), rng.normal(size=n).round(1)
        expected = kendalltau(x, y)[0]
        got = faith.kendall_tau_b(x, y)
        if np.isnan(expected):
            assert np.isnan(got)
        else:
            assert got == pytest.approx(expected, abs=1e-12)


def test_aopc_by_hand_and_undefined_sentences():
    out = faith.comprehensiveness_per_sentence([0.9, 0.6, 0.5], [[0.4, 0.1, 0.1], [0.8], []])
    np.testing.assert_allclose(out[:2], [(0.5 + 0.8 + 0.8) / 3, -0.2], atol=1e-15)
    assert np.isnan(out[2])
    tau = faith.leave_one_out_tau_per_sentence([[3.0, 1.0, 2.0], [1.0], [0.0, 0.0]], [[0.3, 0.1, 0.2], [0.5], [0.1, 0.2]])
    assert tau[0] == 1.0 and np.isnan(tau[1]) and np.isnan(tau[2])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: faith.comprehensiveness_per_sentence([0.9, 1.2], [[0.1], [0.1]]), "full_probability: sentence 1"),
        (lambda: faith.comprehensiveness_per_sentence([0.9], [[0.1], [0.1]]), "probability_without_rationale: 2 sentences"),
        (lambda: faith.sufficiency_per_sentence([0.9, 0.5], [[0.1], [0.2, float("nan")]]),
         "probability_rationale_only: sentence 1 position 1"),
        (lambda: faith.leave_one_out_tau_per_sentence([[1.0, 2.0], [1.0]], [[1.0, 2.0], [1.0, 3.0]]),
         "leave_one_out: sentence 1 has 1 attributions but 2 values"),
        (lambda: faith.rationale_sizes(np.ones(3), [0.5, 1.5]), "fractions: index 1"),
    ],
)
def test_bad_input_names_the_field_and_sentence(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        call()


# --------------------------------------------------------------------------- the probe against a reference

SENTENCES = [
    ["She", "told", "her", "brother", "about", "the", "unbelievably", "long", "journey", "home", "."],
    ["He", "smiled", "."],
    ["The", "actress", "won", "an", "award", "for", "her", "role", "in", "the", "film", "yesterday"],
    ["Mr", "Smith", "read", "his", "newspaper", "quietly"],
]
TARGETS = [0, 1, 1, 0]


def _reference_probability(model, tokenizer, words: list[str], target: int) -> float:
    """The model on the kept words tokenized afresh, one sentence, no padding: an independent path."""
    encoding, _ = tokenize_words(tokenizer, [words], padding=False, return_tensors="pt")
    with torch.no_grad():
        logits = model(input_ids=encoding["input_ids"], attention_mask=encoding["attention_mask"]).logits
    return float(torch.softmax(logits.double(), dim=-1)[0, target])


def _reference_faithfulness(model, tokenizer, words, target, scores):
    """Comprehensiveness, sufficiency and LOO tau computed sentence by sentence, string by string."""
    full = _reference_probability(model, tokenizer, words, target)
    order = sorted(range(len(words)), key=lambda j: -abs(scores[j]))
    positive = sum(1 for s in scores if s != 0)
    drops_without, drops_only, last = [], [], 0
    for q in faith.DEFAULT_REMOVAL_FRACTIONS:
        k = min(int(np.floor(q * len(words) + 1e-9)), positive)
        if k == 0 or k == last:
            continue
        last = k
        top = set(order[:k])
        drops_without.append(full - _reference_probability(model, tokenizer, [w for j, w in enumerate(words) if j not in top], target))
        drops_only.append(full - _reference_probability(model, tokenizer, [w for j, w in enumerate(words) if j in top], target))
    loo = [full - _reference_probability(model, tokenizer, words[:j] + words[j + 1:], target) for j in range(len(words))]
    nan = float("nan")
    return (np.mean(drops_without) if drops_without else nan, np.mean(drops_only) if drops_only else nan,
            np.array(loo), full)


def _special_token_only_probability(model, tokenizer, target):
    ids = torch.tensor([[tokenizer.cls_token_id, tokenizer.sep_token_id]])
    with torch.no_grad():
        return float(torch.softmax(model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits.double(), -1)[0, target])


@pytest.fixture(scope="module")
def tiny_model():
    return make_tiny_bert_classifier(seed=3)


def test_probe_equals_the_unbatched_string_by_string_reference(tiny_model, bert_tokenizer):
    rng = np.random.default_rng(1)
    scores = [rng.uniform(size=len(w)) * (rng.uniform(size=len(w)) > 0.2) for w in SENTENCES]
    results = FaithfulnessProbe(tiny_model, bert_tokenizer, tokens_per_forward=64).evaluate(SENTENCES, TARGETS, scores)
    for words, target, row, got in zip(SENTENCES, TARGETS, scores, results):
        comprehensiveness, sufficiency, loo, full = _reference_faithfulness(tiny_model, bert_tokenizer, words, target, row)
        assert got.full_probability == pytest.approx(full, abs=PROBABILITY_TOLERANCE)
        assert got.comprehensiveness == pytest.approx(comprehensiveness, abs=PROBABILITY_TOLERANCE, nan_ok=True)
        assert got.sufficiency == pytest.approx(sufficiency, abs=PROBABILITY_TOLERANCE, nan_ok=True)
        np.testing.assert_allclose(got.leave_one_out, loo, rtol=0, atol=PROBABILITY_TOLERANCE)
        # (tau itself is not compared with the reference's: near-tied effects may tie in one precision only)
        assert got.leave_one_out_tau == pytest.approx(faith.kendall_tau_b(np.abs(row), got.leave_one_out), nan_ok=True)
    # the whole-sentence removal (fraction 1.0) reads [CLS] [SEP]; keeping every word gives p(x) back
    long = results[0]
    assert long.comprehensiveness_curve[-1] == pytest.approx(
        long.full_probability - _special_token_only_probability(tiny_model, bert_tokenizer, TARGETS[0]),
        abs=PROBABILITY_TOLERANCE)


def test_batched_equals_one_sentence_at_a_time_and_cache_changes_nothing(tiny_model, bert_tokenizer, monkeypatch):
    scores = [np.arange(len(w), dtype=float)[::-1] + 1 for w in SENTENCES]
    probe = FaithfulnessProbe(tiny_model, bert_tokenizer)
    together = probe.evaluate(SENTENCES, TARGETS, scores)
    alone = [FaithfulnessProbe(tiny_model, bert_tokenizer).evaluate([w], [t], [s])[0]
             for w, t, s in zip(SENTENCES, TARGETS, scores)]
    for a, b in zip(together, alone):
        for field in ("full_probability", "comprehensiveness", "sufficiency", "leave_one_out_tau"):
            assert getattr(a, field) == pytest.approx(getattr(b, field), abs=PROBABILITY_TOLERANCE, nan_ok=True)
        np.testing.assert_allclose(a.comprehensiveness_curve, b.comprehensiveness_curve, atol=PROBABILITY_TOLERANCE)

    # a second explainer on the same sentences: p(x), the leave-one-out rows and any rationale seen before come
    # from the cache
    import gecobench.evaluation.faithfulness as module

    rows_asked = []
    original = module.outputs_without_words

    def counting(forward, model, batch, pairs, *args, **kwargs):
        rows_asked.append(sum(len(keep) for _, keep in pairs))
        return original(forward, model, batch, pairs, *args, **kwargs)

    monkeypatch.setattr(module, "outputs_without_words", counting)
    reversed_scores = [s[::-1].copy() for s in scores]
    cached = probe.evaluate(SENTENCES, TARGETS, reversed_scores)
    fresh = FaithfulnessProbe(tiny_model, bert_tokenizer).evaluate(SENTENCES, TARGETS, reversed_scores)
    assert rows_asked[0] <= rows_asked[1] - sum(1 + len(w) for w in SENTENCES)
    again = probe.evaluate(SENTENCES, TARGETS, reversed_scores)
    assert len(rows_asked) == 2, "a third call with rows all seen before must not call the model"
    np.testing.assert_array_equal([a.comprehensiveness for a in again], [a.comprehensiveness for a in cached])
    for a, b in zip(cached, fresh):
        assert a.comprehensiveness == pytest.approx(b.comprehensiveness, abs=PROBABILITY_TOLERANCE, nan_ok=True)
        assert a.leave_one_out_tau == pytest.approx(b.leave_one_out_tau, abs=1e-9, nan_ok=True)


def test_an_explanation_ordered_like_leave_one_out_beats_its_reverse(tiny_model, bert_tokenizer):
    probe = FaithfulnessProbe(tiny_model, bert_tokenizer)
    first = probe.evaluate(SENTENCES, TARGETS, [np.ones(len(w)) for w in SENTENCES])
    # scores ordered exactly like the leave-one-out drops (ties kept), all positive, and the reverse order
    oracle = [r.leave_one_out - r.leave_one_out.min() + 1.0 for r in first]
    anti = [r.leave_one_out.max() - r.leave_one_out + 1.0 for r in first]
    good, bad = probe.evaluate(SENTENCES, TARGETS, oracle), probe.evaluate(SENTENCES, TARGETS, anti)
    assert all(g.leave_one_out_tau == pytest.approx(1.0) for g in good if len(g.leave_one_out) > 1)
    assert all(b.leave_one_out_tau == pytest.approx(-1.0) for b in bad if len(b.leave_one_out) > 1)
    # removing the single most damaging word first (fraction 1/n) beats removing the least damaging
    for g, b in zip(good, bad):
        first_defined = np.flatnonzero(np.isfinite(g.comprehensiveness_curve))[0]
        assert g.comprehensiveness_curve[first_defined] >= b.comprehensiveness_curve[first_defined]


def test_probe_rejects_bad_scores_naming_the_sentence(tiny_model, bert_tokenizer):
    probe = FaithfulnessProbe(tiny_model, bert_tokenizer)
    with pytest.raises(ValueError, match="scores: sentence 1 has 2 scores for 3 words"):
        probe.evaluate(SENTENCES[:2], TARGETS[:2], [np.ones(11), np.ones(2)])
    with pytest.raises(ValueError, match="scores: sentence 0 has a NaN"):
        probe.evaluate(SENTENCES[:1], TARGETS[:1], [np.full(11, np.nan)])
    with pytest.raises(ValueError, match="targets: entry 1 is class 2 but the model has 2 classes"):
        probe.evaluate(SENTENCES[:2], [0, 2], [np.ones(11), np.ones(3)])


def test_record_blocks_from_checkpoint_columns(tiny_model, bert_tokenizer):
    scores = [np.arange(len(w), dtype=float) for w in SENTENCES]
    results = FaithfulnessProbe(tiny_model, bert_tokenizer).evaluate(SENTENCES, TARGETS, scores)
    columns = json.loads(json.dumps(to_checkpoint(results)))  # what a checkpoint round-trip gives back
    blocks = score_faithfulness([columns], faith.DEFAULT_REMOVAL_FRACTIONS, bootstrap=50, seed=0)
    expected = np.nanmean([r.comprehensiveness for r in results])
    assert blocks["comprehensiveness"]["value"] == pytest.approx(expected, abs=1e-12)
    assert blocks["sufficiency"]["direction"] == "lower" and blocks["comprehensiveness"]["direction"] == "higher"
    assert set(blocks["comprehensiveness"]["by_fraction"]) == {f"{q:g}" for q in faith.DEFAULT_REMOVAL_FRACTIONS}
    assert blocks["comprehensiveness"]["ci_low"] <= blocks["comprehensiveness"]["value"] <= blocks["comprehensiveness"]["ci_high"]
    missing = score_faithfulness([columns, None], faith.DEFAULT_REMOVAL_FRACTIONS, bootstrap=0, seed=0)
    assert missing["leave_one_out_tau"]["value"] is None and "not computed" in missing["leave_one_out_tau"]["reason"]


# ----------------------------------------------------------------------------------- evaluate modules


def test_modules_compute_what_the_math_computes():
    import evaluate

    full, without = [0.9, 0.6, 0.5], [[0.4, 0.1, 0.1], [0.8], []]
    out = evaluate.load("metrics/comprehensiveness").compute(full_probability=full, probability_without_rationale=without,
                                                             return_per_sentence=True)
    expected = faith.comprehensiveness_per_sentence(full, without)
    assert out["comprehensiveness"] == pytest.approx(np.nanmean(expected)) and out["n_undefined"] == 1
    suff = evaluate.load("metrics/sufficiency")
    with pytest.raises(ValueError, match="probability_rationale_only: sentence 0 position 0"):
        suff.compute(full_probability=[0.5], probability_rationale_only=[[-0.1]])
    tau = evaluate.load("metrics/leave_one_out_tau").compute(attributions=[[1.0, 2.0, 3.0]], leave_one_out=[[0.3, 0.2, 0.1]])
    assert tau["leave_one_out_tau"] == pytest.approx(-1.0)


# ------------------------------------------------------------------------------------- evaluation run


def test_evaluation_writes_faithfulness_blocks_and_the_flag_turns_them_off(tmp_path, geco_dir, bert_tokenizer):
    folder = tmp_path / "CE"
    make_tiny_bert_classifier(seed=0).save_pretrained(folder)
    bert_tokenizer.save_pretrained(folder)
    (folder / "gecobench_model.json").write_text(json.dumps({
        "regime": "CE", "base_model": "tiny-bert", "base_revision": None, "geco_config": "binary_all",
        "seed": 0, "num_labels": 2}))
    common = {"data_dir": str(geco_dir), "filter": "none", "properties": False, "max_groups": 2,
              "chunk_size": 1, "bootstrap": 10, "batch_size": 4}
    records = {}
    for on in (True, False):
        store = tmp_path / f"store-{on}"
        run_evaluation(["saliency", "uniform_random"], [str(folder)], ["binary_all"],
                       EvaluationSettings(faithfulness=on, **common), store_location=str(store),
                       checkpoint_dir=tmp_path / f"ck-{on}", progress=False)
        report = LocalStore(store).read_all("explainer_score")
        assert report.warnings == []
        records[on] = {r["explainer"]["name"]: r for r in report.documents}
    saliency = records[True]["saliency"]
    for name in ("comprehensiveness", "sufficiency", "leave_one_out_tau"):
        block = saliency["metrics"][name]
        assert block["value"] is not None and -1.0 <= block["value"] <= 1.0, name
        assert block["n_scored"] + block["n_undefined"] == saliency["counts"]["n_scored"]
    assert saliency["protocol"]["faithfulness"]["removal_fractions"][0] == 0.1
    for name in ("saliency", "uniform_random"):
        off = records[False][name]
        assert "faithfulness" not in off["protocol"]
        assert not {"comprehensiveness", "sufficiency", "leave_one_out_tau"} & set(off["metrics"])
        # the rest of the record is untouched by the faithfulness evaluators
        assert off["metrics"]["mass_accuracy"] == records[True][name]["metrics"]["mass_accuracy"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_probe_on_the_gpu_equals_the_cpu(bert_tokenizer):
    import copy

    cpu_model = make_tiny_bert_classifier(seed=3).double()  # float64 on both devices: equal up to rounding
    gpu_model = copy.deepcopy(cpu_model).to("cuda")
    scores = [np.arange(len(w), dtype=float) + 1 for w in SENTENCES]
    on_cpu = FaithfulnessProbe(cpu_model, bert_tokenizer).evaluate(SENTENCES, TARGETS, scores)
    on_gpu = FaithfulnessProbe(gpu_model, bert_tokenizer).evaluate(SENTENCES, TARGETS, scores)
    tolerance = 1e6 * float(np.finfo(np.float64).eps)
    for a, b in zip(on_gpu, on_cpu):
        np.testing.assert_allclose(a.comprehensiveness_curve, b.comprehensiveness_curve, atol=tolerance)
        np.testing.assert_allclose(a.sufficiency_curve, b.sufficiency_curve, atol=tolerance)
        np.testing.assert_allclose(a.leave_one_out, b.leave_one_out, atol=tolerance)
