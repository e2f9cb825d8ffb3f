"""The reference results: train the zoo and score every built-in explainer on every test sentence.

Resumable (finished checkpoints, evaluation chunks and records are kept) and shardable:

  gecobench reference --plan                      # print what would run, run nothing
  gecobench reference                             # every stage (make reference)
  gecobench reference --stage zoo --shard 1/2     # this machine's half of the zoo
  gecobench reference --stage evaluate --seeds 0 1 2
  accelerate launch --multi_gpu --num_processes 2 -m gecobench reference --stage evaluate   # 2 CPU processes

Checkpoints go to runs/reference/ (not committed); the records to reference/store/, the zoo summary to
reference/zoo_summary.json and the wall time of every unit to reference/timings.json (all committed).
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from gecobench.reference import CONFIGS, REGIMES, ReferencePlan, parse_shard


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench reference", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=["zoo", "evaluate", "all"], default="all")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="default: 0")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS, help="default: all four")
    parser.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                        help="run only shard K of N: whole (config, seed) evaluations, each with its own zoo checkpoints, "
                             "so shards need no shared disk")
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 1)),
                        help="torch threads for training (default: every core)")
    parser.add_argument("--output", type=Path, default=None, metavar="DIR",
                        help="write the records (DIR/store), zoo summary and timings here instead of reference/ "
                             "(e.g. to time a run without touching the committed results)")
    parser.add_argument("--plan", action="store_true", help="print the plan and what is done; run nothing")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gecobench.reference import (
        checkpoint_is_current,
        run_evaluations,
        run_zoo,
        select_shard,
        write_zoo_summary,
        zoo_units_of_shard,
    )

    outputs = {}
    if args.output is not None:
        outputs = {"store": args.output / "store", "zoo_summary": args.output / "zoo_summary.json",
                   "timings": args.output / "timings.json",
                   "zero_shot_attributions": args.output / "zero_shot_attributions"}
    plan = ReferencePlan(seeds=tuple(args.seeds), configs=tuple(args.configs), regimes=REGIMES, **outputs)
    if args.plan:
        for unit in zoo_units_of_shard(plan, args.shard):
            preset, overrides = plan.schedule_for(unit.regime, unit.config)
            state = "done" if checkpoint_is_current(plan, unit) else "to train"
            print(f"{unit.key:<40} {preset:<8} {overrides}  [{state}]")
        for unit in select_shard(plan.evaluation_units(), args.shard):
            print(f"{unit.key:<40} {len(plan.explainers)} explainers × {len(plan.regimes)} models")
        return 0
    if args.stage in ("zoo", "all"):
        run_zoo(plan, args.shard, threads=args.threads, progress=not args.quiet)
        rows = write_zoo_summary(plan)
        below = [f"{r['regime']}/{r['config']} {r['test_accuracy']:.3f}" for r in rows
                 if r["regime"] != "ZS" and not r["meets_80_percent"]]
        print(f"zoo: {len(rows)} checkpoints summarised in {plan.zoo_summary}"
              + (f"; below 80 %: {', '.join(below)}" if below else "; every regime but ZS ≥ 80 %"))
    if args.stage in ("evaluate", "all"):
        run_evaluations(plan, args.shard, progress=not args.quiet)
        print(f"evaluation: records in {plan.store}")
    return 0

