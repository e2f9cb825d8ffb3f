"""A BERT classifier's last layer computed for the first token only: the same logits for about 14 % less work.

``BertForSequenceClassification`` reads one vector of its last layer, the first token's (``[CLS]``, through
the pooler). The last layer's keys and values still need every token, but its queries, attention output,
and feed-forward block are needed at the first position only; every other position's output is computed
and thrown away. On the six-layer MiniLM of the zoo that waste is 10/12 of a layer's matrix products, about
14 % of a forward and of a backward pass, and every explainer pays it on every model input.

:func:`final_layer_at_first_token` swaps the model's last ``BertLayer`` for :class:`FirstTokenLayer` while
a call runs. The swap keeps the layer's own submodules (so Captum's module hooks for DeepLift and Guided
Backprop still see them) and calls the attention function the model is configured with, on the mask the model
built; ``last_hidden_state`` then holds the first position only, which is why the swap is limited to calls
that read logits. Other architectures, training mode and configurations outside the plain encoder
(decoder, cross-attention, chunked feed-forward) run unchanged. ``tests/test_first_token.py`` checks logits and
embedding gradients against the unswapped model.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn


def _bert_classes() -> tuple[type, type] | None:
    try:
        from transformers.models.bert.modeling_bert import (
            BertForSequenceClassification,
            BertLayer,
        )
    except ImportError:  # a transformers without BERT: nothing to swap
        return None
    return BertForSequenceClassification, BertLayer


def supports_first_token_final_layer(model: Any) -> bool:
    """Whether :func:`final_layer_at_first_token` can swap this model's last layer (else it runs unchanged)."""
    classes = _bert_classes()
    if classes is None:
        return False
    classifier_class, layer_class = classes
    if type(model) is not classifier_class or getattr(model, "training", True):
        return False
    config = model.config
    encoder = getattr(model.bert, "encoder", None)
    layers = getattr(encoder, "layer", None)
    return bool(
        layers is not None
        and len(layers) > 0
        and type(layers[-1]) in (layer_class, FirstTokenLayer)
        and model.bert.pooler is not None
        and not config.is_decoder
        and not config.add_cross_attention
        and not config.chunk_size_feed_forward
    )


class FirstTokenLayer(nn.Module):
    """A ``BertLayer`` whose output is its first position only: queries and the block after attention at [CLS]."""

    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None, *args: Any, **kwargs: Any) -> torch.Tensor:
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
        from transformers.models.bert.modeling_bert import eager_attention_forward

        attention = self.layer.attention.self
        batch = hidden_states.shape[0]
        first = hidden_states[:, :1]

        def heads(projected: torch.Tensor) -> torch.Tensor:
            return projected.view(batch, projected.shape[1], -1, attention.attention_head_size).transpose(1, 2)

        query = heads(attention.query(first))
        key = heads(attention.key(hidden_states))
        value = heads(attention.value(hidden_states))
        if attention_mask is not None and attention_mask.dim() == 4 and attention_mask.shape[-2] > 1:
            attention_mask = attention_mask[:, :, :1, :]  # the first query's row of a (B, 1, T, T) mask
        interface = ALL_ATTENTION_FUNCTIONS.get_interface(attention.config._attn_implementation, eager_attention_forward)
        context, _ = interface(attention, query, key, value, attention_mask, dropout=0.0, scaling=attention.scaling)
        attended = self.layer.attention.output(context.reshape(batch, 1, -1).contiguous(), first)
        return self.layer.output(self.layer.intermediate(attended), attended)


@contextmanager
def final_layer_at_first_token(model: Any) -> Iterator[bool]:
    """While the block runs, ``model``'s last layer computes its first position only; yields whether it swapped.

    Use it only around calls that read the logits: the hidden states of the last layer lose every other position.
    """
    if not supports_first_token_final_layer(model):
        yield False
        return
    layers = model.bert.encoder.layer
    original = layers[-1]
    if isinstance(original, FirstTokenLayer):  # already swapped by an enclosing call
        yield True
        return
    layers[-1] = FirstTokenLayer(original)
    try:
        yield True
    finally:
        layers[-1] = original
