"""The domain facts every layer shares, defined once: GECO's configurations, its class labels, the paper's base
model and the zoo checkpoint's info file.

Nothing is imported here, so the dataset builder (``geco_dataset``), the model zoo, the evaluation and the
leaderboard Space can all read these names without loading torch, ``datasets`` or Gradio.
"""

from __future__ import annotations

#: GECO configuration name -> the folder of the authors' released files (``data/dataset/<folder>/<split>.jsonl``)
GECO_FOLDERS: dict[str, str] = {
    "binary_all": "binary_gender_all",
    "binary_subject": "binary_gender_subj",
    "nonbinary_all": "non_binary_gender_all",
    "nonbinary_subject": "non_binary_gender_subj",
}
#: the four GECO configurations, in the paper's order
GECO_CONFIGS: tuple[str, ...] = tuple(GECO_FOLDERS)
GECO_SPLITS: tuple[str, ...] = ("train", "test")
#: class names by label id (female=0, male=1, non-binary=2; the binary configs use the first two)
LABEL_NAMES: tuple[str, ...] = ("female", "male", "non-binary")


def num_labels(config: str) -> int:
    """How many classes a GECO configuration has (2 for the binary ones, 3 for the non-binary ones)."""
    if config not in GECO_FOLDERS:
        raise ValueError(f"unknown GECO config {config!r}; choose one of {list(GECO_CONFIGS)}")
    return 3 if config.startswith("nonbinary") else 2


#: the paper's base model (Wilming et al. fine-tune bert-base-uncased), by its current Hub id
PAPER_BASE_MODEL = "google-bert/bert-base-uncased"
#: the same model under the id it had before the Hub moved it into the google-bert namespace
_PAPER_BASE_MODEL_ALIASES = frozenset({PAPER_BASE_MODEL, "bert-base-uncased"})


def is_paper_base_model(name: str | None) -> bool:
    """Whether a recorded base-model name is the paper's (either Hub id of bert-base-uncased)."""
    return (name or "").strip() in _PAPER_BASE_MODEL_ALIASES


#: the file in every zoo checkpoint folder that describes the model (regime, base model, config, seed, labels)
MODEL_INFO_FILE = "gecobench_model.json"
