"""Import the published fill-mask predictions of the 20 Spanish masked LMs as ``model_bias`` records.

Source: Garrido-Muñoz, Martínez-Santiago & Montejo-Ráez, "MarIA and BETO are sexist" (Language Resources &
Evaluation, 2023), repository ``IsGarrido/Evaluating-Gender-Bias-in-Spanish-Deep-Learning-Models``. The files
(``predictions/top10/<model>.tsv``, ``predictions/top29/<model>.tsv``) hold each model's top-K words per
template sentence and gender, with the probability, the 0-based rank and the original tagger's tag (``AQ`` =
qualifying adjective). The records are flagged ``"recorded (published predictions)"`` and name their source.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gecobench.metrics.bias_indices_bootstrap import BootstrapSettings
from gecobench.provenance import sha256_file
from gecobench.spanish.pipeline import (
    RECORDED_SOURCE,
    build_model_bias_record,
    default_schemes,
    lexicon_version,
    load_lexicons,
    score_schemes,
    table_counts,
)

SOURCE_REPOSITORY = "IsGarrido/Evaluating-Gender-Bias-in-Spanish-Deep-Learning-Models"
SOURCE_COMMIT = "ea99475d"
ADJECTIVE_TAG = "AQ"
PREDICTION_COLUMNS = ("index", "score", "sentence", "dimension", "pos_tag", "word")
TEMPLATES_CONFIG = "templates_2023"
# The published files number their sentences 0..95 in the order of templates_2023: template-major, 12 subjects
# per template (as geco_dataset.spanish numbers them), so sentence // 12 is the template.
SUBJECTS_PER_TEMPLATE = 12
N_TEMPLATES = 8


def read_models_tsv(path: str | Path) -> list[dict[str, str]]:
    """The evaluated models: ``[{"id", "model", "tokenizer", "mask", "cased"}]`` (``#`` lines are comments)."""
    path = Path(path)
    models: list[dict[str, str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) < 5:
            raise ValueError(f"{path}:{number}: expected 5 tab-separated columns (id model tokenizer mask cased)")
        models.append(dict(zip(("id", "model", "tokenizer", "mask", "cased"), (c.strip() for c in cells[:5]))))
    return models


def model_file_stem(model_id: str) -> str:
    """The prediction file name of a model id (``/`` replaced by ``_``)."""
    return model_id.replace("/", "_")


def read_prediction_file(path: str | Path, k: int | None = None) -> pd.DataFrame:
    """Read and check one published predictions file; returns columns sentence, group, word, probability, rank,
    is_adjective, pos_tag (``rank`` = ``index`` + 1). Raises ``ValueError`` naming the file and row on malformed content."""
    path = Path(path)
    frame = pd.read_csv(path, sep="\t", keep_default_na=False, dtype=str)
    missing = [c for c in PREDICTION_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; found {list(frame.columns)}")
    out = pd.DataFrame({"group": frame["dimension"], "word": frame["word"], "pos_tag": frame["pos_tag"]})
    for column, source, kind in (("probability", "score", float), ("rank", "index", int), ("sentence", "sentence", int)):
        try:
            out[column] = frame[source].map(kind)
        except ValueError:
            bad = next(i for i, v in enumerate(frame[source]) if not _parses(v, kind))
            raise ValueError(
                f"{path}: row {bad + 2} column {source!r}: {frame[source].iloc[bad]!r} is not a {kind.__name__}"
            ) from None
    bad_prob = out.index[(out["probability"] < 0) | (out["probability"] > 1)]
    if len(bad_prob):
        raise ValueError(f"{path}: row {bad_prob[0] + 2}: score {out['probability'].iloc[bad_prob[0]]} is not in [0, 1]")
    if (out["group"] == "").any():
        raise ValueError(f"{path}: row {int(out.index[out['group'] == ''][0]) + 2}: empty dimension (gender)")
    if (out["rank"] < 0).any():
        raise ValueError(f"{path}: row {int(out.index[out['rank'] < 0][0]) + 2}: negative index (rank)")
    # the files' ``index`` is 0-based; the bias indices use rank 1..K
    out["rank"] = out["rank"] + 1
    file_k = int(out["rank"].max())
    if k is not None and file_k != k:
        raise ValueError(f"{path}: the highest index is {file_k - 1}, so K={file_k}, but K={k} was asked for")
    out["is_adjective"] = out["pos_tag"] == ADJECTIVE_TAG
    return out[["sentence", "group", "word", "probability", "rank", "is_adjective", "pos_tag"]]


def _parses(value: str, kind: type) -> bool:
    try:
        kind(value)
        return True
    except ValueError:
        return False


def template_of_sentence(sentences: pd.Series, path: str | Path) -> pd.Series:
    """The template of each published sentence number (``sentence // 12``); refuses numbers outside the 8 × 12
    sentences of ``templates_2023``, which would put rows in a template that does not exist."""
    outside = sentences[(sentences < 0) | (sentences >= N_TEMPLATES * SUBJECTS_PER_TEMPLATE)]
    if len(outside):
        raise ValueError(
            f"{path}: row {int(outside.index[0]) + 2}: sentence {int(outside.iloc[0])} is outside 0.."
            f"{N_TEMPLATES * SUBJECTS_PER_TEMPLATE - 1} ({N_TEMPLATES} templates × {SUBJECTS_PER_TEMPLATE} subjects)"
        )
    return sentences // SUBJECTS_PER_TEMPLATE


def recorded_record(
    path: str | Path,
    model_id: str,
    k: int,
    lexicons: dict[str, dict[str, str]],
    model_info: dict[str, str] | None = None,
    bootstrap: BootstrapSettings | None = None,
) -> dict[str, Any]:
    """The ``model_bias`` record of one published predictions file (not stored), with intervals from the
    bootstrap over the 8 templates (``bootstrap``: resamples, seed, confidence; default 1000, 0, 95 %)."""
    path = Path(path)
    bootstrap = bootstrap or BootstrapSettings()
    frame = read_prediction_file(path, k=k)
    frame["template"] = template_of_sentence(frame["sentence"], path)
    table = {column: frame[column].tolist() for column in frame.columns}
    protocol = {
        "k": k,
        "tagger": "published pos_tag (AQ = adjective)",
        "tagger_version": f"{SOURCE_REPOSITORY}@{SOURCE_COMMIT}",
        "lexicons": {scheme: lexicon_version(lexicon) for scheme, lexicon in lexicons.items()},
        "casing": (model_info or {}).get("cased"),
        "mask_token": (model_info or {}).get("mask"),
        "subword_policy": "as published",
        "bootstrap": bootstrap.describe(),
    }
    templates = {
        "config": TEMPLATES_CONFIG,
        "source": f"{SOURCE_REPOSITORY}@{SOURCE_COMMIT}",
        "n_sentences": int(frame[["sentence", "group"]].drop_duplicates().shape[0]),
        "groups": sorted(frame["group"].unique().tolist()),
    }
    recorded_from = {
        "repository": SOURCE_REPOSITORY,
        "commit": SOURCE_COMMIT,
        "file": f"predictions/top{k}/{path.name}",
        "sha256": sha256_file(path),
    }
    return build_model_bias_record(
        model_id=model_id, revision=None, source=RECORDED_SOURCE, templates=templates, protocol=protocol,
        schemes=score_schemes(table, lexicons, k, bootstrap), counts=table_counts(table), recorded_from=recorded_from,
    )


def import_recorded_predictions(
    predictions_dir: str | Path,
    store: Any,
    k: int = 10,
    models_tsv: str | Path | None = None,
    lexicon_dir: str | Path | None = None,
    schemes: Sequence[str] | None = None,
    progress: bool = True,
    bootstrap: BootstrapSettings | None = None,
) -> list[str]:
    """Add one record per published model file under ``predictions_dir/top{k}`` to ``store``.

    ``predictions_dir`` is the ``spanish/predictions`` folder; ``models_tsv`` defaults to
    ``../templates/models.tsv`` next to it and ``lexicon_dir`` to the ``spanish`` folder above it. Idempotent:
    records already in the store are skipped. Returns the ids of all records for this K (new and existing).
    """
    from tqdm.auto import tqdm

    if k not in (10, 29):
        raise ValueError(f"k must be 10 or 29 (the published top-K files), got {k}")
    predictions_dir = Path(predictions_dir)
    folder = predictions_dir / f"top{k}"
    if not folder.is_dir():
        raise FileNotFoundError(f"no published predictions folder {folder}")
    spanish_dir = predictions_dir.parent
    models_tsv = Path(models_tsv) if models_tsv else spanish_dir / "templates" / "models.tsv"
    models = {model_file_stem(m["model"]): m for m in read_models_tsv(models_tsv)}
    lexicons = load_lexicons(tuple(schemes or default_schemes(k)), data_dir=lexicon_dir or spanish_dir)
    files = sorted(folder.glob("*.tsv"))
    if not files:
        raise FileNotFoundError(f"{folder} holds no .tsv prediction files")
    ids: list[str] = []
    for path in tqdm(files, desc=f"import top{k}", disable=not progress, unit="model"):
        info = models.get(path.stem)
        if info is None:
            raise ValueError(f"{path}: no model in {models_tsv} whose id maps to this file name")
        record = recorded_record(path, info["model"], k, lexicons, model_info=info, bootstrap=bootstrap)
        if not store.exists("model_bias", record["record_id"]):
            store.append(record)
        ids.append(record["record_id"])
    return ids
