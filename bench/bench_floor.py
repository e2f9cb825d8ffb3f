#!/usr/bin/env python
"""Gradient explainers against the machine's floor: a plain-torch batched forward+backward, and the matmul peak.

Three figures per gradient method, on the first N test sentences of a config (true label as target):

* **seconds per sentence** of ``gecobench.explainers.engine.attribute`` at the method's defaults (best of
  ``--repeats`` runs, wall clock in this process, ``--threads`` torch threads);
* **× floor**: that time over the *plain-torch floor*, the least a gradient method must do: the sentences sorted
  by length and cut into batches of about ``--tokens`` positions, each batch one forward pass from the embedding
  output (``inputs_embeds`` of the word, position and token-type sum after the embedding LayerNorm is not
  reproduced; the floor starts at the word embeddings, which costs the same matrix products) and one
  ``autograd.grad`` of the target logits to the input, parameters frozen. No hooks, no Captum, no folding to words;
* **% of peak**: the method's achieved GFLOP/s over the measured peak, the GFLOP/s of a large float32 matmul
  (``--matmul-size``) on these threads. A sentence's FLOPs are counted from the model's shapes: per encoder layer
  ``8 T H^2`` (Q, K, V and output projections) ``+ 4 T H I`` (feed-forward) ``+ 4 T^2 H`` (scores and the
  weighted sum), ``T`` its token count, ``H`` hidden size, ``I`` intermediate size; a gradient with respect to
  the input only (parameters frozen) costs about one more forward's matrix products, so a forward+backward counts
  ``2 x`` forward (the floor's own % of peak uses the same count). Methods that run several model inputs per
  sentence (IG's steps, DeepLift's reference, Gradient SHAP's samples) are charged the forward+backward FLOPs of
  one input, so their % of peak says how far they are from a one-pass method, not how busy the cores were.

``--layer-shapes`` also prints the GFLOP/s of one float32 ``linear`` (with bias) at the encoder's own shapes, ``hidden ->
hidden``, ``hidden -> intermediate`` and ``intermediate -> hidden`` for ``--rows`` token rows each (the explainers'
passes hold from a few dozen to a few thousand token positions): whether the matrix products of the evaluation run
at the square matmul's rate, or lose it to their narrow shapes.

``--compile`` also times the floor under ``torch.compile`` (dynamic shapes; its compile time is reported
separately and left out of the per-sentence figure).

Example (a couple of minutes on the offline MiniLM with a fresh two-class head, 64 sentences, both cores):

    python bench/bench_floor.py --n-sentences 64 --threads 2
    python bench/bench_floor.py --model runs/reference/zoo/binary_all/CE/seed0 --methods saliency input_x_gradient
    python bench/bench_floor.py --threads 1 --methods --layer-shapes      # the layer shapes' rate only
"""

from __future__ import annotations

import argparse
import time

from _common import add_model_arguments, first_test_sentences, load_model, use_this_checkout

use_this_checkout()

GRADIENT_METHODS = ["saliency", "input_x_gradient", "guided_backprop", "deeplift", "integrated_gradients",
                    "gradient_shap"]


def matmul_peak_gflops(size: int, repeats: int = 5) -> float:
    """Best GFLOP/s of a ``size x size`` float32 matmul (``2 size^3`` FLOPs) on the current torch threads."""
    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    return 2 * size**3 / best_seconds(lambda: torch.mm(a, b), repeats) / 1e9


def linear_gflops(rows: int, n_in: int, n_out: int, seconds: float = 0.5) -> float:
    """Best GFLOP/s of ``linear`` on ``(rows, n_in)`` float32 inputs with an ``(n_out, n_in)`` weight and a bias,
    timed over about ``seconds``, on the current torch threads."""
    import torch

    inputs, weight, bias = torch.randn(rows, n_in), torch.randn(n_out, n_in), torch.randn(n_out)
    repeats = max(3, int(seconds * 50e9 / (2 * rows * n_in * n_out)))
    return 2 * rows * n_in * n_out / best_seconds(lambda: torch.nn.functional.linear(inputs, weight, bias), repeats) / 1e9


def forward_flops(config, n_tokens: int) -> float:
    """Matrix-product FLOPs of one encoder forward pass over ``n_tokens`` tokens (see the module docstring)."""
    h, i, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    return layers * (8 * n_tokens * h * h + 4 * n_tokens * h * i + 4 * n_tokens * n_tokens * h)


def floor_batches(tokenizer, words, targets, tokens_per_batch: int):
    """The floor's padded batches: sentences sorted by length, cut at about ``tokens_per_batch`` positions."""
    import torch

    from gecobench.explainers.engine import plan_batches, token_lengths
    from gecobench.words import tokenize_words

    batches = []
    for members in plan_batches(token_lengths(tokenizer, words), None, tokens_per_batch):
        encoding, _ = tokenize_words(tokenizer, [words[i] for i in members], padding=True, return_tensors="pt")
        batches.append((encoding["input_ids"], encoding["attention_mask"],
                        torch.as_tensor([targets[i] for i in members])))
    return batches


def floor_pass(model, batches, forward=None) -> None:
    """One forward+backward per batch, gradient to the (word-)embedding input only."""
    import torch

    embeddings = model.get_input_embeddings()
    run = forward or (lambda embeds, mask: model(inputs_embeds=embeds, attention_mask=mask).logits)
    for ids, mask, target in batches:
        with torch.no_grad():
            embeds = embeddings(ids)
        embeds.requires_grad_(True)
        logits = run(embeds, mask)
        torch.autograd.grad(logits.gather(1, target[:, None]).sum(), embeds)


def best_seconds(function, repeats: int) -> float:
    function()  # warm-up: first calls of a shape allocate
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser, n_sentences=64, threads=2, model_required=False)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=None,
                        help="token positions per floor batch (default: the engine's default budget)")
    parser.add_argument("--matmul-size", type=int, default=2048)
    parser.add_argument("--methods", nargs="*", default=GRADIENT_METHODS)
    parser.add_argument("--compile", action="store_true", help="also time the floor under torch.compile")
    parser.add_argument("--layer-shapes", action="store_true",
                        help="also print linear's GFLOP/s at the encoder's layer shapes for each of --rows")
    parser.add_argument("--rows", type=int, nargs="*", default=[32, 64, 128, 256, 512, 1024, 2048, 4096],
                        help="token rows of the --layer-shapes products")
    args = parser.parse_args(argv)

    import numpy as np
    import torch

    from gecobench.explainers import get_explainer
    from gecobench.explainers.builtin import DEFAULT_TOKENS_PER_FORWARD, INPUT_GRADIENTS
    from gecobench.explainers.engine import attribute, token_lengths
    from gecobench.explainers.inputs import parameters_frozen

    torch.set_num_threads(args.threads)
    model, tokenizer = load_model(args.model)
    words, targets, _ = first_test_sentences(args.config, args.n_sentences, args.data_dir)
    n = len(words)
    lengths = token_lengths(tokenizer, words)
    flops_forward = float(np.mean([forward_flops(model.config, t) for t in lengths]))
    peak = matmul_peak_gflops(args.matmul_size)
    tokens = args.tokens or DEFAULT_TOKENS_PER_FORWARD
    batches = floor_batches(tokenizer, words, targets, tokens)
    print(f"{n} sentences of {args.config} test ({np.mean(lengths):.1f} tokens on average); model "
          f"{args.model or 'offline MiniLM, fresh head'}; {args.threads} thread(s); torch {torch.__version__}")
    print(f"matmul peak ({args.matmul_size}^2 float32): {peak:.1f} GFLOP/s; forward {flops_forward / 1e9:.3f} GFLOP "
          f"per sentence, forward+backward counted 2x")

    with parameters_frozen(model):
        floor = best_seconds(lambda: floor_pass(model, batches), args.repeats) / n
    rows_out = [("floor: plain torch fwd+bwd", floor)]
    if args.compile:
        compiled = torch.compile(lambda embeds, mask: model(inputs_embeds=embeds, attention_mask=mask).logits,
                                 dynamic=True)
        with parameters_frozen(model):
            start = time.perf_counter()
            floor_pass(model, batches, compiled)  # compiles (shapes vary: dynamic)
            compile_seconds = time.perf_counter() - start
            rows_out.append(("floor under torch.compile", best_seconds(lambda: floor_pass(model, batches, compiled),
                                                                       args.repeats) / n))
        print(f"torch.compile: first pass (compilation included) {compile_seconds:.1f} s")
    def explain(explainer) -> None:
        INPUT_GRADIENTS.clear()  # each method pays its own gradient (an evaluation shares Saliency's with I×G)
        attribute(explainer, model, tokenizer, words, targets)

    for name in args.methods:
        explainer = get_explainer(name)
        rows_out.append((name, best_seconds(lambda explainer=explainer: explain(explainer), args.repeats) / n))
    if {"saliency", "input_x_gradient"} <= set(args.methods):
        pair = [get_explainer("saliency"), get_explainer("input_x_gradient")]

        def both() -> None:
            INPUT_GRADIENTS.clear()
            for explainer in pair:
                attribute(explainer, model, tokenizer, words, targets)

        rows_out.append(("saliency + input_x_gradient (shared gradient)", best_seconds(both, args.repeats) / n))

    print("\n| method | ms/sentence | x floor | GFLOP/s | % of matmul peak |\n|---|---|---|---|---|")
    for name, seconds in rows_out:
        gflops = 2 * flops_forward / seconds / 1e9
        print(f"| {name} | {seconds * 1e3:.2f} | {seconds / floor:.2f} | {gflops:.1f} | {100 * gflops / peak:.0f} % |")
    if args.layer_shapes:
        h, i = model.config.hidden_size, model.config.intermediate_size
        shapes = [(h, h), (h, i), (i, h)]
        print("\n| token rows | " + " | ".join(f"{a} -> {b} GFLOP/s (% of peak)" for a, b in shapes) + " |")
        print("|---|" + "---|" * len(shapes))
        for rows in args.rows:
            rates = [linear_gflops(rows, a, b) for a, b in shapes]
            print(f"| {rows} | " + " | ".join(f"{r:.1f} ({100 * r / peak:.0f} %)" for r in rates) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
