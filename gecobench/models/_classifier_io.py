"""The input and output plumbing the two one-layer attention classifiers (:mod:`gecobench.models.ola`,
:mod:`gecobench.models.residual_ola`) share: ``input_ids`` or ``inputs_embeds`` in, transformers'
``SequenceClassifierOutput`` out."""

from __future__ import annotations

import torch
from torch import nn
from transformers import PretrainedConfig
from transformers.modeling_outputs import SequenceClassifierOutput


def embedded_inputs(
    embeddings: nn.Embedding,
    input_ids: torch.Tensor | None,
    inputs_embeds: torch.Tensor | None,
    attention_mask: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The word embeddings (``inputs_embeds`` as given, else ``embeddings(input_ids)``; exactly one of the two)
    and the attention mask (all ones, ``long``, over the first two dimensions when none is given)."""
    if (input_ids is None) == (inputs_embeds is None):
        raise ValueError("pass exactly one of input_ids and inputs_embeds")
    if inputs_embeds is None:
        inputs_embeds = embeddings(input_ids)
    if attention_mask is None:
        # shape[:2], not an unpacking: the callers check the embeddings' shape with their own messages
        attention_mask = torch.ones(inputs_embeds.shape[:2], dtype=torch.long, device=inputs_embeds.device)
    return inputs_embeds, attention_mask


def classifier_output(
    config: PretrainedConfig,
    logits: torch.Tensor,
    labels: torch.Tensor | None,
    weights: torch.Tensor,
    output_attentions: bool | None,
) -> SequenceClassifierOutput:
    """``logits``, the cross-entropy loss when ``labels`` are given, and the single head's attention ``weights``
    ``(batch, length, length)`` when asked (``output_attentions``, else the config's) in transformers' layout: one
    ``(batch, heads, length, length)`` tensor per layer."""
    loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
    want_attentions = output_attentions if output_attentions is not None else config.output_attentions
    attentions = (weights[:, None],) if want_attentions else None
    return SequenceClassifierOutput(loss=loss, logits=logits, attentions=attentions)
