"""The per-sentence drill-down: one GECO sentence, its ground-truth words, every explainer's word attributions.

Reads the side files the runner writes next to each record (:mod:`gecobench.evaluation.sentence_scores`): from
the local store's folder, or on demand from the Hub dataset repo. No Gradio here.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gecobench.evaluation.sentence_scores import (
    SIDE_FOLDER,
    SIDE_SUFFIX,
    read_sentence_scores,
    side_file_path,
)
from gecobench.store import hub_repo_of
from leaderboard_space.ranking import _label

LABEL_NAMES = ("female", "male", "non-binary")
MAX_OPTIONS = 200


class SideFiles:
    """Side documents of a results store, read once and kept (the store is append-only)."""

    def __init__(self, location: str | None) -> None:
        from gecobench.store import RESULTS_REPO_ENV, open_results_store

        self.repo = hub_repo_of(location, RESULTS_REPO_ENV)
        self.root = None if self.repo else Path(open_results_store(location).root)
        self._cache: dict[str, dict[str, Any] | None] = {}
        self._lock = threading.Lock()

    def _path(self, record_id: str) -> Path | None:
        if self.root is not None:
            path = side_file_path(self.root, record_id)
            return path if path.is_file() else None
        try:  # on a Space reading a Hub store: fetch only the side files a visitor looks at
            from huggingface_hub import hf_hub_download

            return Path(hf_hub_download(self.repo, f"{SIDE_FOLDER}/{record_id}{SIDE_SUFFIX}", repo_type="dataset"))
        except Exception:
            return None

    def get(self, record_id: str) -> dict[str, Any] | None:
        """The side document of ``record_id``, or None when there is none (older records) or it is unreadable."""
        with self._lock:
            if record_id not in self._cache:
                path = self._path(record_id)
                try:
                    self._cache[record_id] = read_sentence_scores(path) if path else None
                except ValueError:
                    self._cache[record_id] = None
            return self._cache[record_id]


def _key(sentence: Mapping[str, Any]) -> str:
    return f"{sentence['sentence_id']}:{sentence['label']}"


def sentence_options(documents: Sequence[Mapping[str, Any]], search: str = "") -> list[tuple[str, str]]:
    """(label, key) per sentence variant found in the side documents, filtered by a word (case-insensitive)."""
    needle = search.strip().lower()
    seen: dict[str, str] = {}
    for document in documents:
        for sentence in document["sentences"]:
            key = _key(sentence)
            if key in seen:
                continue
            words = [str(w) for w in sentence["words"]]
            if needle and not any(needle in w.lower() for w in words):
                continue
            group = LABEL_NAMES[sentence["label"]] if 0 <= sentence["label"] < len(LABEL_NAMES) else sentence["label"]
            text = " ".join(words)
            seen[key] = f"#{sentence['sentence_id']} ({group}): {text[:90]}{'…' if len(text) > 90 else ''}"
    options = sorted(seen.items(), key=lambda item: tuple(int(p) for p in item[0].split(":")))
    return [(label, key) for key, label in options[:MAX_OPTIONS]]


def sentence_rows(records: Sequence[Mapping[str, Any]], side: SideFiles, key: str) -> list[dict[str, Any]]:
    """One row per record of the cell that has a side file holding sentence ``key``: explainer label, words,
    ground truth, attributions and the per-sentence MA; best MA first."""
    rows = []
    for record in records:
        document = side.get(str(record["record_id"]))
        if document is None:
            continue
        found = next((s for s in document["sentences"] if _key(s) == key), None)
        if found is None:
            continue
        rows.append({"explainer": _label(record), "words": found["words"], "ground_truth": found["ground_truth"],
                     "attributions": found["attributions"], "mass_accuracy": found.get("mass_accuracy")})
    rows.sort(key=lambda r: -(r["mass_accuracy"] if isinstance(r["mass_accuracy"], (int, float)) else -1))
    return rows


def heatmap_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """An HTML table: words as columns (ground-truth words marked), one row per explainer shaded by the share
    of its largest absolute attribution, and the sentence's MA; scrolls sideways for long sentences."""
    if not rows:
        return "<p>No per-sentence scores for this choice (records written before version 0.3 have none).</p>"
    words, truth = rows[0]["words"], rows[0]["ground_truth"]
    head = "".join(
        f'<th class="{"gt" if t else ""}" title="{"ground truth" if t else ""}">{html.escape(str(w))}</th>'
        for w, t in zip(words, truth))
    body = []
    for row in rows:
        magnitudes = np.abs(np.array([a if a is not None else np.nan for a in row["attributions"]], dtype=float))
        top = np.nanmax(magnitudes) if np.isfinite(magnitudes).any() else np.nan
        cells = []
        for value, magnitude in zip(row["attributions"], magnitudes):
            share = magnitude / top if np.isfinite(top) and top > 0 and np.isfinite(magnitude) else 0.0
            text = "–" if value is None else f"{value:.2g}"
            cells.append(f'<td style="background: rgba(214, 96, 77, {share:.2f})" title="{text}">{text}</td>')
        ma = row["mass_accuracy"]
        ma_text = f"{ma:.3f}" if isinstance(ma, (int, float)) else "–"
        body.append(f'<tr><th class="explainer">{html.escape(row["explainer"])}</th>{"".join(cells)}'
                    f'<td class="ma">{ma_text}</td></tr>')
    return (
        '<div class="drill-scroll" style="overflow-x: auto; max-width: 100%">'
        '<style>.drill td, .drill th {padding: 4px 6px; border: 1px solid #ddd; font-size: 14px; text-align: center;'
        ' white-space: nowrap} .drill th.gt {background: #ffe08a; text-decoration: underline}'
        ' .drill th.explainer {text-align: left; position: sticky; left: 0; background: var(--background-fill-primary, #fff)}'
        ' .drill td.ma {font-weight: bold}</style>'
        f'<table class="drill"><thead><tr><th class="explainer">Explainer</th>{head}<th>MA</th></tr></thead>'
        f'<tbody>{"".join(body)}</tbody></table></div>'
        '<p>Highlighted words: ground truth (the gendered words). Shading: |attribution| relative to the row\'s '
        'largest; MA: the share of this sentence\'s attribution mass on the ground-truth words.</p>'
    )


def _where(location: str) -> str:
    """A URL as a link, a path as code, nothing as a dash (a path on the server is no link a visitor can open)."""
    if not location:
        return "–"
    if location.startswith(("https://", "http://")):
        return f'<a href="{html.escape(location, quote=True)}" target="_blank">{html.escape(location)}</a>'
    return f"<code>{html.escape(location)}</code>"


def provenance_html(records: Sequence[Mapping[str, Any]], record_link: Callable[[Mapping[str, Any]], str],
                    cards: Callable[[Mapping[str, Any]], tuple[str, str]]) -> str:
    """Below the heat map: for each record of the cell its record file, its model's card and the dataset card."""
    if not records:
        return ""
    items = []
    for record in sorted(records, key=_label):
        model_card, dataset_card = cards(record)
        items.append(f"<li><b>{html.escape(_label(record))}</b> — record: {_where(record_link(record))}; "
                     f"model card: {_where(model_card)}; dataset card: {_where(dataset_card)}</li>")
    return f'<details class="drill-provenance"><summary>Provenance of these rows</summary><ul>{"".join(items)}</ul></details>'
