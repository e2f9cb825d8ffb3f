"""GECO rows for training: loading a config's split, the validation hold-out by sentence, batching.

The rows come from the hub's dataset builder (:func:`geco_dataset.load_geco`, which checks the released files'
checksums), read from the GECO folder (``../shared/data/geco`` next to the repository, or ``GECOBENCH_GECO_DIR``),
as ``words``, ``label``, ``sentence_id``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geco_common.paths import REPO_ROOT, shared_data_dir
from gecobench.domain import GECO_FOLDERS, GECO_SPLITS, LABEL_NAMES, num_labels  # noqa: F401  (LABEL_NAMES re-exported)

#: GECO configuration name -> (release folder, number of classes). Labels: female=0, male=1, non-binary=2.
GECO_CONFIGS: dict[str, tuple[str, int]] = {config: (folder, num_labels(config)) for config, folder in GECO_FOLDERS.items()}
SPLITS = GECO_SPLITS


@dataclass(frozen=True)
class GecoRow:
    """One sentence variant: its words as released, its class and the id of its source sentence."""

    words: list[str]
    label: int
    sentence_id: int


def check_config(config: str) -> tuple[str, int]:
    """Return ``(folder, num_labels)`` of a GECO config or raise a ValueError listing the known ones."""
    if config not in GECO_CONFIGS:
        raise ValueError(f"unknown GECO config {config!r}; choose one of {sorted(GECO_CONFIGS)}")
    return GECO_CONFIGS[config]


def num_labels_of(config: str) -> int:
    """Number of classes of a GECO config (2 binary, 3 non-binary)."""
    return check_config(config)[1]


def default_geco_dir() -> Path:
    """The local GECO folder the dataset builder reads by default (``geco_common.paths.shared_data_dir``:
    ``GECOBENCH_GECO_DIR``, ``GECOBENCH_SHARED_DATA/geco``, the checkout's ``../shared/data/geco``); where there is
    none, the checkout's path, which does not exist (callers test ``is_dir()``; the builder then downloads)."""
    found = shared_data_dir("GECOBENCH_GECO_DIR", "geco")
    return Path(found) if found else REPO_ROOT.parent / "shared" / "data" / "geco"


def load_rows(config: str, split: str, data_dir: str | Path | None = None) -> list[GecoRow]:
    """Load one split of a GECO config as :class:`GecoRow` objects.

    Read by ``geco_dataset.load_geco`` (checksums, row validation with file and line): the one GECO reader.
    """
    check_config(config)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; GECO has {SPLITS}")
    # imported here: loading `datasets` costs about half a second, and `gecobench train --help` imports this module
    from geco_dataset import load_geco

    if data_dir is None and default_geco_dir().is_dir():
        data_dir = default_geco_dir()
    dataset = load_geco(config, split, data_dir=str(data_dir) if data_dir is not None else None)
    return [GecoRow(list(r["words"]), int(r["label"]), int(r["sentence_id"])) for r in dataset]


def split_by_sentence(
    rows: Sequence[GecoRow], val_fraction: float, seed: int
) -> tuple[list[GecoRow], list[GecoRow]]:
    """Hold out ``val_fraction`` of the source sentences (all their gender variants) for validation.

    The split depends only on the set of sentence ids and the seed, so every regime trained with the same
    seed sees the same validation sentences.
    """
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction}")
    ids = sorted({r.sentence_id for r in rows})
    if len(ids) < 2:
        raise ValueError("need at least two source sentences to hold out a validation set")
    rng = random.Random(seed)
    rng.shuffle(ids)
    n_val = max(1, round(len(ids) * val_fraction))
    val_ids = set(ids[:n_val])
    train = [r for r in rows if r.sentence_id not in val_ids]
    val = [r for r in rows if r.sentence_id in val_ids]
    return train, val


def subsample_sentences(rows: Sequence[GecoRow], max_sentences: int | None, seed: int) -> list[GecoRow]:
    """Keep the variants of at most ``max_sentences`` source sentences (for quick tests and demos)."""
    if max_sentences is None:
        return list(rows)
    ids = sorted({r.sentence_id for r in rows})
    random.Random(seed).shuffle(ids)
    keep = set(ids[:max_sentences])
    return [r for r in rows if r.sentence_id in keep]


#: the encoding fields a training batch carries
BATCH_FIELDS = ("input_ids", "attention_mask", "token_type_ids")


class WordsCollator:
    """Turn a list of :class:`GecoRow` into a padded tensor batch with ``labels`` (words tokenized as released).

    Each sentence is tokenized once and its tokens kept: a schedule of many epochs (OLA's 200) otherwise spent about
    half its time re-tokenizing the same rows (2026-12-06, a 6-epoch profile). Sentences not seen yet are tokenized
    by the same call as always (padded to the longest, truncated at ``max_length``), so a fast tokenizer's saved
    padding and truncation settings, which end up in the checkpoint's ``tokenizer.json``, do not change; a batch is
    then padded on the right exactly as that call pads (tests compare the two). A tokenizer that pads on the left
    is called for every batch, as before."""

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self._tokens: dict[tuple[str, ...], dict[str, list[int]]] = {}

    def __call__(self, rows: Sequence[GecoRow]) -> dict[str, Any]:
        import torch

        from gecobench.words import tokenize_words

        if getattr(self.tokenizer, "padding_side", "right") != "right" or self.tokenizer.pad_token_id is None:
            encoding, _ = tokenize_words(self.tokenizer, [r.words for r in rows], max_length=self.max_length)
            batch = {k: v for k, v in encoding.items() if k in BATCH_FIELDS}
        else:
            keys = [tuple(r.words) for r in rows]
            new = list(dict.fromkeys(k for k in keys if k not in self._tokens))
            if new:
                encoding, _ = tokenize_words(self.tokenizer, [list(k) for k in new], max_length=self.max_length,
                                             return_tensors=None)
                for i, key in enumerate(new):
                    length = sum(encoding["attention_mask"][i])
                    self._tokens[key] = {name: list(encoding[name][i][:length]) for name in BATCH_FIELDS
                                         if name in encoding}
            longest = max(len(self._tokens[k]["input_ids"]) for k in keys)
            fill = {"input_ids": self.tokenizer.pad_token_id, "attention_mask": 0,
                    "token_type_ids": getattr(self.tokenizer, "pad_token_type_id", 0)}
            batch = {name: torch.tensor([self._tokens[k][name] + [fill[name]] * (longest - len(self._tokens[k][name]))
                                         for k in keys], dtype=torch.long)
                     for name in BATCH_FIELDS if name in self._tokens[keys[0]]}
        batch["labels"] = torch.tensor([r.label for r in rows], dtype=torch.long)
        return batch
