#!/usr/bin/env python
"""Print the tables pasted into the metric cards: GECO co-occurrence bias and BETO/MarIA supersense bias.

Example: python scripts/maintainer/compute_card_numbers.py --json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gecobench.metrics.card_numbers import (
    geco_cooccurrence_markdown,
    supersense_bias_markdown,
)

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"  # ../shared/data next to the repository


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="the shared data folder holding geco/ and spanish/ (default: ../shared/data)")
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON instead of Markdown")
    args = parser.parse_args(argv)
    geco = geco_cooccurrence_markdown(args.data / "geco", as_json=args.json)
    spanish = supersense_bias_markdown(args.data / "spanish", as_json=args.json)
    if args.json:
        print(json.dumps({"cooccurrence_bias": geco, "bias_indices": spanish}, indent=2))
    else:
        print("## cooccurrence_bias (GECO train split)\n\n" + geco + "\n")
        print("## bias_indices (supersenses, top-10)\n\n" + spanish)


if __name__ == "__main__":
    main()
