"""The per-sentence drill-down: one GECO sentence, its ground-truth words, every explainer's word attributions.

Reads the side files the runner writes next to each record (:mod:`gecobench.evaluation.sentence_scores`): from
the local store's folder, or on demand from the Hub dataset repo; the heat map is :mod:`gecobench.heatmap`'s. No
Gradio here.
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gecobench.evaluation.sentence_scores import (
    SIDE_FOLDER,
    SIDE_SUFFIX,
    find_side_file,
    read_sentence_scores,
)
from gecobench.gender import GENDER_GROUPS
from gecobench.heatmap import attribution_shares, heatmap_html, share_colours  # noqa: F401 (the drill-down's too)
from gecobench.store import hub_repo_of
from leaderboard_space.ranking import _label

LABEL_NAMES = GENDER_GROUPS  # one definition of the gender groups (gecobench.gender)
# the heat map and its shares are defined once, in gecobench.heatmap (the notebook view of a result draws the same
# table); the Space and its tests reach them here as the drill-down's
MAX_OPTIONS = 1000  # one page of the sentence list (the reference has 640 variants per model; sentence_page pages)


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
            return find_side_file(self.root, record_id)
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


def _group(label: Any) -> str:
    return LABEL_NAMES[label] if isinstance(label, int) and 0 <= label < len(LABEL_NAMES) else str(label)


_WORD = re.compile(r"[\w'’-]+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    """The whole words of a text, lower-cased, punctuation left out (``He,`` → ``he``)."""
    return [t.lower() for t in _WORD.findall(text)]


def matches(words: Sequence[Any], sentence_id: Any, search: str) -> bool:
    """Whether a sentence variant matches a search: ``#17`` (or ``17``) its sentence id; otherwise every word of
    the search is a *whole* word of the sentence, case-insensitive (``he`` finds "He" but not "she" or "the")."""
    needle = search.strip()
    if not needle:
        return True
    if re.fullmatch(r"#?\d+", needle):
        return str(sentence_id) == needle.lstrip("#")
    wanted = _tokens(needle)
    present = {t for w in words for t in _tokens(str(w))}
    return bool(wanted) and all(w in present for w in wanted)


@dataclass
class SentencePage:
    """One page of the sentence variants a search finds: ``options`` (label, key), ``total`` found, ``page``
    (1-based) of ``pages``."""

    options: list[tuple[str, str]]
    total: int
    page: int
    pages: int

    def message(self, search: str = "") -> str:
        """What the list holds, truthfully: how many variants the search found and which page is shown."""
        where = f" with the whole word(s) {search.strip()!r}" if search.strip() and not re.fullmatch(
            r"#?\d+", search.strip()) else (f" of sentence {search.strip()}" if search.strip() else "")
        if not self.total:
            return f"No sentence variant{where} in this model's per-sentence scores."
        text = f"{self.total} sentence variant(s){where}"
        if self.pages > 1:
            text += (f" — page {self.page} of {self.pages} ({len(self.options)} shown); choose another page, or "
                     "search by a word or by #sentence id to reach any of them")
        return text + "."


def sentence_page(documents: Sequence[Mapping[str, Any]], search: str = "", page: int = 1,
                  page_size: int = MAX_OPTIONS) -> SentencePage:
    """Every sentence variant of the side documents that :func:`matches` the search, in sentence order, one page
    of ``page_size`` at a time (a page past the end shows the last): every sentence is reachable."""
    seen: dict[str, str] = {}
    for document in documents:
        for sentence in document["sentences"]:
            key = _key(sentence)
            if key in seen or not matches(sentence["words"], sentence["sentence_id"], search):
                continue
            text = " ".join(str(w) for w in sentence["words"])
            seen[key] = f"#{sentence['sentence_id']} ({_group(sentence['label'])}): {text[:90]}{'…' if len(text) > 90 else ''}"
    ordered = sorted(seen.items(), key=lambda item: tuple(int(p) if p.lstrip("-").isdigit() else 0
                                                          for p in item[0].split(":")))
    pages = max(1, -(-len(ordered) // page_size))
    page = min(max(1, int(page or 1)), pages)
    chosen = ordered[(page - 1) * page_size: page * page_size]
    return SentencePage([(label, key) for key, label in chosen], len(ordered), page, pages)


def sentence_options(documents: Sequence[Mapping[str, Any]], search: str = "", page: int = 1) -> list[tuple[str, str]]:
    """(label, key) of one page of the sentence variants matching ``search`` (:func:`sentence_page`)."""
    return sentence_page(documents, search, page).options


def sentence_rows(records: Sequence[Mapping[str, Any]], side: SideFiles, key: str) -> list[dict[str, Any]]:
    """One row per record of the cell and gender variant of the sentence of ``key`` (``sentence_id:label``) that a
    side file holds: explainer label, variant, words, ground truth, raw attributions, each word's share of the
    attribution mass, and the per-sentence MA. Explainers ordered by the MA of the chosen variant (best first),
    each explainer's variants side by side (female, male, non-binary), seeds named when a cell has several."""
    sentence_id, _, label = key.partition(":")
    several_seeds = len({str(r["model"].get("seed")) for r in records}) > 1
    rows = []
    for record in records:
        document = side.get(str(record["record_id"]))
        if document is None:
            continue
        name = _label(record) + (f" · seed {record['model'].get('seed')}" if several_seeds else "")
        for found in document["sentences"]:
            if str(found["sentence_id"]) != sentence_id:
                continue
            ma = found.get("mass_accuracy")
            rows.append({"explainer": name, "variant": _group(found["label"]), "chosen": str(found["label"]) == label,
                         "words": found["words"], "ground_truth": found["ground_truth"],
                         "attributions": found["attributions"], "shares": attribution_shares(found["attributions"]),
                         "mass_accuracy": ma if isinstance(ma, (int, float)) else None})
    chosen_ma = {r["explainer"]: r["mass_accuracy"] for r in rows if r["chosen"]}
    rows = [r for r in rows if r["explainer"] in chosen_ma]  # explainers that scored the chosen variant
    order = lambda r: (-(chosen_ma[r["explainer"]] if chosen_ma[r["explainer"]] is not None else -1), r["explainer"],
                       LABEL_NAMES.index(r["variant"]) if r["variant"] in LABEL_NAMES else len(LABEL_NAMES))
    return sorted(rows, key=order)


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
