"""Partition SHAP: Owen values over a balanced binary word hierarchy, exact ones checked against brute-force
enumeration of the hierarchy's orderings on small additive and interacting models, the default budget checked for
what it keeps exact (every group's total, the sum, a sparse game), batched equal to unbatched."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier
from test_explainers import TARGETS, WORDS
from tolerances import max_error_relative_to_largest
from torch import nn

from gecobench.explainers import available_explainers, get_explainer
from gecobench.explainers.engine import attribute
from gecobench.explainers.partition import (
    Hierarchy,
    OwenExpansion,
    balanced_partition,
    coalition_matrix,
    owen_design,
    owen_values,
    split_node,
    text_hierarchy,
)

#: exact Owen values (the default spends a budget of 4 model outputs per word instead)
EXACT = {"coalitions_per_word": None}

# ------------------------------------------------------------------------------------------- references


def consistent_orderings(n_players: int, hierarchy: Hierarchy | None = None):
    """Every ordering of the players in which each group of the hierarchy (default: the balanced one) is
    contiguous."""
    nodes = balanced_partition(n_players) if hierarchy is None else hierarchy.nodes()
    groups = [set(range(*node)) for node in nodes]
    for order in itertools.permutations(range(n_players)):
        position = {player: k for k, player in enumerate(order)}
        if all(max(position[p] for p in g) - min(position[p] for p in g) == len(g) - 1 for g in groups):
            yield order


def average_marginal_contributions(n_players: int, value, orderings) -> np.ndarray:
    """Mean over ``orderings`` of each player's ``value(before + player) - value(before)``."""
    totals, count = np.zeros(n_players), 0
    for order in orderings:
        before: frozenset[int] = frozenset()
        for player in order:
            totals[player] += value(before | {player}) - value(before)
            before = before | {player}
        count += 1
    return totals / count


def brute_force_owen(n_players: int, value, hierarchy: Hierarchy | None = None) -> np.ndarray:
    return average_marginal_contributions(n_players, value, consistent_orderings(n_players, hierarchy))


def brute_force_shapley(n_players: int, value) -> np.ndarray:
    return average_marginal_contributions(n_players, value, itertools.permutations(range(n_players)))


def model_on_words(model, tokenizer, words, target, removal="delete", output="logit"):
    """The set function the explainer explains, computed independently: the model's target logit (or, with
    ``output="probability"``, its softmax probability) on the text made of the present words only — absent words deleted from the word list before tokenising, or with
    ``removal="mask"`` each run of them written as one mask token, or with ``removal="mask_tokens"`` each absent
    word written as one mask token per word piece it has."""
    cache = {}

    def shown_words(coalition):
        kept = []
        for k, word in enumerate(words):
            if k in coalition:
                kept.append(word)
            elif removal == "mask" and (not kept or kept[-1] != tokenizer.mask_token or k - 1 in coalition):
                kept.append(tokenizer.mask_token)
            elif removal == "mask_tokens":
                kept.extend([tokenizer.mask_token] * len(tokenizer.tokenize(word)))
        return kept

    def value(coalition: frozenset[int]) -> float:
        if coalition not in cache:
            kept = shown_words(coalition)
            encoding = tokenizer([kept], is_split_into_words=True, return_tensors="pt") if kept else \
                tokenizer([""], return_tensors="pt")
            with torch.no_grad():
                logits = model(input_ids=encoding["input_ids"], attention_mask=encoding["attention_mask"]).logits
                cache[coalition] = float(torch.softmax(logits, -1)[0, target] if output == "probability"
                                         else logits[0, target])
        return cache[coalition]

    return value


class TwoFeatureModel(nn.Module):
    """Every token carries two numbers (a, b); with A and B their sums over the visible tokens,
    ``logits = (B, A + strength * A * B^2)``: additive for ``strength = 0``, otherwise with interactions of
    three words (with pairwise interactions only, Owen values equal Shapley values: each pair splits evenly)."""

    def __init__(self, vocab_size: int, features: dict[int, tuple[float, float]], strength: float) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, 2).double()
        self.strength = strength
        with torch.no_grad():
            self.embedding.weight.zero_()
            for token, value in features.items():
                self.embedding.weight[token] = torch.tensor(value, dtype=torch.float64)

    def get_input_embeddings(self):
        return self.embedding

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None):
        if inputs_embeds is None:
            inputs_embeds = self.embedding(input_ids)
        sums = (inputs_embeds * attention_mask[..., None].to(inputs_embeds.dtype)).sum(1)
        a, b = sums[:, 0], sums[:, 1]
        return SimpleNamespace(logits=torch.stack([b, a + self.strength * a * b * b], dim=1))


SENTENCE = ["yesterday", "she", "went", "home", "with", "him"]  # one token per word in the MiniLM vocabulary
FEATURES = {"she": (1.0, 0.5), "went": (0.5, -1.0), "home": (-0.75, 2.0), "him": (2.0, 1.0), "yesterday": (0.0, 0.25)}


def two_feature_model(tokenizer, strength: float) -> TwoFeatureModel:
    ids = {tokenizer.convert_tokens_to_ids(w): v for w, v in FEATURES.items()}
    return TwoFeatureModel(tokenizer.vocab_size, ids, strength)


# -------------------------------------------------------------------------------------------------- design


@pytest.mark.parametrize("n_players", [1, 2, 3, 5, 8, 13])
def test_the_hierarchy_is_balanced_and_covers_the_sentence_in_order(n_players):
    nodes = balanced_partition(n_players)
    assert nodes[0] == (0, n_players)
    assert sorted(start for start, stop in nodes if stop - start == 1) == list(range(n_players))
    for node in nodes:
        if node[1] - node[0] > 1:
            left, right = split_node(node)
            assert left[0] == node[0] and left[1] == right[0] and right[1] == node[1]
            assert 0 <= (left[1] - left[0]) - (right[1] - right[0]) <= 1
    assert len(nodes) == 2 * n_players - 1


@pytest.mark.parametrize("n_players", [1, 2, 3, 4, 5, 6])
def test_owen_design_equals_brute_force_owen_values_of_a_random_set_function(n_players):
    rng = np.random.default_rng(n_players)
    table = {frozenset(s): rng.normal() for r in range(n_players + 1)
             for s in itertools.combinations(range(n_players), r)}
    coalitions, _ = owen_design(n_players)
    outputs = np.array([table[frozenset(np.flatnonzero(row).tolist())] for row in coalitions])
    expected = brute_force_owen(n_players, table.__getitem__)
    scale = max(abs(v) for v in table.values())
    np.testing.assert_allclose(owen_values(n_players, outputs), expected, rtol=0, atol=64 * np.finfo(float).eps * scale)
    # efficiency: the values add up to f(everyone) - f(no one)
    assert owen_values(n_players, outputs).sum() == pytest.approx(table[frozenset(range(n_players))] - table[frozenset()])


def test_owen_design_needs_quadratically_many_coalitions_not_exponentially_many():
    for n_players in (8, 16, 29):
        coalitions, weights = owen_design(n_players)
        assert len(np.unique(coalitions, axis=0)) == coalitions.shape[0]  # each coalition evaluated once
        assert coalitions.shape[0] <= n_players * n_players
        assert coalitions[0].all() and not coalitions[1].any() and weights.shape == (n_players, coalitions.shape[0])


def test_owen_values_refuse_the_wrong_number_of_outputs():
    with pytest.raises(ValueError, match="3 players need outputs for 8 coalitions, got 7"):
        owen_values(3, np.zeros(7))
    with pytest.raises(ValueError, match="at least one player"):
        owen_design(0)


# --------------------------------------------------------------------------------------------- hierarchies


def test_the_text_hierarchy_joins_clauses_before_it_crosses_their_punctuation():
    words = ["She", "said", "so", ",", "and", "he", "left", "."]
    hierarchy = text_hierarchy(words)
    groups = {tuple(words[a:b]) for a, b in hierarchy.nodes()}
    # the clause before the comma is one group, the clause after it with its full stop another
    assert ("She", "said", "so", ",") in groups or ("She", "said", "so") in groups
    assert ("and", "he", "left", ".") in groups
    # the full stop belongs to the words before it, not to a group of its own joined at the end
    assert ("he", "left", ".") in groups
    # the root splits at the comma, not in the middle of a clause
    assert split_node((0, len(words)), hierarchy)[0][1] in (3, 4)


def test_without_punctuation_the_text_hierarchy_pairs_neighbours_from_the_left():
    hierarchy = text_hierarchy(["a", "b", "c", "d", "e", "f"])
    nodes = set(hierarchy.nodes())
    assert {(0, 2), (2, 4), (4, 6), (0, 4)} <= nodes and len(nodes) == 2 * 6 - 1
    assert set(text_hierarchy(["a", "b", "c", "d"]).nodes()) == set(balanced_partition(4))


@pytest.mark.parametrize("words", [["one"], ["he", "left", "."], ["She", "said", "so", ",", "and", "left", "."],
                                   ["He", "(", "the", "son", ")", ",", "dances", "."]])
def test_every_text_hierarchy_covers_the_sentence_in_order(words):
    hierarchy = text_hierarchy(words)
    nodes = hierarchy.nodes()
    assert nodes[0] == (0, len(words)) and len(nodes) == 2 * len(words) - 1
    assert sorted(start for start, stop in nodes if stop - start == 1) == list(range(len(words)))


def test_a_bracket_pair_is_closed_inside_one_group():
    words = ["He", "(", "the", "son", ")", "dances"]
    groups = {tuple(words[a:b]) for a, b in text_hierarchy(words).nodes()}
    assert ("(", "the", "son", ")") in groups


def test_a_hierarchy_that_does_not_split_its_groups_is_refused():
    with pytest.raises(ValueError, match=r"group \[0, 3\) has no split inside it"):
        Hierarchy(3, ((0, 3, 3),))
    with pytest.raises(ValueError, match="of groups outside it"):
        Hierarchy(2, ((0, 2, 1), (5, 7, 6)))
    with pytest.raises(ValueError, match="a hierarchy of 3 players for 4 players"):
        owen_design(4, text_hierarchy(["a", "b", "c"]))


@pytest.mark.parametrize("words", [["a", "b", "c", "."], ["x", ",", "y", "z", "w", "."]])
def test_owen_design_of_any_hierarchy_equals_brute_force_owen_values(words):
    n_players = len(words)
    hierarchy = text_hierarchy(words)
    assert set(hierarchy.nodes()) != set(balanced_partition(n_players))  # a hierarchy of its own
    rng = np.random.default_rng(n_players)
    table = {frozenset(s): rng.normal() for r in range(n_players + 1)
             for s in itertools.combinations(range(n_players), r)}
    coalitions, _ = owen_design(n_players, hierarchy)
    outputs = np.array([table[frozenset(np.flatnonzero(row).tolist())] for row in coalitions])
    expected = brute_force_owen(n_players, table.__getitem__, hierarchy)
    scale = max(abs(v) for v in table.values())
    np.testing.assert_allclose(owen_values(n_players, outputs, hierarchy), expected, rtol=0,
                               atol=64 * np.finfo(float).eps * scale)
    balanced = brute_force_owen(n_players, table.__getitem__)
    assert np.abs(expected - balanced).max() > 1e-3  # the hierarchy changes the values of an interacting game


def test_the_explainer_on_the_text_hierarchy_gives_that_hierarchys_owen_values(tokenizer):
    words = ["she", "went", ",", "home", "with", "him", "."]
    model = two_feature_model(tokenizer, strength=1.5)
    value = model_on_words(model, tokenizer, words, 1)
    hierarchy = text_hierarchy(words)
    expected = np.abs(brute_force_owen(len(words), value, hierarchy))
    (scores,) = attribute(get_explainer("partition_shap", output="logit", hierarchy="text", **EXACT), model,
                          tokenizer, [words], [1])
    scale = max(abs(value(frozenset(range(len(words))))), 1.0)
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e3 * np.finfo(np.float64).eps * scale)
    (balanced,) = attribute(get_explainer("partition_shap", output="logit", **EXACT), model, tokenizer, [words], [1])
    assert np.abs(balanced - expected).max() > 1e-3
    # the priority expansion follows the same hierarchy: expanded to the end it reaches the same exact values
    explainer = get_explainer("partition_shap", output="logit", hierarchy="text", coalitions_per_word="adaptive",
                              tolerance=1e-12)
    (expanded,) = attribute(explainer, model, tokenizer, [words], [1])
    np.testing.assert_allclose(expanded, expected, rtol=0, atol=1e3 * np.finfo(np.float64).eps * scale)
    assert explainer.params()["hierarchy"] == "text"


def test_the_default_hierarchy_keeps_its_recorded_parameters_and_unknown_ones_are_refused():
    assert get_explainer("partition_shap").params()["hierarchy"] == "balanced binary partition of the word sequence"
    assert get_explainer("partition_shap", hierarchy="balanced").params() == get_explainer("partition_shap").params()
    with pytest.raises(ValueError, match="hierarchy must be one of balanced, text, got 'parser'"):
        get_explainer("partition_shap", hierarchy="parser")


# ----------------------------------------------------------------------------------------------- the explainer


def test_partition_shap_is_registered_with_its_protocol():
    assert "partition_shap" in available_explainers()
    explainer = get_explainer("partition_shap")
    protocol = explainer.protocol()
    # the target probability (4.0.0), as Kernel SHAP and LIME explain it; output="logit" is 3.x's; a budget of 4
    # outputs per word (3.0.0)
    assert protocol["params"] == {"output": "probability", "removal": "mask", "coalitions_per_word": 4.0,
                                  "hierarchy": "balanced binary partition of the word sequence"}
    # the accuracy target records its tolerance and cap
    assert get_explainer("partition_shap", coalitions_per_word="adaptive").params() == {
        "output": "probability", "removal": "mask", "coalitions_per_word": "adaptive", "tolerance": 0.05,
        "max_coalitions_per_word": None, "hierarchy": "balanced binary partition of the word sequence"}
    assert get_explainer("partition_shap", coalitions_per_word=4).params() == {
        "output": "probability", "removal": "mask", "coalitions_per_word": 4.0,
        "hierarchy": "balanced binary partition of the word sequence"}
    assert get_explainer("partition_shap", **EXACT).params()["coalitions_per_word"] is None
    assert "mask token" in protocol["perturbation"] and not explainer.is_baseline
    deleting = get_explainer("partition_shap", removal="delete").protocol()
    assert deleting["perturbation"] == get_explainer("lime").protocol()["perturbation"]  # the shared protocol
    assert "perturbations_per_eval" not in get_explainer("partition_shap", perturbations_per_eval=1).params()
    with pytest.raises(ValueError, match="output"):
        get_explainer("partition_shap", output="margin")
    each_token = get_explainer("partition_shap", removal="mask_tokens").protocol()
    assert "every token" in each_token["perturbation"] and "positions" in each_token["perturbation"]
    assert each_token["params"]["removal"] == "mask_tokens"
    with pytest.raises(ValueError, match="removal must be one of mask, mask_tokens, delete"):
        get_explainer("partition_shap", removal="blank")
    for bad in (0, -1.0, float("nan"), "many"):
        with pytest.raises(ValueError, match="coalitions_per_word must be a positive number, None"):
            get_explainer("partition_shap", coalitions_per_word=bad)


def test_on_an_additive_model_owen_values_are_each_words_own_contribution(tokenizer):
    model = two_feature_model(tokenizer, strength=0.0)
    # the additive game is that of the logits
    scores = attribute(get_explainer("partition_shap", output="logit", **EXACT), model, tokenizer,
                       [SENTENCE, SENTENCE[:2]], [1, 0])
    for sentence, target, score in zip([SENTENCE, SENTENCE[:2]], [1, 0], scores):
        own = np.array([abs(FEATURES.get(w, (0.0, 0.0))[1 - target]) for w in sentence])
        np.testing.assert_allclose(score, own, atol=1e-12)
        value = model_on_words(model, tokenizer, sentence, target)
        np.testing.assert_allclose(score, np.abs(brute_force_shapley(len(sentence), value)), atol=1e-12)


def test_on_an_interacting_model_scores_are_the_exact_owen_values_not_the_shapley_values(tokenizer):
    model = two_feature_model(tokenizer, strength=1.5)
    value = model_on_words(model, tokenizer, SENTENCE, 1)
    owen = brute_force_owen(len(SENTENCE), value)
    shapley = brute_force_shapley(len(SENTENCE), value)
    # the hierarchy matters here: Owen and Shapley values differ by far more than rounding ...
    assert np.abs(owen - shapley).max() > 0.05
    (scores,) = attribute(get_explainer("partition_shap", output="logit", **EXACT), model, tokenizer, [SENTENCE], [1])
    scale = max(abs(value(frozenset(range(len(SENTENCE))))), 1.0)
    np.testing.assert_allclose(scores, np.abs(owen), rtol=0, atol=1e3 * np.finfo(np.float64).eps * scale)
    # ... and both agree on the total they share out
    assert owen.sum() == pytest.approx(shapley.sum()) == pytest.approx(value(frozenset(range(6))) - value(frozenset()))


@pytest.mark.parametrize("removal", ["mask", "mask_tokens", "delete"])
def test_on_a_bert_the_scores_are_the_owen_values_of_its_outputs_on_perturbed_sentences(model64, tokenizer, removal):
    words, target = WORDS[0], TARGETS[0]
    if removal == "mask_tokens":  # a word of several pieces, so that one mask per piece is not one per word
        words = [*words[:-1], "unbelievably", words[-1]]
        assert len(tokenizer.tokenize("unbelievably")) > 1
    (scores,) = attribute(get_explainer("partition_shap", removal=removal, **EXACT), model64, tokenizer, [words],
                          [target])
    # the default explains the target probability (4.0.0)
    expected = np.abs(brute_force_owen(len(words), model_on_words(model64, tokenizer, words, target, removal,
                                                                  "probability")))
    assert max_error_relative_to_largest([scores], [expected]) < 1e-9
    other = {"mask": "delete", "mask_tokens": "mask", "delete": "mask"}[removal]
    wrong = np.abs(brute_force_owen(len(words), model_on_words(model64, tokenizer, words, target, other, "probability")))
    assert max_error_relative_to_largest([scores], [wrong]) > 1e-3  # the two removals are different games


def test_masking_needs_a_tokenizer_with_a_mask_token(model64, tokenizer):
    class NoMask:
        mask_token_id = None

    with pytest.raises(ValueError, match="no.*mask token|mask token.*none|removal='delete'"):
        get_explainer("partition_shap").explain(model64, NoMask(), WORDS[:1], TARGETS[:1])


@pytest.mark.parametrize("budget", [{}, EXACT, {"coalitions_per_word": 2.5}])
def test_batched_scores_equal_the_unbatched_reference(model64, tokenizer, budget):
    words = WORDS + [["alone"]]
    targets = TARGETS + [1]
    batched = attribute(get_explainer("partition_shap", **budget), model64, tokenizer, words, targets)
    one_batch = attribute(get_explainer("partition_shap", **budget), model64, tokenizer, words, targets,
                          batch_size=len(words))
    # one sentence per call and one coalition per forward pass: no packing, no padding anywhere
    reference = attribute(get_explainer("partition_shap", perturbations_per_eval=1, **budget), model64, tokenizer,
                          words, targets, batch_size=1)
    assert max_error_relative_to_largest(batched, reference) < 1e-5
    assert max_error_relative_to_largest(one_batch, reference) < 1e-5
    assert all(s.shape == (len(w),) and (s > 0).any() for s, w in zip(batched, words))


def count_forward_calls(model, explainer, tokenizer, words, targets) -> int:
    calls = []
    handle = model.register_forward_hook(lambda module, args, out: calls.append(1))
    try:
        explainer.explain(model, tokenizer, words, targets)
    finally:
        handle.remove()
    return len(calls)


def test_coalitions_of_several_sentences_share_forward_passes(model64, tokenizer):
    exact = count_forward_calls(model64, get_explainer("partition_shap", **EXACT), tokenizer, WORDS, TARGETS)
    n_coalitions = sum(owen_design(len(w))[0].shape[0] for w in WORDS)
    assert exact < len(WORDS) < n_coalitions
    # within a budget the expansion runs in rounds; each round is one forward pass for all sentences together
    budgeted = get_explainer("partition_shap", coalitions_per_word=2)
    alone = [count_forward_calls(model64, budgeted, tokenizer, [w], [t]) for w, t in zip(WORDS, TARGETS)]
    together = count_forward_calls(model64, budgeted, tokenizer, WORDS, TARGETS)
    # (a round's rows of very different lengths may take two passes: packed by length, not padded)
    assert max(alone) <= together < sum(alone) / 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_scores_on_the_gpu_equal_the_cpu(model64, tokenizer):
    import copy

    on_cpu = attribute(get_explainer("partition_shap"), model64, tokenizer, WORDS, TARGETS)
    on_gpu = attribute(get_explainer("partition_shap"), copy.deepcopy(model64).to("cuda"), tokenizer, WORDS, TARGETS)
    assert max_error_relative_to_largest(on_gpu, on_cpu) < 1e-6


@pytest.mark.parametrize("per_word", [None, 3.0, 1.0])
def test_cost_matches_the_design_or_the_budget(tokenizer, per_word):
    # a sentence of n one-token words: one row per coalition of its design (exact) or at most the budget
    rows = []
    model = two_feature_model(tokenizer, strength=1.0)
    handle = model.register_forward_hook(lambda module, args, out: rows.append(out.logits.shape[0]))
    explainer = get_explainer("partition_shap", coalitions_per_word=per_word)
    try:
        explainer.explain(model, tokenizer, [SENTENCE], [1])
    finally:
        handle.remove()
    (used,) = explainer.last_diagnostics["n_coalitions"]
    (spread,) = explainer.last_diagnostics["spread_share"]
    assert sum(rows) == used
    if per_word is None:
        assert used == owen_design(len(SENTENCE))[0].shape[0] < math.factorial(len(SENTENCE)) and spread == 0
    else:
        assert used <= math.ceil(per_word * len(SENTENCE)) < owen_design(len(SENTENCE))[0].shape[0]
        assert 0 < spread <= 1  # an interacting model: the budget leaves some groups unresolved


# ------------------------------------------------------------------------------------------ the budget


def run_expansion(n_players: int, value, max_outputs: int | None) -> OwenExpansion:
    """Drive an expansion with a set function of frozensets (one class)."""
    expansion = OwenExpansion(n_players, max_outputs)
    while coalitions := expansion.request():
        rows = coalition_matrix(coalitions, n_players)
        expansion.receive(np.array([[value(frozenset(np.flatnonzero(row).tolist()))] for row in rows]))
    return expansion


def random_game(n_players: int, seed: int):
    rng = np.random.default_rng(seed)
    table = {}

    def value(coalition: frozenset[int]) -> float:
        if coalition not in table:
            table[coalition] = rng.normal()
        return table[coalition]

    return value


@pytest.mark.parametrize("n_players", [1, 2, 5, 9])
def test_a_budget_at_least_the_designs_size_gives_the_exact_values_in_one_round(n_players):
    value = random_game(n_players, seed=n_players)
    exact = brute_force_owen(n_players, value) if n_players <= 6 else None
    size = owen_design(n_players)[0].shape[0]
    for budget in (None, size, size + 7):
        expansion = OwenExpansion(n_players, budget)
        first = expansion.request()
        assert len(first) == size
        expansion.receive(np.array([[value(frozenset(np.flatnonzero(r).tolist()))]
                                    for r in coalition_matrix(first, n_players)]))
        assert expansion.request() == [] and expansion.done
        values, spread = expansion.values(0)
        assert spread == 0.0
        reference = owen_values(n_players, [value(frozenset(np.flatnonzero(r).tolist()))
                                            for r in owen_design(n_players)[0]])
        np.testing.assert_allclose(values, reference, rtol=0, atol=1e-12)
        if exact is not None:
            np.testing.assert_allclose(values, exact, rtol=0, atol=1e-12)


@pytest.mark.parametrize("budget", [2, 5, 11, 30, 60, 100])
def test_within_a_budget_the_values_add_up_and_approach_the_exact_ones(budget):
    n_players = 13
    value = random_game(n_players, seed=budget)
    expansion = run_expansion(n_players, value, budget)
    values, spread = expansion.values(0)
    assert expansion.n_outputs <= budget
    everyone, no_one = value(frozenset(range(n_players))), value(frozenset())
    assert values.sum() == pytest.approx(everyone - no_one, abs=1e-12)  # efficiency holds at any budget
    exact = owen_values(n_players, [value(frozenset(np.flatnonzero(r).tolist())) for r in owen_design(n_players)[0]])
    assert 0 <= spread <= 1
    if budget == 2:  # only the root: everyone gets an equal share
        np.testing.assert_allclose(values, np.full(n_players, (everyone - no_one) / n_players), atol=1e-12)
        assert spread == 1.0
    if budget == 100:  # 100 of the exact design's 132 outputs
        assert np.abs(values - exact).max() < np.abs(exact).max()


def test_the_budget_goes_where_the_output_moves_so_a_sparse_game_is_exact_for_a_fraction_of_the_design():
    # an additive game with two words that matter among sixteen (a gender classifier's two gendered words):
    # every group without them has zero change, so the budget is spent on the groups that hold them
    n_players, weights = 16, np.zeros(16)
    weights[[3, 12]] = [2.0, -1.5]

    def value(coalition):
        return float(sum(weights[k] for k in coalition))

    expansion = run_expansion(n_players, value, 4 * n_players)
    values, spread = expansion.values(0)
    np.testing.assert_allclose(values, weights, rtol=0, atol=1e-12)
    assert spread == 0.0 and expansion.n_outputs <= 4 * n_players < owen_design(n_players)[0].shape[0]


def test_the_expansion_refuses_misuse():
    with pytest.raises(ValueError, match="at least the 2 outputs"):
        OwenExpansion(4, 1)
    with pytest.raises(ValueError, match="at least one player"):
        OwenExpansion(0, 10)
    expansion = OwenExpansion(4, 6)
    first = expansion.request()
    with pytest.raises(RuntimeError, match="not been received"):
        expansion.request()
    with pytest.raises(ValueError, match="expected outputs for 2 coalitions, got 3"):
        expansion.receive(np.zeros((3, 1)))
    expansion.receive(np.zeros((len(first), 1)))
    with pytest.raises(RuntimeError, match="has not finished"):
        expansion.values(0)


def test_inside_outputs_reused_another_target_costs_no_model_call_and_gives_the_same_scores(model64, tokenizer):
    """The label-difference pass of the evaluation: the same sentences and model, the other class."""
    from model_calls import RowCounter

    others = [1 - t for t in TARGETS]
    # logits: with two classes the probabilities' Owen values for the other class are the negated ones, so
    # their |value| would not tell the classes apart
    fresh = attribute(get_explainer("partition_shap", output="logit"), model64, tokenizer, WORDS, others)
    explainer = get_explainer("partition_shap", output="logit")
    with explainer.outputs_reused():
        main = attribute(explainer, model64, tokenizer, WORDS, TARGETS)
        with RowCounter(model64) as again:
            reused = attribute(explainer, model64, tokenizer, WORDS, others)
        # a subset of the sentences, in another order, is served from the same outputs
        with RowCounter(model64) as subset:
            reordered = attribute(explainer, model64, tokenizer, WORDS[::-1][:2], others[::-1][:2])
        another = make_tiny_bert_classifier(seed=11).double()
        with RowCounter(another) as other_model:  # another model is never answered from this one's outputs
            on_another = attribute(explainer, another, tokenizer, WORDS, others)
    assert again.rows == [] and subset.rows == []
    assert other_model.rows
    assert max_error_relative_to_largest(on_another, fresh) > 1e-3
    assert max_error_relative_to_largest(reused, fresh) == 0.0  # the same outputs, the same arithmetic
    assert max_error_relative_to_largest(reordered, fresh[::-1][:2]) == 0.0
    assert max_error_relative_to_largest(main, fresh) > 1e-3  # the other class: different scores
    with RowCounter(model64) as outside:  # after the block nothing is kept
        attribute(explainer, model64, tokenizer, WORDS, others)
    assert outside.rows
