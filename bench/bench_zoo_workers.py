#!/usr/bin/env python
"""One unit's zoo trained as the grid trains it, in a scratch folder: every regime of one (config, seed), either in
one process of ``--threads`` threads or in ``--workers`` processes side by side (``gecobench reference --stage zoo
--zoo-workers N``). Time it as a whole process, e.g. two one-thread workers against one two-thread process:

    python bench/bench_zoo_workers.py --workers 2 --threads 1
    python bench/bench_zoo_workers.py --workers 1 --threads 2

``--scale`` shortens every schedule (training sentences and OLA's epochs) so a run takes minutes, not the quarter
hour of the reference schedules; the per-step work, which decides how well threads and workers use the cores, is
the reference's. Prints each checkpoint's wall and CPU seconds (from the run's timings file).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="binary_all")
    parser.add_argument("--seed", type=int, default=7, help="a seed of no reference checkpoint (default 7)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--scale", type=float, default=0.33,
                        help="fraction of the reference's training sentences (MiniLM regimes) and OLA epochs")
    args = parser.parse_args(argv)

    import logging

    from gecobench.models.training import make_schedule
    from gecobench.reference import REFERENCE_SCHEDULES, ReferencePlan, run_zoo

    logging.basicConfig(level=logging.WARNING)
    schedules = {}
    for regime, (preset, overrides) in REFERENCE_SCHEDULES.items():
        full = make_schedule(preset, **overrides)
        if regime == "OLA":
            schedules[regime] = (preset, {**overrides, "epochs": max(1, round(full.epochs * args.scale))})
        else:
            sentences = full.max_train_sentences or 2000
            schedules[regime] = (preset, {**overrides, "max_train_sentences": max(64, round(sentences * args.scale))})
    with tempfile.TemporaryDirectory(prefix="bench-zoo-") as scratch:
        root = Path(scratch)
        plan = ReferencePlan(seeds=(args.seed,), configs=(args.config,), checkpoint_root=root / "runs",
                             store=root / "store", zoo_summary=root / "zoo.json", timings=root / "timings.json",
                             schedules=schedules, exceptions={})
        start = time.perf_counter()
        trained = run_zoo(plan, threads=args.threads, progress=False, predictions=False, workers=args.workers)
        wall = time.perf_counter() - start
        units = json.loads((root / "timings.json").read_text())["units"]
    print(f"{args.config} seed {args.seed}, {len(trained)} checkpoints, {args.workers} worker(s) × {args.threads} "
          f"thread(s), scale {args.scale}: {wall:.1f} s")
    for key, entry in sorted(units.items()):
        print(f"  {key}: {entry['seconds']:.1f} s wall, {entry.get('cpu_seconds', float('nan')):.1f} CPU-s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
