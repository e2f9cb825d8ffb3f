"""The embedded default: the whole main job offline, in one command (``make demo`` → ``gecobench demo``).

1. prints the dataset summary (configs, splits, row counts);
2. trains — or reuses from ``runs/models/`` — OLA and the MiniLM regimes on ``binary_all`` with short schedules;
3. explains a subset of the test split with every built-in explainer (sample sizes and steps cut for a 2-core
   CPU, recorded in each record's explainer params and protocol) and writes the records;
4. imports the Spanish recorded fill-mask predictions as ``model_bias`` records;
5. prints the leaderboard table and how to open the Space.

``quick=True`` is a small subset for the test suite (ZS + a tiny-schedule C model, three cheap explainers, a
few sentences).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geco_dataset
from gecobench.evaluation.leaderboard import leaderboard_text
from gecobench.evaluation.runner import (
    EvaluationSettings,
    ExplainerSpec,
    run_evaluation,
)
from gecobench.store import open_results_store

DEMO_CONFIG = "binary_all"

#: Explainers with the sample sizes the full demo uses on a 2-core CPU (their defaults are larger). Integrated
#: Gradients runs its default, adaptive protocol: about 15 gradient evaluations per sentence, cheaper than a fixed 16.
FULL_EXPLAINERS = (
    "saliency", "input_x_gradient", "deeplift", "guided_backprop", "integrated_gradients",
    "gradient_shap:n_samples=5", "lime:n_samples=64", "kernel_shap:n_samples=32", "uniform_random",
    "pattern_variant",
)
QUICK_EXPLAINERS = ("saliency", "input_x_gradient", "uniform_random")


@dataclass
class DemoPlan:
    """What the demo runs: regimes and schedule, explainers, test-split subset, metric settings."""

    regimes: tuple[str, ...]
    schedule: str
    explainers: tuple[str, ...]
    max_groups: int
    bootstrap: int
    properties: bool = True
    spanish_k: tuple[int, ...] = (10,)
    extra_schedule: dict[str, Any] = field(default_factory=dict)
    model_tag: str = ""
    #: regimes trained with a schedule of their own: regime -> (preset, overrides), in place of ``schedule`` and
    #: ``extra_schedule``
    regime_schedules: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)

    def schedule_of(self, regime: str) -> tuple[str, dict[str, Any]]:
        """The preset and field overrides ``regime`` trains with."""
        return self.regime_schedules.get(regime, (self.schedule, self.extra_schedule))

    def folder_name(self, regime: str, seed: int) -> str:
        """Cache folder of one model; the tag names the schedule so a changed plan never reuses a stale model."""
        if regime in self.regime_schedules:
            preset, overrides = self.regime_schedules[regime]
            tag = "-".join([preset, *(f"{k}{v}" for k, v in sorted(overrides.items()))])
            return f"{regime}-{DEMO_CONFIG}-s{seed}-{tag}"
        return f"{regime}-{DEMO_CONFIG}-s{seed}-{self.model_tag or self.schedule}"

    def describe(self) -> str:
        overrides = "".join(f", {k}={v}" for k, v in self.extra_schedule.items())
        own = "".join(f"; {regime}: schedule '{preset}'" + "".join(f", {k}={v}" for k, v in extra.items())
                      for regime, (preset, extra) in self.regime_schedules.items())
        return (f"regimes {', '.join(self.regimes)} on {DEMO_CONFIG} (schedule '{self.schedule}'{overrides}{own}); explainers "
                f"{', '.join(self.explainers)}; first {self.max_groups} test sentences × their gender variants; "
                f"{self.bootstrap} bootstrap resamples; property metrics {'on' if self.properties else 'off'}")


def demo_plan(quick: bool) -> DemoPlan:
    """The full demo (target < 15 min on 2 CPU cores) or the quick one (< 3 min, for the tests)."""
    if quick:
        # C at the authors' rate (1e-2, training/bert.py's bert_only_classification): a linear probe on the frozen
        # encoder classifies the first test sentences correctly after the tiny schedule's few steps, so the paper's
        # filter keeps sentences to score. (CE, which re-initialises every embedding, stays at chance on 24 sentences.)
        return DemoPlan(regimes=("ZS", "C"), schedule="tiny", explainers=QUICK_EXPLAINERS, max_groups=4,
                        bootstrap=100, spanish_k=(10,), extra_schedule={"lr": 1e-2}, model_tag="tiny-lr1e-2")
    # One epoch on 640 training sentences (1280 rows) and 100 validation/test sentences: enough for the gender
    # task (the models reach high accuracy) and it keeps the five trainings within a few minutes on 2 cores.
    # OLA trains with the authors' schedule (ola_paper) cut to 20 epochs: its best validation loss comes at about
    # epoch 5 (docs/models.md), and the tiny model takes seconds an epoch.
    return DemoPlan(regimes=("OLA", "C", "CE", "CEf", "CEfAf", "ZS"), schedule="demo", explainers=FULL_EXPLAINERS,
                    max_groups=12, bootstrap=1000, spanish_k=(10, 29), model_tag="demo-short",
                    extra_schedule={"epochs": 1, "max_train_sentences": 640, "max_eval_sentences": 100},
                    regime_schedules={"OLA": ("ola_paper", {"epochs": 20})})


def ensure_models(plan: DemoPlan, models_dir: Path, seed: int = 0, data_dir: str | None = None,
                  log: Any = print) -> list[str]:
    """Checkpoint folders for the plan's regimes: reused when present, trained otherwise. ZS comes first."""
    from gecobench.models import train_regime
    from gecobench.models.loading import read_model_info

    paths = []
    for regime in sorted(plan.regimes, key=lambda r: r != "ZS"):
        folder = models_dir / plan.folder_name(regime, seed)
        if (folder / "gecobench_model.json").is_file():
            read_model_info(folder)  # a broken cached checkpoint fails here, with the file named
            log(f"  reusing {folder}")
        else:
            log(f"  training {regime} → {folder}")
            started = time.perf_counter()
            preset, overrides = plan.schedule_of(regime)
            train_regime(regime, DEMO_CONFIG, seed, folder, data_dir=data_dir, schedule=preset,
                         show_progress=True, **overrides)
            log(f"  {regime} done in {time.perf_counter() - started:.0f} s")
        paths.append(str(folder))
    return paths


def import_spanish(store_location: str | None, ks: tuple[int, ...], log: Any = print) -> int:
    """Import the Spanish published predictions as model_bias records (skipped with a message if unavailable)."""
    try:
        from gecobench.spanish import import_recorded_predictions
    except ImportError as err:
        log(f"  Spanish pipeline not available ({err}); skipped")
        return 0

    # the demo stays offline: a local copy only ($GECOBENCH_SPANISH_DIR or a checkout's ../shared/data/spanish)
    base = geco_dataset.default_spanish_dir()
    predictions_dir = Path(base) / "predictions" if base else None
    if predictions_dir is None or not predictions_dir.is_dir():
        log(f"  no local Spanish predictions ({predictions_dir or '$GECOBENCH_SPANISH_DIR is not set'}); Spanish "
            "records skipped (`gecobench spanish recorded` downloads and imports them)")
        return 0
    store = open_results_store(store_location)
    n = 0
    for k in ks:
        n += len(import_recorded_predictions(predictions_dir, store, k=k, progress=False))
    return n


def run_demo(quick: bool = False, results: str | None = None, models_dir: str | Path = "runs/models",
             checkpoint_dir: str | Path = "runs/eval_checkpoints", spanish: bool = True, data_dir: str | None = None,
             max_groups: int | None = None, regimes: list[str] | None = None, explainers: list[str] | None = None,
             log: Any = print) -> str:
    """Run the demo end to end and return the leaderboard text (also printed).

    ``max_groups``, ``regimes`` and ``explainers`` narrow the plan (e.g. to rerun only part of it).
    """
    started = time.perf_counter()
    plan = demo_plan(quick)
    if max_groups is not None:
        plan.max_groups = max_groups
    if regimes:
        plan.regimes = tuple(regimes)
    if explainers:
        plan.explainers = tuple(explainers)
    log("GECOBench Hub demo — everything offline\n")
    log("Datasets")
    try:
        log(geco_dataset.summary_table())
    except Exception as err:  # noqa: BLE001 — the summary is informative only; say why it is missing, go on
        log(f"  dataset summary unavailable: {type(err).__name__}: {err}")
    log(f"\nPlan: {plan.describe()}")
    log("\n[1/4] Models")
    model_paths = ensure_models(plan, Path(models_dir), data_dir=data_dir, log=log)
    log("\n[2/4] Explaining and scoring (records → results store)")
    settings = EvaluationSettings(max_groups=plan.max_groups, bootstrap=plan.bootstrap, properties=plan.properties,
                                  data_dir=data_dir)
    summary = run_evaluation([ExplainerSpec.parse(e) for e in plan.explainers], model_paths, [DEMO_CONFIG], settings,
                             store_location=results, checkpoint_dir=checkpoint_dir)
    log(f"  records written: {len(summary.written)}; already in the store: {len(summary.existing)}")
    log("\n[3/4] Spanish masked-LM bias (published predictions)")
    if spanish:
        log(f"  model_bias records: {import_spanish(results, plan.spanish_k, log=log)}")
    else:
        log("  skipped (--no-spanish)")
    log("\n[4/4] Leaderboard")
    store = open_results_store(results)
    table = leaderboard_text(store)
    log(table)
    location = results or "results"
    log(f"\nDone in {time.perf_counter() - started:.0f} s. Open the Space with:\n"
        f"  gecobench space --results {location}")
    return table
