#!/usr/bin/env python
"""Throughput of the reference evaluation, read back from the records it wrote (no computation).

For each (config, model) of a store: the sentences attributed, the wall seconds the runner spent on the
explainers (``runtime.total_seconds`` summed over the explainers of the unfiltered records: every scorable
sentence), of which the model's own attributions (``seconds_per_sentence`` × sentences), and the rest (the
zero-shot reference, the Co-12 properties' extra passes and faithfulness on their subsample). Seconds are wall
clock as the runner measured them, so they include any load the machine had: say which in BENCHMARKS.md.

    python bench/bench_reference_throughput.py                       # the committed reference store
    python bench/bench_reference_throughput.py --results /work/wt-reference/reference/store
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    from gecobench.reference import REFERENCE_STORE
    from gecobench.store import LocalStore

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=str(REFERENCE_STORE), help="store folder (default: reference/store)")
    args = parser.parse_args(argv)
    report = LocalStore(args.results).read_all("explainer_score")
    cells: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for record in report.documents:
        if record["protocol"].get("filter") != "none":
            continue  # the filtered records are a subset of the same pass
        cell = cells[(record["dataset"]["config"], record["model"]["regime"])]
        runtime = record["runtime"]
        cell["explainers"] += 1
        cell["sentences"] = record["counts"]["n_scored"]
        cell["total"] += runtime["total_seconds"]
        cell["main"] += (runtime.get("seconds_per_sentence") or 0.0) * record["counts"]["n_scored"]
    if not cells:
        print(f"no unfiltered records in {args.results}")
        return 1
    print("| config | regime | explainers | sentences | explain s | rest s (reference, properties, faithfulness) "
          "| s / sentence |")
    print("|---|---|---|---|---|---|---|")
    totals = defaultdict(float)
    for (config, regime), cell in sorted(cells.items()):
        per = cell["total"] / cell["sentences"] if cell["sentences"] else float("nan")
        print(f"| {config} | {regime} | {int(cell['explainers'])} | {int(cell['sentences'])} | {cell['main']:.0f} | "
              f"{cell['total'] - cell['main']:.0f} | {per:.2f} |")
        totals["sentences"] += cell["sentences"]
        totals["total"] += cell["total"]
    print(f"\nall: {totals['total']:.0f} s for {int(totals['sentences'])} (sentence, model) pairs = "
          f"{totals['total'] / totals['sentences']:.2f} s per sentence and model")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
