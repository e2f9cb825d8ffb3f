#!/usr/bin/env python
"""Throughput of the whole evaluation of one model: every built-in explainer, the properties and faithfulness.

Runs :func:`gecobench.evaluation.run_evaluation` (the path ``scripts/evaluate_explainers.py`` takes) on a
fine-tuned model with every built-in explainer the registry holds, the property metrics (MRC, SNC, LD, DMA; RMA
when a zero-shot model of the same base sits next to the model) and the faithfulness evaluators, then prints
CPU seconds per scored sentence (``time.process_time``: robust when other jobs share the cores; the bench sets
the runner's stage clock to it) and where they went, read from the run's per-chunk checkpoints:

* ``explain``: the explainer on the model (what a record's ``seconds_per_sentence`` reports);
* ``properties + RMA reference``: the same explainer on the randomised and noisy copies, for the other
  class(es), and on the zero-shot reference;
* ``faithfulness``: comprehensiveness, sufficiency and leave-one-out tau (model calls);
* ``rest``: loading, predictions, filtering, scoring with bootstrap CIs, records (the total minus the above).

With ``--processes 1 2`` the same evaluation also runs through the command line under ``torchrun`` with each
process count (wall clock including start-up, fresh checkpoints; chunks of ``K`` groups with
``--properties-groups K``, else one group per chunk so that every process gets work), for the scaling figure.

With ``--properties-groups K`` the properties and faithfulness run on the first ``K`` groups only and both
filters are scored, as in the reference run (``make reference``: the first 32 of 322 groups, about 10 %); the
figures per scored sentence are then those of that protocol.

With ``--count-flops`` the in-process run is repeated (untimed, fresh checkpoints) while the matrix-product FLOPs
of every model call the evaluation makes (forward and backward, Captum's hooks included) are counted at torch's
dispatcher with ``torch.utils.flop_counter``'s formulas, and a large float32 matmul is timed on the same threads
(``--matmul-size``, ``bench_floor.matmul_peak_gflops``): the *matmul floor* is those FLOPs at that rate, the least CPU time any engine needs
for this protocol on this machine without fewer FLOPs (a smaller budget, another precision). The timed run's CPU
seconds over the floor say how much of the evaluation is anything but matrix products at the machine's rate.

With ``--reference-cached`` the zero-shot model is evaluated first, untimed, with the same explainers and protocol,
as in the reference grid where it is one of the six models: its attributions land in the checkpoint store and are
the RMA reference the timed model then reads instead of computing (what every model after the first of a base
costs, in the grid or in any run that keeps its ``--checkpoint-dir``). Without it the reference is computed inside
the timed run (the first model of a base, evaluated alone). With ``--reference-attributions LOCATION`` the timed
runs read it from the published zero-shot attributions instead (``reference/zero_shot_attributions``: the reference
run's, for its zero-shot checkpoints and protocol — chunks of 16 groups, seed 0 — so give ``--chunk-size 16``);
the bench fails if the reference of an explainer the bundles hold was computed (and names the explainers whose
reference it computed because the bundles do not hold them).

The command-line runs also report their phases, read from the checkpoint files' times: start-up (launch to the
first chunk's start: imports, model and data loading, fitting), explaining (first chunk's start to last chunk's
end, on every process) and records (scoring and writing, on the main process). Start-up and records are paid once
per run, so a whole split's 644 sentences amortise them; the explaining phase per sentence is the steady state.

    python bench/bench_full_evaluation.py --model runs/bench/binary_all/CEfAf/seed0 --groups 8 --threads 1
    python bench/bench_full_evaluation.py --model runs/bench/binary_all/CEfAf/seed0 --groups 40 --properties-groups 4
    python bench/bench_full_evaluation.py --model runs/bench/binary_all/CEfAf/seed0 \
        --zero-shot runs/bench/binary_all/ZS/seed0 --groups 40 --properties-groups 4 --reference-cached --processes 1 2
    python bench/bench_full_evaluation.py --model runs/reference/zoo/binary_all/CEfAf/seed0 \
        --zero-shot runs/reference/zoo/binary_all/ZS/seed0 --groups 0 --chunk-size 16 --properties-groups 32 \
        --reference-attributions reference/zero_shot_attributions --processes 2
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")


# The helpers import gecobench where they run: importing the package loads the runner and torch, which
# ``--help`` does not need.


def stage_seconds(checkpoint_dir: Path) -> dict[str, dict[str, float]]:
    """Per explainer (checkpoint key): seconds of explain / properties+reference / faithfulness, over chunks."""
    from gecobench.evaluation.checkpoints import CheckpointStore

    stages: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    # (not the zero-shot reference's units: their time is inside the model's chunk total)
    for path in CheckpointStore(checkpoint_dir).chunk_files():
        seconds = json.loads(path.read_text())["seconds"]
        name = re.sub(r"-[0-9a-f]{10}-v[^/]+$", "", path.parent.name)  # the checkpoint key's explainer name
        faithfulness = float(seconds.get("faithfulness", 0.0))
        stages[name]["explain"] += float(seconds["main"])
        stages[name]["faithfulness"] += faithfulness
        stages[name]["properties + RMA reference"] += float(seconds["total"]) - float(seconds["main"]) - faithfulness
    return stages


def cli_command(processes: int, args: argparse.Namespace, specs: list[str], model: str, results: Path,
                checkpoints: Path, both_filters: bool = False) -> list[str]:
    """The evaluation through the command line under ``torchrun`` with ``processes`` processes."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}",
               str(REPO_ROOT / "scripts" / "evaluate_explainers.py"), "--explainers", *specs, "--models", model,
               "--configs", args.config, "--results", str(results),
               # the in-process run's chunks (--chunk-size, else K groups with --properties-groups K: the property
               # chunk is one of many); without either one group per chunk, so that every process gets work.
               # (Smaller chunks cost more: one group is two sentences per call against up to --batch-size 8.)
               "--chunk-size", str(args.chunk_size or args.properties_groups or 1),
               "--checkpoint-dir", str(checkpoints), "--quiet"]
    if args.groups:
        command += ["--max-groups", str(args.groups)]
    if args.reference_attributions:
        command += ["--reference-attributions", args.reference_attributions]
    if args.properties_groups is not None:
        command += ["--properties-max-groups", str(args.properties_groups),
                    "--faithfulness-max-groups", str(args.properties_groups)]
    if both_filters or args.properties_groups is not None:
        command.append("--both-filters")
    return command


def cli_phases(checkpoints: Path, launched: float, finished: float) -> dict[str, float]:
    """Start-up, explaining and records seconds of one command-line run, from its chunk checkpoints' times.

    A chunk's file is written when the chunk ends; its ``seconds.total`` (wall, in the command line) says when it
    began. Reference units are written inside their model's chunk, which the model's own file covers."""
    from gecobench.evaluation.checkpoints import CheckpointStore

    spans = []
    for path in CheckpointStore(checkpoints).chunk_files():
        end = path.stat().st_mtime
        spans.append((end - float(json.loads(path.read_text())["seconds"]["total"]), end))
    first_start, last_end = min(s for s, _ in spans), max(e for _, e in spans)
    return {"start_up": first_start - launched, "explaining": last_end - first_start, "records": finished - last_end}


def reference_files(checkpoints: Path) -> set[str]:
    """The zero-shot reference's chunk files in a checkpoint folder (relative paths)."""
    from gecobench.evaluation.checkpoints import CheckpointStore

    return {str(p.relative_to(checkpoints)) for p in CheckpointStore(checkpoints).chunk_files(reference=True)}


def copy_reference_units(source: Path, target: Path) -> set[str]:
    """Copy the zero-shot reference units (and only those) of one checkpoint folder into another."""
    from gecobench.evaluation.checkpoints import CheckpointStore

    units = CheckpointStore(source).reference_units()
    if not units:
        raise RuntimeError(f"{source} holds no zero-shot reference units: the zero-shot run did not write them")
    for unit in units:
        shutil.copytree(unit, target / unit.name)
    return reference_files(target)


def check_reference_was_published(location: str, results: Path, specs: list[str]) -> list[str]:
    """The explainers whose RMA reference the timed run computed although given published attributions: only those
    the bundles do not hold (an explainer outside the reference run's set, other parameters) may be; else the run
    fails."""
    from gecobench.evaluation.published_reference import load_published_references
    from gecobench.evaluation.runner import ExplainerSpec, spec_checkpoint_key
    from gecobench.store import LocalStore

    published_keys = {key for bundle in load_published_references(location).by_unit.values()
                      for key in bundle.explainer_keys()}
    keys_of: dict[str, set[str]] = defaultdict(set)  # explainer name -> checkpoint keys of the specs given
    for text in specs:
        keys_of[ExplainerSpec.parse(text).name].add(spec_checkpoint_key(text))
    computed = []
    for record in LocalStore(results).read_all("explainer_score").documents:
        source = str(record["model"]["zero_shot_reference_source"])
        if source.startswith("published:"):
            continue
        name = record["explainer"]["name"]
        # (a name given with several parameter sets cannot be told apart by its records: not checked)
        if len(keys_of[name]) == 1 and keys_of[name] <= published_keys:
            raise RuntimeError(f"{name}: the timed run computed its RMA reference ({source}) although {location} "
                               "holds it: the zero-shot checkpoint, data or protocol does not match the bundle's")
        computed.append(name)
    return sorted(set(computed))


def check_reference_was_read(checkpoints: Path, copied: set[str]) -> None:
    """A timed run that found no cached reference computes and writes its own: then the figure is not cached."""
    added = reference_files(checkpoints) - copied
    if added:
        raise RuntimeError(f"the timed run computed {len(added)} reference chunk(s) itself (e.g. {min(added)}): "
                           "the zero-shot run's protocol differs from the model's")


def run_cli(processes: int, args: argparse.Namespace, specs: list[str], workdir: Path,
            cached_reference: Path | None) -> dict[str, float]:
    """Wall seconds (and phases) of the same evaluation through the command line with ``processes`` processes.

    ``cached_reference``: a checkpoint folder whose zero-shot reference units are copied in before the run."""
    checkpoints = workdir / f"ck{processes}"
    copied = copy_reference_units(cached_reference, checkpoints) if cached_reference is not None else None
    command = cli_command(processes, args, specs, args.model, workdir / f"r{processes}", checkpoints)
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "PYTHONPATH": str(REPO_ROOT)}
    launched, start = time.time(), time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if copied is not None:
        check_reference_was_read(checkpoints, copied)
    extra = {}
    if args.reference_attributions:
        extra["reference_computed_for"] = check_reference_was_published(args.reference_attributions,
                                                                        workdir / f"r{processes}", specs)
    return {"wall": wall, **cli_phases(checkpoints, launched, launched + wall), **extra}


def matmul_floor(run: Callable[[], object], matmul_size: int, cpu_seconds: float) -> dict[str, float]:
    """Run ``run()`` counting its matrix products' FLOPs, time a ``matmul_size``² float32 matmul on the current
    threads, and return the FLOPs counted, that peak, and the floor: those FLOPs at the peak, in CPU seconds (wall
    seconds times threads), also as a share of ``cpu_seconds`` (the timed run's)."""
    import torch
    from bench_floor import matmul_peak_gflops
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import FlopCounterMode

    formulas = FlopCounterMode(display=False).flop_registry  # torch's FLOP formula of each matrix-product op

    class MatrixProductFlops(TorchDispatchMode):
        # FlopCounterMode itself also tracks modules with backward hooks, which break the gradient explainers'
        # autograd.grad calls: count with its formulas at the dispatcher only.
        flops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[override]
            kwargs = kwargs or {}
            formula = formulas.get(func._overloadpacket)
            if formula is None:  # a composite op (linear through a fused kernel, …): count its pieces
                with self:
                    decomposed = func.decompose(*args, **kwargs)
                if decomposed is not NotImplemented:
                    return decomposed
            out = func(*args, **kwargs)
            if formula is not None:
                self.flops += formula(*args, **kwargs, out_val=out)
            return out

    with MatrixProductFlops() as counter:
        run()
    flops = float(counter.flops)
    peak_gflops = matmul_peak_gflops(matmul_size)
    floor_cpu = flops / (peak_gflops * 1e9) * torch.get_num_threads()
    return {"gflop": flops / 1e9, "peak_gflops": peak_gflops, "floor_cpu_seconds": floor_cpu,
            "floor_share": floor_cpu / cpu_seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="fine-tuned checkpoint folder (model zoo layout)")
    parser.add_argument("--zero-shot", default=None,
                        help="zero-shot (ZS) model of the same base, for RMA (its explanations are part of the cost)")
    parser.add_argument("--config", default="binary_all")
    parser.add_argument("--groups", type=int, default=8,
                        help="test source sentences (each with its gender variants); 0: the whole test split")
    parser.add_argument("--chunk-size", type=int, default=None, metavar="N",
                        help="sentence groups per chunk (default: K of --properties-groups, else the runner's)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (per process)")
    parser.add_argument("--explainers", nargs="*", default=None, help="explainer specs (default: every built-in)")
    parser.add_argument("--no-faithfulness", dest="faithfulness", action="store_false")
    parser.add_argument("--properties-groups", type=int, default=None, metavar="K",
                        help="properties and faithfulness on the first K groups only, both filters scored (the "
                             "reference run's protocol); default: every group, the paper's filter only")
    parser.add_argument("--reference-cached", action="store_true",
                        help="evaluate the zero-shot model first (untimed), so that the timed model reads its RMA "
                             "reference from the checkpoint store, as every model after the first of a base does")
    parser.add_argument("--reference-attributions", default=None, metavar="LOCATION",
                        help="read the RMA reference from published zero-shot attributions (fails if any is computed)")
    parser.add_argument("--processes", type=int, nargs="*", default=[], help="also time the CLI with these counts")
    parser.add_argument("--cli-only", action="store_true",
                        help="time the command-line runs only (no in-process run, so no stage breakdown)")
    parser.add_argument("--count-flops", action="store_true",
                        help="repeat the in-process run counting its matrix-product FLOPs; print the matmul floor")
    parser.add_argument("--matmul-size", type=int, default=2048, help="square float32 matmul timed for the peak")
    parser.add_argument("--output", default=None, help="also write the figures as JSON here")
    args = parser.parse_args()
    if (args.reference_cached or args.reference_attributions) and not args.zero_shot:
        parser.error("--reference-cached and --reference-attributions need --zero-shot (the model whose attributions "
                     "are the RMA reference)")
    if args.cli_only and not args.processes:
        parser.error("--cli-only needs --processes (the command-line runs to time)")
    if args.reference_cached and args.reference_attributions:
        parser.error("--reference-cached and --reference-attributions are two cases; choose one")
    if args.count_flops and args.cli_only:
        parser.error("--count-flops counts the in-process run; --cli-only skips it")

    import torch
    from bench_vs_ferret import builtin_specs

    from gecobench.evaluation import EvaluationSettings, attribution, run_evaluation
    from gecobench.provenance import machine_description
    from gecobench.store import LocalStore

    # Chunk attribution times its stages with time.perf_counter; on shared cores CPU time is the comparable figure.
    attribution.time = type("CpuClock", (), {"perf_counter": staticmethod(time.process_time),
                                        "process_time": staticmethod(time.process_time)})

    torch.set_num_threads(args.threads)
    specs = args.explainers if args.explainers is not None else builtin_specs()
    out: dict = {"machine": machine_description(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                 "threads": args.threads, "explainers": specs, "groups": args.groups,
                 "properties_groups": args.properties_groups}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.zero_shot:
            # the runner finds a model's zero-shot reference next to it: put both side by side (links, no copies)
            (workdir / "models").mkdir()
            (workdir / "models" / "model").symlink_to(Path(args.model).resolve())
            (workdir / "models" / "zero_shot").symlink_to(Path(args.zero_shot).resolve())
            args.model = str(workdir / "models" / "model")
        # (the property subsample is a whole number of chunks: chunks of K groups)
        chunk_size = args.chunk_size or args.properties_groups
        chunking = {} if chunk_size is None else {"chunk_size": chunk_size}
        settings = EvaluationSettings(max_groups=args.groups or None, faithfulness=args.faithfulness, **chunking,
                                      properties_max_groups=args.properties_groups,
                                      faithfulness_max_groups=args.properties_groups)
        filters = ("paper", "none") if args.properties_groups is not None else None
        # warm-up on one group: imports, evaluate modules, dataset cache (not what this bench measures)
        # (cheap settings of the libraries' explainers: the first imports of captum, lime and scikit-learn)
        warm_specs = ["saliency", "lime:n_samples=8", "kernel_shap:n_samples=8", "pattern_variant"]
        run_evaluation(warm_specs, [args.model], [args.config], EvaluationSettings(max_groups=1, bootstrap=10),
                       store_location=str(workdir / "warm"), checkpoint_dir=workdir / "ck-warm", progress=False)
        if args.reference_cached:
            # the zero-shot model's own evaluation (both filters: its attributions on every scorable row) leaves
            # the RMA reference in the checkpoint store, as in the grid
            # (in a checkpoint folder of its own: only the reference units are the timed run's)
            run_evaluation(specs, [str(workdir / "models" / "zero_shot")], [args.config], settings,
                           store_location=str(workdir / "zs-results"), checkpoint_dir=workdir / "ck-zs",
                           progress=False, filters=("paper", "none"))
            copied = copy_reference_units(workdir / "ck-zs", workdir / "ck")
        out["reference_cached"] = args.reference_cached
        out["reference_attributions"] = args.reference_attributions
        n_scored = None
        if not args.cli_only:  # the in-process run, with the stage breakdown
            wall_start, cpu_start = time.perf_counter(), time.process_time()
            run_evaluation(specs, [args.model], [args.config], settings, store_location=str(workdir / "results"),
                           checkpoint_dir=workdir / "ck", progress=True, filters=filters,
                           reference_attributions=args.reference_attributions)
            wall, cpu = time.perf_counter() - wall_start, time.process_time() - cpu_start
            if args.reference_cached:
                check_reference_was_read(workdir / "ck", copied)
            if args.reference_attributions:
                out["reference_computed_for"] = check_reference_was_published(args.reference_attributions,
                                                                              workdir / "results", specs)
            records = LocalStore(workdir / "results").read_all("explainer_score").documents
            out["rma_reference"] = records[0]["model"]["zero_shot_reference"]
            # with both filters, per sentence of the split (the unfiltered record scores them all)
            n_scored = max(record["counts"]["n_scored"] for record in records)
            stages = stage_seconds(workdir / "ck")
            totals = defaultdict(float)
            for per in stages.values():
                for stage, seconds in per.items():
                    totals[stage] += seconds
            totals["rest"] = cpu - sum(totals.values())
            out.update(n_scored=n_scored, n_sentences=records[0]["counts"]["n_sentences"], wall_seconds=wall,
                       cpu_seconds=cpu, stages=dict(totals), per_explainer={k: dict(v) for k, v in stages.items()})
            print(f"\n{out['machine']}; {out['date']}; {args.threads} thread(s); {len(specs)} explainers; "
                  f"{n_scored} scored of {out['n_sentences']} sentences ({args.config} test); model {args.model}")
            print(f"whole evaluation: {wall / max(n_scored, 1):.3f} s per scored sentence (wall), "
                  f"{cpu / max(n_scored, 1):.3f} CPU-s per scored sentence")
            print(f"\n{'stage':<28} {'CPU-s/sentence':>14} {'share':>6}")
            for stage, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
                print(f"{stage:<28} {seconds / max(n_scored, 1):>14.3f} {seconds / cpu:>6.1%}")
            print(f"\n{'explainer':<24} {'explain':>8} {'props+ref':>10} {'faithful':>9}   (CPU-s/sentence)")
            for name, per in sorted(stages.items(), key=lambda kv: -sum(kv[1].values())):
                print(f"{name:<24} {per['explain'] / n_scored:>8.3f} {per['properties + RMA reference'] / n_scored:>10.3f} "
                      f"{per['faithfulness'] / n_scored:>9.3f}")
            if args.count_flops:
                if args.reference_cached:
                    copy_reference_units(workdir / "ck-zs", workdir / "ck-flops")
                floor = matmul_floor(lambda: run_evaluation(
                    specs, [args.model], [args.config], settings, store_location=str(workdir / "results-flops"),
                    checkpoint_dir=workdir / "ck-flops", progress=False, filters=filters,
                    reference_attributions=args.reference_attributions), args.matmul_size, cpu)
                out["matmul_floor"] = floor
                print(f"\nmatrix products: {floor['gflop'] / n_scored:.2f} GFLOP per scored sentence; matmul peak "
                      f"{floor['peak_gflops']:.1f} GFLOP/s ({args.matmul_size}² float32, {args.threads} thread(s)); "
                      f"floor {floor['floor_cpu_seconds'] / n_scored:.3f} CPU-s per scored sentence = "
                      f"{floor['floor_share']:.0%} of the run's CPU time")
        if args.processes:
            out["scaling"] = {}
            cached = None
            if args.reference_cached:  # the zero-shot model's own run through the command line, untimed
                cached = workdir / "ck-zero-shot"
                subprocess.run(cli_command(max(args.processes), args, specs, str(workdir / "models" / "zero_shot"),
                                           workdir / "r-zero-shot", cached, both_filters=True),
                               check=True, stdout=subprocess.DEVNULL,
                               env={**os.environ, "OMP_NUM_THREADS": str(args.threads), "PYTHONPATH": str(REPO_ROOT)})
            for processes in args.processes:
                timing = run_cli(processes, args, specs, workdir, cached)
                out["scaling"][processes] = timing
                if n_scored is None:  # --cli-only: the sentences the command line scored
                    cli_records = LocalStore(workdir / f"r{processes}").read_all("explainer_score").documents
                    n_scored = max(record["counts"]["n_scored"] for record in cli_records)
                    out.update(n_scored=n_scored, n_sentences=cli_records[0]["counts"]["n_sentences"],
                               rma_reference=cli_records[0]["model"]["zero_shot_reference"])
                print(f"CLI, {processes} process(es) x {args.threads} thread(s): {timing['wall']:.1f} s wall "
                      f"({timing['wall'] / max(n_scored, 1):.3f} s per scored sentence); start-up "
                      f"{timing['start_up']:.1f} s, explaining {timing['explaining']:.1f} s "
                      f"({timing['explaining'] / max(n_scored, 1):.3f} s per scored sentence), records "
                      f"{timing['records']:.1f} s"
                      + (f"; RMA reference computed for {', '.join(timing['reference_computed_for'])} (not published)"
                         if timing.get("reference_computed_for") else ""))
            shutil.rmtree(workdir / "r1", ignore_errors=True)
    if args.output:
        Path(args.output).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
