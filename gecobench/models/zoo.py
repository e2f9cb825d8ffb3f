"""The accuracy sweep of the zoo: train regimes x configs x seeds, summarise, render the docs table."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gecobench.domain import MODEL_INFO_FILE

TABLE_START = "<!-- zoo-table:start -->"
TABLE_END = "<!-- zoo-table:end -->"
#: the markers of the reference zoo's table in docs/reproducing.md (:func:`reference_zoo_table`)
REFERENCE_TABLE_START = "<!-- reference-zoo-table:start -->"
REFERENCE_TABLE_END = "<!-- reference-zoo-table:end -->"
#: the paper's bar for every trained model
PAPER_ACCURACY = 0.80


def collect_infos(root: str | Path) -> list[dict[str, Any]]:
    """Every ``gecobench_model.json`` under ``root`` (``<config>/<regime>/seed<k>/``)."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(root).glob(f"*/*/seed*/{MODEL_INFO_FILE}"))]


def summarise(infos: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group runs by (regime, config): mean and sample std of test accuracy, mean wall time, seeds."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for info in infos:
        groups.setdefault((info["regime"], info["geco_config"]), []).append(info)
    rows = []
    for (regime, config), runs in sorted(groups.items()):
        accs = [r["test_accuracy"] for r in runs]
        rows.append({
            "regime": regime,
            "config": config,
            "n_seeds": len(runs),
            "seeds": sorted(r["seed"] for r in runs),
            "test_accuracy_mean": statistics.fmean(accs),
            "test_accuracy_std": statistics.stdev(accs) if len(accs) > 1 else 0.0,
            "time_s_mean": statistics.fmean(r["training_time_s"] for r in runs),
            "base_model": runs[0]["base_model"],
            "schedule": runs[0].get("schedule", {}),
            "zero_shot_method": runs[0].get("zero_shot_method"),
        })
    return rows


def render_table(rows: Sequence[dict[str, Any]], command: str, machine: str, date: str) -> str:
    """A Markdown table (regime x config) of test accuracy ``mean ± std (n seeds)`` and mean wall time."""
    configs = sorted({r["config"] for r in rows})
    regimes = [g for g in ("OLA", "C", "CE", "CEf", "CEfAf", "ZS") if any(r["regime"] == g for r in rows)]
    cell = {(r["regime"], r["config"]): r for r in rows}
    lines = [
        (f"Made with `{command}` on {machine}, {date}. Test accuracy on the GECO test split, mean ± sample std over "
         "seeds (n = number of seeds), and mean wall time per model (training + evaluation)."),
        "",
        "| regime | " + " | ".join(configs) + " |",
        "|---|" + "---|" * len(configs),
    ]
    for regime in regimes:
        cells = []
        for config in configs:
            r = cell.get((regime, config))
            cells.append("not run" if r is None else
                         f"{100 * r['test_accuracy_mean']:.1f} ± {100 * r['test_accuracy_std']:.1f} "
                         f"(n={r['n_seeds']}, {r['time_s_mean']:.0f} s)")
        lines.append(f"| {regime} | " + " | ".join(cells) + " |")
    bases = sorted({r["base_model"] for r in rows})
    lines += ["", "Base model: " + "; ".join(bases) + "."]
    schedule_of: dict[str, dict[str, Any]] = {}
    for r in rows:
        schedule_of.setdefault(r["regime"], r["schedule"])
    training = [f"{regime} {_describe_schedule(schedule_of[regime])}" for regime in regimes if regime != "ZS"]
    if training:
        lines += ["", "Training: " + "; ".join(training) + "."]
    return "\n".join(lines) + "\n"


def _describe_schedule(schedule: dict[str, Any]) -> str:
    """``{"epochs": 2, "max_train_sentences": 600, "batch_size": 32}`` -> ``"2 epochs, ≤ 600 training sentences, batch 32"``."""
    if not schedule:
        return "(schedule not recorded)"
    sentences = schedule.get("max_train_sentences")
    amount = f"≤ {sentences} training sentences" if sentences else "all training sentences"
    head = f", head learning rate {schedule['head_lr']:g}" if schedule.get("head_lr") is not None else ""
    return f"{schedule.get('epochs', '?')} epochs, {amount}, batch {schedule.get('batch_size', '?')}{head}"


def reference_zoo_table(rows: Sequence[dict[str, Any]]) -> str:
    """The reference zoo's test accuracy (``reference/zoo_summary.json``'s rows, one per checkpoint) as a Markdown
    table, regime × config: the mean over seeds and, in brackets, the lowest seed, both in %; then how many seeds
    stay under the paper's 80 % and how many were restarted (a checkpoint whose initialisation seed is not its seed:
    the zoo restarts a run that stays under 70 % validation accuracy, docs/models.md)."""
    if not rows:
        raise ValueError("no zoo rows: reference/zoo_summary.json is empty")
    configs = [c for c in ("binary_all", "binary_subject", "nonbinary_all", "nonbinary_subject")
               if any(r["config"] == c for r in rows)]
    configs += sorted({r["config"] for r in rows} - set(configs))
    regimes = [g for g in ("OLA", "ZS", "C", "CE", "CEf", "CEfAf") if any(r["regime"] == g for r in rows)]
    seeds = sorted({int(r["seed"]) for r in rows})
    lines = ["| regime | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]
    for regime in regimes:
        cells = []
        for config in configs:
            runs = [r for r in rows if r["regime"] == regime and r["config"] == config]
            if not runs:
                cells.append("not run")
                continue
            accuracies = [float(r["test_accuracy"]) for r in runs]
            cell = f"{100 * statistics.fmean(accuracies):.1f} [{100 * min(accuracies):.1f}]"
            if len(runs) != len(seeds):
                cell += f" (n={len(runs)})"
            below = sum(a < PAPER_ACCURACY for a in accuracies)
            restarted = sum(int(r.get("init_seed", r["seed"])) != int(r["seed"]) for r in runs)
            notes = ([f"{below} < 80 %"] if below and regime != "ZS" else []) + (
                [f"{restarted} restarted"] if restarted else [])
            cells.append(cell + (f" ({', '.join(notes)})" if notes else ""))
        lines.append(f"| {regime} | " + " | ".join(cells) + " |")
    lines += ["", f"Test accuracy (%) over seeds {', '.join(map(str, seeds))}: mean [lowest seed]; "
              f"{len(rows)} checkpoints. Base: "
              f"{'; '.join(sorted({str(r['base_model']) for r in rows if r.get('base_model')}))}."]
    return "\n".join(lines) + "\n"


def write_table_into(doc: str | Path, table: str, start: str = TABLE_START, end: str = TABLE_END) -> None:
    """Replace the text between the markers ``start`` and ``end`` of ``doc`` (appending the markers if absent);
    by default the zoo-table markers of docs/models.md."""
    path = Path(doc)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    block = f"{start}\n{table}{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + block + "\n"
    path.write_text(text, encoding="utf-8")
