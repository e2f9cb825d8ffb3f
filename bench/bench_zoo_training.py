#!/usr/bin/env python
"""Training speed of the zoo regimes: seconds per optimisation step (batch 32, max length 64, 1 thread).

Measures forward + backward + AdamW on real GECO batches for OLA and the base regimes, and extrapolates one
epoch of binary_all (2,318 training rows after the validation hold-out). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--regimes", nargs="+", default=["OLA", "C", "CE", "CEf", "CEfAf"])
    parser.add_argument("--steps", type=int, default=5, help="timed steps per regime (after one warm-up step)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    import torch

    from gecobench.models.base_models import default_base_model, load_tokenizer
    from gecobench.models.data import WordsCollator, load_rows
    from gecobench.models.training import DEFAULT_LR, _build_model, make_schedule

    torch.set_num_threads(args.threads)
    base = default_base_model()
    tokenizer = load_tokenizer(base)
    rows = load_rows("binary_all", "train")
    collate = WordsCollator(tokenizer, args.max_length)
    batches = [collate(rows[i * args.batch_size:(i + 1) * args.batch_size]) for i in range(args.steps + 1)]
    schedule = make_schedule("demo", max_length=args.max_length, batch_size=args.batch_size)
    steps_per_epoch = -(-2318 // args.batch_size)
    print(f"base: {base}\n\n| regime | s/step | est. s/epoch (binary_all) |\n|---|---|---|")
    for regime in args.regimes:
        torch.manual_seed(0)
        model = _build_model(regime, base, tokenizer, 2, schedule).train()
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=DEFAULT_LR[regime])
        for i, batch in enumerate(batches):
            if i == 1:
                start = time.perf_counter()
            model(**batch).loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        per_step = (time.perf_counter() - start) / args.steps
        print(f"| {regime} | {per_step:.2f} | {per_step * steps_per_epoch:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
