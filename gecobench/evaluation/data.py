"""The rows the evaluation scores: a GECO split as plain Python rows, grouped by source sentence.

The evaluation works on *sentence groups*: all gender variants of one source sentence (same ``sentence_id``).
The paper's filter keeps a group only when the model classifies every variant correctly, so groups — not
rows — are the unit that is sharded, filtered and checkpointed.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gecobench.provenance import REPO_ROOT, fingerprint_rows

GECO_CONFIGS = {
    "binary_all": "binary_gender_all",
    "binary_subject": "binary_gender_subj",
    "nonbinary_all": "non_binary_gender_all",
    "nonbinary_subject": "non_binary_gender_subj",
}
LABEL_NAMES = ("female", "male", "non-binary")
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data" / "geco"


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


def _read_local_jsonl(config: str, split: str, data_dir: Path) -> list[dict[str, Any]]:
    """Read ``<data_dir>/<folder>/<split>.jsonl`` in the release layout, with errors that name file and line."""
    folder = GECO_CONFIGS[config]
    path = Path(data_dir) / folder / f"{split}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"GECO file not found: {path} (config {config!r}, split {split!r})")
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                rows.append({
                    "words": list(raw["sentence"]), "ground_truth": list(raw["ground_truth"]),
                    "label": int(raw["target"]), "sentence_id": int(raw["sentence_idx"]),
                })
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
                raise ValueError(f"{path}:{line_no}: not a GECO row ({err})") from None
    return rows


def _load_raw_rows(config: str, split: str, data_dir: str | Path | None) -> tuple[list[dict[str, Any]], str]:
    """Rows from ``geco_dataset.load_geco`` when the builder is installed, else straight from the release files."""
    try:
        from geco_dataset import load_geco  # type: ignore[attr-defined]
    except ImportError:
        load_geco = None
    if load_geco is not None:
        dataset = load_geco(config, split, data_dir=str(data_dir) if data_dir else None)
        rows = [
            {"words": list(r["words"]), "ground_truth": list(r["ground_truth"]), "label": int(r["label"]),
             "sentence_id": int(r["sentence_id"])}
            for r in dataset
        ]
        return rows, "geco_dataset.load_geco"
    return _read_local_jsonl(config, split, Path(data_dir) if data_dir else DEFAULT_DATA_DIR), "local jsonl"


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
