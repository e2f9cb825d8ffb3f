"""The reference results: the full GECOBench grid (model zoo, every built-in explainer on every test sentence).

``gecobench reference`` (``make reference``; :mod:`gecobench.cli.reference`) runs the stages below. The plan is one object,
:class:`ReferencePlan`, so the command, the docs and the tests agree on what "the reference" is.

**The problem the stages solve.** The paper's filter is one shared sentence subset per config, defined by every
trained model of every seed (:mod:`gecobench.evaluation.filters`). Weights are not committed (too big) and a
session may start on a new machine, so a design that keeps weights until every seed is trained loses work. So the
weights are needed only where they are made, and what the later stages need is committed as soon as it exists:

1. **zoo** — six regimes × four GECO configs for each seed, with the schedule that brings every regime but ZS
   to ≥ 80 % test accuracy on this 2-core CPU (:data:`REFERENCE_SCHEDULES`); checkpoints under
   ``runs/reference/zoo`` (not committed), their summary in ``reference/zoo_summary.json`` (committed). Right
   after training, each checkpoint's **test predictions** (every row of the evaluation's sentence groups: source
   sentence id, gender variant's label, predicted class, correct or not; its checkpoint fingerprint, training
   schedule and accuracy)
   go to ``reference/staging/predictions/<config>/<regime>-seed<k>.json`` (:func:`write_predictions`, a few tens
   of kB, committed; :func:`read_predictions` validates them against the split);
2. **evaluate** — the explainers of :data:`REFERENCE_EXPLAINERS` on every test sentence of each (config, seed)
   unit, **unfiltered** (the zero-shot model's own attributions being every other model's RMA reference), into
   ``reference/staging/seed-<k>/store``, plus, per model, its **evaluation columns**
   (``staging/seed-<k>/columns/<config>/<regime>.json.gz``, :mod:`gecobench.evaluation.unit_columns`) and the
   unit's marker ``units/<config>.json`` (record ids, columns' fingerprints). Needs that seed's weights, nothing
   from other seeds: commit it as it finishes;
3. **filters** — each config's shared subset (``reference/filters/<config>.json``) from the committed prediction
   files alone, once every defining seed's are in; the subset records which files define it and their
   fingerprints (a changed file makes it stale: computed again, kept when it keeps the same sentences, refused
   otherwise, never silently replaced), and a file whose schedule is not
   the plan's (a cell whose schedule changed, not yet retrained) is refused (:func:`predictions_verdict`);
4. **derive** — each evaluated unit's paper-filter records from its committed columns, cut down to the subset's
   sentences and scored by the run's own scoring path (:func:`gecobench.evaluation.runner.derive_records`: the
   same :func:`~gecobench.evaluation.chunks.filtered_chunk` and :func:`~gecobench.evaluation.records.build_records`
   a run with both filters uses; bootstrap intervals recomputed):
   no weights, no model run, any machine;
5. **promote** — a seed whose every unit has both filters' records becomes part of ``reference/store``
   (:func:`promote_seed`, after :func:`_check_staged_seed`: every marked record present, explainers × regimes
   per filter, every paper record on the config's current subset and all on one sentence set): the store names
   the seed's staged folder in its ``parts.json``, where the records stay (no copy: see :func:`promote_seed`).

**Why store columns, not per-sentence metric values.** Every number in a record is a function of per-row values:
MA, the per-label groups, the property metrics SP, CVR, relevance rank accuracy, AUPRC, MRC, SNC and LD are means
over sentences (MRC/SNC/LD and faithfulness on a subsample of the first chunks, which the paper filter cuts down
further); but RMA is a *median* of per-sentence log ratios, the gender gaps and the paired explainer comparisons are
differences with a bootstrap clustered by source sentence, DMA compares every explainer of the run on each sentence,
faithfulness has removal curves, the per-gender block re-splits all of them, and counts, ``accuracy_on_scored`` and
diagnostics come from the rows kept. Storing each metric's per-sentence values would need a second aggregation path
per metric kind (and one more for each metric added later), against the package's rule of one scoring path. What
the run itself scores from is smaller than the weights and complete: per chunk the rows, predictions and, per
explainer, the word-score columns of every kind (the model's, the zero-shot reference's, the randomised, noisy and
other-target copies' on the properties subsample, the faithfulness columns) with their seconds. Stored losslessly
(float32 bit patterns where the values are float32, float64 otherwise), a derived record is the record a run with
the paper's filter and these attributions writes; a direct run on the subset alone batches only the kept rows, so
it differs by float32 rounding of padded batches (test: ``tests/test_reference_derive.py``). Nothing needs a seed's
model to be retrained. Runtime seconds of a derived record are the unit's, scaled to the rows kept (as a run with
both filters reports them).

Every stage resumes: a checkpoint whose recorded schedule equals the planned one is kept, a prediction file of the
plan's schedule that names the checkpoint here is kept, a subset file defined by exactly the committed prediction
files is kept, evaluation chunks are checkpointed by the runner, evaluated, staged or promoted units are not run
again, and records already in a store are not written again. ``--shard K/N`` gives one of N machines (or process groups) its share of
the evaluation units; each unit is whole, so shards never overlap, and a shard trains the checkpoints of the units it
evaluates. Wall times per unit go to ``reference/timings.json``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gecobench.domain import MODEL_INFO_FILE
from gecobench.fingerprinted import SHA256_FIELD, fingerprint, read_fingerprinted
from gecobench.models.data import GECO_CONFIGS
from gecobench.models.regimes import BASE_REGIMES
from gecobench.provenance import REPO_ROOT

if TYPE_CHECKING:  # imported lazily at run time: the evaluation stack is heavy and only the stages need it
    from gecobench.evaluation.settings import EvaluationSettings
    from gecobench.evaluation.summary import RunSummary

log = logging.getLogger("gecobench.reference")

REFERENCE_DIR = REPO_ROOT / "reference"
REFERENCE_STORE = REFERENCE_DIR / "store"
#: finished (config, seed) units are committed here; a complete seed's folder becomes part of the store
#: (:func:`promote_seed`)
STAGING_FOLDER = "staging"
#: inside the staging folder: each checkpoint's test predictions, and each staged unit's evaluation columns
PREDICTIONS_FOLDER = "predictions"
COLUMNS_FOLDER = "columns"
PREDICTIONS_FORMAT = "gecobench-predictions/1"
#: the fields of a prediction file its fingerprint leaves out (besides ``sha256``, :mod:`gecobench.fingerprinted`)
PREDICTIONS_UNHASHED = ("provenance",)
ZOO_SUMMARY = REFERENCE_DIR / "zoo_summary.json"
TIMINGS = REFERENCE_DIR / "timings.json"
DEFAULT_CHECKPOINT_ROOT = REPO_ROOT / "runs" / "reference"

CONFIGS: tuple[str, ...] = tuple(GECO_CONFIGS)
# The zoo's regimes, the fast ones first: OLA trains in minutes and ZS (every model's RMA reference) only
# evaluates, so a short first run already has what the others need.
REGIMES: tuple[str, ...] = ("OLA", "ZS", *BASE_REGIMES)

#: Per regime: (schedule preset, field overrides). OLA trains with the authors' schedule (``ola_paper``: 200 epochs
#: on every training sentence; minutes on this CPU, see docs/models.md). The others: the budget of the zoo table in
#: ``docs/models.md`` (the ``short`` preset on ≤ 600 training source sentences), with two measured changes: the frozen-encoder ``C``
#: trains 8 epochs, and ``CEf``'s new head learns at 2e-3 (at its encoder rate of 2e-4 it stays at 72 % on
#: ``nonbinary_subject``; with the head at 2e-3, 87 %).
REFERENCE_SCHEDULES: dict[str, tuple[str, dict[str, Any]]] = {
    "OLA": ("ola_paper", {}),
    "ZS": ("short", {"max_train_sentences": 600}),
    "C": ("short", {"max_train_sentences": 600, "epochs": 8}),
    "CE": ("short", {"max_train_sentences": 600}),
    "CEf": ("short", {"max_train_sentences": 600, "head_lr": 2e-3}),
    "CEfAf": ("short", {"max_train_sentences": 600}),
}

#: Cells where that budget falls short of 80 % (seed 0 at 1.0, 2026-12-02, reference/staging/predictions):
#: ``CE`` as the authors define it (every embedding re-initialised, the encoder frozen) reached 73.0 % on
#: ``binary_subject`` on the short budget and 97.5 % on ``default``. On ``nonbinary_subject``, ``CEf`` reached
#: 79.2 % on 600 sentences and 96.6 % on 1,200. The frozen-encoder ``C`` (a new classifier on MiniLM's frozen
#: encoder and pooler) reached 68.6 % on ``default`` and 72.7 % with the authors' C learning rate
#: (1e-2) on all training sentences: it stays under the paper's 80 % on this base model (docs/reproducing.md).
SCHEDULE_EXCEPTIONS: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {
    ("C", "nonbinary_subject"): ("default", {"lr": 1e-2}),
    ("CE", "binary_subject"): ("default", {}),
    ("CEf", "nonbinary_subject"): ("short", {"max_train_sentences": 1200, "head_lr": 2e-3}),
}

#: Cells measured under the paper's 80 % on every schedule tried, with why: the departures table of
#: docs/reproducing.md states them, and the committed zoo's check allows these cells only.
BELOW_ACCURACY_TARGET: dict[tuple[str, str], str] = {
    ("C", "nonbinary_subject"): "a new classifier on MiniLM's frozen encoder and pooler: 68.6 % (default "
                                "schedule), 72.7 % (the authors' lr 1e-2, all training sentences, 6 epochs), seed 0",
}

#: Every built-in at the protocol defaults: the paper's ten methods and Partition SHAP (added in 0.3.0, not one of
#: the paper's). Partition SHAP joined the plan in 0.6.0, once its budgeted default (3.0.0) cost about a fifth of
#: its exact Owen values. The committed seed-0 store was made at 0.5.0 with the ten; Partition SHAP's seed-0 records
#: come with the next run of the grid, its zero-shot attributions are published already
#: (:func:`extend_zero_shot_attributions`), so that a user's evaluation with every built-in reads its RMA reference.
#: LIME at the authors' budget: their ``get_lime_attributions`` (``xai/methods.py``) calls Captum's ``Lime`` with
#: its default 50 samples. The hub's default (4.0.0, an accuracy target) draws about 15× that on MiniLM models
#: (0.13 against 1.9 s per sentence and model, BENCHMARKS.md "A seed of the 1.0 grid"): about 10 h of LIME per seed
#: on 2 cores, and not the paper's protocol. Kernel SHAP's default is already the authors' (Captum's 25).
PAPER_EXPLAINERS = (
    "saliency", "input_x_gradient", "deeplift", "guided_backprop", "integrated_gradients", "gradient_shap",
    "lime:n_samples=50", "kernel_shap", "uniform_random", "pattern_variant",
)
REFERENCE_EXPLAINERS = (*PAPER_EXPLAINERS, "partition_shap")

#: The Co-12 properties need three or four extra attribution passes per sentence (randomised model, noisy
#: model, each other target) and the faithfulness metrics ~10 forward passes per removal curve; both run on
#: this many source sentences (with all their gender variants) at the start of the test split, stated in each
#: record's protocol. 32 of 322 groups kept the seed-0 run of the ten explainers near the 4-hour budget on 2
#: cores (AMD EPYC); Partition SHAP adds about 40 % to a model's evaluation (BENCHMARKS.md, 2026-12-02).
PROPERTIES_SUBSAMPLE_GROUPS = 32

#: A zoo run whose kept weights stay at chance on the validation split, or fall far under the paper's 80 % there
#: (under :data:`RESTART_BELOW`, in a cell not measured under 80 % on every schedule, :data:`BELOW_ACCURACY_TARGET`),
#: is trained again from a derived initialisation seed, up to this many times (:func:`gecobench.models.training.restart_reason`,
#: :func:`~gecobench.models.training.restart_init_seed`). Seed 2's OLA on ``nonbinary_subject`` kept its loss at
#: ln 3 for all 200 epochs of the authors' schedule on three machines, and its first restart (init seed 1002) peaked
#: at 56 % in epoch 2 before falling back to chance (seeds 0 and 1 reach 0.89 and 0.91). The data split stays the
#: seed's; the checkpoint's info and the zoo table name the initialisation seed. A run that never leaves chance says
#: nothing about its regime, and one model far under the target shrinks the paper's shared filter of its config
#: for every model (a sentence stays only when every model gets every variant right).
ZOO_MAX_RESTARTS = 4
#: the paper's models reach 80 % test accuracy
ACCURACY_TARGET = 0.80
#: the validation accuracy under which a zoo run counts as failed and is restarted: far enough under
#: :data:`ACCURACY_TARGET` that a model at its capacity is not retrained for noise. ``C`` on ``binary_subject`` (a new
#: classifier on the frozen encoder) scored 77-78 % on validation from five initialisations of seed 4 (82 % test):
#: restarting it at 80 % bought nothing but picked an attempt by one sentence.
RESTART_BELOW = 0.70

#: the paper's filter (one shared subset per config: gecobench.evaluation.filters), and none
FILTERS = ("paper", "none")
#: the seeds of the reference: the paper trains five models per regime
REFERENCE_SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class ZooUnit:
    """One checkpoint of the reference zoo."""

    config: str
    regime: str
    seed: int

    @property
    def key(self) -> str:
        return f"zoo/{self.config}/{self.regime}/seed{self.seed}"


@dataclass(frozen=True)
class EvaluationUnit:
    """The explainers × six models of one config and seed, with and without the correctness filter."""

    config: str
    seed: int

    @property
    def key(self) -> str:
        return f"evaluate/{self.config}/seed{self.seed}"


@dataclass
class ReferencePlan:
    """What ``make reference`` computes. Defaults are the reference; tests shrink it."""

    seeds: tuple[int, ...] = REFERENCE_SEEDS
    configs: tuple[str, ...] = CONFIGS
    regimes: tuple[str, ...] = REGIMES
    explainers: tuple[str, ...] = REFERENCE_EXPLAINERS
    properties_groups: int | None = PROPERTIES_SUBSAMPLE_GROUPS
    max_groups: int | None = None  # None: every test sentence
    bootstrap: int = 1000
    checkpoint_root: Path = DEFAULT_CHECKPOINT_ROOT
    store: Path = REFERENCE_STORE
    zoo_summary: Path = ZOO_SUMMARY
    timings: Path = TIMINGS
    #: where the zero-shot attribution bundles go; None: ``zero_shot_attributions/`` beside the store
    zero_shot_attributions: Path | None = None
    #: where finished units wait for their seed; None: ``staging/`` beside the store
    staging: Path | None = None
    #: the seeds whose models define the paper's shared subsets; None: ``seeds``. A run of some seeds of the
    #: reference (``--seeds 1``) keeps the reference's (:data:`REFERENCE_SEEDS`), so every seed scores one subset
    filter_seeds: tuple[int, ...] | None = None
    schedules: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=lambda: dict(REFERENCE_SCHEDULES))
    exceptions: dict[tuple[str, str], tuple[str, dict[str, Any]]] = field(
        default_factory=lambda: dict(SCHEDULE_EXCEPTIONS))

    def __post_init__(self) -> None:
        unknown = [c for c in self.configs if c not in CONFIGS]
        if unknown:
            raise ValueError(f"unknown GECO config(s) {unknown}; choose from {list(CONFIGS)}")
        unknown = [r for r in self.regimes if r not in REGIMES]
        if unknown:
            raise ValueError(f"unknown regime(s) {unknown}; choose from {list(REGIMES)}")
        if "ZS" not in self.regimes:
            raise ValueError("the reference needs the ZS regime: RMA compares every model with it")
        missing = [r for r in self.regimes if r not in self.schedules]
        if missing:
            raise ValueError(f"no schedule for regime(s) {missing}")

    # -- the zoo -------------------------------------------------------------------------------------------
    def zoo_units(self) -> list[ZooUnit]:
        return [ZooUnit(c, r, s) for s in self.seeds for c in self.configs for r in self.regimes]

    def checkpoint(self, unit: ZooUnit) -> Path:
        return Path(self.checkpoint_root) / "zoo" / unit.config / unit.regime / f"seed{unit.seed}"

    def schedule_for(self, regime: str, config: str) -> tuple[str, dict[str, Any]]:
        return self.exceptions.get((regime, config), self.schedules[regime])

    def planned_schedule(self, regime: str, config: str) -> dict[str, Any]:
        """The full schedule (every field) a checkpoint of this cell must record to count as done."""
        from gecobench.models.training import make_schedule

        preset, overrides = self.schedule_for(regime, config)
        return dataclasses.asdict(make_schedule(preset, **overrides))

    # -- the evaluation ------------------------------------------------------------------------------------
    def evaluation_units(self) -> list[EvaluationUnit]:
        return [EvaluationUnit(c, s) for s in self.seeds for c in self.configs]

    def models_of(self, config: str, seed: int) -> list[str]:
        return [str(self.checkpoint(ZooUnit(config, r, seed))) for r in self.regimes]

    @property
    def attributions_dir(self) -> Path:
        """Where this plan publishes its zero-shot attribution bundles (the RMA reference users read instead of
        computing, :mod:`gecobench.evaluation.published_reference`): by default beside its store, so the committed
        plan writes ``reference/zero_shot_attributions``."""
        from gecobench.evaluation.published_reference import BUNDLE_FOLDER

        return Path(self.zero_shot_attributions or Path(self.store).parent / BUNDLE_FOLDER)

    @property
    def filters_dir(self) -> Path:
        """Where the paper's filter subsets are (``<config>.json``): ``filters/`` beside the store."""
        from gecobench.evaluation.filters import SUBSET_FOLDER

        return Path(self.store).parent / SUBSET_FOLDER

    @property
    def staging_dir(self) -> Path:
        return Path(self.staging or Path(self.store).parent / STAGING_FOLDER)

    def seed_staging(self, seed: int) -> Path:
        """``staging/seed-<k>``: the finished units of one seed (``store/`` and ``units/<config>.json``)."""
        return self.staging_dir / f"seed-{seed}"

    def staged_store(self, seed: int) -> Path:
        return self.seed_staging(seed) / "store"

    def unit_marker(self, unit: EvaluationUnit) -> Path:
        return self.seed_staging(unit.seed) / "units" / f"{unit.config}.json"

    def promotion_marker(self, seed: int) -> Path:
        return self.staging_dir / f"promoted-seed-{seed}.json"

    def predictions_file(self, unit: ZooUnit) -> Path:
        """``staging/predictions/<config>/<regime>-seed<k>.json``: one checkpoint's test predictions (committed)."""
        return self.staging_dir / PREDICTIONS_FOLDER / unit.config / f"{unit.regime}-seed{unit.seed}.json"

    def columns_file(self, unit: EvaluationUnit, regime: str) -> Path:
        """``staging/seed-<k>/columns/<config>/<regime>.json.gz``: what every record of one model is scored from."""
        return self.seed_staging(unit.seed) / COLUMNS_FOLDER / unit.config / f"{regime}.json.gz"

    @property
    def defining_seeds(self) -> tuple[int, ...]:
        return self.filter_seeds if self.filter_seeds is not None else self.seeds

    def evaluation_settings(self, seed: int) -> Any:
        """The :class:`~gecobench.evaluation.settings.EvaluationSettings` of one seed's evaluation."""
        from gecobench.evaluation.settings import EvaluationSettings

        return EvaluationSettings(seed=seed, properties=True, bootstrap=self.bootstrap, max_groups=self.max_groups,
                                  properties_max_groups=self.properties_groups,
                                  faithfulness_max_groups=self.properties_groups)


def select_shard(units: Sequence[Any], shard: tuple[int, int] | None) -> list[Any]:
    """Units of shard ``k`` of ``n`` (1-based): every n-th unit, so each shard gets a mix of configs."""
    if shard is None:
        return list(units)
    k, n = shard
    if not 1 <= k <= n:
        raise ValueError(f"shard {k}/{n}: expected 1 <= K <= N")
    return [u for i, u in enumerate(units) if i % n == k - 1]


def zoo_units_of_shard(plan: ReferencePlan, shard: tuple[int, int] | None) -> list[ZooUnit]:
    """The checkpoints shard ``k`` of ``n`` trains: every regime of the (config, seed) units it evaluates.

    So ``--stage all --shard K/N`` never waits for, or reads, another shard's checkpoints: shards can run on
    machines that share no disk, and a shard starts its evaluation as soon as its own training is done.
    """
    if shard is None:
        return plan.zoo_units()
    evaluated = {(unit.config, unit.seed) for unit in select_shard(plan.evaluation_units(), shard)}
    return [unit for unit in plan.zoo_units() if (unit.config, unit.seed) in evaluated]


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/3"`` → ``(2, 3)``, with an error naming the value when it is not ``K/N``."""
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit() or not 1 <= int(k) <= int(n):
        raise ValueError(f"--shard expects K/N with 1 <= K <= N, got {text!r}")
    return int(k), int(n)


def checkpoint_is_current(plan: ReferencePlan, unit: ZooUnit) -> bool:
    """A finished checkpoint made with exactly the planned schedule (a changed plan retrains the cell)."""
    from gecobench.models.training import INFO_FILE

    info_file = plan.checkpoint(unit) / INFO_FILE
    if not info_file.is_file():
        return False
    info = json.loads(info_file.read_text(encoding="utf-8"))
    return info.get("schedule") == plan.planned_schedule(unit.regime, unit.config)


class Timings:
    """Wall time per unit (and the process's CPU seconds for it: what the unit cost when the cores were shared),
    kept in a JSON file so a resumed run keeps the times of the units it skips."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.entries: dict[str, dict[str, Any]] = {}
        if self.path.is_file():
            self.entries = json.loads(self.path.read_text(encoding="utf-8")).get("units", {})

    def record(self, key: str, seconds: float, **facts: Any) -> None:
        # Shards and zoo workers run as separate processes on one file: under the folder's lock, take in what the
        # others wrote since we read it, then write.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _folder_lock(self.path.parent):
            if self.path.is_file():
                self.entries = {**json.loads(self.path.read_text(encoding="utf-8")).get("units", {}), **self.entries}
            self.entries[key] = {"seconds": round(seconds, 1), **facts}
            self.save()

    def save(self) -> None:
        from gecobench.provenance import base_provenance

        self.path.parent.mkdir(parents=True, exist_ok=True)
        stages: dict[str, float] = {}
        stages_cpu: dict[str, float] = {}
        for key, entry in self.entries.items():
            stage = key.split("/")[0]
            stages[stage] = stages.get(stage, 0.0) + entry["seconds"]
            if "cpu_seconds" in entry:  # units timed before CPU seconds were recorded have none
                stages_cpu[stage] = stages_cpu.get(stage, 0.0) + entry["cpu_seconds"]
        document = {"stages_seconds": {k: round(v, 1) for k, v in sorted(stages.items())},
                    "stages_cpu_seconds": {k: round(v, 1) for k, v in sorted(stages_cpu.items())},
                    "units": dict(sorted(self.entries.items())), "provenance": base_provenance(None)}
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        partial.replace(self.path)  # atomic: a reader never sees half a file


def run_zoo(plan: ReferencePlan, shard: tuple[int, int] | None = None, threads: int = 1,
            progress: bool = True, train: Callable[..., Path] | None = None,
            predictions: bool = True, workers: int = 1) -> list[ZooUnit]:
    """Train every missing or outdated checkpoint of this shard; return the units trained now. With
    ``predictions``, every current checkpoint's test predictions are written (:func:`write_predictions`) where the
    committed file is missing or names another checkpoint.

    ``workers`` > 1 trains that many checkpoints at once, each in a process of its own with ``threads`` torch
    threads (``train``, if given, must then be picklable). On two cores two one-thread workers use the cores better
    than one two-thread process: OLA's small matrices and each checkpoint's loading, saving and predictions leave
    a second thread idle, which the other worker's training fills (BENCHMARKS.md, "Model zoo training"). They
    start longest first, by the time the same (config, regime) took for other seeds (:func:`expected_zoo_seconds`).
    A worker's failure stops the checkpoints not yet started; those already running finish (they are kept), then
    the error is raised."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    units = zoo_units_of_shard(plan, shard)
    if workers == 1:
        return [unit for i, unit in enumerate(units, start=1)
                if _zoo_checkpoint(plan, unit, f"[{i}/{len(units)}]", threads, progress, train, predictions)]
    import concurrent.futures
    import multiprocessing

    expected = expected_zoo_seconds(plan)
    ordered = sorted(units, key=lambda u: -expected.get((u.config, u.regime), 0.0))  # stable: plan order on ties
    # spawn, not fork: the parent may hold torch's thread pools, which a forked child inherits broken
    context = multiprocessing.get_context("spawn")
    trained, failure = [], None
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        log_level = logging.getLogger().getEffectiveLevel()
        futures = {pool.submit(_zoo_worker, plan, unit, f"[{i}/{len(ordered)}]", threads, train, predictions,
                               log_level): unit for i, unit in enumerate(ordered, start=1)}
        for future in concurrent.futures.as_completed(futures):
            try:
                if future.result():
                    trained.append(futures[future])
            except concurrent.futures.CancelledError:
                pass
            except Exception as err:  # noqa: BLE001 - the first failure is raised once the running ones finish
                if failure is None:
                    failure = err
                    for other in futures:
                        other.cancel()
    if failure is not None:
        raise failure
    return [unit for unit in units if unit in trained]


def expected_zoo_seconds(plan: ReferencePlan) -> dict[tuple[str, str], float]:
    """(config, regime) → the mean CPU seconds its checkpoint took to train for the seeds in the timings file (wall
    seconds where a unit has no CPU time): what :func:`run_zoo`'s workers order their checkpoints by."""
    if not Path(plan.timings).is_file():
        return {}
    seconds: dict[tuple[str, str], list[float]] = {}
    for key, entry in Timings(plan.timings).entries.items():
        parts = key.split("/")
        if len(parts) == 4 and parts[0] == "zoo" and isinstance(entry, dict):
            value = entry.get("cpu_seconds", entry.get("seconds"))
            if isinstance(value, (int, float)):
                seconds.setdefault((parts[1], parts[2]), []).append(float(value))
    return {cell: sum(values) / len(values) for cell, values in seconds.items()}


def _zoo_worker(plan: ReferencePlan, unit: ZooUnit, position: str, threads: int,
                train: Callable[..., Path] | None, predictions: bool, log_level: int) -> bool:
    """One checkpoint in a worker process of :func:`run_zoo` (no progress bars: several would share one terminal)."""
    if not logging.getLogger().handlers:  # a spawned process starts without the command's logging set-up
        logging.basicConfig(level=log_level, format="%(levelname)s %(name)s: %(message)s")
    return _zoo_checkpoint(plan, unit, position, threads, False, train, predictions)


def _zoo_checkpoint(plan: ReferencePlan, unit: ZooUnit, position: str, threads: int, progress: bool,
                    train: Callable[..., Path] | None, predictions: bool) -> bool:
    """Train ``unit``'s checkpoint unless it is current (then only write its predictions where they are not);
    whether it was trained."""
    if train is None:
        from gecobench.models.training import train_regime as train
    folder = plan.checkpoint(unit)
    if checkpoint_is_current(plan, unit):
        log.info("%s %s: done already", position, unit.key)
        if predictions and predictions_state(plan, unit) != "current":
            _with_threads(threads, functools.partial(write_predictions, plan, unit))
        return False
    if folder.exists():
        # Made with another schedule: keep it beside, never silently reuse or delete it.
        stale = folder.with_name(folder.name + f".stale-{int(time.time())}")
        folder.rename(stale)
        log.warning("%s was made with another schedule; moved to %s", folder, stale)
    preset, overrides = plan.schedule_for(unit.regime, unit.config)
    log.info("%s %s: training (%s %s)", position, unit.key, preset, overrides)
    start, cpu_start = time.perf_counter(), time.process_time()
    target = None if (unit.regime, unit.config) in BELOW_ACCURACY_TARGET else RESTART_BELOW
    _with_threads(threads, functools.partial(train, unit.regime, unit.config, unit.seed, folder, schedule=preset,
                                             show_progress=progress, max_restarts=ZOO_MAX_RESTARTS,
                                             restart_below=target, **overrides))
    Timings(plan.timings).record(unit.key, time.perf_counter() - start,
                                 cpu_seconds=round(time.process_time() - cpu_start, 1))
    if predictions:
        _with_threads(threads, functools.partial(write_predictions, plan, unit))
    return True


def write_predictions(plan: ReferencePlan, unit: ZooUnit, data_dir: str | None = None) -> Path:
    """One checkpoint's test predictions (every row of the evaluation's sentence groups: source sentence id, gender
    variant's label, predicted class, correct or not) and accuracy, in :meth:`ReferencePlan.predictions_file`, with
    the checkpoint's identity, its training schedule (:func:`checkpoint_schedule_record`: the plan's preset,
    overrides and fields when the checkpoint's info file records the plan's fields) and the file's own fingerprint
    (``sha256``, checked by :func:`read_predictions`).

    Predicted as the evaluation predicts (same chunks and batching, :func:`~gecobench.evaluation.chunks.
    chunk_predictions`), so the paper's subset computed from these files is the one a run on the weights computes.
    A small file, committed: the subset then needs no weights, so seeds trained on different machines (or
    sessions) define it together."""
    from gecobench.evaluation.chunks import chunk_predictions, split_into_chunks
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.modelling import load_model
    from gecobench.models.training import stayed_at_chance

    folder = plan.checkpoint(unit)
    settings = plan.evaluation_settings(unit.seed)
    split = load_split(unit.config, settings.split, data_dir if data_dir is not None else settings.data_dir)
    start, cpu_start = time.perf_counter(), time.process_time()
    lm = load_model(folder)
    val_accuracy, num_labels = lm.info.get("val_accuracy"), lm.info.get("num_labels")
    if unit.regime != "ZS" and val_accuracy is not None and num_labels and stayed_at_chance(val_accuracy, num_labels):
        # its predictions would define the paper's shared filter: one class for every sentence empties it
        attempts = len((lm.info.get("training") or {}).get("attempts") or [None])
        raise ValueError(f"{unit.key}: the checkpoint in {folder} stayed at chance (validation accuracy "
                         f"{val_accuracy:.3f} with {num_labels} classes, after {attempts} training attempt(s)); its "
                         "predictions are not written. Train it again (the zoo stage restarts such a run up to "
                         f"{ZOO_MAX_RESTARTS} times from derived initialisation seeds)")
    rows = []
    for chunk in split_into_chunks(split, settings):
        for row, predicted in chunk_predictions(lm, split, chunk, settings).items():
            label = split.rows[row].label
            rows.append({"row": row, "sentence_id": int(split.rows[row].sentence_id), "label": int(label),
                         "predicted": int(predicted), "correct": int(predicted) == int(label)})
    document = {"format": PREDICTIONS_FORMAT, "config": unit.config, "regime": unit.regime, "seed": unit.seed,
                "name": unit.key, "checkpoint_sha256": lm.checkpoint_sha256, "function_sha256": lm.function_sha256,
                "init_seed": lm.info.get("init_seed", unit.seed),
                "schedule": checkpoint_schedule_record(plan, unit, lm.info.get("schedule")),
                "split": split.split, "dataset_fingerprint": split.fingerprint,
                "chunking": {"chunk_size": settings.chunk_size, "batch_size": settings.batch_size,
                             "max_groups": settings.max_groups},
                "test_accuracy": lm.info.get("test_accuracy"),
                "accuracy": sum(r["correct"] for r in rows) / len(rows) if rows else None, "n_rows": len(rows),
                "rows": rows}
    path = plan.predictions_file(unit)
    _write_json(path, {**document, SHA256_FIELD: fingerprint(document, PREDICTIONS_UNHASHED)})
    Timings(plan.timings).record(f"predictions/{unit.config}/{unit.regime}/seed{unit.seed}",
                                 time.perf_counter() - start, cpu_seconds=round(time.process_time() - cpu_start, 1))
    log.info("%s: test predictions written to %s (commit it)", unit.key, path)
    return path


def read_predictions(path: Path, split: Any = None, unit: ZooUnit | None = None) -> dict[str, Any]:
    """A predictions file, validated (ValueError naming the file and what is wrong); with ``split``, refused unless
    made on its config, split and data with every row's sentence id and label; with ``unit``, unless that
    checkpoint's. Read by the package's one reader of fingerprinted files (:func:`gecobench.fingerprinted.
    read_fingerprinted`): a file that records its fingerprint (every file since 1.0) is refused when its content
    does not hash to it. The document gains (or keeps) ``sha256``: its fingerprint (canonical JSON, provenance left
    out), the same for a file written before 1.0, which records none. Whether its training schedule is the plan's
    is :func:`predictions_state`'s question, not this one's."""
    document, actual = read_fingerprinted(
        path, file_format=PREDICTIONS_FORMAT, kind="predictions file", unhashed=PREDICTIONS_UNHASHED,
        required=("config", "regime", "seed", "checkpoint_sha256", "split", "dataset_fingerprint", "rows"))
    if unit is not None and (document["config"], document["regime"], document["seed"]) != (
            unit.config, unit.regime, unit.seed):
        raise ValueError(f"{path}: predictions of {document['config']}/{document['regime']}/seed{document['seed']}, "
                         f"not of {unit.key}")
    schedule = document.get("schedule")
    if schedule is not None and not (isinstance(schedule, dict) and {"preset", "overrides", "fields"} <= set(schedule)):
        raise ValueError(f"{path}: 'schedule' must name the preset, overrides and fields of the checkpoint's "
                         f"training schedule, got {schedule!r}")
    rows = document["rows"]
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{path}: 'rows' must be a non-empty list")
    seen = set()
    for position, row in enumerate(rows):
        if not isinstance(row, dict) or not all(isinstance(row.get(k), int) and not isinstance(row.get(k), bool)
                                                for k in ("row", "sentence_id", "label", "predicted")):
            raise ValueError(f"{path}: rows[{position}] needs integer row, sentence_id, label and predicted")
        if row.get("correct") is not (row["predicted"] == row["label"]):
            raise ValueError(f"{path}: rows[{position}] says correct={row.get('correct')!r} for predicted "
                             f"{row['predicted']} and label {row['label']}")
        if row["row"] in seen:
            raise ValueError(f"{path}: row {row['row']} appears twice")
        seen.add(row["row"])
    if split is not None:
        if (document["config"], document["split"], document["dataset_fingerprint"]) != (
                split.config, split.split, split.fingerprint):
            raise ValueError(f"{path}: predictions on {document['config']}/{document['split']} with data "
                             f"{str(document['dataset_fingerprint'])[:16]}…, not on {split.config}/{split.split} "
                             f"({split.fingerprint[:16]}…)")
        for row in rows:
            if not 0 <= row["row"] < len(split.rows):
                raise ValueError(f"{path}: row {row['row']} is not in the split")
            truth = split.rows[row["row"]]
            if (row["sentence_id"], row["label"]) != (int(truth.sentence_id), int(truth.label)):
                raise ValueError(f"{path}: row {row['row']} names sentence {row['sentence_id']} label "
                                 f"{row['label']}; the split has {truth.sentence_id} label {truth.label}")
    return {**document, SHA256_FIELD: actual}


# -- which training schedule a prediction file comes from (the rule: predictions_state) ----------------------------


def schedule_record(plan: ReferencePlan, unit: ZooUnit) -> dict[str, Any]:
    """The schedule a prediction file of ``unit`` must record to be of the plan's checkpoint: the preset and
    overrides of :meth:`ReferencePlan.schedule_for` and every field they resolve to, as JSON holds them."""
    preset, overrides = plan.schedule_for(unit.regime, unit.config)
    return _as_json({"preset": preset, "overrides": overrides,
                     "fields": plan.planned_schedule(unit.regime, unit.config)})


def checkpoint_schedule_record(plan: ReferencePlan, unit: ZooUnit, fields: Any) -> dict[str, Any]:
    """What a prediction file records for a checkpoint of ``unit`` trained with schedule ``fields`` (its info
    file's ``schedule``): the plan's record when those are the plan's fields; else the fields alone (preset and
    overrides None: no preset of this plan), so the file is not taken for the plan's."""
    planned = schedule_record(plan, unit)
    if _as_json(fields) == planned["fields"]:
        return planned
    return {"preset": None, "overrides": None, "fields": _as_json(fields)}


def _as_json(value: Any) -> Any:
    # what the value reads back as from a file (tuples as lists, keys as text): records compare as stored
    return json.loads(json.dumps(value))


def describe_schedule(record: dict[str, Any] | None, planned: dict[str, Any] | None = None) -> str:
    """A schedule record in words: ``short {'max_train_sentences': 600}``; with ``planned``, the fields that differ
    from the planned ones too (a preset redefined since, or a schedule of no preset of the plan)."""
    if record is None:
        return "no recorded schedule"
    fields = record.get("fields")
    named = f"{record['preset']} {record.get('overrides') or {}}" if record.get("preset") is not None else \
        "no preset of the plan"
    if planned is None or not isinstance(fields, dict) or fields == planned["fields"]:
        return named
    theirs = planned["fields"]
    differ = {k: fields.get(k) for k in sorted(set(fields) | set(theirs)) if fields.get(k) != theirs.get(k)}
    return f"{named} (fields {', '.join(f'{k}={v!r}' for k, v in differ.items())})"


def _same_schedule(record: Any, planned: dict[str, Any]) -> bool:
    if not isinstance(record, dict):
        return False
    if (record.get("preset"), record.get("overrides")) != (planned["preset"], planned["overrides"]):
        return False
    return record.get("fields") == planned["fields"]


#: (folder, its files' names, sizes and modification times) → fingerprint: the plan printer asks for each
#: checkpoint twice (its cell, then its config's subset), and hashing the weights is most of the cost
_FINGERPRINTS: dict[tuple[Any, ...], str] = {}


def _checkpoint_sha256(folder: Path) -> str:
    from gecobench.provenance import checkpoint_fingerprints

    key = (str(folder), tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                                     for p in folder.iterdir() if p.is_file())))
    if key not in _FINGERPRINTS:
        _FINGERPRINTS[key] = checkpoint_fingerprints(folder)[0]
    return _FINGERPRINTS[key]


def predictions_verdict(plan: ReferencePlan, unit: ZooUnit) -> tuple[str, str]:
    """``(state, why)`` of a cell's prediction file (:func:`predictions_state`); ``why`` names the file and, for a
    schedule that is not the plan's, both schedules."""
    from gecobench.models.training import INFO_FILE

    path = plan.predictions_file(unit)
    if not path.is_file():
        return "missing", f"{path}: not written yet"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return "stale", f"{path}: unreadable ({err}); write it again"
    if not isinstance(document, dict):
        return "stale", f"{path}: not a predictions file; write it again"
    planned = schedule_record(plan, unit)
    folder = plan.checkpoint(unit)
    here = (folder / INFO_FILE).is_file()
    named_here = here and document.get("checkpoint_sha256") == _checkpoint_sha256(folder)
    if checkpoint_is_current(plan, unit) and not named_here:
        return "stale", (f"{path} names checkpoint {str(document.get('checkpoint_sha256'))[:12]}, not the plan's "
                         f"one here ({folder})")
    recorded = document.get("schedule")
    if named_here:  # its checkpoint is here: what that says it was trained with is the file's schedule
        info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
        recorded = checkpoint_schedule_record(plan, unit, info.get("schedule"))
    elif recorded is None:  # written before 1.0, its checkpoint elsewhere: nothing shows its schedule
        return "unverified", (f"{path} records no schedule (written before 1.0) and its checkpoint "
                              f"{str(document.get('checkpoint_sha256'))[:12]} is not here to show it")
    if _same_schedule(recorded, planned):
        return "current", f"{path}: {describe_schedule(planned)}"
    return "stale", (f"{path} comes from a checkpoint trained with {describe_schedule(recorded, planned)}; the "
                     f"plan's schedule of {unit.key} is {describe_schedule(planned)}")


def predictions_state(plan: ReferencePlan, unit: ZooUnit) -> str:
    """``current``, ``stale``, ``unverified`` or ``missing``: whether a cell's prediction file stands for the plan's
    checkpoint of the cell (:func:`predictions_verdict` says why, naming the file and both schedules).

    A prediction file stands for its checkpoint where the weights are not (the filters stage reads the files
    alone), so it must say what the checkpoint was trained with: a changed plan (:data:`SCHEDULE_EXCEPTIONS`,
    :data:`REFERENCE_SCHEDULES`, a preset redefined) retrains the cell, and meanwhile the old checkpoint's file must
    not define the shared subset. Since 1.0 every file records ``schedule``: the preset and overrides
    (:meth:`ReferencePlan.schedule_for`) and every field they resolve to (:meth:`ReferencePlan.planned_schedule`,
    so a redefined preset is caught too). The states:

    - ``stale``: the plan's checkpoint is here and the file names another, or the file's schedule is not the plan's
      (where the checkpoint the file names is here, the schedule that checkpoint's info file records);
    - ``current``: neither — the file is the plan's checkpoint's, made here or committed by the machine that
      trained it;
    - ``unverified``: written before 1.0, the file records no schedule, and its provenance names none (package
      version, commit, libraries, time; no training facts), so nothing in it shows which schedule made it. It is
      taken to have its checkpoint's schedule only where that checkpoint is here and shows it: the cell's
      checkpoint folder has the fingerprint the file names, and its info file records the schedule (``current`` or
      ``stale`` by that). Elsewhere, ``unverified``: reported by ``--plan``, refused by the filters stage. The
      committed files are not rewritten by guesswork: where the checkpoints are, :func:`record_schedules`
      (``gecobench reference --record-schedules``) writes the schedule its checkpoint shows into each such file,
      once. (A lenient rule — trust a file without schedule — would let exactly the case this state exists for
      through: a cell whose schedule changed, its old file committed and its weights elsewhere.)
    """
    return predictions_verdict(plan, unit)[0]


def record_schedules(plan: ReferencePlan, units: Iterable[ZooUnit] | None = None) -> list[Path]:
    """Write the schedule into each prediction file of ``units`` (default the plan's zoo) that records none and
    whose checkpoint is here and shows the plan's schedule (:func:`predictions_verdict` ``current``): a one-time
    migration of files written before 1.0, run where the weights are. Nothing else of the file changes — rows,
    accuracies, checkpoint identity and provenance stay as they are (a ``schedule_recorded`` block says when and
    from what the schedule was added) — but its fingerprint, recomputed by :func:`read_predictions`'s reader and
    recorded. A subset defined by the file before is then stale (it names the old fingerprint): migrate before the
    filters stage. Returns the files changed."""
    from gecobench.provenance import utc_now

    changed = []
    for unit in units if units is not None else plan.zoo_units():
        path = plan.predictions_file(unit)
        if not path.is_file() or predictions_state(plan, unit) != "current":
            continue
        document = read_predictions(path, unit=unit)
        if "schedule" in document and document["schedule"] is not None:
            continue
        document = {k: v for k, v in document.items() if k != SHA256_FIELD}
        document["schedule"] = schedule_record(plan, unit)
        document["schedule_recorded"] = {"from": f"the {MODEL_INFO_FILE} of checkpoint "
                                                 f"{document['checkpoint_sha256'][:12]}, the one the file names",
                                         "at": utc_now()}
        document[SHA256_FIELD] = fingerprint(document, PREDICTIONS_UNHASHED)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        partial.replace(path)
        log.info("%s: schedule %s recorded in %s (commit it)", unit.key, describe_schedule(document["schedule"]),
                 path)
        changed.append(path)
    return changed


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` for as long as the block runs (``flock`` on the directory itself, so no lock
    file is left beside the results; where ``fcntl`` is missing, no lock)."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: one process per file is the rule there
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def _with_threads(threads: int, work: Callable[[], Any]) -> Any:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return work()
    finally:
        torch.set_num_threads(before)


def write_zoo_summary(plan: ReferencePlan) -> list[dict[str, Any]]:
    """``reference/zoo_summary.json``: one row per checkpoint (accuracy, schedule, base, revision), no weights.

    Merged into the committed file, never rebuilt from this machine alone: a session that trains one config (or
    runs on a new machine without the other checkpoints) must not drop the rows of models trained elsewhere. Per
    cell of the plan: a checkpoint here gives its row from its info file; otherwise a committed prediction file of
    the plan's checkpoint (:func:`predictions_state` ``current``) gives one (accuracy, schedule and identity from
    the file; the facts only the info file holds are kept from the committed row of the same checkpoint, else
    None). Rows of cells outside the plan, and rows no current source replaces, stay as committed. Every row
    names its ``checkpoint_sha256`` so a reader can tell which model it describes."""
    from gecobench.models.training import INFO_FILE

    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    if plan.zoo_summary.is_file():
        committed = json.loads(plan.zoo_summary.read_text(encoding="utf-8"))
        if not isinstance(committed, list) or not all(isinstance(row, dict) for row in committed):
            raise ValueError(f"{plan.zoo_summary} is not a list of rows; fix or remove it before the zoo stage")
        rows = {(row["config"], row["regime"], row["seed"]): row for row in committed}
    timings = Timings(plan.timings)
    for unit in plan.zoo_units():
        key = (unit.config, unit.regime, unit.seed)
        folder = plan.checkpoint(unit)
        info_file = folder / INFO_FILE
        if info_file.is_file():
            info = json.loads(info_file.read_text(encoding="utf-8"))
            rows[key] = {
                "config": unit.config, "regime": unit.regime, "seed": unit.seed,
                # not the seed when a run stayed at chance or under its target and was restarted (ZOO_MAX_RESTARTS)
                "init_seed": info.get("init_seed", unit.seed),
                "test_accuracy": info["test_accuracy"], "val_accuracy": info.get("val_accuracy"),
                "n_test": info.get("n_test"), "base_model": info["base_model"],
                "base_revision": info.get("base_revision"), "zero_shot_method": info.get("zero_shot_method"),
                "schedule": info.get("schedule"), "learning_rate": info.get("learning_rate"),
                "head_learning_rate": info.get("head_learning_rate"), "training_time_s": info.get("training_time_s"),
                "meets_80_percent": info["test_accuracy"] >= ACCURACY_TARGET, "package_version": info.get("package_version"),
                "git_commit": (info.get("provenance") or {}).get("git_commit"),
                "checkpoint_sha256": _checkpoint_sha256(folder),
            }
            if unit.key not in timings.entries and info.get("training_time_s") is not None:
                # a checkpoint made before this plan's timings existed: its own recorded training time
                timings.entries[unit.key] = {"seconds": round(info["training_time_s"], 1), "from": MODEL_INFO_FILE}
        elif predictions_state(plan, unit) == "current":
            document = read_predictions(plan.predictions_file(unit), unit=unit)
            before = rows.get(key) or {}
            same_model = before.get("checkpoint_sha256") == document["checkpoint_sha256"]
            kept = {name: before.get(name) if same_model else None
                    for name in ("val_accuracy", "base_model", "base_revision", "zero_shot_method",
                                 "learning_rate", "head_learning_rate")}
            timing = timings.entries.get(unit.key) or {}
            rows[key] = {
                "config": unit.config, "regime": unit.regime, "seed": unit.seed,
                "init_seed": document.get("init_seed", unit.seed),
                "test_accuracy": document["test_accuracy"], "n_test": document.get("n_rows", len(document["rows"])),
                **kept,
                "schedule": (document.get("schedule") or {}).get("fields"),
                "training_time_s": before.get("training_time_s") if same_model else timing.get("seconds"),
                "meets_80_percent": document["test_accuracy"] >= ACCURACY_TARGET,
                "package_version": (document.get("provenance") or {}).get("package_version"),
                "git_commit": (document.get("provenance") or {}).get("git_commit"),
                "checkpoint_sha256": document["checkpoint_sha256"],
                "from": "its committed prediction file (checkpoint not here)",
            }
    timings.save()
    order = {name: i for i, name in enumerate(GECO_CONFIGS)}
    merged = sorted(rows.values(), key=lambda row: (row["seed"], order.get(row["config"], len(order)),
                                                     plan.regimes.index(row["regime"])
                                                     if row["regime"] in plan.regimes else len(plan.regimes)))
    plan.zoo_summary.parent.mkdir(parents=True, exist_ok=True)
    partial = plan.zoo_summary.with_name(f".{plan.zoo_summary.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    partial.replace(plan.zoo_summary)  # atomic: a reader never sees half a file
    return merged


def _defining_units(plan: ReferencePlan, config: str) -> list[ZooUnit]:
    """The checkpoints whose predictions define a config's shared subset: every defining seed of every regime but
    ZS (see :mod:`gecobench.evaluation.filters`)."""
    from gecobench.evaluation.filters import ZERO_SHOT_REGIME

    return [ZooUnit(config, r, s) for s in plan.defining_seeds for r in plan.regimes if r != ZERO_SHOT_REGIME]


def _relative(plan: ReferencePlan, path: Path) -> str:
    return Path(path).relative_to(plan.staging_dir).as_posix()


def subset_state(plan: ReferencePlan, config: str) -> tuple[str, str]:
    """``(state, detail)`` of a config's shared subset: ``outdated predictions`` (there is a subset file, or every
    defining prediction file is there, and one of them is not the plan's checkpoint's: another schedule, none known,
    or another checkpoint than the plan's one here — :func:`predictions_verdict`; the detail names each file and
    both schedules), ``done`` (its file is defined by exactly the prediction files committed now), ``stale`` (by
    others), ``to compute`` (every prediction file is there) or ``waiting`` (the detail counts the outdated ones
    too)."""
    from gecobench.evaluation.filters import load_subset, subset_file

    units = _defining_units(plan, config)
    present = [u for u in units if plan.predictions_file(u).is_file()]
    # a file of another schedule than the plan's (or of none known) defines no subset, computed or kept
    outdated = [why for state, why in (predictions_verdict(plan, u) for u in present) if state != "current"]
    path = subset_file(Path(plan.store).parent, config)
    if outdated and (path.is_file() or len(present) == len(units)):
        return "outdated predictions", (f"{len(outdated)} prediction file(s) not of the plan's checkpoints: "
                                        + "; ".join(outdated))
    if path.is_file():
        subset = load_subset(path, config)
        current = {_relative(plan, plan.predictions_file(u)): read_predictions(plan.predictions_file(u))["sha256"]
                   for u in present}
        recorded = {f["path"]: f["sha256"] for f in subset.prediction_files}
        if recorded == current and len(current) == len(units):
            return "done", (f"{subset.size} of {subset.n_considered} source sentences, {len(recorded)} prediction "
                            f"files, {subset.fingerprint[:12]}")
        return "stale", (f"defined by {len(recorded)} prediction files, the plan's {len(units)} now committed "
                         f"differ ({len(current)} present)")
    if len(present) == len(units):
        return "to compute", f"all {len(units)} prediction files present"
    missing = [u.key for u in units if u not in present]
    return "waiting", f"{len(present)} of {len(units)} prediction files; missing {', '.join(missing[:4])}" + (
        " …" if len(missing) > 4 else "") + (f"; {len(outdated)} not of the plan's checkpoints" if outdated else "")


def write_filter_subsets(plan: ReferencePlan, configs: Iterable[str] | None = None,
                         data_dir: str | None = None) -> dict[str, Any]:
    """The paper's shared subset of each config in ``plan.filters_dir`` (``<config>.json``), computed from the
    committed prediction files of every defining checkpoint (:func:`write_predictions`) — no weights needed; returns
    them by config.

    A subset file already there is kept when the prediction files it records (path and fingerprint) are exactly
    those committed now. When they differ (a retrained checkpoint wrote its file again) it is computed again: kept
    on the same sentences (rewritten with the files that define it now; its fingerprint, of the sentences, is the
    same, so records derived with it stay valid), refused with what to do on other sentences (records derived with
    it carry its fingerprint). A missing one needs every defining checkpoint's prediction file."""
    from gecobench.evaluation.filters import FilterSubsetError, load_subset, subset_file

    subsets = {}
    for config in configs or plan.configs:
        path = subset_file(Path(plan.store).parent, config)
        state, detail = subset_state(plan, config)
        if state == "done":
            subsets[config] = load_subset(path, config)
            continue
        if state == "outdated predictions":
            raise FilterSubsetError(
                f"the paper's filter of {config} is defined by the plan's checkpoints only, and {detail}. Train "
                "the cell again (--stage zoo, which writes its prediction file) and commit the new file; a file "
                "written before 1.0 gets its schedule recorded where its checkpoint is (gecobench reference "
                "--record-schedules)")
        if state == "stale":
            if not all(plan.predictions_file(u).is_file() for u in _defining_units(plan, config)):
                raise FilterSubsetError(
                    f"{path} is {detail}: another set of seeds, whose prediction files are not all here. Records "
                    "derived with it keep its fingerprint; delete the file (and the staged paper-filter records made "
                    "with it) to compute the subset again")
            # Retrained checkpoints (new last bits) have written their prediction files again. With the same
            # predictions they keep the same sentences: the subset is rewritten with the files that define it now,
            # its fingerprint (of the sentences) unchanged, so records derived on it stay valid. Other sentences
            # would leave those records on a subset that no longer is the config's: refused.
            fresh = _compute_subset(plan, config, data_dir)
            kept = load_subset(path, config)
            if fresh.fingerprint != kept.fingerprint:
                raise FilterSubsetError(
                    f"{path} is {detail}, and the files committed now keep other sentences ({fresh.size} of "
                    f"{fresh.n_considered}, it kept {kept.size}): retrained checkpoints with other predictions, or "
                    "another set of seeds. Records derived with it keep its fingerprint; delete the file (and the "
                    "staged paper-filter records made with it) to compute the subset again")
            fresh.write(path)
            log.info("%s: the paper's filter is defined by other prediction files now (retrained checkpoints), with "
                     "the same %d source sentences: %s rewritten, fingerprint unchanged", config, fresh.size, path)
            subsets[config] = fresh
            continue
        if state == "waiting":
            raise FileNotFoundError(
                f"the paper's filter of {config} needs the test predictions of every defining checkpoint: {detail}. "
                "Train those seeds' zoo (--stage zoo --seeds ...) and commit reference/staging/predictions")
        subset = _compute_subset(plan, config, data_dir)
        subset.write(path)
        log.info("%s: the paper's filter keeps %d of %d source sentences (%d prediction files); written to %s",
                 config, subset.size, subset.n_considered, len(subset.prediction_files), path)
        subsets[config] = subset
    return subsets


def _compute_subset(plan: ReferencePlan, config: str, data_dir: str | None = None) -> Any:
    """A config's shared subset from the committed prediction files of every defining checkpoint (not written)."""
    from gecobench.evaluation.chunks import split_into_chunks
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.filters import shared_subset

    settings = plan.evaluation_settings(plan.seeds[0])
    split = load_split(config, settings.split, data_dir if data_dir is not None else settings.data_dir)
    groups = [g for chunk in split_into_chunks(split, settings) for g in chunk]
    wanted_rows = {i for g in groups for i in g}
    start, cpu_start = time.perf_counter(), time.process_time()
    predictions: dict[str, dict[int, int]] = {}
    models: dict[str, dict[str, Any]] = {}
    files = []
    for unit in _defining_units(plan, config):
        file = plan.predictions_file(unit)
        document = read_predictions(file, split, unit)
        by_row = {r["row"]: r["predicted"] for r in document["rows"]}
        lacking = sorted(wanted_rows - set(by_row))
        if lacking:
            raise ValueError(f"{file}: no prediction for row(s) {lacking[:5]} of the plan's sentence groups "
                             f"(made with chunking {document.get('chunking')})")
        predictions[unit.key] = by_row
        # named by its zoo unit: the weights need not be on this machine, and a committed subset names no local path
        models[unit.key] = {"name": unit.key, "regime": unit.regime, "seed": unit.seed,
                            "checkpoint_sha256": document["checkpoint_sha256"]}
        files.append({"path": _relative(plan, file), "sha256": document["sha256"]})
    subset = dataclasses.replace(shared_subset(split, groups, predictions, models), prediction_files=tuple(files))
    Timings(plan.timings).record(f"filters/{config}", time.perf_counter() - start,
                                 cpu_seconds=round(time.process_time() - cpu_start, 1), models=len(files))
    return subset


def _marker(plan: ReferencePlan, unit: EvaluationUnit) -> dict[str, Any] | None:
    path = plan.unit_marker(unit)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def unit_state(plan: ReferencePlan, unit: EvaluationUnit) -> str:
    """``promoted`` (its seed is in the store), ``staged`` (both filters' records, waiting for its seed),
    ``evaluated`` (the unfiltered records and the columns; the paper's filter still to derive), ``stale``
    (staged or evaluated with other explainers or explainer versions than the plan's: :func:`stale_explainers`;
    its records are not this plan's, and nothing derives, promotes or silently redoes it) or ``missing``."""
    marker = plan.promotion_marker(unit.seed)
    if marker.is_file() and unit.config in json.loads(marker.read_text(encoding="utf-8")).get("configs", []):
        return "promoted"
    document = _marker(plan, unit)
    if document is None:
        return "missing"
    if stale_explainers(plan, unit, document):
        return "stale"
    return "staged" if "paper" in document.get("filters", ()) else "evaluated"


def stale_explainers(plan: ReferencePlan, unit: EvaluationUnit, document: dict[str, Any] | None = None) -> list[str]:
    """The explainer keys (name, parameters, version) in which a staged unit's marker and the plan differ: the
    unit's own that the plan no longer has, then the plan's that the unit lacks. Empty when they agree, when the
    unit has no marker, or for a marker that records no keys."""
    document = _marker(plan, unit) if document is None else document
    recorded = None if document is None else document.get("explainer_keys")
    if recorded is None:
        return []
    wanted = list(_explainer_keys(plan.explainers).values())
    if list(recorded) == wanted:
        return []
    return [k for k in recorded if k not in wanted] + [k for k in wanted if k not in recorded]


def run_evaluations(plan: ReferencePlan, shard: tuple[int, int] | None = None, progress: bool = True,
                    checkpoint_dir: Path | None = None) -> list[EvaluationUnit]:
    """Score every explainer on every model of each evaluation unit of this shard into the seed's staging store,
    unfiltered (every scorable test sentence), and store each model's evaluation columns beside
    (:mod:`gecobench.evaluation.unit_columns`) so the paper's filter is derived later without weights
    (:func:`derive_units`); a finished unit gets its marker. Units already evaluated, staged or promoted are
    skipped. Returns the units run now. Needs the unit's checkpoints here, with their prediction files."""
    from gecobench.evaluation.runner import process_state, run_evaluation

    timings = Timings(plan.timings)
    units = select_shard(plan.evaluation_units(), shard)
    states = {unit: unit_state(plan, unit) for unit in units}  # each marker read once
    for unit in units:
        if states[unit] == "stale":
            log.warning("%s: staged with other explainers than the plan's (%s): not evaluated again; remove %s and "
                        "its records from %s to redo it", unit.key, ", ".join(stale_explainers(plan, unit)),
                        plan.unit_marker(unit), plan.staged_store(unit.seed))
    todo = [u for u in units if states[u] == "missing"]
    done = []
    # Under `accelerate launch` every process runs the units' evaluations (each its share of the chunks); the
    # main process alone gets the gathered chunks, so it alone writes the unit's files (prediction files, columns,
    # bundle, timings, marker). The others wait for it before the next unit, so no one reads a half-written file.
    processes = process_state()
    checkpoints = checkpoint_dir or Path(plan.checkpoint_root) / "eval_checkpoints"
    for unit in todo:
        models = plan.models_of(unit.config, unit.seed)
        missing = [m for m in models if not (Path(m) / MODEL_INFO_FILE).is_file()]
        if missing:
            raise FileNotFoundError(f"{unit.key}: checkpoints missing ({', '.join(missing)}); run the zoo stage first")
        if processes.is_main_process:
            _write_unit_predictions(plan, unit)
        processes.wait_for_everyone()  # the prediction files are written: the other processes start the unit too
        settings = plan.evaluation_settings(unit.seed)
        start, cpu_start = time.perf_counter(), time.process_time()
        gathered: dict[str, dict[str, Any]] = {}  # filled on the main process only (it gets the gathered chunks)
        summary = run_evaluation(list(plan.explainers), models, [unit.config], settings,
                                 store_location=str(plan.staged_store(unit.seed)), checkpoint_dir=checkpoints,
                                 progress=progress and processes.is_main_process, filters=("none",),
                                 unit_columns=gathered)
        if processes.is_main_process:
            _finish_unit(plan, unit, models, settings, gathered, checkpoints, summary, timings, start, cpu_start,
                         processes.num_processes)
        processes.wait_for_everyone()  # no process starts the next unit before this one's files are written
        done.append(unit)
    return done


def _write_unit_predictions(plan: ReferencePlan, unit: EvaluationUnit) -> None:
    """Each model's prediction file, where missing or of another checkpoint: it must be the weights evaluated here."""
    for regime in plan.regimes:
        zoo_unit = ZooUnit(unit.config, regime, unit.seed)
        state = predictions_state(plan, zoo_unit)
        # a committed file is written again only from a checkpoint of the plan (another's would replace it)
        if state == "missing" or (state != "current" and checkpoint_is_current(plan, zoo_unit)):
            if state == "stale":
                log.warning("%s: its prediction file is not of the checkpoint here (%s); written again (a subset "
                            "defined by the old one is then stale and refused)", zoo_unit.key,
                            predictions_verdict(plan, zoo_unit)[1])
            write_predictions(plan, zoo_unit)


def _finish_unit(plan: ReferencePlan, unit: EvaluationUnit, models: list[str], settings: EvaluationSettings,
                 gathered: dict[str, dict[str, Any]], checkpoints: Path, summary: RunSummary, timings: Timings,
                 start: float, cpu_start: float, n_processes: int = 1) -> None:
    """An evaluated unit's files: each model's columns, the zero-shot bundle, its timing and its marker."""
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.unit_columns import columns_document, write_columns

    split = load_split(unit.config, settings.split, settings.data_dir)
    keys = list(_explainer_keys(plan.explainers).values())
    columns: dict[str, dict[str, Any]] = {}
    zero_shot = None
    # the zero-shot model first: the others' reference columns are its own attributions, stored once
    for regime, model in sorted(zip(plan.regimes, models), key=lambda pair: pair[0] != "ZS"):
        document = columns_document(unit.config, split, [_spec_key(e) for e in plan.explainers],
                                    gathered[str(model)], zero_shot)
        zero_shot = document if regime == "ZS" else zero_shot
        path = write_columns(plan.columns_file(unit, regime), document)
        columns[regime] = {"path": _relative(plan, path), "sha256": document["sha256"],
                           "checkpoint_sha256": document["model"]["checkpoint_sha256"]}
    columns = {regime: columns[regime] for regime in plan.regimes}
    try:
        export_zero_shot_attributions(plan, unit, checkpoints)
    except ValueError as err:  # e.g. records made earlier and their checkpoints since removed: say so, go on
        log.warning("%s: zero-shot reference attributions not published: %s", unit.key, err)
    seconds = per_process_seconds(time.perf_counter() - start, summary.resumed_seconds, n_processes)
    if summary.written:  # a unit that only found its records is not re-timed
        # A unit resumed from its chunk checkpoints also counts the chunks an earlier, interrupted run did.
        # Their CPU seconds are known for checkpoints written since they were kept; otherwise the unit's CPU
        # seconds are this run's only, and the entry says so.
        cpu_seconds = time.process_time() - cpu_start
        facts: dict[str, Any] = {"resumed_seconds": round(summary.resumed_seconds, 1), "processes": n_processes}
        if summary.resumed_cpu_seconds is None:
            facts["cpu_seconds_cover"] = "this run only (resumed chunks without CPU seconds)"
        else:
            cpu_seconds = per_process_seconds(cpu_seconds, summary.resumed_cpu_seconds, n_processes)
        timings.record(unit.key, seconds, records=len(summary.written), cpu_seconds=round(cpu_seconds, 1),
                       **facts)
    _write_json(plan.unit_marker(unit), {
        "config": unit.config, "seed": unit.seed, "record_ids": sorted(summary.written + summary.existing),
        "filters": ["none"], "columns": columns, "explainers": list(plan.explainers), "explainer_keys": keys,
        "regimes": list(plan.regimes), "seconds": round(seconds, 1)})
    log.info("%s evaluated (unfiltered; the paper's filter is derived once every seed's predictions are in) in "
             "%s: commit it (git add %s)", unit.key, plan.seed_staging(unit.seed), plan.seed_staging(unit.seed))


def per_process_seconds(this_run: float, resumed_chunk_seconds: float, n_processes: int) -> float:
    """A unit's seconds per process, wall or CPU (the figures ``timings.json`` keeps): this run's, plus the seconds
    of the chunks it resumed from (each chunk's own, summed over every process that computed them) shared out over
    ``n_processes`` processes working side by side, as this run's did. Adding the sum itself would count a
    two-process run's resumed chunks twice over, as the CPU seconds of the units resumed before 2026-12-06 19:40
    UTC did."""
    if n_processes < 1:
        raise ValueError(f"n_processes must be at least 1, got {n_processes}")
    return this_run + resumed_chunk_seconds / n_processes


def _spec_key(text: str) -> str:
    from gecobench.evaluation.settings import ExplainerSpec

    return ExplainerSpec.parse(text).key()


def derive_units(plan: ReferencePlan, seeds: Iterable[int] | None = None,
                 data_dir: str | None = None) -> list[EvaluationUnit]:
    """The paper-filter records of every evaluated unit (of ``seeds``; default the plan's), derived from its
    committed columns on the shared subset (:func:`write_filter_subsets`, from the prediction files) by the run's
    own scoring path (:func:`gecobench.evaluation.runner.derive_records`): no weights, no model run. Each unit's
    marker then lists both filters' records and the subset's fingerprint. Returns the units derived now."""
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.runner import derive_records
    from gecobench.evaluation.unit_columns import read_columns

    wanted = set(plan.seeds if seeds is None else seeds)
    todo = [u for u in plan.evaluation_units() if u.seed in wanted and unit_state(plan, u) == "evaluated"]
    subsets = write_filter_subsets(plan, sorted({u.config for u in todo}), data_dir) if todo else {}
    timings = Timings(plan.timings)
    done = []
    for unit in todo:
        marker = _marker(plan, unit) or {}
        subset = subsets[unit.config]
        settings = plan.evaluation_settings(unit.seed)
        if data_dir is not None:
            settings = dataclasses.replace(settings, data_dir=data_dir)
        split = load_split(unit.config, settings.split, settings.data_dir)
        explainers = list(marker.get("explainers") or plan.explainers)
        if explainers != list(plan.explainers):
            raise ValueError(f"{unit.key} was evaluated with explainers {explainers}, the plan's are "
                             f"{list(plan.explainers)}: evaluate the unit again")
        # the models scored must be the ones whose predictions defined the subset (a checkpoint retrained after
        # its unit was evaluated would have its own predictions, and so another subset)
        defining = {(m.get("regime"), m.get("seed")): m.get("checkpoint_sha256") for m in subset.defined_by}
        strangers = [regime for regime, facts in (marker.get("columns") or {}).items()
                     if (regime, unit.seed) in defining and facts.get("checkpoint_sha256") != defining[(regime, unit.seed)]]
        if strangers:
            raise ValueError(f"{unit.key}: the columns of {', '.join(strangers)} are of another checkpoint than the "
                             "one whose predictions define the subset: evaluate the unit again with that checkpoint "
                             "(or recompute the subset from the evaluated checkpoints' prediction files)")
        start, cpu_start = time.perf_counter(), time.process_time()
        columns = {}
        zero_shot = None
        for regime in sorted(plan.regimes, key=lambda r: r != "ZS"):
            facts = (marker.get("columns") or {}).get(regime)
            if facts is None:
                raise FileNotFoundError(f"{unit.key}: its marker names no columns of {regime}; evaluate the unit "
                                        "again (its unfiltered records are kept)")
            document = read_columns(plan.staging_dir / facts["path"], split, facts["sha256"], zero_shot)
            zero_shot = document if regime == "ZS" else zero_shot
            columns[f"{unit.config}/{regime}/seed{unit.seed}"] = document["entry"]
        columns = {f"{unit.config}/{regime}/seed{unit.seed}": columns[f"{unit.config}/{regime}/seed{unit.seed}"]
                   for regime in plan.regimes}
        summary = derive_records(explainers, unit.config, columns, settings, "paper",
                                 str(plan.staged_store(unit.seed)), subset=subset)
        timings.record(f"derive/{unit.config}/seed{unit.seed}", time.perf_counter() - start,
                       cpu_seconds=round(time.process_time() - cpu_start, 1), records=len(summary.written))
        _write_json(plan.unit_marker(unit), {
            **{k: v for k, v in marker.items() if k != "provenance"}, "filters": ["none", "paper"],
            "paper_record_ids": sorted(summary.written + summary.existing),
            "filter_subset_sha256": subset.fingerprint})
        log.info("%s: %d paper-filter records derived on %d source sentences", unit.key,
                 len(summary.written) + len(summary.existing), subset.size)
        done.append(unit)
    return done


def _write_json(path: Path, document: dict[str, Any]) -> None:
    from gecobench.provenance import base_provenance

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps({**document, "provenance": base_provenance(None)}, indent=2) + "\n",
                       encoding="utf-8")
    partial.replace(path)


def promote_seed(plan: ReferencePlan, seed: int, replace: bool = False) -> dict[str, Any]:
    """Make a complete seed's staged records part of ``plan.store``: the seed's staged store becomes one of the
    store's parts (:meth:`gecobench.store.LocalStore.add_part`), where its records and per-sentence side files
    stay. Nothing is copied: a promotion that copied a seed's 132 records per unit doubled what the repository's
    history carries (≈ 171 MiB of diffs for seed 2, ``scripts/maintainer/submission_size.py``), most of what one
    submission may carry. Seed 2, promoted by copying before this rule (2026-12-05), stays in the store's own
    folder.

    Refused (ValueError naming the missing units) unless every config of the plan is staged for the seed. Every
    staged record is validated first (:func:`_check_staged_seed`). With ``replace``, the records in the store's
    own folder of this seed (an earlier reference's) and every record of another major version of the package than
    the staged records', whatever its seed (a major version changes every score: its records would stand beside
    the new ones as other rows, and they stay readable at their release tag), are removed with their side files, so
    the store holds the new protocol's records only. Afterwards ``promoted-seed-<k>.json`` lists what was
    promoted; the seed's staging folder stays (it is now part of the store)."""
    from gecobench.evaluation.sentence_scores import side_file_path
    from gecobench.store import LocalStore

    units = [EvaluationUnit(c, seed) for c in plan.configs]
    missing = [u.key for u in units if unit_state(plan, u) == "missing"]
    if missing:
        raise ValueError(f"seed {seed} is not complete: {', '.join(missing)} not staged")
    stale = [f"{u.key} ({', '.join(stale_explainers(plan, u))})" for u in units if unit_state(plan, u) == "stale"]
    if stale:
        raise ValueError(f"seed {seed}: {'; '.join(stale)} staged with other explainers than the plan's: "
                         "evaluate them again before promoting")
    underived = [u.key for u in units if unit_state(plan, u) == "evaluated"]
    if underived:
        raise ValueError(f"seed {seed} is not complete: {', '.join(underived)} have no paper-filter records yet "
                         "(gecobench reference --stage derive, once every seed's predictions are committed)")
    if all(unit_state(plan, u) == "promoted" for u in units):
        return json.loads(plan.promotion_marker(seed).read_text(encoding="utf-8"))
    staged_root = plan.staged_store(seed)
    staged = LocalStore(staged_root).read_all()
    if staged.warnings:
        raise ValueError(f"staged records of seed {seed} do not all read: {staged.warnings[:3]}")
    _check_staged_seed(plan, seed, units, staged.documents)
    target = LocalStore(plan.store)
    removed: list[str] = []
    if replace:
        keep = {r["record_id"] for r in staged.documents}
        majors = {_major_version(r) for r in staged.documents}
        for record in target.read_all("explainer_score").documents:
            path = target.path_for("explainer_score", record["record_id"])
            if not path.is_file() or record["record_id"] in keep:  # not in the own folder: a part's, kept
                continue
            if record["model"].get("seed") == seed or _major_version(record) not in majors:
                path.unlink()
                removed.append(record["record_id"])
                side_file_path(plan.store, record["record_id"]).unlink(missing_ok=True)
    parts_file = target.add_part(staged_root)
    markers = {u.config: json.loads(plan.unit_marker(u).read_text(encoding="utf-8")) for u in units
               if plan.unit_marker(u).is_file()}
    summary = {"seed": seed, "configs": [u.config for u in units], "records": len(staged.documents),
               "part": os.path.relpath(staged_root, Path(plan.store)).replace(os.sep, "/"),
               "removed_older": len(removed),
               "filter_subset_sha256": {c: m.get("filter_subset_sha256") for c, m in markers.items()},
               "record_ids": sorted(r["record_id"] for r in staged.documents)}
    _write_json(plan.promotion_marker(seed), summary)
    log.info("seed %d promoted: %d records, %s now names %s", seed, len(staged.documents), parts_file, staged_root)
    return summary


def _major_version(record: Mapping[str, Any]) -> str:
    """The package's major version a record was made with (``"0"`` for 0.5.0, ``"1"`` for 1.0.0.dev0)."""
    return str((record.get("provenance") or {}).get("package_version", "")).split(".")[0]


def _check_staged_seed(plan: ReferencePlan, seed: int, units: list[EvaluationUnit],
                       documents: list[dict[str, Any]]) -> None:
    """Refuse (ValueError naming what is wrong) a seed whose staged units do not hold exactly what their markers
    say: every marked record present; for a unit with columns, each filter's records are explainers × regimes,
    the paper's on the config's current subset (:func:`write_filter_subsets`), every regime's on the same
    sentences."""
    from gecobench.evaluation.filters import record_filter

    by_id = {d["record_id"]: d for d in documents}
    for unit in units:
        marker = _marker(plan, unit)
        if marker is None:  # promoted already
            continue
        ids = list(marker.get("record_ids", [])) + list(marker.get("paper_record_ids", []))
        absent = [rid for rid in ids if rid not in by_id]
        if absent:
            raise ValueError(f"{unit.key}: {len(absent)} marked record(s) not in the staging store, e.g. {absent[0]}")
        if "columns" not in marker:  # a unit staged before the columns existed: its records as they are
            continue
        subset = write_filter_subsets(plan, [unit.config])[unit.config]
        if marker.get("filter_subset_sha256") != subset.fingerprint:
            raise ValueError(f"{unit.key}: derived on subset {str(marker.get('filter_subset_sha256'))[:12]}, the "
                             f"config's is now {subset.fingerprint[:12]}: delete its paper records and derive again")
        records = [by_id[rid] for rid in ids]
        expected = len(marker["explainers"]) * len(marker["regimes"])
        for name in ("none", "paper"):
            mine = [r for r in records if record_filter(r.get("protocol")) == name]
            if len(mine) != expected:
                raise ValueError(f"{unit.key}: {len(mine)} records of filter {name!r}, expected {expected} "
                                 f"({len(marker['explainers'])} explainers × {len(marker['regimes'])} regimes)")
            if name == "paper":
                wrong = [r["record_id"] for r in mine if r["protocol"].get("filter_subset_sha256") != subset.fingerprint]
                scored = {r["filter"]["scored_fingerprint"] for r in mine}
                if wrong or len(scored) != 1:
                    raise ValueError(f"{unit.key}: paper-filter records not all scored on the subset "
                                     f"{subset.fingerprint[:12]} ({len(wrong)} name another; {len(scored)} sentence sets)")


def plan_report(plan: ReferencePlan, shard: tuple[int, int] | None = None) -> list[str]:
    """What the plan holds, unit by unit: the zoo (trained here or not; prediction files), the subsets, the
    evaluation units (missing, evaluated, staged, promoted), what to commit and what to run next."""
    lines = []
    unverified = 0
    for unit in zoo_units_of_shard(plan, shard):
        preset, overrides = plan.schedule_for(unit.regime, unit.config)
        trained = "trained here" if checkpoint_is_current(plan, unit) else "no checkpoint here"
        verdict, why = predictions_verdict(plan, unit)
        state = {"current": "predictions committed",
                 "stale": "predictions of another checkpoint or schedule",
                 "unverified": "predictions of no recorded schedule, checkpoint not here to show it",
                 "missing": "predictions to write"}[verdict]
        if trained == "no checkpoint here" and verdict == "missing":
            trained, state = "to train", "then predictions"
        elif trained == "no checkpoint here" and verdict == "stale":
            trained = "to train"
        lines.append(f"{unit.key:<40} {preset:<8} {overrides}  [{trained}; {state}]")
        if verdict == "stale":  # which file, and both schedules: what to retrain
            lines.append(f"    {why}")
        unverified += verdict == "unverified"
    if unverified:
        lines.append(f"{unverified} prediction file(s) record no schedule (written before 1.0) and their checkpoints "
                     "are not here: the filters stage refuses them until, where the checkpoints are, gecobench "
                     "reference --record-schedules writes it in (then commit them)")
    subsets_ready = True
    for config in plan.configs:
        state, detail = subset_state(plan, config)
        subsets_ready = subsets_ready and state in ("done", "to compute")
        lines.append(f"{'filters/' + config:<40} {detail}  [{state}]")
    states: dict[int, dict[str, str]] = {}
    for unit in select_shard(plan.evaluation_units(), shard):
        state = unit_state(plan, unit)
        states.setdefault(unit.seed, {})[unit.config] = state
        what = {"evaluated": "evaluated: unfiltered records + columns; paper filter to derive",
                "stale": "stale: staged with " + ", ".join(stale_explainers(plan, unit)) + " against the plan; "
                         "remove its marker and records to evaluate it again"}.get(state, state)
        lines.append(f"{unit.key:<40} {len(plan.explainers)} explainers × {len(plan.regimes)} models × "
                     f"{len(FILTERS)} filters  [{what}]")
    staged = sorted(seed for seed, by in states.items() if {"staged", "evaluated"} & set(by.values()))
    complete = sorted(seed for seed, by in states.items()
                      if set(by.values()) == {"staged"} and set(by) == set(plan.configs))
    count = {name: sum(1 for by in states.values() for s in by.values() if s == name)
             for name in ("promoted", "staged", "evaluated", "stale", "missing")}
    lines.append("units: " + ", ".join(f"{n} {name}" for name, n in count.items()))
    try:
        where = plan.staging_dir.relative_to(REPO_ROOT)
        filters = plan.filters_dir.relative_to(REPO_ROOT)
    except ValueError:
        where, filters = plan.staging_dir, plan.filters_dir
    if staged or plan.staging_dir.joinpath(PREDICTIONS_FOLDER).is_dir():
        lines.append(f"to commit: git add {filters} {where} reference/zero_shot_attributions reference/timings.json "
                     "reference/zoo_summary.json && git commit -m 'reference: predictions and staged units'")
    if count["evaluated"] and subsets_ready:
        lines.append("to derive the paper's filter: gecobench reference --stage derive")
    for seed in complete:
        lines.append(f"seed {seed} is complete: gecobench reference --stage promote --seeds {seed} "
                     "(then commit reference/store and the staging folder)")
    return lines


def _zero_shot_unit(plan: ReferencePlan, unit: EvaluationUnit, data_dir: str | None = None) -> dict[str, Any]:
    """What a bundle of one evaluation unit's zero-shot reference is made of: the checkpoint, its identity, the
    split and the settings (every scorable row: the reference is computed without a filter)."""
    from gecobench.evaluation.checkpoints import reference_unit_name
    from gecobench.evaluation.data import load_split
    from gecobench.provenance import checkpoint_fingerprints

    zero_shot = plan.checkpoint(ZooUnit(unit.config, "ZS", unit.seed))
    info = json.loads((zero_shot / MODEL_INFO_FILE).read_text(encoding="utf-8"))
    settings = dataclasses.replace(plan.evaluation_settings(unit.seed), data_dir=data_dir, filter="none")
    split = load_split(unit.config, settings.split, data_dir)
    checkpoint_sha256, function_sha256 = checkpoint_fingerprints(zero_shot)
    return {"path": zero_shot, "settings": settings, "split": split,
            "unit": reference_unit_name(function_sha256, split.fingerprint, settings.attribution_protocol()),
            "reference": {"name": f"{unit.config}/ZS/seed{unit.seed}", "function_sha256": function_sha256,
                          "checkpoint_sha256": checkpoint_sha256, "base_model": info.get("base_model"),
                          "seed": info.get("seed")},
            "dataset": {"config": split.config, "split": split.split, "fingerprint": split.fingerprint}}


def _published_bundle(plan: ReferencePlan, zs: dict[str, Any]) -> Any:
    """The bundle of the zero-shot unit ``zs`` (:func:`_zero_shot_unit`) published in ``plan.attributions_dir``,
    or None (also when the folder holds no bundle yet)."""
    from gecobench.evaluation.published_reference import BUNDLE_SUFFIX, load_published_references

    if not any(plan.attributions_dir.glob(f"*{BUNDLE_SUFFIX}")):
        return None
    return load_published_references(plan.attributions_dir).get(zs["unit"])


def _explainer_keys(explainers: Iterable[str]) -> dict[str, str]:
    """Each explainer spec's checkpoint key (name, parameters, version), in order."""
    from gecobench.evaluation.checkpoints import spec_checkpoint_key

    return {text: spec_checkpoint_key(text) for text in explainers}


def export_zero_shot_attributions(plan: ReferencePlan, unit: EvaluationUnit, checkpoint_dir: Path,
                                  data_dir: str | None = None) -> Path:
    """Publish the zero-shot model's attributions of one evaluation unit (every explainer of the plan, every
    scorable test sentence) as a bundle in ``plan.attributions_dir``, from the unit's checkpoints: the RMA reference that a run given ``--reference-attributions`` reads instead of
    computing (:mod:`gecobench.evaluation.published_reference`)."""
    import tempfile

    from gecobench.evaluation.published_reference import merge_bundles

    zs = _zero_shot_unit(plan, unit, data_dir)
    keys = _explainer_keys(plan.explainers)
    published = _published_bundle(plan, zs)
    if published is None or set(published.explainer_keys()) <= set(keys.values()):
        # a bundle holding only this plan's keys is this plan's unit made again (e.g. retrained here): replaced
        path = _export_zero_shot_unit(zs, unit, checkpoint_dir, list(keys.values()), plan.attributions_dir)
    else:
        # The unit's bundle is published already with other explainer versions (a (config, seed) of an earlier
        # major version: 0.5.0's seed 0, kept with the 0.5.0 definitions it checks). One unit, one file: the plan's
        # versions join it, each entry naming the zero-shot checkpoint it was computed on (``explainer_provenance``),
        # the earlier entries stay. An entry of the same key with other scores is refused (merge_bundles).
        with tempfile.TemporaryDirectory(prefix="gecobench-zs-") as tmp:
            added = _export_zero_shot_unit(zs, unit, checkpoint_dir, list(keys.values()), Path(tmp))
            path = merge_bundles([published.path, added], plan.attributions_dir)
    log.info("%s: zero-shot reference attributions published in %s", unit.key, path)
    return path


def _export_zero_shot_unit(zs: dict[str, Any], unit: EvaluationUnit, checkpoint_dir: Path, keys: list[str],
                           output_dir: Path) -> Path:
    """The bundle of ``keys`` (checkpoint keys) for the zero-shot unit ``zs`` (:func:`_zero_shot_unit`)."""
    from gecobench.evaluation.checkpoints import CheckpointStore
    from gecobench.evaluation.published_reference import export_bundle
    from gecobench.evaluation.zero_shot import reference_chunk_rows
    from gecobench.provenance import base_provenance

    return export_bundle(
        CheckpointStore(checkpoint_dir), output_dir, reference=zs["reference"], dataset=zs["dataset"],
        attribution_protocol=zs["settings"].attribution_protocol(),
        chunk_rows=reference_chunk_rows(zs["split"], zs["settings"]), explainer_keys=keys,
        provenance=base_provenance(unit.seed))


def extend_zero_shot_attributions(plan: ReferencePlan, unit: EvaluationUnit, checkpoint_dir: Path,
                                  data_dir: str | None = None, progress: bool = True) -> tuple[Path, list[str]]:
    """Add to one unit's published bundle (in ``plan.attributions_dir``) the plan's explainers it lacks: an
    explainer added to the reference plan after the bundle was made (Partition SHAP since 0.6.0) gets its
    zero-shot attributions without rerunning the whole grid. Returns the bundle and the explainers added.

    Only the zero-shot model's own attributions are computed (no properties, faithfulness or records kept), under
    the bundle's own attribution protocol, with a zero-shot checkpoint of the bundle's function: its function
    fingerprint must be the bundle's (a zero-shot model of another base or recipe would mix two models'
    attributions in one unit), else ValueError."""
    import tempfile

    from gecobench.evaluation.published_reference import merge_bundles
    from gecobench.evaluation.runner import run_evaluation

    zs = _zero_shot_unit(plan, unit, data_dir)
    bundle = _published_bundle(plan, zs)
    if bundle is None:
        raise ValueError(f"{unit.key}: no published bundle of unit {zs['unit']} in {plan.attributions_dir} (zero-shot "
                         f"checkpoint {zs['path']}, function {zs['reference']['function_sha256'][:16]}): a zero-shot "
                         "model of another base or recipe, or another protocol, cannot extend the published one")
    keys = _explainer_keys(plan.explainers)
    missing = [text for text, key in keys.items() if key not in bundle.document["explainers"]]
    if not missing:
        return bundle.path, []
    settings = dataclasses.replace(zs["settings"], properties=False, faithfulness=False, bootstrap=1)
    with tempfile.TemporaryDirectory(prefix="gecobench-zs-") as tmp:
        # the records of this pass are not reference records (no properties): they go to a throw-away store
        run_evaluation(missing, [str(zs["path"])], [unit.config], settings, store_location=str(Path(tmp) / "store"),
                       checkpoint_dir=checkpoint_dir, progress=progress, filters=("none",))
        added = _export_zero_shot_unit(zs, unit, checkpoint_dir, [keys[text] for text in missing],
                                       Path(tmp) / "added")
        path = merge_bundles([bundle.path, added], plan.attributions_dir)
    log.info("%s: %s added to %s", unit.key, ", ".join(missing), path)
    return path, missing


def coverage(plan: ReferencePlan, records: Iterable[dict[str, Any]], filters: Sequence[str] = FILTERS,
             match_versions: bool = True) -> dict[str, list[tuple[str, ...]]]:
    """Grid cells (explainer × regime × config × seed × filter) with a record, and those without. Filters by
    name (:mod:`gecobench.evaluation.filters`; the legacy ``all_gender_variants_correct`` is ``per_model``).

    A record covers a cell when it names the cell's explainer, the parameters the plan's spec sets, and (with
    ``match_versions``, the default) the version this package gives that spec: a record of an older definition
    (0.5.0's Saliency at the word-embedding lookup, 1.0.0) is not the plan's. ``match_versions=False`` counts
    records of any version (what an earlier release's store covers of the grid's shape)."""
    from gecobench.evaluation.filters import record_filter
    from gecobench.evaluation.settings import ExplainerSpec
    from gecobench.explainers.base import get_explainer

    specs = {text: ExplainerSpec.parse(text) for text in plan.explainers}
    versions = {text: str(get_explainer(spec.name, **spec.params).version) for text, spec in specs.items()}
    present = set()
    for record in records:
        if record.get("record_type") != "explainer_score":
            continue
        explainer = record["explainer"]
        params = explainer.get("params") or {}
        # a cell's spec names the explainer and the parameters the plan sets (`lime:n_samples=50`): a record of
        # the same explainer with other values of those (the 0.5.0 store's 100-sample LIME) is another cell
        for text, spec in specs.items():
            if match_versions and str(explainer.get("version")) != versions[text]:
                continue
            if explainer["name"] == spec.name and all(params.get(k) == v for k, v in spec.params.items()):
                present.add((text, record["model"]["regime"], record["dataset"]["config"],
                             str(record["model"].get("seed")), str(record_filter(record.get("protocol")))))
    wanted = [(e, r, c, str(s), f) for s in plan.seeds for c in plan.configs for r in plan.regimes
              for e in plan.explainers for f in filters]
    return {"present": [w for w in wanted if w in present], "missing": [w for w in wanted if w not in present]}
