"""Zero-shot (``ZS``) classifiers: no gradient update, still a model explainers can attribute.

Two methods, chosen by what the base model has:

* ``mlm`` — the base has a masked-LM head. The prompt tokens (e.g. ``this person is [MASK] .``) are inserted
  right after ``[CLS]``, and the class logits are the MLM scores of the label words (``female``, ``male``,
  ``neutral``) at the mask.
* ``cosine`` — an encoder without MLM head. Logits are ``scale * cos(sentence embedding, label embedding)``,
  where a sentence embedding is the attention-masked mean of the last hidden states and each label's
  embedding is that of a short description (``"This sentence is about a woman."``), computed once when the
  classifier is built and stored as a buffer.

Both work from ``inputs_embeds`` (the prompt is inserted in embedding space), so gradient explainers see the
sentence's own tokens. :class:`ZeroShotClassifier` is a ``PreTrainedModel`` (``model_type =
"gecobench_zero_shot"``) registered with the ``Auto*`` classes.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForMaskedLM,
    AutoModelForSequenceClassification,
    PretrainedConfig,
    PreTrainedModel,
)
from transformers.modeling_outputs import SequenceClassifierOutput

LABEL_WORDS: tuple[str, ...] = ("female", "male", "neutral")
LABEL_DESCRIPTIONS: tuple[str, ...] = (
    "This sentence is about a woman.",
    "This sentence is about a man.",
    "This sentence is about a non-binary person.",
)
MLM_PROMPT = "this person is [MASK] ."
COSINE_SCALE = 20.0


class ZeroShotConfig(PretrainedConfig):
    """Configuration of :class:`ZeroShotClassifier`: the method, the base encoder's config and the prompt."""

    model_type = "gecobench_zero_shot"

    def __init__(
        self,
        method: str = "cosine",
        base_config: dict[str, Any] | None = None,
        prompt_token_ids: list[int] | None = None,
        mask_offset: int = 0,
        label_token_ids: list[int] | None = None,
        label_words: list[str] | None = None,
        label_descriptions: list[str] | None = None,
        cosine_scale: float = COSINE_SCALE,
        num_labels: int | None = None,
        **kwargs,
    ) -> None:
        if method not in ("cosine", "mlm"):
            raise ValueError(f"zero-shot method must be 'cosine' or 'mlm', got {method!r}")
        self.method = method
        self.base_config = base_config or {}
        self.prompt_token_ids = list(prompt_token_ids or [])
        self.mask_offset = mask_offset
        self.label_token_ids = list(label_token_ids or [])
        self.label_words = list(label_words or [])
        self.label_descriptions = list(label_descriptions or [])
        self.cosine_scale = cosine_scale
        if num_labels is not None and "id2label" not in kwargs:
            kwargs["num_labels"] = num_labels
        super().__init__(**kwargs)


def _mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Attention-masked mean of token states: (B, L, H), (B, L) -> (B, H)."""
    keep = attention_mask.to(hidden.dtype)[..., None]
    return (hidden * keep).sum(1) / keep.sum(1).clamp(min=1.0)


class ZeroShotClassifier(PreTrainedModel):
    """A frozen encoder read out zero-shot (see the module docstring)."""

    config_class = ZeroShotConfig
    base_model_prefix = "backbone"
    main_input_name = "input_ids"

    def __init__(self, config: ZeroShotConfig) -> None:
        super().__init__(config)
        if not config.base_config:
            raise ValueError("ZeroShotConfig.base_config is empty; build with build_zero_shot()")
        base = AutoConfig.for_model(**config.base_config)
        if config.method == "mlm":
            self.backbone = AutoModelForMaskedLM.from_config(base)
        else:
            self.backbone = AutoModel.from_config(base, add_pooling_layer=False) if base.model_type == "bert" else AutoModel.from_config(base)
        hidden = base.hidden_size
        self.register_buffer("label_embeddings", torch.zeros(config.num_labels, hidden), persistent=True)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        # Weights always come from the base checkpoint or a saved zero-shot folder; nothing to initialise.
        return None

    def get_input_embeddings(self) -> nn.Module:
        return self.backbone.get_input_embeddings()

    def sentence_positions(self, n_tokens: int) -> torch.Tensor:
        """Where a sentence's ``n_tokens`` tokens sit in the sequence the encoder reads: after ``[CLS]`` the
        ``mlm`` method inserts its prompt (``_insert_prompt``); ``cosine`` inserts nothing. Gradient explainers
        attribute at the encoder's embedding block and use this to find the sentence's positions there."""
        if self.config.method != "mlm":
            return torch.arange(n_tokens)
        shift = len(self.config.prompt_token_ids)
        return torch.cat([torch.zeros(1, dtype=torch.long), torch.arange(1 + shift, n_tokens + shift)])[:n_tokens]

    def _insert_prompt(
        self, embeds: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        prompt_ids = torch.tensor(self.config.prompt_token_ids, device=embeds.device)
        prompt = self.get_input_embeddings()(prompt_ids)[None].expand(embeds.shape[0], -1, -1).to(embeds.dtype)
        ones = torch.ones(embeds.shape[0], prompt.shape[1], dtype=attention_mask.dtype, device=embeds.device)
        embeds = torch.cat([embeds[:, :1], prompt, embeds[:, 1:]], dim=1)
        attention_mask = torch.cat([attention_mask[:, :1], ones, attention_mask[:, 1:]], dim=1)
        if token_type_ids is not None:
            token_type_ids = torch.cat([token_type_ids[:, :1], torch.zeros_like(ones), token_type_ids[:, 1:]], dim=1)
        return embeds, attention_mask, token_type_ids

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        **unused,
    ) -> SequenceClassifierOutput:
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("pass exactly one of input_ids and inputs_embeds")
        if inputs_embeds is None:
            inputs_embeds = self.get_input_embeddings()(input_ids)
        if attention_mask is None:
            attention_mask = torch.ones(inputs_embeds.shape[:2], dtype=torch.long, device=inputs_embeds.device)
        # Passed through (it used to be dropped silently): an attention-based explainer needs the encoder's weights.
        want = {"output_attentions": True} if output_attentions else {}
        if self.config.method == "mlm":
            embeds, mask, types = self._insert_prompt(inputs_embeds, attention_mask, token_type_ids)
            out = self.backbone(inputs_embeds=embeds, attention_mask=mask, token_type_ids=types, **want)
            at_mask = out.logits[:, 1 + self.config.mask_offset]
            logits = at_mask[:, torch.tensor(self.config.label_token_ids, device=at_mask.device)]
        else:
            out = self.backbone(
                inputs_embeds=inputs_embeds, attention_mask=attention_mask, token_type_ids=token_type_ids, **want
            )
            sentence = nn.functional.normalize(_mean_pool(out.last_hidden_state, attention_mask), dim=-1)
            labels_unit = nn.functional.normalize(self.label_embeddings, dim=-1)
            logits = self.config.cosine_scale * sentence @ labels_unit.T
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits,
                                        attentions=self._sentence_attentions(out, inputs_embeds.shape[1])
                                        if output_attentions else None)

    def _sentence_attentions(self, out: Any, n_tokens: int) -> tuple[torch.Tensor, ...]:
        """The encoder's attention weights between the input's own positions: one ``(batch, heads, n_tokens,
        n_tokens)`` tensor per layer, as a transformers classifier returns them for its input. The ``mlm`` method's
        prompt positions are left out (:meth:`sentence_positions`), so the weights of a row no longer sum to 1
        there: the rest went to the prompt."""
        attentions = getattr(out, "attentions", None)
        if not attentions:
            raise ValueError("the zero-shot encoder returned no attentions; load it with eager attention "
                             "(gecobench.evaluation.modelling.use_eager_attention)")
        keep = self.sentence_positions(n_tokens).to(attentions[0].device)
        return tuple(a.index_select(-2, keep).index_select(-1, keep) for a in attentions)


def has_mlm_head(base_model: str) -> bool:
    """Whether the base checkpoint carries trained masked-LM head weights (not just a config)."""
    from transformers.utils import logging as hf_logging

    from gecobench.models.base_models import hub_offline

    previous = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the probe's "missing keys" report is expected, not a user warning
    try:
        _, info = AutoModelForMaskedLM.from_pretrained(
            base_model, output_loading_info=True, local_files_only=hub_offline()
        )
    except (ValueError, OSError):
        return False
    finally:
        hf_logging.set_verbosity(previous)
    missing = [k for k in info.get("missing_keys", []) if not k.endswith("decoder.weight")]
    return not missing


def build_zero_shot(base_model: str, tokenizer: Any, num_labels: int, method: str | None = None) -> ZeroShotClassifier:
    """A zero-shot classifier over ``base_model``; ``method`` defaults to ``mlm`` when the base has an MLM head.

    Raises ValueError when ``method="mlm"`` is asked of a base without MLM head, or a label word is not a
    single token of the vocabulary.
    """
    from gecobench.models.base_models import hub_offline, load_base_config

    if num_labels not in (2, 3):
        raise ValueError(f"zero-shot needs 2 or 3 classes (female, male[, non-binary]); got {num_labels}")
    base_config = load_base_config(base_model)
    mlm = has_mlm_head(base_model)
    method = method or ("mlm" if mlm else "cosine")
    if method == "mlm" and not mlm:
        raise ValueError(
            f"zero-shot method 'mlm' needs a base with a masked-LM head; {base_model!r} has none. "
            "Use method='cosine' or a base such as google-bert/bert-base-uncased (local folder offline)."
        )
    config_kwargs: dict[str, Any] = {"method": method, "base_config": base_config.to_dict(), "num_labels": num_labels}
    if method == "mlm":
        prompt_ids = tokenizer(MLM_PROMPT, add_special_tokens=False)["input_ids"]
        if tokenizer.mask_token_id not in prompt_ids:
            raise ValueError(f"the tokenizer of {base_model!r} does not map '[MASK]' to its mask token")
        label_ids = []
        for word in LABEL_WORDS[:num_labels]:
            ids = tokenizer(word, add_special_tokens=False)["input_ids"]
            if len(ids) != 1:
                raise ValueError(f"label word {word!r} is {len(ids)} tokens in {base_model!r}; it must be one")
            label_ids.append(ids[0])
        config_kwargs.update(
            prompt_token_ids=prompt_ids, mask_offset=prompt_ids.index(tokenizer.mask_token_id),
            label_token_ids=label_ids, label_words=list(LABEL_WORDS[:num_labels]),
        )
    else:
        config_kwargs.update(label_descriptions=list(LABEL_DESCRIPTIONS[:num_labels]))
    config = ZeroShotConfig(**config_kwargs)
    model = ZeroShotClassifier(config)
    source_cls = AutoModelForMaskedLM if method == "mlm" else AutoModel
    source = source_cls.from_pretrained(base_model, local_files_only=hub_offline())
    missing, _unexpected = model.backbone.load_state_dict(source.state_dict(), strict=False)
    if [k for k in missing if "pooler" not in k]:
        raise ValueError(f"base {base_model!r} lacks weights the zero-shot backbone needs: {missing[:5]}")
    model.eval()
    if method == "cosine":
        with torch.no_grad():
            enc = tokenizer(list(config.label_descriptions), padding=True, return_tensors="pt")
            hidden = model.backbone(**{k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}).last_hidden_state
            model.label_embeddings.copy_(_mean_pool(hidden, enc["attention_mask"]))
    for param in model.parameters():
        param.requires_grad_(False)
    return model


AutoConfig.register(ZeroShotConfig.model_type, ZeroShotConfig, exist_ok=True)
AutoModelForSequenceClassification.register(ZeroShotConfig, ZeroShotClassifier, exist_ok=True)
