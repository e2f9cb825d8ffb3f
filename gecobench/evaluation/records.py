"""From gathered chunks to validated ``explainer_score`` records: identity, scoring, record building, writing.

* :func:`identity_record` — the fields of a record its id is computed from, known before any score is (so a run
  skips a unit whose records exist).
* :func:`score_explainer` — every metric of one explainer on one filter's chunks, through the functions of
  :mod:`gecobench.evaluation.scoring`, :mod:`~gecobench.evaluation.properties` and
  :mod:`~gecobench.evaluation.faithfulness` (the math the ``evaluate`` metric modules wrap): the one scoring path
  of a run, of records derived later from stored columns and of submissions.
* :func:`build_records` — one validated record per explainer, with the cross-explainer numbers (DMA, paired
  comparisons) and the ``agreement`` block naming the explainers they were computed against.
* :func:`append_records` — the above plus the ``filter`` block, appended to the results store with the
  per-sentence side files.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gecobench.evaluation.attribution import summarize_diagnostics
from gecobench.evaluation.by_gender import GenderBreakdown, ScoredSentences
from gecobench.evaluation.chunks import subset_protocol
from gecobench.evaluation.data import GecoSplit
from gecobench.evaluation.faithfulness import score_faithfulness
from gecobench.evaluation.filters import FilterSubset, record_filter_block
from gecobench.evaluation.modelling import training_fingerprint
from gecobench.evaluation.origin import USER, explainer_source, source_fingerprint
from gecobench.evaluation.precomputed import PrecomputedExplainer
from gecobench.evaluation.properties import score_agreement, score_properties
from gecobench.evaluation.published_reference import COMPUTED
from gecobench.evaluation.scoring import paired_comparisons, score_correctness
from gecobench.evaluation.sentence_scores import sentence_scores_document, write_sentence_scores
from gecobench.evaluation.settings import FAITHFULNESS_PROTOCOL, EvaluationSettings, ExplainerSpec, comparison_label
from gecobench.evaluation.summary import RunSummary
from gecobench.explainers.base import Explainer
from gecobench.flags import record_flags
from gecobench.gender import BY_GENDER
from gecobench.provenance import base_provenance
from gecobench.records import SCHEMA_VERSION, explainer_score_identity, record_id_for, validate_record

__all__ = ["AGREEMENT_FIELDS", "ExplainerScores", "agreement_block", "append_records", "build_records",
           "compared_explainers", "identity_record", "record_ids", "record_protocol", "score_explainer", "with_filter_blocks"]

log = logging.getLogger("gecobench.evaluation")

#: the record fields whose values depend on the run's other explainers (see :func:`agreement_block`)
AGREEMENT_FIELDS = ("metrics.methods_agreement", "by_gender.metrics.methods_agreement", "comparisons")


def identity_record(spec: ExplainerSpec, explainer: Explainer, lm: Any, split: GecoSplit,
                    protocol: dict[str, Any]) -> dict[str, Any]:
    """The fields of a record that :func:`gecobench.records.explainer_score_identity` reads, known before any
    score is computed (so a rerun can skip a unit whose records already exist)."""
    explainer_block = {"name": spec.name, "version": str(explainer.version), "params": explainer.params()}
    # Where a non-built-in explainer comes from is part of its identity (issue #16): a submission named like a
    # built-in, or two submissions with one name and version, never share a record; a user's explainer edited
    # without a new version gets a new record (its source fingerprint). Built-ins add nothing, so their record
    # ids depend only on what they compute.
    source = explainer_source(explainer)
    if source in ("submission", "self-reported"):
        explainer_block.update(source=source, submission_id=getattr(explainer, "submission_id", None),
                               submission_sha256=getattr(explainer, "submission_sha256", None))
    elif source == USER:
        explainer_block.update(source=source, source_sha256=source_fingerprint(explainer))
    return {
        "explainer": explainer_block,
        "model": {"regime": lm.regime, "base_model": lm.base_model, "base_revision": lm.info.get("base_revision"),
                  "seed": lm.info.get("seed"), "checkpoint_sha256": lm.checkpoint_sha256,
                  "training_fingerprint": training_fingerprint(lm.info)},
        "dataset": {"config": split.config, "split": split.split, "fingerprint": split.fingerprint},
        "protocol": protocol,
    }


def record_protocol(variant: EvaluationSettings, rma_reference_sha256: str | None,
                    subset: FilterSubset | None) -> dict[str, Any]:
    """The ``protocol`` block of the records of one model under one filter (``variant.filter``): the settings'
    protocol, the RMA reference checkpoint (it changes the numbers) and, for ``paper``, the shared subset's
    fingerprint. One function for a run and for records derived from its columns, so both get the same ids."""
    return {**variant.protocol(), "rma_reference_sha256": rma_reference_sha256,
            **subset_protocol(variant.filter, subset)}


def record_ids(identities: Sequence[dict[str, Any]]) -> list[str]:
    """The record id of each identity (:func:`identity_record`)."""
    return [record_id_for(explainer_score_identity(i)) for i in identities]


def compared_explainers(specs: list[ExplainerSpec], instances: list[Explainer]) -> list[str]:
    """The explainers of a run (:func:`~gecobench.evaluation.settings.comparison_label`), sorted: the set
    agreement metrics and paired comparisons are computed against, recorded in each record's ``agreement`` block
    (outside the identity)."""
    return sorted(comparison_label(spec, explainer) for spec, explainer in zip(specs, instances))


def agreement_block(compared: Sequence[str]) -> dict[str, Any]:
    """The record's ``agreement`` block: the set of explainers its cross-explainer numbers (DMA, its per-gender
    entry, the paired comparisons) were computed against, and that set's key. Not part of the identity, so an
    explainer's record does not depend on its companions; schema 2.2 (2.1 held the set in the protocol)."""
    labels = sorted(compared)
    return {"compared_explainers": labels,
            "compared_set_sha256": hashlib.sha256(json.dumps(labels).encode("utf-8")).hexdigest(),
            "covers": list(AGREEMENT_FIELDS)}


def with_filter_blocks(records: list[dict[str, Any]], name: str, split: GecoSplit, chunks: list[dict[str, Any]],
                       subset: FilterSubset | None, subset_source: str | None, lm: Any) -> list[dict[str, Any]]:
    """Each record with its ``filter`` block (name, size and fingerprint of the sentences scored; the shared
    subset's own and its defining models). Outside the identity: the protocol holds the subset's fingerprint."""
    kept = [i for c in chunks for i in c["kept"]]
    block = record_filter_block(name, kept, split, subset, {"checkpoint_sha256": lm.checkpoint_sha256},
                                subset_source)
    return [validate_record({**record, "filter": block}) for record in records]


def append_records(store: Any, summary: RunSummary, specs: list[ExplainerSpec], explainers: list[Explainer],
                   identities: list[dict[str, Any]], record_ids: list[str], lm: Any, split: GecoSplit,
                   scored: list[dict[str, Any]], settings: EvaluationSettings, protocol: dict[str, Any],
                   reference: Any, ref_reason: str | None, n_processes: int, flag: str,
                   subset: FilterSubset | None, subset_source: str | None) -> None:
    """Score one filter's chunks of one model, and append its records (and side files) to ``store``: the one
    path from gathered chunks to records, for a run and for records derived later
    (:func:`~gecobench.evaluation.runner.derive_records`)."""
    side_documents: dict[str, dict[str, Any]] = {}
    records = build_records(specs, explainers, identities, record_ids, lm, split, scored, settings, protocol,
                            reference, ref_reason, n_processes, side_documents)
    records = with_filter_blocks(records, flag, split, scored, subset, subset_source, lm)
    for record in records:
        if store.exists("explainer_score", record["record_id"]):
            summary.existing.append(record["record_id"])
            continue
        store.append(record)
        summary.written.append(record["record_id"])
        if record["record_id"] in side_documents:  # the Space's per-sentence drill-down
            write_sentence_scores(store, side_documents[record["record_id"]])


def _scored_sentences(split: GecoSplit, chunks: list[dict[str, Any]], subsample: str, limit: int | None
                      ) -> ScoredSentences:
    """The kept rows of ``chunks`` (a metric's subsample, in row order) as the per-gender block sees them; the
    subsample is named only when it is one (``limit`` source sentences), not every scored sentence."""
    rows = [i for c in chunks for i in c["kept"]]
    return ScoredSentences.of([split.rows[i].label for i in rows], [split.rows[i].sentence_id for i in rows],
                              subsample if limit is not None else None, limit)


def _reference_source(chunks: list[dict[str, Any]], key: str, reference: Any) -> str | None:
    """Where an explainer's zero-shot reference attributions came from, over the chunks with scored rows:
    ``computed``, ``published:<bundle SHA-256>``, the submission's own, or ``mixed: …`` when chunks differ."""
    if reference is None:
        return None
    # chunks checkpointed before sources were kept were computed: nothing was published then
    found = sorted({c["explainers"][key].get("reference_source") or COMPUTED for c in chunks if c["kept"]})
    if not found:
        return None
    return found[0] if len(found) == 1 else "mixed: " + ", ".join(found)


def _per_sentence_seconds(explainer: Explainer, main_seconds: float, n_kept: int) -> float | None:
    if not n_kept or (isinstance(explainer, PrecomputedExplainer) and explainer.seconds_per_row is None):
        return None  # self-reported attributions: their cost is unknown
    return main_seconds / n_kept


def _explainer_diagnostics(chunks: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The explainer's per-sentence diagnostics over all chunks (main attributions), summarised."""
    merged: dict[str, list[float]] = {}
    for chunk in chunks:
        for name, values in (chunk["explainers"][key]["scores"].get("diagnostics") or {}).items():
            merged.setdefault(name, []).extend(values)
    return summarize_diagnostics(merged)


def _collect(chunks: list[dict[str, Any]], key: str, kind: str) -> list[np.ndarray] | None:
    """Scores of one kind over all chunks, in row order; None when that kind was not computed."""
    parts = [c["explainers"][key]["scores"][kind] for c in chunks]
    if any(p is None for p in parts):
        return None
    return [np.asarray(s, dtype=np.float64) for p in parts for s in p]


@dataclass
class ExplainerScores:
    """Every metric of one explainer on one filter's chunks: the record's ``metrics``, ``groups`` and
    ``by_gender`` blocks (None when no sentence was scored) and the per-sentence mass accuracy the paired
    comparisons are computed from (None when no sentence was scored)."""

    metrics: dict[str, Any]
    groups: dict[str, Any]
    by_gender: dict[str, Any] | None
    per_sentence_mass_accuracy: np.ndarray | None


def score_explainer(key: str, explainer: Explainer, split: GecoSplit, chunks: list[dict[str, Any]],
                    settings: EvaluationSettings, reference: Any, ref_reason: str | None,
                    agreement: dict[str, Any], agreement_per_sentence: dict[str, np.ndarray],
                    main_scores: list[np.ndarray] | None = None) -> ExplainerScores:
    """Score one explainer (its chunk columns under ``key``) on the kept rows of ``chunks``: mass accuracy, RMA
    and the per-gender gaps (:func:`~gecobench.evaluation.scoring.score_correctness`), the property metrics on
    their subsample (with the run's DMA, ``agreement``), faithfulness on its subsample, and every metric's
    per-gender values on the sentences it scored. ``main_scores``: the explainer's main scores over ``chunks`` when
    the caller has them already (read from the chunks otherwise)."""
    kept = [i for c in chunks for i in c["kept"]]
    if not kept:
        return ExplainerScores({"mass_accuracy": {"value": None, "n_scored": 0, "n_undefined": 0,
                                                  "reason": "no sentence passed the filter"}}, {}, None, None)
    ground_truth = [list(split.rows[i].ground_truth) for i in kept]
    labels = [split.rows[i].label for i in kept]
    sources = [split.rows[i].sentence_id for i in kept]
    all_scored = ScoredSentences.of(labels, sources)
    scores = main_scores if main_scores is not None else _collect(chunks, key, "main") or []
    reference_scores = _collect(chunks, key, "reference") if reference is not None else None
    precomputed_gap = getattr(explainer, "missing_reason", None)
    reason = ref_reason if reference is None or reference_scores is not None else precomputed_gap
    # every metric's per-sentence values also go to the per-gender block, on the sentences it scored
    breakdown = GenderBreakdown(settings.bootstrap, settings.seed)
    metrics, groups, per_sentence_ma = score_correctness(
        scores, ground_truth, labels, reference_scores, reason, settings.bootstrap, settings.seed,
        source_sentences=sources, by_gender=breakdown.on(all_scored))
    if settings.properties:
        # on the properties subsample: the chunks whose extra attributions were computed
        sub = [c for c in chunks if c["explainers"][key]["scores"].get("randomised") is not None]
        extra = {kind: [np.asarray(s, dtype=np.float64)
                        for c in sub for s in c["explainers"][key]["scores"][kind]]
                 for kind in ("main", "randomised", "noisy", "other_target")} if sub else {}
        sub_truth = [list(split.rows[i].ground_truth) for c in sub for i in c["kept"]] if sub else ground_truth
        metrics.update(score_properties(
            extra.get("main", scores), sub_truth, extra.get("randomised"), extra.get("noisy"),
            extra.get("other_target"), settings, missing_reason=precomputed_gap,
            by_gender=breakdown.on(_scored_sentences(split, sub, "properties", settings.properties_max_groups)
                                   if sub else all_scored)))
        metrics["methods_agreement"] = agreement.get(key, {"value": None, "reason": "not computed"})
        if key in agreement_per_sentence:
            breakdown.add("methods_agreement", agreement_per_sentence[key], all_scored)
    if settings.faithfulness:
        faithful_chunks = [c for c in chunks if settings.faithfulness_in_chunk(c["chunk"])]
        metrics.update(score_faithfulness(
            [c["explainers"][key]["scores"].get("faithfulness") for c in faithful_chunks],
            FAITHFULNESS_PROTOCOL["removal_fractions"], settings.bootstrap, settings.seed,
            by_gender=breakdown.on(_scored_sentences(split, faithful_chunks, "faithfulness",
                                                     settings.faithfulness_max_groups))))
    return ExplainerScores(metrics, groups, breakdown.block(), per_sentence_ma)


def build_records(specs: list[ExplainerSpec], instances: list[Explainer], identities: list[dict[str, Any]],
                  record_ids: list[str], lm: Any, split: GecoSplit, chunks: list[dict[str, Any]],
                  settings: EvaluationSettings, protocol: dict[str, Any], reference: Any,
                  ref_reason: str | None, n_processes: int,
                  side_documents: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Score the gathered chunks and build one validated record per explainer; when ``side_documents`` is given,
    fill it with each record's per-sentence scores (record id → side document)."""
    evaluated_rows = [i for c in chunks for i in c["rows"]]
    predictions = {i: p for c in chunks for i, p in c["predictions"].items()}
    kept = [i for c in chunks for i in c["kept"]]
    ground_truth = [list(split.rows[i].ground_truth) for i in kept]
    sources = [split.rows[i].sentence_id for i in kept]
    n_correct_all = sum(int(predictions[i]) == split.rows[i].label for i in evaluated_rows)
    n_correct_kept = sum(int(predictions[i]) == split.rows[i].label for i in kept)

    main_scores = {s.key(): _collect(chunks, s.key(), "main") or [] for s in specs}
    agreement_per_sentence: dict[str, np.ndarray] = {}
    agreement = (score_agreement(main_scores, ground_truth, settings, agreement_per_sentence)
                 if settings.properties and kept else {})
    records = []
    per_sentence_ma: dict[str, np.ndarray] = {}
    compared = {spec.key(): comparison_label(spec, explainer) for spec, explainer in zip(specs, instances)}
    for spec, explainer, identity, record_id in zip(specs, instances, identities, record_ids):
        key = spec.key()
        label = compared[key]
        seconds = sum(c["explainers"][key]["seconds"]["total"] for c in chunks)
        main_seconds = sum(c["explainers"][key]["seconds"]["main"] for c in chunks)
        scored = score_explainer(key, explainer, split, chunks, settings, reference, ref_reason, agreement,
                                 agreement_per_sentence, main_scores[key])
        if scored.per_sentence_mass_accuracy is not None:
            per_sentence_ma[label] = scored.per_sentence_mass_accuracy
        metrics = scored.metrics
        record = {
            "schema_version": SCHEMA_VERSION,
            "record_type": "explainer_score",
            "record_id": record_id,
            "explainer": {**identity["explainer"], "model_independent": bool(explainer.model_independent),
                          "is_baseline": bool(explainer.is_baseline),
                          "source": explainer_source(explainer),
                          "submission_id": getattr(explainer, "submission_id", None),
                          "diagnostics": _explainer_diagnostics(chunks, key)},
            "model": {**identity["model"], "base_revision": lm.info.get("base_revision"),
                      "zero_shot_method": lm.info.get("zero_shot_method"), "name": lm.name,
                      "train_config": lm.info.get("geco_config", lm.info.get("config")), "num_labels": lm.num_labels,
                      "accuracy_on_scored": (n_correct_kept / len(kept)) if kept else None,
                      "accuracy_on_evaluated": (n_correct_all / len(evaluated_rows)) if evaluated_rows else None,
                      "zero_shot_reference": (reference.name if reference is not None else None),
                      "zero_shot_reference_sha256": (reference.checkpoint_sha256 if reference is not None else None),
                      "zero_shot_reference_source": _reference_source(chunks, key, reference)},
            "dataset": {"name": "geco", **identity["dataset"], "source": split.source},
            "protocol": protocol,
            "metrics": metrics,
            "groups": scored.groups,
            **({BY_GENDER: scored.by_gender} if scored.by_gender is not None else {}),
            "agreement": agreement_block(list(compared.values())),
            "counts": {"n_sentences": len(evaluated_rows), "n_scored": len(kept),
                       "n_undefined": int(metrics["mass_accuracy"].get("n_undefined", 0)),
                       "n_filtered_out": len(evaluated_rows) - len(kept),
                       "n_malformed_groups": sum(c["malformed"] for c in chunks)},
            "runtime": {"total_seconds": seconds,
                        "seconds_per_sentence": _per_sentence_seconds(explainer, main_seconds, len(kept)),
                        "n_processes": n_processes},
            "provenance": base_provenance(settings.seed),
        }
        # The hidden control models' scores (a code submission's, from the worker) and the marks every view shows
        # (gecobench.flags, the one definition of each flag).
        controls = getattr(explainer, "controls", None)
        if controls is not None:
            record["controls"] = controls
        record["flags"] = record_flags(record, controls, getattr(explainer, "ground_truth_match", None))
        records.append(record)
        if side_documents is not None and kept and label in per_sentence_ma:
            try:  # the Space's per-sentence drill-down; the record itself is complete without it
                side_documents[record_id] = sentence_scores_document(record, [split.rows[i] for i in kept],
                                                                     main_scores[key], per_sentence_ma[label])
            except ValueError as err:
                log.warning("no per-sentence scores for %s: %s", record_id, err)
    # Paired comparison with every other explainer of the run, on the same kept sentences: lets the leaderboard
    # say which explainer is better and where two tie.
    comparisons = paired_comparisons(per_sentence_ma, sources, settings.bootstrap, settings.seed + 2)
    for record, key in zip(records, (s.key() for s in specs)):
        if compared[key] in comparisons:
            record["comparisons"] = comparisons[compared[key]]
    return [validate_record(record) for record in records]
