"""Mass Accuracy, its summary/bootstrap and Relative Mass Accuracy (gecobench.metrics)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gecobench.metrics.mass_accuracy import (
    bootstrap_ci,
    fold_token_attributions,
    mass_accuracy_loop,
    mass_accuracy_per_sentence,
    summarize,
)
from gecobench.metrics.relative_mass_accuracy import relative_mass_accuracy


def test_paper_example_gives_0_9():
    assert mass_accuracy_per_sentence([[0.9, 0, 0, 0.1]], [[1, 1, 0, 0]])[0] == pytest.approx(0.9)


def test_hand_computed_ragged_batch_with_signs():
    out = mass_accuracy_per_sentence(
        [[-1.0, 3.0], [2.0, 2.0, 4.0], [0.5]],
        [[1, 0], [0, 1, 1], [1]],
    )
    np.testing.assert_allclose(out, [0.25, 6.0 / 8.0, 1.0])


def test_undefined_sentences_are_nan_and_counted_not_zero():
    per = mass_accuracy_per_sentence([[0.0, 0.0], [1.0, 2.0], [1.0, 1.0], []], [[1, 0], [0, 0], [1, 0], []])
    assert math.isnan(per[0]) and math.isnan(per[1]) and math.isnan(per[3])
    assert per[2] == pytest.approx(0.5)
    summary = summarize(per)
    assert summary["n_scored"] == 1 and summary["n_undefined"] == 3
    assert summary["mean"] == pytest.approx(0.5) and summary["median"] == pytest.approx(0.5)


def test_all_undefined_gives_nan_aggregates_not_zero():
    summary = summarize(mass_accuracy_per_sentence([[0.0, 0.0]], [[1, 0]]))
    assert math.isnan(summary["mean"]) and summary["n_scored"] == 0 and summary["n_undefined"] == 1


def test_vectorised_equals_loop_on_random_ragged_data():
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 40, size=500)
    scores = [rng.normal(size=n) * (rng.random() > 0.05) for n in lengths]
    truth = [(rng.random(n) < 0.2).astype(int) for n in lengths]
    np.testing.assert_allclose(
        mass_accuracy_per_sentence(scores, truth), mass_accuracy_loop(scores, truth), equal_nan=True
    )


def test_token_level_attributions_fold_to_words():
    # tokens: [CLS] he ##llo world [SEP]; word 0 = he+##llo (|-0.2| + 0.3), word 1 = world
    folded = fold_token_attributions([[5.0, -0.2, 0.3, 0.5, 5.0]], [[None, 0, 0, 1, None]], [[1, 0]])
    np.testing.assert_allclose(folded[0], [0.5, 0.5])
    assert mass_accuracy_per_sentence(folded, [[1, 0]])[0] == pytest.approx(0.5)


def test_bootstrap_is_seeded_and_brackets_the_mean():
    rng = np.random.default_rng(0)
    values = rng.random(200)
    low, high = bootstrap_ci(values, n_resamples=500, seed=7)
    assert (low, high) == bootstrap_ci(values, n_resamples=500, seed=7)
    assert low < values.mean() < high
    # Normal approximation of the mean's 95% interval as an independent check of the width.
    half_width = 1.96 * values.std(ddof=1) / math.sqrt(values.size)
    assert (high - low) == pytest.approx(2 * half_width, rel=0.25)
    summary = summarize(np.r_[values, np.nan], bootstrap=500, seed=7)
    assert (summary["ci_low"], summary["ci_high"]) == (low, high)


@pytest.mark.parametrize(
    "attributions, ground_truth, message",
    [
        ([[0.1, 0.2]], [[1, 0, 0]], "sentence 0"),
        ([[0.1, 0.2], [0.3]], [[1, 0]], "2 sentences"),
        ([[0.1, float("nan")]], [[1, 0]], "attributions: sentence 0"),
        ([[0.1], [float("inf")]], [[1], [0]], "attributions: sentence 1"),
        ([[0.1, 0.2]], [[1, 2]], "ground_truth: sentence 0"),
        ([], [], "empty"),
        ([[0.1, 0.2], None], [[1, 0], [1]], "sentence 1"),
    ],
)
def test_bad_input_names_field_and_sentence(attributions, ground_truth, message):
    with pytest.raises(ValueError, match=message):
        mass_accuracy_per_sentence(attributions, ground_truth)


ragged_pairs = st.lists(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False), min_size=n, max_size=n),
            st.lists(st.integers(0, 1), min_size=n, max_size=n),
        )
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(ragged_pairs, st.floats(1e-3, 1e3))
def test_mass_accuracy_invariants(pairs, scale):
    scores = [s for s, _ in pairs]
    truth = [h for _, h in pairs]
    per = mass_accuracy_per_sentence(scores, truth)
    defined = ~np.isnan(per)
    assert np.all((per[defined] >= 0) & (per[defined] <= 1))
    scaled = mass_accuracy_per_sentence([[x * scale for x in s] for s in scores], truth)
    np.testing.assert_allclose(scaled, per, rtol=1e-9, atol=1e-12, equal_nan=True)
    on_truth_only = [[abs(x) + 1.0 if t else 0.0 for x, t in zip(s, h)] for s, h in zip(scores, truth)]
    all_mass = mass_accuracy_per_sentence(on_truth_only, truth)
    for value, h in zip(all_mass, truth):
        assert value == 1.0 if any(h) else math.isnan(value)
    # Batch composition never changes a sentence's value.
    np.testing.assert_allclose(mass_accuracy_per_sentence(scores[:1], truth[:1]), per[:1], equal_nan=True)


def test_relative_mass_accuracy_hand_computed_and_exclusions():
    out = relative_mass_accuracy([0.6, 0.2, None, 0.0, 0.5], [0.3, 0.4, 0.5, 0.5, float("nan")])
    assert out["n_scored"] == 2 and out["n_excluded"] == 3
    assert out["median_log_rma"] == pytest.approx((math.log(2.0) + math.log(0.5)) / 2)
    assert out["ratio_of_means"] == pytest.approx(0.4 / 0.35)


@pytest.mark.parametrize(
    "predictions, references, message",
    [
        ([0.5, 0.5], [0.5], "references has 1"),
        ([0.5, 1.5], [0.5, 0.5], "predictions: sentence 1"),
        ([0.5], [float("inf")], "references: sentence 0"),
        ([0.5], [-0.1], "references: sentence 0"),
        ([], [], "empty"),
    ],
)
def test_relative_mass_accuracy_bad_input(predictions, references, message):
    with pytest.raises(ValueError, match=message):
        relative_mass_accuracy(predictions, references)
