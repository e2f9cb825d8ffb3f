"""The reference results: train the zoo and score every built-in explainer on every test sentence.

Stages: zoo (train, and write each checkpoint's test predictions), evaluate ((config, seed) units, unfiltered,
with the columns every record is scored from), filters (the paper's shared subset per config, from every seed's
committed prediction files: no weights), derive (the paper-filter records of every evaluated unit, from its
columns: no weights), promote (a complete seed becomes part of the store, in place). Resumable and shardable:

  gecobench reference --plan                      # what is done, staged, missing, and what to commit
  gecobench reference                             # every stage that can run here (make reference)
  gecobench reference --stage zoo --seeds 1       # train seed 1's zoo, write its prediction files
  gecobench reference --stage zoo --seeds 1 --zoo-workers 2 --threads 1      # two checkpoints at a time
  gecobench reference --stage evaluate --seeds 1 --configs binary_all    # one unit (needs its weights here)
  gecobench reference --stage filters             # the shared subsets (needs every seed's prediction files)
  gecobench reference --stage derive              # paper-filter records of every evaluated unit
  gecobench reference --stage promote --seeds 0   # seed 0 complete: its staged folder becomes part of the store
  gecobench reference --record-schedules          # prediction files of before 1.0: their checkpoints' schedule
  accelerate launch --multi_gpu --num_processes 2 -m gecobench reference --stage evaluate   # 2 CPU processes

Checkpoints go to runs/reference/ (not committed). Committed: the prediction files in
reference/staging/predictions/, each evaluated unit in reference/staging/seed-<k>/ (records, columns, marker:
commit it as it finishes, a new machine resumes from the repository without the weights), the subsets in
reference/filters/, the promoted seeds named in reference/store/parts.json, the zoo summary in
reference/zoo_summary.json and the wall time of every unit in reference/timings.json. The Space and the store's
readers ignore a seed's staging folder until the seed is promoted.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from gecobench.reference import (
    CONFIGS,
    REFERENCE_SEEDS,
    REGIMES,
    ReferencePlan,
    parse_shard,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench reference", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=["zoo", "filters", "evaluate", "derive", "promote", "all"],
                        default="all", help="all: zoo, evaluate, then (once every seed's prediction files are "
                        "committed) filters and derive, then promote every complete seed")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(REFERENCE_SEEDS),
                        help=f"default: {' '.join(map(str, REFERENCE_SEEDS))} (the paper's five)")
    parser.add_argument("--filter-seeds", nargs="+", type=int, default=list(REFERENCE_SEEDS),
                        help="the seeds whose models define the paper's shared subset of each config (default: the "
                             "reference's five, whichever --seeds run now)")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS, help="default: all four")
    parser.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                        help="run only shard K of N: whole (config, seed) evaluations, each with its own zoo checkpoints, "
                             "so shards need no shared disk")
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 1)),
                        help="torch threads for training (default: every core), per worker with --zoo-workers")
    parser.add_argument("--zoo-workers", type=_positive, default=1, metavar="N",
                        help="train N checkpoints at once, each in a process of its own (e.g. --zoo-workers 2 "
                             "--threads 1 on two cores: the small OLA and each checkpoint's loading and saving leave "
                             "a second thread idle)")
    parser.add_argument("--output", type=Path, default=None, metavar="DIR",
                        help="write the records (DIR/store), zoo summary and timings here instead of reference/ "
                             "(e.g. to time a run without touching the committed results)")
    parser.add_argument("--plan", action="store_true",
                        help="print the plan: what is done, staged, missing, and what to commit; run nothing")
    parser.add_argument("--record-schedules", action="store_true",
                        help="write the training schedule into each prediction file written before 1.0 whose "
                             "checkpoint is here and of the plan's schedule (a one-time migration; commit the "
                             "files); run nothing else")
    parser.add_argument("--replace", action="store_true",
                        help="with promote: remove the store's other records of the promoted seed (an earlier "
                             "reference's) and every record of another major version, so the store holds the "
                             "new protocol's records only")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gecobench.evaluation.filters import FilterSubsetError
    from gecobench.evaluation.unit_columns import UnitColumnsError
    from gecobench.reference import plan_report

    outputs = {}
    if args.output is not None:
        outputs = {"store": args.output / "store", "zoo_summary": args.output / "zoo_summary.json",
                   "timings": args.output / "timings.json",
                   "zero_shot_attributions": args.output / "zero_shot_attributions"}
    plan = ReferencePlan(seeds=tuple(args.seeds), configs=tuple(args.configs), regimes=REGIMES,
                         filter_seeds=tuple(args.filter_seeds), **outputs)
    if args.plan:
        narrowed = _narrowed(plan)  # "seed k is complete" would speak of the listed configs only
        print("\n".join(line for line in plan_report(plan, args.shard) if not (narrowed and " is complete" in line)))
        return 0
    if args.record_schedules:
        from gecobench.reference import record_schedules, zoo_units_of_shard

        changed = record_schedules(plan, zoo_units_of_shard(plan, args.shard))
        print(f"schedules recorded in {len(changed)} prediction file(s)" + "".join(f"\n  {p}" for p in changed))
        return 0
    try:
        return _run(plan, args)
    except (FileNotFoundError, FilterSubsetError, UnitColumnsError) as err:  # a stage that needs another first: say which, no trace
        print(f"error: {err}", file=sys.stderr)
        return 2


def _narrowed(plan: ReferencePlan) -> bool:
    """Whether --configs left out some of the reference's configs: a seed is then "complete" in part only."""
    return set(plan.configs) != set(CONFIGS)


def _run(plan: ReferencePlan, args: argparse.Namespace) -> int:
    from gecobench.reference import (
        EvaluationUnit,
        derive_units,
        plan_report,
        promote_seed,
        run_evaluations,
        run_zoo,
        subset_state,
        unit_state,
        write_filter_subsets,
        write_zoo_summary,
    )

    if args.stage in ("zoo", "all"):
        run_zoo(plan, args.shard, threads=args.threads, progress=not args.quiet, workers=args.zoo_workers)
        rows = write_zoo_summary(plan)
        below = [f"{r['regime']}/{r['config']} {r['test_accuracy']:.3f}" for r in rows
                 if r["regime"] != "ZS" and not r["meets_80_percent"]]
        print(f"zoo: {len(rows)} checkpoints summarised in {plan.zoo_summary}"
              + (f"; below 80 %: {', '.join(below)}" if below else "; every regime but ZS ≥ 80 %"))
    if args.stage in ("evaluate", "all"):
        run_evaluations(plan, args.shard, progress=not args.quiet)
        print(f"evaluation: finished units staged in {plan.staging_dir}")
    if args.stage in ("filters", "derive", "all"):
        states = {c: subset_state(plan, c) for c in plan.configs}
        waiting = [c for c, (state, _) in states.items() if state == "waiting"]
        outdated = [c for c, (state, _) in states.items() if state == "outdated predictions"]
        if (waiting or outdated) and args.stage == "all":
            if waiting:
                print(f"filters: waiting for prediction files of {', '.join(waiting)} (other seeds' zoo); not "
                      "derived yet")
            for config in outdated:  # the stage itself refuses them; --stage filters says so as an error
                print(f"filters: {config} not computed: {states[config][1]}")
        else:
            subsets = write_filter_subsets(plan)
            print("filters: " + ", ".join(f"{c} {s.size}/{s.n_considered}" for c, s in subsets.items())
                  + f" source sentences kept, in {plan.filters_dir}")
            if args.stage in ("derive", "all"):
                derived = derive_units(plan)
                print(f"derive: paper-filter records of {len(derived)} unit(s) staged in {plan.staging_dir}")
    # a seed is promoted whole: a plan narrowed by --configs would put part of it into the store
    narrowed = _narrowed(plan)
    if args.stage in ("promote", "all") and narrowed:
        print(f"promote: not with --configs {' '.join(plan.configs)}: a seed enters the store with all "
              f"{len(CONFIGS)} configs (run the promote stage without --configs)")
    elif args.stage in ("promote", "all"):
        for seed in plan.seeds:
            states = {unit_state(plan, EvaluationUnit(c, seed)) for c in plan.configs}
            if states & {"missing", "stale"}:
                if args.stage == "promote":
                    print(f"seed {seed}: not complete, not promoted")
                continue
            summary = promote_seed(plan, seed, replace=args.replace)
            where = f" (part {summary['part']})" if summary.get("part") else ""
            print(f"seed {seed}: {summary['records']} records in {plan.store}{where}")
    if args.stage in ("evaluate", "derive", "promote", "all"):
        print("\n".join(line for line in plan_report(plan, args.shard) if line.startswith(("units:", "to commit"))
                         or (line.startswith("seed ") and not narrowed)))
    return 0

