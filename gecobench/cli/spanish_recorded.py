"""Import the 20 models' published Spanish fill-mask predictions (top-10 and top-29) as model_bias records.

Example:
    gecobench spanish recorded --store results --pictures-dir results/pictures

Idempotent: records already in the (append-only) store are skipped. Logic: gecobench.spanish.recorded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench spanish recorded",
        description="Turn the published top-K predictions of the 20 Spanish masked LMs (Garrido-Muñoz et al. 2023) "
        "into model_bias records flagged 'recorded (published predictions)'.",
    )
    parser.add_argument("--predictions-dir", default=None,
                        help="the spanish/predictions folder (holding top10/ and top29/); default "
                        "$GECOBENCH_SPANISH_DIR/predictions or ../shared/data/spanish/predictions, else the published files "
                        "downloaded from their pinned upstream commit into ~/.cache/gecobench/spanish")
    parser.add_argument("-k", "--top-k", type=int, nargs="+", choices=(10, 29), default=[10, 29],
                        help="which published K to import (default both)")
    parser.add_argument("--store", default=None, help="results store: folder or hf://datasets/<repo> (default results/)")
    parser.add_argument("--pictures-dir", default=None, help="write per-model and per-scheme pictures here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    from gecobench.spanish.cli_options import add_bootstrap_arguments

    add_bootstrap_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.no_progress:  # the libraries' own bars (transformers' 'Loading weights' …) too
        from gecobench.quiet import silence_library_progress

        silence_library_progress()
    from gecobench.spanish import import_recorded_predictions
    from gecobench.spanish.cli_options import bootstrap_from_arguments
    from gecobench.store import open_results_store

    try:
        bootstrap = bootstrap_from_arguments(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    predictions_dir = args.predictions_dir
    if predictions_dir is None:
        from geco_dataset import default_spanish_dir

        base = default_spanish_dir()
        if base is None:
            # no local copy: the released files from their pinned upstream URLs, checksum-verified
            from geco_dataset import download_spanish_data

            try:
                base = download_spanish_data(progress=not args.no_progress)
            except (ValueError, OSError, ConnectionError) as err:
                print(f"error: no Spanish data folder found and the download failed: {err}; pass --predictions-dir",
                      file=sys.stderr)
                return 2
        predictions_dir = str(Path(base) / "predictions")
    store = open_results_store(args.store)
    all_ids: dict[int, list[str]] = {}
    try:
        for k in args.top_k:
            all_ids[k] = import_recorded_predictions(predictions_dir, store, k=k, progress=not args.no_progress,
                                                     bootstrap=bootstrap)
            print(f"top{k}: {len(all_ids[k])} model_bias records in {store}")
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.pictures_dir:
        from gecobench.spanish.plots import write_pictures

        wanted = {i for ids in all_ids.values() for i in ids}
        records = [r for r in store.read_all("model_bias").documents if r["record_id"] in wanted]
        for k in args.top_k:
            written = write_pictures([r for r in records if r["protocol"]["k"] == k], Path(args.pictures_dir) / f"top{k}")
            print(f"top{k}: wrote {len(written)} pictures under {Path(args.pictures_dir) / f'top{k}'}")
    return 0

