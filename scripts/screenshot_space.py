"""Save a screenshot of the leaderboard Space (for the README) using headless Chromium.

Example: python scripts/screenshot_space.py --out docs/images/space.png
Without --results, a temporary store is filled with synthetic sample records (clearly not real results).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard_space.screenshot import fill_sample_store, running_space, screenshot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="docs/images/space.png", help="PNG to write (default: docs/images/space.png)")
    parser.add_argument("--results", default=None, help="results store to show (default: synthetic sample records)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = args.results
        if results is None:
            results = str(Path(tmp) / "results")
            fill_sample_store(results)
        with running_space(results, str(Path(tmp) / "requests")) as url:
            path = screenshot(url, args.out)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
