"""The main job: explainers × models × GECO configs → validated ``explainer_score`` records in the results store.

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
written as if it had not run, and the chunks already computed (its own included) stay checkpointed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gecobench.evaluation.attribution import (
    attribute_words,
    attribute_words_detailed,
    summarize_diagnostics,
)
from gecobench.evaluation.by_gender import GenderBreakdown, ScoredSentences
from gecobench.evaluation.checkpoints import CheckpointStore, reference_unit_name
from gecobench.evaluation.data import GecoSplit, load_split, scorable
from gecobench.evaluation.faithfulness import (
    FaithfulnessProbe,
    faithfulness_protocol,
    score_faithfulness,
    to_checkpoint,
)
from gecobench.evaluation.filters import (
    NONE,
    PAPER,
    PER_MODEL,
    FilterSubset,
    FilterSubsetError,
    defining_model,
    filter_name,
    group_correct,
    load_filter_subsets,
    record_filter_block,
    rows_in_subset,
    shared_subset,
)
from gecobench.evaluation.modelling import (
    LoadedModel,
    ModelFacts,
    as_loaded_model,
    mean_over_other_targets,
    model_key,
    noisy_copy,
    predict,
    randomised_copy,
    training_fingerprint,
)
from gecobench.evaluation.origin import USER, explainer_source, source_fingerprint
from gecobench.evaluation.precomputed import PrecomputedExplainer
from gecobench.evaluation.properties import score_agreement, score_properties
from gecobench.evaluation.published_reference import (
    COMPUTED,
    PublishedReferences,
    load_published_references,
)
from gecobench.evaluation.scheduling import assign_chunks, chunk_cost
from gecobench.evaluation.scoring import paired_comparisons, score_correctness
from gecobench.evaluation.sentence_scores import (
    sentence_scores_document,
    write_sentence_scores,
)
from gecobench.explainers.base import Explainer, fit_explainers, get_explainer
from gecobench.flags import record_flags
from gecobench.gender import BY_GENDER
from gecobench.pooling import comparison_label as pooling_comparison_label
from gecobench.provenance import base_provenance
from gecobench.records import (
    SCHEMA_VERSION,
    explainer_score_identity,
    record_id_for,
    validate_record,
)
from gecobench.store import open_results_store

log = logging.getLogger("gecobench.evaluation")

ZERO_SHOT_REGIME = "ZS"
FAITHFULNESS_PROTOCOL = faithfulness_protocol()
SCORE_KINDS = ("main", "reference", "randomised", "noisy", "other_target", "faithfulness")
#: the protocol entries a chunk's attributions depend on (EvaluationSettings.attribution_protocol)
ATTRIBUTION_PROTOCOL_KEYS = ("split", "seed", "batch_size", "chunk_size", "max_sentence_groups", "target",
                             "random_streams")


@dataclass
class ExplainerSpec:
    """An explainer name and its protocol parameters, as written on the command line (``name:key=value,...``)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> ExplainerSpec:
        name, _, rest = text.partition(":")
        params: dict[str, Any] = {}
        for item in filter(None, rest.split(",")):
            key, sep, raw = item.partition("=")
            if not sep or not key:
                raise ValueError(f"explainer spec {text!r}: expected name:key=value,key=value")
            try:
                params[key] = json.loads(raw)
            except json.JSONDecodeError:
                params[key] = raw
        return cls(name.strip(), params)

    def key(self) -> str:
        digest = hashlib.sha256(json.dumps(self.params, sort_keys=True).encode()).hexdigest()[:10]
        return f"{self.name}-{digest}"


def checkpoint_key(spec: ExplainerSpec, explainer: Explainer) -> str:
    """The folder of an explainer's chunk checkpoints (and its entry in a published reference bundle): its spec
    key and its version, so that after an upgrade that changes an explainer's scores its old checkpoints are never
    resumed as the new version's.

    A non-built-in explainer's key also holds the fingerprint of its source, version and parameters
    (:func:`gecobench.evaluation.origin.source_fingerprint`): its author edits the code without bumping the
    version, and the edited code must not be served the old code's scores. Built-ins keep the version key (their
    version is bumped in review whenever their scores change, and published bundles are keyed by it; see
    :mod:`gecobench.evaluation.origin`)."""
    version = str(explainer.version)
    if not re.fullmatch(r"[A-Za-z0-9._+-]{1,40}", version) or version.startswith("."):  # it becomes a path part
        version = "h" + hashlib.sha256(version.encode()).hexdigest()[:12]
    fingerprint = source_fingerprint(explainer)
    return f"{spec.key()}-v{version}" + (f"-src{fingerprint[:16]}" if fingerprint else "")


def spec_checkpoint_key(spec: ExplainerSpec | str) -> str:
    """:func:`checkpoint_key` of the registered explainer a spec names (an instance is made to read its version)."""
    spec = ExplainerSpec.parse(spec) if isinstance(spec, str) else spec
    return checkpoint_key(spec, get_explainer(spec.name, **spec.params))


@dataclass
class EvaluationSettings:
    """Protocol parameters of a run (everything except *what* is evaluated and *where* it is written)."""

    split: str = "test"
    seed: int = 0
    #: the correctness filter (:mod:`gecobench.evaluation.filters`): ``paper`` (one shared subset per config),
    #: ``per_model`` or ``none``
    filter: str = PAPER
    properties: bool = True
    bootstrap: int = 1000
    batch_size: int = 8
    chunk_size: int = 16
    max_groups: int | None = None
    noise_std: float = 0.01
    randomisation_seed: int = 1234
    data_dir: str | None = None
    #: comprehensiveness, sufficiency and leave-one-out tau (gecobench.evaluation.faithfulness); off: --no-faithfulness
    faithfulness: bool = True
    #: the property metrics' extra attributions (MRC, SNC, LD) and SP/CVR/RRA/AUPRC on the first N source
    #: sentences only (whole chunks: N must be a multiple of chunk_size); None = every scored sentence
    properties_max_groups: int | None = None
    #: comprehensiveness, sufficiency and leave-one-out tau on the first N source sentences only (whole chunks,
    #: as ``properties_max_groups``); None = every scored sentence
    faithfulness_max_groups: int | None = None
    #: the boolean API before filters had names (deprecated): True is ``paper``, False ``none``
    filter_correct: InitVar[bool | None] = None

    def __post_init__(self, filter_correct: bool | None = None) -> None:
        if filter_correct is not None:
            self.filter = filter_name(bool(filter_correct))
        self.filter = filter_name(self.filter)
        for name in ("properties_max_groups", "faithfulness_max_groups"):
            limit = getattr(self, name)
            if limit is not None and (limit < 1 or limit % self.chunk_size):
                raise ValueError(f"{name} must be a positive multiple of chunk_size ({self.chunk_size}), "
                                 f"got {limit}")

    def properties_in_chunk(self, chunk_id: int) -> bool:
        """Whether the property metrics are computed on this chunk (the subsample is the first chunks)."""
        limit = self.properties_max_groups
        return self.properties and (limit is None or chunk_id * self.chunk_size < limit)

    def faithfulness_in_chunk(self, chunk_id: int) -> bool:
        """Whether comprehensiveness, sufficiency and LOO tau are computed on this chunk (first chunks only)."""
        limit = self.faithfulness_max_groups
        return self.faithfulness and (limit is None or chunk_id * self.chunk_size < limit)

    def protocol(self) -> dict[str, Any]:
        """The protocol block of a record (part of its identity; process count and paths are not)."""
        protocol = {
            "split": self.split, "seed": self.seed,
            "filter": self.filter,
            "properties": self.properties, "bootstrap_resamples": self.bootstrap, "ci_level": 0.95,
            "batch_size": self.batch_size, "chunk_size": self.chunk_size, "max_sentence_groups": self.max_groups,
            "target": "true label",
            "small_noise_std": self.noise_std if self.properties else None,
            "randomisation": ({"method": "reset_parameters of every nn.Linear and nn.Embedding",
                               "seed": self.randomisation_seed} if self.properties else None),
            "label_difference_target": "other class (binary) / mean over other classes" if self.properties else None,
            "random_streams": "common: the model, its zero-shot reference and its randomised and noisy copies "
                              "share each sentence's random stream",
        }
        if self.properties and self.properties_max_groups is not None:
            protocol["properties_max_sentence_groups"] = self.properties_max_groups
        if self.faithfulness:
            # Only when on, so records of runs without faithfulness keep the identity they had before it existed.
            protocol["faithfulness"] = FAITHFULNESS_PROTOCOL
            if self.faithfulness_max_groups is not None:
                protocol["faithfulness_max_sentence_groups"] = self.faithfulness_max_groups
        return protocol

    def attribution_protocol(self) -> dict[str, Any]:
        """The part of :meth:`protocol` a chunk's attributions on one model depend on (with the model, the data
        and the explainer): the chunks (size, how many groups), the per-chunk seeds and the batching. Not the
        filter, the properties, faithfulness or bootstrap, which are computed from the attributions.

        The zero-shot reference's checkpoints are keyed by it, so a run with another property subsample,
        bootstrap or filter reuses the reference another run computed (``runs/eval_checkpoints``)."""
        protocol = self.protocol()
        return {key: protocol[key] for key in ATTRIBUTION_PROTOCOL_KEYS}


@dataclass
class ExplainerFailure:
    """An explainer that raised: where (model, config, chunk, the sentence it failed on when one could be singled
    out, else the chunk's sentences) and what (the exception's type and message)."""

    explainer: str
    model: str
    config: str
    chunk: int
    sentence_ids: list[Any]
    error_type: str
    message: str
    #: whether ``sentence_ids`` is the one sentence the explainer fails on alone (else: the chunk's sentences)
    sentence_found: bool = False

    def describe(self) -> str:
        if self.sentence_found:
            where = f"sentence {self.sentence_ids[0]}"
        else:
            shown = ", ".join(map(str, self.sentence_ids[:6])) + (" …" if len(self.sentence_ids) > 6 else "")
            where = f"chunk {self.chunk} (sentences {shown})"
        return (f"explainer {self.explainer} failed on model {self.model}, config {self.config}, {where}: "
                f"{self.error_type}: {self.message}")


@dataclass
class RunSummary:
    """What a run did: record ids written, ids skipped because they already existed, and warnings."""

    written: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: wall seconds of the chunks read back from checkpoints instead of computed: the work of an earlier,
    #: interrupted run, so that a resumed run can report what the whole job cost
    resumed_seconds: float = 0.0
    #: the same chunks' CPU seconds; None when a checkpoint has none (written before CPU seconds were kept)
    resumed_cpu_seconds: float | None = 0.0
    #: per config, the shared subset the ``paper`` filter scored (computed by the run or given to it)
    filter_subsets: dict[str, FilterSubset] = field(default_factory=dict)
    #: explainers that raised (their records for that model and config were not written; the others' were)
    failures: list[ExplainerFailure] = field(default_factory=list)


def _stable_seed(*parts: Any) -> int:
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return int(digest[:8], 16) % (2**31 - 1)


def _attribution_seed(settings: EvaluationSettings, spec: ExplainerSpec, chunk_id: int) -> int:
    """The run seed an explainer gets for one chunk: the same for the model, its zero-shot reference and its
    randomised and noisy copies (common random numbers), different between explainers and chunks."""
    return _stable_seed(settings.seed, spec.name, spec.params, chunk_id)


def _accelerator() -> Any:
    from accelerate import Accelerator

    return Accelerator(cpu=True) if not _cuda_available() else Accelerator()


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def find_zero_shot_reference(model: LoadedModel, candidates: Sequence[str | LoadedModel]
                             ) -> tuple[str | LoadedModel | None, str | None]:
    """A ZS model of the same base among ``candidates`` (folders or loaded models) or next to the model (its
    folder, or the candidate loaded model itself); else (None, reason)."""
    if model.regime == ZERO_SHOT_REGIME:
        return None, "the model is the zero-shot reference itself (RMA = 0 by definition)"
    if model.regime == "OLA":
        # OLA borrows only a tokenizer: there is no pretrained model whose zero-shot version it departs from.
        return None, "OLA is trained from scratch; RMA compares a model with the zero-shot model of its own base"
    pool = list(candidates)
    in_folder = Path(model.path).is_dir()  # a model object has no folder to look next to
    parent = Path(model.path).parent
    if in_folder and parent.is_dir():
        pool += [str(p) for p in sorted(parent.iterdir()) if (p / "gecobench_model.json").is_file()]
    # The zoo layout (<config>/<regime>/seed<N>, the reference's): the zero-shot model is <config>/ZS/seed*, the
    # same seed's first. Without this a model set without its ZS checkpoint (the queue's, a user's run on one
    # reference model) got no RMA although the reference zoo holds it.
    zoo_zero_shot = parent.parent / ZERO_SHOT_REGIME
    if in_folder and zoo_zero_shot.is_dir() and zoo_zero_shot != parent:
        same_seed = zoo_zero_shot / Path(model.path).name
        pool += [str(p) for p in [same_seed, *sorted(zoo_zero_shot.iterdir())]
                 if (p / "gecobench_model.json").is_file()]
    for path in pool:
        if isinstance(path, LoadedModel):
            if (path.path != model.path and path.regime == ZERO_SHOT_REGIME
                    and path.base_model == model.base_model):
                return path, None
            continue
        info_file = Path(path) / "gecobench_model.json"
        if not info_file.is_file() or Path(path).resolve() == Path(model.path).resolve():
            continue
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{info_file}: invalid JSON ({err})") from None
        if info.get("regime") == ZERO_SHOT_REGIME and info.get("base_model") == model.base_model:
            return path, None
    return None, f"no zero-shot (ZS) model of base {model.base_model!r} among or next to the models"


def _check_zero_shot(path: str | LoadedModel) -> None:
    """An explicitly named RMA reference must be a zero-shot checkpoint (a silent fallback would hide a typo)."""
    if isinstance(path, LoadedModel):
        if path.regime != ZERO_SHOT_REGIME:
            raise ValueError(f"zero-shot reference {path.name}: its regime is {path.regime!r}, not {ZERO_SHOT_REGIME!r}")
        return
    info_file = Path(path) / "gecobench_model.json"
    if not info_file.is_file():
        raise FileNotFoundError(f"zero-shot reference {path}: no gecobench_model.json (not a zoo checkpoint folder)")
    try:
        regime = json.loads(info_file.read_text(encoding="utf-8")).get("regime")
    except json.JSONDecodeError as err:
        raise ValueError(f"{info_file}: invalid JSON ({err})") from None
    if regime != ZERO_SHOT_REGIME:
        raise ValueError(f"zero-shot reference {path}: its regime is {regime!r}, not {ZERO_SHOT_REGIME!r}")


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


def _with_filter_blocks(records: list[dict[str, Any]], name: str, split: GecoSplit, chunks: list[dict[str, Any]],
                        subset: FilterSubset | None, subset_source: str | None, lm: LoadedModel
                        ) -> list[dict[str, Any]]:
    """Each record with its ``filter`` block (name, size and fingerprint of the sentences scored; the shared
    subset's own and its defining models). Outside the identity: the protocol holds the subset's fingerprint."""
    kept = [i for c in chunks for i in c["kept"]]
    block = record_filter_block(name, kept, split, subset, {"checkpoint_sha256": lm.checkpoint_sha256},
                                subset_source)
    return [validate_record({**record, "filter": block}) for record in records]


class _Perturbed:
    """Lazily built randomised and noisy copies of one model (built once, reused by every explainer)."""

    def __init__(self, model: Any, settings: EvaluationSettings) -> None:
        self._model, self._settings = model, settings
        self._randomised: Any = None
        self._noisy: Any = None

    @property
    def randomised(self) -> Any:
        if self._randomised is None:
            self._randomised = randomised_copy(self._model, self._settings.randomisation_seed)
        return self._randomised

    @property
    def noisy(self) -> Any:
        if self._noisy is None:
            self._noisy = noisy_copy(self._model, self._settings.noise_std, self._settings.randomisation_seed + 1)
        return self._noisy


def _explain_chunk(explainer: Explainer, spec: ExplainerSpec, lm: LoadedModel, perturbed: _Perturbed,
                   split: GecoSplit, rows: list[int], chunk_id: int, settings: EvaluationSettings
                   ) -> tuple[dict[str, Any], float]:
    """The model's own word scores on a chunk's kept rows plus the property metrics' extra scores.

    Returns ``(scores by kind, seconds spent on the model's own attributions)``.
    """
    words = [list(split.rows[i].words) for i in rows]
    targets = [split.rows[i].label for i in rows]
    seed = _attribution_seed(settings, spec, chunk_id)
    # The randomised and noisy copies are explained with the same seed as the model (common random numbers),
    # so MRC and SNC of a stochastic explainer compare like with like.
    run = lambda model, tok, tg: [s.tolist() for s in attribute_words(
        explainer, model, tok, words, tg, batch_size=settings.batch_size, seed=seed)]
    scores: dict[str, Any] = {kind: None for kind in SCORE_KINDS}
    # An explainer whose other-target scores follow from the same model outputs (Partition SHAP) keeps them for
    # the label-difference pass while this chunk's models are alive and unchanged.
    reuse = getattr(explainer, "outputs_reused", None)
    with reuse() if callable(reuse) else contextlib.nullcontext():
        start = time.perf_counter()
        main = attribute_words_detailed(explainer, lm.model, lm.tokenizer, words, targets, settings.batch_size, seed)
        scores["main"] = [s.tolist() for s in main.scores]
        # per-sentence explainer diagnostics (IG: steps used, completeness error), summarised in the record
        scores["diagnostics"] = {key: values.tolist() for key, values in main.diagnostics.items()}
        main_seconds = time.perf_counter() - start
        if settings.properties_in_chunk(chunk_id):
            scores["randomised"] = run(perturbed.randomised, lm.tokenizer, targets)
            scores["noisy"] = run(perturbed.noisy, lm.tokenizer, targets)
            scores["other_target"] = mean_over_other_targets(
                lambda other: run(lm.model, lm.tokenizer, other), targets, lm.num_labels)
    return scores, main_seconds


class _InputError(Exception):
    """A run input (a checkpoint, a published bundle) that does not fit, met while computing an explainer's chunk:
    it stops the run (its ``__cause__`` is re-raised), where an explainer's own error is reported and skipped."""


def _compute_chunk(explainer: Explainer, spec: ExplainerSpec, lm: LoadedModel, perturbed: _Perturbed,
                   split: GecoSplit, chunk: list[list[int]], chunk_id: int, kept: list[int],
                   settings: EvaluationSettings, reference: LoadedModel | None, checkpoints: CheckpointStore,
                   reference_protocol: dict[str, Any], published: PublishedReferences,
                   probe: FaithfulnessProbe | None) -> dict[str, Any]:
    """One explainer's scores of every kind on one chunk (the model's, the property copies', the zero-shot
    reference's, faithfulness), with the seconds they took and where the reference came from: what the chunk's
    checkpoint holds."""
    start, cpu_start = time.perf_counter(), time.process_time()
    scores, main_seconds = _explain_chunk(explainer, spec, lm, perturbed, split, kept, chunk_id, settings)
    reference_source = None
    if reference is not None and not kept:
        scores["reference"] = []
    elif reference is not None:
        by_row, reference_source = _reference_scores(explainer, spec, reference, split, chunk, chunk_id, settings,
                                                     checkpoints, reference_protocol, published)
        scores["reference"] = [by_row[i] for i in kept]
    faithfulness_start = time.perf_counter()
    _add_faithfulness(scores, probe, split, kept)
    # wall seconds (what a record's runtime reports) and the process's CPU seconds for the chunk (what it cost
    # when other work shared the cores; a resumed run adds them up)
    seconds = {"total": time.perf_counter() - start, "main": main_seconds,
               "faithfulness": time.perf_counter() - faithfulness_start, "cpu": time.process_time() - cpu_start}
    return {"scores": scores, "seconds": seconds, "reference_source": reference_source}


def _failure(explainer: Explainer, spec: ExplainerSpec, lm: LoadedModel, split: GecoSplit, config: str,
             chunk_id: int, kept: list[int], settings: EvaluationSettings, err: BaseException) -> ExplainerFailure:
    """What the report of a raising explainer says. The sentence is singled out by explaining the chunk's
    sentences one at a time on the model until one raises (only after a failure, so it costs nothing otherwise);
    when none raises alone (the error came from a batch, a perturbed copy or the reference), the chunk's
    sentences are named."""
    found = None
    for row in kept:
        try:
            attribute_words(explainer, lm.model, lm.tokenizer, [list(split.rows[row].words)], [split.rows[row].label],
                            batch_size=1, seed=_attribution_seed(settings, spec, chunk_id))
        except Exception:  # noqa: BLE001 - looking for the sentence it fails on
            found = row
            break
    sentence_ids = ([split.rows[found].sentence_id] if found is not None
                    else list(dict.fromkeys(split.rows[i].sentence_id for i in kept)))
    return ExplainerFailure(explainer=comparison_label(spec, explainer), model=lm.name, config=config,
                            chunk=chunk_id, sentence_ids=sentence_ids, error_type=type(err).__name__,
                            message=str(err)[:500], sentence_found=found is not None)


def _reference_unit(reference: LoadedModel, split: GecoSplit, reference_protocol: dict[str, Any]) -> str:
    """Checkpoint unit of a zero-shot reference's scores (every scorable row, so no filter in the key; the model by
    what it computes, so a zero-shot model rebuilt from the same base, on any CPU, shares it)."""
    return reference_unit_name(reference.function_sha256, split.fingerprint, reference_protocol)


def _scorable_rows(split: GecoSplit, chunk: list[list[int]]) -> list[int]:
    return [i for group in chunk if all(scorable(split.rows[j]) for j in group) for i in group]


def split_into_chunks(split: GecoSplit, settings: EvaluationSettings) -> list[list[list[int]]]:
    """The run's chunks: ``settings.chunk_size`` sentence groups each, over the first ``max_groups`` groups."""
    groups = split.groups[: settings.max_groups] if settings.max_groups else split.groups
    return [groups[i:i + settings.chunk_size] for i in range(0, len(groups), settings.chunk_size)]


def reference_chunk_rows(split: GecoSplit, settings: EvaluationSettings) -> list[list[int]]:
    """Per chunk, the rows a zero-shot reference unit covers: every scorable row, whatever the filter."""
    return [_scorable_rows(split, chunk) for chunk in split_into_chunks(split, settings)]


def _reference_scores(explainer: Explainer, spec: ExplainerSpec, reference: LoadedModel, split: GecoSplit,
                      chunk: list[list[int]], chunk_id: int, settings: EvaluationSettings,
                      checkpoints: CheckpointStore, reference_protocol: dict[str, Any],
                      published: PublishedReferences) -> tuple[dict[int, list[float]], str]:
    """The zero-shot reference's word scores on every scorable row of a chunk (before any model's filter), and
    where they came from (:data:`~gecobench.evaluation.published_reference.COMPUTED` or a published bundle).

    Computed once per (reference, explainer, chunk) and checkpointed, then shared by every model of that base:
    each model picks the rows it kept. When the run evaluates the zero-shot model itself on every scorable row,
    its own attributions are this checkpoint (:func:`run_evaluation` saves them), so nothing is computed twice.
    A published bundle of the same unit (:mod:`gecobench.evaluation.published_reference`) is read instead of
    computing; it is not copied into the checkpoints, so they hold only what this machine computed.

    Common random numbers: the reference is explained with the *same* run seed as the model's own attributions
    (:func:`_explain_chunk`), so an explainer that draws one stream per sentence from its run seed (the
    built-ins' ``sentence_seed`` convention) uses the same random numbers for a sentence on both models. The
    log RMA of a stochastic explainer then measures the models' difference, not resampling noise: a
    model-independent explainer (Uniform Random, Pattern Variant) gets exactly 0.
    """
    rows = _scorable_rows(split, chunk)
    unit = _reference_unit(reference, split, reference_protocol)
    key = checkpoint_key(spec, explainer)
    try:  # an unreadable checkpoint or a bundle that does not fit is the run's input, not the explainer, failing
        cached = checkpoints.load(unit, key, chunk_id, rows)
        if cached is not None:
            return dict(zip(rows, cached["scores"]["reference"])), COMPUTED
        bundle, truncated = published.covering(
            unit, _reference_unit(reference, split, {**reference_protocol, "max_sentence_groups": None}))
        scores = (bundle.chunk_scores(key, chunk_id, rows, [split.rows[i].words for i in rows], truncated)
                  if bundle is not None else None)
    except ValueError as err:
        raise _InputError(err) from err
    if bundle is not None and scores is not None:
        return dict(zip(rows, scores)), bundle.source
    scores = reference_chunk_attributions(explainer, spec, reference, split, rows, chunk_id, settings)
    checkpoints.save(unit, key, chunk_id, rows, {"reference": scores}, 0.0)
    return dict(zip(rows, scores)), COMPUTED


def reference_chunk_attributions(explainer: Explainer, spec: ExplainerSpec, reference: LoadedModel,
                                 split: GecoSplit, rows: Sequence[int], chunk_id: int,
                                 settings: EvaluationSettings) -> list[list[float]]:
    """A zero-shot reference's word scores on ``rows`` of chunk ``chunk_id``, computed as the runner computes (and a
    bundle publishes) them: the chunk's run seed, the protocol's batching, each row's label as the target."""
    return [s.tolist() for s in attribute_words(
        explainer, reference.model, reference.tokenizer, [list(split.rows[i].words) for i in rows],
        [split.rows[i].label for i in rows], batch_size=settings.batch_size,
        seed=_attribution_seed(settings, spec, chunk_id))]


def _precomputed_chunk(explainer: PrecomputedExplainer, split: GecoSplit, kept: list[int],
                       settings: EvaluationSettings, with_reference: bool, chunk_id: int) -> dict[str, Any]:
    """A chunk's scores read from a precomputed explainer (no model is run; nothing to checkpoint)."""
    wanted = ["main"] + (["randomised", "noisy", "other_target"] if settings.properties_in_chunk(chunk_id) else [])
    wanted += ["reference"] if with_reference else []
    scores: dict[str, Any] = {kind: None for kind in SCORE_KINDS}
    scores.update(explainer.chunk_scores([split.rows[i] for i in kept], wanted))
    seconds = (explainer.seconds_per_row or 0.0) * len(kept)
    return {"scores": scores, "seconds": {"total": seconds, "main": seconds},
            "reference_source": explainer.source if with_reference else None}


def _add_faithfulness(scores: dict[str, Any], probe: FaithfulnessProbe | None, split: GecoSplit,
                      kept: list[int]) -> None:
    """Put the chunk's comprehensiveness/sufficiency/LOO-tau columns into ``scores`` (None when switched off or
    outside the faithfulness subsample: the caller passes no probe then)."""
    if probe is None or scores.get("main") is None:
        scores["faithfulness"] = None
        return
    results = probe.evaluate([list(split.rows[i].words) for i in kept], [split.rows[i].label for i in kept],
                             scores["main"]) if kept else []
    scores["faithfulness"] = to_checkpoint(results)


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


def _identity_record(spec: ExplainerSpec, explainer: Explainer, lm: LoadedModel, split: GecoSplit,
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


def comparison_label(spec: ExplainerSpec, explainer: Explainer) -> str:
    """How an explainer is named in another's paired comparisons (:func:`gecobench.pooling.comparison_label`)."""
    return pooling_comparison_label(spec.name, str(explainer.version), explainer.params())


def compared_explainers(specs: list[ExplainerSpec], instances: list[Explainer]) -> list[str]:
    """The explainers of a run (:func:`comparison_label`), sorted: the set agreement metrics and paired
    comparisons are computed against, recorded in each record's ``agreement`` block (outside the identity)."""
    return sorted(comparison_label(spec, explainer) for spec, explainer in zip(specs, instances))


def agreement_block(compared: Sequence[str]) -> dict[str, Any]:
    """The record's ``agreement`` block: the set of explainers its cross-explainer numbers (DMA, its per-gender
    entry, the paired comparisons) were computed against, and that set's key. Not part of the identity, so an
    explainer's record does not depend on its companions; schema 2.2 (2.1 held the set in the protocol)."""
    labels = sorted(compared)
    return {"compared_explainers": labels,
            "compared_set_sha256": hashlib.sha256(json.dumps(labels).encode("utf-8")).hexdigest(),
            "covers": list(AGREEMENT_FIELDS)}


#: the record fields whose values depend on the run's other explainers (see :func:`agreement_block`)
AGREEMENT_FIELDS = ("metrics.methods_agreement", "by_gender.metrics.methods_agreement", "comparisons")


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
    from tqdm.auto import tqdm

    settings = settings or EvaluationSettings()
    filters = tuple(dict.fromkeys(filter_name(f) for f in filters)) if filters is not None else (settings.filter,)
    specs = [ExplainerSpec.parse(e) if isinstance(e, str) else e for e in explainers]
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
        _check_zero_shot(zero_shot)
        candidates.append(zero_shot)

    for config in configs:
        split = load_split(config, settings.split, settings.data_dir)
        chunks = split_into_chunks(split, settings)
        subset, subset_source, run_predictions = _paper_subset_for(filters, config, split, models, settings,
                                                                   given_subsets)
        if subset is not None:
            summary.filter_subsets[config] = subset
        explainers_now = list(instances) if instances is not None else [
            get_explainer(spec.name, **spec.params) for spec in specs]
        # Explainers that learn from data are fitted on the split they name: Pattern Variant on the split being
        # explained, as the paper's authors do (all its rows: labels only, never ground truth), others on train.
        fit_explainers(explainers_now, explained=lambda rows=split.rows: rows, train=lambda config=config: [
            r for r in load_split(config, "train", settings.data_dir).rows if scorable(r)])

        for model_path in models:
            lm = as_loaded_model(model_path)
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
                unit_protocol = {**variant.protocol(), **extra_protocol, **_subset_protocol(flag, subset)}
                identities = [_identity_record(s, e, lm, split, unit_protocol) for s, e in zip(specs, explainers_now)]
                units[flag] = (unit_protocol, identities,
                               [record_id_for(explainer_score_identity(i)) for i in identities])
            if unit_columns is None and all(store.exists("explainer_score", rid)
                                            for _, _, ids in units.values() for rid in ids):
                summary.existing.extend(rid for _, _, ids in units.values() for rid in ids)
                log.info("records for %s on %s already in the store; skipped", model_key(model_path), config)
                continue
            perturbed = _Perturbed(lm.model, settings)
            probe = FaithfulnessProbe(lm.model, lm.tokenizer) if settings.faithfulness else None
            # Checkpointed chunk scores depend on the explainer alone, not on which others run beside it: a run
            # with another explainer set reuses them (only the records' comparisons are recomputed).
            chunk_protocol = {**computed.protocol(), "rma_reference_sha256": extra_protocol["rma_reference_sha256"],
                              **_subset_protocol(compute_filter, subset)}
            unit = hashlib.sha256(json.dumps([lm.checkpoint_sha256, split.fingerprint, chunk_protocol],
                                             sort_keys=True).encode()).hexdigest()[:16]
            # The zero-shot model's own attributions on every scorable row are the RMA reference of the others.
            own_reference_unit = (_reference_unit(lm, split, reference_protocol)
                                  if lm.regime == ZERO_SHOT_REGIME and not compute_filtered else None)

            local_results = []
            # Balanced by cost, not count: the property and faithfulness chunks are the first ones.
            costs = [chunk_cost(sum(len(g) for g in chunk), reference=reference is not None,
                                properties=settings.properties_in_chunk(c),
                                faithfulness=settings.faithfulness_in_chunk(c),
                                n_classes=lm.num_labels)
                     for c, chunk in enumerate(chunks)]
            my_chunks = assign_chunks(costs, accelerator.num_processes)[accelerator.process_index]
            failed_here: dict[str, ExplainerFailure] = {}  # spec key → its first failure on this model
            bar = tqdm(total=len(my_chunks) * len(specs), desc=f"{lm.name} · {config}", unit="chunk×explainer",
                       disable=not (progress and accelerator.is_main_process))
            for chunk_id in my_chunks:
                chunk = chunks[chunk_id]
                chunk_rows = [i for g in chunk for i in g]
                predictions = ((run_predictions.get(model_key(model_path)) or {}).get(chunk_id)
                               or chunk_predictions(lm, split, chunk, settings))
                kept, malformed = rows_for_filter(split, chunk, predictions, compute_filter, subset)
                chunk_probe = probe if settings.faithfulness_in_chunk(chunk_id) else None
                if chunk_probe is not None:
                    chunk_probe.forget()  # its cache serves the explainers of one chunk; the next holds others
                per_explainer = {}
                resumed_seconds, resumed_cpu = 0.0, 0.0
                for spec, explainer in zip(specs, explainers_now):
                    if spec.key() in failed_here:
                        bar.update(1)  # it raised on an earlier chunk of this model: its records are not written
                        continue
                    if isinstance(explainer, PrecomputedExplainer):
                        cached = _precomputed_chunk(explainer, split, kept, settings, reference is not None,
                                                    chunk_id)
                        _add_faithfulness(cached["scores"], chunk_probe, split, kept)
                        per_explainer[spec.key()] = cached
                        bar.update(1)
                        continue
                    ck_key = checkpoint_key(spec, explainer)
                    cached = checkpoints.load(unit, ck_key, chunk_id, kept)
                    if cached is not None and isinstance(cached.get("seconds"), dict):
                        resumed_seconds += float(cached["seconds"].get("total", 0.0))
                        # checkpoints written before CPU seconds were kept have none: the sum is then unknown
                        resumed_cpu = (resumed_cpu + float(cached["seconds"]["cpu"])
                                       if resumed_cpu is not None and "cpu" in cached["seconds"] else None)
                    if cached is None:
                        try:
                            cached = _compute_chunk(explainer, spec, lm, perturbed, split, chunk, chunk_id, kept,
                                                    settings, reference, checkpoints, reference_protocol,
                                                    published, chunk_probe)
                        except _InputError as wrapped:
                            raise wrapped.__cause__ from None
                        except Exception as err:  # noqa: BLE001 - fail-soft: any explainer error is reported
                            failure = _failure(explainer, spec, lm, split, config, chunk_id, kept, settings, err)
                            log.error("%s; its records for this model are not written", failure.describe())
                            failed_here[spec.key()] = failure
                            bar.update(1)
                            continue
                        checkpoints.save(unit, ck_key, chunk_id, kept, cached["scores"], cached["seconds"],
                                         {"reference_source": cached["reference_source"]}
                                         if cached.get("reference_source") else None)
                    if own_reference_unit is not None and kept and checkpoints.load(
                            own_reference_unit, ck_key, chunk_id, kept) is None:
                        checkpoints.save(own_reference_unit, ck_key, chunk_id, kept,
                                         {"reference": cached["scores"]["main"]}, 0.0)
                    per_explainer[spec.key()] = cached
                    bar.set_postfix_str(spec.name)
                    bar.update(1)
                local_results.append({"chunk": chunk_id, "groups": chunk, "rows": chunk_rows,
                                      "predictions": predictions, "kept": kept, "malformed": malformed,
                                      "explainers": per_explainer, "resumed_seconds": resumed_seconds,
                                      "resumed_cpu_seconds": resumed_cpu,
                                      "failed": {k: dataclasses.asdict(f) for k, f in failed_here.items()
                                                 if f.chunk == chunk_id}})
            bar.close()
            gathered = gather_object(local_results)
            if accelerator.is_main_process:
                by_chunk = {r["chunk"]: r for r in gathered}
                if sorted(by_chunk) != list(range(len(chunks))):
                    raise RuntimeError(f"gathered chunks {sorted(by_chunk)} do not cover 0..{len(chunks) - 1}")
                ordered = [by_chunk[c] for c in range(len(chunks))]
                failures = {key: ExplainerFailure(**f) for r in ordered for key, f in r["failed"].items()}
                summary.failures.extend(failures.values())
                # the explainers that completed every chunk (on every process) are scored; the others are not
                alive = [i for i, spec in enumerate(specs) if spec.key() not in failures]
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
                for flag, (unit_protocol, identities, record_ids) in units.items():
                    identities = [identities[i] for i in alive]
                    record_ids = [record_ids[i] for i in alive]
                    if not record_ids:
                        continue
                    if all(store.exists("explainer_score", rid) for rid in record_ids):
                        summary.existing.extend(record_ids)
                        continue
                    scored = (ordered if flag == compute_filter
                              else [_filtered_chunk(split, c, flag, subset) for c in ordered])
                    _append_records(store, summary, alive_specs, alive_instances, identities, record_ids, lm, split,
                                    scored, variants[flag], unit_protocol, reference, ref_reason,
                                    accelerator.num_processes, flag, subset, subset_source)
            accelerator.wait_for_everyone()
    return summary


def _append_records(store: Any, summary: RunSummary, specs: list[ExplainerSpec], explainers: list[Explainer],
                    identities: list[dict[str, Any]], record_ids: list[str], lm: Any, split: GecoSplit,
                    scored: list[dict[str, Any]], settings: EvaluationSettings, protocol: dict[str, Any],
                    reference: Any, ref_reason: str | None, n_processes: int, flag: str,
                    subset: FilterSubset | None, subset_source: str | None) -> None:
    """Score one filter's chunks of one model, and append its records (and side files) to ``store``: the one
    path from gathered chunks to records, for a run and for records derived later (:func:`derive_records`)."""
    side_documents: dict[str, dict[str, Any]] = {}
    records = _build_records(specs, explainers, identities, record_ids, lm, split, scored, settings, protocol,
                             reference, ref_reason, n_processes, side_documents)
    records = _with_filter_blocks(records, flag, split, scored, subset, subset_source, lm)
    for record in records:
        if store.exists("explainer_score", record["record_id"]):
            summary.existing.append(record["record_id"])
            continue
        store.append(record)
        summary.written.append(record["record_id"])
        if record["record_id"] in side_documents:  # the Space's per-sentence drill-down
            write_sentence_scores(store, side_documents[record["record_id"]])


@dataclass
class StoredModel(ModelFacts):
    """What records say about a model, without its weights: the stand-in of a :class:`LoadedModel` when records
    are derived from stored chunks (:func:`derive_records`)."""

    info: dict[str, Any]
    path: str
    checkpoint_sha256: str | None
    name: str
    function_sha256: str | None
    num_labels: int

    @classmethod
    def from_json(cls, document: Any, where: str) -> StoredModel:
        if not isinstance(document, dict) or not isinstance(document.get("info"), dict):
            raise ValueError(f"{where}: a model's facts need an 'info' object")  # noqa: TRY004 (bad file content)
        missing = [k for k in ("path", "checkpoint_sha256", "name", "function_sha256", "num_labels")
                   if k not in document]
        if missing:
            raise ValueError(f"{where}: model facts lack {missing}")
        return cls(info=dict(document["info"]), path=str(document["path"]),
                   checkpoint_sha256=document["checkpoint_sha256"], name=str(document["name"]),
                   function_sha256=document["function_sha256"], num_labels=int(document["num_labels"]))


def stored_model_facts(lm: Any) -> dict[str, Any]:
    """The facts of a (loaded or stored) model that its records read (:class:`StoredModel`), JSON-ready."""
    return {"info": dict(lm.info), "path": str(lm.path), "checkpoint_sha256": lm.checkpoint_sha256,
            "name": lm.name, "function_sha256": lm.function_sha256, "num_labels": int(lm.num_labels)}


def derive_records(explainers: list[ExplainerSpec | str], config: str, columns: dict[str, dict[str, Any]],
                   settings: EvaluationSettings, filter: str, store_location: str | None,
                   subset: FilterSubset | None = None, data_dir: str | None = None) -> RunSummary:
    """The records of ``filter`` for every model of ``columns`` (what :func:`run_evaluation` gathered with the
    ``none`` filter: model path → chunks and facts), built by the run's own scoring path from the chunks cut down to
    the filter's rows: what a run with that filter and the same attributions writes, without loading any model.

    The explainers must be the run's, in its order (their chunk columns are keyed by spec); the records of the
    ``paper`` filter score ``subset`` (checked against the split) and name it as a subset read from a file."""
    name = filter_name(filter)
    specs = [ExplainerSpec.parse(e) if isinstance(e, str) else e for e in explainers]
    split = load_split(config, settings.split, data_dir if data_dir is not None else settings.data_dir)
    if name == PAPER:
        if subset is None:
            raise ValueError(f"{config}: records of the paper's filter need its shared subset")
        subset.check_for(split)
    explainers_now = [get_explainer(spec.name, **spec.params) for spec in specs]
    fit_explainers(explainers_now, explained=lambda rows=split.rows: rows, train=lambda: [
        r for r in load_split(config, "train", settings.data_dir).rows if scorable(r)])
    variant = dataclasses.replace(settings, filter=name)
    store = open_results_store(store_location)
    summary = RunSummary()
    if subset is not None and name == PAPER:
        summary.filter_subsets[config] = subset
    compared = compared_explainers(specs, explainers_now)
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
        protocol = {**variant.protocol(),
                    "rma_reference_sha256": reference.checkpoint_sha256 if reference is not None else None,
                    "compared_explainers": compared, **_subset_protocol(name, subset)}
        identities = [_identity_record(s, e, lm, split, protocol) for s, e in zip(specs, explainers_now)]
        record_ids = [record_id_for(explainer_score_identity(i)) for i in identities]
        if all(store.exists("explainer_score", rid) for rid in record_ids):
            summary.existing.extend(record_ids)
            continue
        scored = chunks if name == NONE else [_filtered_chunk(split, c, name, subset) for c in chunks]
        _append_records(store, summary, specs, explainers_now, identities, record_ids, lm, split, scored,
                        variant, protocol, reference, entry.get("reference_reason"),
                        int(entry.get("n_processes") or 1), name, subset, "file" if subset is not None else None)
    return summary


def _scored_sentences(split: GecoSplit, chunks: list[dict[str, Any]], subsample: str, limit: int | None
                      ) -> ScoredSentences:
    """The kept rows of ``chunks`` (a metric's subsample, in row order) as the per-gender block sees them; the
    subsample is named only when it is one (``limit`` source sentences), not every scored sentence."""
    rows = [i for c in chunks for i in c["kept"]]
    return ScoredSentences.of([split.rows[i].label for i in rows], [split.rows[i].sentence_id for i in rows],
                              subsample if limit is not None else None, limit)


def _paper_subset_for(filters: Sequence[str], config: str, split: GecoSplit, models: Sequence[str | LoadedModel],
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


def _subset_protocol(name: str, subset: FilterSubset | None) -> dict[str, Any]:
    """What the shared subset adds to a protocol (and so to the identity): its fingerprint, for ``paper`` only."""
    return {"filter_subset_sha256": subset.fingerprint} if name == PAPER and subset is not None else {}


def _filtered_chunk(split: GecoSplit, chunk: dict[str, Any], name: str = PER_MODEL,
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


def _reference_source(chunks: list[dict[str, Any]], key: str, reference: LoadedModel | None) -> str | None:
    """Where an explainer's zero-shot reference attributions came from, over the chunks with scored rows:
    ``computed``, ``published:<bundle SHA-256>``, the submission's own, or ``mixed: …`` when chunks differ."""
    if reference is None:
        return None
    # chunks checkpointed before sources were kept were computed: nothing was published then
    found = sorted({c["explainers"][key].get("reference_source") or COMPUTED for c in chunks if c["kept"]})
    if not found:
        return None
    return found[0] if len(found) == 1 else "mixed: " + ", ".join(found)


def _build_records(specs: list[ExplainerSpec], instances: list[Explainer], identities: list[dict[str, Any]],
                   record_ids: list[str], lm: LoadedModel, split: GecoSplit, chunks: list[dict[str, Any]],
                   settings: EvaluationSettings, protocol: dict[str, Any], reference: LoadedModel | None,
                   ref_reason: str | None, n_processes: int,
                   side_documents: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Score the gathered chunks and build one validated record per explainer; when ``side_documents`` is given,
    fill it with each record's per-sentence scores (record id → side document)."""
    evaluated_rows = [i for c in chunks for i in c["rows"]]
    predictions = {i: p for c in chunks for i, p in c["predictions"].items()}
    kept = [i for c in chunks for i in c["kept"]]
    ground_truth = [list(split.rows[i].ground_truth) for i in kept]
    labels = [split.rows[i].label for i in kept]
    sources = [split.rows[i].sentence_id for i in kept]
    n_correct_all = sum(int(predictions[i]) == split.rows[i].label for i in evaluated_rows)
    n_correct_kept = sum(int(predictions[i]) == split.rows[i].label for i in kept)

    def collect(key: str, kind: str) -> list[np.ndarray] | None:
        """Scores of one kind over all chunks, in row order; None when that kind was not computed."""
        parts = [c["explainers"][key]["scores"][kind] for c in chunks]
        if any(p is None for p in parts):
            return None
        return [np.asarray(s, dtype=np.float64) for p in parts for s in p]

    main_scores = {s.key(): collect(s.key(), "main") or [] for s in specs}
    agreement_per_sentence: dict[str, np.ndarray] = {}
    agreement = (score_agreement(main_scores, ground_truth, settings, agreement_per_sentence)
                 if settings.properties and kept else {})
    all_scored = ScoredSentences.of(labels, sources)
    records = []
    per_sentence_ma: dict[str, np.ndarray] = {}
    compared = {spec.key(): comparison_label(spec, explainer) for spec, explainer in zip(specs, instances)}
    for spec, explainer, identity, record_id in zip(specs, instances, identities, record_ids):
        key = spec.key()
        label = compared[key]
        scores = main_scores[key]
        seconds = sum(c["explainers"][key]["seconds"]["total"] for c in chunks)
        main_seconds = sum(c["explainers"][key]["seconds"]["main"] for c in chunks)
        reference_scores = collect(key, "reference") if reference is not None else None
        precomputed_gap = getattr(explainer, "missing_reason", None)
        if not kept:
            metrics: dict[str, Any] = {"mass_accuracy": {"value": None, "n_scored": 0, "n_undefined": 0,
                                                         "reason": "no sentence passed the filter"}}
            groups: dict[str, Any] = {}
        else:
            reason = ref_reason if reference is None or reference_scores is not None else precomputed_gap
            # every metric's per-sentence values also go to the per-gender block, on the sentences it scored
            breakdown = GenderBreakdown(settings.bootstrap, settings.seed)
            metrics, groups, per_sentence_ma[label] = score_correctness(
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
            "groups": groups,
            **({BY_GENDER: breakdown.block()} if kept else {}),
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
                side_documents[record_id] = sentence_scores_document(record, [split.rows[i] for i in kept], scores,
                                                                     per_sentence_ma[label])
            except ValueError as err:
                log.warning("no per-sentence scores for %s: %s", record_id, err)
    # Paired comparison with every other explainer of the run, on the same kept sentences: lets the leaderboard
    # say which explainer is better and where two tie.
    comparisons = paired_comparisons(per_sentence_ma, sources, settings.bootstrap, settings.seed + 2)
    for record, key in zip(records, (s.key() for s in specs)):
        if compared[key] in comparisons:
            record["comparisons"] = comparisons[compared[key]]
    return [validate_record(record) for record in records]
