"""The leaderboard as a plain-text table for the terminal (the Space shows the same records interactively)."""

from __future__ import annotations

from typing import Any

from gecobench.store import HubStore, LocalStore

_COLUMNS = (
    ("config", 14), ("model", 6), ("base", 14), ("explainer", 22), ("MA", 6), ("MA 95% CI", 13), ("logRMA", 7),
    ("gap", 6), ("MRC", 5), ("SNC", 5), ("scored", 6), ("s/sent", 7),
)


def _fmt(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _metric(record: dict[str, Any], name: str) -> Any:
    return (record.get("metrics", {}).get(name) or {}).get("value")


def explainer_rows(records: list[dict[str, Any]]) -> list[list[str]]:
    """One row of cells per explainer_score record, best Mass Accuracy first within each config and model."""
    def sort_key(r: dict[str, Any]) -> tuple:
        ma = _metric(r, "mass_accuracy")
        return (r["dataset"]["config"], r["model"]["regime"], r["model"]["base_model"], -(ma if ma is not None else -1))

    # A store that outlived a protocol change holds two versions of an explainer (e.g. lime 1.0.0 and 2.0.0):
    # name the version then, or the two rows would look like one explainer scored twice.
    versions: dict[str, set[str]] = {}
    for r in records:
        versions.setdefault(r["explainer"]["name"], set()).add(str(r["explainer"]["version"]))
    rows = []
    for r in sorted(records, key=sort_key):
        name = r["explainer"]["name"]
        label = name if len(versions[name]) == 1 else f"{name} {r['explainer']['version']}"
        ma_block = r["metrics"].get("mass_accuracy", {})
        ci = (f"[{_fmt(ma_block.get('ci_low'))},{_fmt(ma_block.get('ci_high'))}]"
              if ma_block.get("ci_low") is not None else "—")
        base = "—" if r["model"]["regime"] == "OLA" else r["model"]["base_model"].split("/")[-1].split("==")[0]
        rows.append([
            r["dataset"]["config"], r["model"]["regime"], base, label, _fmt(ma_block.get("value")), ci,
            _fmt(_metric(r, "relative_mass_accuracy"), 2), _fmt(_metric(r, "mass_accuracy_gap")),
            _fmt(_metric(r, "model_randomisation_check"), 2), _fmt(_metric(r, "small_noise_check"), 2),
            str(r["counts"]["n_scored"]), _fmt(r["runtime"].get("seconds_per_sentence"), 3),
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
                return f"{category} {numeric[category]:+.2f}"
    return "—"


def leaderboard_text(store: LocalStore | HubStore) -> str:
    """The explainer leaderboard (and the Spanish masked-LM records, if any) of a store, as text."""
    report = store.read_all()
    explainer_records = [d for d in report.documents if d["record_type"] == "explainer_score"]
    bias_records = [d for d in report.documents if d["record_type"] == "model_bias"]
    header = [name for name, _ in _COLUMNS]
    widths = [w for _, w in _COLUMNS]
    parts = [f"Explanation correctness (Mass Accuracy, higher is better) — {len(explainer_records)} records",
             format_table(header, widths, explainer_rows(explainer_records))]
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
