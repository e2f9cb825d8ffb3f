#!/usr/bin/env python
"""The hub's explainers and faithfulness evaluators against ferret's, side by side: sentences/CPU-s and Mass Accuracy.

Times are process CPU seconds (``time.process_time``, all threads of the process), so the figures stay
comparable when other jobs share the cores; ``sent/CPU-s`` = sentences per CPU second. ``--clock wall`` times
the wall clock instead and runs the two sides one after the other (for "both cores" figures on a free machine). Both sides explain the
same fine-tuned classifier on the same GECO test sentences for the true class. ferret
(``ferret-xai``) runs in its own environment (``--ferret-python``; the hub never imports it) through
``bench/ferret_side.py``, in its own process while the hub side runs (``--ferret-results`` keeps its raw output
for a rerun); its token scores are folded to words with the hub's rule (``|score|`` per token,
summed per word) so both sides get the same Mass Accuracy. The hub side runs every built-in explainer of the
registry (whatever it holds when the bench runs) at its defaults plus the ``--extra`` settings matched to
ferret's (:data:`DEFAULT_EXTRA`: the gradient methods at ferret's attribution point and output, Integrated
Gradients at ferret's 50 steps, Kernel SHAP at 500 samples, Partition SHAP and LIME with ferret's masking rule); "equal MA"
is read on those rows. The faithfulness rows time
ferret's ``aopc_compr``/``aopc_suff``/``taucorr_loo`` and the hub's
:class:`~gecobench.evaluation.faithfulness.FaithfulnessProbe` (all three together) on the same explanations.

Set up ferret once (its own venv reusing the hub venv's torch, so torch is not downloaded again):

    python3 -m venv /work/ferret-venv
    echo /work/main/.venv/lib/python3.11/site-packages > /work/ferret-venv/lib/python3.11/site-packages/hub.pth
    /work/ferret-venv/bin/pip install ferret-xai pyarrow==17.0.0

By default the comparison runs on a model of each family trained for the occasion (``--fresh OLA CEfAf``: the
``demo`` schedule, kept in ``--fresh-dir`` and reused by the next run) and on every ``--model`` given (the
reference's), one after the other, each printing its own table:

    python bench/bench_vs_ferret.py --model runs/reference/zoo/binary_all/CE/seed0 --n-sentences 16 \\
        --ferret-python /work/ferret-venv/bin/python --threads 2

Without ``--ferret-python`` the ferret side is skipped (said so at the start) and only the hub rows print.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO_ROOT, use_this_checkout

use_this_checkout()

import numpy as np

#: hub explainer spec -> the ferret explainer it is compared with
PAIRS = {
    "saliency": "Gradient",
    "input_x_gradient": "Gradient (x Input)",
    "integrated_gradients": "Integrated Gradient (x Input)",
    "integrated_gradients:n_steps=50": "Integrated Gradient (x Input)",
    "lime": "LIME",
    "kernel_shap": "Partition SHAP",
    "kernel_shap:n_samples=500": "Partition SHAP",
    "partition_shap": "Partition SHAP",
    "partition_shap:coalitions_per_word=null": "Partition SHAP (exact)",
}
#: the hub's explainers at ferret's definitions, beside their defaults: ferret's gradient methods explain at the
#: word-embedding lookup (``model.get_input_embeddings()``) and on the logits, where the hub's 2.0.0 gradient
#: methods explain at the embedding block's output (the paper's point; on a BERT-family model the two differ in
#: MA by design, on OLA they coincide); Integrated Gradients at ferret's 50 steps; Kernel SHAP at 500 samples;
#: Partition SHAP with the masking rule of shap's text masker (one [MASK] per word piece) and the accuracy target;
#: LIME with ferret's masking rule (the same, where the hub's default deletes the word).
DEFAULT_EXTRA = ["saliency:attribution_point=word_embeddings", "input_x_gradient:attribution_point=word_embeddings",
                 "integrated_gradients:n_steps=50,attribution_point=word_embeddings,output=logit",
                 "kernel_shap:n_samples=500", "partition_shap:removal=mask_tokens,coalitions_per_word=adaptive",
                 "lime:removal=mask_tokens"]


def ferret_pair(spec: str) -> str | None:
    """The ferret explainer a hub spec is compared with: its own entry in PAIRS, else its explainer name's."""
    return PAIRS.get(spec, PAIRS.get(spec.split(":", 1)[0]))


def builtin_specs() -> list[str]:
    """Every built-in explainer the registry holds now (plug-ins excluded)."""
    from gecobench.explainers.base import available_explainers, get_explainer_class

    return [name for name in available_explainers()
            if get_explainer_class(name).__module__.startswith("gecobench.explainers")]


def make_explainer(spec: str, config: str, data_dir: str | None):
    from gecobench.evaluation.data import load_split, scorable
    from gecobench.evaluation.runner import ExplainerSpec
    from gecobench.explainers import get_explainer
    from gecobench.explainers.base import Explainer

    parsed = ExplainerSpec.parse(spec)
    explainer = get_explainer(parsed.name, **parsed.params)
    if type(explainer).fit is not Explainer.fit:  # learns from the train split (pattern_variant)
        rows = [r for r in load_split(config, "train", data_dir).rows if scorable(r)]
        explainer.fit([list(r.words) for r in rows], [r.label for r in rows])
    return explainer


def fold_ferret(tokenizer, words: list[list[str]], side: dict) -> tuple[list[np.ndarray | None], int]:
    """ferret's token scores as word scores (the hub's rule); None where ferret tokenized differently."""
    from gecobench.words import fold_token_scores_to_words, tokenize_words

    encoding, word_ids = tokenize_words(tokenizer, words, padding=False, return_tensors=None)
    folded, mismatched = [], 0
    for i, sentence in enumerate(words):
        scores = np.asarray(side["scores"][i], dtype=np.float64)
        if list(encoding["input_ids"][i]) != list(side["token_ids"][i]) or scores.size != len(word_ids[i]):
            folded.append(None)
            mismatched += 1
            continue
        folded.append(fold_token_scores_to_words(scores, word_ids[i], len(sentence)))
    return folded, mismatched


def mass_accuracy(scores: list[np.ndarray | None], truth: list[list[int]]) -> float:
    return float(np.nanmean(per_sentence_mass_accuracy(scores, truth)))


def per_sentence_mass_accuracy(scores: list[np.ndarray | None], truth: list[list[int]]) -> list[float]:
    """MA of every sentence, NaN where it is undefined or the side has no scores (ferret tokenized differently)."""
    from gecobench.metrics.mass_accuracy import mass_accuracy_per_sentence

    kept = [i for i, s in enumerate(scores) if s is not None]
    values = np.full(len(scores), np.nan)
    if kept:
        values[kept] = mass_accuracy_per_sentence([scores[i] for i in kept], [truth[i] for i in kept])
    return [float(v) for v in values]


def paired_difference_interval(hub: list[float], ferret: list[float], n_resamples: int = 2000) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of mean MA(hub) - MA(ferret) over the sentences both sides scored."""
    from gecobench.evaluation.scoring import bootstrap_statistic_ci

    difference = np.asarray(hub, dtype=np.float64) - np.asarray(ferret, dtype=np.float64)
    low, high = bootstrap_statistic_ci(difference, np.mean, n_resamples, seed=0)
    return (np.nan if low is None else low), (np.nan if high is None else high)


def check_ferret_results(ferret: dict, path: Path, model: str, n_sentences: int, clock: str) -> None:
    """Refuse a reused ferret file written for another model, sentence count or clock: its rates would be divided
    by this run's sentence count and its scores paired with other sentences."""
    recorded = {"model": ferret.get("model"), "n_sentences": ferret.get("n_sentences"), "clock": ferret.get("clock")}
    if recorded["n_sentences"] is None:  # written before these fields: the explainers' score lists say the count
        recorded["n_sentences"] = min((len(e["scores"]) for e in ferret["explainers"].values()), default=None)
    wanted = {"model": model, "n_sentences": n_sentences, "clock": clock}
    wrong = [f"{key} {recorded[key]!r} (this run: {wanted[key]!r})" for key in wanted
             if recorded[key] is not None and recorded[key] != wanted[key]]
    if wrong:
        raise SystemExit(f"--ferret-results {path} was written for another run: {', '.join(wrong)}; "
                         "delete it or name another file")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", nargs="*", default=[],
                        help="fine-tuned checkpoint folder(s) (model zoo layout), e.g. the reference's")
    parser.add_argument("--fresh", nargs="*", default=["OLA", "CEfAf"],
                        help="regimes of which a model is trained for the occasion (default: OLA and CEfAf, one of "
                             "each family); none: --fresh with no value")
    parser.add_argument("--fresh-dir", default="runs/bench/fresh", help="where fresh models are trained (and reused)")
    parser.add_argument("--fresh-schedule", default="demo", help="schedule preset of the fresh models (short: demo)")
    parser.add_argument("--fresh-seed", type=int, default=0)
    parser.add_argument("--config", default="binary_all", help="GECO config whose test split is used")
    parser.add_argument("--data-dir", default=None, help="GECO release folder (default ../shared/data/geco)")
    parser.add_argument("--n-sentences", type=int, default=16, help="first N test sentences")
    parser.add_argument("--threads", type=int, default=2, help="torch threads on both sides")
    parser.add_argument("--ferret-python", default=None, help="Python of an environment with ferret-xai")
    parser.add_argument("--ferret-explainers", nargs="*", default=None, help="ferret explainers (default: all six)")
    parser.add_argument("--hub", nargs="*", default=None, help="hub explainer specs (default: every built-in)")
    parser.add_argument("--extra", nargs="*", default=DEFAULT_EXTRA, help="more hub specs (name:key=value)")
    parser.add_argument("--evaluators-on", default="input_x_gradient",
                        help="hub explainer whose scores the faithfulness evaluators are timed on")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="process CPU time (default; robust on shared cores) or wall clock (the two sides then "
                             "run one after the other)")
    parser.add_argument("--ferret-results", default=None,
                        help="JSON of ferret's side: reused when the file exists, else written there")
    parser.add_argument("--output", default=None, help="also write all figures as JSON here")
    args = parser.parse_args()
    if args.output and (len(args.model) + len(args.fresh)) > 1:
        print("--output: one JSON per model, named <output stem>-<model label>.json", flush=True)
    if args.ferret_python is None:
        print("ferret side skipped: no --ferret-python given (ferret-xai is not installed in the hub's environment; "
              "the module docstring says how to set up its own). The hub rows still print.", flush=True)
    elif not Path(args.ferret_python).is_file():
        raise SystemExit(f"--ferret-python {args.ferret_python}: no such file")
    models = [(Path(m).as_posix(), m) for m in args.model]
    for regime in args.fresh:
        models.append((f"fresh {regime} ({args.fresh_schedule}, seed {args.fresh_seed})",
                       str(fresh_model(regime, args))))
    if not models:
        raise SystemExit("no model: give --model and/or --fresh")
    for label, path in models:
        print(f"\n=== {label} ===", flush=True)
        compare_on(path, label, args)
    return 0


def fresh_model(regime: str, args: argparse.Namespace) -> Path:
    """A model of ``regime`` trained for the occasion with ``gecobench train`` (short schedule), or the one an
    earlier run left in ``--fresh-dir`` (same config, schedule and seed)."""
    folder = Path(args.fresh_dir) / args.fresh_schedule / args.config / regime / f"seed{args.fresh_seed}"
    if (folder / "gecobench_model.json").is_file():
        print(f"fresh {regime}: reusing {folder}", flush=True)
        return folder
    command = [sys.executable, "-m", "gecobench", "train", "--regime", regime, "--config", args.config,
               "--seed", str(args.fresh_seed), "--schedule", args.fresh_schedule, "--quiet",
               "--output-dir", str(Path(args.fresh_dir) / args.fresh_schedule), "--threads", str(args.threads)]
    if args.data_dir:
        command += ["--data-dir", args.data_dir]
    print(f"fresh {regime}: training ({' '.join(command[1:])})", flush=True)
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    print(f"fresh {regime}: trained in {time.perf_counter() - start:.0f} s", flush=True)
    if not (folder / "gecobench_model.json").is_file():
        raise SystemExit(f"fresh {regime}: training finished but {folder} holds no checkpoint")
    return folder


def compare_on(model_path: str, label: str, args: argparse.Namespace) -> None:
    """The side-by-side comparison on one model (the body of what used to be ``main``)."""
    if args.output and (len(args.model) + len(args.fresh)) > 1:
        stem = Path(args.output)
        safe = "".join(c if c.isalnum() else "_" for c in label).strip("_")
        args = argparse.Namespace(**{**vars(args), "output": str(stem.with_name(f"{stem.stem}-{safe}{stem.suffix or '.json'}"))})
    if args.ferret_results and (len(args.model) + len(args.fresh)) > 1:
        stem = Path(args.ferret_results)
        safe = "".join(c if c.isalnum() else "_" for c in label).strip("_")
        args = argparse.Namespace(**{**vars(args), "ferret_results": str(stem.with_name(f"{stem.stem}-{safe}.json"))})
    args = argparse.Namespace(**{**vars(args), "model": model_path})
    now = time.process_time if args.clock == "cpu" else time.perf_counter
    unit = "sentences/CPU-s" if args.clock == "cpu" else "sentences/s"

    from _common import load_bench_inputs

    from gecobench.evaluation.faithfulness import FaithfulnessProbe
    from gecobench.explainers.builtin import INPUT_GRADIENTS
    from gecobench.explainers.engine import attribute, attribute_detailed
    from gecobench.provenance import machine_description
    from gecobench.words import clear_token_cache

    # twice the sentences: the hub side warms up on the second half (see the warm-up below), the first is timed
    inputs = load_bench_inputs(args.model, args.config, 2 * args.n_sentences, args.data_dir, args.threads)
    model, tokenizer = inputs.model, inputs.tokenizer
    n = min(args.n_sentences, len(inputs.words))
    words, targets, truth = inputs.words[:n], inputs.targets[:n], inputs.truth[:n]
    warm_words, warm_targets = inputs.words[n:] or words, inputs.targets[n:] or targets
    results: dict = {"machine": machine_description(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     "threads": args.threads, "clock": args.clock, "n_sentences": len(words), "model": args.model, "rows": []}

    # ferret runs in its own process while the hub side runs here: CPU times do not mix, the wall clock is shared
    ferret: dict = {}
    ferret_process, workdir = None, Path(tempfile.mkdtemp(prefix="bench_vs_ferret_"))
    ferret_output = Path(args.ferret_results) if args.ferret_results else workdir / "ferret.json"
    if args.ferret_python and not (args.ferret_results and ferret_output.is_file()):
        sentences = workdir / "sentences.json"
        sentences.write_text(json.dumps({"words": words, "targets": targets}))
        command = [args.ferret_python, str(REPO_ROOT / "bench" / "ferret_side.py"), "--model", args.model,
                   "--sentences", str(sentences), "--output", str(ferret_output), "--threads", str(args.threads),
                   "--evaluator-sentences", str(len(words)), "--clock", args.clock]
        if args.ferret_explainers is not None:
            command += ["--explainers", *args.ferret_explainers]
        ferret_process = subprocess.Popen(command, env={**os.environ, "OMP_NUM_THREADS": str(args.threads)})
        if args.clock == "wall":  # wall-clock figures need the machine to themselves: one side at a time
            ferret_process.wait()

    hub_scores = {}
    for spec in (args.hub if args.hub is not None else builtin_specs()) + list(args.extra):
        explainer = make_explainer(spec, args.config, args.data_dir)
        # Warm-up on as many *other* sentences as are timed: the hub's unit of work is a batch of them, and the
        # first pass of batches that size can pay one-time costs (first imports, the allocator growing to the
        # batch's activations: 1.7x the next pass on one thread beside other work; no difference on a quiet
        # machine with two threads, 2026-12-04), which an evaluation of thousands of sentences never sees again.
        # ferret's unit of work is one sentence; its side warms up on one.
        attribute(explainer, model, tokenizer, warm_words, warm_targets)
        # each method pays its own gradient: Input×Gradient would otherwise reuse Saliency's (as it does in an
        # evaluation, where the pair costs one pass)
        INPUT_GRADIENTS.clear()
        # and its own tokenization: in an evaluation the sentences' tokens are cached for every explainer after
        # the first (gecobench.words.tokenize_words); ferret tokenizes every sentence for every method
        clear_token_cache()
        start = now()
        detailed = attribute_detailed(explainer, model, tokenizer, words, targets)
        seconds = now() - start
        scores = hub_scores[spec] = detailed.scores
        row = {"side": "hub", "method": spec, "sps": len(words) / seconds, "ma": mass_accuracy(scores, truth),
               "ma_per_sentence": per_sentence_mass_accuracy(scores, truth)}
        # Integrated Gradients' cost and accuracy per sentence: gradient evaluations and completeness error
        if "n_steps" in detailed.diagnostics:
            row["gradient_evaluations_mean"] = float(np.mean(detailed.diagnostics["n_steps"]))
            row["n_steps"] = [int(n) for n in detailed.diagnostics["n_steps"]]
        if "completeness_error" in detailed.diagnostics:
            row["completeness_error_max"] = float(np.max(detailed.diagnostics["completeness_error"]))
        # the sampling explainers' budget per sentence (fixed, or chosen by the accuracy target)
        if "n_samples" in detailed.diagnostics:
            row["samples_mean"] = float(np.mean(detailed.diagnostics["n_samples"]))
            row["n_samples"] = [int(n) for n in detailed.diagnostics["n_samples"]]
        results["rows"].append(row)
        print(f"hub {spec}: {len(words) / seconds:.2f} {unit}", flush=True)
        if args.output:  # partial figures survive an interrupted run
            Path(args.output).write_text(json.dumps(results, indent=1))

    if ferret_process is not None and ferret_process.wait() != 0:
        raise SystemExit(f"the ferret side failed (exit code {ferret_process.returncode})")
    if ferret_output.is_file():
        ferret = json.loads(ferret_output.read_text())
        if "n_sentences" in ferret and not ferret.get("complete"):  # files before these fields were always whole
            print(f"{ferret_output}: ferret's side was interrupted; only {', '.join(ferret['explainers'])} measured",
                  flush=True)
        check_ferret_results(ferret, ferret_output, args.model, len(words), args.clock)
        results["ferret_version"] = ferret.get("ferret_version")
        for name, side in ferret["explainers"].items():
            folded, mismatched = fold_ferret(tokenizer, words, side)
            results["rows"].append({"side": "ferret", "method": name, "sps": len(words) / side["seconds"],
                                    "ma": mass_accuracy(folded, truth), "tokenization_mismatches": mismatched,
                                    "ma_per_sentence": per_sentence_mass_accuracy(folded, truth)})

    if args.evaluators_on in hub_scores:
        probe_scores = hub_scores[args.evaluators_on]
        FaithfulnessProbe(model, tokenizer).evaluate(words[:2], targets[:2], probe_scores[:2])  # warm-up
        start = now()
        faithful = FaithfulnessProbe(model, tokenizer).evaluate(words, targets, probe_scores)
        seconds = now() - start
        results["faithfulness"] = {
            "hub": {"sps": len(words) / seconds, "explainer": args.evaluators_on,
                    "comprehensiveness": float(np.nanmean([f.comprehensiveness for f in faithful])),
                    "sufficiency": float(np.nanmean([f.sufficiency for f in faithful])),
                    "leave_one_out_tau": float(np.nanmean([f.leave_one_out_tau for f in faithful]))},
            "ferret": {name: {"sps": e["n"] / e["seconds"], "mean": float(np.nanmean(e["values"]))}
                       for name, e in ferret.get("evaluators", {}).items()},
        }

    print(f"\n{results['machine']}; {results['date']}; {args.threads} thread(s); {len(words)} sentences "
          f"({args.config} test); model {args.model}")
    print(f"{'side':<7} {'method':<34} {'sent/CPU-s' if args.clock == 'cpu' else 'sent/s':>10} {'MA':>6}")
    for row in results["rows"]:
        note = f"  ({row['tokenization_mismatches']} sentences tokenized differently, left out)" \
            if row.get("tokenization_mismatches") else ""
        if "gradient_evaluations_mean" in row:
            note += (f"  (gradient evaluations per sentence: mean {row['gradient_evaluations_mean']:.1f}; "
                     f"completeness error max {row.get('completeness_error_max', float('nan')):.2g})")
        if "samples_mean" in row:
            note += f"  (samples per sentence: mean {row['samples_mean']:.1f}, max {max(row['n_samples'])})"
        print(f"{row['side']:<7} {row['method']:<34} {row['sps']:>10.2f} {row['ma']:>6.3f}{note}")
    by = {(r["side"], r["method"]): r for r in results["rows"]}
    pairs = [(r["method"], ferret_pair(r["method"])) for r in results["rows"]
             if r["side"] == "hub" and ("ferret", ferret_pair(r["method"])) in by]
    if pairs:
        print(f"\n{'hub':<34} {'ferret':<30} {'speed-up':>8} {'MA hub':>7} {'MA ferret':>9}  MA hub - ferret [95 % CI]")
        for hub, other in pairs:
            a, b = by[("hub", hub)], by[("ferret", other)]
            low, high = paired_difference_interval(a["ma_per_sentence"], b["ma_per_sentence"])
            a["ma_minus_ferret_ci"] = [low, high]
            print(f"{hub:<34} {other:<30} {a['sps'] / b['sps']:>7.1f}x {a['ma']:>7.3f} {b['ma']:>9.3f}  "
                  f"{a['ma'] - b['ma']:+.4f} [{low:+.4f}, {high:+.4f}]")
    if "faithfulness" in results:
        f = results["faithfulness"]
        print(f"\nfaithfulness on {f['hub']['explainer']}: hub (comprehensiveness + sufficiency + LOO tau together) "
              f"{f['hub']['sps']:.2f} {unit}; comprehensiveness {f['hub']['comprehensiveness']:.3f}, "
              f"sufficiency {f['hub']['sufficiency']:.3f}, LOO tau {f['hub']['leave_one_out_tau']:.3f}")
        if f["ferret"]:
            total = sum(len(words) / e["sps"] for e in f["ferret"].values())
            print("ferret: " + ", ".join(f"{k} {e['sps']:.2f} {unit} (mean {e['mean']:.3f})"
                                         for k, e in f["ferret"].items())
                  + f"; all three {len(words) / total:.2f} {unit}")
    if args.output:
        Path(args.output).write_text(json.dumps(results, indent=1))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
