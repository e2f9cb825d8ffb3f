"""The residual one-layer attention classifier: this package's OLA before 1.0, kept as an extra model.

It is *not* the paper's OLA (that is :mod:`gecobench.models.ola`, the authors' ``VanillaAttentionClassifier``).
Token embeddings (64-dimensional) plus learned position embeddings and a LayerNorm, one single-head
self-attention layer with padding keys masked, an output projection, a residual connection and a second
LayerNorm, a pooler (masked mean over the tokens, then ``tanh(dense)``) and a linear classifier.

Its own ``model_type`` is ``"gecobench_residual_ola"``. Checkpoints written before 1.0 say
``model_type = "gecobench_ola"`` with these fields; :func:`gecobench.models.load_zoo_model` recognises them
(:func:`is_residual_ola_config_dict`) and loads them as this model.
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


class ResidualOLAConfig(PretrainedConfig):
    """Configuration of :class:`ResidualOLAForSequenceClassification`."""

    model_type = "gecobench_residual_ola"

    def __init__(
        self,
        vocab_size: int = 30522,
        hidden_size: int = 64,
        max_position_embeddings: int = 512,
        use_position_embeddings: bool = True,
        dropout: float = 0.1,
        initializer_range: float = 0.02,
        pad_token_id: int = 0,
        num_labels: int | None = None,
        **kwargs,
    ) -> None:
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.use_position_embeddings = use_position_embeddings
        self.dropout = dropout
        self.initializer_range = initializer_range
        if num_labels is not None and "id2label" not in kwargs:
            kwargs["num_labels"] = num_labels
        super().__init__(pad_token_id=pad_token_id, **kwargs)


class ResidualOLAForSequenceClassification(PreTrainedModel):
    """Embeddings -> one masked single-head self-attention layer -> pooler -> classifier."""

    config_class = ResidualOLAConfig
    base_model_prefix = "residual_ola"
    main_input_name = "input_ids"

    def __init__(self, config: ResidualOLAConfig) -> None:
        super().__init__(config)
        h = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, h, padding_idx=config.pad_token_id)
        self.position_embeddings = (
            nn.Embedding(config.max_position_embeddings, h) if config.use_position_embeddings else None
        )
        self.embedding_norm = nn.LayerNorm(h)
        self.query = nn.Linear(h, h)
        self.key = nn.Linear(h, h)
        self.value = nn.Linear(h, h)
        self.attention_output = nn.Linear(h, h)
        self.attention_norm = nn.LayerNorm(h)
        self.dropout = nn.Dropout(config.dropout)
        self.pooler = nn.Linear(h, h)
        self.classifier = nn.Linear(h, config.num_labels)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    def get_input_embeddings(self) -> nn.Embedding:
        return self.word_embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.word_embeddings = value

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,  # accepted for the zoo contract; OLA has no segments
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        return_dict: bool | None = None,
        output_attentions: bool | None = None,
        **unused,
    ) -> SequenceClassifierOutput:
        inputs_embeds, attention_mask = embedded_inputs(self.word_embeddings, input_ids, inputs_embeds, attention_mask)
        batch, length, _ = inputs_embeds.shape
        hidden = inputs_embeds
        if self.position_embeddings is not None:
            if length > self.config.max_position_embeddings:
                raise ValueError(
                    f"sequence of {length} tokens exceeds max_position_embeddings={self.config.max_position_embeddings}"
                )
            positions = torch.arange(length, device=hidden.device)
            hidden = hidden + self.position_embeddings(positions)[None]
        hidden = self.dropout(self.embedding_norm(hidden))

        keep = attention_mask.to(hidden.dtype)  # (B, L), 1 = real token
        scores = self.query(hidden) @ self.key(hidden).transpose(1, 2) / math.sqrt(hidden.shape[-1])
        scores = scores.masked_fill(keep[:, None, :] == 0, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        attended = self.attention_output(self.dropout(weights) @ self.value(hidden))
        hidden = self.attention_norm(hidden + self.dropout(attended))

        pooled = (hidden * keep[..., None]).sum(1) / keep.sum(1, keepdim=True).clamp(min=1.0)
        pooled = torch.tanh(self.pooler(pooled))
        # the attention weights are passed through as computed, not dropped out
        return classifier_output(self.config, self.classifier(self.dropout(pooled)), labels, weights,
                                 output_attentions)


#: Fields only the residual model's config has: a pre-1.0 ``gecobench_ola`` checkpoint is recognised by them.
RESIDUAL_ONLY_FIELDS: tuple[str, ...] = ("use_position_embeddings", "max_position_embeddings")


def is_residual_ola_config_dict(config: dict) -> bool:
    """Whether a ``config.json`` dict is this model's, including a pre-1.0 checkpoint labelled ``gecobench_ola``."""
    model_type = config.get("model_type")
    if model_type == ResidualOLAConfig.model_type:
        return True
    return model_type == "gecobench_ola" and any(f in config for f in RESIDUAL_ONLY_FIELDS)


def build_residual_ola(
    vocab_size: int, num_labels: int, pad_token_id: int = 0, max_length: int = 512
) -> ResidualOLAForSequenceClassification:
    """A freshly initialised residual OLA model for a tokenizer vocabulary (call after seeding)."""
    config = ResidualOLAConfig(
        vocab_size=vocab_size, num_labels=num_labels, pad_token_id=pad_token_id,
        max_position_embeddings=max(max_length, 8),
    )
    return ResidualOLAForSequenceClassification(config)


AutoConfig.register(ResidualOLAConfig.model_type, ResidualOLAConfig, exist_ok=True)
AutoModelForSequenceClassification.register(ResidualOLAConfig, ResidualOLAForSequenceClassification, exist_ok=True)
