#!/usr/bin/env python
"""Copy a reference run's results into this checkout's reference/ folder (maintainers).

The reference run works in a worktree at the tagged version (reference/README.md, "Resuming the run"). This
copies its records (all), the per-sentence side files of the filtered records only (the Space's drill-down;
the unfiltered ones are left out to keep the repository small), the zero-shot attribution bundles and
timings.json, validating every record and bundle on the way (one that does not validate is reported and not
copied):

  python scripts/maintainer/sync_reference.py --from ../wt-reference/reference

A run made to supersede the committed results (a new tagged version, written with ``make reference --output
DIR``) replaces them with ``--replace``: records and side files that the run did not make are removed, so the
store never holds two versions of one grid cell; its ``zoo_summary.json`` is copied too.

  python scripts/maintainer/sync_reference.py --from /work/ref-v050 --replace
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from gecobench.evaluation.published_reference import (
        BUNDLE_FOLDER,
        dataset_bundles,
        read_bundle,
    )
    from gecobench.reference import REFERENCE_DIR
    from gecobench.store import LocalStore

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", required=True,
                        help="the run's reference/ folder (or its --output DIR)")
    parser.add_argument("--to", dest="target", type=Path, default=REFERENCE_DIR,
                        help="the reference folder to update (default: this checkout's reference/)")
    parser.add_argument("--replace", action="store_true",
                        help="the run supersedes the committed results: remove every record it did not make")
    args = parser.parse_args(argv)
    source = Path(args.source)
    report = LocalStore(source / "store").read_all("explainer_score")
    for warning in report.warnings:
        print(f"not copied: {warning}", file=sys.stderr)
    if not report.documents:
        parser.error(f"no valid explainer_score records under {source / 'store'}")
    target = args.target / "store"
    (target / "explainer_score").mkdir(parents=True, exist_ok=True)
    (target / "sentence_scores").mkdir(parents=True, exist_ok=True)
    removed = 0
    if args.replace:  # only after the run's records validated: a bad source never empties the store
        kept = {record["record_id"] for record in report.documents}
        for old in [*(target / "explainer_score").glob("*.json"), *(target / "sentence_scores").glob("*.json.gz")]:
            if old.name.split(".")[0] not in kept:
                old.unlink()
                removed += 1
    sides = 0
    for record in report.documents:
        name = f"{record['record_id']}.json"
        shutil.copy2(source / "store" / "explainer_score" / name, target / "explainer_score" / name)
        side = source / "store" / "sentence_scores" / f"{record['record_id']}.json.gz"
        if record["protocol"].get("filter") != "none" and side.is_file():
            shutil.copy2(side, target / "sentence_scores" / side.name)
            sides += 1
    bundles = []
    for bundle in dataset_bundles(source):
        try:
            read_bundle(bundle)
        except ValueError as err:
            print(f"not copied: {err}", file=sys.stderr)
            continue
        bundles.append(bundle)
    if bundles or args.replace:
        (args.target / BUNDLE_FOLDER).mkdir(parents=True, exist_ok=True)
    if args.replace:
        for old in dataset_bundles(args.target):
            if old.name not in {b.name for b in bundles}:
                old.unlink()
                removed += 1
    for bundle in bundles:
        shutil.copy2(bundle, args.target / BUNDLE_FOLDER / bundle.name)
    copied = ["timings.json"] + (["zoo_summary.json"] if args.replace else [])
    for name in copied:
        if (source / name).is_file():
            shutil.copy2(source / name, args.target / name)
    print(f"{len(report.documents)} records, {sides} side files and {len(bundles)} zero-shot attribution bundles "
          f"copied into {args.target}"
          + (f"; {removed} files of other runs removed" if args.replace else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
