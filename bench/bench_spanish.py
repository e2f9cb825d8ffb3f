#!/usr/bin/env python
"""Speed of the Spanish pipeline on this machine: importing the published predictions, fill-mask with a tiny
in-test-style masked LM on the 192 template sentences, and the two taggers.

    python bench/bench_spanish.py [--data-dir ../shared/data/spanish]   # default: the dataset builders' rule

Prints a Markdown table for BENCHMARKS.md (section "Spanish masked-LM pipeline").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time the Spanish masked-LM pipeline stages.")
    parser.add_argument("--data-dir", default=None,
                        help="Spanish data folder (default: the dataset builders' rule, $GECOBENCH_SPANISH_DIR or "
                             "../shared/data/spanish)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    from spanish_helpers import make_tiny_bert_mlm

    from geco_dataset.spanish import default_spanish_dir
    from gecobench.spanish import import_recorded_predictions
    from gecobench.spanish.fillmask import load_masked_lm, top_k_whole_words
    from gecobench.spanish.pipeline import fill, load_templates, render
    from gecobench.spanish.tagging import LexiconTagger, SpacyTagger, spacy_available
    from gecobench.store import LocalStore

    found = args.data_dir or default_spanish_dir()
    if found is None:
        parser.error("no Spanish data folder: give --data-dir, or set GECOBENCH_SPANISH_DIR or GECOBENCH_SHARED_DATA")
    data_dir = Path(found)
    rows_out: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        import_recorded_predictions(data_dir / "predictions", LocalStore(Path(tmp) / "store"), k=10, progress=False)
        seconds = time.perf_counter() - start
        rows_out.append(("import published top-10 predictions, 20 models (3 schemes each)", f"{seconds:.1f} s"))

        model, tokenizer = load_masked_lm(str(make_tiny_bert_mlm(Path(tmp) / "bert")))
        rows, _ = load_templates("templates_2023", data_dir=data_dir)
        texts = [render(r.text, tokenizer.mask_token, True) for r in rows]
        start = time.perf_counter()
        predictions = top_k_whole_words(model, tokenizer, texts, k=10, progress=False)
        seconds = time.perf_counter() - start
        rows_out.append((f"fill-mask top-10, tiny BERT, {len(texts)} sentences", f"{1000 * seconds / len(texts):.1f} ms/sentence"))

        filled, spans = [], []
        for row, preds in zip(rows, predictions):
            for p in preds:
                sentence, span = fill(row.text, p.word)
                filled.append(sentence)
                spans.append(span)
        taggers = [("CESS-ESP list", LexiconTagger.from_cess(data_dir))]
        if spacy_available():
            taggers.append(("spaCy es_core_news_sm", SpacyTagger()))
        for name, tagger in taggers:
            start = time.perf_counter()
            tagger.is_adjective(filled, spans)
            seconds = time.perf_counter() - start
            rows_out.append((f"tagging, {name}, {len(filled)} filled sentences", f"{1000 * seconds / len(filled):.2f} ms/sentence"))

    print("| stage | time |\n|---|---|")
    for stage, value in rows_out:
        print(f"| {stage} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
