#!/usr/bin/env python
"""Add the reference plan's new explainers to the published zero-shot bundles (maintainers).

When an explainer joins the reference plan (``gecobench.reference.REFERENCE_EXPLAINERS``), the published bundles
(``reference/zero_shot_attributions``) lack its zero-shot attributions until the grid is run again, so every
user's evaluation with it computes its RMA reference. This computes only those: the zero-shot model of each
(config, seed) explained by the missing explainers under the bundle's attribution protocol, merged into the bundle
(``gecobench.reference.extend_zero_shot_attributions``). The zero-shot checkpoints come from the zoo stage
(``python scripts/reference.py --stage zoo``; the others are not needed) and must match the bundles' function
fingerprint. Partition SHAP's seed-0 attributions were added from a clean checkout (so that their provenance
names a commit, not a modified tree), the bundles copied outside it:

  python scripts/maintainer/extend_zero_shot_attributions.py --seeds 0 --bundles ../bundles --shard 1/2 &
  python scripts/maintainer/extend_zero_shot_attributions.py --seeds 0 --bundles ../bundles --shard 2/2
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from gecobench.reference import (
        CONFIGS,
        ReferencePlan,
        extend_zero_shot_attributions,
        parse_shard,
        select_shard,
    )

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="default: 0")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS, help="default: all four")
    parser.add_argument("--shard", type=parse_shard, metavar="K/N",
                        help="only shard K of N of the (config, seed) units")
    parser.add_argument("--bundles", type=Path, default=None,
                        help="the bundles to extend, in place (default: reference/zero_shot_attributions)")
    parser.add_argument("--checkpoints", type=Path, default=None,
                        help="the runner's chunk checkpoints (default: runs/reference/eval_checkpoints)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)

    plan = ReferencePlan(seeds=tuple(args.seeds), configs=tuple(args.configs), zero_shot_attributions=args.bundles)
    checkpoints = args.checkpoints or Path(plan.checkpoint_root) / "eval_checkpoints"
    for unit in select_shard(plan.evaluation_units(), args.shard):
        try:
            path, added = extend_zero_shot_attributions(plan, unit, checkpoints, progress=not args.quiet)
        except (ValueError, FileNotFoundError) as err:
            parser.error(str(err))
        print(f"{unit.key}: {', '.join(added) if added else 'nothing missing'} -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
