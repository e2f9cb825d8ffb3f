"""Print a store's Mass Accuracy next to GECOBench's published medians, and check the paper's five findings.

  gecobench compare                          # the committed reference results
  gecobench compare --results results --unfiltered
  gecobench compare --pivot > table.md        # Markdown, as in docs/reproducing.md

The published medians are read from GECOBENCH_FIGURES.md in the shared data folder (read off the paper's figure
by eye, ±0.03). Criteria for each finding are printed with the answer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=None,
                        help="store folder (default: a checkout's reference/store; an installed package has none)")
    parser.add_argument("--figures", default=None, help="GECOBENCH_FIGURES.md (default: the shared data folder)")
    parser.add_argument("--pivot", action="store_true",
                        help="one table per config (explainers × regimes, cells 'ours (paper)') instead of one row per cell")
    parser.add_argument("--unfiltered", action="store_true", help="use the records without the correctness filter")
    parser.add_argument("--seed", type=int, default=None,
                        help="one model seed (default: every seed in the store: mean and 95 %% t-interval across "
                             "seeds per cell and per finding)")
    parser.add_argument("--seeds", type=int, nargs="+", default=None, help="these model seeds only")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from gecobench.paper_comparison import compare_records
    from gecobench.reference import REFERENCE_STORE
    from gecobench.store import LocalStore

    folder = Path(args.results or REFERENCE_STORE)
    if not folder.is_dir():
        print(f"error: no results store at {folder}: pass --results FOLDER (an installed package carries no reference "
              "store; `gecobench evaluate` writes one)", file=sys.stderr)
        return 2
    report = LocalStore(folder).read_all("explainer_score")
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(compare_records(report.documents, filtered=not args.unfiltered, seed=args.seed, seeds=args.seeds, figures=args.figures,
                          pivot=args.pivot), end="")
    return 0

