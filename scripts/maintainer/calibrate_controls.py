"""Calibrate the data-not-model flag: every built-in's MA on a private controls folder, beside the three lookups
of the gendered words that the flag must catch (``tests/hostile``: a hand-written lexicon, a lexicon learnt in
``fit()``, an answer key of the test split). A checkout tool: the lookups live in the test tree.

  python scripts/maintainer/calibrate_controls.py --controls /srv/gecobench/controls --max-groups 40 \\
      --out runs/controls/calibration.json

Prints a Markdown table (control MA with its 95 % interval, × chance, whether it is under the flag's threshold)
and writes the blocks as JSON, one explainer at a time, so a stopped run keeps what it finished.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "hostile"
LOOKUPS = {"lexicon_explainer": "LexiconExplainer", "learned_lexicon": "LearnedLexicon", "answer_key": "AnswerKey"}


def _answer_key_text(config: str, data_dir: str | None) -> str:
    from gecobench.evaluation.data import load_split

    rows = load_split(config, "test", data_dir).rows
    return json.dumps({"\u0001".join(r.words): list(r.ground_truth) for r in rows})


def load_lookup(module: str, work: Path, config: str, data_dir: str | None) -> Any:
    """One hostile lookup explainer, as the hostile tests build it (the answer key gets the test split's masks)."""
    text = (HOSTILE / f"{module}.py").read_text()
    if "__ANSWERS__" in text:
        text = text.replace("__ANSWERS__", _answer_key_text(config, data_dir))
    path = work / f"lookup_{module}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"lookup_{module}", path)
    loaded = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(loaded)
    return getattr(loaded, LOOKUPS[module])()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--controls", required=True, help="private controls folder (controls.json + checkpoints)")
    parser.add_argument("--explainers", nargs="*", default=None, help="built-ins (default: all)")
    parser.add_argument("--no-lookups", action="store_true", help="skip the three hostile lookups")
    parser.add_argument("--config", default="binary_all")
    parser.add_argument("--max-groups", type=int, default=None, help="only the first N test sentence groups")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--out", default=None, help="JSON file for the blocks (written after every explainer)")
    args = parser.parse_args(argv)

    import torch

    from gecobench.controls import builtin_control_scores, load_control_models
    from gecobench.explainers import available_explainers
    from gecobench.flags import DATA_NOT_MODEL_CHANCE_RATIO

    if args.threads:
        torch.set_num_threads(args.threads)
    controls = load_control_models(args.controls)
    if not controls:
        print(f"error: no control models in {args.controls}", file=sys.stderr)
        return 2
    for control in controls:
        print(f"# {control.name}: {len(control.secret_words)} secret words", file=sys.stderr)
    items: list[Any] = list(args.explainers or sorted(available_explainers()))
    work = Path(tempfile.mkdtemp(prefix="calibrate_controls_"))
    if not args.no_lookups:
        items += [load_lookup(m, work, args.config, args.data_dir) for m in LOOKUPS]
    results: dict[str, dict[str, Any]] = {}
    print("| explainer | control MA [95 % CI] | × chance | under the flag's line |")
    print("|---|---|---|---|")
    for item in items:
        started = time.process_time()
        (name, block), = builtin_control_scores([item], controls, args.config, args.data_dir, args.max_groups).items()
        block["cpu_seconds"] = round(time.process_time() - started, 1)
        results[name] = block
        ma, chance = block["mass_accuracy"], block["chance_mass_accuracy"]
        ratio = ma["value"] / chance if chance else float("nan")
        under = "yes" if ratio < DATA_NOT_MODEL_CHANCE_RATIO else "no"
        print(f"| {name} | {ma['value']:.3f} [{ma['ci_low']:.3f}, {ma['ci_high']:.3f}] | {ratio:.1f} | {under} |",
              flush=True)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(results, indent=1))
    first = next(iter(results.values()))
    print(f"\n{first['mass_accuracy']['n_scored']} sentences holding a secret word, {len(controls)} control(s), "
          f"chance {first['chance_mass_accuracy']:.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
