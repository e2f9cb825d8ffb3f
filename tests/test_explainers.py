"""Built-in explainers, the registry (including entry-point plug-ins) and the batched attribution engine."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier
from tolerances import (
    max_error_relative_to_largest,
    relative_ulp_tolerance,
    ulp_tolerance,
)
from torch import nn

from gecobench.explainers import base, engine
from gecobench.explainers.base import (
    Explainer,
    TokenAttributions,
    available_explainers,
    get_explainer,
)
from gecobench.explainers.engine import (
    AttributionError,
    attribute,
    attribute_detailed,
    plan_batches,
    validate_word_scores,
)
from gecobench.explainers.inputs import (
    EmbeddingForward,
    encode_batch,
    reference_token_ids,
)
from gecobench.words import fold_token_scores_to_words

BUILTINS = {
    "saliency", "input_x_gradient", "deeplift", "guided_backprop", "integrated_gradients", "gradient_shap",
    "lime", "kernel_shap", "uniform_random", "pattern_variant",
}
# Fast settings for tests: the protocol defaults (IG 200 steps, LIME 100 samples) are checked separately.
FAST_PARAMS = {"integrated_gradients": {"n_steps": 8}, "lime": {"n_samples": 30}, "gradient_shap": {"n_samples": 4, "stdevs": 0.01}}

# Sentences of different token lengths (so batches need padding), a multi-token word, a word with a space.
WORDS = [
    ["the", "doctor", "said", "she", "was", "tired"],
    ["he", "runs"],
    ["a", "remarkably", "long", "sentence", "about", "his", "work", "in", "the", "hospital", "today"],
    ["they", "left", "early"],
    ["Mx. ", "Smith", "is", "here"],
]
TARGETS = [0, 1, 1, 0, 1]


def make(name: str, **overrides):
    explainer = get_explainer(name, **{**FAST_PARAMS.get(name, {}), **overrides})
    if name == "pattern_variant":
        explainer.fit(WORDS + [["she", "slept"], ["he", "ate"]], TARGETS + [0, 1])
    return explainer


# The precision of an explainer's scores on a float64 model: Captum fits LIME's and Kernel SHAP's linear model
# in float32 (its LinearModel and interpretable inputs are float32) and weighs Integrated Gradients' steps with
# float32 step sizes (torch.tensor of Python floats); the other explainers stay float64 throughout.
FLOAT32_PRECISION = {"lime", "kernel_shap", "integrated_gradients"}


def score_dtype(name: str) -> type:
    return np.float32 if name in FLOAT32_PRECISION else np.float64


# Scores of the same computation with other batch shapes, chunks or call orders: the BLAS kernels sum in another
# order, and DeepLift's rescale rule amplifies that (8e-13 of the largest score in float64); the float32 fits
# (FLOAT32_PRECISION) set the bound, a few tens of float32 ulps of the largest score.
REORDERED_TOLERANCE = relative_ulp_tolerance(np.float32)

# Error of each sentence's scores relative to its largest score (see tests/tolerances.py for why not element-wise).
max_relative_error = max_error_relative_to_largest


# ----------------------------------------------------------------------------------------------------- registry


def test_all_ten_builtins_are_registered_with_their_flags():
    names = set(available_explainers())
    assert BUILTINS <= names
    for name in BUILTINS:
        explainer = get_explainer(name)
        assert isinstance(explainer, Explainer) and explainer.name == name
    assert get_explainer("uniform_random").is_baseline and get_explainer("uniform_random").model_independent
    assert get_explainer("pattern_variant").is_baseline and get_explainer("pattern_variant").model_independent
    assert not get_explainer("saliency").is_baseline and not get_explainer("lime").model_independent


def test_protocol_defaults_match_the_paper_and_are_recorded():
    ig = get_explainer("integrated_gradients").protocol()
    # IG: steps chosen per sentence by completeness error; the paper's fixed count is n_steps=200
    assert ig["params"]["n_steps"] is None and ig["params"]["tolerance"] == 0.01 and ig["explainer"] == "integrated_gradients"
    assert get_explainer("integrated_gradients", n_steps=200).params()["n_steps"] == 200
    assert "embedding block" in ig["attribution_point"] and "[CLS]" in ig["reference_input"]
    assert ig["params"]["attribution_point"] == "embedding_block"
    old_point = get_explainer("integrated_gradients", attribution_point="word_embeddings").protocol()
    assert "get_input_embeddings" in old_point["attribution_point"]
    assert ig["hidden_reduction"].startswith("signed sum")
    # the authors' definitions (xai/methods.py) by default, the textbook ones as parameters
    # LIME (4.0.0): samples chosen per sentence by split-half error by default (issue 36), its tolerance and sample
    # range recorded (5.0.0: paired, grown to the projected need; 6.0.0: a first round of 18 samples per word); the
    # old fixed budget is n_samples=100. Kernel SHAP: the authors' fixed 25 by default
    lime = get_explainer("lime").params()
    assert lime["n_samples"] is None and lime["output"] == "probability"
    assert lime["tolerance"] == 0.25 and lime["min_samples"] == 32 and lime["max_samples"] == 1024
    assert lime["min_samples_per_word"] == 18
    assert lime["sampling"] == "paired" and lime["growth"] == "projected"
    assert get_explainer("lime", n_samples=100).params()["n_samples"] == 100
    assert "tolerance" not in get_explainer("lime", n_samples=100).params()
    assert get_explainer("kernel_shap").params()["n_samples"] == 25
    assert "tolerance" not in get_explainer("kernel_shap").params()
    params = get_explainer("kernel_shap", n_samples="adaptive").params()
    assert params["n_samples"] is None and params["tolerance"] == 0.2 and params["output"] == "probability"
    assert params["min_samples"] == 32 and params["max_samples"] == 1024 and "min_samples_per_word" not in params
    assert get_explainer("kernel_shap").params()["output"] == "probability"
    assert get_explainer("partition_shap").params()["output"] == "probability"
    assert get_explainer("deeplift").params()["multiply_by_inputs"] is False
    assert get_explainer("deeplift", multiply_by_inputs="true").params()["multiply_by_inputs"] is True
    assert get_explainer("guided_backprop").params()["abs"] is False
    assert get_explainer("uniform_random").params() == {"per": "token"}
    assert get_explainer("pattern_variant").params() == {"fit_on": "explained", "unit": "word_piece", "label": "integer"}
    assert get_explainer("pattern_variant").fit_split == "explained"
    assert get_explainer("pattern_variant", fit_on="train").fit_split == "train"
    # speed knobs are not protocol parameters
    assert "tokens_per_forward" not in get_explainer("saliency", tokens_per_forward=64).params()


def test_entry_point_plugin_from_an_installed_distribution(tmp_path, monkeypatch):
    (tmp_path / "gecoplug_mod.py").write_text(textwrap.dedent(
        """
        import numpy as np
        from gecobench.explainers.base import Explainer

        class ConstantExplainer(Explainer):
            name = "plugin_constant"

            def explain(self, model, tokenizer, words, targets):
                return [np.full(len(w), 2.0) for w in words]
        """
    ))
    dist = tmp_path / "gecoplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: gecoplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[gecobench.explainers]\nplugin_constant = gecoplug_mod:ConstantExplainer\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(base, "_ENTRY_POINTS_LOADED", False)
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    assert "plugin_constant" in available_explainers()
    scores = attribute(get_explainer("plugin_constant"), None, _WhitespaceTokenizer(), [["a", "b"]], [0])
    assert scores[0].tolist() == [2.0, 2.0]


class _WhitespaceTokenizer:
    """Just enough of a tokenizer for the engine's length planning of model-free explainers."""

    def __call__(self, words, is_split_into_words, truncation, max_length, padding, return_tensors):
        ids = [[0] + list(range(len(w))) + [0] for w in words]
        return _Encoding(ids)


class _Encoding(dict):
    def __init__(self, ids):
        super().__init__(input_ids=ids)
        self._ids = ids

    def word_ids(self, i):
        return [None] + list(range(len(self._ids[i]) - 2)) + [None]


# ------------------------------------------------------------------------------------------ batched == single


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_batched_scores_equal_one_sentence_at_a_time(name, model64, tokenizer):
    batched = attribute(make(name), model64, tokenizer, WORDS, TARGETS, seed=7)
    single = attribute(make(name), model64, tokenizer, WORDS, TARGETS, batch_size=1, seed=7)
    assert [len(s) for s in batched] == [len(w) for w in WORDS]
    assert all(np.isfinite(s).all() and (s >= 0).all() for s in batched)
    if name != "pattern_variant":  # pattern scores may be 0 for words seen equally in both classes
        assert all(s.max() > 0 for s in batched)
    assert max_relative_error(batched, single) < REORDERED_TOLERANCE
    # all sentences in one padded batch, whatever the token budget says
    one_batch = attribute(make(name), model64, tokenizer, WORDS, TARGETS, batch_size=len(WORDS), seed=7)
    assert max_relative_error(one_batch, single) < REORDERED_TOLERANCE


@pytest.mark.parametrize("name", ["saliency", "integrated_gradients", "lime", "kernel_shap", "gradient_shap"])
def test_engine_output_is_in_the_callers_order(name, model64, tokenizer):
    engine = attribute(make(name), model64, tokenizer, WORDS, TARGETS, seed=1)
    direct = []
    for words, target in zip(WORDS, TARGETS):
        explainer = make(name)
        explainer.set_seed(1)
        direct.append(np.asarray(explainer.explain(model64, tokenizer, [words], [target])[0]))
    assert max_relative_error(engine, direct) < REORDERED_TOLERANCE


def test_perturbation_methods_give_the_same_scores_with_one_perturbation_per_forward(model64, tokenizer):
    for name in ("lime", "kernel_shap"):
        many = attribute(make(name), model64, tokenizer, WORDS[:3], TARGETS[:3])
        # Captum's default: every sampled perturbation in its own forward pass, duplicates included
        one = attribute(make(name, perturbations_per_eval=1, deduplicate=False), model64, tokenizer, WORDS[:3], TARGETS[:3])
        assert max_relative_error(many, one) < REORDERED_TOLERANCE, name


def test_kernel_shap_packs_the_coalitions_of_every_sentence_into_shared_model_calls(model64, tokenizer):
    words = WORDS + [["alone"]]  # a one-word sentence has one player: its value is f(sentence) - f([CLS] [SEP])
    targets = TARGETS + [0]
    explainer = make("kernel_shap", n_samples=25)  # one round: a fixed budget (n_samples=adaptive has several)
    calls = []
    handle = model64.register_forward_hook(lambda module, args, out: calls.append(1))
    try:
        packed = explainer.explain(model64, tokenizer, words, targets)
    finally:
        handle.remove()
    assert len(calls) < len(words)  # fewer model calls than sentences: rows of several sentences share one
    captum_loop = make("kernel_shap", n_samples=25, perturbations_per_eval=1, deduplicate=False).explain(
        model64, tokenizer, words, targets)
    assert max_relative_error(packed, captum_loop) < REORDERED_TOLERANCE
    forward = EmbeddingForward(model64, "probability")  # Kernel SHAP explains the target probability (3.0.0)
    batch = encode_batch(tokenizer, [["alone"]], torch.device("cpu"))
    with torch.inference_mode():
        full = forward.from_ids(batch.input_ids, batch.attention_mask)[0, 0]
        empty_ids = batch.input_ids[:, [0, -1]]  # [CLS] [SEP]
        empty = forward.from_ids(empty_ids, torch.ones_like(empty_ids))[0, 0]
    # float64 outputs subtracted: the error is at the scale of the outputs, not of their (smaller) difference
    assert packed[-1][0] == pytest.approx(abs(float(full - empty)), abs=ulp_tolerance(np.float64, max(abs(full), abs(empty))))


def test_kernel_shap_replay_refuses_coalitions_it_did_not_record():
    from gecobench.explainers.builtin import KernelShapExplainer

    recorded = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    outputs = torch.zeros((2, 2), dtype=torch.float64)
    assert KernelShapExplainer._replay(recorded, outputs, recorded.clone()) is outputs
    with pytest.raises(RuntimeError, match="other coalitions than the recorded"):
        KernelShapExplainer._replay(recorded, outputs, recorded.flip(0))


def test_a_removed_word_is_gone_from_the_text_the_model_reads(tokenizer):
    from gecobench.explainers.inputs import words_removed

    words = [["Yesterday", "she", "visited", "her", "grandmother"], ["He", "ran"]]
    batch = encode_batch(tokenizer, words, torch.device("cpu"))
    keep = torch.tensor([[1, 0, 1, 1, 1], [1, 1, 1, 0, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]])
    ids, attention, types = words_removed(batch, 0, keep, tokenizer.pad_token_id)
    for row, kept in enumerate(keep.tolist()):
        shorter = [w for w, k in zip(words[0], kept) if k]
        expected = tokenizer(shorter, is_split_into_words=True)["input_ids"]
        length = int(attention[row].sum())
        assert ids[row, :length].tolist() == expected
        assert set(ids[row, length:].tolist()) <= {tokenizer.pad_token_id}
    assert types is None or int(types.abs().sum()) == 0


def test_a_run_of_masked_words_becomes_one_mask_token(tokenizer):
    from gecobench.explainers.inputs import words_removed

    # "grandmother" is several MiniLM tokens: a masked word leaves one mask, not one per token
    words = [["Yesterday", "she", "visited", "her", "grandmother"]]
    batch = encode_batch(tokenizer, words, torch.device("cpu"))
    keep = torch.tensor([[1, 0, 1, 1, 1], [1, 0, 0, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [1, 1, 1, 1, 0]])
    ids, attention, _ = words_removed(batch, 0, keep, tokenizer.pad_token_id, mask_id=tokenizer.mask_token_id)
    for row, kept in enumerate(keep.tolist()):
        shown = []
        for word, k in zip(words[0], kept):
            if k:
                shown.append(word)
            elif not shown or shown[-1] != tokenizer.mask_token:
                shown.append(tokenizer.mask_token)
        expected = tokenizer(shown, is_split_into_words=True)["input_ids"]
        length = int(attention[row].sum())
        assert ids[row, :length].tolist() == expected, (row, shown)
        assert set(ids[row, length:].tolist()) <= {tokenizer.pad_token_id}
    assert ids[1, :int(attention[1].sum())].tolist().count(tokenizer.mask_token_id) == 2  # two separate runs
    assert ids[2, :int(attention[2].sum())].tolist().count(tokenizer.mask_token_id) == 1  # the whole sentence


def test_without_collapsing_every_token_of_a_masked_word_becomes_a_mask_in_its_place(tokenizer):
    from gecobench.explainers.inputs import words_removed

    words = [["Yesterday", "she", "visited", "her", "grandmother"]]
    batch = encode_batch(tokenizer, words, torch.device("cpu"))
    full = batch.input_ids[0, :batch.lengths[0]].tolist()
    keep = torch.tensor([[1, 0, 1, 1, 1], [1, 0, 0, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]])
    ids, attention, _ = words_removed(batch, 0, keep, tokenizer.pad_token_id, mask_id=tokenizer.mask_token_id,
                                      collapse_masks=False)
    for row, kept in enumerate(keep.tolist()):
        shown = []
        for word, k in zip(words[0], kept):
            shown.extend([word] if k else [tokenizer.mask_token] * len(tokenizer.tokenize(word)))
        expected = tokenizer(shown, is_split_into_words=True)["input_ids"]
        assert int(attention[row].sum()) == len(full)  # the sentence keeps its length: nothing moves
        assert ids[row].tolist() == expected, (row, shown)
        # every kept token stays where it was
        assert all(a == b for a, b, m in zip(ids[row].tolist(), full, expected) if m != tokenizer.mask_token_id)
    assert ids[2].tolist().count(tokenizer.mask_token_id) == len(full) - 2  # all but [CLS] and [SEP]


def test_repeated_perturbations_are_evaluated_once(model64, tokenizer):
    from gecobench.explainers.inputs import EmbeddingForward, outputs_without_words

    forward = EmbeddingForward(model64)
    seen_rows = []
    hook = model64.register_forward_hook(
        lambda module, args, kwargs, out: seen_rows.append(kwargs["input_ids"].shape[0]), with_kwargs=True)
    batch = encode_batch(tokenizer, WORDS[:2], torch.device("cpu"))
    n0, n1 = len(WORDS[0]), len(WORDS[1])
    keep0 = np.ones((6, n0), dtype=np.int64)
    keep0[[1, 3], 0] = 0  # rows 1 and 3 are the same perturbation, rows 0, 2, 4, 5 the sentence itself
    keep1 = np.eye(n1, dtype=np.int64)[[0, 0, 1]]
    deduplicated = outputs_without_words(forward, model64, batch, [(0, keep0), (1, keep1)], tokenizer.pad_token_id)
    assert sum(seen_rows) == 2 + 2
    seen_rows.clear()
    every_row = outputs_without_words(forward, model64, batch, [(0, keep0), (1, keep1)], tokenizer.pad_token_id,
                                      rows_per_forward=1, deduplicate=False)
    assert seen_rows == [1] * 9
    for a, b in zip(deduplicated, every_row):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(deduplicated[0][1], deduplicated[0][3])
    assert not np.allclose(deduplicated[0][0], deduplicated[0][1])
    hook.remove()


def test_chunking_knobs_do_not_change_scores(model64, tokenizer):
    for name in ("integrated_gradients", "gradient_shap", "lime"):
        default = attribute(make(name), model64, tokenizer, WORDS, TARGETS)
        tiny_chunks = attribute(make(name, tokens_per_forward=16), model64, tokenizer, WORDS, TARGETS)
        assert max_relative_error(tiny_chunks, default) < REORDERED_TOLERANCE, name


def test_same_seed_same_scores_other_seed_other_scores(model64, tokenizer):
    for name in ("uniform_random", "gradient_shap", "lime", "kernel_shap"):
        first = attribute(make(name), model64, tokenizer, WORDS[:2], TARGETS[:2], seed=5)
        again = attribute(make(name), model64, tokenizer, WORDS[:2], TARGETS[:2], seed=5)
        other = attribute(make(name), model64, tokenizer, WORDS[:2], TARGETS[:2], seed=6)
        assert all(np.array_equal(a, b) for a, b in zip(first, again)), name
        assert not all(np.allclose(a, b) for a, b in zip(first, other)), name


# -------------------------------------------------------------------------------------------------- protocol


def test_reference_input_keeps_special_tokens_and_pads_words_and_padding(tokenizer):
    batch = encode_batch(tokenizer, [["he", "runs", "fast"], ["she"]], torch.device("cpu"))
    ref = batch.reference_ids
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    assert ref[0].tolist() == [cls, pad, pad, pad, sep]
    assert ref[1].tolist() == [cls, pad, sep, pad, pad]
    assert torch.equal(reference_token_ids(batch.input_ids, batch.attention_mask, tokenizer), ref)


def _at_the_block(model, tokenizer, words, target):
    """By hand: the embedding block's output for a sentence, the gradient of the target logit there, and the
    word-embedding-lookup counterparts (retained from one ordinary forward pass of the model on token ids)."""
    encoding = tokenizer([words], is_split_into_words=True, return_tensors="pt")
    kept = {}

    def keep(name):
        def hook(module, args, output):
            output.retain_grad()
            kept[name] = output
        return hook

    handles = [model.bert.embeddings.register_forward_hook(keep("block")),
               model.bert.embeddings.word_embeddings.register_forward_hook(keep("words"))]
    try:
        logit = model(**encoding).logits[0, target]
        logit.backward()
    finally:
        for handle in handles:
            handle.remove()
        model.zero_grad(set_to_none=True)
    return encoding, kept["block"], kept["words"]


def test_input_x_gradient_is_taken_at_the_embedding_block_output(model64, tokenizer):
    words, target = WORDS[0], 1
    encoding, block, lookup = _at_the_block(model64, tokenizer, words, target)
    by_hand = fold_token_scores_to_words((block * block.grad).sum(-1)[0].detach().numpy(), encoding.word_ids(0), len(words))
    engine = attribute(get_explainer("input_x_gradient"), model64, tokenizer, [words], [target])[0]
    assert max_relative_error([engine], [by_hand]) < 1e3 * relative_ulp_tolerance(np.float64)
    # the pre-2026-12 point, still available as a parameter: the word-embedding lookup's output
    old_by_hand = fold_token_scores_to_words((lookup * lookup.grad).sum(-1)[0].detach().numpy(), encoding.word_ids(0), len(words))
    old = attribute(get_explainer("input_x_gradient", attribution_point="word_embeddings"), model64, tokenizer, [words], [target])[0]
    assert max_relative_error([old], [old_by_hand]) < 1e3 * relative_ulp_tolerance(np.float64)


def test_input_x_gradient_at_the_block_sees_the_word_not_only_its_position(model64, tokenizer):
    """At the word-embedding lookup, before the embedding LayerNorm (which ignores the scale of its input),
    Input x Gradient is -(position + token-type embedding) . gradient: the word's own embedding drops out. At the
    block's output it does not reduce to that, and it changes when a word's embedding changes, positions fixed."""
    words, target = WORDS[0], 1
    encoding, block, lookup = _at_the_block(model64, tokenizer, words, target)
    embeddings = model64.bert.embeddings
    length = encoding["input_ids"].shape[1]
    position_and_type = (embeddings.position_embeddings.weight[:length]
                         + embeddings.token_type_embeddings(encoding["token_type_ids"])[0]).detach()
    at_lookup = (lookup * lookup.grad).sum(-1)[0].detach()
    position_term = -(position_and_type * lookup.grad[0]).sum(-1)
    # rounding at the scale of the summands of the dot products, not of their (cancelling) sum
    scale = float(((lookup.abs() + position_and_type.abs()) * lookup.grad.abs()).sum(-1).max())
    assert float((at_lookup - position_term).abs().max()) < 1e2 * ulp_tolerance(np.float64, scale)
    at_block = (block * block.grad).sum(-1)[0].detach()
    assert np.corrcoef(at_block.numpy(), position_term.numpy())[0, 1] < 0.99
    # change the embedding of the word "she" (positions and every other embedding fixed)
    she = tokenizer.convert_tokens_to_ids("she")
    changed = make_tiny_bert_classifier(seed=0).double()
    changed.load_state_dict(model64.state_dict())
    with torch.no_grad():
        changed.bert.embeddings.word_embeddings.weight[she] += torch.randn(
            changed.config.hidden_size, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    sentence = ["yesterday", "she", "went", "home"]
    before = attribute(get_explainer("input_x_gradient"), model64, tokenizer, [sentence], [1])[0]
    after = attribute(get_explainer("input_x_gradient"), changed, tokenizer, [sentence], [1])[0]
    assert abs(after[1] - before[1]) > 0.05 * max(before[1], after[1])


def test_integrated_gradients_reports_convergence_delta_that_shrinks_with_steps(model64, tokenizer):
    coarse = attribute_detailed(get_explainer("integrated_gradients", n_steps=2), model64, tokenizer, WORDS, TARGETS)
    fine = attribute_detailed(get_explainer("integrated_gradients", n_steps=32), model64, tokenizer, WORDS, TARGETS)
    assert coarse.diagnostics["convergence_delta"].shape == (len(WORDS),)
    assert np.abs(fine.diagnostics["convergence_delta"]).max() <= np.abs(coarse.diagnostics["convergence_delta"]).max()
    assert fine.protocol["params"]["n_steps"] == 32


def test_signed_hidden_sum_of_a_plain_gradient_vanishes_at_layernorm_input_only(model64, tokenizer):
    # Why Saliency takes |gradient| before the hidden sum (as the authors' Saliency does): at the input of a
    # LayerNorm (the word-embedding lookup's output) the signed sum is rounding noise ...
    old_point = {"attribution_point": "word_embeddings"}
    signed = attribute(get_explainer("saliency", abs=False, **old_point), model64, tokenizer, WORDS[:2], TARGETS[:2])
    absolute = attribute(get_explainer("saliency", **old_point), model64, tokenizer, WORDS[:2], TARGETS[:2])
    for s, a in zip(signed, absolute):
        assert s.max() < 1e-9 * a.max()
    # ... at the embedding block's output (after the LayerNorm) it is not
    signed = attribute(get_explainer("saliency", abs=False), model64, tokenizer, WORDS[:2], TARGETS[:2])
    absolute = attribute(get_explainer("saliency"), model64, tokenizer, WORDS[:2], TARGETS[:2])
    for s, a in zip(signed, absolute):
        assert s.max() > 1e-3 * a.max()


def test_guided_backprop_keeps_the_sign_and_differs_from_saliency(tokenizer):
    """Guided Backprop (2.0.0) sums the guided gradient over the hidden dimension with its sign, as the authors do,
    so it is not Saliency (|gradient| summed). It only changes the backward pass of nn.ReLU modules: on a GELU BERT
    it is the signed plain gradient, on a ReLU BERT it is not. ``abs=True`` is the 1.x definition."""
    for act in ("gelu", "relu"):
        model = make_tiny_bert_classifier(seed=2, hidden_act=act).double()
        run = lambda name, m=model, **params: attribute(get_explainer(name, **params), m, tokenizer, WORDS[:3], TARGETS[:3])
        guided, saliency = run("guided_backprop"), run("saliency")
        assert max_relative_error(guided, saliency) > 0.1, act
        signed_gradient = run("saliency", abs=False)
        assert (max_relative_error(guided, signed_gradient) < 1e-9) is (act == "gelu"), act
        textbook = run("guided_backprop", abs=True)
        assert (max_relative_error(textbook, saliency) < 1e-9) is (act == "gelu"), act


def test_guided_backprop_without_relu_modules_shares_saliencys_gradient_with_captums_scores(tokenizer, monkeypatch):
    """Without an nn.ReLU module Guided Backprop takes the gradient Saliency computed (a memo hit, no model call)
    and gives exactly the scores of Captum's GuidedBackprop pass; with one it runs Captum's pass (no hit)."""
    from gecobench.explainers import builtin

    for act in ("gelu", "relu"):
        model = make_tiny_bert_classifier(seed=3, hidden_act=act).eval()
        builtin.INPUT_GRADIENTS.clear()
        attribute(get_explainer("saliency"), model, tokenizer, WORDS, TARGETS)
        hits = builtin.INPUT_GRADIENTS.hits
        shared = attribute(get_explainer("guided_backprop"), model, tokenizer, WORDS, TARGETS)
        assert (builtin.INPUT_GRADIENTS.hits > hits) is (act == "gelu"), act
        with monkeypatch.context() as patch:  # Captum's own pass, whatever the model holds
            patch.setattr(builtin, "has_relu_modules", lambda module: True)
            captum = attribute(get_explainer("guided_backprop"), model, tokenizer, WORDS, TARGETS)
        for a, b in zip(shared, captum):
            np.testing.assert_array_equal(a, b)
    builtin.INPUT_GRADIENTS.clear()


def test_deeplift_gives_multipliers_by_default_and_the_textbook_attribution_as_a_parameter(tokenizer):
    model = make_tiny_bert_classifier(seed=4).double()
    run = lambda name, m=model, **params: attribute(get_explainer(name, **params), m, tokenizer, WORDS[:2], TARGETS[:2])

    def grad_times_delta(m):
        out = []
        for words, target in zip(WORDS[:2], TARGETS[:2]):
            encoding, block, _ = _at_the_block(m, tokenizer, words, target)
            with torch.no_grad():
                ref = reference_token_ids(encoding["input_ids"], encoding["attention_mask"], tokenizer)
                b = m.bert.embeddings(input_ids=ref, token_type_ids=encoding["token_type_ids"])
            out.append(fold_token_scores_to_words(((block - b) * block.grad).sum(-1)[0].detach().numpy(),
                                                  encoding.word_ids(0), len(words)))
        return out

    # multiply_by_inputs=true: the pooler's nn.Tanh is rescaled, so DeepLift differs from gradient x (input - reference)
    # (the tiny random pooler works near tanh's linear range, so the gap is small but far above rounding) ...
    textbook = run("deeplift", multiply_by_inputs=True)
    assert max_relative_error(textbook, grad_times_delta(model)) > 1e-6
    # ... the default (multipliers only, the authors') is another attribution
    assert max_relative_error(run("deeplift"), textbook) > 0.1
    # with the Tanh swapped for an identity nothing is left to rescale (GELU, softmax are functional): the
    # textbook DeepLift is gradient x (input - reference), the multipliers the plain (signed) gradient
    model.bert.pooler.activation = nn.Identity()
    assert max_relative_error(run("deeplift", multiply_by_inputs=True), grad_times_delta(model)) < 1e-8
    assert max_relative_error(run("deeplift"), run("saliency", abs=False)) < 1e-8


def test_deeplift_default_is_not_input_x_gradient_on_a_relu_model(tokenizer):
    # 1.x DeepLift (x (input - reference), at the word embeddings) equalled Input x Gradient on models whose only
    # rescaled nonlinearity is negligible; the multipliers are not Input x Gradient on a ReLU model
    model = make_tiny_bert_classifier(seed=3, hidden_act="relu").double()
    run = lambda name, **params: attribute(get_explainer(name, **params), model, tokenizer, WORDS[:3], TARGETS[:3])
    assert max_relative_error(run("deeplift"), run("input_x_gradient")) > 0.1


class _ProbabilitiesAsLogits(nn.Module):
    """A model whose logits are another model's softmax probabilities: explaining its logit is explaining the
    other's probability."""

    def __init__(self, model):
        super().__init__()
        self.inner = model

    def get_input_embeddings(self):
        return self.inner.get_input_embeddings()

    def forward(self, **kwargs):
        return SimpleNamespace(logits=torch.softmax(self.inner(**kwargs).logits, dim=-1))


@pytest.mark.parametrize("name", ["lime", "kernel_shap", "partition_shap"])
def test_perturbation_methods_explain_the_target_probability(name, model64, tokenizer):
    default = attribute(get_explainer(name), model64, tokenizer, WORDS[:3], TARGETS[:3])
    on_probabilities = attribute(get_explainer(name, output="logit"), _ProbabilitiesAsLogits(model64), tokenizer,
                                 WORDS[:3], TARGETS[:3])
    # the wrapper runs the model unswapped (no first-token last layer): equal up to rounding of the outputs
    assert max_relative_error(default, on_probabilities) < 1e-6
    on_logits = attribute(get_explainer(name, output="logit"), model64, tokenizer, WORDS[:3], TARGETS[:3])
    assert max_relative_error(default, on_logits) > 0.01  # the 1.x-2.x default: another function explained


# ------------------------------------------------------------------------------- a custom (non-HF) model


class BagOfWordsModel(nn.Module):
    """logits = sum of the (2-dim) embeddings of the visible tokens: additive, so exact answers are known."""

    def __init__(self, vocab_size: int, weights: dict[int, tuple[float, float]]):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, 2).double()
        with torch.no_grad():
            self.embedding.weight.zero_()
            for token, value in weights.items():
                self.embedding.weight[token] = torch.tensor(value, dtype=torch.float64)

    def get_input_embeddings(self):
        return self.embedding

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None):
        if inputs_embeds is None:
            inputs_embeds = self.embedding(input_ids)
        return SimpleNamespace(logits=(inputs_embeds * attention_mask[..., None].to(inputs_embeds.dtype)).sum(1))


@pytest.mark.parametrize("name", ["input_x_gradient", "integrated_gradients", "deeplift", "gradient_shap", "kernel_shap", "lime"])
def test_custom_additive_model_gets_the_known_attribution(name, tokenizer):
    she = tokenizer.convert_tokens_to_ids("she")
    model = BagOfWordsModel(tokenizer.vocab_size, {she: (0.0, 3.0)})
    words = [["yesterday", "she", "went", "home"], ["she", "is"]]
    # gradient_shap without input noise: noise would (correctly) credit the noise to every word
    # the additive answer is that of the textbook DeepLift (x (input - reference)) and of the logit
    params = {"gradient_shap": {"stdevs": 0.0, "output": "logit"}, "deeplift": {"multiply_by_inputs": True},
              "integrated_gradients": {"output": "logit"},
              "kernel_shap": {"output": "logit"}, "lime": {"output": "logit"}}.get(name, {})
    scores = attribute(make(name, **params), model, tokenizer, words, [1, 1])
    for sentence, score in zip(words, scores):
        expected = np.array([3.0 if w == "she" else 0.0 for w in sentence])
        if name == "lime" and len(sentence) < 3:
            continue  # LIME's sampling always removes exactly one of two words: collinear, no unique fit
        if name == "lime":  # ridge shrinks the coefficient; the ranking is what LIME guarantees here
            assert int(np.argmax(score)) == sentence.index("she") and score.max() > 1.0
            assert np.delete(score, sentence.index("she")).max() < 0.2 * score.max()
        else:
            # exact up to rounding, in the dtype the explainer computes in, at the scale of the largest score
            np.testing.assert_allclose(score, expected, rtol=0, atol=ulp_tolerance(score_dtype(name), np.abs(expected).max()))


# -------------------------------------------------------------------------------------------------- baselines


TEXTBOOK_PATTERN = {"fit_on": "train", "unit": "word", "label": "one_hot"}


def test_pattern_variant_textbook_is_the_covariance_of_tfidf_with_the_one_hot_label():
    from sklearn.feature_extraction.text import TfidfVectorizer

    train = [["She", "sings"], ["he", "sings", "loud"], ["they", "sing"], ["she", "runs"], ["he", "runs"]]
    labels = [0, 1, 2, 0, 1]
    explainer = get_explainer("pattern_variant", **TEXTBOOK_PATTERN)
    with pytest.raises(RuntimeError, match="fit"):
        explainer.explain(None, None, [["she"]], [0])
    explainer.fit(train, labels)
    vectorizer = TfidfVectorizer(analyzer=lambda s: [w.lower() for w in s])
    features = vectorizer.fit_transform(train).toarray()
    for target in range(3):
        indicator = (np.array(labels) == target).astype(float)
        expected = {w: abs(np.cov(features[:, j], indicator)[0, 1]) for w, j in vectorizer.vocabulary_.items()}
        scores = explainer.explain(None, None, [["SHE", "sings", "unknownword"]], [target])[0]
        wanted = [expected["she"], expected["sings"], 0.0]
        # float64 covariances of tf-idf values (at most 1): rounding at the scale of the features, not of the covariance
        np.testing.assert_allclose(scores, wanted, rtol=0, atol=ulp_tolerance(np.float64, 1.0))
    with pytest.raises(ValueError, match="target 3"):
        explainer.explain(None, None, [["she"]], [3])


def test_pattern_variant_is_the_covariance_of_word_piece_tfidf_with_the_integer_label(tokenizer):
    """The authors' definition: tf-idf of the word pieces (special tokens left out), covariance with the integer
    label, |pattern| per piece summed per word; the same pattern whatever the target."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    sentences = [["She", "sings"], ["he", "sings", "loudly"], ["they", "sing"], ["she", "runs"], ["he", "grandmothers"]]
    labels = [0, 1, 2, 0, 1]
    explainer = get_explainer("pattern_variant")
    explainer.fit(sentences, labels)
    pieces = [tokenizer.tokenize(" ".join(s)) for s in sentences]
    vectorizer = TfidfVectorizer(analyzer=lambda p: p)
    features = vectorizer.fit_transform(pieces).toarray()
    cov = {p: np.cov(features[:, j], np.array(labels, dtype=float))[0, 1] for p, j in vectorizer.vocabulary_.items()}
    sentence = ["SHE", "grandmothers", "unknownword"]
    word_pieces = [tokenizer.tokenize(w) for w in sentence]
    assert len(word_pieces[1]) > 1  # a word of several pieces: its score is the sum over its pieces
    wanted = [sum(abs(cov.get(p, 0.0)) for p in w) for w in word_pieces]
    for target in range(3):
        scores = explainer.explain(None, tokenizer, [sentence], [target])[0]
        np.testing.assert_allclose(scores, wanted, rtol=0, atol=ulp_tolerance(np.float64, 1.0))
    assert wanted[1] > 0 and wanted[0] > 0


def test_pattern_variant_is_fitted_on_the_split_being_explained():
    from gecobench.explainers.base import fit_explainers

    explained = [SimpleNamespace(words=["she", "sings"], label=0), SimpleNamespace(words=["he", "sings"], label=1)]
    train = [SimpleNamespace(words=["she", "runs"], label=0), SimpleNamespace(words=["he", "runs"], label=1)]
    reads = []

    def reader(name, rows):
        return lambda: reads.append(name) or rows

    paper, textbook = get_explainer("pattern_variant"), get_explainer("pattern_variant", **TEXTBOOK_PATTERN)
    fit_explainers([paper, textbook, get_explainer("saliency")], explained=reader("explained", explained),
                   train=reader("train", train))
    assert sorted(reads) == ["explained", "train"]  # each split read once, only for the explainer that asks for it
    assert paper._fitted[0] == [r.words for r in explained] and textbook._fitted[0] == [r.words for r in train]


def test_fit_explainers_passes_a_raising_fit_to_on_error_and_fits_the_others():
    from gecobench.explainers.base import Explainer, fit_explainers

    class RaisesInFit(Explainer):
        name = "raises_in_fit_unit"

        def fit(self, words, labels):
            raise RuntimeError("no")

        def explain(self, model, tokenizer, words, targets):
            return [[0.0] * len(w) for w in words]

    rows = [SimpleNamespace(words=["she", "sings"], label=0), SimpleNamespace(words=["he", "sings"], label=1)]
    raising, pattern = RaisesInFit(), get_explainer("pattern_variant")
    with pytest.raises(RuntimeError, match="no"):  # without on_error: as before, the first error propagates
        fit_explainers([raising, pattern], explained=lambda: rows, train=lambda: rows)
    seen = []
    fit_explainers([raising, pattern], explained=lambda: rows, train=lambda: rows,
                   on_error=lambda explainer, err: seen.append((explainer, str(err))))
    assert seen == [(raising, "no")]
    assert pattern._fitted[0] == [r.words for r in rows], "the explainer after the raising one is still fitted"

    def unreadable():
        raise OSError("split missing")

    with pytest.raises(OSError, match="split missing"):  # reading the data is the run's error, never the explainer's
        fit_explainers([raising], explained=unreadable, train=unreadable, on_error=lambda explainer, err: None)


def test_pattern_variant_binary_scores_do_not_depend_on_the_target_class(tokenizer):
    for params in ({}, TEXTBOOK_PATTERN):
        explainer = get_explainer("pattern_variant", **params)
        explainer.fit([["she", "a"], ["he", "a"], ["she", "b"]], [0, 1, 0])
        zero, one = (explainer.explain(None, tokenizer, [["she", "b", "he"]], [t])[0] for t in (0, 1))
        np.testing.assert_allclose(zero, one)
        assert zero[0] > 0


def test_uniform_random_word_scores_lie_in_unit_interval_per_word(tokenizer):
    scores = get_explainer("uniform_random", per="word").explain(None, tokenizer, [["a"] * 50], [0])[0]
    assert scores.shape == (50,) and scores.min() >= 0 and scores.max() < 1 and scores.std() > 0.1


def test_uniform_random_draws_per_token_and_sums_per_word(tokenizer):
    """A word of k tokens scores the sum of k U(0, 1) draws (mean k/2, variance k/12); one stream per sentence."""
    from scipy import stats

    word = "grandmothers"
    k = len(tokenizer.tokenize(word))
    assert k > 1
    explainer = get_explainer("uniform_random")
    sentences = [["she", word, f"w{i}"] for i in range(600)]  # distinct sentences: independent streams
    scores = np.array([s for s in attribute(explainer, None, tokenizer, sentences, [0] * len(sentences))])
    one_token, k_tokens = scores[:, 0], scores[:, 1]
    assert one_token.max() < 1 and k_tokens.max() < k and k_tokens.max() > 1
    # the sum of k uniforms (Irwin-Hall) against the one-token word's U(0, 1): a KS test of each
    irwin_hall = stats.rv_histogram(np.histogram(np.random.default_rng(0).uniform(size=(200_000, k)).sum(1), bins=400))
    assert stats.kstest(k_tokens, irwin_hall.cdf).pvalue > 1e-3
    assert stats.kstest(one_token, "uniform").pvalue > 1e-3
    # reproducible per sentence, whatever the batch
    alone = attribute(explainer, None, tokenizer, sentences[5:6], [0])[0]
    np.testing.assert_array_equal(alone, scores[5])


# ------------------------------------------------------------------------------------------ engine checks


class _BrokenExplainer(Explainer):
    name = "broken_for_test"

    def __init__(self, bad_sentence: int, kind: str):
        super().__init__()
        self.bad_sentence, self.kind = bad_sentence, kind

    def explain(self, model, tokenizer, words, targets):
        out = []
        for sentence in words:
            scores = np.ones(len(sentence))
            if sentence[0] == f"w{self.bad_sentence}":
                if self.kind == "nan":
                    scores[-1] = np.nan
                elif self.kind == "inf":
                    scores[0] = np.inf
                else:
                    scores = np.ones(len(sentence) + 1)
            out.append(scores)
        return out


@pytest.mark.parametrize("kind, message", [("nan", "NaN"), ("inf", "infinite"), ("shape", "expected 3 word scores")])
def test_bad_explainer_output_names_explainer_and_sentence(kind, message, tokenizer):
    words = [[f"w{i}", "x", "y"] for i in range(5)]
    with pytest.raises(AttributionError, match=rf"'broken_for_test', sentence 3: {message}"):
        attribute(_BrokenExplainer(3, kind), None, tokenizer, words, [0] * 5, batch_size=2)


def test_validate_word_scores_folds_token_attributions_and_checks_counts():
    out = validate_word_scores("x", [TokenAttributions(np.array([1.0, -2.0, 3.0, 5.0]), [None, 0, 0, None])], [["a"]])
    assert out[0].tolist() == [5.0]
    with pytest.raises(AttributionError, match="returned 1 results for a batch of 2"):
        validate_word_scores("x", [np.ones(1)], [["a"], ["b"]])
    assert isinstance(AttributionError("x"), ValueError)


def test_engine_rejects_bad_inputs_naming_the_row(tokenizer):
    explainer = get_explainer("uniform_random")
    with pytest.raises(ValueError, match="2 sentences but 1 targets"):
        attribute(explainer, None, tokenizer, [["a"], ["b"]], [0])
    with pytest.raises(ValueError, match="sentence 1"):
        attribute(explainer, None, tokenizer, [["a"], []], [0, 0])
    with pytest.raises(ValueError, match="target 0"):
        attribute(explainer, None, tokenizer, [["a"]], [-1])


def test_plan_batches_sorts_by_length_respects_budget_and_covers_everything():
    lengths = [5, 30, 7, 12, 6, 30, 9]
    for padded in (True, False):
        batches = plan_batches(lengths, None, tokens_per_batch=40, padded=padded)
        flat = [i for batch in batches for i in batch]
        assert sorted(flat) == list(range(len(lengths)))
        assert [lengths[i] for i in flat] == sorted(lengths)
        assert all(len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 40 for b in batches)
    assert [len(b) for b in plan_batches(lengths, 3, 40)] == [3, 3, 1]
    assert plan_batches([], None, 40) == plan_batches([], None, 40, padded=False) == []


def padded_positions(lengths, batches):
    return sum(len(b) * max(lengths[i] for i in b) for b in batches)


def test_padded_batches_trade_padding_against_a_cost_per_batch():
    # 32 sentences of the reference MiniLM's test split (token lengths): filling each batch while the budget
    # allows put 30 sentences of 19-34 tokens into one batch padded to 34
    lengths = [19, 19, 19, 20, 20, 20, 20, 20, 21, 21, 21, 22, 22, 22, 23, 24, 24, 25, 26, 26, 28, 28, 28, 29, 29,
               29, 30, 30, 30, 34, 34, 36]
    filled = plan_batches(lengths, None, 1024, padded=False)
    planned = plan_batches(lengths, None, 1024)
    assert [len(b) for b in filled] == [30, 2]
    cost = lambda batches: padded_positions(lengths, batches) + engine.BATCH_COST_TOKENS * len(batches)
    assert cost(planned) < cost(filled)
    assert padded_positions(lengths, planned) < padded_positions(lengths, filled)
    # the cost per batch follows the budget: a budget cut per model input (IG's steps) cuts the cost with it,
    # so a sentence that expands into many inputs is not padded to save a call that costs little
    assert padded_positions(lengths, plan_batches(lengths, None, 64)) <= padded_positions(lengths, filled)
    # one sentence per batch where the budget holds nothing more
    assert plan_batches([50, 60], None, 40) == [[0], [1]]


def spy_on_batch_plans(monkeypatch) -> list[dict]:
    """The engine's calls of ``plan_batches`` from now on (their budget and ``padded``), plans unchanged."""
    calls, original = [], engine.plan_batches

    def spy(lengths, batch_size, tokens_per_batch, padded=True):
        calls.append({"tokens_per_batch": tokens_per_batch, "padded": padded})
        return original(lengths, batch_size, tokens_per_batch, padded)

    monkeypatch.setattr(engine, "plan_batches", spy)
    return calls


def test_the_engine_pads_batches_only_for_explainers_that_run_them_padded(monkeypatch, model64, tokenizer):
    calls = spy_on_batch_plans(monkeypatch)
    for spec in (("saliency", {}), ("lime", {"n_samples": 8}), ("lime", {"n_samples": 8, "perturbations_per_eval": 4}),
                 ("integrated_gradients", {}), ("integrated_gradients", {"n_steps": 4})):
        attribute(get_explainer(spec[0], **spec[1]), model64, tokenizer, WORDS, TARGETS)
    # Saliency and fixed-step IG run the padded batch; LIME and adaptive IG pack their own rows by length,
    # LIME with Captum's rows per pass does not
    assert [call["padded"] for call in calls] == [True, False, True, False, True]


def test_rows_are_packed_into_passes_by_length():
    from gecobench.explainers.inputs import pack_by_length

    lengths = [5, 12, 5, 7, 12, 30, 7, 5]
    for call_cost in (0, 48, 10_000):
        passes = pack_by_length(lengths, tokens_per_forward=40, call_cost_tokens=call_cost)
        assert sorted(int(i) for p in passes for i in p) == list(range(len(lengths)))
        # within the budget, except a row longer than the budget on its own
        assert all(len(p) * max(lengths[i] for i in p) <= 40 or len(p) == 1 for p in passes)
    free_calls = pack_by_length(lengths, 40, call_cost_tokens=0)
    assert all(len({lengths[i] for i in p}) == 1 for p in free_calls)  # no padding at all
    costly_calls = pack_by_length(lengths, 40, call_cost_tokens=10_000)
    # fewest passes the budget allows: 5,5,5,7,7 (5 x 7 = 35) | 12,12 | 30
    assert [sorted(lengths[i] for i in p) for p in costly_calls] == [[5, 5, 5, 7, 7], [12, 12], [30]]


# ------------------------------------------------------------------------------------------ parameters


def test_a_misspelt_parameter_is_refused_naming_the_known_ones():
    from gecobench.evaluation.runner import spec_checkpoint_key

    with pytest.raises(ValueError, match=r"'integrated_gradients': unknown parameter 'nsteps'; known: .*\bn_steps\b"):
        get_explainer("integrated_gradients", nsteps=8)
    with pytest.raises(ValueError, match=r"unknown parameter 'multiply_by_input'; known: .*multiply_by_inputs"):
        spec_checkpoint_key("deeplift:multiply_by_input=true")  # the command line's name:key=value specs
    with pytest.raises(ValueError, match="unknown parameters 'a', 'b'; known: .*per"):
        get_explainer("uniform_random", a=1, b=2)
    # speed knobs and every documented variant are known
    assert get_explainer("lime", output="logit", perturbations_per_eval=4).params()["output"] == "logit"
    assert get_explainer("saliency", tokens_per_forward=64, attribution_point="word_embeddings")


def test_an_explainer_that_declares_no_parameters_of_its_own_takes_any(monkeypatch):
    class Open(Explainer):
        name = "open_for_test"

        def explain(self, model, tokenizer, words, targets):
            return [np.ones(len(w)) for w in words]

    class Closed(Explainer):
        name = "closed_for_test"

        def __init__(self, width: int = 1):
            super().__init__(width=width)

        def explain(self, model, tokenizer, words, targets):
            return [np.ones(len(w)) for w in words]

    monkeypatch.setitem(base._REGISTRY, Open.name, Open)
    monkeypatch.setitem(base._REGISTRY, Closed.name, Closed)
    assert get_explainer("open_for_test", anything=3).params() == {"anything": 3}
    assert get_explainer("closed_for_test", width=2).params() == {"width": 2}
    with pytest.raises(ValueError, match="unknown parameter 'widht'; known: width"):
        get_explainer("closed_for_test", widht=2)


def test_the_token_budget_follows_the_model_size_and_a_given_budget_stays(model64, tokenizer, monkeypatch):
    """A model with fewer multiply-adds per token than the reference MiniLM gets proportionally more positions per
    pass (capped); a model of the reference's size, or without ``nn.Linear`` layers, keeps the default; a budget
    given to the constructor is never scaled; the scaled budget holds during the call only."""
    from torch import nn

    from gecobench.explainers.builtin import DEFAULT_TOKENS_PER_FORWARD
    from gecobench.explainers.inputs import BUDGET_REFERENCE_LINEAR_MACS, MAX_BUDGET_SCALE, token_budget_scale

    macs = sum(m.in_features * m.out_features for m in model64.modules() if isinstance(m, nn.Linear))
    assert token_budget_scale(model64) == min(MAX_BUDGET_SCALE, BUDGET_REFERENCE_LINEAR_MACS // macs) > 1
    assert token_budget_scale(nn.Linear(4000, 4000)) == 1  # more multiply-adds than the reference: never below 1
    assert token_budget_scale(nn.Linear(64, 2)) == MAX_BUDGET_SCALE
    assert token_budget_scale(nn.Embedding(10, 4)) == token_budget_scale(object()) == 1

    calls = spy_on_batch_plans(monkeypatch)
    scaled, fixed = make("saliency"), make("saliency", tokens_per_forward=DEFAULT_TOKENS_PER_FORWARD)
    by_default = attribute(scaled, model64, tokenizer, WORDS, TARGETS)
    given = attribute(fixed, model64, tokenizer, WORDS, TARGETS)
    assert [call["tokens_per_batch"] for call in calls] == [DEFAULT_TOKENS_PER_FORWARD * token_budget_scale(model64),
                                                            DEFAULT_TOKENS_PER_FORWARD]
    assert scaled.tokens_per_forward == fixed.tokens_per_forward == DEFAULT_TOKENS_PER_FORWARD  # restored
    assert max_relative_error(by_default, given) < REORDERED_TOLERANCE
