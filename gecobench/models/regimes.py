"""The training regimes of the zoo and how each one prepares a model, as the GECOBench authors define them.

=========  ============================================================================================
``C``      a new linear classifier trained; everything else (embeddings, encoder, pooler) frozen
``CE``     every embedding (word, position, token type) re-initialised xavier-uniform; the embedding block
           (those three and its LayerNorm) and the classifier trained; encoder layers and pooler frozen
``CEf``    the pretrained embedding block fine-tuned with the classifier; encoder layers and pooler frozen
``CEfAf``  everything trains: embeddings, encoder layers, pooler, classifier
``ZS``     zero-shot, no gradient update (:mod:`gecobench.models.zero_shot`)
``OLA``    the one-layer attention model trained from scratch on GECO (:mod:`gecobench.models.ola`)
=========  ============================================================================================

Source: the authors' ``training/bert.py`` (``train_model``: a parameter trains when its name starts with one of
the config's ``layers_to_train``, or always when that list is empty; ``initialize_embedding`` re-initialises
every ``nn.Embedding`` with ``xavier_uniform_`` for ``bert_randomly_init_embedding_classification``) and the
``bert_*`` entries of ``configs/gender_no_sub_samp_project_config.json``:

* C = ``bert_only_classification``, ``layers_to_train = ["classifier"]``: the pretrained pooler stays frozen.
* CE = ``bert_randomly_init_embedding_classification``, ``["bert.embeddings", "classifier"]`` + re-init.
* CEf = ``bert_only_embedding_classification``, ``["bert.embeddings", "classification"]``. ``"classification"``
  matches no parameter, so in their code the classifier of CEf stays at its random init; the paper says CEf
  trains the classification layer, and we follow the paper (a slip not reproduced).
* CEfAf = ``bert_all``, ``[]``: everything.

"Embedding block" is the base model's ``embeddings`` module (``model.base_model.embeddings`` in transformers);
"classifier" the linear layer a sequence classifier puts on the pooled output (``classifier`` or ``score``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

REGIMES: tuple[str, ...] = ("C", "CE", "CEf", "CEfAf", "ZS", "OLA")
#: Regimes that fine-tune a pretrained base with a new classification head.
BASE_REGIMES: tuple[str, ...] = ("C", "CE", "CEf", "CEfAf")
REGIME_DESCRIPTIONS: dict[str, str] = {
    "C": "new classifier trained, everything else (pooler included) frozen",
    "CE": "all embeddings re-initialised (xavier-uniform), embedding block and classifier trained, encoder and pooler frozen",
    "CEf": "embedding block fine-tuned with the classifier, encoder and pooler frozen",
    "CEfAf": "everything fine-tuned (embeddings, encoder, pooler, classifier)",
    "ZS": "zero-shot, no gradient update",
    "OLA": "one-layer attention model trained from scratch on GECO",
}
_HEAD_MARKERS = ("classifier", "pooler", "score")
#: The linear classifier's names (transformers: ``classifier``; some decoder classifiers: ``score``).
_CLASSIFIER_MARKERS = ("classifier", "score")


def check_regime(regime: str) -> str:
    """Return the regime or raise a ValueError listing the known ones."""
    if regime not in REGIMES:
        raise ValueError(f"unknown regime {regime!r}; choose one of {list(REGIMES)}")
    return regime


def head_parameter_names(model: nn.Module) -> list[str]:
    """Names of the classification-head parameters (pooler and classifier): what ``head_lr`` applies to where they train."""
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


def classifier_parameter_names(model: nn.Module) -> list[str]:
    """Names of the parameters of the linear classifier on top of the pooled output (not the pooler)."""
    return [n for n, _ in model.named_parameters() if any(m in n.split(".") for m in _CLASSIFIER_MARKERS)]


def embedding_block(model: nn.Module) -> nn.Module:
    """The base model's embedding block (word, position, token-type embeddings and their LayerNorm), or ValueError."""
    base = getattr(model, "base_model", None)
    block = getattr(base, "embeddings", None) if base is not None else None
    if not isinstance(block, nn.Module) or not any(isinstance(m, nn.Embedding) for m in block.modules()):
        raise ValueError(
            f"the regimes need an embedding block (model.base_model.embeddings with nn.Embedding layers); "
            f"{type(model).__name__} has none"
        )
    return block


def regime_trainable_names(model: nn.Module, regime: str) -> set[str]:
    """The parameter names ``regime`` trains on a base sequence classifier (the definition in the module docstring)."""
    check_regime(regime)
    if regime not in BASE_REGIMES:
        raise ValueError(f"apply_regime handles {BASE_REGIMES}; {regime!r} builds its own model")
    classifier = set(classifier_parameter_names(model))
    if not classifier:
        raise ValueError(
            f"regime {regime} needs a classifier named one of {_CLASSIFIER_MARKERS}; the model "
            f"{type(model).__name__} has none"
        )
    if regime == "CEfAf":
        return {n for n, _ in model.named_parameters()}
    if regime == "C":
        return classifier
    block = {id(p) for p in embedding_block(model).parameters()}
    return classifier | {n for n, p in model.named_parameters() if id(p) in block}


def apply_regime(model: nn.Module, regime: str) -> nn.Module:
    """Freeze / re-initialise the parts of a base sequence classifier as ``regime`` prescribes (in place).

    ``CE`` re-initialises every ``nn.Embedding`` of the embedding block with ``xavier_uniform_`` (the authors'
    ``initialize_embedding``; the padding row too, as theirs) and leaves the block's LayerNorm at its pretrained
    values. Call after seeding: the re-initialisation draws from torch's global generator.

    Raises ValueError when the model lacks the parts the regime needs (a classifier, an embedding block).
    """
    trainable = regime_trainable_names(model, regime)
    for name, param in model.named_parameters():
        param.requires_grad_(name in trainable)
    if regime == "CE":
        with torch.no_grad():
            for module in embedding_block(model).modules():
                if isinstance(module, nn.Embedding):
                    nn.init.xavier_uniform_(module.weight)
    return model


def trainable_parameter_count(model: nn.Module) -> tuple[int, int]:
    """``(trainable, total)`` parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return trainable, total
