"""Strict values in the metrics: bad input is refused with a ValueError naming field and sentence, never cast or
crashed on; ratios are right at any scale. Includes the Hypothesis property suite over the metric math and two
``evaluate`` modules (random ragged input: only ValueError; MA in [0, 1]; MA invariant to positive rescaling)."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gecobench.metrics import properties, ranking
from gecobench.metrics.bias_indices import bias_indices
from gecobench.metrics.cooccurrence import cooccurrence_bias
from gecobench.metrics.mass_accuracy import fold_token_attributions, mass_accuracy_loop, mass_accuracy_per_sentence
from gecobench.metrics.relative_mass_accuracy import relative_mass_accuracy

REPO_ROOT = Path(__file__).resolve().parent.parent
MODULE_TYPES = {"relative_mass_accuracy": "comparison", "cooccurrence_bias": "measurement", "bias_indices": "measurement"}
EPS = np.finfo(np.float64).eps

# One valid call per module; each test below breaks one field of it.
VALID_CALLS: dict[str, dict] = {
    "mass_accuracy": dict(attributions=[[0.9, 0.1], [0.2, 0.3]], ground_truth=[[1, 0], [0, 1]]),
    "relevance_rank_accuracy": dict(attributions=[[0.9, 0.1], [0.2, 0.3]], ground_truth=[[1, 0], [0, 1]]),
    "auprc": dict(attributions=[[0.9, 0.1], [0.2, 0.3]], ground_truth=[[1, 0], [0, 1]]),
    "sparsity": dict(attributions=[[0.9, 0.1], [0.2, 0.3]]),
    "covariate_complexity": dict(attributions=[[0.9, 0.1], [0.2, 0.3]]),
    "methods_agreement": dict(attributions=[[0.9, 0.1], [0.2, 0.3]], others=[[[0.1, 0.9], [0.3, 0.2]]]),
    "model_randomisation_check": dict(predictions=[[0.9, 0.1], [0.2, 0.3]], references=[[0.1, 0.9], [0.3, 0.2]]),
    "small_noise_check": dict(predictions=[[0.9, 0.1], [0.2, 0.3]], references=[[0.1, 0.9], [0.3, 0.2]]),
    "label_difference": dict(predictions=[[0.9, 0.1], [0.2, 0.3]], references=[[0.1, 0.9], [0.3, 0.2]]),
    "relative_mass_accuracy": dict(predictions=[0.5, 0.7], references=[0.4, 0.7]),
    "cooccurrence_bias": dict(words=[["he", "ran"], ["she", "sat"]], group=["male", "female"]),
    "comprehensiveness": dict(full_probability=[0.9, 0.8], probability_without_rationale=[[0.7, 0.1], [0.9]]),
    "sufficiency": dict(full_probability=[0.9, 0.8], probability_rationale_only=[[0.7, 0.1], [0.9]]),
    "leave_one_out_tau": dict(attributions=[[0.1, 0.9, 0.5], [0.2, 0.3]], leave_one_out=[[0.0, 0.6, 0.2], [0.3, 0.1]]),
    "bias_indices": dict(group=["male", "female"], word=["alto", "alta"], probability=[0.3, 0.2], rank=[1, 1],
                         is_adjective=[True, True], lexicon={"alto": "BODY", "alta": "BODY"}, k=1),
}
MODULE_NAMES = sorted(VALID_CALLS)


@functools.cache
def load_module(name: str):
    import evaluate

    return evaluate.load(str(REPO_ROOT / "metrics" / name), module_type=MODULE_TYPES.get(name, "metric"))


def test_every_module_has_a_valid_call():
    on_disk = {p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()}
    assert on_disk == set(VALID_CALLS)


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_valid_call_computes(name):
    result = load_module(name).compute(**VALID_CALLS[name])
    assert isinstance(result, dict) and result


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_none_for_each_input_is_a_value_error_naming_it(name):
    module = load_module(name)
    for field in (f for f in VALID_CALLS[name] if f not in ("k",)):
        call = dict(VALID_CALLS[name], **{field: None})
        with pytest.raises(ValueError, match=field):
            module.compute(**call)


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_none_inside_the_second_sentence_is_a_value_error_naming_field_and_index(name):
    module = load_module(name)
    field = next(iter(VALID_CALLS[name]))
    call = dict(VALID_CALLS[name])
    call[field] = [call[field][0], None]
    if name == "relative_mass_accuracy":  # None is an undefined sentence there; a string is not
        call[field] = [call[field][0], "0.5"]
    with pytest.raises(ValueError, match=rf"{field}: (sentence|row) 1"):
        module.compute(**call)


@pytest.mark.parametrize("name", ["mass_accuracy", "relevance_rank_accuracy", "auprc"])
@pytest.mark.parametrize("bad", [0.5, 0.9, 2, -1, "1", True + 1])
def test_non_binary_ground_truth_is_refused_not_cast(name, bad):
    call = dict(VALID_CALLS[name], ground_truth=[[1, 0], [0, bad]])
    with pytest.raises(ValueError, match=r"ground_truth: sentence 1 holds .* only 0 and 1"):
        load_module(name).compute(**call)


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True, -7])
def test_invalid_word_ids_are_refused(bad):
    call = dict(attributions=[[0.5, 0.9, 0.1], [0.2, 0.3]], ground_truth=[[1, 0], [0, 1]],
                word_ids=[[None, 0, 1], [0, bad]])
    with pytest.raises(ValueError, match=r"word_ids: sentence 1: token 1"):
        load_module("mass_accuracy").compute(**call)


def test_word_id_beyond_the_sentence_is_refused():
    with pytest.raises(ValueError, match=r"word_ids: sentence 0"):
        fold_token_attributions([[0.5, 0.9]], [[0, 2]], [[1, 0]])


@pytest.mark.parametrize("bad", ["no", "yes", "False", None, 2, 0.5])
def test_non_boolean_flag_is_refused(bad):
    call = dict(VALID_CALLS["bias_indices"], is_adjective=[True, bad])
    with pytest.raises(ValueError, match=r"is_adjective: row 1"):
        load_module("bias_indices").compute(**call)
    with pytest.raises(ValueError, match=r"is_adjective: row 1"):
        bias_indices(**call)


@pytest.mark.parametrize("field, bad", [("probability", "0.2"), ("rank", 1.5), ("rank", "1"), ("word", 3),
                                        ("group", None)])
def test_bias_indices_rows_are_strict(field, bad):
    call = dict(VALID_CALLS["bias_indices"])
    call[field] = [call[field][0], bad]
    with pytest.raises(ValueError, match=rf"{field}: row 1"):
        load_module("bias_indices").compute(**call)


@pytest.mark.parametrize("bad", ["0.5", [0.1], {"a": 1}, float("nan"), float("inf")])
def test_attribution_values_that_are_not_finite_numbers_are_refused(bad):
    call = dict(VALID_CALLS["sparsity"], attributions=[[0.9, 0.1], [0.2, bad]])
    with pytest.raises(ValueError, match=r"attributions: sentence 1"):
        load_module("sparsity").compute(**call)


@pytest.mark.parametrize("option, bad", [("bootstrap", "10"), ("bootstrap", -1), ("seed", 1.5),
                                         ("return_per_sentence", "yes")])
def test_options_are_strict(option, bad):
    with pytest.raises(ValueError, match=option):
        load_module("mass_accuracy").compute(**VALID_CALLS["mass_accuracy"], **{option: bad})


def test_math_refuses_strings_that_numpy_would_convert():
    with pytest.raises(ValueError, match=r"attributions: sentence 0 holds '0.5' at position 1"):
        mass_accuracy_per_sentence([[1.0, "0.5"]], [[1, 0]])
    with pytest.raises(ValueError, match=r"predictions: sentence 1 is '0.5'"):
        relative_mass_accuracy([0.5, "0.5"], [0.5, 0.5])
    with pytest.raises(ValueError, match=r"others\[0\]: sentence 0 holds 'x' at position 1"):
        properties.methods_agreement_per_sentence([[1.0, 0.0]], [[[1.0, "x"]]])


@pytest.mark.parametrize("scale", [1e308, 1e-308, 5e-324, 1e300, 1e-300])
def test_mass_accuracy_is_right_at_extreme_scales(scale):
    # Half the mass on the ground truth at any scale (1e308 + 1e308 overflowed to inf and gave MA 0).
    expected = [0.5, 0.25]
    scores = [[scale, scale], [scale, scale, scale, scale]]
    truth = [[1, 0], [0, 0, 1, 0]]
    np.testing.assert_allclose(mass_accuracy_per_sentence(scores, truth), expected, rtol=4 * EPS)
    np.testing.assert_allclose(mass_accuracy_loop(scores, truth), expected, rtol=4 * EPS)
    module = load_module("mass_accuracy").compute(attributions=scores, ground_truth=truth, return_per_sentence=True)
    np.testing.assert_allclose(module["per_sentence"], expected, rtol=4 * EPS)
    folded = fold_token_attributions([[scale, scale, scale]], [[0, 0, 1]], [[1, 0]])
    np.testing.assert_allclose(mass_accuracy_per_sentence(folded, [[1, 0]]), [2 / 3], rtol=4 * EPS)


@pytest.mark.parametrize("scale", [1e308, 1e-308, 1e300, 1e-300])
def test_property_metrics_are_right_at_extreme_scales(scale):
    tv = properties.total_variation_per_sentence([[scale, scale]], [[scale, 0.0]])
    np.testing.assert_allclose(tv, [0.5], rtol=4 * EPS)
    np.testing.assert_allclose(properties.sparsity_per_sentence([[0.0, 0.0, 0.0, scale]]), [0.75], rtol=4 * EPS)
    np.testing.assert_allclose(properties.covariate_complexity_per_sentence([[scale] * 4]), [1.0], rtol=4 * EPS)
    np.testing.assert_allclose(ranking.auprc_per_sentence([[scale, scale / 2]], [[0, 1]]), [0.5], rtol=4 * EPS)


# ---- Hypothesis property suite -------------------------------------------------------------------------------

_ANY_VALUE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.booleans(), st.none(),
    st.text(max_size=3), st.lists(st.floats(0, 1), max_size=2),
)
_SENTENCE = st.one_of(st.lists(_ANY_VALUE, max_size=5), st.none(), st.text(max_size=3), st.floats(0, 1))
_RAGGED = st.one_of(st.lists(_SENTENCE, max_size=4), st.none(), st.text(max_size=3))
# Mostly well-formed but sometimes broken: valid sentences with one value swapped for something odd.
_NEAR_VALID_SCORES = st.lists(st.lists(st.floats(-10, 10), min_size=1, max_size=5), min_size=1, max_size=4)

_MATH_ON_TWO = [
    mass_accuracy_per_sentence,
    ranking.relevance_rank_accuracy_per_sentence,
    ranking.auprc_per_sentence,
    properties.model_randomisation_check_per_sentence,
    properties.small_noise_check_per_sentence,
    properties.label_difference_per_sentence,
    lambda a, b: properties.methods_agreement_per_sentence(a, [b]),
    lambda a, b: relative_mass_accuracy(a, b),
    lambda a, b: fold_token_attributions(a, b, a),
    lambda a, b: cooccurrence_bias(a, b),
]
_MATH_ON_ONE = [
    properties.sparsity_per_sentence,
    properties.covariate_complexity_per_sentence,
    properties.normalise_attributions,
]


def _only_value_errors(function, *args) -> None:
    try:
        function(*args)
    except ValueError:
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=_RAGGED, second=_RAGGED)
def test_math_raises_only_value_errors_on_random_ragged_input(first, second):
    for function in _MATH_ON_TWO:
        _only_value_errors(function, first, second)
    for function in _MATH_ON_ONE:
        _only_value_errors(function, first)


@settings(max_examples=100, deadline=None)
@given(scores=_NEAR_VALID_SCORES, data=st.data())
def test_math_raises_only_value_errors_on_near_valid_input(scores, data):
    truth = [data.draw(st.lists(st.sampled_from([0, 1]), min_size=len(s), max_size=len(s))) for s in scores]
    sentence = data.draw(st.integers(0, len(scores) - 1))
    position = data.draw(st.integers(0, len(scores[sentence]) - 1))
    target = data.draw(st.sampled_from(["scores", "truth"]))
    broken = [list(s) for s in (scores if target == "scores" else truth)]
    broken[sentence][position] = data.draw(_ANY_VALUE)
    pair = (broken, truth) if target == "scores" else (scores, broken)
    for function in _MATH_ON_TWO[:7]:
        _only_value_errors(function, *pair)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(attributions=_RAGGED, ground_truth=_RAGGED)
def test_mass_accuracy_module_raises_only_value_errors(attributions, ground_truth):
    _only_value_errors(lambda: load_module("mass_accuracy").compute(attributions=attributions,
                                                                     ground_truth=ground_truth))


_ROW_VALUE = st.one_of(st.text(max_size=3), st.floats(allow_nan=True), st.integers(-2, 5), st.booleans(),
                       st.none())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(_ROW_VALUE, _ROW_VALUE, _ROW_VALUE, _ROW_VALUE, _ROW_VALUE), max_size=4),
       k=st.one_of(st.integers(-1, 4), st.none(), st.text(max_size=2)))
def test_bias_indices_module_raises_only_value_errors(rows, k):
    columns = [list(c) for c in zip(*rows)] if rows else [[], [], [], [], []]
    call = dict(zip(["group", "word", "probability", "rank", "is_adjective"], columns))
    _only_value_errors(lambda: load_module("bias_indices").compute(**call, lexicon={"x": "BODY"}, k=k))


# Valid attributions: magnitudes in [1e-5, 1e5] (or exactly 0) so that rescaling by 1e-300..1e300 stays within
# normal doubles; random signs; a 0/1 ground truth per word.
_MAGNITUDE = st.one_of(st.just(0.0), st.floats(1e-5, 1e5))
_VALID_SENTENCE = st.lists(st.tuples(_MAGNITUDE, st.booleans(), st.sampled_from([0, 1])), min_size=1, max_size=12)


def _split(sentences):
    scores = [[m if positive else -m for m, positive, _ in s] for s in sentences]
    truth = [[h for _, _, h in s] for s in sentences]
    return scores, truth


@settings(max_examples=200, deadline=None)
@given(sentences=st.lists(_VALID_SENTENCE, min_size=1, max_size=6))
def test_mass_accuracy_lies_in_unit_interval_and_matches_the_loop(sentences):
    scores, truth = _split(sentences)
    ma = mass_accuracy_per_sentence(scores, truth)
    defined = ~np.isnan(ma)
    assert ((ma[defined] >= 0.0) & (ma[defined] <= 1.0)).all()
    # Undefined exactly when there is no mass or no ground-truth word.
    for value, s, h in zip(ma, scores, truth):
        assert math.isnan(value) == (not any(s) or not any(h))
    np.testing.assert_allclose(ma, mass_accuracy_loop(scores, truth), rtol=0, atol=16 * EPS, equal_nan=True)


@settings(max_examples=200, deadline=None)
@given(sentences=st.lists(_VALID_SENTENCE, min_size=1, max_size=6),
       log10_scale=st.floats(-300, 300), fixed_scale=st.sampled_from([1e-300, 1e300, 1.0]))
def test_mass_accuracy_is_invariant_to_positive_rescaling(sentences, log10_scale, fixed_scale):
    scores, truth = _split(sentences)
    reference = mass_accuracy_per_sentence(scores, truth)
    for scale in (10.0**log10_scale, fixed_scale):
        rescaled = [[v * scale for v in s] for s in scores]
        # Rounding c * s costs at most one ulp per word, relative: the ratio moves by a few ulps of 1.
        n_words = max(len(s) for s in scores)
        np.testing.assert_allclose(mass_accuracy_per_sentence(rescaled, truth), reference, rtol=0,
                                   atol=4 * n_words * EPS, equal_nan=True)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sentences=st.lists(_VALID_SENTENCE, min_size=1, max_size=4), scale=st.sampled_from([1e-300, 1e300]))
def test_mass_accuracy_module_is_invariant_to_rescaling(sentences, scale):
    scores, truth = _split(sentences)
    module = load_module("mass_accuracy")
    base = module.compute(attributions=scores, ground_truth=truth, return_per_sentence=True)["per_sentence"]
    scaled = module.compute(attributions=[[v * scale for v in s] for s in scores], ground_truth=truth,
                            return_per_sentence=True)["per_sentence"]
    n_words = max(len(s) for s in scores)
    for a, b in zip(base, scaled):
        assert (a is None) == (b is None)
        if a is not None:
            assert abs(a - b) <= 4 * n_words * EPS
