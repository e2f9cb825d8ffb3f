"""The domain facts the dataset and the benchmark share, defined once: GECO's configurations, their release
folders, the splits, the class labels, and the placeholder of the Spanish templates.

Nothing is imported here, so the dataset builder (``geco_dataset``), the model zoo, the evaluation and the
leaderboard Space can all read these names without loading torch, ``datasets`` or Gradio. The benchmark-only
facts (the paper's base model, the zoo checkpoint's info file) live in :mod:`gecobench.domain`, which also
re-exports these.
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
#: the placeholder of the masked word in the Spanish template sentences (a model's mask token replaces it)
MASK_PLACEHOLDER = "[MASK]"


def num_labels(config: str) -> int:
    """How many classes a GECO configuration has (2 for the binary ones, 3 for the non-binary ones)."""
    if config not in GECO_FOLDERS:
        raise ValueError(f"unknown GECO config {config!r}; choose one of {list(GECO_CONFIGS)}")
    return 3 if config.startswith("nonbinary") else 2


__all__ = ["GECO_CONFIGS", "GECO_FOLDERS", "GECO_SPLITS", "LABEL_NAMES", "MASK_PLACEHOLDER", "num_labels"]
