"""The built-ins' ``precision`` parameter: the model's matrix products in bfloat16 under autocast, a parameter of
the record only when it is not float32, attributions that agree with float32's to bfloat16's precision."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import MA_ONLY, TINY_PROTOCOL, cli_flags, make_tiny_bert_classifier
from tolerances import max_error_relative_to_largest

from gecobench.cli import evaluate as evaluate_cli
from gecobench.evaluation.settings import ExplainerSpec, with_precision
from gecobench.explainers.base import get_explainer
from gecobench.explainers.builtin import INPUT_GRADIENTS
from gecobench.explainers.engine import attribute
from gecobench.explainers.inputs import EmbeddingForward, encode_batch, running_in
from gecobench.store import LocalStore

WORDS = [["the", "doctor", "said", "she", "was", "tired"], ["he", "runs"],
         ["a", "remarkably", "long", "sentence", "about", "his", "work", "today"], ["they", "left", "early"]]
TARGETS = [0, 1, 1, 0]
# fixed budgets, so both precisions do the same work (an accuracy target may stop at other counts)
MODEL_RUNNING = {"saliency": {}, "input_x_gradient": {}, "deeplift": {}, "guided_backprop": {},
                 "integrated_gradients": {"n_steps": 8}, "gradient_shap": {"n_samples": 4, "stdevs": 0.01},
                 "lime": {"n_samples": 30}, "kernel_shap": {"n_samples": 25}, "partition_shap": {}}
# bfloat16 keeps 8 significant bits: one rounding is at most 2**-8 of a value. Through a two-layer model's
# matrix products and the fold to words the error relative to the largest value stays within a few such roundings
# (measured: at most 0.023 for the scores, 0.007 for the outputs); 32 of them (1/8) is far below what a wrong
# computation gives (the scores of other words, other outputs).
BFLOAT16_TOLERANCE = 32 * torch.finfo(torch.bfloat16).eps / 2


@pytest.fixture(scope="module")
def model32():
    return make_tiny_bert_classifier(seed=5)


@pytest.mark.parametrize("name", sorted(MODEL_RUNNING))
def test_every_model_running_builtin_runs_the_model_in_bfloat16_when_asked(name, model32, tokenizer):
    params = MODEL_RUNNING[name]
    INPUT_GRADIENTS.clear()
    single = attribute(get_explainer(name, **params), model32, tokenizer, WORDS, TARGETS, seed=3)
    mixed = attribute(get_explainer(name, precision="bfloat16", **params), model32, tokenizer, WORDS, TARGETS, seed=3)
    assert [len(s) for s in mixed] == [len(w) for w in WORDS]
    assert all(np.isfinite(s).all() and (s >= 0).all() for s in mixed)
    assert max_error_relative_to_largest(mixed, single) > 0, f"{name}: float32's scores: no bfloat16 pass ran"


@pytest.mark.parametrize("name", ["saliency", "input_x_gradient", "integrated_gradients", "gradient_shap"])
def test_bfloat16_gradient_scores_agree_with_float32s_to_bfloat16s_precision(name, model32, tokenizer):
    """Where each score is a well-conditioned function of the model (no cancellation of near-equal outputs). The
    perturbation methods' scores are differences of outputs, which on a random tiny model differ by about
    bfloat16's rounding; on trained models they agree too (BENCHMARKS.md, "Mixed precision": equal MA)."""
    params = MODEL_RUNNING[name]
    INPUT_GRADIENTS.clear()
    single = attribute(get_explainer(name, **params), model32, tokenizer, WORDS, TARGETS, seed=3)
    mixed = attribute(get_explainer(name, precision="bfloat16", **params), model32, tokenizer, WORDS, TARGETS, seed=3)
    error = max_error_relative_to_largest(mixed, single)
    assert error < BFLOAT16_TOLERANCE, f"{name}: bfloat16 scores {error:.3g} of the largest from float32's"


def test_precision_is_a_parameter_only_when_it_is_not_float32():
    default, explicit = get_explainer("saliency"), get_explainer("saliency", precision="float32")
    mixed = get_explainer("saliency", precision="bfloat16")
    assert "precision" not in default.params() and explicit.params() == default.params()
    assert mixed.params() == {**default.params(), "precision": "bfloat16"}
    assert (default.precision, mixed.precision) == ("float32", "bfloat16")


def test_a_precision_that_changes_nothing_or_does_not_exist_is_refused_by_name():
    with pytest.raises(ValueError, match="precision must be one of float32, bfloat16, got 'float16'"):
        get_explainer("saliency", precision="float16")
    with pytest.raises(ValueError, match="uniform_random does not run the model"):
        get_explainer("uniform_random", precision="bfloat16")
    assert "precision" not in get_explainer("uniform_random", precision="float32").params()


def test_outputs_are_float32_and_the_models_attention_is_restored_after_a_bfloat16_pass(model32, tokenizer):
    batch = encode_batch(tokenizer, WORDS, torch.device("cpu"))
    before = model32.config._attn_implementation
    forward = EmbeddingForward(model32, "probability", precision="bfloat16")
    with torch.no_grad():
        outputs = forward.from_ids(batch.input_ids, batch.attention_mask, batch.token_type_ids)
        exact = EmbeddingForward(model32, "probability").from_ids(batch.input_ids, batch.attention_mask,
                                                                  batch.token_type_ids)
    assert outputs.dtype == torch.float32
    assert 0 < float((outputs - exact).abs().max()) < BFLOAT16_TOLERANCE * float(exact.abs().max())
    assert model32.config._attn_implementation == before
    assert not torch.is_autocast_enabled("cpu")
    with pytest.raises(RuntimeError, match="inside"), running_in(model32, "bfloat16"):
        assert torch.is_autocast_enabled("cpu")
        raise RuntimeError("inside")
    assert model32.config._attn_implementation == before and not torch.is_autocast_enabled("cpu")


def test_float32_and_bfloat16_gradients_are_never_shared(model32, tokenizer):
    INPUT_GRADIENTS.clear()
    attribute(get_explainer("saliency"), model32, tokenizer, WORDS, TARGETS)
    hits = INPUT_GRADIENTS.hits
    mixed = attribute(get_explainer("input_x_gradient", precision="bfloat16"), model32, tokenizer, WORDS, TARGETS)
    assert INPUT_GRADIENTS.hits == hits  # a miss: Input×Gradient computed its own bfloat16 gradient
    again = attribute(get_explainer("input_x_gradient", precision="bfloat16"), model32, tokenizer, WORDS, TARGETS)
    assert INPUT_GRADIENTS.hits > hits and all(np.array_equal(a, b) for a, b in zip(mixed, again))


def test_with_precision_sets_it_on_the_model_running_builtins_only_and_leaves_a_specs_own():
    specs = [ExplainerSpec.parse(text) for text in ("saliency", "lime:n_samples=50", "uniform_random",
                                                    "kernel_shap:precision=float32")]
    mixed = with_precision(specs, "bfloat16")
    assert [spec.params for spec in mixed] == [{"precision": "bfloat16"}, {"n_samples": 50, "precision": "bfloat16"},
                                              {}, {"precision": "float32"}]
    assert with_precision(specs, "float32") == specs
    with pytest.raises(ValueError, match="precision must be one of"):
        with_precision(specs, "half")


def test_evaluate_precision_writes_bfloat16_records_beside_float32_ones(tiny_models, geco_dir, tmp_path) -> None:
    store = tmp_path / "store"
    common = ["--models", tiny_models["CE"], "--data-dir", str(geco_dir), "--checkpoint-dir", str(tmp_path / "ck"),
              "--results", str(store), *cli_flags({**TINY_PROTOCOL, "max_groups": 4, "bootstrap": 10, **MA_ONLY}),
              "--quiet"]
    assert evaluate_cli.main(["--explainers", "saliency", "uniform_random", *common]) == 0
    assert evaluate_cli.main(["--explainers", "saliency", "uniform_random", "--precision", "bfloat16", *common]) == 0
    report = LocalStore(store).read_all("explainer_score")
    assert report.warnings == []
    params = sorted((r["explainer"]["name"], r["explainer"]["params"].get("precision", "float32"))
                    for r in report.documents)
    # the baseline runs no model: one record; Saliency: one per precision, two identities
    assert params == [("saliency", "bfloat16"), ("saliency", "float32"), ("uniform_random", "float32")]


def test_adaptive_integrated_gradients_judges_a_bfloat16_gap_against_bfloat16s_rounding(model32, tokenizer):
    """A random model's outputs hardly move: their difference is below rounding, and the completeness gap is
    judged against bfloat16's floor, not float32's (which no bfloat16 gap meets: every sentence ran to max_steps)."""
    runs = {}
    for precision in ("float32", "bfloat16"):
        explainer = get_explainer("integrated_gradients", precision=precision, max_steps=128)
        attribute(explainer, model32, tokenizer, WORDS, TARGETS)
        runs[precision] = explainer.last_diagnostics["n_steps"]
    assert runs["bfloat16"].max() < 128 and runs["bfloat16"].mean() <= 2 * runs["float32"].mean()


def test_the_python_front_door_takes_the_precision_as_the_cli_does(tiny_models, geco_dir) -> None:
    import gecobench

    results = gecobench.evaluate(tiny_models["CE"], explainers=["saliency", "uniform_random"], data_dir=geco_dir,
                                 max_sentences=2, properties=False, faithfulness=False, bootstrap=10, progress=False,
                                 precision="bfloat16")
    assert [(r["explainer"]["name"], r["explainer"]["params"].get("precision")) for r in results.records] == [
        ("saliency", "bfloat16"), ("uniform_random", None)]
