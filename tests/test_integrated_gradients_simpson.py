"""Integrated Gradients with the locally adaptive Simpson rule (the 4.0.0 default): the rule on known integrals,
where it puts its nodes, what a sentence costs, and the same scores whatever the batching."""

from __future__ import annotations

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

from gecobench.explainers import get_explainer
from gecobench.explainers.engine import attribute_detailed
from gecobench.explainers.quadrature import (
    AdaptiveSimpson,
    clenshaw_curtis_nodes,
    clenshaw_curtis_weights,
)

# On the float64 tiny BERT these settings make the sentences stop after different numbers of halvings (7 to 15
# interior nodes) while float64 rounding stays far below the tolerance.
VARIED = {"min_steps": 2, "tolerance": 1e-4, "max_steps": 64}


def _theta(finest: int) -> np.ndarray:
    return np.arange(finest + 1) * np.pi / finest


def _feed(rule: AdaptiveSimpson, integrand, nodes: list[int]) -> None:
    """``integrand(alpha)`` (a vector) at grid nodes ``nodes``."""
    alphas = clenshaw_curtis_nodes(rule.finest)
    for j in nodes:
        rule.add(j, integrand(alphas[j]))


def _in_alpha(p):
    """The integrand in alpha whose integral over [0, 1] is the integral of ``p(theta)`` over [0, pi]."""
    return lambda alpha: p(np.arccos(1.0 - 2.0 * alpha)) / (np.sqrt(alpha * (1.0 - alpha)))


# --------------------------------------------------------------------------------------------------- the rule


def test_the_first_level_is_exact_for_a_cubic_in_theta_and_a_halving_for_a_quintic():
    # d alpha = sin(theta) / 2 d theta and sin(theta) / 2 = sqrt(alpha (1 - alpha)); polynomials that vanish at both
    # ends keep the integrand in alpha finite there
    cubic = lambda t: np.array([t * (np.pi - t), t * (np.pi - t) * (1.0 + 2.0 * t)])
    cubic_exact = np.array([np.pi**3 / 6, np.pi**3 / 6 + np.pi**4 / 6])
    rule = AdaptiveSimpson(finest=64, first=4, size=2)
    _feed(rule, _in_alpha(cubic), rule.initial_nodes())
    rule.start()
    assert rule.n_nodes == 3
    np.testing.assert_allclose(rule.estimate(), cubic_exact, rtol=0, atol=ulp_tolerance(np.float64, 40.0))
    # Simpson is not exact for degree 5, but one halving is: the Richardson-corrected halves are Boole's rule
    quintic = lambda t: np.array([t**2 * (np.pi - t) ** 3])
    quintic_exact = np.array([np.pi**6 / 60])
    rule = AdaptiveSimpson(finest=4, first=2, size=1)
    _feed(rule, _in_alpha(quintic), rule.initial_nodes())
    rule.start()
    simpson_error = abs(rule.estimate()[0] - quintic_exact[0])
    assert simpson_error > 1.0
    new = rule.next_nodes()
    assert new == [1, 3]
    _feed(rule, _in_alpha(quintic), new)
    rule.refine()
    np.testing.assert_allclose(rule.estimate(), quintic_exact, rtol=0, atol=ulp_tolerance(np.float64, 20.0))


def _steep_step(alpha: float, where: float = 0.3, steepness: float = 80.0) -> np.ndarray:
    """The derivative of a logistic that turns at ``where``: an output that changes over a short stretch of the path."""
    s = 1.0 / (1.0 + np.exp(-steepness * (alpha - where)))
    return np.array([steepness * s * (1.0 - s)])


def test_nodes_go_where_the_integrand_varies_and_cost_less_than_a_nested_rule():
    exact = 1.0 / (1.0 + np.exp(-80.0 * 0.7)) - 1.0 / (1.0 + np.exp(80.0 * 0.3))
    tolerance = 1e-2
    rule = AdaptiveSimpson(finest=256, first=8, size=1)
    _feed(rule, _steep_step, rule.initial_nodes())
    rule.start()
    added = []
    while abs(rule.estimate()[0] - exact) > tolerance * exact:
        new = rule.next_nodes()
        assert new, "the rule ran out of panels before the tolerance"
        _feed(rule, _steep_step, new)
        rule.refine()
        added += new
    alphas = clenshaw_curtis_nodes(256)[added]
    # the halvings after the first level went to the turn at alpha = 0.3: none to the stretches more than 0.2 away
    # (70 % of the path), where the logistic's slope is below 1e-6 of its peak
    assert added and (np.abs(alphas - 0.3) < 0.2).all()
    # the nested Clenshaw–Curtis levels, which refine everywhere, reach the same error only with more nodes (their
    # interior ones counted: 63 against 21 here). On a smooth integrand that turns slowly they can need fewer.
    level = 4
    while abs(clenshaw_curtis_weights(level) @ np.array([_steep_step(a)[0] for a in clenshaw_curtis_nodes(level)]) - exact) > tolerance * exact:
        level *= 2
    assert rule.n_nodes < level - 1


def test_a_rule_at_the_finest_grid_proposes_nothing_and_bad_levels_are_refused():
    rule = AdaptiveSimpson(finest=4, first=4, size=1)
    _feed(rule, lambda a: np.array([1.0]), rule.initial_nodes())
    rule.start()
    assert rule.n_nodes == 3 and rule.next_nodes() == []
    with pytest.raises(RuntimeError, match="next_nodes"):
        rule.refine()
    for finest, first in [(12, 3), (24, 8), (4, 8)]:
        with pytest.raises(ValueError, match="even first level"):
            AdaptiveSimpson(finest=finest, first=first, size=1)


# ---------------------------------------------------------------------------------------------- the explainer


def test_the_default_is_adaptive_simpson_and_the_older_rules_stay_available():
    explainer = get_explainer("integrated_gradients")
    assert explainer.adaptive and explainer.locally_adaptive and not explainer.nested
    assert explainer.version == "5.0.0"  # 5.0.0: at the embedding block's output (4.0.0: the word embeddings)
    assert explainer.params() == {"n_steps": None, "method": "adaptive_simpson", "tolerance": 0.01, "min_steps": 8,
                                  "max_steps": 256, "attribution_point": "embedding_block", "output": "probability"}
    assert explainer.rows_per_sentence == 7  # the first level's interior nodes
    assert logit_ig( method="clenshaw_curtis").nested
    assert logit_ig( n_steps=200).params() == {"n_steps": 200, "method": "gausslegendre",
                                                                    "attribution_point": "embedding_block", "output": "logit"}


@pytest.mark.parametrize("params, message", [
    ({"min_steps": 3, "max_steps": 96}, "even"),
    ({"min_steps": 8, "max_steps": 24}, "power of two"),
    ({"method": "adaptive_simpson", "n_steps": 16}, "adaptive only"),
])
def test_bad_settings_are_refused_naming_the_setting(params, message):
    with pytest.raises(ValueError, match=message):
        logit_ig( **params)


def test_a_sentence_costs_its_interior_nodes_plus_two_forward_only_rows(model64, tokenizer):
    explainer = logit_ig( **VARIED)
    with RowCounter(model64) as counter, torch.enable_grad():
        explainer.explain(model64, tokenizer, WORDS, TARGETS)
    steps = explainer.last_diagnostics["n_steps"]
    assert sum(counter.with_gradient) == steps.sum()
    assert sum(counter.forward_only) == 2 * len(WORDS)
    # the first level is 1 interior node (min_steps 2); each halving adds two
    assert ((steps - 1) % 2 == 0).all() and (steps >= 1).all()
    assert len(set(steps.tolist())) > 1, "the test needs sentences that stop after different numbers of halvings"
    assert (explainer.last_diagnostics["completeness_error"] <= VARIED["tolerance"]).all()


def test_batched_scores_equal_one_sentence_at_a_time_and_one_row_per_pass(model64, tokenizer):
    batched = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS,
                                 batch_size=len(WORDS))
    single = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS,
                                batch_size=1)
    tiny = attribute_detailed(logit_ig( tokens_per_forward=1, **VARIED), model64,
                              tokenizer, WORDS, TARGETS)
    # float64 passes reordered by padding and batching: a few hundred ulps of the largest score at most
    tolerance = relative_ulp_tolerance(np.float64, ulps=1024)
    for result in (single, tiny):
        np.testing.assert_array_equal(result.diagnostics["n_steps"], batched.diagnostics["n_steps"])
        assert max_error_relative_to_largest(result.scores, batched.scores) < tolerance


def test_a_tight_tolerance_converges_to_the_nested_rule_at_its_finest_level(model64, tokenizer):
    tight = attribute_detailed(logit_ig( min_steps=2, tolerance=1e-8, max_steps=256),
                               model64, tokenizer, WORDS, TARGETS)
    nested = attribute_detailed(logit_ig( method="clenshaw_curtis", min_steps=256,
                                              max_steps=256), model64, tokenizer, WORDS, TARGETS)
    assert (tight.diagnostics["completeness_error"] <= 1e-8).all()
    # two different rules on the same smooth integrand: both within ~1e-8 of the integral, so within 1e-6 of each
    # other relative to the largest score (far above float64 rounding, far below any quadrature error at 1 %)
    assert max_error_relative_to_largest(tight.scores, nested.scores) < 1e-6
    coarse = attribute_detailed(logit_ig( min_steps=2, max_steps=2), model64, tokenizer,
                                WORDS, TARGETS)
    assert max_error_relative_to_largest(coarse.scores, nested.scores) > 1e-6  # the check can fail


def test_a_sentence_that_never_reaches_the_tolerance_stops_at_the_finest_grid_and_says_so(model64, tokenizer):
    strict = logit_ig( min_steps=2, max_steps=4, tolerance=1e-12)
    result = attribute_detailed(strict, model64, tokenizer, WORDS, TARGETS)
    assert (result.diagnostics["n_steps"] == 3).all()
    assert (result.diagnostics["completeness_error"] > 1e-12).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_simpson_scores_and_node_counts_on_the_gpu_equal_the_cpu(model64, tokenizer):
    import copy

    gpu_model = copy.deepcopy(model64).to("cuda")
    on_cpu = attribute_detailed(logit_ig( **VARIED), model64, tokenizer, WORDS, TARGETS)
    on_gpu = attribute_detailed(logit_ig( **VARIED), gpu_model, tokenizer, WORDS, TARGETS)
    np.testing.assert_array_equal(on_gpu.diagnostics["n_steps"], on_cpu.diagnostics["n_steps"])
    assert max_error_relative_to_largest(on_gpu.scores, on_cpu.scores) < relative_ulp_tolerance(np.float64, ulps=4096)


def test_the_default_explains_the_authors_probability_and_the_logit_is_a_parameter(model64, tokenizer):
    """The authors' IG explains the target's softmax probability (their forward_function), the default since 5.0.0;
    ``output="logit"`` is the 4.x output. Completeness holds for the probability."""
    from gecobench.explainers.inputs import EmbeddingForward, encode_batch

    words, targets = [["she", "said", "hello"], ["he", "ran", "home", "fast"]], [0, 1]
    result = attribute_detailed(logit_ig( output="probability"), model64, tokenizer,
                                words, targets)
    assert result.protocol["params"]["output"] == "probability"
    forward = EmbeddingForward(model64, "probability")
    batch = encode_batch(tokenizer, words, torch.device("cpu"))
    with torch.no_grad():
        ends = [forward(forward.embed(ids, batch.attention_mask, batch.token_type_ids), batch.attention_mask,
                        batch.token_type_ids) for ids in (batch.input_ids, batch.reference_ids)]
    difference = (ends[0] - ends[1]).gather(1, torch.tensor(targets)[:, None])[:, 0].numpy()
    # the recorded gap is relative to the probability difference, within the tolerance
    assert (np.abs(result.diagnostics["convergence_delta"]) <= 0.01 * np.maximum(np.abs(difference), 3e-4) + 1e-12).all()
    logit = attribute_detailed(logit_ig(), model64, tokenizer, words, targets)
    assert max(np.abs(a - b).max() / np.abs(b).max() for a, b in zip(result.scores, logit.scores)) > 0.01
