"""The paper's one-layer attention (OLA) classifier, trained from scratch on GECO.

The architecture of the GECOBench authors' ``VanillaAttentionClassifier`` (braindatalab/gecobench,
``training/simple_model.py``), written anew here:

* a word embedding ``embeddings`` (``nn.Embedding(vocab, 64)``, PyTorch's default N(0, 1) init, no
  ``padding_idx``); **no** position or token-type embeddings, **no** LayerNorm;
* one single-head self-attention layer ``attention`` with ``query``/``key``/``value`` linear layers, scores
  scaled by ``1/sqrt(dim)``, a masked softmax and the attention weights times the values; **no** output
  projection, **no** residual connection, **no** LayerNorm;
* a pooler ``pooler.dense`` + tanh on the first ([CLS]) position of the attention output;
* a linear ``classifier``.

Dropout is 0 by default (the authors' default ``p=0.0``; it would act on the attention weights, as theirs).

**Masking (a departure, configurable).** The authors' ``masked_softmax`` fills the score *rows* of padding
queries (``mask.unsqueeze(2)``), so a real token still attends to padding keys and a sentence's logits depend
on how much padding its batch adds. By default (``attention_masking="keys"``) this model masks padding *keys*
instead: a sentence gives the same output alone or in any batch, which the explainers' batched == single
guarantee needs. ``attention_masking="queries"`` reproduces the authors' masking (fill value -1e6 on the
padding query rows).

It is a ``PreTrainedModel`` with its own config (``model_type = "gecobench_ola"``), registered with the
``Auto*`` classes, so ``save_pretrained`` / ``AutoModelForSequenceClassification.from_pretrained`` work on its
folders. The residual model this package called OLA before 1.0 is
:mod:`gecobench.models.residual_ola`.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    PretrainedConfig,
    PreTrainedModel,
)
from transformers.modeling_outputs import SequenceClassifierOutput

from gecobench.models._classifier_io import classifier_output, embedded_inputs
from gecobench.models.residual_ola import RESIDUAL_ONLY_FIELDS

#: ``attention_masking`` values: mask padding keys (default) or the authors' padding query rows.
ATTENTION_MASKINGS: tuple[str, ...] = ("keys", "queries")
#: The authors' fill value for masked scores (``masked_softmax(mask_value=-1e6)``).
AUTHORS_MASK_VALUE = -1e6


class OLAConfig(PretrainedConfig):
    """Configuration of :class:`OLAForSequenceClassification` (the paper's OLA)."""

    model_type = "gecobench_ola"

    def __init__(
        self,
        vocab_size: int = 30522,
        hidden_size: int = 64,
        dropout: float = 0.0,
        attention_masking: str = "keys",
        pad_token_id: int = 0,
        num_labels: int | None = None,
        **kwargs,
    ) -> None:
        stale = [f for f in RESIDUAL_ONLY_FIELDS if f in kwargs]
        if stale:
            raise ValueError(
                f"this config has {stale}: it is a pre-1.0 GECOBench OLA checkpoint (the residual model with position "
                "embeddings, now gecobench.models.residual_ola), not the paper's OLA; load the folder with "
                "gecobench.models.load_zoo_model, which loads it as ResidualOLAForSequenceClassification, or retrain it"
            )
        if attention_masking not in ATTENTION_MASKINGS:
            raise ValueError(f"attention_masking must be one of {ATTENTION_MASKINGS}, got {attention_masking!r}")
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.dropout = dropout
        self.attention_masking = attention_masking
        if num_labels is not None and "id2label" not in kwargs:
            kwargs["num_labels"] = num_labels
        super().__init__(pad_token_id=pad_token_id, **kwargs)


class OLASelfAttention(nn.Module):
    """Single-head self-attention without output projection: ``softmax(q kᵀ / sqrt(d)) v``."""

    def __init__(self, dim: int, dropout: float, masking: str) -> None:
        super().__init__()
        self.dim = dim
        self.masking = masking
        # created in the authors' order (key, query, value), so that a seed draws the same initial weights
        self.key = nn.Linear(dim, dim)
        self.query = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.query(hidden) @ self.key(hidden).transpose(1, 2) / math.sqrt(self.dim)
        padding = attention_mask == 0  # (B, L), True at padding
        if self.masking == "keys":
            # every query ignores padding keys; the [CLS] key is never padding, so no row is all masked
            scores = scores.masked_fill(padding[:, None, :], torch.finfo(scores.dtype).min)
        else:  # the authors': the rows of padding *queries* get a constant score, real rows see every key
            scores = scores.masked_fill(padding[:, :, None], AUTHORS_MASK_VALUE)
        weights = torch.softmax(scores, dim=-1)
        return self.dropout(weights) @ self.value(hidden), weights


class OLAPooler(nn.Module):
    """``tanh(dense(h[:, 0]))``: the first ([CLS]) position of the attention output."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        # A module, as the authors' AttentionPooler.activation: Captum's DeepLift applies its rescale rule to
        # nonlinearity *modules* only, so a functional tanh would make DeepLift plain gradients on OLA.
        self.activation = nn.Tanh()

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(hidden[:, 0]))


class OLAForSequenceClassification(PreTrainedModel):
    """Word embedding -> one single-head self-attention layer -> [CLS] pooler (dense + tanh) -> classifier."""

    config_class = OLAConfig
    base_model_prefix = "ola"
    main_input_name = "input_ids"

    def __init__(self, config: OLAConfig) -> None:
        super().__init__(config)
        h = config.hidden_size
        self.embeddings = nn.Embedding(config.vocab_size, h)
        self.attention = OLASelfAttention(h, config.dropout, config.attention_masking)
        self.pooler = OLAPooler(h)
        self.classifier = nn.Linear(h, config.num_labels)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        # PyTorch's own defaults, as the authors' plain nn.Module had (Embedding N(0, 1), Linear Kaiming-uniform);
        # transformers' generic init would draw N(0, 0.02) instead.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.reset_parameters()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.embeddings = value

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,  # accepted for the zoo contract; OLA has no segments
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        return_dict: bool | None = None,
        **unused,
    ) -> SequenceClassifierOutput:
        inputs_embeds, attention_mask = embedded_inputs(self.embeddings, input_ids, inputs_embeds, attention_mask)
        if inputs_embeds.dim() != 3 or inputs_embeds.shape[-1] != self.config.hidden_size:
            raise ValueError(
                f"inputs_embeds must have shape (batch, length, {self.config.hidden_size}), got {tuple(inputs_embeds.shape)}"
            )
        batch, length, _ = inputs_embeds.shape
        if attention_mask.shape != (batch, length):  # a default mask has this shape
            raise ValueError(f"attention_mask must have shape {(batch, length)}, got {tuple(attention_mask.shape)}")
        attended, weights = self.attention(inputs_embeds, attention_mask)
        return classifier_output(self.config, self.classifier(self.pooler(attended)), labels, weights,
                                 output_attentions)


def build_ola(
    vocab_size: int, num_labels: int, pad_token_id: int = 0, attention_masking: str = "keys", hidden_size: int = 64
) -> OLAForSequenceClassification:
    """A freshly initialised paper OLA for a tokenizer vocabulary (call after seeding for reproducibility)."""
    config = OLAConfig(vocab_size=vocab_size, num_labels=num_labels, pad_token_id=pad_token_id,
                       attention_masking=attention_masking, hidden_size=hidden_size)
    return OLAForSequenceClassification(config)


AutoConfig.register(OLAConfig.model_type, OLAConfig, exist_ok=True)
AutoModelForSequenceClassification.register(OLAConfig, OLAForSequenceClassification, exist_ok=True)
