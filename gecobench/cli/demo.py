"""Run the whole GECOBench main job offline: datasets, models, explanations, records, leaderboard.

    gecobench demo            # full demo (target: under 15 minutes on a 2-core CPU)
    gecobench demo --quick    # small subset (under 3 minutes), used by the test suite

Models are cached under --models-dir and reused; records already in the store are not written again, so a
second run is fast and a killed run resumes.
"""

from __future__ import annotations

import argparse
import os

from gecobench.cli import GECO_DIR_HELP


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small subset for tests (ZS + tiny CE, 3 explainers)")
    parser.add_argument("--results", default=None, help="results store folder or hf://repo (default results/)")
    parser.add_argument("--models-dir", default="runs/models", help="where trained checkpoints are cached")
    parser.add_argument("--checkpoint-dir", default="runs/eval_checkpoints", help="per-chunk evaluation checkpoints")
    parser.add_argument("--data-dir", default=None, help=GECO_DIR_HELP)
    parser.add_argument("--max-groups", type=int, default=None, help="override the number of test source sentences")
    parser.add_argument("--regimes", nargs="+", default=None, help="only these regimes (default: the plan's)")
    parser.add_argument("--explainers", nargs="+", default=None,
                        help="only these explainers, name[:key=value,...] (default: every built-in)")
    parser.add_argument("--no-spanish", dest="spanish", action="store_false", help="skip the Spanish records")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # the demo is offline by design: every model and data file is local or bundled
    for name, value in (("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(name, value)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    from gecobench.evaluation.demo import run_demo

    run_demo(quick=args.quick, results=args.results, models_dir=args.models_dir, checkpoint_dir=args.checkpoint_dir,
             spanish=args.spanish, data_dir=args.data_dir, max_groups=args.max_groups, regimes=args.regimes,
             explainers=args.explainers)
    return 0

