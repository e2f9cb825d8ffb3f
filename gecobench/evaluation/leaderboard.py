"""The leaderboard as a plain-text table for the terminal (the Space shows the same records interactively)."""

from __future__ import annotations

from typing import Any

from gecobench.formatting import format_number
from gecobench.pooling import (
    across_seeds,
    distinguishing_fields,
    identity_fields,
    pool_records,
    pooled_comparison,
    pooled_metric,
    record_comparison_label,
    tie_verdict,
)
from gecobench.store import HubStore, LocalStore

_COLUMNS = (
    ("config", 14), ("model", 6), ("base", 14), ("explainer", 22), ("seeds", 5), ("MA", 6), ("MA 95% CI", 13),
    ("vs best", 7), ("log RMA [95% CI]", 20), ("MA gap male−female [95% CI]", 27), ("MRC [95% CI]", 17),
    ("SNC [95% CI]", 17), ("scored", 7),
    ("s/sent", 7), ("differs by", 60),
)


# The one definition of each derived number, as the CLI, the Space's About tab and docs/ state it.
LEGEND = ("log RMA = median over sentences of ln(MA / MA_ZS), MA_ZS being the same explainer's MA on the "
          "zero-shot model of the same base (0: as correct as zero-shot). MA gap = MA(male) − MA(female), "
          "interval from a paired bootstrap over source sentences. vs best: paired bootstrap interval of "
          "MA(best) − MA(row) on the same sentences includes 0 (tie) or not (lower).")


def _fmt(value: Any, digits: int = 3) -> str:
    return "—" if value is None else format_number(value, digits)


def _interval(low: Any, high: Any, digits: int = 3, signed: bool = False) -> str:
    if low is None or high is None:
        return "—"
    return f"[{format_number(low, digits, signed)},{format_number(high, digits, signed)}]"


def _with_interval(pool: list[dict[str, Any]], name: str, digits: int, signed: bool = False) -> str:
    """A pooled metric and its interval (across seeds, or the record's bootstrap interval with one seed)."""
    value, low, high, _ = pooled_metric(pool, name)
    if value is None:
        return "—"
    return f"{format_number(value, digits, signed)} {_interval(low, high, digits, signed)}"


def _metric(record: dict[str, Any], name: str) -> Any:
    return (record.get("metrics", {}).get(name) or {}).get("value")


def _vs_best(pools: list[list[dict[str, Any]]], means: list[float | None]) -> list[str]:
    """Per pool of one model cell: ``best`` for the highest MA, else ``tie``/``lower`` from the best pool's paired
    comparison with it (interval of MA(best) − MA(this) includes 0 or not), ``—`` when they were not compared
    in one run."""
    ranked = [i for i in range(len(pools)) if means[i] is not None]
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
        marks = _vs_best(cell, means)
        order = sorted(range(len(cell)), key=lambda i: -(means[i] if means[i] is not None else -1))
        for i in order:
            pool = cell[i]
            first = pool[0]
            name = first["explainer"]["name"]
            label = name if len(versions[name]) == 1 else f"{name} {first['explainer']['version']}"
            ma, ma_low, ma_high, _ = pooled_metric(pool, "mass_accuracy")
            scored = sorted({int(r["counts"]["n_scored"]) for r in pool})
            runtimes = [r["runtime"].get("seconds_per_sentence") for r in pool]
            runtime = across_seeds(runtimes)[0]
            base = "—" if regime == "OLA" else base_model.split("/")[-1].split("==")[0]
            rows.append([
                config, regime, base, label, str(len(pool)), _fmt(ma), _interval(ma_low, ma_high), marks[i],
                _with_interval(pool, "relative_mass_accuracy", 2, signed=True),
                _with_interval(pool, "mass_accuracy_gap", 3, signed=True),
                _with_interval(pool, "model_randomisation_check", 2),
                _with_interval(pool, "small_noise_check", 2),
                f"{scored[0]}–{scored[-1]}" if len(scored) > 1 else str(scored[0]),
                _fmt(runtime, 3), differences[id(pool)] or "",
            ])
    return rows


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


def leaderboard_text(store: LocalStore | HubStore) -> str:
    """The explainer leaderboard (and the Spanish masked-LM records, if any) of a store, as text."""
    report = store.read_all()
    explainer_records = [d for d in report.documents if d["record_type"] == "explainer_score"]
    bias_records = [d for d in report.documents if d["record_type"] == "model_bias"]
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
