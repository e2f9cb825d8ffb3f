"""Per-sentence side files: what the leaderboard's drill-down needs to show one sentence.

Next to each ``explainer_score`` record the runner writes ``<store>/sentence_scores/<record_id>.json.gz``: for every
scored row its words, 0/1 ground truth, label, source sentence id, the explainer's word attributions (rounded to
four significant digits — a heat map needs no more) and the sentence's Mass Accuracy. The suffix is not ``.json``
on purpose: stores list only ``*.json`` files as records, so side files are never read (or validated) as records.

A side file is an aid to reading, not a result: it is written after the record and a failure to write it is
logged, never fatal.
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

SIDE_FOLDER = "sentence_scores"
SIDE_SUFFIX = ".json.gz"
SIDE_FORMAT_VERSION = 1
SIGNIFICANT_DIGITS = 4


def _rounded(value: float) -> float | None:
    """``value`` to :data:`SIGNIFICANT_DIGITS` significant digits; None for NaN/inf (JSON has neither)."""
    value = float(value)
    if not math.isfinite(value):
        return None
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def sentence_scores_document(record: dict[str, Any], rows: Sequence[Any], attributions: Sequence[np.ndarray],
                             per_sentence_ma: Sequence[float]) -> dict[str, Any]:
    """The side document of ``record``: one entry per scored row (``rows`` are ``GecoRow``-like objects with
    ``words``, ``ground_truth``, ``label``, ``sentence_id``), aligned with ``attributions`` and ``per_sentence_ma``."""
    if not (len(rows) == len(attributions) == len(per_sentence_ma)):
        raise ValueError(f"sentence scores of record {record.get('record_id')}: {len(rows)} rows, "
                         f"{len(attributions)} attributions, {len(per_sentence_ma)} per-sentence MA values")
    sentences = []
    for position, (row, scores, ma) in enumerate(zip(rows, attributions, per_sentence_ma)):
        scores = np.asarray(scores, dtype=np.float64).ravel()
        if len(scores) != len(row.words):
            raise ValueError(f"sentence scores of record {record.get('record_id')}: row {position} (sentence "
                             f"{row.sentence_id}) has {len(row.words)} words but {len(scores)} attributions")
        sentences.append({"sentence_id": int(row.sentence_id), "label": int(row.label), "words": list(row.words),
                          "ground_truth": [int(g) for g in row.ground_truth],
                          "attributions": [_rounded(s) for s in scores], "mass_accuracy": _rounded(ma)})
    return {"format_version": SIDE_FORMAT_VERSION, "record_id": record["record_id"],
            "explainer": record["explainer"]["name"], "sentences": sentences}


def side_file_path(root: str | os.PathLike[str], record_id: str) -> Path:
    """Where the side file of ``record_id`` lives under a local store's root."""
    if not record_id or "/" in record_id or "\\" in record_id or record_id.startswith("."):
        raise ValueError(f"invalid record id {record_id!r}")
    return Path(root) / SIDE_FOLDER / f"{record_id}{SIDE_SUFFIX}"


def find_side_file(root: str | os.PathLike[str], record_id: str,
                   folders: Sequence[Path] | None = None) -> Path | None:
    """The side file of ``record_id`` in a local store: under its root, else in one of its parts
    (:meth:`gecobench.store.LocalStore.parts`); None when there is none. ``folders``: the store's
    :meth:`~gecobench.store.LocalStore.folders`, read once by a caller that looks up many records."""
    from gecobench.store import LocalStore

    side_file_path(root, record_id)  # the id rules, before any folder is looked at
    for folder in LocalStore(root).folders() if folders is None else folders:
        path = side_file_path(folder, record_id)
        if path.is_file():
            return path
    return None


def _payload(document: dict[str, Any]) -> bytes:
    # mtime=0: the same scores give the same bytes, so a re-run does not look like a change
    return gzip.compress(json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), mtime=0)


def write_sentence_scores(store: Any, document: dict[str, Any]) -> str | None:
    """Write ``document`` next to its record in ``store`` (a ``LocalStore`` or ``HubStore``); return where, or None
    when it was not written (an existing side file is kept: the store is append-only; errors are logged)."""
    from gecobench.store import DocumentExistsError, HubStore, LocalStore, atomic_create

    record_id = document["record_id"]
    try:
        if isinstance(store, LocalStore):
            path = side_file_path(store.root, record_id)
            atomic_create(path, _payload(document))
            return str(path)
        if isinstance(store, HubStore):
            path_in_repo = f"{SIDE_FOLDER}/{record_id}{SIDE_SUFFIX}"
            store.api.upload_file(path_or_fileobj=_payload(document), path_in_repo=path_in_repo,
                                  repo_id=store.repo_id, repo_type="dataset", commit_message=f"Add {path_in_repo}")
            return f"hf://datasets/{store.repo_id}/{path_in_repo}"
    except DocumentExistsError:
        return None
    except Exception as err:  # the record is written already; a missing drill-down must not fail the run
        log.warning("could not write the per-sentence scores of %s: %s", record_id, err)
        return None
    log.warning("per-sentence scores of %s not written: %r has no place for side files", record_id, store)
    return None


def read_sentence_scores(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read one side file; raise ValueError naming the file when it is not a side document."""
    try:
        with gzip.open(path, "rb") as handle:
            document = json.loads(handle.read())
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not a gzipped JSON sentence-scores file ({err})") from err
    if not isinstance(document, dict) or not isinstance(document.get("sentences"), list):
        raise ValueError(f"{path}: has no 'sentences' list")
    for position, sentence in enumerate(document["sentences"]):
        words, truth, scores = (sentence.get(k) if isinstance(sentence, dict) else None
                                for k in ("words", "ground_truth", "attributions"))
        if not (isinstance(words, list) and isinstance(truth, list) and isinstance(scores, list)):
            raise ValueError(f"{path}: sentences[{position}] lacks words, ground_truth or attributions")
        if not (len(words) == len(truth) == len(scores)):
            raise ValueError(f"{path}: sentences[{position}] has {len(words)} words, {len(truth)} ground-truth "
                             f"values and {len(scores)} attributions")
    return document


__all__ = ["SIDE_FOLDER", "SIDE_SUFFIX", "find_side_file", "read_sentence_scores", "sentence_scores_document",
           "side_file_path",
           "write_sentence_scores"]
