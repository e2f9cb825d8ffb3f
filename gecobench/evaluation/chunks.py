"""The run's work units and the sentences each filter keeps in them.

A split's sentence groups (all gender variants of one source sentence) are cut into fixed chunks of
``chunk_size`` groups (:func:`split_into_chunks`); the chunks, not the processes, define the work. Per chunk a
model's predictions (:func:`chunk_predictions`) decide which groups a correctness filter keeps
(:func:`rows_for_filter`); the ``paper`` filter's shared subset is defined by the predictions of every model of a
config (:func:`compute_paper_subset`). A gathered chunk computed on every scorable row is cut down to a filter's
rows by :func:`filtered_chunk`, which is how one pass yields the records of several filters.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from gecobench.evaluation.data import GecoSplit, scorable
from gecobench.evaluation.filters import (
    PAPER,
    PER_MODEL,
    FilterSubset,
    defining_model,
    group_correct,
    rows_in_subset,
    shared_subset,
)
from gecobench.evaluation.modelling import LoadedModel, as_loaded_model, model_key, predict
from gecobench.evaluation.settings import EvaluationSettings

__all__ = ["chunk_predictions", "compute_paper_subset", "filtered_chunk", "paper_subset_for", "rows_for_filter",
           "scorable_rows", "split_into_chunks", "subset_protocol"]

log = logging.getLogger("gecobench.evaluation")


def split_into_chunks(split: GecoSplit, settings: EvaluationSettings) -> list[list[list[int]]]:
    """The run's chunks: ``settings.chunk_size`` sentence groups each, over the first ``max_groups`` groups."""
    groups = split.groups[: settings.max_groups] if settings.max_groups else split.groups
    return [groups[i:i + settings.chunk_size] for i in range(0, len(groups), settings.chunk_size)]


def scorable_rows(split: GecoSplit, chunk: list[list[int]]) -> list[int]:
    """The rows of a chunk's well-formed groups (whole groups only), whatever the filter."""
    return [i for group in chunk if all(scorable(split.rows[j]) for j in group) for i in group]


def chunk_predictions(lm: LoadedModel, split: GecoSplit, chunk: list[list[int]], settings: EvaluationSettings
                      ) -> dict[int, int]:
    """A model's predicted class for every row of a chunk (batched as the evaluation batches them, so the shared
    subset and the per-chunk filters see the same predictions)."""
    rows = [i for g in chunk for i in g]
    preds = predict(lm.model, lm.tokenizer, [list(split.rows[i].words) for i in rows],
                    batch_size=max(settings.batch_size, 16))
    return {i: int(p) for i, p in zip(rows, preds)}


def compute_paper_subset(models: Sequence[str | LoadedModel], split: GecoSplit, settings: EvaluationSettings,
                         include_zero_shot: bool = False,
                         predictions_out: dict[str, dict[int, dict[int, int]]] | None = None) -> FilterSubset:
    """The paper's shared subset of ``split`` over the run's sentence groups, defined by the predictions of every
    model in ``models`` (zero-shot ones only with ``include_zero_shot``, or when there is nothing else; see
    :mod:`gecobench.evaluation.filters`).

    ``predictions_out`` (model path → chunk id → row → class) receives the predictions, so a run reuses them
    instead of predicting twice. Every process of a multi-process run computes the same subset (predictions are
    deterministic on the same chunks and batching), so no process waits for another's."""
    chunks = split_into_chunks(split, settings)
    predictions: dict[str, dict[int, int]] = {}
    facts: dict[str, dict[str, Any]] = {}
    for path in models:
        lm = as_loaded_model(path)
        by_chunk = {c: chunk_predictions(lm, split, chunk, settings) for c, chunk in enumerate(chunks)}
        if predictions_out is not None:
            predictions_out[model_key(path)] = by_chunk
        predictions[model_key(path)] = {row: p for chunk_rows in by_chunk.values() for row, p in chunk_rows.items()}
        facts[model_key(path)] = defining_model(lm)
        del lm
    groups = [g for chunk in chunks for g in chunk]
    return shared_subset(split, groups, predictions, facts, include_zero_shot=include_zero_shot)


def paper_subset_for(filters: Sequence[str], config: str, split: GecoSplit, models: Sequence[str | LoadedModel],
                     settings: EvaluationSettings, given: dict[str, FilterSubset]
                     ) -> tuple[FilterSubset | None, str | None, dict[str, dict[int, dict[int, int]]]]:
    """The shared subset a run's ``paper`` records of ``config`` score, where it came from (``file`` or
    ``computed``), and the predictions computing it made (model path → chunk → row → class; reused by the run)."""
    if PAPER not in filters:
        return None, None, {}
    if config in given:
        given[config].check_for(split)
        return given[config], "file", {}
    predictions: dict[str, dict[int, dict[int, int]]] = {}
    subset = compute_paper_subset(models, split, settings, predictions_out=predictions)
    log.info("%s: the paper's filter keeps %d of %d source sentences (shared by %d models)", config, subset.size,
             subset.n_considered, len(subset.defined_by))
    return subset, "computed", predictions


def subset_protocol(name: str, subset: FilterSubset | None) -> dict[str, Any]:
    """What the shared subset adds to a protocol (and so to the identity): its fingerprint, for ``paper`` only."""
    return {"filter_subset_sha256": subset.fingerprint} if name == PAPER and subset is not None else {}


def _kept_rows(split: GecoSplit, chunk: list[list[int]], predictions: dict[int, int], filter_correct: bool
               ) -> tuple[list[int], int]:
    """Rows to score in a chunk (whole groups only) and the number of malformed groups dropped."""
    kept: list[int] = []
    malformed = 0
    for group in chunk:
        if not all(scorable(split.rows[i]) for i in group):
            malformed += 1
            continue
        if filter_correct and not group_correct(split, group, predictions):
            continue
        kept.extend(group)
    return kept, malformed


def rows_for_filter(split: GecoSplit, chunk: list[list[int]], predictions: dict[int, int], name: str,
                    subset: FilterSubset | None = None) -> tuple[list[int], int]:
    """Rows a named filter keeps in a chunk (whole groups only) and the number of malformed groups dropped:
    ``none`` every scorable group, ``per_model`` the groups this model classifies correctly in every variant,
    ``paper`` the groups of the shared ``subset``."""
    if name == PAPER:
        if subset is None:
            raise ValueError("the paper's filter needs its shared subset")
        return rows_in_subset(split, chunk, subset), _kept_rows(split, chunk, predictions, False)[1]
    return _kept_rows(split, chunk, predictions, name == PER_MODEL)


def filtered_chunk(split: GecoSplit, chunk: dict[str, Any], name: str = PER_MODEL,
                   subset: FilterSubset | None = None) -> dict[str, Any]:
    """A gathered chunk computed on every scorable row, cut down to the groups the correctness filter keeps.

    Every per-row column (scores of each kind, faithfulness, diagnostics) keeps the kept rows' entries; the
    chunk's seconds shrink in proportion, so seconds per sentence stay those of the attributions themselves.
    """
    kept, _ = rows_for_filter(split, chunk["groups"], chunk["predictions"], name, subset)
    position = {row: p for p, row in enumerate(chunk["kept"])}
    picks = [position[row] for row in kept]
    share = len(kept) / len(chunk["kept"]) if chunk["kept"] else 0.0

    def pick(column: Any) -> Any:
        if column is None:
            return None
        if isinstance(column, dict):  # faithfulness or diagnostics: a dict of per-row columns
            return {name: pick(values) for name, values in column.items()}
        return [column[p] for p in picks]

    explainers = {}
    for key, result in chunk["explainers"].items():
        explainers[key] = {**result,
                           "scores": {kind: pick(column) for kind, column in result["scores"].items()},
                           "seconds": {name: value * share for name, value in result["seconds"].items()}}
    return {**chunk, "kept": kept, "explainers": explainers}
