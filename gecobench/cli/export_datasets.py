"""Export GECO or the Spanish templates as a Hub-ready dataset folder (parquet + README card), optionally push it.

Examples:
    gecobench export datasets --dataset geco --out exports/geco
    gecobench export datasets --dataset spanish_templates --out exports/spanish --push-to-hub me/spanish-templates
"""

from __future__ import annotations

import argparse

from geco_dataset.export import EXPORTABLE_DATASETS, EXPORTERS, push_folder_to_hub


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench export datasets", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, choices=EXPORTABLE_DATASETS, help="which dataset to export")
    parser.add_argument("--out", required=True, help="output folder (must be empty unless --overwrite)")
    parser.add_argument("--data-dir", default=None,
                        help="local copy of the source files (default: $GECOBENCH_GECO_DIR / $GECOBENCH_SPANISH_DIR, "
                             "else ../shared/data/<dataset>, else download at the pinned commit)")
    parser.add_argument("--overwrite", action="store_true", help="replace files in a non-empty --out")
    parser.add_argument("--repair", default="known", choices=("known", "all", "none"),
                        help="GECO only: which defective rows to repair (see docs/datasets.md)")
    parser.add_argument("--push-to-hub", metavar="REPO_ID", default=None,
                        help="after exporting, upload the folder to this Hub dataset repo (owner/name)")
    parser.add_argument("--token", default=None, help="Hub token for --push-to-hub (default: $HF_TOKEN)")
    parser.add_argument("--private", action="store_true", help="create the Hub repo as private")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    kwargs = {"data_dir": args.data_dir, "overwrite": args.overwrite}
    if args.dataset == "geco":
        kwargs["repair"] = args.repair
    elif args.repair != "known":
        raise SystemExit("--repair applies to --dataset geco only")
    if args.push_to_hub:
        # fail on a missing token before the (slower) export
        import os
        if not (args.token or os.environ.get("HF_TOKEN")):
            raise SystemExit("--push-to-hub needs a token: pass --token or set HF_TOKEN")
    folder = EXPORTERS[args.dataset](args.out, **kwargs)
    print(f"exported {args.dataset} to {folder}")
    if args.push_to_hub:
        url = push_folder_to_hub(folder, args.push_to_hub, token=args.token, private=args.private)
        print(f"pushed to {url}")
    return 0

