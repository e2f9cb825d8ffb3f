"""The domain facts every layer shares, defined once: GECO's configurations, its class labels, the paper's base
model and the zoo checkpoint's info file.

The dataset's vocabulary (configurations, release folders, splits, class labels, the Spanish mask placeholder) is
defined in the base layer, :mod:`geco_common.domain`, and re-exported here, so that the dataset builder
(``geco_dataset``) reads it without importing the benchmark; the benchmark-only facts (the paper's base model, the
zoo checkpoint's info file) are defined here. Only the base layer is imported, so the model zoo, the evaluation and
the leaderboard Space can all read these names without loading torch, ``datasets`` or Gradio.
"""

from __future__ import annotations

from geco_common.domain import (
    GECO_CONFIGS,
    GECO_FOLDERS,
    GECO_SPLITS,
    LABEL_NAMES,
    MASK_PLACEHOLDER,
    num_labels,
)

#: the paper's base model (Wilming et al. fine-tune bert-base-uncased), by its current Hub id
PAPER_BASE_MODEL = "google-bert/bert-base-uncased"
#: the same model under the id it had before the Hub moved it into the google-bert namespace
_PAPER_BASE_MODEL_ALIASES = frozenset({PAPER_BASE_MODEL, "bert-base-uncased"})


def is_paper_base_model(name: str | None) -> bool:
    """Whether a recorded base-model name is the paper's (either Hub id of bert-base-uncased)."""
    return (name or "").strip() in _PAPER_BASE_MODEL_ALIASES


#: the file in every zoo checkpoint folder that describes the model (regime, base model, config, seed, labels)
MODEL_INFO_FILE = "gecobench_model.json"


__all__ = [
    "GECO_CONFIGS", "GECO_FOLDERS", "GECO_SPLITS", "LABEL_NAMES", "MASK_PLACEHOLDER", "MODEL_INFO_FILE",
    "PAPER_BASE_MODEL", "is_paper_base_model", "num_labels",
]
