"""Where gradient explainers attribute: the output of a model's embedding block (after the word, position and
token-type embeddings and the embedding LayerNorm), found generically: a BERT classifier's, a zero-shot wrapper's
encoder's (with the sentence's positions found after an inserted prompt), and the word embeddings of a model
without a block (the one-layer attention model)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier
from tolerances import max_error_relative_to_largest as max_relative_error
from tolerances import relative_ulp_tolerance

from gecobench.explainers import get_explainer
from gecobench.explainers.engine import attribute
from gecobench.explainers.inputs import EmbeddingForward, embedding_block
from gecobench.models.ola import build_ola
from gecobench.models.zero_shot import build_zero_shot
from gecobench.words import fold_token_scores_to_words

WORDS = [["He", "left", "early", "."], ["She", "stayed", "home", "with", "her", "grandmothers", "."], ["They", "ran"]]
TARGETS = [1, 0, 1]


@pytest.fixture(scope="module")
def zero_shot_models(tmp_path_factory, bert_tokenizer) -> dict:
    """Tiny zero-shot classifiers of both methods, in float64: ``cosine`` (encoder) and ``mlm`` (prompt inserted)."""
    from transformers import BertConfig, BertForMaskedLM

    base = tmp_path_factory.mktemp("tiny_base")
    make_tiny_bert_classifier(seed=0).bert.save_pretrained(base)
    bert_tokenizer.save_pretrained(base)
    torch.manual_seed(0)
    mlm_base = tmp_path_factory.mktemp("tiny_mlm")
    BertForMaskedLM(BertConfig(vocab_size=bert_tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                               num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
                    ).save_pretrained(mlm_base)
    bert_tokenizer.save_pretrained(mlm_base)
    models = {"cosine": build_zero_shot(str(base), bert_tokenizer, num_labels=2),
              "mlm": build_zero_shot(str(mlm_base), bert_tokenizer, num_labels=2)}
    return {method: model.double().eval() for method, model in models.items()}


def input_x_gradient_by_hand(model, block, tokenizer, words, target, positions=None):
    """Input x Gradient at ``block``'s output, retained from one ordinary forward pass on token ids."""
    encoding = tokenizer([words], is_split_into_words=True, return_tensors="pt")
    kept = {}

    def keep(module, args, output):
        # a leaf in the output's place: its gradient is the gradient at the block's output (the zero-shot model's
        # parameters are frozen, so the block's own output carries no autograd history)
        kept["out"] = output.detach().requires_grad_(True)
        return kept["out"]

    handle = block.register_forward_hook(keep)
    try:
        model(**encoding).logits[0, target].backward()
    finally:
        handle.remove()
        model.zero_grad(set_to_none=True)
    out = kept["out"]
    per_token = (out * out.grad).sum(-1)[0].detach()
    if positions is not None:
        per_token = per_token[positions]
    return fold_token_scores_to_words(per_token.numpy(), encoding.word_ids(0), len(words))


@pytest.mark.parametrize("method", ["cosine", "mlm"])
def test_a_zero_shot_model_is_explained_at_its_encoders_embedding_block(method, zero_shot_models, bert_tokenizer):
    model = zero_shot_models[method]
    encoder = model.backbone if method == "cosine" else model.backbone.bert
    assert embedding_block(model) is encoder.embeddings
    prompt = len(model.config.prompt_token_ids)
    assert (prompt > 0) is (method == "mlm")  # the mlm method inserts its prompt after [CLS]
    engine = attribute(get_explainer("input_x_gradient"), model, bert_tokenizer, WORDS, TARGETS)
    for words, target, scores in zip(WORDS, TARGETS, engine):
        n_tokens = len(bert_tokenizer(words, is_split_into_words=True)["input_ids"])
        positions = model.sentence_positions(n_tokens)
        assert positions.tolist() == [0, *range(1 + prompt, n_tokens + prompt)]
        by_hand = input_x_gradient_by_hand(model, encoder.embeddings, bert_tokenizer, words, target, positions)
        assert max_relative_error([scores], [by_hand]) < 1e3 * relative_ulp_tolerance(np.float64), method
    # batched (padding after the sentence, the prompt inside it) equals one sentence at a time
    for name in ("saliency", "integrated_gradients", "deeplift"):
        explainer = get_explainer(name, **({"n_steps": 8} if name == "integrated_gradients" else {}))
        batched = attribute(explainer, model, bert_tokenizer, WORDS, TARGETS)
        alone = attribute(explainer, model, bert_tokenizer, WORDS, TARGETS, batch_size=1)
        assert max_relative_error(batched, alone) < 1e-9, (method, name)


def test_the_embedding_block_output_is_what_the_model_computes_and_substituting_it_changes_nothing(
        zero_shot_models, bert_tokenizer):
    for model in (*zero_shot_models.values(), make_tiny_bert_classifier(seed=1).double()):
        forward = EmbeddingForward(model)
        assert forward.substitutes_block
        encoding = bert_tokenizer(WORDS, is_split_into_words=True, padding=True, return_tensors="pt")
        kwargs = {k: encoding[k] for k in ("attention_mask", "token_type_ids")}
        with torch.no_grad():
            through_block = forward(forward.embed(encoding["input_ids"], **kwargs), **kwargs)
            plain = forward.from_ids(encoding["input_ids"], **kwargs)
        assert max_relative_error(list(through_block.numpy()), list(plain.numpy())) < 1e3 * relative_ulp_tolerance(np.float64)


def test_a_model_without_an_embedding_block_is_explained_at_its_word_embeddings(bert_tokenizer):
    torch.manual_seed(0)
    model = build_ola(bert_tokenizer.vocab_size, num_labels=2).double().eval()
    assert embedding_block(model) is model.get_input_embeddings()
    assert not EmbeddingForward(model).substitutes_block
    engine = attribute(get_explainer("input_x_gradient"), model, bert_tokenizer, WORDS, TARGETS)
    for words, target, scores in zip(WORDS, TARGETS, engine):
        by_hand = input_x_gradient_by_hand(model, model.get_input_embeddings(), bert_tokenizer, words, target)
        assert max_relative_error([scores], [by_hand]) < 1e3 * relative_ulp_tolerance(np.float64)


def test_deeplift_applies_its_rescale_rule_to_the_paper_olas_tanh(bert_tokenizer):
    """The pooler's tanh is a module, as in the authors' model: DeepLift's rescale rule then differs from the
    plain gradient Guided Backprop takes on OLA (no ReLU), where a functional tanh made the two equal."""
    torch.manual_seed(0)
    model = build_ola(bert_tokenizer.vocab_size, num_labels=2).double().eval()
    assert isinstance(model.pooler.activation, torch.nn.Tanh)
    deeplift = attribute(get_explainer("deeplift"), model, bert_tokenizer, WORDS, TARGETS)
    guided = attribute(get_explainer("guided_backprop"), model, bert_tokenizer, WORDS, TARGETS)
    assert max_relative_error(deeplift, guided) > 1e6 * relative_ulp_tolerance(np.float64)


def test_an_unknown_attribution_point_is_refused():
    with pytest.raises(ValueError, match="attribution_point must be one of embedding_block, word_embeddings"):
        get_explainer("saliency", attribution_point="pooler")
