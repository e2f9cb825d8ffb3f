#!/usr/bin/env python
"""Sampling explainers with an accuracy target against fixed budgets: MA, samples per sentence, stability, time.

For each spec (default: LIME, Kernel SHAP and Partition SHAP at their adaptive defaults, at tighter and looser
tolerances, and at fixed budgets) the first N test sentences of a config are explained for their true label on
one checkpoint; a row prints Mass Accuracy, the mean and max samples (model outputs) per sentence, the median
split-half error (LIME, Kernel SHAP) or unresolved share (Partition SHAP), and process CPU seconds per sentence
(CPU time: robust to other jobs sharing the cores, indicative only under load).

    python bench/bench_adaptive_samplers.py --model runs/reference/zoo/binary_all/CE/seed0 --n-sentences 24
"""

from __future__ import annotations

import argparse
import time

from _common import add_model_arguments, use_this_checkout

use_this_checkout()

import numpy as np

DEFAULT_SPECS = [
    "lime:n_samples=100", "lime", "lime:tolerance=0.1", "lime:n_samples=1000",
    "kernel_shap:n_samples=25", "kernel_shap", "kernel_shap:tolerance=0.1", "kernel_shap:n_samples=500",
    "partition_shap:coalitions_per_word=4", "partition_shap", "partition_shap:tolerance=0.02",
    "partition_shap:coalitions_per_word=null",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser, n_sentences=24, threads=2)
    parser.add_argument("--specs", nargs="*", default=DEFAULT_SPECS)
    args = parser.parse_args()

    from _common import load_bench_inputs
    from bench_vs_ferret import mass_accuracy

    from gecobench.evaluation.runner import ExplainerSpec
    from gecobench.explainers import get_explainer
    from gecobench.explainers.engine import attribute_detailed

    inputs = load_bench_inputs(args.model, args.config, args.n_sentences, args.data_dir, args.threads)
    print(f"{len(inputs.words)} sentences of {args.config} test, model {args.model}, {args.threads} thread(s)")
    print(f"{'spec':<42} {'MA':>6} {'samples mean':>12} {'max':>5} {'stability median':>16} {'CPU-s/sent':>10}")
    for text in args.specs:
        spec = ExplainerSpec.parse(text)
        explainer = get_explainer(spec.name, **spec.params)
        attribute_detailed(explainer, inputs.model, inputs.tokenizer, inputs.words[:1], inputs.targets[:1])
        start = time.process_time()
        result = attribute_detailed(explainer, inputs.model, inputs.tokenizer, inputs.words, inputs.targets)
        seconds = time.process_time() - start
        diagnostics = result.diagnostics
        used = diagnostics.get("n_samples", diagnostics.get("n_coalitions"))
        stability = diagnostics.get("split_half_error", diagnostics.get("spread_share"))
        print(f"{text:<42} {mass_accuracy(result.scores, inputs.truth):>6.3f} {np.mean(used):>12.1f} "
              f"{np.max(used):>5.0f} {np.nanmedian(stability):>16.3f} {seconds / len(inputs.words):>10.3f}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
