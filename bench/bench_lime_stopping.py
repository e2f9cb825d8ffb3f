#!/usr/bin/env python
"""LIME's stopping rule replayed offline: how well each setting of the accuracy target spends its samples.

Each of the first N test sentences is drawn once to ``--max-samples`` paired samples (the explainer's own stream,
``sentence_seed`` of the run seed, so a prefix of ``n`` rows is exactly the draw of ``n_samples=n``) and the
model's outputs on all of them are computed once. Every setting is then replayed on prefixes of that draw, as
``LimeExplainer.explain`` runs its rounds (first round ``max(min_samples, per_word × words)``, growth to the
projected need until the split-half error is within the tolerance), without calling the model again. Printed:
Mass Accuracy at fixed counts (the curve an even spread of samples gives), then for each setting its mean samples
per sentence and MA, with the fixed-count MA at the same mean for comparison: a rule that spends its samples
well sits on or above that curve. With ``--ferret-ma`` the MA difference to ferret's LIME on the same sentences
(``bench/bench_vs_ferret.py`` prints it) is printed too. This is how LIME 6.0.0's defaults were chosen
(BENCHMARKS.md, "LIME 6.0.0").

    python bench/bench_lime_stopping.py --model runs/reference/zoo/nonbinary_all/CEfAf/seed4 --config nonbinary_all \\
        --n-sentences 32 --per-word 0 14 16 18 20 --tolerance 0.175 0.2 0.22 0.25 --ferret-ma 0.675
"""

from __future__ import annotations

import argparse
import time

from _common import add_model_arguments, use_this_checkout

use_this_checkout()

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser, n_sentences=32, threads=1)
    parser.add_argument("--max-samples", type=int, default=1024, help="samples drawn per sentence (the cap)")
    parser.add_argument("--removal", default="delete", choices=["delete", "mask_tokens"])
    parser.add_argument("--per-word", type=int, nargs="+", default=[0, 14, 16, 18, 20],
                        help="min_samples_per_word values to replay")
    parser.add_argument("--tolerance", type=float, nargs="+", default=[0.175, 0.2, 0.22, 0.25])
    parser.add_argument("--fixed", type=int, nargs="+", default=[200, 300, 400, 500, 600, 800, 1024],
                        help="fixed counts for the even-spread curve")
    parser.add_argument("--ferret-ma", type=float, default=None, help="ferret's LIME MA on the same sentences")
    args = parser.parse_args()

    from _common import load_bench_inputs

    from gecobench.explainers import get_explainer
    from gecobench.explainers.inputs import encode_batch, model_device, sentence_seed
    from gecobench.metrics.mass_accuracy import mass_accuracy_per_sentence

    inputs = load_bench_inputs(args.model, args.config, args.n_sentences, args.data_dir, args.threads)
    words, targets, truth = inputs.words, inputs.targets, inputs.truth
    lime = get_explainer("lime", removal=args.removal)  # the accuracy target's draw: paired samples
    lime.set_seed(0)
    batch = encode_batch(inputs.tokenizer, words, model_device(inputs.model))
    rows = {i: lime.sample_masks(batch.n_words[i], np.random.default_rng(sentence_seed(0, words[i], targets[i])),
                                 args.max_samples) for i in range(len(words))}
    start = time.process_time()
    outputs = lime.cached_outputs(inputs.model, inputs.tokenizer, batch, rows, {})
    print(f"{len(words)} sentences of {args.config} test, model {args.model}, removal {args.removal}: "
          f"{args.max_samples} samples each in {time.process_time() - start:.0f} CPU-s")

    memo: dict[tuple[int, int], tuple[float, float]] = {}

    def at(i: int, n: int) -> tuple[float, float]:
        """(MA, split-half error) of sentence i fitted on its first n samples, by the explainer's own round."""
        if (i, n) not in memo:
            scores, _, error = lime.fit_sentence(rows[i][:n], outputs[i][:n, int(targets[i])])
            memo[(i, n)] = (float(mass_accuracy_per_sentence([scores], [truth[i]])[0]), error)
        return memo[(i, n)]

    def replay(per_word: int, tolerance: float) -> tuple[float, float]:
        """Mean samples and MA of the rounds LimeExplainer.explain runs with this floor and tolerance."""
        rule = get_explainer("lime", removal=args.removal, min_samples_per_word=per_word, tolerance=tolerance,
                             max_samples=args.max_samples)
        used, mas, errors = [], [], np.full(len(words), np.nan)
        for i, n in enumerate(rule.first_counts(batch.n_words)):
            counts, pending = {i: n}, [i]
            while pending:
                ma, errors[i] = at(i, counts[i])
                pending = rule.next_round(pending, counts, errors, batch.n_words)
            used.append(counts[i])
            mas.append(ma)
        return float(np.mean(used)), float(np.nanmean(mas))

    curve = [(n, float(np.nanmean([at(i, n)[0] for i in range(len(words))]))) for n in args.fixed
             if n <= args.max_samples]
    print("fixed count (an even spread):  " + "  ".join(f"{n}: {ma:.3f}" for n, ma in curve))
    counts, values = np.array([c for c, _ in curve], float), np.array([v for _, v in curve])
    print(f"{'per word':>8} {'tolerance':>9} {'samples':>8} {'MA':>6} {'fixed at same':>13} {'vs ferret':>9}")
    for per_word in args.per_word:
        for tolerance in args.tolerance:
            samples, ma = replay(per_word, tolerance)
            even = float(np.interp(samples, counts, values))
            ferret = f"{ma - args.ferret_ma:+.3f}" if args.ferret_ma is not None else ""
            print(f"{per_word:>8} {tolerance:>9.3f} {samples:>8.0f} {ma:>6.3f} {even:>13.3f} {ferret:>9}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
