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
process count (wall clock including start-up, fresh checkpoints, one sentence group per chunk so that every
process gets work), for the scaling figure.

With ``--properties-groups K`` the properties and faithfulness run on the first ``K`` groups only and both
filters are scored, as in the reference run (``make reference``: the first 32 of 322 groups, about 10 %); the
figures per scored sentence are then those of that protocol.

    python bench/bench_full_evaluation.py --model runs/bench/binary_all/CEfAf/seed0 --groups 8 --threads 1
    python bench/bench_full_evaluation.py --model runs/bench/binary_all/CEfAf/seed0 --groups 40 --properties-groups 4
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")


def stage_seconds(checkpoint_dir: Path) -> dict[str, dict[str, float]]:
    """Per explainer (checkpoint key): seconds of explain / properties+reference / faithfulness, over chunks."""
    stages: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for path in checkpoint_dir.glob("*/*/chunk-*.json"):
        if path.parent.parent.name.startswith("reference-"):
            continue  # the zero-shot reference's scores; their time is inside the model's chunk total
        seconds = json.loads(path.read_text())["seconds"]
        name = path.parent.name.rsplit("-", 1)[0]
        faithfulness = float(seconds.get("faithfulness", 0.0))
        stages[name]["explain"] += float(seconds["main"])
        stages[name]["faithfulness"] += faithfulness
        stages[name]["properties + RMA reference"] += float(seconds["total"]) - float(seconds["main"]) - faithfulness
    return stages


def run_cli(processes: int, args: argparse.Namespace, specs: list[str], workdir: Path) -> float:
    """Wall seconds of the same evaluation through the command line with ``processes`` processes."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}",
               str(REPO_ROOT / "scripts" / "evaluate_explainers.py"), "--explainers", *specs, "--models", args.model,
               "--configs", args.config, "--max-groups", str(args.groups), "--results", str(workdir / f"r{processes}"),
               # one group per chunk: chunks are what processes share, so every process gets work
               "--chunk-size", "1",
               "--checkpoint-dir", str(workdir / f"ck{processes}"), "--quiet"]
    if args.properties_groups is not None:
        command += ["--properties-max-groups", str(args.properties_groups),
                    "--faithfulness-max-groups", str(args.properties_groups), "--both-filters"]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "PYTHONPATH": str(REPO_ROOT)}
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="fine-tuned checkpoint folder (model zoo layout)")
    parser.add_argument("--zero-shot", default=None,
                        help="zero-shot (ZS) model of the same base, for RMA (its explanations are part of the cost)")
    parser.add_argument("--config", default="binary_all")
    parser.add_argument("--groups", type=int, default=8, help="test source sentences (each with its gender variants)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (per process)")
    parser.add_argument("--explainers", nargs="*", default=None, help="explainer specs (default: every built-in)")
    parser.add_argument("--no-faithfulness", dest="faithfulness", action="store_false")
    parser.add_argument("--properties-groups", type=int, default=None, metavar="K",
                        help="properties and faithfulness on the first K groups only, both filters scored (the "
                             "reference run's protocol); default: every group, the paper's filter only")
    parser.add_argument("--processes", type=int, nargs="*", default=[], help="also time the CLI with these counts")
    parser.add_argument("--output", default=None, help="also write the figures as JSON here")
    args = parser.parse_args()

    import torch
    from bench_vs_ferret import builtin_specs

    from gecobench.evaluation import EvaluationSettings, run_evaluation, runner
    from gecobench.store import LocalStore

    # The runner times its stages with time.perf_counter; on shared cores CPU time is the comparable figure.
    runner.time = type("CpuClock", (), {"perf_counter": staticmethod(time.process_time)})

    torch.set_num_threads(args.threads)
    specs = args.explainers if args.explainers is not None else builtin_specs()
    out: dict = {"machine": f"{platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}, "
                            f"torch {torch.__version__}", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
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
        chunking = {} if args.properties_groups is None else {"chunk_size": args.properties_groups}
        settings = EvaluationSettings(max_groups=args.groups, faithfulness=args.faithfulness, **chunking,
                                      properties_max_groups=args.properties_groups,
                                      faithfulness_max_groups=args.properties_groups)
        filters = (True, False) if args.properties_groups is not None else None
        # warm-up on one group: imports, evaluate modules, dataset cache (not what this bench measures)
        # (cheap settings of the libraries' explainers: the first imports of captum, lime and scikit-learn)
        warm_specs = ["saliency", "lime:n_samples=8", "kernel_shap:n_samples=8", "pattern_variant"]
        run_evaluation(warm_specs, [args.model], [args.config], EvaluationSettings(max_groups=1, bootstrap=10),
                       store_location=str(workdir / "warm"), checkpoint_dir=workdir / "ck-warm", progress=False)
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        run_evaluation(specs, [args.model], [args.config], settings, store_location=str(workdir / "results"),
                       checkpoint_dir=workdir / "ck", progress=True, filters=filters)
        wall, cpu = time.perf_counter() - wall_start, time.process_time() - cpu_start
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
        if args.processes:
            out["scaling"] = {}
            for processes in args.processes:
                seconds = run_cli(processes, args, specs, workdir)
                out["scaling"][processes] = seconds
                print(f"CLI, {processes} process(es) x {args.threads} thread(s): {seconds:.1f} s wall "
                      f"({seconds / max(n_scored, 1):.3f} s per scored sentence)")
            shutil.rmtree(workdir / "r1", ignore_errors=True)
    if args.output:
        Path(args.output).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
