"""Property metrics (MRC, SNC, LD, DMA, SP, CVR) and ranking metrics (RRA, AUPRC)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

from gecobench.metrics.properties import (
    covariate_complexity_per_sentence,
    label_difference_per_sentence,
    methods_agreement_by_explainer,
    methods_agreement_per_sentence,
    model_randomisation_check_per_sentence,
    normalise_attributions,
    small_noise_check_per_sentence,
    sparsity_per_sentence,
    total_variation_per_sentence,
)
from gecobench.metrics.ranking import (
    auprc_per_sentence,
    relevance_rank_accuracy_per_sentence,
)


def test_total_variation_hand_computed():
    tv = total_variation_per_sentence([[2.0, 2.0, 0.0], [1.0], [0.0, 0.0]], [[0.0, -1.0, 3.0], [7.0], [1.0, 0.0]])
    # (0.5, 0.5, 0) vs (0, 0.25, 0.75): 0.5 * (0.5 + 0.25 + 0.75)
    assert tv[0] == pytest.approx(0.75)
    assert tv[1] == pytest.approx(0.0)
    assert math.isnan(tv[2])


def test_pairwise_properties_are_the_same_distance_with_their_own_names():
    a, b = [[1.0, 0.0, 1.0]], [[0.0, 1.0, 1.0]]
    for fn in (model_randomisation_check_per_sentence, small_noise_check_per_sentence, label_difference_per_sentence):
        assert fn(a, b)[0] == pytest.approx(0.5)


def test_methods_agreement_hand_computed():
    mine = [[1.0, 0.0], [0.0, 0.0]]
    others = [[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 1.0]]]
    out = methods_agreement_per_sentence(mine, others)
    assert out[0] == pytest.approx((0.0 + 1.0) / 2)  # the all-zero third explainer is left out
    assert math.isnan(out[1])
    by_name = methods_agreement_by_explainer({"a": [[1.0, 0.0]], "b": [[0.0, 1.0]], "c": [[1.0, 1.0]]})
    assert by_name["a"][0] == pytest.approx((1.0 + 0.5) / 2)
    assert by_name["c"][0] == pytest.approx(0.5)


def test_sparsity_gini_hand_computed():
    # p sorted = (0, 0.25, 0.75); G = 1 - 2 * (0*(2.5) + 0.25*(1.5) + 0.75*(0.5)) / 3 = 1 - 2 * 0.75 / 3
    out = sparsity_per_sentence([[3.0, 0.0, -1.0], [2.0, 2.0], [9.0]])
    np.testing.assert_allclose(out, [0.5, 0.0, 0.0])


def test_covariate_complexity_hand_computed():
    out = covariate_complexity_per_sentence([[1.0, 1.0], [1.0, 3.0], [0.0, 0.0]])
    expected = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75)) / math.log(2)
    assert out[0] == pytest.approx(1.0) and out[1] == pytest.approx(expected) and math.isnan(out[2])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: total_variation_per_sentence([[1.0, 2.0]], [[1.0]]), "sentence 0: predictions has 2"),
        (lambda: total_variation_per_sentence([[1.0]], [[1.0], [2.0]]), "references has 2"),
        (lambda: sparsity_per_sentence([[1.0, float("nan")]]), "attributions: sentence 0"),
        (lambda: covariate_complexity_per_sentence([]), "empty"),
        (lambda: methods_agreement_per_sentence([[1.0]], []), "others"),
        (lambda: methods_agreement_per_sentence([[1.0]], [[[1.0, 2.0]]]), "others\\[0\\]"),
        (lambda: methods_agreement_by_explainer({"only": [[1.0]]}), "at least two"),
        (lambda: relevance_rank_accuracy_per_sentence([[1.0, 2.0]], [[1, 5]]), "ground_truth: sentence 0"),
        (lambda: auprc_per_sentence([[1.0, float("inf")]], [[1, 0]]), "attributions: sentence 0"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


sentences = st.lists(
    st.lists(st.floats(-100, 100, allow_nan=False, allow_subnormal=False), min_size=1, max_size=10),
    min_size=1,
    max_size=6,
)


@settings(max_examples=50, deadline=None)
@given(sentences, st.data())
def test_property_ranges_and_batch_independence(batch, data):
    partner = [data.draw(st.lists(st.floats(-100, 100, allow_nan=False, allow_subnormal=False),
                                  min_size=len(s), max_size=len(s))) for s in batch]
    tv = total_variation_per_sentence(batch, partner)
    sp = sparsity_per_sentence(batch)
    cvr = covariate_complexity_per_sentence(batch)
    for values in (tv, sp, cvr):
        defined = values[~np.isnan(values)]
        assert np.all((defined >= 0) & (defined <= 1))
    lengths = np.array([len(s) for s in batch])
    assert np.all(sp[~np.isnan(sp)] <= 1 - 1 / lengths[~np.isnan(sp)] + 1e-12)
    # Each sentence alone gives the same value as inside the batch: normalisation is per sentence.
    for i in range(len(batch)):
        np.testing.assert_allclose(total_variation_per_sentence([batch[i]], [partner[i]]), tv[i:i + 1], equal_nan=True)
        np.testing.assert_allclose(sparsity_per_sentence([batch[i]]), sp[i:i + 1], equal_nan=True)
        np.testing.assert_allclose(covariate_complexity_per_sentence([batch[i]]), cvr[i:i + 1], equal_nan=True)
    for p, s in zip(normalise_attributions(batch), batch):
        if np.any(np.asarray(s) != 0):
            assert p.sum() == pytest.approx(1.0)


def test_relevance_rank_accuracy_hand_computed_with_ties():
    out = relevance_rank_accuracy_per_sentence(
        [[0.9, 0.8, 0.1, 0.0], [0.5, 0.5, 0.5, 0.1], [-3.0, 1.0, 1.0], [0.0, 0.0]],
        [[1, 0, 1, 0], [1, 1, 0, 0], [1, 0, 0], [1, 0]],
    )
    # s2: top-2 among three tied words of which two are GT: expected hits 2 * 2/3 -> 2/3.
    np.testing.assert_allclose(out[:3], [0.5, 2 / 3, 1.0])
    assert math.isnan(out[3])


def test_relevance_rank_accuracy_does_not_depend_on_word_order():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 3, size=12).astype(float) + 0.0
    truth = (rng.random(12) < 0.4).astype(int)
    truth[0] = 1
    perm = rng.permutation(12)
    a = relevance_rank_accuracy_per_sentence([scores], [truth])
    b = relevance_rank_accuracy_per_sentence([scores[perm]], [truth[perm]])
    np.testing.assert_allclose(a, b)


def test_auprc_agrees_with_scikit_learn_including_ties():
    rng = np.random.default_rng(5)
    scores, truth = [], []
    for _ in range(200):
        n = int(rng.integers(2, 30))
        s = np.round(rng.normal(size=n), 1)  # rounding makes ties common
        h = (rng.random(n) < 0.3).astype(int)
        h[0] = 1
        scores.append(s)
        truth.append(h)
    ours = auprc_per_sentence(scores, truth)
    theirs = [average_precision_score(h, np.abs(s)) for s, h in zip(scores, truth)]
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_ranking_undefined_like_mass_accuracy():
    assert math.isnan(auprc_per_sentence([[0.0, 0.0]], [[1, 0]])[0])
    assert math.isnan(auprc_per_sentence([[1.0, 2.0]], [[0, 0]])[0])
    assert auprc_per_sentence([[1.0, 2.0]], [[1, 1]])[0] == pytest.approx(1.0)
