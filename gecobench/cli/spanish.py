"""Score a Hugging Face masked LM on the Spanish gender templates (BPI/BRI) and add a model_bias record.

Example:
    gecobench spanish score --model dccuchile/bert-base-spanish-wwm-uncased --store results \
        --pictures-dir results/pictures
    accelerate launch -m gecobench spanish score --model ./my_checkpoint --tagger cess

The logic lives in gecobench.spanish (see docs/spanish.md).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: what a Hugging Face Hub model id looks like (``name`` or ``owner/name``); anything else is a local path
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench spanish score",
        description="Top-K fill-mask on the Spanish gender templates → PoS → lexicon categories → BPI/BRI → "
        "a model_bias record in the results store.",
    )
    parser.add_argument("--model", required=True, help="Hub model id or local folder of a masked LM (with MLM head)")
    parser.add_argument("--revision", default=None, help="Hub revision (branch, tag or commit) to load and record")
    parser.add_argument("--model-id", default=None, help="name recorded for the model (default: --model)")
    parser.add_argument("-k", "--top-k", type=int, default=10, help="whole-word predictions per sentence (default 10)")
    parser.add_argument("--templates", default="templates_2023", help="template config: templates_2023 | templates_2022")
    parser.add_argument("--templates-file", default=None,
                        help="a custom template TSV (header = group names, one [MASK] per cell) instead of --templates")
    parser.add_argument("--data-dir", default=None,
                        help="the Spanish data folder (templates/, lexicons/); default $GECOBENCH_SPANISH_DIR or "
                        "../shared/data/spanish")
    parser.add_argument("--tagger", choices=("auto", "spacy", "cess"), default="auto",
                        help="adjective tagger: spaCy es_core_news_sm, the CESS-ESP adjective list, or auto "
                        "(spaCy when installed)")
    parser.add_argument("--schemes", nargs="+", default=None,
                        help="lexicon schemes (default: supersenses_top10|top29 by K, visibility_polarity, wiggins)")
    parser.add_argument("--casing", choices=("auto", "cased", "uncased"), default="auto",
                        help="lower-case the templates for uncased models (auto: from the tokenizer)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--store", default=None, help="results store: folder or hf://datasets/<repo> (default results/)")
    parser.add_argument("--pictures-dir", default=None, help="write heat tables / radar charts here (PNG + HTML)")
    parser.add_argument("--predictions-out", default=None, help="also write the prediction table as TSV here")
    parser.add_argument("--cpu", action="store_true", help="force CPU even when an accelerator is available")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    from gecobench.spanish.cli_options import add_bootstrap_arguments

    add_bootstrap_arguments(parser)
    return parser


def missing_local_model(model: str) -> str | None:
    """Why ``--model`` names no model: a local path (``./x``, ``/x``, ``~/x``, ``a/b/c``) that does not exist;
    None when it exists or looks like a Hub id (which the loader then tries to reach)."""
    path = Path(os.path.expanduser(model))
    if path.exists() or (_HUB_ID.fullmatch(model) and ".." not in model):
        return None
    return (f"--model {model!r}: no such local folder ({path.resolve()}); give the folder of a masked LM "
            "checkpoint (config.json, weights, tokenizer) or a Hub model id such as owner/name")


def _interval_text(value: Any, interval: Mapping[str, Any] | None) -> str:
    from gecobench.formatting import format_interval

    interval = interval or {}
    return format_interval(value, interval.get("ci_low"), interval.get("ci_high"), digits=2, signed=True)


def bias_summary(record: Mapping[str, Any]) -> str:
    """BPI and BRI of a ``model_bias`` record as text: per lexicon scheme the overall bias (sum of |male − female|
    over the categories) and each category's bias (male − female), with the record's bootstrap intervals."""
    protocol = record.get("protocol", {})
    bootstrap = protocol.get("bootstrap") or {}
    level = bootstrap.get("confidence")
    how = (f"[{level:.0%} interval over templates]" if isinstance(level, (int, float))
           else "(no interval: a single template or --bootstrap-resamples 0)")
    lines = [(f"{record['masked_lm']['model_id']}, top-{protocol.get('k')} predictions: bias = male − female, "
             f"overall = sum of |bias| over the categories {how}")]
    for scheme, result in sorted(record.get("schemes", {}).items()):
        uncertainty = result.get("uncertainty") or {}
        overall = result.get("overall") or {}
        lines.append(f"  {scheme}: overall BPI {_interval_text(overall.get('bpi'), (uncertainty.get('overall') or {}).get('bpi'))}"
                     f", overall BRI {_interval_text(overall.get('bri'), (uncertainty.get('overall') or {}).get('bri'))}")
        bias = result.get("bias") or {}
        intervals = uncertainty.get("bias") or {}
        categories = sorted(k for k in (bias.get("bpi") or {}) if k != "unknown")
        width = max([len(c) for c in categories] + [8])
        for category in categories:
            bpi = _interval_text(bias["bpi"].get(category), (intervals.get("bpi") or {}).get(category))
            bri = _interval_text((bias.get("bri") or {}).get(category), (intervals.get("bri") or {}).get(category))
            lines.append(f"    {category:<{width}}  BPI {bpi:<24}  BRI {bri}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    missing = missing_local_model(args.model)
    if missing:
        print(f"error: {missing}", file=sys.stderr)
        return 2
    if args.no_progress:  # the libraries' own bars (transformers' 'Loading weights' …) too
        from gecobench.quiet import silence_library_progress

        silence_library_progress()
    from accelerate import Accelerator

    from gecobench.spanish import get_tagger, run_live
    from gecobench.store import open_results_store

    data_dir = args.data_dir
    if data_dir is None:
        from geco_dataset import default_spanish_dir

        data_dir = default_spanish_dir()
    accelerator = Accelerator(cpu=args.cpu)
    try:
        from gecobench.spanish.cli_options import bootstrap_from_arguments

        bootstrap = bootstrap_from_arguments(args)
        tagger = get_tagger(args.tagger, spanish_data_dir=data_dir)
        record, table = run_live(
            args.model, revision=args.revision, k=args.top_k, config=args.templates, data_dir=data_dir,
            templates_file=args.templates_file, tagger=tagger, schemes=args.schemes, casing=args.casing,
            batch_size=args.batch_size, device=accelerator.device, model_id=args.model_id,
            progress=not args.no_progress, bootstrap=bootstrap,
        )
    except (ValueError, OSError, ImportError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not accelerator.is_main_process:
        return 0
    print(bias_summary(record))
    store = open_results_store(args.store)
    if store.exists("model_bias", record["record_id"]):
        print(f"model_bias record {record['record_id']} is already in {store}; nothing added")
    else:
        print(f"added {store.append(record)}")
    if args.predictions_out:
        _write_table(table, Path(args.predictions_out))
    if args.pictures_dir:
        from gecobench.spanish.plots import write_model_pictures, write_scheme_tables

        # across-model tables: this model next to every stored model scored with the same K
        same_k = [r for r in store.read_all("model_bias").documents if r["protocol"].get("k") == args.top_k]
        others = [r for r in same_k if r["record_id"] != record["record_id"]]
        written = write_model_pictures([record], args.pictures_dir)
        written += write_scheme_tables([record, *others], args.pictures_dir)
        print(f"wrote {len(written)} pictures under {args.pictures_dir}")
    return 0


def _write_table(table: dict[str, list], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow(list(table))
        writer.writerows(zip(*table.values()))

