"""Speed of the vectorised Mass Accuracy against a per-sentence Python loop on the same ragged data.

Generates GECO-like sentences (10-40 words, ~15 % ground-truth words, a few all-zero attributions), times
``mass_accuracy_per_sentence`` (concatenation + ``np.bincount``) on all of them and the reference loop
``mass_accuracy_loop`` on a subset (extrapolated linearly to all sentences), checks both give the same values
on that subset, and prints a Markdown block for BENCHMARKS.md. Not a test.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from gecobench.metrics.mass_accuracy import (
    mass_accuracy_flat,
    mass_accuracy_loop,
    mass_accuracy_per_sentence,
)


def make_sentences(n_sentences: int, seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Ragged GECO-like attributions and ground-truth masks."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(10, 41, size=n_sentences)
    flat_scores = rng.normal(size=int(lengths.sum()))
    flat_truth = (rng.random(flat_scores.size) < 0.15).astype(np.int8)
    cuts = np.cumsum(lengths)[:-1]
    scores = np.split(flat_scores, cuts)
    truth = np.split(flat_truth, cuts)
    for i in rng.choice(n_sentences, size=max(1, n_sentences // 1000), replace=False):
        scores[i] = np.zeros_like(scores[i])  # constant-explainer sentences exercise the undefined path
    return scores, truth


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-sentences", type=int, default=1_000_000, help="sentences to score (default 1,000,000)")
    parser.add_argument("--loop-subset", type=int, default=100_000,
                        help="sentences the slow loop is timed on, then extrapolated (default 100,000)")
    parser.add_argument("--repeats", type=int, default=3, help="best-of repeats for the vectorised timing")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.n_sentences <= 0 or args.loop_subset <= 0:
        parser.error("--n-sentences and --loop-subset must be positive")
    subset = min(args.loop_subset, args.n_sentences)

    scores, truth = make_sentences(args.n_sentences, args.seed)
    n_words = sum(s.size for s in scores)

    vector_times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        fast = mass_accuracy_per_sentence(scores, truth)
        vector_times.append(time.perf_counter() - start)
    vector_s = min(vector_times)

    flat_scores, flat_truth = np.concatenate(scores), np.concatenate(truth)
    lengths = np.fromiter(map(len, scores), dtype=np.int64, count=len(scores))
    flat_times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        fast_flat = mass_accuracy_flat(flat_scores, flat_truth, lengths)
        flat_times.append(time.perf_counter() - start)
    flat_s = min(flat_times)
    if not np.array_equal(fast, fast_flat, equal_nan=True):
        raise SystemExit("list and flat entry points differ")

    start = time.perf_counter()
    slow = mass_accuracy_loop(scores[:subset], truth[:subset])
    loop_subset_s = time.perf_counter() - start
    loop_s = loop_subset_s * args.n_sentences / subset

    if not np.allclose(fast[:subset], slow, rtol=1e-12, atol=1e-12, equal_nan=True):
        raise SystemExit("vectorised and loop results differ")

    speedup = loop_s / vector_s
    speedup_flat = loop_s / flat_s
    extrapolated = " (extrapolated from the subset)" if subset < args.n_sentences else ""
    print(f"""## Mass Accuracy (bench/bench_mass_accuracy.py)

Machine: {platform.machine()} {platform.processor() or ''} shared 2-core CPU, Python {platform.python_version()},
numpy {np.__version__}; date {time.strftime('%Y-%m-%d', time.gmtime())}.
Data: {args.n_sentences:,} ragged sentences of 10-40 words ({n_words:,} words), seed {args.seed}.

| implementation | time for {args.n_sentences:,} sentences | sentences / s |
|---|---|---|
| vectorised from a list of per-sentence arrays (`mass_accuracy_per_sentence`: validation + concatenation + `np.add.reduceat`), best of {args.repeats} | {vector_s:.2f} s | {args.n_sentences / vector_s:,.0f} |
| vectorised from flat arrays + lengths (`mass_accuracy_flat`, incl. validation), best of {args.repeats} | {flat_s:.2f} s | {args.n_sentences / flat_s:,.0f} |
| per-sentence loop (`mass_accuracy_loop`), timed on {subset:,} sentences{extrapolated} | {loop_s:.1f} s | {args.n_sentences / loop_s:,.0f} |

Speed-up over the loop: **{speedup:.0f}×** from a list of arrays, **{speedup_flat:.0f}×** from flat arrays
(target ≥ 20×). Outputs equal (NaN where undefined) on the {subset:,} looped sentences.
""")


if __name__ == "__main__":
    main()
