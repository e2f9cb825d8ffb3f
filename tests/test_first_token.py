"""The BERT classifier's last layer at the first token only (gecobench.explainers.first_token) and frozen
parameters during gradient explanations (gecobench.explainers.inputs.parameters_frozen): same numbers as the
unchanged model, the model always restored."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier
from tolerances import max_error_relative_to_largest, ulp_tolerance
from torch import nn

from gecobench.explainers import inputs
from gecobench.explainers.base import get_explainer
from gecobench.explainers.engine import attribute
from gecobench.explainers.first_token import (
    FirstTokenLayer,
    final_layer_at_first_token,
    supports_first_token_final_layer,
)
from gecobench.explainers.inputs import encode_batch, parameters_frozen

SENTENCES = [
    ["the", "actress", "told", "her", "brother", "a", "long", "story", "about", "the", "war"],
    ["he", "smiled"],
    ["my", "aunt", "is", "a", "nurse", "."],
]


def _logits_and_gradients(model: nn.Module, tokenizer, swap: bool) -> tuple[torch.Tensor, torch.Tensor]:
    batch = encode_batch(tokenizer, SENTENCES, next(model.parameters()).device)  # padded: the mask matters
    embeddings = model.get_input_embeddings()(batch.input_ids).detach().requires_grad_(True)
    context = final_layer_at_first_token(model) if swap else contextlib.nullcontext(False)
    with context as swapped:
        assert swapped == swap
        logits = model(inputs_embeds=embeddings, **batch.forward_kwargs()).logits
    (gradients,) = torch.autograd.grad(logits[:, 1].sum(), embeddings)
    return logits.detach(), gradients


CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=CUDA)])
@pytest.mark.parametrize("attention", ["eager", "sdpa"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_first_token_layer_gives_the_full_models_logits_and_gradients(tokenizer, attention, dtype, device):
    model = make_tiny_bert_classifier(seed=5).to(dtype=dtype, device=device)
    model.config._attn_implementation = attention
    full_logits, full_gradients = _logits_and_gradients(model, tokenizer, swap=False)
    logits, gradients = _logits_and_gradients(model, tokenizer, swap=True)
    numpy_dtype = np.float32 if dtype == torch.float32 else np.float64
    # on a GPU, attention over one query row may run another kernel than over T rows (another summation order);
    # on the CPU both are the same few BLAS calls
    ulps = 4096 if device == "cuda" else 64
    assert torch.allclose(
        logits, full_logits, rtol=0, atol=ulp_tolerance(numpy_dtype, full_logits.abs().max(), ulps)
    )
    assert torch.allclose(
        gradients, full_gradients, rtol=0, atol=ulp_tolerance(numpy_dtype, full_gradients.abs().max(), ulps)
    )
    # and the gradients are not trivially zero: the comparison means something
    assert full_gradients.abs().max() > 0


def test_the_last_layer_is_restored_after_the_block_and_after_an_error(tokenizer):
    model = make_tiny_bert_classifier()
    original = model.bert.encoder.layer[-1]
    with final_layer_at_first_token(model):
        assert isinstance(model.bert.encoder.layer[-1], FirstTokenLayer)
        with final_layer_at_first_token(model) as nested:  # an enclosing swap is not stacked
            assert nested and model.bert.encoder.layer[-1].layer is original
    assert model.bert.encoder.layer[-1] is original
    with pytest.raises(RuntimeError, match="boom"), final_layer_at_first_token(model):
        raise RuntimeError("boom")
    assert model.bert.encoder.layer[-1] is original


def test_models_the_swap_does_not_fit_run_unchanged():
    model = make_tiny_bert_classifier()
    assert supports_first_token_final_layer(model)
    model.train()  # dropout in the last layer: not the function the swap reproduces
    assert not supports_first_token_final_layer(model)
    model.eval()
    model.config.chunk_size_feed_forward = 4
    assert not supports_first_token_final_layer(model)
    model.config.chunk_size_feed_forward = 0

    class MeanPooled(nn.Module):  # reads every position of the last layer, like the zero-shot classifier
        def __init__(self):
            super().__init__()
            self.bert = model.bert

    other = MeanPooled().eval()
    assert not supports_first_token_final_layer(other)
    with final_layer_at_first_token(other) as swapped:
        assert not swapped
        assert not isinstance(model.bert.encoder.layer[-1], FirstTokenLayer)


@pytest.mark.parametrize("name", ["saliency", "deeplift", "guided_backprop", "integrated_gradients", "lime"])
def test_explainers_give_the_same_scores_with_and_without_the_swap(tokenizer, monkeypatch, name):
    """DeepLift and Guided Backprop hook the model's modules: the swapped layer must keep them in the graph."""
    model = make_tiny_bert_classifier(seed=2, hidden_act="relu").double()
    targets = [0, 1, 1]
    params = {"n_steps": 16} if name == "integrated_gradients" else {}
    swapped = attribute(get_explainer(name, **params), model, tokenizer, SENTENCES, targets)

    calls = []

    @contextlib.contextmanager
    def unchanged(model):
        calls.append(model)
        yield False

    monkeypatch.setattr(inputs, "final_layer_at_first_token", unchanged)
    # Saliency would read the gradient it just computed from the memo it shares with Input×Gradient: recompute
    from gecobench.explainers.builtin import INPUT_GRADIENTS

    INPUT_GRADIENTS.clear()
    full = attribute(get_explainer(name, **params), model, tokenizer, SENTENCES, targets)
    assert calls, "the explainer's forward did not go through the swap point"
    # float64, and half its digits: LIME's regression and DeepLift's ratios of output differences amplify the
    # outputs' rounding (a few ulps, test above) by the ratio of output scale to score scale; a layer that
    # computed anything else would move the scores at their own scale
    assert max_error_relative_to_largest(swapped, full) <= np.sqrt(np.finfo(np.float64).eps)


def test_parameters_frozen_restores_exactly_what_required_gradients():
    model = make_tiny_bert_classifier()
    fixed = model.bert.embeddings.position_embeddings.weight
    fixed.requires_grad_(False)
    before = {name: p.requires_grad for name, p in model.named_parameters()}
    with parameters_frozen(model):
        assert not any(p.requires_grad for p in model.parameters())
    assert {name: p.requires_grad for name, p in model.named_parameters()} == before
    with pytest.raises(ValueError, match="inside"), parameters_frozen(model):
        raise ValueError("inside")
    assert {name: p.requires_grad for name, p in model.named_parameters()} == before


def test_gradient_explanations_leave_no_parameter_gradient(tokenizer):
    model = make_tiny_bert_classifier()
    attribute(get_explainer("saliency"), model, tokenizer, SENTENCES, [0, 1, 0])
    assert all(p.grad is None for p in model.parameters())
    assert all(p.requires_grad for p in model.parameters())
