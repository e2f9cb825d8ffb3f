#!/usr/bin/env python
"""Integrated Gradients' quadrature rules replayed on one set of gradients: nodes per sentence against accuracy.

The per-token IG contributions ``(x - b) . grad f(b + alpha (x - b))`` of every sentence are computed once at all
``finest + 1`` nodes of the Clenshaw–Curtis grid (``alpha = (1 - cos theta) / 2``, theta uniform), then each rule
is replayed on them at the completeness tolerances given, without another forward pass:

* the nested Clenshaw–Curtis levels (IG 3.0.0, ``method="clenshaw_curtis"``), from ``4`` intervals doubled;
* the locally adaptive Simpson rule (IG 4.0.0's default, :class:`gecobench.explainers.quadrature.AdaptiveSimpson`),
  from 8 steps, halving one panel per round.

For each: nodes per sentence (interior nodes for Simpson, whose path ends weigh nothing; all nodes for the nested
rule), the largest completeness error, the per-token error (L1 distance to the integral on all nodes, over the
attributions' L1 mass) and Mass Accuracy. Example (about 4 CPU-minutes for 64 sentences):

    python bench/bench_ig_rules.py --model runs/reference/zoo/binary_all/CEfAf/seed0 --n-sentences 64
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch


def grid_contributions(model, tokenizer, words, targets, finest: int) -> list[dict]:
    """Per sentence (input order): ``contributions`` ``(finest + 1, tokens)`` and ``difference`` f(x) - f(b)."""
    from gecobench.explainers.builtin import IntegratedGradientsExplainer
    from gecobench.explainers.engine import attribute

    captured: dict[tuple[int, ...], dict] = {}

    class EveryNode(IntegratedGradientsExplainer):
        # the nested rule's own gradient routine, asked for every node of the finest grid at once
        def _attribute_nested(self, forward, batch, inputs, baselines, target):
            n = inputs.shape[0]
            contributions: list[dict] = [{} for _ in range(n)]
            ends = np.zeros((n, 2))
            rows = [(i, j) for i in range(n) for j in range(finest + 1)]
            self._gradients_at_nodes(forward, batch, inputs, baselines, target, rows, finest, contributions, ends)
            for i in range(n):
                key = tuple(batch.input_ids[i][: batch.lengths[i]].tolist())
                captured[key] = {"contributions": torch.stack([contributions[i][j] for j in range(finest + 1)]).numpy(),
                                 "difference": ends[i, 1] - ends[i, 0]}
            self.last_diagnostics = {}
            return torch.zeros(inputs.shape[:2] + (1,), dtype=torch.float64)

    attribute(EveryNode(method="clenshaw_curtis", min_steps=finest, max_steps=finest), model, tokenizer, words,
              targets, progress=True)
    from gecobench.words import tokenize_words

    encoding, _ = tokenize_words(tokenizer, words, padding=False, return_tensors=None)
    return [captured[tuple(ids)] for ids in encoding["input_ids"]]


def nested(contributions: np.ndarray, difference: float, tolerance: float, finest: int) -> tuple[np.ndarray, int]:
    from gecobench.explainers.builtin import completeness_error
    from gecobench.explainers.quadrature import clenshaw_curtis_weights

    level = 4
    while True:
        estimate = clenshaw_curtis_weights(level) @ contributions[:: finest // level]
        error = completeness_error(np.array([estimate.sum() - difference]), np.array([difference]), torch.float32)
        if error[0] <= tolerance or level == finest:
            return estimate, level + 1
        level *= 2


def simpson(contributions: np.ndarray, difference: float, tolerance: float, finest: int) -> tuple[np.ndarray, int]:
    from gecobench.explainers.builtin import completeness_error
    from gecobench.explainers.quadrature import AdaptiveSimpson

    rule = AdaptiveSimpson(finest, 8, contributions.shape[1])
    for j in rule.initial_nodes():
        rule.add(j, contributions[j])
    rule.start()
    while True:
        estimate = rule.estimate()
        error = completeness_error(np.array([estimate.sum() - difference]), np.array([difference]), torch.float32)
        new = rule.next_nodes() if error[0] > tolerance else []
        if not new:
            return estimate, rule.n_nodes
        for j in new:
            rule.add(j, contributions[j])
        rule.refine()


def main() -> int:
    from _common import add_model_arguments, load_bench_inputs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser, n_sentences=64, threads=1)
    parser.add_argument("--finest", type=int, default=256, help="intervals of the grid every rule is replayed on")
    parser.add_argument("--tolerances", type=float, nargs="+", default=[0.01, 0.02, 0.05])
    args = parser.parse_args()

    from gecobench.explainers.quadrature import clenshaw_curtis_weights
    from gecobench.metrics.mass_accuracy import mass_accuracy_per_sentence
    from gecobench.words import fold_token_scores_to_words, tokenize_words

    inputs = load_bench_inputs(args.model, args.config, args.n_sentences, args.data_dir, args.threads)
    model, tokenizer, words, targets, truth = inputs.model, inputs.tokenizer, inputs.words, inputs.targets, inputs.truth
    _, word_ids = tokenize_words(tokenizer, words, padding=False, return_tensors=None)
    sentences = grid_contributions(model, tokenizer, words, targets, args.finest)
    full = [clenshaw_curtis_weights(args.finest) @ s["contributions"] for s in sentences]

    def mass_accuracy(token_scores: list[np.ndarray]) -> float:
        folded = [fold_token_scores_to_words(t, word_ids[i], len(words[i])) for i, t in enumerate(token_scores)]
        return float(np.mean(mass_accuracy_per_sentence(folded, truth)))

    print(f"{len(words)} sentences; all {args.finest + 1} nodes: MA {mass_accuracy(full):.4f}")
    print(f"{'rule':28s} {'tol':>5s} {'nodes/sent':>10s} {'max err':>8s} {'token err':>9s} {'MA':>7s}")
    for tolerance in args.tolerances:
        for name, rule in (("nested Clenshaw-Curtis", nested), ("adaptive Simpson (interior)", simpson)):
            results = [rule(s["contributions"], s["difference"], tolerance, args.finest) for s in sentences]
            estimates = [e for e, _ in results]
            errors = [abs(e.sum() - s["difference"]) / max(abs(s["difference"]), 3e-4) for e, s in zip(estimates, sentences)]
            token_error = np.mean([np.abs(e - f).sum() / np.abs(f).sum() for e, f in zip(estimates, full)])
            print(f"{name:28s} {tolerance:5.2f} {np.mean([n for _, n in results]):10.2f} {max(errors):8.4f} "
                  f"{token_error:9.4f} {mass_accuracy(estimates):7.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
