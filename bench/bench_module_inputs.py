"""CPU time of the mass_accuracy evaluate module (strict input checks + evaluate's encoding + the math).

Example: python bench/bench_module_inputs.py --n 10000 --tree .
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="number of sentences (default 10000)")
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent),
                        help="repository root whose metrics/ and gecobench/ to time (default: this one)")
    parser.add_argument("--repeats", type=int, default=3, help="computations to time (default 3)")
    args = parser.parse_args(argv)
    tree = Path(args.tree).resolve()
    sys.path.insert(0, str(tree))
    import evaluate
    import numpy as np

    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 30, args.n)
    attributions = [rng.normal(size=n).tolist() for n in lengths]
    ground_truth = [rng.integers(0, 2, n).tolist() for n in lengths]
    module = evaluate.load(str(tree / "metrics" / "mass_accuracy"))
    module.compute(attributions=attributions[:10], ground_truth=ground_truth[:10])  # warm up
    seconds = []
    for _ in range(args.repeats):
        start = time.process_time()
        module.compute(attributions=attributions, ground_truth=ground_truth)
        seconds.append(time.process_time() - start)
    print(f"{tree}: mass_accuracy module on {args.n} sentences, CPU seconds: {', '.join(f'{s:.2f}' for s in seconds)}")


if __name__ == "__main__":
    main()
