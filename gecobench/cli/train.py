"""Train GECOBench zoo models (one or more regimes x seeds on one GECO config) and save checkpoints.

Examples:
  gecobench train --regime OLA --config binary_all --seed 0 --schedule demo
  accelerate launch --multi_gpu --num_processes 2 -m gecobench train --regime CEfAf --config binary_all --seed 0
  torchrun --nproc_per_node 2 -m gecobench train --regime CEfAf --config binary_all --seed 0
(Without CUDA both run CPU DDP over gloo; `accelerate launch --cpu --num_processes 2` starts one process
unless an MPI hostfile is given.)
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from gecobench.cli import GECO_DIR_HELP
from gecobench.domain import MODEL_INFO_FILE
from gecobench.models.data import GECO_CONFIGS
from gecobench.models.regimes import REGIMES
from gecobench.models.training import SCHEDULES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--regime", nargs="+", required=True, choices=[*REGIMES, "all"], help="regime(s) to train; 'all' = every regime")
    parser.add_argument("--config", required=True, choices=sorted(GECO_CONFIGS), help="GECO config")
    parser.add_argument("--seed", nargs="+", type=int, default=[0], help="seed(s) (default 0)")
    parser.add_argument("--output-dir", default="runs/zoo", help="parent folder; checkpoints go to <dir>/<config>/<regime>/seed<seed>")
    parser.add_argument("--base-model", default=None, help="Hub id or local folder (default: GECOBENCH_BASE_MODEL, the Hub's bert-base-uncased if reachable, else the local MiniLM)")
    parser.add_argument("--data-dir", default=None, help=GECO_DIR_HELP)
    parser.add_argument("--schedule", default="default", choices=sorted(SCHEDULES), help="schedule preset (default: default; 'demo' is the short one)")
    parser.add_argument("--epochs", type=int, help="override the preset's epochs")
    parser.add_argument("--batch-size", type=int, help="override the global batch size (split across processes)")
    parser.add_argument("--lr", type=float, help="override the regime's default learning rate")
    parser.add_argument("--head-lr", type=float, help="learning rate of the new classification head (C, CE, CEf, CEfAf; default: --lr)")
    parser.add_argument("--max-length", type=int, help="override the maximum number of tokens")
    parser.add_argument("--patience", type=int, help="early-stopping patience in epochs")
    parser.add_argument("--max-train-sentences", type=int, help="train on at most this many source sentences")
    parser.add_argument("--no-dropout", action="store_true", help="disable dropout (exactly reproducible runs)")
    parser.add_argument("--max-restarts", type=int, default=0, metavar="N",
                        help="train a run whose validation accuracy stays at chance again, up to N times, from a derived "
                             "initialisation seed (seed + 1000 x attempt; the data split stays the seed's). Default 0; "
                             "the reference zoo uses 4")
    parser.add_argument("--restart-below", type=float, default=None, metavar="ACC",
                        help="with --max-restarts: restart a run whose validation accuracy stays under ACC too "
                             "(the reference zoo: 0.7, far under the paper's 0.8); the best attempt is kept")
    parser.add_argument("--threads", type=int, default=None, help="torch threads per process (default: torch's choice)")
    parser.add_argument("--push-to-hub", metavar="REPO_ID", default=None, help="upload the checkpoint to this Hub repo (one regime and seed only)")
    parser.add_argument("--hub-token", default=os.environ.get("HF_TOKEN"), help="Hub token (default $HF_TOKEN)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quiet:  # the libraries' own bars (transformers' 'Loading weights' …) too
        from gecobench.quiet import silence_library_progress

        silence_library_progress()
    import torch

    from gecobench.models.training import train_regime

    if args.threads:
        torch.set_num_threads(args.threads)
    regimes = list(REGIMES) if "all" in args.regime else args.regime
    if args.push_to_hub and (len(regimes) > 1 or len(args.seed) > 1):
        raise SystemExit("--push-to-hub takes a single --regime and a single --seed")
    overrides = {
        "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr, "head_lr": args.head_lr,
        "max_length": args.max_length,
        "patience": args.patience, "max_train_sentences": args.max_train_sentences,
        "dropout": False if args.no_dropout else None,
    }
    for regime in regimes:
        for seed in args.seed:
            out = Path(args.output_dir) / args.config / regime / f"seed{seed}"
            path = train_regime(
                regime, args.config, seed, out, base_model=args.base_model, data_dir=args.data_dir,
                schedule=args.schedule, push_to_hub=args.push_to_hub, hub_token=args.hub_token,
                show_progress=not args.quiet, max_restarts=args.max_restarts,
                restart_below=args.restart_below, **overrides,
            )
            from accelerate.state import PartialState

            if PartialState().is_main_process:
                import json

                info = json.loads((path / MODEL_INFO_FILE).read_text())
                restarted = f", init seed {info['init_seed']} after a restart" if info["init_seed"] != seed else ""
                print(f"{regime} {args.config} seed {seed}: val {info['val_accuracy']:.4f} test "
                      f"{info['test_accuracy']:.4f} ({info['training_time_s']:.0f} s{restarted}) -> {path}")
    return 0

