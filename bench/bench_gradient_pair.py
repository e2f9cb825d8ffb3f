#!/usr/bin/env python
"""A whole process that explains the first N test sentences with the given built-ins, one after the other, for
timing from outside (``/usr/bin/time -v``, or two checkouts against each other through ``PYTHONPATH``).

    PYTHONPATH=. python bench/bench_gradient_pair.py 32 saliency input_x_gradient

The model is the offline MiniLM with a fresh two-class head (seed 0), two torch threads. Without arguments it runs
that example (``make bench`` calls every bench without arguments).
"""

from __future__ import annotations

import sys
import warnings

warnings.filterwarnings("ignore")


def main(argv: list[str]) -> int:
    import torch
    from _common import first_test_sentences, load_model

    from gecobench.explainers import get_explainer
    from gecobench.explainers.engine import attribute

    argv = argv or ["32", "saliency", "input_x_gradient"]
    if len(argv) < 2:
        raise SystemExit("usage: bench_gradient_pair.py N_SENTENCES EXPLAINER [EXPLAINER ...]")
    torch.set_num_threads(2)
    model, tokenizer = load_model(None)
    words, targets, _ = first_test_sentences("binary_all", int(argv[0]))
    for name in argv[1:]:
        attribute(get_explainer(name), model, tokenizer, words, targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
