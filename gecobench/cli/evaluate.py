"""Score explainers × trained models × GECO configs on the test split into the results store.

Runs as a plain ``python`` process or under Accelerate / torchrun (sentences are sharded across processes and
gathered on the main process, which writes the records):

    gecobench evaluate --explainers saliency integrated_gradients:n_steps=16 \\
        --models runs/models/CE-binary_all-s0-demo-short --configs binary_all
    torchrun --nproc_per_node 2 -m gecobench evaluate ...               # 2 CPU processes
    accelerate launch --multi_gpu --num_processes 8 -m gecobench evaluate ...   # 8 GPUs

A run killed mid-way resumes from its per-chunk checkpoints when started again; records already in the store
are not written twice.

The RMA reference (the zero-shot model of the model's base, explained by every explainer) is read instead of
computed when it is published for the same zero-shot checkpoint, data and protocol (docs/evaluation.md, "The RMA
reference, published"), here on the reference zoo's models:

    gecobench reference --stage zoo --configs binary_all       # the zoo of one config, once
    gecobench evaluate --explainers saliency lime --models runs/reference/zoo/binary_all/C/seed0 \
        --zero-shot runs/reference/zoo/binary_all/ZS/seed0 --max-groups 32 \
        --reference-attributions reference/zero_shot_attributions
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import sys
from pathlib import Path
from types import ModuleType

from gecobench.cli import GECO_DIR_HELP
from gecobench.evaluation import (
    EvaluationSettings,
    ExplainerSpec,
    leaderboard_text,
    run_evaluation,
)
from gecobench.store import open_results_store


def import_user_module(name_or_file: str) -> ModuleType:
    """Import a user's module: a ``.py`` file by its path (a console command has no current folder on
    ``sys.path``, so ``my_explainer.py`` next to the user would not be found by name), else a dotted module name."""
    path = Path(name_or_file)
    if path.suffix == ".py":
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {path.resolve()}")
        module_name = f"gecobench_user_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses and pickling look their module up here
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(name_or_file)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench evaluate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--explainers", nargs="+", required=True,
                        help="registered explainer names, optionally with parameters: name:key=value,key=value")
    parser.add_argument("--models", nargs="+", required=True, help="checkpoint folders (model zoo layout)")
    parser.add_argument("--configs", nargs="+", default=["binary_all"],
                        help="GECO configs: binary_all binary_subject nonbinary_all nonbinary_subject")
    parser.add_argument("--results", default=None,
                        help="results store: a folder (default results/ or $GECOBENCH_RESULTS) or hf://<dataset repo id>")
    parser.add_argument("--checkpoint-dir", default="runs/eval_checkpoints", help="per-chunk checkpoints (resume)")
    parser.add_argument("--data-dir", default=None, help=GECO_DIR_HELP)
    parser.add_argument("--split", default="test")
    parser.add_argument("--seed", type=int, default=0, help="seed of explainers' randomness and of the bootstrap")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for 95%% CIs (0 = none)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--chunk-size", type=int, default=16, help="sentence groups per checkpointed chunk")
    parser.add_argument("--max-groups", type=int, default=None,
                        help="score only the first N source sentences of the split (each with all its gender variants)")
    parser.add_argument("--noise-std", type=float, default=0.01, help="std of the small-noise-check embedding noise")
    parser.add_argument("--filter", dest="filter_correct", action=argparse.BooleanOptionalAction, default=True,
                        help="score only sentences whose every gender variant is classified correctly (the paper's filter)")
    parser.add_argument("--both-filters", action="store_true",
                        help="write records with and without the paper's filter from one attribution pass "
                             "(overrides --filter/--no-filter)")
    parser.add_argument("--properties", action=argparse.BooleanOptionalAction, default=True,
                        help="compute the property and ranking metrics (MRC, SNC, LD, DMA, SP, CVR, rank accuracy, AUPRC); "
                             "with --no-properties a record holds MA, RMA and the gender gap only")
    parser.add_argument("--properties-max-groups", type=int, default=None, metavar="N",
                        help="compute the property metrics on the first N source sentences only (a multiple of "
                             "--chunk-size; stated in each record's protocol); default: every scored sentence")
    parser.add_argument("--faithfulness", action=argparse.BooleanOptionalAction, default=True,
                        help="compute comprehensiveness, sufficiency (AOPC) and leave-one-out tau on the model")
    parser.add_argument("--faithfulness-max-groups", type=int, default=None, metavar="N",
                        help="compute the faithfulness metrics on the first N source sentences only (a multiple of "
                             "--chunk-size; stated in each record's protocol); default: every scored sentence")
    parser.add_argument("--zero-shot", default=None, metavar="FOLDER",
                        help="the zero-shot (ZS) checkpoint of the models' base, the RMA reference (default: a ZS "
                             "checkpoint among --models or next to a model)")
    parser.add_argument("--reference-attributions", default=None, metavar="LOCATION",
                        help="published zero-shot reference attributions, read instead of computed where they match "
                             "the zero-shot checkpoint, data and protocol: a bundle, a folder of bundles "
                             "(reference/zero_shot_attributions), or the reference dataset's Hub id")
    parser.add_argument("--import", dest="imports", nargs="*", default=[], metavar="MODULE_OR_FILE",
                        help="Python modules (dotted names) or .py files to import first; they may register extra "
                             "explainers with gecobench.explainers.register_explainer")
    parser.add_argument("--show-leaderboard", action="store_true", help="print the leaderboard table at the end")
    parser.add_argument("--show-gaps", action="store_true",
                        help="print every metric by gender at the end: each group's value and every signed gap")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bars (the libraries' too) and no informational log lines")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.quiet:
        from gecobench.quiet import silence_library_progress

        silence_library_progress()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for module in args.imports:
        try:
            import_user_module(module)
        except (ImportError, OSError) as err:
            print(f"error: --import {module}: {err}", file=sys.stderr)
            return 2
    try:
        settings = EvaluationSettings(
            split=args.split, seed=args.seed, filter_correct=args.filter_correct, properties=args.properties,
            bootstrap=args.bootstrap, batch_size=args.batch_size, chunk_size=args.chunk_size, max_groups=args.max_groups,
            noise_std=args.noise_std, data_dir=args.data_dir, faithfulness=args.faithfulness,
            properties_max_groups=args.properties_max_groups, faithfulness_max_groups=args.faithfulness_max_groups,
        )
    except ValueError as err:  # e.g. a subsample size that is not a multiple of --chunk-size
        build_parser().error(str(err))
    try:
        specs = [ExplainerSpec.parse(e) for e in args.explainers]
        summary = run_evaluation(specs, args.models, args.configs, settings, store_location=args.results,
                                 checkpoint_dir=args.checkpoint_dir, progress=not args.quiet,
                                 filters=(True, False) if args.both_filters else None,
                                 reference_attributions=args.reference_attributions, zero_shot=args.zero_shot)
    except (ValueError, FileNotFoundError, ConnectionError) as err:
        # bad input (an unknown explainer, a missing checkpoint, GECO unreachable): the message names it
        if os.environ.get("GECOBENCH_TRACEBACK"):
            raise
        print(f"error: {err} (set GECOBENCH_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 2
    from accelerate import PartialState

    if PartialState().is_main_process:
        print(f"records written: {len(summary.written)}; already in the store: {len(summary.existing)}")
        if args.show_leaderboard:
            print(leaderboard_text(open_results_store(args.results)))
        if args.show_gaps:
            print(leaderboard_text(open_results_store(args.results), gaps=True))
    return 0

