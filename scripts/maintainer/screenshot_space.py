#!/usr/bin/env python
"""Screenshots of every tab of the leaderboard Space, in headless Chromium (for the docs).

Examples:
  python scripts/maintainer/screenshot_space.py --results results                 # → artifacts/screenshots/
  python scripts/maintainer/screenshot_space.py --results results --docs          # → docs/images/ (tracked)

Without --results, a temporary store is filled with synthetic sample records (clearly not real results). The
tracked pictures in docs/images/ are only rewritten with --docs. The reference is the committed store unless
--reference says otherwise; the Space runs from the repository root with the store named relative to it, so the
pictures say `reference/store`, never where this machine keeps the checkout.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

from _space_browser import (
    TAB_NAMES,
    fill_sample_store,
    running_space,
    screenshot_tabs,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=None, help="results store to show (default: synthetic sample records)")
    parser.add_argument("--out-dir", type=Path, default=REPO_ROOT / "artifacts" / "screenshots",
                        help="folder for the PNGs (default: artifacts/screenshots, not tracked)")
    parser.add_argument("--docs", action="store_true", help="write into docs/images/ instead (tracked files)")
    parser.add_argument("--reference", default="reference/store",
                        help="reference store, relative to the repository root or absolute (default: reference/store)")
    parser.add_argument("--tabs", nargs="+", default=list(TAB_NAMES), choices=list(TAB_NAMES), metavar="TAB",
                        help=f"tabs to shoot (default: all of {', '.join(TAB_NAMES)})")
    args = parser.parse_args(argv)
    out_dir = REPO_ROOT / "docs" / "images" if args.docs else args.out_dir.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        if args.results is None:
            results = str(Path(tmp) / "results")
            fill_sample_store(results)
        else:
            results = str(Path(args.results).resolve())  # before the change of folder below
        os.chdir(REPO_ROOT)  # the page names the reference as given: a path relative to the checkout
        with running_space(results, str(Path(tmp) / "requests"), reference=args.reference) as url:
            for path in screenshot_tabs(url, out_dir, tuple(args.tabs)):
                print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
