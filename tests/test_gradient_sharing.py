"""Saliency and Input×Gradient: Captum's definitions computed with one autograd call per batch, the gradient shared
between the two (issue 36), never across models, edited weights or other sentences."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier
from test_explainers import TARGETS, WORDS

from gecobench.explainers import get_explainer
from gecobench.explainers.builtin import INPUT_GRADIENTS
from gecobench.explainers.engine import attribute
from gecobench.explainers.inputs import EmbeddingForward, encode_batch, fold_batch


def encoder_calls(model) -> tuple[list[int], object]:
    calls: list[int] = []
    return calls, model.bert.encoder.register_forward_hook(lambda module, args, out: calls.append(1))


@pytest.fixture(autouse=True)
def empty_memo():
    INPUT_GRADIENTS.clear()
    yield
    INPUT_GRADIENTS.clear()


@pytest.mark.parametrize("name, captum_class", [("saliency", "Saliency"), ("input_x_gradient", "InputXGradient")])
def test_equal_to_captums_own_method(name, captum_class, model64, tokenizer):
    import captum.attr

    ours = attribute(get_explainer(name), model64, tokenizer, WORDS, TARGETS, batch_size=len(WORDS))
    batch = encode_batch(tokenizer, WORDS, torch.device("cpu"))
    forward = EmbeddingForward(model64, "logit")
    inputs = forward.embed(batch.input_ids, batch.attention_mask, batch.token_type_ids).requires_grad_(True)
    method = getattr(captum.attr, captum_class)(forward)
    kwargs = {"abs": True} if name == "saliency" else {}
    theirs = fold_batch(method.attribute(inputs, target=torch.tensor(TARGETS),
                                         additional_forward_args=(batch.attention_mask, batch.token_type_ids),
                                         **kwargs), batch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(b).max())))


def test_input_x_gradient_reuses_saliencys_pass_on_the_same_batches(model64, tokenizer):
    saliency = attribute(get_explainer("saliency"), model64, tokenizer, WORDS, TARGETS)
    calls, handle = encoder_calls(model64)
    try:
        shared = attribute(get_explainer("input_x_gradient"), model64, tokenizer, WORDS, TARGETS)
    finally:
        handle.remove()
    assert calls == [] and INPUT_GRADIENTS.hits > 0  # no encoder pass: the gradient came from Saliency's
    INPUT_GRADIENTS.clear()
    fresh = attribute(get_explainer("input_x_gradient"), model64, tokenizer, WORDS, TARGETS)
    for a, b in zip(shared, fresh):
        np.testing.assert_array_equal(a, b)
    assert not all(np.array_equal(a, b) for a, b in zip(saliency, fresh))  # |g| summed is not (x * g) summed


def test_the_memo_misses_for_other_targets_models_and_edited_weights(model64, tokenizer):
    attribute(get_explainer("saliency"), model64, tokenizer, WORDS, TARGETS)
    calls, handle = encoder_calls(model64)
    try:
        attribute(get_explainer("saliency"), model64, tokenizer, WORDS, [1 - t for t in TARGETS])
        assert calls, "other targets: a new pass"
        calls.clear()
        before = attribute(get_explainer("saliency"), model64, tokenizer, WORDS, TARGETS)
        assert not calls
        with torch.no_grad():
            model64.classifier.weight.mul_(-2.0)  # an in-place edit bumps the parameter's version
        try:
            after = attribute(get_explainer("saliency"), model64, tokenizer, WORDS, TARGETS)
        finally:
            with torch.no_grad():
                model64.classifier.weight.div_(-2.0)
        assert calls and not all(np.allclose(a, b) for a, b in zip(before, after))
    finally:
        handle.remove()
    # another model with the same shapes (and parameter versions) never reads this one's gradients
    other = make_tiny_bert_classifier(seed=4).double()
    calls, handle = encoder_calls(other)
    try:
        attribute(get_explainer("saliency"), other, tokenizer, WORDS, TARGETS)
    finally:
        handle.remove()
    assert calls


def test_the_memo_keeps_at_most_its_byte_budget(model64, tokenizer):
    from gecobench.explainers.builtin import InputGradientMemo

    memo = InputGradientMemo(max_bytes=1000)
    memo.put(("a",), model64, torch.zeros(100, dtype=torch.float64))  # 800 bytes
    memo.put(("b",), model64, torch.zeros(100, dtype=torch.float64))
    assert memo.get(("a",), model64) is None and memo.get(("b",), model64) is not None
    assert memo.nbytes() <= 1000
