"""The main job: explainers × models × GECO configs → validated ``explainer_score`` records in the results store.

This module orchestrates the stages, each in its own module:

* settings — :mod:`gecobench.evaluation.settings` (:class:`EvaluationSettings`, :class:`ExplainerSpec`);
* models — :mod:`gecobench.evaluation.modelling` (loading, predictions, perturbed copies, stored facts);
* chunks and filters — :mod:`gecobench.evaluation.chunks` (the work units, the rows each filter keeps) and
  :mod:`gecobench.evaluation.filters` (the shared subset);
* the zero-shot reference — :mod:`gecobench.evaluation.zero_shot` (which model; its scores per chunk) and
  :mod:`gecobench.evaluation.published_reference` (published bundles of them);
* chunk attribution — :mod:`gecobench.evaluation.attribution` (:class:`~gecobench.evaluation.attribution.
  ChunkAttributions`), checkpointed by :mod:`gecobench.evaluation.checkpoints`;
* scoring and records — :mod:`gecobench.evaluation.records` (every metric through
  :mod:`gecobench.evaluation.scoring`, :mod:`~gecobench.evaluation.properties` and
  :mod:`~gecobench.evaluation.faithfulness`; the records and their side files);
* what the run reports — :mod:`gecobench.evaluation.summary` (:class:`RunSummary`, :class:`ExplainerFailure`).

The command line (``gecobench evaluate``), the Python front door (:mod:`gecobench.api`), the submission queue
and the reference run all call :func:`run_evaluation` (and the reference :func:`derive_records`), so they share
every stage.

Flow for one (GECO config, model):

1. the test split's sentence groups (all gender variants of one source sentence) are cut into fixed chunks of
   ``chunk_size`` groups; the chunks — not the processes — define the work, so 1 and N processes compute the
   same thing;
2. the chunks are shared out between the processes by estimated cost (the property and faithfulness chunks
   cost more: :mod:`gecobench.evaluation.scheduling`); each process predicts its chunks, applies the correctness
   filter (keep a group only if every variant is classified correctly) and, per explainer, computes the word
   scores the metrics need — the model's, the zero-shot reference's (RMA), a re-initialised copy's (MRC), a noisy
   copy's (SNC) and other targets' (LD) — writing a checkpoint per chunk;
   the model, its zero-shot reference and its perturbed copies get the same per-chunk seed, so a stochastic
   explainer uses the same random numbers on each (common random numbers);
3. the per-chunk results are gathered on the main process (``gather_object``), which scores them, computes the
   cross-explainer metric (DMA) and the paired MA comparisons between the run's explainers, and appends one
   record per explainer to the store. A record that already exists (same identity: explainer and parameters,
   checkpoint, data and protocol, not the companions it ran beside) is not written again, so reruns, resumed
   runs and reruns with another set of explainers never duplicate. The numbers that do depend on the companions
   (DMA, the paired comparisons) say which set they were computed against in the record's ``agreement`` block.

Fail-soft: an explainer that raises on a chunk is reported (:class:`ExplainerFailure`: explainer, model, config,
the sentence it failed on, the error) and left out of that model's records; the other explainers' records are
written as if it had not run, and the chunks already computed (its own included) stay checkpointed. An explainer
whose ``fit`` raises (one that learns from data) is reported the same way for every model of the config
(``stage="fit"``, no chunk or sentence) and not run on them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gecobench.evaluation.attribution import (
    SCORE_KINDS,
    ChunkAttributions,
    InputError,
    compute_chunk,
    locate_failure,
    precomputed_chunk,
)
from gecobench.evaluation.checkpoints import CheckpointStore, checkpoint_key, spec_checkpoint_key
from gecobench.evaluation.chunks import (
    chunk_predictions,
    compute_paper_subset,
    filtered_chunk,
    paper_subset_for,
    rows_for_filter,
    split_into_chunks,
    subset_protocol,
)
from gecobench.evaluation.data import load_split, scorable
from gecobench.evaluation.faithfulness import FaithfulnessProbe
from gecobench.evaluation.filters import NONE, PAPER, FilterSubset, FilterSubsetError, filter_name, load_filter_subsets
from gecobench.evaluation.modelling import (
    LoadedModel,
    PerturbedCopies,
    StoredModel,
    as_loaded_model,
    model_key,
    stored_model_facts,
)
from gecobench.evaluation.precomputed import PrecomputedExplainer
from gecobench.evaluation.published_reference import PublishedReferences, load_published_references
from gecobench.evaluation.records import (
    AGREEMENT_FIELDS,
    agreement_block,
    append_records,
    compared_explainers,
    identity_record,
    record_ids,
    record_protocol,
)
from gecobench.evaluation.scheduling import assign_chunks, chunk_cost
from gecobench.evaluation.settings import (
    ATTRIBUTION_PROTOCOL_KEYS,
    FAITHFULNESS_PROTOCOL,
    EvaluationSettings,
    ExplainerSpec,
    comparison_label,
    parse_specs,
)
from gecobench.evaluation.summary import FIT, ExplainerFailure, RunSummary
from gecobench.evaluation.zero_shot import (
    ZERO_SHOT_REGIME,
    ZeroShotReference,
    check_zero_shot,
    find_zero_shot_reference,
    reference_chunk_attributions,
    reference_chunk_rows,
    reference_unit,
)
from gecobench.explainers.base import Explainer, fit_explainers, get_explainer
from gecobench.store import open_results_store

# The names callers import from this module, whose homes are now the stage modules above.
__all__ = [
    "AGREEMENT_FIELDS", "ATTRIBUTION_PROTOCOL_KEYS", "FAITHFULNESS_PROTOCOL", "SCORE_KINDS", "ZERO_SHOT_REGIME",
    "ChunkAttributions",
    "EvaluationSettings", "ExplainerFailure", "ExplainerSpec", "RunSummary", "StoredModel", "agreement_block",
    "checkpoint_key", "chunk_predictions", "compared_explainers", "comparison_label", "compute_paper_subset",
    "derive_records", "find_zero_shot_reference", "reference_chunk_attributions", "reference_chunk_rows",
    "rows_for_filter", "run_evaluation", "spec_checkpoint_key", "split_into_chunks", "stored_model_facts",
]

log = logging.getLogger("gecobench.evaluation")


def _accelerator() -> Any:
    from accelerate import Accelerator

    return Accelerator(cpu=True) if not _cuda_available() else Accelerator()


def process_state() -> Any:
    """accelerate's state of this process among those of an ``accelerate launch`` (without one: the only, main,
    process), on the device :func:`run_evaluation` picks: who is the main process, and a barrier."""
    from accelerate import PartialState

    return PartialState(cpu=True) if not _cuda_available() else PartialState()


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _fit(explainers: list[Explainer], specs: list[ExplainerSpec], config: str, split: Any,
         settings: EvaluationSettings) -> dict[str, tuple[str, BaseException]]:
    """Fit the explainers that learn from data on the split they name: Pattern Variant on the split being
    explained, as the paper's authors do (all its rows: labels only, never ground truth), others on train.

    Fail-soft: returns, per spec key, the comparison label and the exception of each explainer whose ``fit``
    raised (it is then skipped for every model of the config)."""
    raised: dict[int, BaseException] = {}
    fit_explainers(explainers, explained=lambda rows=split.rows: rows, train=lambda config=config: [
        r for r in load_split(config, "train", settings.data_dir).rows if scorable(r)],
        on_error=lambda explainer, err: raised.setdefault(id(explainer), err))
    failed = {spec.key(): (comparison_label(spec, explainer), raised[id(explainer)])
              for spec, explainer in zip(specs, explainers) if id(explainer) in raised}
    for label, err in failed.values():
        log.error("explainer %s failed to fit on config %s: %s: %s; it is skipped for this config's models",
                  label, config, type(err).__name__, err)
    return failed


def _fit_failure(label: str, err: BaseException, lm: LoadedModel, config: str) -> ExplainerFailure:
    return ExplainerFailure(explainer=label, model=lm.name, config=config, chunk=None, sentence_ids=[],
                            error_type=type(err).__name__, message=str(err)[:500], stage=FIT)


def run_evaluation(
    explainers: list[ExplainerSpec | str], models: Sequence[str | LoadedModel], configs: list[str],
    settings: EvaluationSettings | None = None, store_location: str | None = None,
    checkpoint_dir: str | Path = "runs/eval_checkpoints", progress: bool = True,
    instances: list[Explainer] | None = None, filters: Sequence[str | bool] | None = None,
    reference_attributions: str | Path | PublishedReferences | None = None,
    zero_shot: str | LoadedModel | None = None,
    filter_subsets: Any = None, unit_columns: dict[str, dict[str, Any]] | None = None,
) -> RunSummary:
    """Evaluate every explainer × model × config; append one record each to the results store.

    ``instances`` (one per spec) replaces the registry lookup: the submission worker passes
    :class:`~gecobench.evaluation.precomputed.PrecomputedExplainer` objects here, so sandboxed and self-reported
    attributions are scored by exactly this path.

    ``filters`` are the correctness filters to write records for, by name (:mod:`gecobench.evaluation.filters`:
    ``paper``, ``per_model``, ``none``; default ``settings.filter`` alone; the old booleans still work: True is
    ``paper``, False ``none``). With two or more, every attribution is computed once, on every scorable sentence,
    and each filter's records score the sentences it keeps: the numbers of separate runs for the cost of one.

    The ``paper`` filter scores every model of a config on one shared subset: the one ``filter_subsets`` gives for
    the config (a subset file, a folder of ``<config>.json`` files or a reference folder holding ``filters/``, or
    :class:`~gecobench.evaluation.filters.FilterSubset` objects; refused when made for other data), else the one
    defined by the predictions of every (non-zero-shot) model of the run. ``RunSummary.filter_subsets`` holds the
    subsets used, for the caller to write.

    ``models`` are zoo checkpoint folders or already loaded models
    (:func:`~gecobench.evaluation.modelling.loaded_from_objects`: the Python front door's model objects), and so
    may ``zero_shot`` be.

    ``zero_shot`` names a zero-shot checkpoint to use as the RMA reference of the models of its base without
    evaluating it (by default one is looked for among ``models`` and next to each model).

    ``reference_attributions`` (a bundle, a folder of bundles, a reference dataset folder or its Hub id; see
    :mod:`gecobench.evaluation.published_reference`) supplies zero-shot reference attributions published for the
    run's zero-shot checkpoints, data and attribution protocol, so they are read instead of computed.

    ``unit_columns`` (a dict, filled when the run computes on every scorable row, i.e. with the ``none`` filter
    among ``filters``): model path → the gathered chunks every record of the model is scored from, and the
    facts of the model and its zero-shot reference, so that the records of another filter can be built later
    from them without the weights (:func:`derive_records`; :mod:`gecobench.evaluation.unit_columns` stores them).
    A model whose records exist already is then gathered again from its chunk checkpoints.

    Safe to run under ``accelerate launch`` / ``torchrun`` with any number of processes: only the main process
    writes records. Returns a :class:`RunSummary` (meaningful on the main process).
    """
    from accelerate.utils import gather_object

    settings = settings or EvaluationSettings()
    filters = tuple(dict.fromkeys(filter_name(f) for f in filters)) if filters is not None else (settings.filter,)
    specs = parse_specs(explainers)
    if not specs or not models or not configs or not filters:
        raise ValueError("need at least one explainer, one model, one config and one filter")
    if instances is not None and len(instances) != len(specs):
        raise ValueError(f"{len(instances)} explainer instances for {len(specs)} explainer specs")
    # The rows attributions are computed on: one filter's only when every record has that filter, else every
    # scorable row (each filter's records then pick their rows).
    compute_filter = filters[0] if len(filters) == 1 else NONE
    compute_filtered = compute_filter != NONE
    variants = {f: dataclasses.replace(settings, filter=f) for f in filters}
    computed = dataclasses.replace(settings, filter=compute_filter)
    given_subsets = load_filter_subsets(filter_subsets)
    if filter_subsets is not None and PAPER in filters and set(configs) - set(given_subsets):
        # a subset file of another config would otherwise be passed over silently, and the run score other sentences
        raise FilterSubsetError(f"filter subsets given for config(s) {sorted(given_subsets)}, none for "
                                f"{sorted(set(configs) - set(given_subsets))}: give one per config of the run")
    accelerator = _accelerator()
    store = open_results_store(store_location)
    checkpoints = CheckpointStore(checkpoint_dir)
    summary = RunSummary()
    # A zero-shot reference's scores cover every scorable row whatever the filter, and are keyed by what they depend
    # on only, so runs with other property, faithfulness or bootstrap settings share them.
    reference_protocol = computed.attribution_protocol()
    reference_cache: dict[str, LoadedModel] = {}  # by model_key
    published = (reference_attributions if isinstance(reference_attributions, PublishedReferences)
                 else load_published_references(reference_attributions))
    candidates = list(models)
    if zero_shot is not None:
        check_zero_shot(zero_shot)
        candidates.append(zero_shot)

    for config in configs:
        split = load_split(config, settings.split, settings.data_dir)
        chunks = split_into_chunks(split, settings)
        subset, subset_source, run_predictions = paper_subset_for(filters, config, split, models, settings,
                                                                  given_subsets)
        if subset is not None:
            summary.filter_subsets[config] = subset
        explainers_now = list(instances) if instances is not None else [
            get_explainer(spec.name, **spec.params) for spec in specs]
        fit_failed = _fit(explainers_now, specs, config, split, settings)

        for model_path in models:
            lm = as_loaded_model(model_path)
            if accelerator.is_main_process:
                summary.failures.extend(_fit_failure(label, err, lm, config) for label, err in fit_failed.values())
            if len(fit_failed) == len(specs):
                continue  # no explainer left to run on this config's models
            ref_path, ref_reason = find_zero_shot_reference(lm, candidates)
            reference = None
            if ref_path is not None:
                reference = reference_cache.get(model_key(ref_path)) or as_loaded_model(ref_path)
                reference_cache[model_key(ref_path)] = reference
            # The RMA reference changes a record's numbers, so it is part of the protocol (and of the identity).
            # The explainers compared with (DMA, paired MA differences) are not: they are named in the record's
            # agreement block, so a rerun beside other explainers finds the records it wrote and writes none twice.
            extra_protocol = {"rma_reference_sha256": reference.checkpoint_sha256 if reference else None}
            units: dict[str, tuple[dict[str, Any], list[dict[str, Any]], list[str]]] = {}
            for flag, variant in variants.items():
                unit_protocol = record_protocol(variant, extra_protocol["rma_reference_sha256"], subset)
                identities = [identity_record(s, e, lm, split, unit_protocol) for s, e in zip(specs, explainers_now)]
                units[flag] = (unit_protocol, identities, record_ids(identities))
            # an explainer that failed to fit has no records to look for: the others' decide whether to skip
            runnable = [i for i, spec in enumerate(specs) if spec.key() not in fit_failed]
            if unit_columns is None and all(store.exists("explainer_score", ids[i])
                                            for _, _, ids in units.values() for i in runnable):
                summary.existing.extend(ids[i] for _, _, ids in units.values() for i in runnable)
                log.info("records for %s on %s already in the store; skipped", model_key(model_path), config)
                continue
            # Checkpointed chunk scores depend on the explainer alone, not on which others run beside it: a run
            # with another explainer set reuses them (only the records' comparisons are recomputed).
            chunk_protocol = {**computed.protocol(), "rma_reference_sha256": extra_protocol["rma_reference_sha256"],
                              **subset_protocol(compute_filter, subset)}
            unit = hashlib.sha256(json.dumps([lm.checkpoint_sha256, split.fingerprint, chunk_protocol],
                                             sort_keys=True).encode()).hexdigest()[:16]
            # The zero-shot model's own attributions on every scorable row are the RMA reference of the others.
            own_reference_unit = (reference_unit(lm, split, reference_protocol)
                                  if lm.regime == ZERO_SHOT_REGIME and not compute_filtered else None)
            zero_shot_reference = (ZeroShotReference(reference, split, settings, checkpoints, reference_protocol,
                                                     published) if reference is not None else None)
            # Balanced by cost, not count: the property and faithfulness chunks are the first ones.
            costs = [chunk_cost(sum(len(g) for g in chunk), reference=reference is not None,
                                properties=settings.properties_in_chunk(c),
                                faithfulness=settings.faithfulness_in_chunk(c),
                                n_classes=lm.num_labels)
                     for c, chunk in enumerate(chunks)]
            my_chunks = assign_chunks(costs, accelerator.num_processes)[accelerator.process_index]
            local_results = _explain_chunks(
                my_chunks, chunks, specs, explainers_now, set(fit_failed), lm, split, config, settings,
                compute_filter, subset, (run_predictions.get(model_key(model_path)) or {}), checkpoints, unit,
                own_reference_unit, zero_shot_reference, progress and accelerator.is_main_process)
            gathered = gather_object(local_results)
            if accelerator.is_main_process:
                by_chunk = {r["chunk"]: r for r in gathered}
                if sorted(by_chunk) != list(range(len(chunks))):
                    raise RuntimeError(f"gathered chunks {sorted(by_chunk)} do not cover 0..{len(chunks) - 1}")
                ordered = [by_chunk[c] for c in range(len(chunks))]
                failures = {key: ExplainerFailure(**f) for r in ordered for key, f in r["failed"].items()}
                summary.failures.extend(failures.values())
                # the explainers that completed every chunk (on every process) are scored; the others are not
                alive = [i for i in runnable if specs[i].key() not in failures]
                alive_specs = [specs[i] for i in alive]
                alive_instances = [explainers_now[i] for i in alive]
                summary.resumed_seconds += sum(r["resumed_seconds"] for r in ordered)
                cpu = [r["resumed_cpu_seconds"] for r in ordered]
                summary.resumed_cpu_seconds = (None if summary.resumed_cpu_seconds is None or None in cpu
                                               else summary.resumed_cpu_seconds + sum(cpu))
                if unit_columns is not None and compute_filter == NONE:
                    unit_columns[model_key(model_path)] = {
                        "chunks": ordered, "model": stored_model_facts(lm), "reference": (
                            stored_model_facts(reference) if reference is not None else None),
                        "reference_reason": ref_reason, "n_processes": accelerator.num_processes}
                for flag, (unit_protocol, identities, ids) in units.items():
                    identities = [identities[i] for i in alive]
                    ids = [ids[i] for i in alive]
                    if not ids:
                        continue
                    if all(store.exists("explainer_score", rid) for rid in ids):
                        summary.existing.extend(ids)
                        continue
                    scored = (ordered if flag == compute_filter
                              else [filtered_chunk(split, c, flag, subset) for c in ordered])
                    append_records(store, summary, alive_specs, alive_instances, identities, ids, lm, split,
                                   scored, variants[flag], unit_protocol, reference, ref_reason,
                                   accelerator.num_processes, flag, subset, subset_source)
            accelerator.wait_for_everyone()
    return summary


def _explain_chunks(my_chunks: list[int], chunks: list[list[list[int]]], specs: list[ExplainerSpec],
                    explainers: list[Explainer], skipped: set[str], lm: LoadedModel, split: Any, config: str,
                    settings: EvaluationSettings, compute_filter: str, subset: Any,
                    known_predictions: dict[int, dict[int, int]], checkpoints: CheckpointStore, unit: str,
                    own_reference_unit: str | None, reference: ZeroShotReference | None,
                    show_progress: bool) -> list[dict[str, Any]]:
    """This process's chunks of one model, each explainer's attributions on each (resumed from its checkpoint or
    computed and checkpointed): the chunks as gathered. ``skipped`` (spec keys): explainers not to run (their fit
    raised); an explainer that raises on a chunk is reported in that chunk's ``failed`` and not run on later ones.
    """
    from tqdm.auto import tqdm

    perturbed = PerturbedCopies(lm.model, settings.noise_std, settings.randomisation_seed)
    probe = FaithfulnessProbe(lm.model, lm.tokenizer) if settings.faithfulness else None
    local_results = []
    failed_here: dict[str, ExplainerFailure] = {}  # spec key → its first failure on this model
    bar = tqdm(total=len(my_chunks) * len(specs), desc=f"{lm.name} · {config}", unit="chunk×explainer",
               disable=not show_progress)
    for chunk_id in my_chunks:
        chunk = chunks[chunk_id]
        chunk_rows = [i for g in chunk for i in g]
        predictions = known_predictions.get(chunk_id) or chunk_predictions(lm, split, chunk, settings)
        kept, malformed = rows_for_filter(split, chunk, predictions, compute_filter, subset)
        chunk_probe = probe if settings.faithfulness_in_chunk(chunk_id) else None
        if chunk_probe is not None:
            chunk_probe.forget()  # its cache serves the explainers of one chunk; the next holds others
        per_explainer = {}
        resumed_seconds, resumed_cpu = 0.0, 0.0
        for spec, explainer in zip(specs, explainers):
            if spec.key() in failed_here or spec.key() in skipped:
                bar.update(1)  # it raised on an earlier chunk of this model (or in fit): its records are not written
                continue
            if isinstance(explainer, PrecomputedExplainer):
                per_explainer[spec.key()] = precomputed_chunk(explainer, split, kept, settings, reference is not None,
                                                              chunk_id, chunk_probe).gathered()
                bar.update(1)
                continue
            ck_key = checkpoint_key(spec, explainer)
            payload = checkpoints.load(unit, ck_key, chunk_id, kept)
            result = ChunkAttributions.from_checkpoint(payload) if payload is not None else None
            if result is not None and isinstance(result.seconds, dict):
                resumed_seconds += float(result.seconds.get("total", 0.0))
                # checkpoints written before CPU seconds were kept have none: the sum is then unknown
                resumed_cpu = (resumed_cpu + float(result.seconds["cpu"])
                               if resumed_cpu is not None and "cpu" in result.seconds else None)
            if result is None:
                try:
                    result = compute_chunk(explainer, spec, lm, perturbed, split, chunk, chunk_id, kept, settings,
                                           reference, chunk_probe)
                except InputError as wrapped:
                    raise wrapped.__cause__ from None
                except Exception as err:  # noqa: BLE001 - fail-soft: any explainer error is reported
                    failure = locate_failure(explainer, spec, lm, split, config, chunk_id, kept, settings, err)
                    log.error("%s; its records for this model are not written", failure.describe())
                    failed_here[spec.key()] = failure
                    bar.update(1)
                    continue
                checkpoints.save(unit, ck_key, chunk_id, kept, result.scores, result.seconds,
                                 {"reference_source": result.reference_source} if result.reference_source else None)
            if own_reference_unit is not None and kept and checkpoints.load(
                    own_reference_unit, ck_key, chunk_id, kept) is None:
                checkpoints.save(own_reference_unit, ck_key, chunk_id, kept, {"reference": result.scores["main"]}, 0.0)
            per_explainer[spec.key()] = result.gathered()
            bar.set_postfix_str(spec.name)
            bar.update(1)
        local_results.append({"chunk": chunk_id, "groups": chunk, "rows": chunk_rows,
                              "predictions": predictions, "kept": kept, "malformed": malformed,
                              "explainers": per_explainer, "resumed_seconds": resumed_seconds,
                              "resumed_cpu_seconds": resumed_cpu,
                              "failed": {k: dataclasses.asdict(f) for k, f in failed_here.items()
                                         if f.chunk == chunk_id}})
    bar.close()
    return local_results


def derive_records(explainers: list[ExplainerSpec | str], config: str, columns: dict[str, dict[str, Any]],
                   settings: EvaluationSettings, filter: str, store_location: str | None,
                   subset: FilterSubset | None = None, data_dir: str | None = None) -> RunSummary:
    """The records of ``filter`` for every model of ``columns`` (what :func:`run_evaluation` gathered with the
    ``none`` filter: model path → chunks and facts), built by the run's own scoring path from the chunks cut down to
    the filter's rows: what a run with that filter and the same attributions writes, without loading any model.

    The explainers must be the run's, in its order (their chunk columns are keyed by spec); the records of the
    ``paper`` filter score ``subset`` (checked against the split) and name it as a subset read from a file."""
    name = filter_name(filter)
    specs = parse_specs(explainers)
    split = load_split(config, settings.split, data_dir if data_dir is not None else settings.data_dir)
    if name == PAPER:
        if subset is None:
            raise ValueError(f"{config}: records of the paper's filter need its shared subset")
        subset.check_for(split)
    explainers_now = [get_explainer(spec.name, **spec.params) for spec in specs]
    # not fail-soft: the columns hold every explainer's scores, so each was fitted when they were computed
    fit_explainers(explainers_now, explained=lambda rows=split.rows: rows, train=lambda: [
        r for r in load_split(config, "train", settings.data_dir).rows if scorable(r)])
    variant = dataclasses.replace(settings, filter=name)
    store = open_results_store(store_location)
    summary = RunSummary()
    if subset is not None and name == PAPER:
        summary.filter_subsets[config] = subset
    for model_path, entry in columns.items():
        lm = StoredModel.from_json(entry.get("model"), f"columns of {model_path}")
        reference = (StoredModel.from_json(entry["reference"], f"reference of {model_path}")
                     if entry.get("reference") is not None else None)
        chunks = entry["chunks"]
        wanted = {spec.key() for spec in specs}
        for chunk in chunks:
            if not wanted <= set(chunk["explainers"]):
                raise ValueError(f"columns of {model_path}, chunk {chunk['chunk']}: no scores of "
                                 f"{sorted(wanted - set(chunk['explainers']))}")
        # the protocol a run with this filter writes (the compared explainers are in the agreement block, outside
        # the identity), so a derived record has the id of the record a direct run writes
        protocol = record_protocol(variant, reference.checkpoint_sha256 if reference is not None else None, subset)
        identities = [identity_record(s, e, lm, split, protocol) for s, e in zip(specs, explainers_now)]
        ids = record_ids(identities)
        if all(store.exists("explainer_score", rid) for rid in ids):
            summary.existing.extend(ids)
            continue
        scored = chunks if name == NONE else [filtered_chunk(split, c, name, subset) for c in chunks]
        append_records(store, summary, specs, explainers_now, identities, ids, lm, split, scored,
                       variant, protocol, reference, entry.get("reference_reason"),
                       int(entry.get("n_processes") or 1), name, subset, "file" if subset is not None else None)
    return summary
