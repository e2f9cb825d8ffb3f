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

    gecobench reference --stage zoo --configs binary_all --seeds 0   # the zoo of one config, once
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
from gecobench.evaluation.filters import (
    DEFAULT_FILTER,
    FILTER_NAMES,
    NONE,
    PAPER,
    FilterSubsetError,
    load_filter_subsets,
    reference_subsets_for_models,
)
from gecobench.evaluation.settings import with_precision
from gecobench.explainers.inputs import PRECISIONS
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
    parser.add_argument("--precision", choices=PRECISIONS, default="float32",
                        help="the precision every built-in that runs the model runs it in (their precision "
                             "parameter; a spec's own precision=... wins): bfloat16 = mixed precision, faster on CPUs "
                             "with AVX-512 BF16/AMX and on GPUs, recorded as a parameter; default float32 (the "
                             "reference's)")
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
    parser.add_argument("--filter", choices=FILTER_NAMES, default=DEFAULT_FILTER,
                        help="the correctness filter: paper (default: the source sentences whose every gender "
                             "variant every model of the config classifies correctly, one subset shared by all "
                             "models), per_model (each model its own correctly classified sentences) or none")
    parser.add_argument("--no-filter", dest="filter", action="store_const", const=NONE,
                        help="the same as --filter none")
    parser.add_argument("--both-filters", action="store_true",
                        help="write records with the paper's filter and without from one attribution pass "
                             "(overrides --filter/--no-filter)")
    parser.add_argument("--filter-subset", default=None, metavar="PATH",
                        help="the paper's filter: score the shared subset of this file (filters/<config>.json), "
                             "folder of such files or reference folder, instead of computing it from --models "
                             "(default: the committed reference's subsets when --models are the reference's "
                             "checkpoints, else computed)")
    parser.add_argument("--save-filter-subsets", default=None, metavar="DIR",
                        help="write the shared subsets the run used to DIR/<config>.json, for --filter-subset")
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
            split=args.split, seed=args.seed, filter=args.filter, properties=args.properties,
            bootstrap=args.bootstrap, batch_size=args.batch_size, chunk_size=args.chunk_size, max_groups=args.max_groups,
            noise_std=args.noise_std, data_dir=args.data_dir, faithfulness=args.faithfulness,
            properties_max_groups=args.properties_max_groups, faithfulness_max_groups=args.faithfulness_max_groups,
        )
    except ValueError as err:  # e.g. a subsample size that is not a multiple of --chunk-size
        build_parser().error(str(err))
    filters = (PAPER, NONE) if args.both_filters else (settings.filter,)
    try:
        subsets = None
        if PAPER in filters:
            if args.filter_subset:
                subsets = load_filter_subsets(args.filter_subset)
            else:  # the reference's subsets, when the models are the reference's, for every config of the run
                found = reference_subsets_for_models(args.models)
                subsets = found if found and set(args.configs) <= set(found) else None
        specs = with_precision([ExplainerSpec.parse(e) for e in args.explainers], args.precision)
        summary = run_evaluation(specs, args.models, args.configs, settings, store_location=args.results,
                                 checkpoint_dir=args.checkpoint_dir, progress=not args.quiet, filters=filters,
                                 reference_attributions=args.reference_attributions, zero_shot=args.zero_shot,
                                 filter_subsets=subsets)
    except (ValueError, FileNotFoundError, ConnectionError, FilterSubsetError) as err:
        # bad input (an unknown explainer, a missing checkpoint, a subset file of other data or config, GECO
        # unreachable): the message names it
        if os.environ.get("GECOBENCH_TRACEBACK"):
            raise
        print(f"error: {err} (set GECOBENCH_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 2
    from accelerate import PartialState

    if PartialState().is_main_process:
        print(f"records written: {len(summary.written)}; already in the store: {len(summary.existing)}")
        for config, subset in summary.filter_subsets.items():
            print(f"paper's filter on {config}: {subset.size} of {subset.n_considered} source sentences "
                  f"(subset {subset.fingerprint[:12]}, {len(subset.defined_by)} defining models)")
            if args.save_filter_subsets:
                print(f"  written to {subset.write(Path(args.save_filter_subsets) / f'{config}.json')}")
        if args.show_leaderboard:
            print(leaderboard_text(open_results_store(args.results)))
        if args.show_gaps:
            print(leaderboard_text(open_results_store(args.results), gaps=True))
        if summary.failures:
            # fail-soft: the other explainers' records are written; the exit status says that some are missing
            for failure in summary.failures:
                print(f"error: {failure.describe()}; its records for that model were not written",
                      file=sys.stderr)
            failed = sorted({f.explainer for f in summary.failures})
            print(f"error: {len(failed)} explainer(s) failed: {', '.join(failed)} (set GECOBENCH_TRACEBACK=1 "
                  "and rerun one alone for the traceback; the chunks computed are checkpointed)", file=sys.stderr)
            return 1
    return 0

