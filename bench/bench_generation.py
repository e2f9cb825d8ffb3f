#!/usr/bin/env python
"""Speed of the GECO generation: rebuild the four configs from the released labelling (target: < 30 s on a
2-core CPU) and compare with the release. Prints one Markdown table row per step."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from geco_dataset.generation import build_dataset, compare_with_release


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--geco", default=str(Path(__file__).resolve().parent.parent.parent / "shared/data/geco"),
                        help="folder of the released GECO copy (with generation/)")
    args = parser.parse_args()
    geco = Path(args.geco)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        build_dataset(geco / "generation/labelling/merged_labelling_v2.json", out, names_dir=geco / "generation/names",
                      split_from=geco, profile="release", progress=False)
        built = time.perf_counter() - start
        start = time.perf_counter()
        compare_with_release(out, geco)
        compared = time.perf_counter() - start
    print("| step | seconds | target |\n|---|---|---|")
    print(f"| regenerate GECO (1610 sentences, 4 configs, write jsonl) | {built:.2f} | < 30 |")
    print(f"| compare with the release (10 config/gender pairs) | {compared:.2f} | < 10 |")


if __name__ == "__main__":
    main()
