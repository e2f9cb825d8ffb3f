"""The leaderboard as a plain-text table for the terminal (the Space shows the same records interactively).

Two views: the main table (:func:`leaderboard_text`: one row per explainer and model) and the gender-gap table
(``leaderboard_text(store, gaps=True)``, :func:`gender_rows`: one row per explainer, model and metric, with each
gender group's value and every signed gap with its paired interval). From the command line::

    python -m gecobench.evaluation.leaderboard --results results/ [--gaps] [--metric mass_accuracy ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from gecobench.columns import DIFFERS_BY, METRICS, SEEDS, VS_BEST
from gecobench.flags import pool_mark_text, ranked_apart
from gecobench.formatting import format_number
from gecobench.gender import (
    GAP_PAIRS,
    GENDER_GROUPS,
    METRIC_SYMBOLS,
    gap_key,
    gap_label,
    gender_metrics,
    gender_sentences_text,
    gender_value,
)
from gecobench.pooling import (
    across_seeds,
    distinguishing_fields,
    identity_fields,
    metric_bounds,
    pool_records,
    pooled_comparison,
    pooled_metric,
    record_comparison_label,
    tie_verdict,
)
from gecobench.store import HubStore, LocalStore

MA = "mass_accuracy"
#: the metric columns after MA, each shown as ``value [95% CI]`` (labels, digits and signs from gecobench.columns)
_INTERVAL_METRICS = ("relative_mass_accuracy", "mass_accuracy_gap", "model_randomisation_check", "small_noise_check")
_COLUMNS = (
    ("config", 14), ("model", 6), ("base", 14), ("explainer", 22), (SEEDS.label.lower(), 5), (METRICS[MA].label, 6),
    (f"{METRICS[MA].label} 95% CI", 13), (VS_BEST.label, 7),
    *((f"{METRICS[key].label} [95% CI]", 22) for key in _INTERVAL_METRICS), ("scored", 7),
    ("s/sent", 7), (DIFFERS_BY.label.lower(), 60),
)


# The one definition of each derived number, as the CLI, the Space's About tab and docs/ state it.
LEGEND = ("log RMA = median over sentences of ln(MA / MA_ZS), MA_ZS being the same explainer's MA on the "
          "zero-shot model of the same base (0: as correct as zero-shot). MA gap = MA(male) − MA(female), "
          "interval from a paired bootstrap over source sentences. vs best: paired bootstrap interval of "
          "MA(best) − MA(row) on the same sentences includes 0 (tie) or not (lower; higher: a baseline above the best "
          "real explainer). Marks (gecobench.flags): "
          "[model-independent], [self-reported], [explains the data, not the model] (high MA here, near chance on "
          "the hub's hidden control models), [matches the ground truth]; flagged rows are ranked after the rest.")


def _fmt(value: Any, digits: int = 3) -> str:
    return "—" if value is None else format_number(value, digits)


def _interval(low: Any, high: Any, digits: int = 3, signed: bool = False) -> str:
    if low is None or high is None:
        return "—"
    return f"[{format_number(low, digits, signed)},{format_number(high, digits, signed)}]"


def _with_interval(pool: list[dict[str, Any]], name: str) -> str:
    """A pooled metric and its interval (across seeds, or the record's bootstrap interval with one seed), written
    with the digits and sign of its column (:data:`gecobench.columns.METRICS`)."""
    value, low, high, _ = pooled_metric(pool, name)
    if value is None:
        return "—"
    col = METRICS[name]
    return f"{format_number(value, col.digits, col.signed)} {_interval(low, high, col.digits, col.signed)}"


def _metric(record: dict[str, Any], name: str) -> Any:
    return (record.get("metrics", {}).get(name) or {}).get("value")


def _vs_best(pools: list[list[dict[str, Any]]], means: list[float | None]) -> list[str]:
    """Per pool of one model cell: ``best`` for the highest MA among the real explainers (a baseline — the Pattern
    Variant oracle, Uniform Random — is never the best, as on the Space), else ``tie``/``lower`` from the best
    pool's paired comparison with it (interval of MA(best) − MA(this) includes 0 or not), ``—`` when they were not
    compared in one run."""
    ranked = [i for i in range(len(pools)) if means[i] is not None and not pools[i][0]["explainer"].get("is_baseline")]
    if not ranked:
        return ["—"] * len(pools)
    best = max(ranked, key=lambda i: means[i])
    marks = []
    for i, pool in enumerate(pools):
        if i == best:
            marks.append("best")
            continue
        _, low, high, n = pooled_comparison(pools[best], record_comparison_label(pool[0]))
        verdict = tie_verdict(low, high) if n else None
        marks.append({"higher": "lower", "tie": "tie", "lower": "higher"}.get(verdict or "", "—"))
    return marks


def explainer_rows(records: list[dict[str, Any]]) -> list[list[str]]:
    """One row per pool of records (:func:`gecobench.pooling.pool_records`: one explainer on one model —
    regime × base × config — over seeds of an otherwise identical protocol), best MA first within a model.

    ``seeds`` is the number of records pooled; with several, values are means over seeds and intervals 95 %
    t-intervals across seeds (with one, the record's bootstrap interval over sentences). ``vs best`` says
    whether the best explainer of the model beats this one in their paired comparison or ties with it.
    ``differs by`` names every protocol parameter that sets the row apart from the rows it could be mistaken for.
    """
    pools = pool_records(records)
    differences = dict(zip(map(id, pools), distinguishing_fields([identity_fields(p[0]) for p in pools])))
    # A store that outlived a protocol change holds two versions of an explainer (e.g. lime 1.0.0 and 2.0.0):
    # name the version then, or the two rows would look like one explainer scored twice.
    versions: dict[str, set[str]] = {}
    for r in records:
        versions.setdefault(r["explainer"]["name"], set()).add(str(r["explainer"]["version"]))
    cells: dict[tuple[str, str, str], list[list[dict[str, Any]]]] = {}
    for pool in pools:
        first = pool[0]
        cells.setdefault((first["dataset"]["config"], first["model"]["regime"], first["model"]["base_model"]),
                         []).append(pool)
    rows = []
    for (config, regime, base_model), cell in sorted(cells.items()):
        means = [pooled_metric(pool, "mass_accuracy")[0] for pool in cell]
        # Flagged entries (gecobench.flags.ranked_apart: explains the data not the model, matches the ground truth,
        # model-independent other than a baseline) are ranked after the rest and never count as "best".
        apart = [any(ranked_apart(r) for r in pool) for pool in cell]
        marks = _vs_best(cell, [None if apart[i] else means[i] for i in range(len(cell))])
        marks = ["flagged" if apart[i] else mark for i, mark in enumerate(marks)]
        order = sorted(range(len(cell)), key=lambda i: (apart[i], -(means[i] if means[i] is not None else -1)))
        for i in order:
            pool = cell[i]
            first = pool[0]
            name = first["explainer"]["name"]
            label = name if len(versions[name]) == 1 else f"{name} {first['explainer']['version']}"
            flag_text = pool_mark_text(pool)
            label = f"{label} {flag_text}" if flag_text else label
            ma, ma_low, ma_high, _ = pooled_metric(pool, "mass_accuracy")
            scored = sorted({int(r["counts"]["n_scored"]) for r in pool})
            runtimes = [r["runtime"].get("seconds_per_sentence") for r in pool]
            runtime = across_seeds(runtimes)[0]
            base = "—" if regime == "OLA" else base_model.split("/")[-1].split("==")[0]
            rows.append([
                config, regime, base, label, str(len(pool)), _fmt(ma), _interval(ma_low, ma_high), marks[i],
                *(_with_interval(pool, key) for key in _INTERVAL_METRICS),
                f"{scored[0]}–{scored[-1]}" if len(scored) > 1 else str(scored[0]),
                _fmt(runtime, 3), differences[id(pool)] or "",
            ])
    return rows


# The gender-gap view's columns (name, width); the gap columns follow GAP_PAIRS.
GAP_COLUMNS = (
    ("config", 14), ("model", 6), ("base", 14), ("explainer", 22), ("seeds", 5), ("metric", 8),
    ("sentences", 22), *((group, 22) for group in GENDER_GROUPS),
    *((f"{gap_label(a, b)} [95% CI]", 25) for a, b in GAP_PAIRS), ("differs by", 60),
)

GAPS_LEGEND = ("Gap = metric(first group) − metric(second group), the metric's own statistic (mean; median for log "
               "RMA) on each group's sentences, interval from a paired bootstrap over source sentences (gender "
               "variants resampled together; an interval excluding 0 is a gap). Read with the metric's direction: "
               "for MA, MRC, LD, SP, RRA, AUPRC, Compr. and LOO tau a positive gap favours the first group; for SNC, "
               "DMA, CVR and Suff. (lower is better) it favours the second. sentences: the metric's own sentences "
               "(all scored, or \"first N (properties)\" / \"first N (faithfulness)\": the first N source sentences, "
               "the subsample those metrics were computed on). "
               "Records without per-gender blocks (schema < 2.1) show MA only.")


def _pooled_gender(pool: Sequence[Mapping[str, Any]], metric: str, part: str, key: str, digits: int,
                   signed: bool) -> str:
    """A per-gender value or gap of a pool: the record's own interval with one seed, else mean and t-interval
    across seeds (:func:`gecobench.pooling.across_seeds`); ``—`` where no record defines it."""
    blocks = [gender_value(record, metric, part, key) or {} for record in pool]
    own = (blocks[0].get("ci_low"), blocks[0].get("ci_high")) if len(blocks) == 1 else (None, None)
    value, low, high, _ = across_seeds((b.get("value") for b in blocks), own, metric_bounds(metric, part))
    if value is None:
        return "—"
    return f"{format_number(value, digits, signed)} {_interval(low, high, digits, signed)}"


def _record_metrics(record: Mapping[str, Any]) -> list[str]:
    """The metrics a record holds per gender: its ``by_gender`` block's, or MA alone for an older record."""
    held = gender_metrics(record)
    if held:
        return list(held)
    return ["mass_accuracy"] if record.get("groups") else []


def gender_rows(records: list[dict[str, Any]], metrics: Sequence[str] | None = None) -> list[list[str]]:
    """The gender-gap view: for each pool of records (as :func:`explainer_rows`), one row per metric the records
    hold per gender (``metrics`` narrows them), in the order of :data:`gecobench.gender.METRIC_SYMBOLS`: each
    group's value and every gap of :data:`gecobench.gender.GAP_PAIRS` with its paired interval (``—`` where the
    config has no such group)."""
    unknown = sorted(set(metrics or ()) - set(METRIC_SYMBOLS))
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; choose from {sorted(METRIC_SYMBOLS)}")
    rows = []
    pools = pool_records(records)
    differences = distinguishing_fields([identity_fields(p[0]) for p in pools])
    for pool, difference in zip(pools, differences):
        first = pool[0]
        held = {m for record in pool for m in _record_metrics(record)}
        chosen = [m for m in METRIC_SYMBOLS if m in held and (not metrics or m in metrics)]
        chosen += sorted(m for m in held - set(METRIC_SYMBOLS) if not metrics)  # a metric added later still shows
        regime, base_model = first["model"]["regime"], first["model"]["base_model"]
        base = "—" if regime == "OLA" else base_model.split("/")[-1].split("==")[0]
        for metric in chosen:
            digits = 2 if metric == "relative_mass_accuracy" else 3
            entry = gender_metrics(first).get(metric) or {}
            name = first["explainer"]["name"]
            flag_text = pool_mark_text(pool)
            rows.append([
                first["dataset"]["config"], regime, base, f"{name} {flag_text}" if flag_text else name, str(len(pool)),
                METRIC_SYMBOLS.get(metric, metric), gender_sentences_text(entry, short=True),
                *(_pooled_gender(pool, metric, "groups", group, digits, metric == "relative_mass_accuracy")
                  for group in GENDER_GROUPS),
                *(_pooled_gender(pool, metric, "gaps", gap_key(a, b), digits, True) for a, b in GAP_PAIRS),
                difference,
            ])
    return rows


def gaps_table(records: list[dict[str, Any]], metrics: Sequence[str] | None = None) -> str:
    """:func:`gender_rows` as a text table with its header (the last column, ``differs by``, never cut)."""
    rows = gender_rows(records, metrics)
    header = [name for name, _ in GAP_COLUMNS]
    widths = [w for _, w in GAP_COLUMNS[:-1]] + [max([len(header[-1]), *(len(r[-1]) for r in rows)])]
    return format_table(header, widths, rows)


def format_table(header: list[str], widths: list[int], rows: list[list[str]]) -> str:
    """Left-aligned text table with a rule under the header; cells wider than their column are cut with '…'."""
    def cell(text: str, width: int) -> str:
        return text if len(text) <= width else text[: width - 1] + "…"

    lines = [" ".join(cell(h, w).ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append(" ".join("-" * w for w in widths))
    lines += [" ".join(cell(c, w).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _largest_bpi_bias(record: dict[str, Any]) -> str:
    """The supersense category with the largest |BPI bias| (male minus female), e.g. ``FEELING -22.09``."""
    for name, scheme in sorted(record.get("schemes", {}).items()):
        bpi = (scheme.get("bias") or {}).get("bpi") if name.startswith("supersenses") else None
        if isinstance(bpi, dict):
            # "unknown" collects words outside the lexicon: not a category the paper reports
            numeric = {k: v for k, v in bpi.items() if isinstance(v, (int, float)) and k != "unknown"}
            if numeric:
                category = max(numeric, key=lambda k: abs(numeric[k]))
                return f"{category} {format_number(numeric[category], 2, signed=True)}"
    return "—"


def leaderboard_text(store: LocalStore | HubStore, gaps: bool = False, metrics: Sequence[str] | None = None) -> str:
    """The explainer leaderboard (and the Spanish masked-LM records, if any) of a store, as text; with ``gaps``
    the gender-gap view instead (:func:`gender_rows`, narrowed to ``metrics`` when given)."""
    report = store.read_all()
    explainer_records = [d for d in report.documents if d["record_type"] == "explainer_score"]
    bias_records = [d for d in report.documents if d["record_type"] == "model_bias"]
    if gaps:
        parts = [f"Every metric by gender — {len(explainer_records)} records. One row per explainer, model and "
                 "metric; records are averaged only over seeds of an otherwise identical protocol (seeds > 1: "
                 "mean, 95 % t-interval across seeds).\n" + GAPS_LEGEND, gaps_table(explainer_records, metrics)]
        if report.warnings:
            parts.append(f"\n{len(report.warnings)} documents skipped:\n" + "\n".join(report.warnings[:10]))
        return "\n".join(parts)
    header = [name for name, _ in _COLUMNS]
    rows = explainer_rows(explainer_records)
    # the last column ("differs by") is never cut: a row's distinguishing parameters must stay readable
    widths = [w for _, w in _COLUMNS[:-1]] + [max([len(header[-1]), *(len(r[-1]) for r in rows)])]
    legend = (f"Explanation correctness (Mass Accuracy, higher is better) — {len(explainer_records)} records. "
              "One row per explainer and model (regime × base × config); records are averaged only over seeds of "
              "an otherwise identical protocol (seeds > 1: mean, 95 % t-interval across seeds).\n" + LEGEND)
    parts = [legend,
             format_table(header, widths, rows)]
    if bias_records:
        parts.append(f"\nSpanish masked-LM gender bias — {len(bias_records)} model_bias records")
        rows = []
        for r in sorted(bias_records, key=lambda d: (d["masked_lm"]["model_id"], str(d.get("protocol", {}).get("k")))):
            protocol = r.get("protocol", {})
            rows.append([r["masked_lm"]["model_id"], str(protocol.get("k", "—")), _largest_bpi_bias(r),
                         ", ".join(sorted(r.get("schemes", {})))])
        parts.append(format_table(["masked LM", "k", "largest BPI bias (supersenses)", "lexicon schemes"],
                                  [46, 3, 30, 50], rows))
    if report.warnings:
        parts.append(f"\n{len(report.warnings)} documents skipped:\n" + "\n".join(report.warnings[:10]))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Print the leaderboard of a results store (``--gaps``: every metric by gender)."""
    from gecobench.store import open_results_store

    parser = argparse.ArgumentParser(description="Print the GECOBench leaderboard of a results store.")
    parser.add_argument("--results", default=None,
                        help="results store: a folder (default results/ or $GECOBENCH_RESULTS) or hf://<dataset repo id>")
    parser.add_argument("--gaps", action="store_true",
                        help="every metric by gender: each group's value and every signed gap with its interval")
    parser.add_argument("--metric", dest="metrics", nargs="+", default=None, choices=sorted(METRIC_SYMBOLS),
                        help="with --gaps: only these metrics (default: every metric the records hold)")
    args = parser.parse_args(argv)
    print(leaderboard_text(open_results_store(args.results), gaps=args.gaps, metrics=args.metrics))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
