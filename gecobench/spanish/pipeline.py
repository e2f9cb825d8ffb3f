"""The live Spanish masked-LM pipeline: templates → fill-mask → tagging → categories → BPI/BRI → record.

The pieces are plain functions so the script (``scripts/spanish_bias.py``), the recorded-predictions importer
(:mod:`gecobench.spanish.recorded`) and the tests share them:

* :func:`load_templates` — the canonical template sets through ``geco_dataset`` or a user TSV file
  (:func:`read_template_file`, any number of group columns);
* :func:`render` — the template text with the model's mask token, lower-cased for uncased models;
* :func:`predictions_table` — fill-mask output joined with groups and the tagger's adjective decision;
* :func:`score_schemes` — one ``bias_indices`` call per lexicon scheme, with its overall bias and the
  bootstrap over templates (:func:`gecobench.metrics.bias_indices_bootstrap.template_bootstrap`);
* :func:`build_model_bias_record` — the ``model_bias`` record (identity → ``record_id``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geco_common.domain import MASK_PLACEHOLDER
from gecobench.metrics.bias_indices_bootstrap import BootstrapSettings
from gecobench.provenance import (
    base_provenance,
    fingerprint_directory,
    fingerprint_rows,
)
from gecobench.records import SCHEMA_VERSION, model_bias_identity, record_id_for

DEFAULT_PLACEHOLDER = MASK_PLACEHOLDER  # the name this module gave it before the base layer held it
RECORDED_SOURCE = "recorded (published predictions)"
LIVE_SOURCE = "live"
CANONICAL_CONFIGS = ("templates_2023", "templates_2022")


@dataclass(frozen=True)
class TemplateRow:
    """One sentence to fill: its template, subject and group (e.g. male/female), text with the placeholder."""

    template_id: int
    subject_id: int
    group: str
    text: str


def mask_placeholder() -> str:
    """The placeholder the template files use (:data:`geco_common.domain.MASK_PLACEHOLDER`)."""
    return MASK_PLACEHOLDER


def default_schemes(k: int) -> tuple[str, ...]:
    """The lexicon schemes scored for a given K: the supersense list built for that K, plus the two others."""
    supersenses = "supersenses_top10" if k <= 10 else "supersenses_top29"
    return (supersenses, "visibility_polarity", "wiggins")


def read_template_file(path: str | Path, placeholder: str | None = None) -> list[TemplateRow]:
    """Read a template TSV: a header naming the groups (two or more columns, e.g. ``male<TAB>female``), then one
    row per template × subject with one sentence per group; ``#`` lines are comments.

    Each non-comment row becomes its own template (``template_id`` = row number, ``subject_id`` = 0).
    """
    placeholder = placeholder or mask_placeholder()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"template file not found: {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    content = [(number, line) for number, line in enumerate(lines, start=1) if line.strip() and not line.startswith("#")]
    if not content:
        raise ValueError(f"{path}: no header line")
    header_line, header = content[0]
    groups = [cell.strip() for cell in header.split("\t")]
    if len(groups) < 2 or any(not g for g in groups) or len(set(groups)) != len(groups):
        raise ValueError(f"{path}:{header_line}: the header must name two or more distinct groups, got {groups}")
    rows: list[TemplateRow] = []
    for row_index, (number, line) in enumerate(content[1:]):
        cells = line.split("\t")
        if len(cells) != len(groups):
            raise ValueError(f"{path}:{number}: {len(cells)} columns, the header names {len(groups)} groups")
        for group, cell in zip(groups, cells):
            text = cell.strip()
            check_placeholder(text, placeholder, where=f"{path}:{number} ({group})")
            rows.append(TemplateRow(template_id=row_index, subject_id=0, group=group, text=text))
    if not rows:
        raise ValueError(f"{path}: no template rows below the header")
    return rows


def check_placeholder(text: str, placeholder: str, where: str) -> None:
    """Raise ``ValueError`` unless ``text`` holds the placeholder exactly once."""
    count = text.count(placeholder)
    if count != 1:
        raise ValueError(f"{where}: template {text!r} has {count} {placeholder} placeholders; exactly one is needed")


def load_templates(
    config: str = "templates_2023", data_dir: str | Path | None = None, templates_file: str | Path | None = None
) -> tuple[list[TemplateRow], dict[str, Any]]:
    """The template rows and a description for the record (config, source, fingerprint, counts)."""
    placeholder = mask_placeholder()
    if templates_file is not None:
        rows = read_template_file(templates_file, placeholder)
        source = str(templates_file)
        config = config if config not in CANONICAL_CONFIGS else f"file:{Path(templates_file).name}"
    else:
        # imported when used: the Space loads this module and should not load `datasets` (geco_dataset's builders)
        from geco_dataset import load_spanish_templates

        raw = load_spanish_templates(config=config, data_dir=data_dir)
        rows = []
        for index, row in enumerate(raw):
            text = str(row["text"])
            check_placeholder(text, placeholder, where=f"templates {config} row {index}")
            rows.append(TemplateRow(int(row["template_id"]), int(row["subject_id"]), str(row["gender"]), text))
        source = "geco_dataset.load_spanish_templates"
    fingerprint = fingerprint_rows([[r.template_id, r.subject_id, r.group, r.text] for r in rows])
    info = {
        "config": config,
        "source": source,
        "fingerprint": fingerprint,
        "n_sentences": len(rows),
        "groups": sorted({r.group for r in rows}),
    }
    return rows, info


def render(text: str, mask_token: str, lowercase: bool, placeholder: str | None = None) -> str:
    """The template text with ``mask_token`` in place of the placeholder; lower-cased around it when asked."""
    placeholder = placeholder or mask_placeholder()
    check_placeholder(text, placeholder, where="render")
    before, after = text.split(placeholder)
    if lowercase:
        before, after = before.lower(), after.lower()
    return f"{before}{mask_token}{after}"


def fill(text: str, word: str, placeholder: str | None = None) -> tuple[str, tuple[int, int]]:
    """The template filled with ``word`` and the character span of the word (for tagging in context)."""
    placeholder = placeholder or mask_placeholder()
    before, after = text.split(placeholder)
    return f"{before}{word}{after}", (len(before), len(before) + len(word))


def predictions_table(rows: Sequence[TemplateRow], predictions: Sequence[Sequence[Any]], tagger: Any) -> dict[str, list]:
    """Flatten fill-mask output into columns: sentence, template, group, word, probability, rank, vocab_rank,
    is_adjective (``template`` is the row's ``template_id``, the resampling unit of the bootstrap)."""
    if len(rows) != len(predictions):
        raise ValueError(f"{len(rows)} template rows but predictions for {len(predictions)} sentences")
    table: dict[str, list] = {
        name: [] for name in ("sentence", "template", "group", "word", "probability", "rank", "vocab_rank",
                              "is_adjective")
    }
    filled: list[str] = []
    spans: list[tuple[int, int]] = []
    for index, (row, preds) in enumerate(zip(rows, predictions)):
        for pred in preds:
            sentence, span = fill(row.text, pred.word)
            filled.append(sentence)
            spans.append(span)
            table["sentence"].append(index)
            table["template"].append(row.template_id)
            table["group"].append(row.group)
            table["word"].append(pred.word)
            table["probability"].append(pred.probability)
            table["rank"].append(pred.rank)
            table["vocab_rank"].append(pred.vocab_rank)
    table["is_adjective"] = list(tagger.is_adjective(filled, spans))
    return table


def load_lexicons(schemes: Sequence[str], data_dir: str | Path | None = None) -> dict[str, dict[str, str]]:
    """``{scheme: {lower-cased word: category}}`` through ``geco_dataset.load_lexicon``."""
    from geco_dataset import load_lexicon

    return {scheme: load_lexicon(scheme, data_dir=data_dir) for scheme in schemes}


def lexicon_version(lexicon: Mapping[str, str]) -> str:
    """A fingerprint of a lexicon's content (word → category), stable across file formats."""
    return "sha256:" + fingerprint_rows(sorted(lexicon.items()))[:16]


def score_schemes(
    table: Mapping[str, Sequence[Any]],
    lexicons: Mapping[str, Mapping[str, str]],
    k: int,
    bootstrap: BootstrapSettings | None = None,
) -> dict[str, Any]:
    """Per scheme: the ``bias_indices`` result, its ``overall`` bias (sum of |bias| over the lexicon's categories,
    per index) and, when ``bootstrap`` is given, ``uncertainty``: the bootstrap over templates (the table's
    ``template`` column) of all of them. JSON-safe. The live pipeline and the recorded predictions both come here,
    so both get the same intervals."""
    from gecobench.metrics.bias_indices import bias_indices, overall_bias
    from gecobench.metrics.bias_indices_bootstrap import template_bootstrap

    if bootstrap is not None and "template" not in table:
        raise ValueError("the predictions table has no 'template' column; the bootstrap resamples templates")
    out: dict[str, Any] = {}
    for scheme, lexicon in lexicons.items():
        rows = {
            "group": list(table["group"]), "word": list(table["word"]), "probability": list(table["probability"]),
            "rank": list(table["rank"]), "is_adjective": list(table["is_adjective"]), "lexicon": lexicon, "k": k,
        }
        result = bias_indices(**rows)
        result["overall"] = {index: overall_bias(result["bias"][index]) for index in ("bpi", "bri")}
        if bootstrap is not None:
            result["uncertainty"] = template_bootstrap(**rows, template=list(table["template"]), settings=bootstrap)
        out[scheme] = to_json_safe(result)
    return out


def to_json_safe(value: Any) -> Any:
    """numpy scalars/arrays → Python numbers/lists; NaN/inf → None (records forbid non-finite numbers)."""
    if isinstance(value, Mapping):
        return {str(key): to_json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_safe(item) for item in value]
    if isinstance(value, np.ndarray):
        return to_json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def build_model_bias_record(
    *,
    model_id: str,
    revision: str | None,
    source: str,
    templates: dict[str, Any],
    protocol: dict[str, Any],
    schemes: dict[str, Any],
    counts: dict[str, Any] | None = None,
    recorded_from: dict[str, Any] | None = None,
    seed: int | None = None,
    checkpoint_sha256: str | None = None,
) -> dict[str, Any]:
    """A ``model_bias`` record; its id comes from model, revision, source, templates, protocol (and source file)."""
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "record_type": "model_bias",
        "record_id": "",  # the hash of the identity, set once the record is complete
        "masked_lm": {
            "model_id": model_id, "revision": revision, "source": source, "checkpoint_sha256": checkpoint_sha256,
        },
        "templates": templates,
        "protocol": protocol,
        "schemes": schemes,
        "provenance": base_provenance(seed),
    }
    if counts is not None:
        record["counts"] = counts
    if recorded_from is not None:
        record["recorded_from"] = recorded_from
    record = to_json_safe(record)
    record["record_id"] = record_id_for(model_bias_identity(record))
    return record


def bootstrap_for(rows: Sequence[TemplateRow], settings: BootstrapSettings | None = None) -> BootstrapSettings | None:
    """The bootstrap settings to use for these template rows (default settings when none are given), or None when
    the rows hold fewer than two templates (resampling one template gives back the point value)."""
    if len({row.template_id for row in rows}) < 2:
        return None
    return settings or BootstrapSettings()


def table_counts(table: Mapping[str, Sequence[Any]]) -> dict[str, int]:
    """How many predictions, adjectives and sentences went into the scores."""
    return {
        "n_predictions": len(table["word"]),
        "n_adjectives": int(sum(bool(a) for a in table["is_adjective"])),
        "n_sentences": len(set(table["sentence"])),
    }


def run_live(
    model_id_or_path: str,
    *,
    revision: str | None = None,
    k: int = 10,
    config: str = "templates_2023",
    data_dir: str | Path | None = None,
    templates_file: str | Path | None = None,
    tagger: Any,
    schemes: Sequence[str] | None = None,
    casing: str = "auto",
    batch_size: int = 16,
    device: Any = None,
    model_id: str | None = None,
    progress: bool = True,
    bootstrap: BootstrapSettings | None = None,
) -> tuple[dict[str, Any], dict[str, list]]:
    """Score one masked LM end to end; returns ``(model_bias record, predictions table)`` (not yet stored).

    ``bootstrap`` sets the resamples, seed and confidence of the intervals over templates (default 1000, 0, 95 %)."""
    from gecobench.spanish.fillmask import (
        detect_uncased,
        load_masked_lm,
        top_k_whole_words,
        whole_word_mask,
    )

    if casing not in ("auto", "cased", "uncased"):
        raise ValueError(f"casing must be auto, cased or uncased, got {casing!r}")
    rows, templates_info = load_templates(config, data_dir=data_dir, templates_file=templates_file)
    # one template has no spread to measure: such a record carries point values only
    bootstrap = bootstrap_for(rows, bootstrap)
    # lexicons before the model: a wrong scheme name fails in a second, not after a download
    schemes = tuple(schemes or default_schemes(k))
    lexicons = load_lexicons(schemes, data_dir=data_dir)
    model, tokenizer = load_masked_lm(model_id_or_path, revision=revision, device=device)
    lowercase = detect_uncased(tokenizer) if casing == "auto" else casing == "uncased"
    texts = [render(row.text, tokenizer.mask_token, lowercase) for row in rows]
    predictions = top_k_whole_words(model, tokenizer, texts, k=k, batch_size=batch_size, device=device, progress=progress)
    table = predictions_table(rows, predictions, tagger)
    _, convention = whole_word_mask(tokenizer)
    protocol = {
        "k": k,
        "tagger": tagger.name,
        "tagger_version": tagger.version,
        "lexicons": {scheme: lexicon_version(lexicon) for scheme, lexicon in lexicons.items()},
        "casing": "uncased" if lowercase else "cased",
        "mask_token": tokenizer.mask_token,
        "subword_policy": f"whole words only ({convention}); probability = softmax over the full vocabulary",
    }
    if bootstrap is not None:
        protocol["bootstrap"] = bootstrap.describe()
    is_local = Path(model_id_or_path).is_dir()
    if revision is None and not is_local:
        # a Hub model loaded without --revision: record the commit transformers actually resolved
        revision = getattr(model.config, "_commit_hash", None)
    record = build_model_bias_record(
        model_id=model_id or str(model_id_or_path), revision=revision, source=LIVE_SOURCE, templates=templates_info,
        protocol=protocol, schemes=score_schemes(table, lexicons, k, bootstrap), counts=table_counts(table),
        checkpoint_sha256=fingerprint_directory(model_id_or_path) if is_local else None,
    )
    return record, table
