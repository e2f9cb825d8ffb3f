"""The built-in explainers' Mass Accuracy on the hidden control models: what calibrates the data-not-model flag.

  gecobench controls score --controls /srv/gecobench/controls [--explainers saliency ...] [--max-groups N]
"""

from __future__ import annotations

import argparse
import json
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench controls score", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--controls", default=None, help="the private controls folder (default: $GECOBENCH_CONTROL_DIR)")
    parser.add_argument("--explainers", nargs="*", default=None, help="built-in explainers (default: all)")
    parser.add_argument("--config", default="binary_all", help="GECO config whose test rows are explained")
    parser.add_argument("--max-groups", type=int, default=None, help="only the first N test sentence groups")
    parser.add_argument("--data-dir", default=None, help="GECO data folder (default ../shared/data/geco)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from gecobench.controls import builtin_control_scores, load_control_models
    from gecobench.explainers import available_explainers

    controls = load_control_models(args.controls)
    if not controls:
        print("error: no control models: pass --controls or set GECOBENCH_CONTROL_DIR", file=sys.stderr)
        return 2
    names = args.explainers or sorted(available_explainers())
    scores = builtin_control_scores(names, controls, args.config, args.data_dir, args.max_groups)
    if args.json:
        print(json.dumps(scores, indent=2))
        return 0
    for name, block in scores.items():
        ma = block["mass_accuracy"]
        print(f"{name:24s} control MA {ma['value']:.3f} [{ma['ci_low']:.3f}, {ma['ci_high']:.3f}]  "
              f"chance {block['chance_mass_accuracy']:.3f}  (n={ma['n_scored']})")
    return 0
