"""Speed *and* Mass Accuracy of explainers on a trained classifier: what each setting costs and what it buys.

For every explainer spec (``name:key=value,...``, as on the evaluation command line) on the first ``--n-sentences``
sentences of a GECO test split, with the true label as target (the evaluation's default):

* ``sent/s``: sentences per second of ``gecobench.explainers.engine.attribute_detailed`` (best of ``--repeats``;
  process CPU time by default, fair when other jobs share the cores);
* ``MA``: mean Mass Accuracy over the sentences (``gecobench.metrics.mass_accuracy``);
* the explainer's diagnostics where it reports them (Integrated Gradients: mean steps per sentence and the largest
  completeness error; Gradient SHAP, LIME, Kernel SHAP: the median split-half agreement; Partition SHAP: mean
  model outputs per sentence and mean ``spread_share``);
* with ``--against SPEC``: how far each setting's word scores are from that setting's (an approximation against
  its exact version): the median over sentences of the relative L1 distance ``sum |a - b| / sum |b|`` of the
  absolute scores, and the mean share of the top-k words that agree (k = the sentence's ground-truth words).

Example (a zoo checkpoint folder; the reference runs of the integrator live under ``runs/reference/zoo``)::

    python bench/bench_explainer_accuracy.py --model runs/reference/zoo/binary_all/OLA/seed0 --n-sentences 32 \\
        --explainers integrated_gradients integrated_gradients:n_steps=50 partition_shap kernel_shap
    python bench/bench_explainer_accuracy.py --model runs/reference/zoo/binary_all/CEfAf/seed0 --n-sentences 64 \
        --explainers partition_shap:coalitions_per_word=3 partition_shap partition_shap:coalitions_per_word=null \
        --against partition_shap:coalitions_per_word=null
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _common import REPO_ROOT, use_this_checkout

use_this_checkout()

import numpy as np
import torch

from gecobench.evaluation.runner import ExplainerSpec
from gecobench.explainers import get_explainer
from gecobench.explainers.engine import attribute_detailed
from gecobench.metrics.mass_accuracy import mass_accuracy_per_sentence
from gecobench.models.loading import load_zoo_model
from gecobench.provenance import base_provenance, machine_description

DEFAULT_EXPLAINERS = [
    "saliency", "input_x_gradient", "integrated_gradients", "integrated_gradients:n_steps=16",
    "integrated_gradients:n_steps=50", "integrated_gradients:n_steps=200", "gradient_shap", "lime",
    "kernel_shap", "kernel_shap:n_samples=500", "partition_shap",
]


def load_rows(path: Path, n: int) -> tuple[list[list[str]], list[list[int]], list[int]]:
    """The first ``n`` rows of a GECO jsonl split: words, ground truth, target class."""
    words, truth, targets = [], [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            words.append(row["sentence"])
            truth.append(row["ground_truth"])
            targets.append(int(row["target"]))
            if len(words) == n:
                break
    return words, truth, targets


def clock(name: str) -> float:
    return time.process_time() if name == "cpu" else time.perf_counter()


def distance_to(scores: list[np.ndarray], reference: list[np.ndarray], truth: list[list[int]]) -> dict[str, float]:
    """Median relative L1 distance of the absolute scores to ``reference``'s, and the mean top-k agreement."""
    distances, overlaps = [], []
    for a, b, gt in zip(scores, reference, truth):
        a, b = np.abs(np.asarray(a, dtype=float)), np.abs(np.asarray(b, dtype=float))
        if b.sum() > 0:
            distances.append(float(np.abs(a - b).sum() / b.sum()))
        k = int(np.sum(gt))
        if k:
            overlaps.append(len(set(np.argsort(-a, kind="stable")[:k]) & set(np.argsort(-b, kind="stable")[:k])) / k)
    return {"median_relative_l1": float(np.median(distances)), "top_k_agreement": float(np.mean(overlaps))}


def bench_spec(spec: ExplainerSpec, model, tokenizer, words, truth, targets, repeats: int, clock_name: str) -> tuple[dict, list]:
    """Speed, MA and diagnostics of one explainer setting, and its word scores."""
    attribute_detailed(get_explainer(spec.name, **spec.params), model, tokenizer, words[:2], targets[:2])  # warm-up
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        explainer = get_explainer(spec.name, **spec.params)
        start = clock(clock_name)
        result = attribute_detailed(explainer, model, tokenizer, words, targets)
        best = min(best, clock(clock_name) - start)
    per_sentence = mass_accuracy_per_sentence(result.scores, truth)
    row = {"explainer": spec.name, "params": spec.params, "n": len(words), "sentences_per_second": len(words) / best,
           "mass_accuracy": float(np.nanmean(per_sentence)), "n_undefined": int(np.isnan(per_sentence).sum())}
    diagnostics = result.diagnostics
    if "n_steps" in diagnostics:
        row["mean_steps"] = float(diagnostics["n_steps"].mean())
    if "completeness_error" in diagnostics:
        row["max_completeness_error"] = float(diagnostics["completeness_error"].max())
    if "split_half_agreement" in diagnostics and np.isfinite(diagnostics["split_half_agreement"]).any():
        row["median_split_half_agreement"] = float(np.nanmedian(diagnostics["split_half_agreement"]))
    if "n_coalitions" in diagnostics:
        row["mean_outputs"] = float(diagnostics["n_coalitions"].mean())
        row["mean_spread_share"] = float(diagnostics["spread_share"].mean())
    return row, result.scores


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="zoo checkpoint folder (gecobench_model.json + weights)")
    parser.add_argument("--data", type=Path,
                        default=REPO_ROOT.parent / "shared" / "data" / "geco" / "binary_gender_all" / "test.jsonl")
    parser.add_argument("--n-sentences", type=int, default=64)
    parser.add_argument("--explainers", nargs="+", default=DEFAULT_EXPLAINERS, help="specs name:key=value,...")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: the machine is shared)")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--against", default=None, metavar="SPEC",
                        help="compare every setting's word scores with this setting's (run once more if not listed)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    model, tokenizer, info = load_zoo_model(args.model)
    words, truth, targets = load_rows(args.data, args.n_sentences)
    results, scores = [], {}
    for text in args.explainers:
        row, scores[text] = bench_spec(ExplainerSpec.parse(text), model, tokenizer, words, truth, targets,
                                       args.repeats, args.clock)
        row["spec"] = text
        results.append(row)
        print(json.dumps(row), flush=True)
    if args.against:
        if args.against not in scores:
            _, scores[args.against] = bench_spec(ExplainerSpec.parse(args.against), model, tokenizer, words, truth,
                                                 targets, 1, args.clock)
        for row in results:
            row.update(distance_to(scores[row["spec"]], scores[args.against], truth))
    print(f"\nmodel: {info.get('regime')} {info.get('base_model')} ({args.model}), clock: {args.clock}, "
          f"threads: {args.threads}, n: {len(words)}")
    against = f" | L1 to {args.against} (median) | top-k as {args.against}" if args.against else ""
    print("| explainer | sent/s | MA | mean IG steps | max completeness error | median split-half agreement | "
          f"outputs / sentence | spread share{against} |\n|---|---|---|---|---|---|---|---|" + ("---|---|" if against else ""))

    def cell(row: dict, key: str, spec: str) -> str:
        return format(row[key], spec) if key in row else "–"

    for r in results:
        extra = f" | {cell(r, 'median_relative_l1', '.3f')} | {cell(r, 'top_k_agreement', '.3f')}" if against else ""
        print(f"| {r['spec']} | {r['sentences_per_second']:.2f} | {r['mass_accuracy']:.3f} | {cell(r, 'mean_steps', '.1f')} "
              f"| {cell(r, 'max_completeness_error', '.2g')} | {cell(r, 'median_split_half_agreement', '.2f')} "
              f"| {cell(r, 'mean_outputs', '.1f')} | {cell(r, 'mean_spread_share', '.3f')}{extra} |")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "args": {k: str(v) for k, v in vars(args).items()},
                                         "machine": machine_description(), "provenance": base_provenance(0)}, indent=2))


if __name__ == "__main__":
    main()
