"""Train the GECOBench zoo (regimes x GECO configs x seeds) and print the accuracy table (--doc: into a page).

Finished checkpoints are skipped, so an interrupted sweep resumes. Example (the full table, written into the
tracked docs/models.md only because --doc asks for it):
  gecobench zoo --seeds 0 1 2 --output-dir runs/zoo --doc docs/models.md
A short look (one seed, OLA and MiniLM CEfAf on binary_all, demo schedule):
  gecobench zoo --regimes OLA CEfAf --configs binary_all --seeds 0 --schedule demo
OLA always trains with its own schedule (--ola-schedule, default ola_paper: the authors' 200 epochs, Adam 0.01);
--schedule, --epochs, --max-train-sentences and --head-lr apply to the other regimes (--epochs-for OLA=N does
change OLA's epochs).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
from pathlib import Path

from gecobench.models.data import GECO_CONFIGS
from gecobench.models.regimes import REGIMES
from gecobench.models.training import SCHEDULES, default_schedule_for


def regime_epochs(text: str) -> tuple[str, int]:
    """``"C=6"`` -> ``("C", 6)``; argparse turns the ValueError into a usage message naming the bad value."""
    regime, sep, epochs = text.partition("=")
    if not sep or regime not in REGIMES or not epochs.isdigit() or int(epochs) < 1:
        raise argparse.ArgumentTypeError(f"expected REGIME=EPOCHS with REGIME one of {', '.join(REGIMES)} and EPOCHS >= 1, got {text!r}")
    return regime, int(epochs)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench zoo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--regimes", nargs="+", default=list(REGIMES), choices=REGIMES, help="default: all six")
    parser.add_argument("--configs", nargs="+", default=sorted(GECO_CONFIGS), choices=sorted(GECO_CONFIGS), help="default: all four")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="default: 0 1 2")
    parser.add_argument("--schedule", default="default", choices=sorted(SCHEDULES), help="preset of every regime but OLA")
    parser.add_argument("--ola-schedule", default=default_schedule_for("OLA"), choices=sorted(SCHEDULES),
                        help="OLA's preset (default: %(default)s, the authors' training)")
    parser.add_argument("--max-train-sentences", type=int, help="cap training sentences (short sweeps)")
    parser.add_argument("--epochs", type=int, help="override the preset's epochs")
    parser.add_argument("--epochs-for", nargs="+", default=[], metavar="REGIME=N", type=regime_epochs,
                        help="override the epochs of single regimes, e.g. C=6 (the frozen-encoder head learns slowest)")
    parser.add_argument("--head-lr", type=float, help="learning rate of the new classification head (C, CE, CEf, CEfAf; default: the regime's rate)")
    parser.add_argument("--base-model", default=None, help="Hub id or local folder (default: gecobench.models.default_base_model())")
    parser.add_argument("--data-dir", default=None, help="GECO data folder")
    parser.add_argument("--output-dir", default="runs/zoo", help="checkpoints go to <dir>/<config>/<regime>/seed<k>")
    parser.add_argument("--doc", default=None,
                        help="Markdown file whose zoo table is replaced, e.g. docs/models.md (default: print the table)")
    parser.add_argument("--no-doc", action="store_true", help="print the table even when --doc is given")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the machine is shared)")
    parser.add_argument("--machine", default="2-core shared CPU", help="machine description for the table")
    parser.add_argument("--retrain", action="store_true", help="train again even if a checkpoint exists")
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from gecobench.models.training import INFO_FILE, train_regime
    from gecobench.models.zoo import (
        collect_infos,
        render_table,
        summarise,
        write_table_into,
    )

    torch.set_num_threads(args.threads)
    out_root = Path(args.output_dir)
    epochs_for = dict(args.epochs_for)
    jobs = [(c, r, s) for c in args.configs for r in args.regimes for s in args.seeds]
    for i, (config, regime, seed) in enumerate(jobs, start=1):
        folder = out_root / config / regime / f"seed{seed}"
        if (folder / INFO_FILE).is_file() and not args.retrain:
            print(f"[{i}/{len(jobs)}] {config} {regime} seed {seed}: done already, skipped", flush=True)
            continue
        print(f"[{i}/{len(jobs)}] {config} {regime} seed {seed}", flush=True)
        if regime == "OLA":  # the authors' schedule, untouched by the other regimes' budget
            train_regime(regime, config, seed, folder, base_model=args.base_model, data_dir=args.data_dir,
                         schedule=args.ola_schedule, epochs=epochs_for.get(regime))
        else:
            train_regime(regime, config, seed, folder, base_model=args.base_model, data_dir=args.data_dir,
                         schedule=args.schedule, max_train_sentences=args.max_train_sentences,
                         epochs=epochs_for.get(regime, args.epochs), head_lr=args.head_lr)
        info = json.loads((folder / INFO_FILE).read_text())
        print(f"    test accuracy {info['test_accuracy']:.4f}, {info['training_time_s']:.0f} s", flush=True)
    wanted = {(c, r, s) for c, r, s in jobs}
    infos = [i for i in collect_infos(out_root) if (i["geco_config"], i["regime"], i["seed"]) in wanted]
    rows = summarise(infos)
    (out_root / "zoo_summary.json").write_text(json.dumps(rows, indent=2) + "\n")
    command = "gecobench zoo " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    table = render_table(rows, command.strip(), args.machine, datetime.date.today().isoformat())
    if args.no_doc or not args.doc:
        print(table)
    else:
        write_table_into(args.doc, table)
        print(f"table written into {args.doc}")
    return 0

