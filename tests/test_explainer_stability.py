"""Split-half agreement: the stability estimate the sampling explainers (Gradient SHAP, LIME, Kernel SHAP) report
per sentence, from two halves of their own samples, without extra model calls."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY_PROTOCOL
from test_explainers import TARGETS, WORDS

from gecobench.explainers import get_explainer
from gecobench.explainers.engine import attribute_detailed
from gecobench.explainers.stability import split_half_agreement

torch.set_num_threads(1)  # one thread, as the evaluation tests run (their import set it before)

SAMPLING = ["gradient_shap", "lime", "kernel_shap"]


def test_split_half_agreement_is_the_correlation_of_the_halves():
    scores = np.array([0.1, 2.0, 0.5, 0.05])
    assert split_half_agreement(scores, 3 * scores + 1) == pytest.approx(1.0)
    assert split_half_agreement(scores, -scores) == pytest.approx(-1.0)
    other = np.array([1.0, 0.2, 0.3, 0.4])
    assert split_half_agreement(scores, other) == pytest.approx(np.corrcoef(scores, other)[0, 1])


@pytest.mark.parametrize("first, second", [([1.0, 2.0], [2.0, 1.0]), ([0.3, 0.3, 0.3], [1.0, 2.0, 3.0]),
                                           ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])])
def test_split_half_agreement_is_undefined_without_a_ranking_to_agree_on(first, second):
    assert np.isnan(split_half_agreement(np.array(first), np.array(second)))


def test_split_half_agreement_refuses_halves_of_different_sentences():
    with pytest.raises(ValueError, match="3 and 4 words"):
        split_half_agreement(np.ones(3), np.ones(4))


@pytest.mark.parametrize("name", SAMPLING)
def test_every_sentence_gets_an_agreement_that_batching_does_not_change(name, model64, tokenizer):
    batched = attribute_detailed(get_explainer(name), model64, tokenizer, WORDS, TARGETS, seed=3)
    single = attribute_detailed(get_explainer(name), model64, tokenizer, WORDS, TARGETS, seed=3, batch_size=1)
    agreement = batched.diagnostics["split_half_agreement"]
    assert agreement.shape == (len(WORDS),)
    defined = np.array([len(w) >= 3 for w in WORDS])
    assert np.isnan(agreement[~defined]).all() and np.isfinite(agreement[defined]).all()
    assert (np.abs(agreement[defined]) <= 1).all()
    np.testing.assert_allclose(agreement, single.diagnostics["split_half_agreement"], atol=1e-6)


def test_kernel_shap_agreement_is_the_same_in_captums_own_loop(model64, tokenizer):
    packed = attribute_detailed(get_explainer("kernel_shap"), model64, tokenizer, WORDS, TARGETS)
    loop = attribute_detailed(get_explainer("kernel_shap", perturbations_per_eval=1, deduplicate=False), model64,
                              tokenizer, WORDS, TARGETS)
    np.testing.assert_allclose(packed.diagnostics["split_half_agreement"],
                               loop.diagnostics["split_half_agreement"], atol=1e-6)


@pytest.mark.parametrize("name, few, many", [("gradient_shap", 4, 64), ("lime", 20, 600), ("kernel_shap", 25, 400)])
def test_more_samples_make_the_halves_agree_more(name, few, many, model64, tokenizer):
    def mean_agreement(n_samples: int) -> float:
        result = attribute_detailed(get_explainer(name, n_samples=n_samples), model64, tokenizer, WORDS, TARGETS)
        return float(np.nanmean(result.diagnostics["split_half_agreement"]))

    low, high = mean_agreement(few), mean_agreement(many)
    assert high > low and high > 0.9


def test_the_evaluation_records_the_agreement(tiny_models, geco_dir, tmp_path):
    from gecobench.evaluation import EvaluationSettings, run_evaluation
    from gecobench.store import LocalStore

    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", properties=False, **TINY_PROTOCOL)
    run_evaluation(["lime:n_samples=20", "kernel_shap"], [tiny_models["CE"]], ["binary_all"], settings,
                   store_location=str(tmp_path / "r"), checkpoint_dir=tmp_path / "ck", progress=False)
    for record in LocalStore(tmp_path / "r").read_all("explainer_score").documents:
        summary = record["explainer"]["diagnostics"]["split_half_agreement"]
        assert 0 < summary["n"] <= record["counts"]["n_scored"]
        assert -1 <= summary["min"] <= summary["median"] <= summary["max"] <= 1
