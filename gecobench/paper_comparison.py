"""This package's reference results next to GECOBench's published figures, and the paper's five findings checked.

The published medians are read at run time from ``GECOBENCH_FIGURES.md`` in the shared data folder (numbers read
off the paper's figure by eye, ±0.03); nothing of them is copied into the package. The findings are checked on
the reference records (``reference/store``) with explicit, stated criteria, so a "yes" or "no" can be traced to
the numbers printed beside it.

Wilming et al., "GECOBench: A Gender-Controlled Text Dataset and Benchmark for Quantifying Biases in
Explanations", Frontiers in Artificial Intelligence, 2025.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gecobench.formatting import format_number

#: The paper's column names → registry names; its model names → regimes; its dataset names → binary configs.
PAPER_EXPLAINERS = {
    "Uniform Random": "uniform_random", "Saliency": "saliency", "Kernel SHAP": "kernel_shap",
    "Guided Backprop": "guided_backprop", "DeepLift": "deeplift", "Input×Gradient": "input_x_gradient",
    "LIME": "lime", "Gradient SHAP": "gradient_shap", "Integrated Gradients": "integrated_gradients",
    "Pattern Variant": "pattern_variant",
}
PAPER_MODELS = {"BERT-C": "C", "BERT-CE": "CE", "BERT-CEf": "CEf", "BERT-CEfAf": "CEfAf", "OLA-CEA": "OLA"}
PAPER_DATASETS = {"D_A": "binary_all", "D_S": "binary_subject"}
BASELINES = ("uniform_random", "pattern_variant")
PRETRAINED_REGIMES = ("C", "CE", "CEf", "CEfAf")
MA = "mass_accuracy"
RMA = "relative_mass_accuracy"
#: the ranges of the findings' statistics: a share of pairs or cells, a difference of two Mass Accuracies
SHARE_RANGE, DIFFERENCE_RANGE = (0.0, 1.0), (-1.0, 1.0)


def default_figures_path() -> Path:
    from gecobench.models.data import default_geco_dir

    return Path(default_geco_dir()).parent / "GECOBENCH_FIGURES.md"


def load_paper_medians(path: str | Path | None = None) -> dict[tuple[str, str, str], float]:
    """``{(config, regime, explainer): median MA}`` from the figures file's median-MA table."""
    path = Path(path) if path else default_figures_path()
    lines = path.read_text(encoding="utf-8").splitlines()
    header_at = next((i for i, line in enumerate(lines) if line.startswith("| dataset | model |")), None)
    if header_at is None:
        raise ValueError(f"{path}: no '| dataset | model | ...' table of median Mass Accuracy")
    columns = [c.strip() for c in lines[header_at].strip("|").split("|")]
    unknown = [c for c in columns[2:] if c not in PAPER_EXPLAINERS]
    if unknown:
        raise ValueError(f"{path}:{header_at + 1}: unknown explainer column(s) {unknown}")
    medians: dict[tuple[str, str, str], float] = {}
    for number, line in enumerate(lines[header_at + 2:], start=header_at + 3):
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(columns) or cells[0] not in PAPER_DATASETS or cells[1] not in PAPER_MODELS:
            raise ValueError(f"{path}:{number}: cannot read row {line!r}")
        for column, cell in zip(columns[2:], cells[2:]):
            medians[(PAPER_DATASETS[cells[0]], PAPER_MODELS[cells[1]], PAPER_EXPLAINERS[column])] = float(cell)
    return medians


def _value(record: Mapping[str, Any], metric: str, field: str = "value") -> float | None:
    block = (record.get("metrics") or {}).get(metric) or {}
    value = block.get(field)
    return float(value) if isinstance(value, (int, float)) else None


def index_records(records: Iterable[Mapping[str, Any]], filtered: bool = True, seed: int = 0
                  ) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """``{(config, regime, explainer): record}`` of built-in records of one model seed and filter setting.

    Filtered means the paper's filter (one shared subset per config); a store without such records (the seed-0
    reference of 0.6) is read with its per-model filtered records instead."""
    from gecobench.evaluation.filters import NONE, PAPER, PER_MODEL, record_filter

    kept = [r for r in records
            if r.get("record_type") == "explainer_score" and r["explainer"].get("source", "builtin") == "builtin"
            and (record_filter(r.get("protocol")) != NONE) == filtered and r["model"].get("seed") == seed]
    if filtered:
        names = {record_filter(r.get("protocol")) for r in kept}
        wanted = PAPER if PAPER in names else PER_MODEL
        kept = [r for r in kept if record_filter(r.get("protocol")) == wanted]
    index: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for record in kept:
        key = (record["dataset"]["config"], record["model"]["regime"], record["explainer"]["name"])
        if key in index:
            raise ValueError(f"two records for {key}: {index[key]['record_id']} and {record['record_id']}")
        index[key] = record
    return index


def side_by_side(index: Mapping[tuple[str, str, str], Mapping[str, Any]],
                 paper: Mapping[tuple[str, str, str], float]) -> list[dict[str, Any]]:
    """One row per (config, regime, explainer) the paper reports: its median, ours (median over sentences)."""
    rows = []
    for (config, regime, explainer), published in sorted(paper.items()):
        record = index.get((config, regime, explainer))
        ours = _value(record, MA, "median") if record else None
        interval = ((record.get("metrics") or {}).get(MA) or {}).get("median_seed_interval") if record else None
        rows.append({"config": config, "regime": regime, "explainer": explainer, "paper_median": published,
                     "ours_median": ours, "ours_mean": _value(record, MA) if record else None,
                     "difference": None if ours is None else ours - published,
                     **({"ours_median_seed_interval": interval, "n_seeds": record.get("n_seeds")}
                        if interval is not None else {})})
    return rows


@dataclass
class Finding:
    """One of the paper's findings: does it hold here, and the numbers behind the answer."""

    number: int
    claim: str
    criterion: str
    holds: bool | None  # None: the records needed are missing
    evidence: str
    #: the finding's number that the criterion thresholds (its ``statistic_name`` says which), for the mean and
    #: interval across seeds (:func:`check_findings_across_seeds`); None where the records needed are missing
    statistic: float | None = None
    statistic_name: str = ""
    #: the range the statistic lies in (a share: 0 … 1; a difference of two MAs: −1 … 1), to which its interval
    #: across seeds is cut (:func:`gecobench.pooling.across_seeds`)
    statistic_bounds: tuple[float, float] | None = None


def _ma(index: Mapping[tuple[str, str, str], Mapping[str, Any]], config: str, regime: str, explainer: str) -> float | None:
    record = index.get((config, regime, explainer))
    return _value(record, MA) if record else None


def _methods(index: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> list[str]:
    """The paper's non-baseline methods present in ``index``: the findings are claims about the methods it
    evaluated, so an explainer it did not run (Partition SHAP) is reported beside them, not judged among them."""
    paper = set(PAPER_EXPLAINERS.values()) - set(BASELINES)
    return sorted({e for (_, _, e) in index if e in paper})


def _extra_methods(index: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> list[str]:
    """Explainers in ``index`` that the paper did not evaluate."""
    return sorted({e for (_, _, e) in index if e not in PAPER_EXPLAINERS.values()})


#: The paper's D_A and D_S, and the same pair of alterations for the non-binary configs (no published figure)
BINARY_PAIR = ("binary_all", "binary_subject")
NONBINARY_PAIR = ("nonbinary_all", "nonbinary_subject")


def check_findings(index: Mapping[tuple[str, str, str], Mapping[str, Any]],
                   ground_truth_share: Mapping[str, float],
                   configs: tuple[str, str] = BINARY_PAIR) -> list[Finding]:
    """The five findings of GECOBench's paper, each with its criterion, answer and numbers.

    ``configs`` is the (D_A, D_S) pair judged: the paper's binary configs by default; the non-binary pair applies
    the same criteria where the paper published no figure.
    """
    all_words, subject = configs
    methods = _methods(index)
    regimes = sorted({r for (_, r, _) in index})
    findings: list[Finding] = []

    # 1. D_S below D_A
    pairs = [(r, e, _ma(index, all_words, r, e), _ma(index, subject, r, e)) for r in regimes for e in methods]
    pairs = [p for p in pairs if p[2] is not None and p[3] is not None]
    lower = [p for p in pairs if p[3] < p[2]]
    below = [p for p in pairs if p[3] < 0.25]
    findings.append(Finding(
        1, "MA is lower on D_S than on D_A for most methods (most below 0.25 on D_S)",
        "more than half of the (regime, method) pairs have MA(D_S) < MA(D_A)",
        (len(lower) > len(pairs) / 2) if pairs else None,
        f"{len(lower)} of {len(pairs)} pairs lower on D_S; {len(below)} of {len(pairs)} below 0.25 on D_S",
        len(lower) / len(pairs) if pairs else None, "share of pairs lower on D_S (holds above 0.5)", SHARE_RANGE))

    # 2. Integrated Gradients first for the pretrained models
    firsts, cells = [], 0
    for config in configs:
        for regime in PRETRAINED_REGIMES:
            scored = {e: _ma(index, config, regime, e) for e in methods}
            scored = {e: v for e, v in scored.items() if v is not None}
            if scored:
                cells += 1
                best = max(scored, key=scored.get)
                firsts.append(f"{regime}/{config}: {best} {scored[best]:.2f}"
                              + ("" if best == "integrated_gradients" else
                                 f" (IG {scored.get('integrated_gradients', float('nan')):.2f})"))
    ig_first = sum(f.split(": ")[1].startswith("integrated_gradients") for f in firsts)
    # the paper's claim is among its own methods; an explainer it did not run is reported, not judged
    beyond = []
    for extra in _extra_methods(index):
        above_ig = [f"{r}/{c}" for c in configs for r in PRETRAINED_REGIMES
                    if (v := _ma(index, c, r, extra)) is not None
                    and (ig := _ma(index, c, r, "integrated_gradients")) is not None and v > ig]
        beyond.append(f"{extra} (not in the paper) above IG in {len(above_ig)} of {cells}")
    findings.append(Finding(
        2, "For the pretrained (BERT) models Integrated Gradients beats the other methods",
        "IG has the highest MA among the paper's non-baseline methods in most (regime, config) cells of "
        "C/CE/CEf/CEfAf",
        (ig_first > cells / 2) if cells else None,
        f"IG first in {ig_first} of {cells}: " + "; ".join(firsts) + "".join(f"; {b}" for b in beyond),
        ig_first / cells if cells else None, "share of cells with IG first (holds above 0.5)", SHARE_RANGE))

    # 3. OLA higher overall; Input×Gradient near Pattern Variant
    def mean_ma(regime: str) -> float | None:
        values = [v for c in configs for e in methods
                  if (v := _ma(index, c, regime, e)) is not None]
        return statistics.fmean(values) if values else None
    means = {r: m for r in regimes if (m := mean_ma(r)) is not None}
    ixg_gap = [(c, _ma(index, c, "OLA", "pattern_variant"), _ma(index, c, "OLA", "input_x_gradient"))
               for c in configs]
    ixg_gap = [(c, pv, ixg) for c, pv, ixg in ixg_gap if pv is not None and ixg is not None]
    ola_best = "OLA" in means and all(means["OLA"] >= v for v in means.values())
    ixg_close = bool(ixg_gap) and all(pv - ixg <= 0.1 for _, pv, ixg in ixg_gap)
    findings.append(Finding(
        3, "On OLA explanation performance is higher overall, and Input×Gradient comes close to Pattern Variant",
        "OLA has the highest mean MA over methods and configs, and Pattern Variant − Input×Gradient ≤ 0.10 on OLA",
        (ola_best and ixg_close) if means and ixg_gap else None,
        "mean MA: " + ", ".join(f"{r} {v:.2f}" for r, v in sorted(means.items(), key=lambda kv: -kv[1]))
        + "; OLA PV − IxG: " + ", ".join(f"{c} {format_number(pv - ixg, 2, signed=True)}" for c, pv, ixg in ixg_gap),
        max(pv - ixg for _, pv, ixg in ixg_gap) if ixg_gap else None,
        "largest Pattern Variant − Input×Gradient on OLA (≤ 0.10 for the second half)", DIFFERENCE_RANGE))

    # 4. Trained or fine-tuned embeddings above C and CEfAf on D_A, with positive RMA
    da = {r: statistics.fmean(v) for r in PRETRAINED_REGIMES
          if (v := [m for e in methods if (m := _ma(index, all_words, r, e)) is not None])}
    rmas = [(r, e, _value(index[(all_words, r, e)], RMA)) for r in ("CE", "CEf") for e in methods
            if (all_words, r, e) in index]
    rmas = [x for x in rmas if x[2] is not None]
    positive = [x for x in rmas if x[2] > 0]
    above = len(da) == 4 and min(da["CE"], da["CEf"]) > max(da["C"], da["CEfAf"])
    findings.append(Finding(
        4, "CE and CEf outperform C and CEfAf on D_A; their RMA against the zero-shot model is positive",
        "min(mean MA of CE, CEf) > max(mean MA of C, CEfAf) on D_A, and RMA > 0 for every method of CE and CEf",
        (above and len(positive) == len(rmas)) if len(da) == 4 and rmas else None,
        "mean MA on D_A: " + ", ".join(f"{r} {v:.2f}" for r, v in da.items())
        + f"; RMA > 0 in {len(positive)} of {len(rmas)} (CE/CEf × method)",
        min(da["CE"], da["CEf"]) - max(da["C"], da["CEfAf"]) if len(da) == 4 else None,
        "min(CE, CEf) − max(C, CEfAf) mean MA on D_A (> 0 for the first half)", DIFFERENCE_RANGE))

    # 5. Nobody reaches Pattern Variant; Uniform Random at the share of ground-truth words
    gaps, uniform = [], []
    for config in configs:
        for regime in regimes:
            pv = _ma(index, config, regime, "pattern_variant")
            scored = {e: v for e in methods if (v := _ma(index, config, regime, e)) is not None}
            if pv is not None and scored:
                leader = max(scored, key=scored.get)
                gaps.append((regime, config, pv, scored[leader], leader))
            record = index.get((config, regime, "uniform_random"))
            if record is not None and config in ground_truth_share:
                uniform.append((regime, config, _value(record, MA), ground_truth_share[config]))
    reaches = [g for g in gaps if g[3] >= g[2]]
    named = "; ".join(f"{r}/{c}: {e} {best:.2f} ≥ PV {pv:.2f}" for r, c, pv, best, e in reaches)
    named = f" ({named})" if named else ""
    near_share = [u for u in uniform if u[2] is not None and abs(u[2] - u[3]) <= 0.05]
    findings.append(Finding(
        5, "No method reaches Pattern Variant; Uniform Random sits at the share of ground-truth words",
        "best method < Pattern Variant in every cell, and |MA(Uniform Random) − ground-truth share| ≤ 0.05",
        (not reaches and len(near_share) == len(uniform)) if gaps and uniform else None,
        f"a method reaches PV in {len(reaches)} of {len(gaps)} cells{named}; Uniform Random within 0.05 of the share in "
        f"{len(near_share)} of {len(uniform)} (share: "
        + ", ".join(f"{c} {s:.3f}" for c, s in sorted(ground_truth_share.items()) if c in configs) + ")",
        max(best - pv for _, _, pv, best, _ in gaps) if gaps else None,
        "largest best method − Pattern Variant over the cells (< 0 for the first half)", DIFFERENCE_RANGE))
    return findings


def record_seeds(records: Iterable[Mapping[str, Any]]) -> list[int]:
    """The model seeds of a store's built-in explainer records, sorted."""
    return sorted({int(r["model"]["seed"]) for r in records
                   if r.get("record_type") == "explainer_score" and r["model"].get("seed") is not None
                   and r["explainer"].get("source", "builtin") == "builtin"})


def mean_index(indices: Mapping[int, Mapping[tuple[str, str, str], Mapping[str, Any]]]
               ) -> dict[tuple[str, str, str], dict[str, Any]]:
    """One synthetic record per (config, regime, explainer): MA (mean and median) and RMA averaged over the seeds
    that have the cell, with the across-seed interval (:func:`gecobench.pooling.across_seeds`) and ``n_seeds``:
    what the findings and the side-by-side are judged on when a store holds several seeds."""
    from gecobench.pooling import across_seeds, metric_bounds

    keys = sorted({key for index in indices.values() for key in index})
    pooled: dict[tuple[str, str, str], dict[str, Any]] = {}
    for key in keys:
        records = [index[key] for index in indices.values() if key in index]
        metrics: dict[str, Any] = {}
        for metric, fields in ((MA, ("value", "median")), (RMA, ("value",))):
            block: dict[str, Any] = {}
            for field in fields:
                mean, low, high, n = across_seeds((_value(r, metric, field) for r in records),
                                                  bounds=metric_bounds(metric))
                block[field] = mean
                block[f"{field}_seed_interval"] = (low, high)
                block["n_seeds"] = n
            metrics[metric] = block
        pooled[key] = {"record_id": f"mean of {len(records)} seed(s)", "metrics": metrics,
                       "n_seeds": len(records)}
    return pooled


def check_findings_across_seeds(indices: Mapping[int, Mapping[tuple[str, str, str], Mapping[str, Any]]],
                                ground_truth_share: Mapping[str, float],
                                configs: tuple[str, str] = BINARY_PAIR) -> list[Finding]:
    """The five findings judged on the seed means (:func:`mean_index`), each with how many seeds it holds in on
    its own and its statistic's mean and 95 % t-interval across seeds. With one seed: :func:`check_findings`."""
    from gecobench.pooling import across_seeds

    if len(indices) == 1:
        return check_findings(next(iter(indices.values())), ground_truth_share, configs)
    pooled = check_findings(mean_index(indices), ground_truth_share, configs)
    per_seed = {seed: check_findings(index, ground_truth_share, configs) for seed, index in indices.items()}
    findings = []
    for position, finding in enumerate(pooled):
        answers = [found[position] for found in per_seed.values()]
        held = sum(1 for f in answers if f.holds)
        judged = sum(1 for f in answers if f.holds is not None)
        mean, low, high, n = across_seeds((f.statistic for f in answers), bounds=finding.statistic_bounds)
        if mean is None:
            spread = ""
        elif low is None or high is None:  # one seed defines it (the others lack a config): no interval
            spread = f"; {finding.statistic_name}: {format_number(mean, 2)} (1 seed)"
        else:
            spread = (f"; {finding.statistic_name}: {format_number(mean, 2)} (95 % t-interval across {n} seeds "
                      f"{format_number(low, 2)} to {format_number(high, 2)})")
        findings.append(Finding(finding.number, finding.claim, finding.criterion + ", on the means over seeds",
                                finding.holds,
                                f"seed means: {finding.evidence}; holds in {held} of {judged} seeds on its own"
                                + spread, mean, finding.statistic_name, finding.statistic_bounds))
    return findings


def ground_truth_share(config: str, split: str = "test", data_dir: str | None = None) -> float:
    """Mean over sentences of (ground-truth words / words): the MA that uniform random scores get on average."""
    from gecobench.evaluation.data import load_split, scorable

    rows = [r for r in load_split(config, split, data_dir).rows if scorable(r)]
    return statistics.fmean(sum(r.ground_truth) / len(r.ground_truth) for r in rows)


def render_pivot(rows: list[dict[str, Any]]) -> str:
    """The side-by-side as one table per config: an explainer per row, a regime per column, each cell
    ``ours (paper)`` in median MA — the paper's figure laid out as a table."""
    regimes = list(dict.fromkeys(r["regime"] for r in rows))
    lines: list[str] = []
    for config in dict.fromkeys(r["config"] for r in rows):
        cells = {(r["explainer"], r["regime"]): r for r in rows if r["config"] == config}
        seeds = max((r.get("n_seeds") or 1 for r in rows if r["config"] == config), default=1)
        title = ("median MA, this package (paper)" if seeds == 1 else
                 f"median MA, this package: mean over {seeds} seeds [95 % t-interval across seeds] (paper)")
        lines += [f"**{config}** — {title}", "",
                  "| explainer | " + " | ".join(regimes) + " |", "|---|" + "---|" * len(regimes)]
        for explainer in dict.fromkeys(e for e, _ in cells):
            row = []
            for regime in regimes:
                cell = cells.get((explainer, regime))
                if cell is None:
                    row.append("")
                else:
                    ours = median_cell(cell["ours_median"], cell.get("ours_median_seed_interval"))
                    row.append(f"{ours} ({cell['paper_median']:.2f})")
            lines.append(f"| {explainer} | " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def render_markdown(rows: list[dict[str, Any]], findings: list[Finding], pivot: bool = False) -> str:
    """The docs section: the side-by-side table and the findings list."""
    def fmt(value: float | None, signed: bool = False) -> str:
        return "—" if value is None else format_number(value, 2, signed)

    if pivot:
        lines = [render_pivot(rows)]
    else:
        lines = ["| config | regime | explainer | paper median | this package (median) | difference |",
                 "|---|---|---|---|---|---|"]
        lines += [f"| {r['config']} | {r['regime']} | {r['explainer']} | {r['paper_median']:.2f} | "
                  f"{median_cell(r['ours_median'], r.get('ours_median_seed_interval'))} | "
                  f"{fmt(r['difference'], signed=True)} |"
                  for r in rows]
        lines.append("")
    lines.append(render_findings(findings))
    return "\n".join(lines)


def median_cell(value: float | None, seed_interval: Any = None) -> str:
    """One table cell of this package's median MA: ``0.53``, or ``0.53 [0.41, 0.66]`` with the 95 % t-interval
    across seeds when the value is a mean over several seeds; ``—`` when there is none. Every table of the
    comparison (with and without a published figure) writes its cells with it."""
    if value is None:
        return "—"
    low, high = seed_interval or (None, None)
    shown = format_number(value, 2)
    return shown if low is None or high is None else f"{shown} [{format_number(low, 2)}, {format_number(high, 2)}]"


def render_findings(findings: list[Finding]) -> str:
    """The findings as a numbered Markdown list: claim, yes/no/not measured, criterion, numbers."""
    lines = []
    for f in findings:
        answer = {True: "**yes**", False: "**no**", None: "**not measured**"}[f.holds]
        lines.append(f"{f.number}. {f.claim} — {answer}. Criterion: {f.criterion}. Numbers: {f.evidence}.")
    return "\n".join(lines) + "\n"


#: Column order of the tables without a published counterpart: from scratch, zero-shot, then from frozen to fully
#: fine-tuned (the order of the Space's pivot view).
OURS_ONLY_REGIMES = ("OLA", "ZS", "C", "CE", "CEf", "CEfAf")


def render_ours_only(index: Mapping[tuple[str, str, str], Mapping[str, Any]],
                     paper: Mapping[tuple[str, str, str], float]) -> str:
    """One table per config the paper publishes no figure for (the non-binary ones): this package's median MA,
    explainers × regimes; empty when every config of ``index`` has a published counterpart."""
    published = {config for config, _, _ in paper}
    configs = sorted({config for config, _, _ in index} - published)
    lines: list[str] = []
    for config in configs:
        present = {regime for c, regime, _ in index if c == config}
        regimes = [r for r in OURS_ONLY_REGIMES if r in present] + sorted(present - set(OURS_ONLY_REGIMES))
        explainers = sorted({e for c, _, e in index if c == config})
        seeds = max((int(r.get("n_seeds") or 1) for (c, _, _), r in index.items() if c == config), default=1)
        title = ("median MA, this package" if seeds == 1 else
                 f"median MA, this package: mean over {seeds} seeds [95 % t-interval across seeds]")
        lines += [f"**{config}** — {title} (no published figure)", "",
                  "| explainer | " + " | ".join(regimes) + " |", "|---|" + "---|" * len(regimes)]
        for explainer in explainers:
            cells = []
            for regime in regimes:
                record = index.get((config, regime, explainer))
                value = _value(record, MA, "median") if record else None
                interval = ((record.get("metrics") or {}).get(MA) or {}).get("median_seed_interval") if record else None
                cells.append(median_cell(value, interval))
            lines.append(f"| {explainer} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def compare_records(records: Iterable[Mapping[str, Any]], filtered: bool = True, seed: int | None = None,
                    figures: str | Path | None = None, pivot: bool = False,
                    seeds: Iterable[int] | None = None) -> str:
    """The whole comparison of a store's records with the paper, as Markdown: what
    ``scripts/compare_with_paper.py`` prints and ``docs/reproducing.md`` shows — the side-by-side, the findings,
    then this package's tables for the configs the paper publishes no figure for.

    ``seed`` compares one model seed; ``seeds`` several; neither: every seed the records hold. With several, each
    cell is the mean over seeds with its 95 % t-interval across seeds, and each finding is judged on the seed means
    with how many seeds it holds in and its statistic's across-seed interval (:func:`check_findings_across_seeds`)."""
    records = list(records)
    chosen = [seed] if seed is not None else sorted(set(seeds)) if seeds is not None else record_seeds(records)
    chosen = chosen or [0]
    indices = {s: index_records(records, filtered=filtered, seed=s) for s in chosen}
    index = indices[chosen[0]] if len(chosen) == 1 else mean_index(indices)
    paper = load_paper_medians(figures)
    share = {c: ground_truth_share(c) for c in BINARY_PAIR}
    text = render_markdown(side_by_side(index, paper), check_findings_across_seeds(indices, share), pivot=pivot)
    ours_only = render_ours_only(index, paper)
    if ours_only:
        text += "\n" + ours_only
    if any(config in NONBINARY_PAIR for config, _, _ in index):
        share = {c: ground_truth_share(c) for c in NONBINARY_PAIR}
        text += ("\nThe same five criteria on the non-binary configurations (D_A = `nonbinary_all`, D_S = "
                 "`nonbinary_subject`; the paper has no figure to compare with):\n\n"
                 + render_findings(check_findings_across_seeds(indices, share, NONBINARY_PAIR)))
    return text
