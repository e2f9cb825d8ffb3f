"""A results store as a Hub dataset folder: one parquet file per record type plus a dataset card.

The Space and the CLI read the JSON records themselves; the parquet export is for everyone else
(``datasets.load_dataset("ORG/gecobench-results", "explainer_score")``, pandas, DuckDB). Each row is one
record, flattened to the columns people filter on, with the full record kept verbatim in ``record_json`` so
nothing is lost in the flattening.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from gecobench.flags import FLAG_NAMES, flags_of, mark_text
from gecobench.provenance import git_commit, utc_now
from gecobench.records import RECORD_TYPES

METRIC_FIELDS = ("value", "ci_low", "ci_high")


def flatten_explainer_score(record: dict[str, Any]) -> dict[str, Any]:
    """One row: identity columns, every metric's value and interval, counts, runtime and provenance."""
    explainer, model, dataset = record["explainer"], record["model"], record["dataset"]
    protocol = record.get("protocol") or {}
    row: dict[str, Any] = {
        "record_id": record["record_id"],
        "schema_version": record["schema_version"],
        "explainer": explainer["name"],
        "explainer_version": explainer["version"],
        "explainer_params": json.dumps(explainer.get("params", {}), sort_keys=True),
        "explainer_source": explainer.get("source"),
        "regime": model["regime"],
        "base_model": model["base_model"],
        "model_seed": model.get("seed"),
        "checkpoint_sha256": model.get("checkpoint_sha256"),
        "config": dataset["config"],
        "split": dataset["split"],
        "data_fingerprint": dataset["fingerprint"],
        "filter": protocol.get("filter"),
        "protocol_seed": protocol.get("seed"),
        "protocol": json.dumps(protocol, sort_keys=True),
        "n_sentences": record["counts"].get("n_sentences"),
        "n_scored": record["counts"].get("n_scored"),
        "seconds_per_sentence": (record.get("runtime") or {}).get("seconds_per_sentence"),
        "package_version": record["provenance"]["package_version"],
        "git_commit": record["provenance"]["git_commit"],
        "created_at": record["provenance"]["created_at"],
    }
    for name, metric in sorted(record["metrics"].items()):
        for field in METRIC_FIELDS:
            value = metric.get(field)
            row[f"{name}.{field}"] = float(value) if isinstance(value, (int, float)) else None
    for group, values in sorted((record.get("groups") or {}).items()):
        row[f"mass_accuracy.{group}"] = values.get("mass_accuracy")
    # The marks every view shows (gecobench.flags; derived for records older than schema 2.2).
    flags = flags_of(record)
    for name in FLAG_NAMES:
        row[f"flag.{name}"] = bool(flags.get(name))
    row["flags"] = mark_text(record)
    controls = (record.get("controls") or {})
    control_ma = controls.get("mass_accuracy") or {}
    for field in METRIC_FIELDS:
        value = control_ma.get(field)
        row[f"controls.mass_accuracy.{field}"] = float(value) if isinstance(value, (int, float)) else None
    row["controls.chance_mass_accuracy"] = controls.get("chance_mass_accuracy")
    row["record_json"] = json.dumps(record, sort_keys=True, ensure_ascii=False)
    return row


def flatten_model_bias(record: dict[str, Any]) -> dict[str, Any]:
    """One row per masked LM: its identity and provenance, the per-scheme indices kept as JSON."""
    return {
        "record_id": record["record_id"],
        "schema_version": record["schema_version"],
        "masked_lm": json.dumps(record["masked_lm"], sort_keys=True, ensure_ascii=False),
        "protocol": json.dumps(record["protocol"], sort_keys=True, ensure_ascii=False),
        "schemes": json.dumps(record["schemes"], sort_keys=True, ensure_ascii=False),
        "package_version": record["provenance"]["package_version"],
        "git_commit": record["provenance"]["git_commit"],
        "created_at": record["provenance"]["created_at"],
        "record_json": json.dumps(record, sort_keys=True, ensure_ascii=False),
    }


FLATTENERS = {"explainer_score": flatten_explainer_score, "model_bias": flatten_model_bias}


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows with possibly different metric columns → one table (a missing column is null in that row)."""
    columns: list[str] = []
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    return pa.table({c: [row.get(c) for row in rows] for c in columns})


def export_store(records: Iterable[dict[str, Any]], output_dir: str | Path, repo_id: str,
                 source: str, warnings: Iterable[str] = ()) -> dict[str, int]:
    """Write ``data/<record_type>.parquet`` files and ``README.md`` into ``output_dir``; return rows per type.

    Records must already be validated (read them with the store's ``read_all``, which skips invalid files and
    reports them as ``warnings``; those are listed in the card so an export never hides a skipped file).
    """
    output_dir = Path(output_dir)
    by_type: dict[str, list[dict[str, Any]]] = {t: [] for t in RECORD_TYPES}
    for record in records:
        by_type[record["record_type"]].append(FLATTENERS[record["record_type"]](record))
    counts = {t: len(rows) for t, rows in by_type.items() if rows}
    if not counts:
        raise ValueError(f"{source}: no valid records to export")
    (output_dir / "data").mkdir(parents=True, exist_ok=True)
    for record_type, rows in by_type.items():
        if rows:
            rows.sort(key=lambda r: r["record_id"])
            pq.write_table(_table(rows), output_dir / "data" / f"{record_type}.parquet")
    (output_dir / "README.md").write_text(_card(repo_id, source, counts, list(warnings)), encoding="utf-8")
    return counts


def _card(repo_id: str, source: str, counts: dict[str, int], warnings: list[str]) -> str:
    front = {
        "license": "bsd-3-clause",
        "pretty_name": "GECOBench Hub results",
        "tags": ["explainability", "xai", "gender-bias", "gecobench"],
        "configs": [{"config_name": t, "data_files": [{"split": "train", "path": f"data/{t}.parquet"}]}
                    for t in sorted(counts)],
    }
    lines = [
        "---", yaml.safe_dump(front, sort_keys=False).rstrip(), "---", "",
        f"# {repo_id}", "",
        "Result records of GECOBench Hub (package `gecobench-hub`) exported from the store "
        f"`{source}` on {utc_now()} (package commit `{git_commit()}`).", "",
        "One row per record. Columns name the explainer, the model (regime, base, seed, checkpoint hash), the "
        "GECO config and the protocol; every metric has `<metric>.value`, `<metric>.ci_low` and "
        "`<metric>.ci_high` (95 % bootstrap interval); `record_json` holds the full record as stored, with its "
        "provenance.", "",
        "| config | rows |", "|---|---|",
        *[f"| `{t}` | {n} |" for t, n in sorted(counts.items())], "",
        "```python",
        "from datasets import load_dataset",
        f'scores = load_dataset("{repo_id}", "explainer_score", split="train")',
        "```",
    ]
    if warnings:
        lines += ["", f"{len(warnings)} stored file(s) were skipped as invalid:", "",
                  *[f"* {w}" for w in warnings]]
    return "\n".join(lines) + "\n"
