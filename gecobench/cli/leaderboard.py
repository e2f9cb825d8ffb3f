"""Print the leaderboard of a results store: Mass Accuracy per explainer and model (and the Spanish records).

Examples:
  gecobench leaderboard                          # results/ (or $GECOBENCH_RESULTS)
  gecobench leaderboard --results runs/my-store
"""

from __future__ import annotations

import argparse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench leaderboard", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=None,
                        help="results store: a folder (default results/ or $GECOBENCH_RESULTS) or "
                             "hf://datasets/<dataset repo id>")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from gecobench.evaluation import leaderboard_text
    from gecobench.store import open_results_store

    print(leaderboard_text(open_results_store(args.results)))
    return 0
