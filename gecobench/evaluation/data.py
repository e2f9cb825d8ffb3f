"""The rows the evaluation scores: a GECO split as plain Python rows, grouped by source sentence.

The evaluation works on *sentence groups*: all gender variants of one source sentence (same ``sentence_id``).
The paper's filter keeps a group only when the model classifies every variant correctly, so groups — not
rows — are the unit that is sharded, filtered and checkpointed.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gecobench.domain import GECO_CONFIGS, LABEL_NAMES  # noqa: F401  (LABEL_NAMES re-exported)
from gecobench.provenance import fingerprint_rows


@dataclass(frozen=True)
class GecoRow:
    """One test sentence: its words, 0/1 ground truth per word, class label and source sentence id."""

    index: int
    words: tuple[str, ...]
    ground_truth: tuple[int, ...]
    label: int
    sentence_id: int


@dataclass
class GecoSplit:
    """A loaded split: rows in file order, the groups of row indices per sentence id, and a fingerprint."""

    config: str
    split: str
    rows: list[GecoRow]
    groups: list[list[int]]
    fingerprint: str
    source: str

    @property
    def num_labels(self) -> int:
        return 1 + max(row.label for row in self.rows) if self.rows else 0


def _load_raw_rows(config: str, split: str, data_dir: str | Path | None) -> tuple[list[dict[str, Any]], str]:
    """Rows from ``geco_dataset.load_geco`` (the release files under ``data_dir``, default ../shared/data/geco)."""
    # imported here, not at the top: this module loads with the Space, which never reads GECO rows and should not
    # pay for ``datasets`` (geco_dataset's loaders are ``datasets`` builders)
    from geco_dataset import load_geco

    dataset = load_geco(config, split, data_dir=str(data_dir) if data_dir else None)
    rows = [
        {"words": list(r["words"]), "ground_truth": list(r["ground_truth"]), "label": int(r["label"]),
         "sentence_id": int(r["sentence_id"])}
        for r in dataset
    ]
    return rows, "geco_dataset.load_geco"


def load_split(config: str, split: str = "test", data_dir: str | Path | None = None) -> GecoSplit:
    """Load one GECO config/split as :class:`GecoSplit` (rows validated, grouped by ``sentence_id``)."""
    if config not in GECO_CONFIGS:
        raise ValueError(f"unknown GECO config {config!r}; expected one of {sorted(GECO_CONFIGS)}")
    raw, source = _load_raw_rows(config, split, data_dir)
    rows: list[GecoRow] = []
    groups: OrderedDict[int, list[int]] = OrderedDict()
    for i, r in enumerate(raw):
        rows.append(GecoRow(i, tuple(r["words"]), tuple(int(g) for g in r["ground_truth"]), r["label"], r["sentence_id"]))
        groups.setdefault(r["sentence_id"], []).append(i)
    fingerprint = fingerprint_rows(
        {"words": list(r.words), "ground_truth": list(r.ground_truth), "label": r.label, "sentence_id": r.sentence_id}
        for r in rows
    )
    return GecoSplit(config, split, rows, list(groups.values()), fingerprint, source)


def scorable(row: GecoRow) -> bool:
    """Whether a row can be scored word by word (as many ground-truth entries as words).

    A known quirk of the release (non_binary_gender_subj) has rows whose ground truth is one entry longer
    than the words; such a group is excluded and counted (``counts.n_malformed``), never trimmed silently.
    """
    return len(row.words) == len(row.ground_truth) and len(row.words) > 0
