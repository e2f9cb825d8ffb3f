#!/usr/bin/env python
"""What each of the property metrics' passes costs, beside the explainer's own pass, per explainer.

On a chunk the property metrics cover, the evaluation runs every explainer again on the model's randomised copy
(MRC), on its noisy copy (SNC) and for each class other than the label (LD: one on a binary model, two on a
three-class one), as :func:`gecobench.evaluation.attribution.explain_chunk` does: the same seed for every pass,
an explainer's ``outputs_reused`` block (Partition SHAP) around all of them. This bench times those passes one by
one (process CPU seconds, one call each on the first N test sentences) and prints them per explainer with their
sum, so the share of the properties in a grid unit can be read per pass: what sharing work between passes could
save at most, and where nothing is shared (the copies are other models; LIME's and Kernel SHAP's samples are drawn
per sentence *and target*, so an LD pass draws samples of its own).

    python bench/bench_property_passes.py --model runs/reference/zoo/nonbinary_all/CEfAf/seed4 --config nonbinary_all \\
        --n-sentences 24 --threads 1
    python bench/bench_property_passes.py --n-sentences 8      # the offline MiniLM with a fresh two-class head
"""

from __future__ import annotations

import argparse
import contextlib
import time

from _common import add_model_arguments, first_test_sentences, load_model, use_this_checkout

use_this_checkout()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser, n_sentences=24, threads=1, model_required=False)
    parser.add_argument("--explainers", nargs="*", default=None,
                        help="explainer specs (default: the reference grid's eleven)")
    args = parser.parse_args(argv)

    import torch

    from gecobench.evaluation.attribution import attribute_words
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.modelling import PerturbedCopies, other_targets
    from gecobench.evaluation.settings import EvaluationSettings, parse_specs
    from gecobench.explainers.base import fit_explainers, get_explainer
    from gecobench.reference import REFERENCE_EXPLAINERS

    torch.set_num_threads(args.threads)
    model, tokenizer = load_model(args.model)
    words, targets, _ = first_test_sentences(args.config, args.n_sentences, args.data_dir)
    num_labels = int(model.config.num_labels)
    settings = EvaluationSettings()
    copies = PerturbedCopies(model, settings.noise_std, settings.randomisation_seed)
    others = [other_targets(t, num_labels) for t in targets]
    # (reading the copies builds them, once, before any pass is timed: the runner builds them once per model)
    passes = [("explain", model, targets), ("randomised", copies.randomised, targets), ("noisy", copies.noisy, targets),
              *((f"other class {k + 1}", model, [o[k] for o in others]) for k in range(num_labels - 1))]

    texts = args.explainers or list(REFERENCE_EXPLAINERS)
    explainers = [get_explainer(spec.name, **spec.params) for spec in parse_specs(texts)]
    fit_explainers(explainers, explained=lambda: load_split(args.config, "test", args.data_dir).rows,
                   train=lambda: load_split(args.config, "train", args.data_dir).rows)
    print(f"{len(words)} sentences of {args.config} test; model {args.model or 'offline MiniLM, fresh head'} ({num_labels} classes); "
          f"{args.threads} thread(s); torch {torch.__version__}; process CPU seconds, one call per pass")
    header = [name for name, _, _ in passes]
    print("\n| explainer | " + " | ".join(header) + " | properties / explain |")
    print("|---|" + "---|" * (len(header) + 1))
    totals = [0.0] * len(passes)
    # in the evaluation's order and with its gradient memo: Input×Gradient and Guided Backprop read Saliency's
    # gradients of each pass, as they do in a grid unit
    for text, explainer in zip(texts, explainers):
        reuse = getattr(explainer, "outputs_reused", None)
        seconds = []
        with reuse() if callable(reuse) else contextlib.nullcontext():
            for _, pass_model, pass_targets in passes:
                start = time.process_time()
                attribute_words(explainer, pass_model, tokenizer, words, pass_targets,
                                batch_size=settings.batch_size, seed=7)
                seconds.append(time.process_time() - start)
        totals = [a + b for a, b in zip(totals, seconds)]
        ratio = sum(seconds[1:]) / seconds[0] if seconds[0] > 0 else float("nan")
        print(f"| {text} | " + " | ".join(f"{s:.2f}" for s in seconds) + f" | {ratio:.2f} |")
    print("| **all** | " + " | ".join(f"**{s:.2f}**" for s in totals)
          + f" | **{sum(totals[1:]) / totals[0]:.2f}** |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
