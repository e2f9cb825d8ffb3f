"""Integrated Gradients on nested Clenshaw–Curtis levels (the 3.0.0 default, ``method="clenshaw_curtis"`` since
4.0.0): the rule, the reuse of gradients across levels, the cost per sentence, and the same scores whatever the
batching."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from ig_helpers import logit_ig
from model_calls import RowCounter
from test_explainers import TARGETS, WORDS
from tolerances import (
    max_error_relative_to_largest,
    relative_ulp_tolerance,
    ulp_tolerance,
)
from torch import nn

from gecobench.explainers.engine import attribute, attribute_detailed
from gecobench.explainers.inputs import EmbeddingForward, embed, encode_batch
from gecobench.explainers.quadrature import (
    clenshaw_curtis_nodes,
    clenshaw_curtis_weights,
)
from gecobench.words import fold_token_scores_to_words

# On the float64 tiny BERT these settings make the sentences stop at different levels (5 and 9 nodes, see
# test_sentences_converge_independently) while float64 rounding stays far below the tolerance.
VARIED = {"method": "clenshaw_curtis", "min_steps": 1, "tolerance": 1e-5, "max_steps": 64}
LEVELS = [1, 2, 3, 4, 5, 8, 16, 32, 64]


# ------------------------------------------------------------------------------------------------------ the rule


@pytest.mark.parametrize("n", LEVELS)
def test_the_rule_integrates_polynomials_up_to_degree_n_exactly_and_its_weights_sum_to_one(n):
    nodes, weights = clenshaw_curtis_nodes(n), clenshaw_curtis_weights(n)
    assert nodes.shape == weights.shape == (n + 1,) and nodes.dtype == weights.dtype == np.float64
    assert nodes[0] == 0.0 and nodes[-1] == 1.0 and (np.diff(nodes) > 0).all()
    assert (weights > 0).all()
    # n + 1 terms of size <= 1 summed in float64
    exact = ulp_tolerance(np.float64, 1.0, ulps=4 * (n + 1))
    assert abs(weights.sum() - 1.0) <= exact
    for degree in range(n + 1):
        assert abs(weights @ nodes**degree - 1.0 / (degree + 1)) <= exact, degree
    # and not exact for everything: the Chebyshev polynomial T_2n equals 1 at every node (aliasing), so the rule
    # returns 1 where the integral over [0, 1] of T_2n(2a - 1) is 1 / (1 - (2n)^2)
    chebyshev = np.polynomial.chebyshev.chebval(2 * nodes - 1, np.eye(2 * n + 1)[-1])
    assert abs(weights @ chebyshev - 1.0 / (1 - (2 * n) ** 2)) > 0.5


@pytest.mark.parametrize("n", LEVELS[:-1])
def test_each_level_contains_the_nodes_of_the_level_before(n):
    coarse, fine = clenshaw_curtis_nodes(n), clenshaw_curtis_nodes(2 * n)
    # bit for bit: node k of level n is node 2k of level 2n, so a gradient computed once serves both
    np.testing.assert_array_equal(fine[::2], coarse)
    assert len(np.setdiff1d(fine, coarse)) == n  # refining costs exactly n new nodes


@pytest.mark.parametrize("level", [0, -2, 2.5, True])
def test_the_rule_refuses_a_level_that_is_not_a_positive_integer(level):
    with pytest.raises(ValueError, match="level"):
        clenshaw_curtis_weights(level)
    with pytest.raises(ValueError, match="level"):
        clenshaw_curtis_nodes(level)


# ----------------------------------------------------------------------------------------------- the explainer


def test_the_nested_rule_keeps_its_settings_and_a_fixed_count_still_runs_captum():
    explainer = logit_ig( method="clenshaw_curtis")
    assert explainer.adaptive and explainer.nested and not explainer.locally_adaptive
    assert explainer.params() == {"n_steps": None, "method": "clenshaw_curtis", "tolerance": 0.01, "min_steps": 4,
                                  "max_steps": 256, "attribution_point": "embedding_block", "output": "logit"}
    assert explainer.step_schedule() == [4, 8, 16, 32, 64, 128, 256]
    assert explainer.rows_per_sentence == 5  # the first level's nodes
    paper = logit_ig( n_steps=200)
    assert not paper.nested and paper.params() == {"n_steps": 200, "method": "gausslegendre",
                                                                    "attribution_point": "embedding_block", "output": "logit"}
    old = logit_ig( method="gausslegendre")
    assert old.adaptive and not old.nested and old.step_schedule() == [8, 16, 32, 64, 128, 256]


@pytest.mark.parametrize("params, message", [
    ({"method": "simpson"}, "method must be one of"),
    ({"method": "clenshaw_curtis", "n_steps": 16}, "adaptive only"),
    ({"method": "clenshaw_curtis", "max_steps": 24}, "power of two"),
    ({"method": "clenshaw_curtis", "min_steps": 3, "max_steps": 9}, "power of two"),
    ({"min_steps": 0}, "min_steps"),
    ({"min_steps": 8, "max_steps": 4}, "max_steps"),
    ({"tolerance": 0.0}, "tolerance"),
    ({"tolerance": 1.0}, "tolerance"),
    ({"n_steps": 0}, "n_steps"),
])
def test_bad_settings_are_refused_naming_the_setting(params, message):
    with pytest.raises(ValueError, match=message):
        logit_ig( **params)


def test_a_sentence_costs_the_node_count_of_its_final_level_and_nothing_more(model64, tokenizer):
    total = 0
    for words, target in zip(WORDS, TARGETS):
        explainer = logit_ig( **VARIED)
        with RowCounter(model64) as counter, torch.enable_grad():
            explainer.explain(model64, tokenizer, [words], [target])
        steps = int(explainer.last_diagnostics["n_steps"][0])
        # the final level n has n + 1 nodes; every coarser level's gradients were reused, and f(x), f(reference)
        # came from the nodes at the path's ends (no extra forward passes)
        assert steps - 1 in explainer.step_schedule()
        assert sum(counter.rows) == steps
        total += steps
    # several sentences in one batch: still their node counts summed
    explainer = logit_ig( **VARIED)
    with RowCounter(model64) as counter, torch.enable_grad():
        explainer.explain(model64, tokenizer, WORDS, TARGETS)
    assert sum(counter.rows) == explainer.last_diagnostics["n_steps"].sum() == total
    # the non-nested rule pays for every level it passes: the nested one must be cheaper on the same sentences
    doubling = logit_ig( **{**VARIED, "method": "gausslegendre"})
    with RowCounter(model64) as counter, torch.enable_grad():
        doubling.explain(model64, tokenizer, WORDS, TARGETS)
    assert sum(counter.rows) > total


def _one_sentence_by_hand(model, tokenizer, words, target, level):
    """IG at Clenshaw–Curtis level ``level`` for one sentence, one node at a time, written out independently."""
    batch = encode_batch(tokenizer, [words], torch.device("cpu"))
    forward = EmbeddingForward(model)
    x, b = embed(model, batch.input_ids).detach(), embed(model, batch.reference_ids).detach()
    integral = torch.zeros_like(x)
    for alpha, weight in zip(clenshaw_curtis_nodes(level), clenshaw_curtis_weights(level)):
        point = (b + float(alpha) * (x - b)).requires_grad_(True)
        output = forward(point, batch.attention_mask)[0, target]
        integral += float(weight) * torch.autograd.grad(output, point)[0]
    token_scores = ((x - b) * integral).sum(dim=-1)[0].numpy()
    return fold_token_scores_to_words(token_scores, batch.word_ids[0], len(words))


def test_batched_scores_equal_a_one_sentence_one_node_at_a_time_computation(model64, tokenizer):
    batched = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS)
    one_batch = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS,
                                   TARGETS, batch_size=len(WORDS))
    # a tiny token budget: one row per pass
    tiny = attribute_detailed(logit_ig( tokens_per_forward=1, **VARIED), model64,
                              tokenizer, WORDS, TARGETS)
    by_hand = [_one_sentence_by_hand(model64, tokenizer, words, target, int(steps) - 1)
               for words, target, steps in zip(WORDS, TARGETS, batched.diagnostics["n_steps"])]
    # float64 forward and backward passes reordered by padding and batching: a few hundred ulps of the largest
    # score at most (each score is a weighted sum over <= 65 nodes of sums over the hidden dimension)
    tolerance = relative_ulp_tolerance(np.float64, ulps=1024)
    for result in (batched, one_batch, tiny):
        np.testing.assert_array_equal(result.diagnostics["n_steps"], batched.diagnostics["n_steps"])
        assert max_error_relative_to_largest(result.scores, by_hand) < tolerance


def test_sentences_converge_independently(model64, tokenizer):
    every = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS,
                               batch_size=len(WORDS))
    steps = every.diagnostics["n_steps"]
    easy = [i for i in range(len(WORDS)) if steps[i] == steps.min()]
    hard = [i for i in range(len(WORDS)) if steps[i] > steps.min()]
    assert easy and hard, "the test needs sentences that stop at different levels"
    alone = attribute_detailed(logit_ig( **VARIED), model64, tokenizer,
                               [WORDS[i] for i in easy], [TARGETS[i] for i in easy], batch_size=len(easy))
    # the hard sentences' extra levels neither moved the easy ones to a finer level nor changed their scores
    np.testing.assert_array_equal(alone.diagnostics["n_steps"], steps[easy])
    np.testing.assert_allclose(alone.diagnostics["completeness_error"], every.diagnostics["completeness_error"][easy], rtol=1e-6)
    assert max_error_relative_to_largest(alone.scores, [every.scores[i] for i in easy]) < relative_ulp_tolerance(np.float64, ulps=1024)
    assert (every.diagnostics["completeness_error"] <= VARIED["tolerance"]).all()


def test_a_sentence_that_never_reaches_the_tolerance_stops_at_max_steps_and_says_so(model64, tokenizer):
    strict = logit_ig( method="clenshaw_curtis", min_steps=1, max_steps=4, tolerance=1e-12)
    result = attribute_detailed(strict, model64, tokenizer, WORDS, TARGETS)
    assert (result.diagnostics["n_steps"] == 5).all()
    assert (result.diagnostics["completeness_error"] > 1e-12).all()


class QuinticModel(nn.Module):
    """logit 1 = sum over visible tokens of ``(e_t . v)^5``, logit 0 = 0: along the IG path every token's output
    is a degree-5 polynomial in alpha, so the integrand is of degree 4 and its exact attribution is known,
    ``(x_t . v)^5 - (b_t . v)^5``."""

    def __init__(self, vocab_size: int, dim: int = 4, seed: int = 0) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        self.embedding = nn.Embedding(vocab_size, dim).double()
        with torch.no_grad():
            self.embedding.weight.copy_(torch.randn((vocab_size, dim), generator=generator, dtype=torch.float64))
        self.direction = torch.randn(dim, generator=generator, dtype=torch.float64) / dim**0.5

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embedding

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None):
        if inputs_embeds is None:
            inputs_embeds = self.embedding(input_ids)
        per_token = (inputs_embeds @ self.direction) ** 5 * attention_mask.to(inputs_embeds.dtype)
        positive = per_token.sum(dim=1, keepdim=True)
        return SimpleNamespace(logits=torch.cat([torch.zeros_like(positive), positive], dim=1))


def test_a_low_degree_polynomial_integrand_is_exact_at_the_first_level(tokenizer):
    model = QuinticModel(tokenizer.vocab_size)
    words = [["yesterday", "she", "went", "home"], ["she", "is"], ["the", "doctor", "said", "he", "would", "come"]]
    targets = [1, 1, 1]
    # level 4 (5 nodes) integrates the degree-4 integrand exactly
    result = attribute_detailed(logit_ig( method="clenshaw_curtis"), model, tokenizer,
                                words, targets)
    assert (result.diagnostics["n_steps"] == 5).all()
    batch = encode_batch(tokenizer, words, torch.device("cpu"))
    with torch.no_grad():
        x_out = (embed(model, batch.input_ids) @ model.direction) ** 5
        b_out = (embed(model, batch.reference_ids) @ model.direction) ** 5
    scale = float(x_out.abs().max().max() + b_out.abs().max())
    rounding = ulp_tolerance(np.float64, scale, ulps=256)
    assert (np.abs(result.diagnostics["convergence_delta"]) < rounding).all()
    for i, sentence in enumerate(words):
        length = batch.lengths[i]
        exact = fold_token_scores_to_words((x_out - b_out)[i, :length].numpy(), batch.word_ids[i][:length], len(sentence))
        np.testing.assert_allclose(result.scores[i], exact, rtol=0, atol=rounding)
    # Simpson's level 2 (exact to degree 3) is not enough for it: the error decides and the rule refines
    coarse = attribute_detailed(logit_ig( method="clenshaw_curtis", min_steps=2,
                                              max_steps=2), model, tokenizer, words, targets)
    assert (coarse.diagnostics["completeness_error"] > 0.01).any()


def test_fixed_steps_are_unchanged_captum_gauss_legendre(model64, tokenizer):
    from captum.attr import IntegratedGradients

    words, target = WORDS[0], TARGETS[0]
    scores = attribute(logit_ig( n_steps=7), model64, tokenizer, [words], [target])
    batch = encode_batch(tokenizer, [words], torch.device("cpu"))
    x, b = embed(model64, batch.input_ids).detach(), embed(model64, batch.reference_ids).detach()
    with torch.enable_grad():
        direct = IntegratedGradients(EmbeddingForward(model64)).attribute(
            x, baselines=b, target=target, additional_forward_args=(batch.attention_mask,), n_steps=7,
            method="gausslegendre")
    expected = fold_token_scores_to_words(direct.sum(-1)[0].detach().numpy(), batch.word_ids[0], len(words))
    assert max_error_relative_to_largest(scores, [expected]) < relative_ulp_tolerance(np.float64, ulps=1024)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_nested_scores_and_node_counts_on_the_gpu_equal_the_cpu(model64, tokenizer):
    import copy

    gpu_model = copy.deepcopy(model64).to("cuda")
    on_cpu = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS)
    on_gpu = attribute_detailed(logit_ig( **VARIED), gpu_model, tokenizer, WORDS, TARGETS)
    np.testing.assert_array_equal(on_gpu.diagnostics["n_steps"], on_cpu.diagnostics["n_steps"])
    # other kernels, other summation orders: float64 rounding, a few thousand ulps of the largest score at most
    assert max_error_relative_to_largest(on_gpu.scores, on_cpu.scores) < relative_ulp_tolerance(np.float64, ulps=4096)
