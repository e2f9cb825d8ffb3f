"""The ferret half of ``bench/bench_vs_ferret.py``; runs with the Python of an environment that has ferret-xai.

Not part of the hub (which never imports ferret): ``bench_vs_ferret.py`` starts this file with
``--ferret-python`` and reads one JSON document from its output file. For every ferret explainer it explains
each sentence (``" ".join(words)``, the explained class = the label) and records the process CPU seconds, ferret's token ids
and token scores; it then times ferret's three faithfulness evaluators on one explainer's explanations.

    /work/ferret-venv/bin/python bench/ferret_side.py --model runs/bench/binary_all/CEfAf/seed0 \\
        --sentences sentences.json --output ferret.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

#: ferret's explainers (the six its Benchmark runs by default), constructor keyword arguments, call arguments
FERRET_EXPLAINERS = {
    "Gradient": ("GradientExplainer", {"multiply_by_inputs": False}, {}),
    "Gradient (x Input)": ("GradientExplainer", {"multiply_by_inputs": True}, {}),
    "Integrated Gradient (x Input)": ("IntegratedGradientExplainer", {"multiply_by_inputs": True}, {}),
    "Integrated Gradient": ("IntegratedGradientExplainer", {"multiply_by_inputs": False}, {}),
    "LIME": ("LIMEExplainer", {}, {}),
    "Partition SHAP": ("SHAPExplainer", {}, {}),
    # not in ferret's default six: shap's Partition explainer with a budget no sentence here reaches (exact Owen
    # values on its token hierarchy), to tell its 500-evaluation approximation from its definition
    "Partition SHAP (exact)": ("SHAPExplainer", {}, {"call_args": {"max_evals": 100_000}}),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="checkpoint folder (transformers layout)")
    parser.add_argument("--sentences", required=True, help="JSON file: {'words': [[...]], 'targets': [...]}")
    parser.add_argument("--output", required=True, help="where the JSON results go")
    parser.add_argument("--explainers", nargs="*", default=list(FERRET_EXPLAINERS)[:6], help="ferret explainer names (default: ferret's six)")
    parser.add_argument("--evaluators-on", default="Gradient (x Input)",
                        help="explainer whose explanations ferret's faithfulness evaluators are timed on")
    parser.add_argument("--evaluator-sentences", type=int, default=16, help="sentences the evaluators are timed on")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="process CPU time or wall clock")
    args = parser.parse_args()
    now = time.process_time if args.clock == "cpu" else time.perf_counter
    unit = "sentences/CPU-s" if args.clock == "cpu" else "sentences/s"

    import ferret
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(args.threads)
    with open(args.sentences, encoding="utf-8") as handle:
        data = json.load(handle)
    texts = [" ".join(words) for words in data["words"]]
    targets = [int(t) for t in data["targets"]]
    if (Path(args.model) / "gecobench_model.json").is_file():
        # a zoo checkpoint: OLA's model type (gecobench_ola) is registered by the hub's loader only, so load it as
        # the hub side does (this checkout's package; the hub still never imports ferret)
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from gecobench.models.loading import load_zoo_model

        model, tokenizer, _ = load_zoo_model(args.model)
        model = model.eval()
    else:
        model = AutoModelForSequenceClassification.from_pretrained(args.model).eval()
        tokenizer = AutoTokenizer.from_pretrained(args.model)

    # the installed distribution's version: ferret-xai 0.4.2's module still says __version__ = "0.4.1"
    try:
        from importlib.metadata import version

        ferret_version = version("ferret-xai")
    except Exception:  # installed some other way (a source checkout)
        ferret_version = getattr(ferret, "__version__", "unknown")
    out = {"ferret_version": ferret_version, "torch": torch.__version__,
           "threads": args.threads, "model": args.model, "n_sentences": len(texts), "clock": args.clock,
           "explainers": {}, "evaluators": {}}
    for name in args.explainers:
        class_name, init, call = FERRET_EXPLAINERS[name]
        explainer = getattr(ferret, class_name)(model, tokenizer, **init)
        explainer(texts[0], target=targets[0], **call)  # warm-up: first imports (shap, lime, captum)
        token_ids, scores = [], []
        start = now()
        for text, target in zip(texts, targets):
            explanation = explainer(text, target=target, **call)
            scores.append([float(s) for s in explanation.scores])
        seconds = now() - start
        for text in texts:
            token_ids.append(tokenizer(text)["input_ids"])
        out["explainers"][name] = {"seconds": seconds, "token_ids": token_ids, "scores": scores}
        print(f"ferret {name}: {len(texts) / seconds:.2f} {unit}", flush=True)
        write(out, args.output)  # what was measured survives an interrupted run

    if args.evaluators_on in out["explainers"]:
        from ferret.evaluators.faithfulness_measures import (
            AOPC_Comprehensiveness_Evaluation,
            AOPC_Sufficiency_Evaluation,
            TauLOO_Evaluation,
        )
        from ferret.explainers.explanation import Explanation
        from ferret.model_utils import ModelHelper

        helper = ModelHelper(model, tokenizer)
        n = min(args.evaluator_sentences, len(texts))
        chosen = out["explainers"][args.evaluators_on]["scores"][:n]
        items = [Explanation(texts[i], helper.get_tokens(texts[i]), np.array(chosen[i]), args.evaluators_on, targets[i])
                 for i in range(n)]
        for evaluator_class in (AOPC_Comprehensiveness_Evaluation, AOPC_Sufficiency_Evaluation, TauLOO_Evaluation):
            evaluator = evaluator_class(model, tokenizer)
            evaluator.compute_evaluation(items[0], target=targets[0])  # warm-up
            start = now()
            values = [float(evaluator.compute_evaluation(item, target=targets[i]).score) for i, item in enumerate(items)]
            out["evaluators"][evaluator_class.SHORT_NAME] = {
                "seconds": now() - start, "n": n, "values": values}
            rate = n / out["evaluators"][evaluator_class.SHORT_NAME]["seconds"]
            print(f"ferret {evaluator_class.SHORT_NAME}: {rate:.2f} {unit}", flush=True)
    out["complete"] = True
    write(out, args.output)
    return 0


def write(out: dict, path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(out, handle)


if __name__ == "__main__":
    raise SystemExit(main())
