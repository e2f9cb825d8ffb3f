"""Build GECO-style datasets from labelled sentences (the released labelling JSON, JSONL or inline markup).

Writes DIR/<config>/{train,test}.jsonl for the four configs (binary/non_binary x all/subj), a summary in
DIR/generation.json, and prints the co-occurrence bias of the result. See docs/generation.md.

Examples:
  gecobench build-geco --labels ../shared/data/geco/generation/labelling/merged_labelling_v2.json \\
      --names ../shared/data/geco/generation/names --split-from ../shared/data/geco --profile release \\
      --out /tmp/geco --compare-to ../shared/data/geco
  gecobench build-geco --labels my_sentences.txt --out my_geco
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from geco_dataset.generation import (
    PROFILES,
    GenerationError,
    build_dataset,
    compare_with_release,
    format_table,
)
from gecobench.metrics.cooccurrence import geco_cooccurrence_table


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench build-geco", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--labels", required=True, help="labelled sentences: .json (GECO labelling), .jsonl, "
                                                        "or a text file of inline markup")
    parser.add_argument("--out", required=True, help="output folder for the four configs")
    parser.add_argument("--names", default=None, help="folder with the name lists (Top250*.txt)")
    parser.add_argument("--name-mode", choices=("pronoun", "names"), default="pronoun",
                        help="first-name slots of the labelling JSON: pronouns by context (as in the release) "
                             "or names drawn from --names with --seed")
    parser.add_argument("--surname-mode", choices=("keep", "names"), default="keep",
                        help="surname slots: keep the source surname (as in the release) or draw one")
    parser.add_argument("--profile", choices=PROFILES, default="grammatical",
                        help="non-binary rules: 'grammatical' or 'release' (reproduces the released files' "
                             "verb list, 'his' -> 'them' and 'Mx. ')")
    parser.add_argument("--split-from", default=None,
                        help="folder of a released GECO copy whose train/test sentence ids to reuse; "
                             "otherwise a seeded split")
    parser.add_argument("--test-fraction", type=float, default=0.2, help="test share of a seeded split")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split and the name draws")
    parser.add_argument("--compare-to", default=None,
                        help="a released GECO folder: print the share of identical sentences per config/gender")
    parser.add_argument("--no-bias", action="store_true", help="skip the co-occurrence bias")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.quiet:  # the libraries' own bars (transformers' 'Loading weights' …) too
        from gecobench.quiet import silence_library_progress

        silence_library_progress()

    reader_options = {}
    if Path(args.labels).suffix == ".json":
        reader_options = {"name_mode": args.name_mode, "surname_mode": args.surname_mode}
    try:
        summary = build_dataset(args.labels, args.out, names_dir=args.names, split_from=args.split_from,
                                profile=args.profile, seed=args.seed, test_fraction=args.test_fraction,
                                progress=not args.quiet, **reader_options)
    except (GenerationError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {summary['n_sentences']} sentences ({summary['n_train']} train / {summary['n_test']} test) "
          f"to {args.out}; split: {summary['split']}")
    for note in summary["notes"]:
        print(f"note: {note}")
    if args.compare_to:
        print(format_table(compare_with_release(args.out, args.compare_to)))
    if not args.no_bias:
        bias = geco_cooccurrence_table(args.out)
        print("co-occurrence bias (train):")
        print(json.dumps({config: result["bias_c"] for config, result in bias.items()}, indent=2))
    return 0

