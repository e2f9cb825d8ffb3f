"""Integrated Gradients with an accuracy target: per sentence, the fewest Gauss–Legendre steps whose completeness
error is below the tolerance, steps and error reported; an explicit ``n_steps`` still runs a fixed count.

These tests pin the Gauss–Legendre doubling schedule (the 2.0.0 default, ``method="gausslegendre"`` since 3.0.0,
whose default is the nested Clenshaw–Curtis rule of ``test_integrated_gradients_nested.py``): they compare each
adaptive round with a fixed Captum run of the same step count, which only that schedule has."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY_PROTOCOL
from ig_helpers import logit_ig
from test_explainers import TARGETS, WORDS, BagOfWordsModel
from tolerances import max_error_relative_to_largest

from gecobench.explainers.builtin import completeness_error
from gecobench.explainers.engine import attribute, attribute_detailed

torch.set_num_threads(1)  # one thread, as the evaluation tests run (their import set it before)

# The float64 tiny BERT is smooth: from one step on, these settings make the sentences stop at different counts
# (1, 2, 4 or 8 steps) while float64 rounding (~1e-13 relative) stays far below the tolerance.
VARIED = {"method": "gausslegendre", "min_steps": 1, "tolerance": 1e-5, "max_steps": 64}
ROUNDING64 = 1e4 * float(np.finfo(np.float64).eps)


def test_the_doubling_schedule_is_adaptive_and_recorded_as_such():
    explainer = logit_ig( method="gausslegendre")
    assert explainer.adaptive and not explainer.nested and not explainer.locally_adaptive
    params = explainer.protocol()["params"]
    assert params == {"n_steps": None, "method": "gausslegendre", "tolerance": 0.01, "min_steps": 8, "max_steps": 256,
                      "attribution_point": "embedding_block", "output": "logit"}
    assert explainer.step_schedule() == [8, 16, 32, 64, 128, 256]
    assert logit_ig( method="gausslegendre", min_steps=3,
                         max_steps=20).step_schedule() == [3, 6, 12, 20]
    fixed = logit_ig( n_steps=200)
    assert not fixed.adaptive and fixed.params() == {"n_steps": 200, "method": "gausslegendre",
                                                                    "attribution_point": "embedding_block", "output": "logit"}
    assert fixed.step_schedule() == [200] and fixed.rows_per_sentence == 200


@pytest.mark.parametrize("params, message", [
    ({"tolerance": 0.0}, "tolerance"), ({"tolerance": 1.5}, "tolerance"), ({"min_steps": 0}, "min_steps"),
    ({"min_steps": 16, "max_steps": 8}, "max_steps"), ({"n_steps": 0}, "n_steps"),
])
def test_bad_settings_are_refused_naming_the_setting(params, message):
    with pytest.raises(ValueError, match=message):
        logit_ig( method="gausslegendre", **params)


def test_each_sentence_gets_the_fewest_scheduled_steps_that_reach_the_tolerance(model64, tokenizer):
    adaptive = logit_ig( **VARIED)
    result = attribute_detailed(adaptive, model64, tokenizer, WORDS, TARGETS)
    steps, errors = result.diagnostics["n_steps"], result.diagnostics["completeness_error"]
    assert steps.shape == errors.shape == (len(WORDS),)
    assert len(set(steps.tolist())) > 1, "the test needs sentences that stop at different step counts"
    assert (errors <= VARIED["tolerance"]).all()
    schedule = adaptive.step_schedule()
    for i, (words, target) in enumerate(zip(WORDS, TARGETS)):
        # a fixed run with the chosen count gives the same scores and error ...
        fixed = attribute_detailed(logit_ig( n_steps=int(steps[i])), model64, tokenizer,
                                   [words], [target])
        assert max_error_relative_to_largest(fixed.scores, [result.scores[i]]) < 1e-9
        # the errors agree up to the rounding of the gap, a sum over ~1e3 float64 terms of order one
        assert fixed.diagnostics["completeness_error"][0] == pytest.approx(errors[i], rel=1e-6, abs=ROUNDING64)
        # ... and the count before it in the schedule was not enough (the step count grew only where needed)
        position = schedule.index(int(steps[i]))
        if position > 0:
            fewer = attribute_detailed(logit_ig( n_steps=schedule[position - 1]),
                                       model64, tokenizer, [words], [target])
            assert fewer.diagnostics["completeness_error"][0] > VARIED["tolerance"]


def test_completeness_error_is_the_relative_gap_between_attributions_and_output_difference(model64, tokenizer):
    result = attribute_detailed(logit_ig( n_steps=2), model64, tokenizer, WORDS, TARGETS)
    from gecobench.explainers.inputs import EmbeddingForward, embed, encode_batch

    forward = EmbeddingForward(model64)
    for i, (words, target) in enumerate(zip(WORDS, TARGETS)):
        batch = encode_batch(tokenizer, [words], torch.device("cpu"))
        with torch.no_grad():
            f_x = forward(embed(model64, batch.input_ids), batch.attention_mask)[0, target]
            f_b = forward(embed(model64, batch.reference_ids), batch.attention_mask)[0, target]
        difference = float(f_x - f_b)
        gap = result.diagnostics["convergence_delta"][i]
        assert result.diagnostics["completeness_error"][i] == pytest.approx(abs(gap) / abs(difference), rel=1e-9)
    assert (result.diagnostics["n_steps"] == 2).all()


def test_completeness_error_floors_a_vanishing_output_difference_at_the_dtype_resolution():
    gap, difference = np.array([1e-3, 1e-3, 1e-9]), np.array([0.5, 0.0, 0.0])
    floor32 = float(np.sqrt(np.finfo(np.float32).eps))
    np.testing.assert_allclose(completeness_error(gap, difference, torch.float32), [2e-3, 1e-3 / floor32, 1e-9 / floor32])
    # float64 resolves much smaller differences: the same zero difference gets a much smaller floor
    assert completeness_error(gap, difference, torch.float64)[1] > 1e3 * completeness_error(gap, difference, torch.float32)[1]
    assert completeness_error(-gap, difference, torch.float32)[0] == pytest.approx(2e-3)


def test_adaptive_batched_scores_equal_one_sentence_at_a_time(model64, tokenizer):
    batched = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS,
                                 seed=7)
    single = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS,
                                batch_size=1, seed=7)
    one_batch = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS,
                                   TARGETS, batch_size=len(WORDS), seed=7)
    assert max_error_relative_to_largest(batched.scores, single.scores) < 1e-5
    assert max_error_relative_to_largest(one_batch.scores, single.scores) < 1e-5
    np.testing.assert_array_equal(one_batch.diagnostics["n_steps"], single.diagnostics["n_steps"])
    # a tiny token budget splits every round into many passes; scores stay the same
    small = attribute(logit_ig( tokens_per_forward=16, **VARIED), model64, tokenizer,
                      WORDS, TARGETS)
    assert max_error_relative_to_largest(small, single.scores) < 1e-5


def test_a_sentence_that_never_reaches_the_tolerance_stops_at_max_steps_and_says_so(model64, tokenizer):
    strict = logit_ig( method="gausslegendre", min_steps=1, max_steps=3, tolerance=1e-12)
    result = attribute_detailed(strict, model64, tokenizer, WORDS, TARGETS)
    assert (result.diagnostics["n_steps"] == 3).all()
    assert (result.diagnostics["completeness_error"] > 1e-12).all()
    fixed = attribute(logit_ig( n_steps=3), model64, tokenizer, WORDS, TARGETS)
    assert max_error_relative_to_largest(result.scores, fixed) < 1e-9


def test_an_additive_model_is_integrated_exactly_at_the_first_count(tokenizer):
    she = tokenizer.convert_tokens_to_ids("she")
    model = BagOfWordsModel(tokenizer.vocab_size, {she: (0.0, 3.0)})
    words = [["yesterday", "she", "went", "home"], ["she", "is"]]
    result = attribute_detailed(logit_ig( method="gausslegendre"), model, tokenizer, words,
                                [1, 1])
    assert (result.diagnostics["n_steps"] == 8).all()
    # exact up to Captum's Gauss–Legendre weights, which it stores in float32 (their sum is 1 within ~eps32)
    assert (result.diagnostics["completeness_error"] < 10 * float(np.finfo(np.float32).eps)).all()
    for sentence, score in zip(words, result.scores):
        np.testing.assert_allclose(score, [3.0 if w == "she" else 0.0 for w in sentence], atol=1e-9)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_adaptive_scores_and_steps_on_the_gpu_equal_the_cpu(model64, tokenizer):
    import copy

    gpu_model = copy.deepcopy(model64).to("cuda")
    on_cpu = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS)
    on_gpu = attribute_detailed(logit_ig( **VARIED), gpu_model, tokenizer, WORDS, TARGETS)
    assert max_error_relative_to_largest(on_gpu.scores, on_cpu.scores) < 1e-6
    np.testing.assert_array_equal(on_gpu.diagnostics["n_steps"], on_cpu.diagnostics["n_steps"])


def test_the_evaluation_records_the_steps_used_and_the_error_reached(tiny_models, geco_dir, tmp_path):
    from gecobench.evaluation import EvaluationSettings, run_evaluation
    from gecobench.store import LocalStore

    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", properties=False, **TINY_PROTOCOL)
    # the default (adaptive Simpson) rule from 2 intervals on a grid of 16: 1 interior node, then 2 per halving,
    # 15 at most
    run_evaluation(["integrated_gradients:min_steps=2,max_steps=16", "integrated_gradients:n_steps=4"],
                   [tiny_models["CE"]], ["binary_all"], settings, store_location=str(tmp_path / "r"),
                   checkpoint_dir=tmp_path / "ck", progress=False)
    report = LocalStore(tmp_path / "r").read_all("explainer_score")
    by_steps = {r["explainer"]["params"]["n_steps"]: r for r in report.documents}
    adaptive, fixed = by_steps[None], by_steps[4]
    n_scored = adaptive["counts"]["n_scored"]
    steps, error = adaptive["explainer"]["diagnostics"]["n_steps"], adaptive["explainer"]["diagnostics"]["completeness_error"]
    assert steps["n"] == error["n"] == n_scored > 0
    assert {steps["min"], steps["max"]} <= set(range(1, 16, 2)) and steps["min"] <= steps["mean"] <= steps["max"]
    assert error["max"] <= 0.01 or steps["max"] == 15  # either every sentence converged or some hit the cap
    assert fixed["explainer"]["diagnostics"]["n_steps"] == {"n": n_scored, "mean": 4.0, "median": 4.0, "min": 4.0, "max": 4.0}
