#!/usr/bin/env python
"""Print the per-seed numbers that docs/reproducing.md's narrative ("What we think explains the differences")
cites, from the paper-filter records of the reference store and of staged seeds (maintainers, when a seed joins).

The narrative is prose and stays hand-written; this prints what it quotes, seed by seed in the order given, so
that it can be read again when a seed is promoted: finding 3 (OLA's Input×Gradient, Pattern Variant), finding 4
(CEfAf's Integrated Gradients, the regimes' mean MA, RMA of the CE/CEf cells), finding 5 (OLA on D_S), DeepLift and
Guided Backprop, the non-binary configurations, and the cells where the seeds spread most.

  python scripts/maintainer/seed_numbers.py --seeds 0 1 2 3 4 --staged reference/staging/seed-1/store
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path

from gecobench.paper_comparison import BASELINES, PAPER_EXPLAINERS
from gecobench.reference import REFERENCE_STORE
from gecobench.store import LocalStore

BINARY_ALL, BINARY_SUBJECT, NONBINARY_ALL, NONBINARY_SUBJECT = (
    "binary_all", "binary_subject", "nonbinary_all", "nonbinary_subject")
REGIMES = ("C", "CE", "CEf", "CEfAf", "OLA", "ZS")
#: the methods the findings are about, as gecobench.paper_comparison judges them: the paper's, its baselines left out
PAPER_METHODS = frozenset(PAPER_EXPLAINERS.values()) - frozenset(BASELINES)

Key = tuple[int, str, str, str]  # seed, config, regime, explainer


def paper_metrics(documents: Iterable[dict], seeds: Sequence[int]) -> dict[Key, dict]:
    """The metrics block of every paper-filter record of ``seeds``, by (seed, config, regime, explainer)."""
    wanted = set(seeds)
    metrics: dict[Key, dict] = {}
    for record in documents:
        seed = record["provenance"]["seed"]
        if seed in wanted and record["filter"]["name"] == "paper":
            key = (seed, record["dataset"]["config"], record["model"]["regime"], record["explainer"]["name"])
            metrics[key] = record["metrics"]
    return metrics


class SeedNumbers:
    """One metric of one cell per seed, from :func:`paper_metrics`."""

    def __init__(self, metrics: dict[Key, dict], seeds: Sequence[int]) -> None:
        self.metrics, self.seeds = metrics, list(seeds)
        self.explainers = sorted({key[3] for key in metrics})
        self.methods = [name for name in self.explainers if name in PAPER_METHODS]

    def per_seed(self, config: str, regime: str, explainer: str, stat: str = "value",
                 metric: str = "mass_accuracy") -> list[float | None]:
        values = []
        for seed in self.seeds:
            block = self.metrics.get((seed, config, regime, explainer), {}).get(metric) or {}
            values.append(block.get(stat))
        return values

    def mean_over_paper_methods(self, config: str, regime: str) -> list[float | None]:
        """Per seed, the mean MA over the paper's methods (finding 3's and 4's mean)."""
        return [mean([self.metrics.get((seed, config, regime, name), {}).get("mass_accuracy", {}).get("value")
                      for name in self.methods]) for seed in self.seeds]


def mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.mean(present) if present else None


def show(values: Sequence[float | None], digits: int = 2) -> str:
    return " / ".join("—" if v is None else f"{v:.{digits}f}" for v in values)


def report(numbers: SeedNumbers) -> list[str]:
    """The narrative's numbers, one line each."""
    n, lines = numbers, []
    seeds = " / ".join(str(s) for s in n.seeds)

    def line(label: str, values: Sequence[float | None], digits: int = 2) -> None:
        average = mean(values)
        lines.append(f"{label}: {show(values, digits)}  (seeds {seeds}; mean "
                     f"{'—' if average is None else f'{average:.{digits + 1}f}'})")

    line("F3 OLA Input×Gradient median MA, D_A", n.per_seed(BINARY_ALL, "OLA", "input_x_gradient", "median"))
    line("F3 OLA Input×Gradient median MA, D_S", n.per_seed(BINARY_SUBJECT, "OLA", "input_x_gradient", "median"))
    line("F3 Pattern Variant median MA, D_S", n.per_seed(BINARY_SUBJECT, "OLA", "pattern_variant", "median"))
    line("F4 CEfAf Integrated Gradients median MA, D_A",
         n.per_seed(BINARY_ALL, "CEfAf", "integrated_gradients", "median"))
    for regime in ("CEf", "CEfAf"):
        line(f"F4 {regime} mean MA over the methods, D_A", n.mean_over_paper_methods(BINARY_ALL, regime), 3)
    cells = [(regime, name) for regime in ("CE", "CEf") for name in n.methods]
    rma = {cell: n.per_seed(BINARY_ALL, *cell, metric="relative_mass_accuracy") for cell in cells}
    low = [cell for cell, values in rma.items() if (mean(values) or 0.0) <= 0]
    lines.append(f"F4 RMA on D_A: {len(cells) - len(low)} of {len(cells)} CE/CEf cells positive on the seed means")
    for cell in low:
        line(f"   RMA at or below 0: {cell[0]} {cell[1]}", rma[cell], 3)
    # cells positive on the mean but not in every seed: the narrative says which way the draw went
    for cell, values in rma.items():
        if cell not in low and any(value is not None and value <= 0 for value in values):
            line(f"   RMA at or below 0 in some seed: {cell[0]} {cell[1]}", values, 3)
    line("F5 OLA Input×Gradient mean MA, D_S", n.per_seed(BINARY_SUBJECT, "OLA", "input_x_gradient"), 4)
    line("F5 Pattern Variant mean MA, D_S", n.per_seed(BINARY_SUBJECT, "OLA", "pattern_variant"), 4)
    for config in (NONBINARY_ALL, NONBINARY_SUBJECT):
        line(f"Pattern Variant mean MA, {config}", n.per_seed(config, "OLA", "pattern_variant"))
        line(f"Pattern Variant median MA, {config}", n.per_seed(config, "OLA", "pattern_variant", "median"))
    for config in (NONBINARY_ALL, NONBINARY_SUBJECT):
        line(f"OLA Input×Gradient mean MA, {config}", n.per_seed(config, "OLA", "input_x_gradient"))
    line("CE DeepLift median MA, D_A", n.per_seed(BINARY_ALL, "CE", "deeplift", "median"))
    line("CE Guided Backprop median MA, D_A", n.per_seed(BINARY_ALL, "CE", "guided_backprop", "median"))
    for config in (NONBINARY_ALL, NONBINARY_SUBJECT):
        by_regime = {regime: mean(n.mean_over_paper_methods(config, regime)) for regime in REGIMES}
        lines.append(f"{config}: mean MA by regime (seed mean) "
                         + ", ".join(f"{r} {'—' if v is None else f'{v:.3f}'}" for r, v in by_regime.items()))
        for regime in ("C", "CE", "CEf", "CEfAf"):
            best = max(n.methods, key=lambda name: mean(n.per_seed(config, regime, name)) or -1.0)
            lines.append(f"   best method on {regime}: {best}")
        low = [cell for cell in cells
               if (mean(n.per_seed(config, *cell, metric="relative_mass_accuracy")) or 0.0) <= 0]
        lines.append(f"   RMA at or below 0: {low or 'none'}")
    for regime in REGIMES:  # where the seeds spread most: the widest range of per-seed medians
        spreads = []
        for config in (BINARY_ALL, BINARY_SUBJECT, NONBINARY_ALL, NONBINARY_SUBJECT):
            for name in n.explainers:
                values = n.per_seed(config, regime, name, "median")
                present = [v for v in values if v is not None]
                if len(present) > 1:
                    spreads.append((max(present) - min(present), config, name, values))
        spreads.sort(key=lambda item: -item[0])
        lines.append(f"spread of medians, {regime}: " + "; ".join(
            f"{width:.2f} {config} {name} ({show(values)})" for width, config, name, values in spreads[:3]))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", required=True, help="the seeds, in the order to print")
    parser.add_argument("--store", default=str(REFERENCE_STORE), help="the reference store (promoted seeds)")
    parser.add_argument("--staged", nargs="*", default=[], metavar="STORE",
                        help="stores of staged seeds to read as well (reference/staging/seed-K/store)")
    args = parser.parse_args(argv)
    documents: list[dict] = []
    for location in [args.store, *args.staged]:
        if not Path(location).is_dir():
            parser.error(f"{location}: no such store folder")
        found = LocalStore(location).read_all("explainer_score")
        if found.warnings:
            parser.error(f"{location}: {len(found.warnings)} records do not read: {found.warnings[:3]}")
        documents.extend(found.documents)
    metrics = paper_metrics(documents, args.seeds)
    missing = sorted(set(args.seeds) - {key[0] for key in metrics})
    if missing:
        parser.error(f"no paper-filter records of seed(s) {missing} in {[args.store, *args.staged]}")
    print(f"{len(metrics)} paper-filter records of seeds {args.seeds}")
    print("\n".join(report(SeedNumbers(metrics, args.seeds))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
