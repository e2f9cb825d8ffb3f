"""The training regimes of the zoo and how each one prepares a model.

=========  ============================================================================================
``C``      new classification head (pooler + classifier) trained; everything else frozen
``CE``     word embeddings re-initialised and trained, with the head; attention layers frozen
``CEf``    pretrained word embeddings fine-tuned, with the head; attention layers frozen
``CEfAf``  embeddings and attention layers fine-tuned, with the head (everything trains)
``ZS``     zero-shot, no gradient update (:mod:`gecobench.models.zero_shot`)
``OLA``    the one-layer attention model trained from scratch on GECO (:mod:`gecobench.models.ola`)
=========  ============================================================================================

"Head" is the part a sequence classifier adds on top of the encoder: BERT's pooler dense layer and the
linear classifier. The pooler is trained in every regime because encoders such as MiniLM (trained with mean
pooling) ship an unused or missing pooler.
"""

from __future__ import annotations

from typing import Any

from torch import nn

REGIMES: tuple[str, ...] = ("C", "CE", "CEf", "CEfAf", "ZS", "OLA")
#: Regimes that fine-tune a pretrained base with a new classification head.
BASE_REGIMES: tuple[str, ...] = ("C", "CE", "CEf", "CEfAf")
REGIME_DESCRIPTIONS: dict[str, str] = {
    "C": "new classification head trained, everything else frozen",
    "CE": "word embeddings re-initialised and trained with the head, attention frozen",
    "CEf": "word embeddings fine-tuned with the head, attention frozen",
    "CEfAf": "embeddings and attention fine-tuned with the head",
    "ZS": "zero-shot, no gradient update",
    "OLA": "one-layer attention model trained from scratch on GECO",
}
_HEAD_MARKERS = ("classifier", "pooler", "score")


def check_regime(regime: str) -> str:
    """Return the regime or raise a ValueError listing the known ones."""
    if regime not in REGIMES:
        raise ValueError(f"unknown regime {regime!r}; choose one of {list(REGIMES)}")
    return regime


def head_parameter_names(model: nn.Module) -> list[str]:
    """Names of the classification-head parameters (pooler and classifier)."""
    return [n for n, _ in model.named_parameters() if any(m in n.split(".") for m in _HEAD_MARKERS)]


def load_base_classifier(base_model: str, num_labels: int) -> Any:
    """The base encoder with a fresh sequence-classification head, or a clear ValueError."""
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    from gecobench.models.base_models import _not_found, hub_offline, load_base_config

    config = load_base_config(base_model)
    previous = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "classifier weights newly initialised" is the point of a new head
    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            base_model, num_labels=num_labels, local_files_only=hub_offline()
        )
    except ValueError as err:
        if "Unrecognized configuration class" in str(err):
            raise ValueError(
                f"base model {base_model!r} (model_type={config.model_type!r}) has no sequence-classification "
                "class in transformers; use a BERT-like encoder"
            ) from err
        raise _not_found(base_model, err) from err
    except OSError as err:
        raise _not_found(base_model, err) from err
    finally:
        hf_logging.set_verbosity(previous)
    return model


def apply_regime(model: nn.Module, regime: str) -> nn.Module:
    """Freeze / re-initialise the parts of a base sequence classifier as ``regime`` prescribes (in place).

    Raises ValueError when the model lacks the parts the regime needs (a classification head, input
    embeddings).
    """
    check_regime(regime)
    if regime not in BASE_REGIMES:
        raise ValueError(f"apply_regime handles {BASE_REGIMES}; {regime!r} builds its own model")
    head = set(head_parameter_names(model))
    if not head:
        raise ValueError(
            f"regime {regime} needs a classification head named one of {_HEAD_MARKERS}; the model "
            f"{type(model).__name__} has none"
        )
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    if not isinstance(embeddings, nn.Embedding):
        raise ValueError(  # noqa: TRY004  a missing part of the model, reported like the other ones
            f"regime {regime} needs word embeddings (get_input_embeddings()); {type(model).__name__} has none"
        )
    embedding_params = {id(p) for p in embeddings.parameters()}

    for name, param in model.named_parameters():
        if regime == "CEfAf":
            trainable = True
        elif regime == "C":
            trainable = name in head
        else:  # CE, CEf: word embeddings + head
            trainable = name in head or id(param) in embedding_params
        param.requires_grad_(trainable)

    if regime == "CE":
        std = getattr(getattr(model, "config", None), "initializer_range", 0.02)
        nn.init.normal_(embeddings.weight, mean=0.0, std=std)
        if embeddings.padding_idx is not None:
            embeddings.weight.data[embeddings.padding_idx].zero_()
    return model


def trainable_parameter_count(model: nn.Module) -> tuple[int, int]:
    """``(trainable, total)`` parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return trainable, total
