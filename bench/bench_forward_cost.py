"""What one forward pass of the MiniLM classifier costs: a fixed part per call and a part per token position.

Times ``EmbeddingForward`` on random token rows for a grid of (rows, length) and fits
``milliseconds = per_call + per_position * rows * length`` by least squares. The two numbers bound what
batching can win for perturbation explainers: evaluating R perturbed rows of L tokens one per call costs
``R * (per_call + per_position * L)``, batched at best ``R * per_position * L``.

Example: python bench/bench_forward_cost.py --threads 2
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
warnings.filterwarnings("ignore")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--repeats", type=int, default=8, help="timed calls per grid point (default 8)")
    args = parser.parse_args(argv)

    import numpy as np
    import torch
    from _common import fresh_minilm

    from gecobench.explainers.inputs import EmbeddingForward, embed

    torch.set_num_threads(args.threads)
    model = fresh_minilm()
    forward = EmbeddingForward(model)
    design, millis = [], []
    print("| rows | length | ms per call | ms per row |\n|---|---|---|---|")
    for rows in (1, 4, 16, 32, 64):
        for length in (6, 12, 24):
            ids = torch.randint(1000, 2000, (rows, length))
            mask = torch.ones_like(ids)
            with torch.inference_mode():
                for _ in range(2):  # warm-up: first calls of a shape allocate
                    forward(embed(model, ids), mask)
                start = time.perf_counter()
                for _ in range(args.repeats):
                    forward(embed(model, ids), mask)
            ms = (time.perf_counter() - start) / args.repeats * 1e3
            design.append([1.0, rows * length])
            millis.append(ms)
            print(f"| {rows} | {length} | {ms:.1f} | {ms / rows:.2f} |")
    per_call, per_position = np.linalg.lstsq(np.array(design), np.array(millis), rcond=None)[0]
    print(f"\nthreads {args.threads}: {per_call:.1f} ms per call + {per_position:.3f} ms per token position "
          f"(≈ {1e3 / per_position:,.0f} positions/s once batched)")


if __name__ == "__main__":
    main()
