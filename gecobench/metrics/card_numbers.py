"""The numbers shown in the metric cards, computed from the shared data (see scripts/maintainer/compute_card_numbers.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gecobench.formatting import format_number
from gecobench.metrics.bias_indices import (
    bias_indices,
    invert_lexicon,
    read_prediction_file,
)
from gecobench.metrics.cooccurrence import geco_cooccurrence_table

# The paper's values (Wilming et al. 2025) for the non-binary configs; binary configs have two groups.
PAPER_COOCCURRENCE = {
    "non_binary_gender_all": {"female": 0.33, "male": 0.33, "non-binary": 0.33},
    "non_binary_gender_subj": {"female": 0.33, "male": 0.36, "non-binary": 0.30},
}
SUPERSENSES = ["BODY", "FEELING", "MIND", "BEHAVIOR", "SOCIAL"]
CARD_MODELS = {
    "BETO (dccuchile/bert-base-spanish-wwm-uncased)": "dccuchile_bert-base-spanish-wwm-uncased",
    "MarIA (BSC-TeMU/roberta-base-bne)": "BSC-TeMU_roberta-base-bne",
}


def geco_cooccurrence_markdown(geco_dir: Path, split: str = "train", as_json: bool = False) -> Any:
    """A Markdown table of bias_C per GECO config and group, beside the paper's values."""
    table = geco_cooccurrence_table(str(geco_dir), split)
    if as_json:
        return table
    lines = ["| config | group | C | bias_C (ours) | bias_C (paper) |", "|---|---|---|---|---|"]
    for config, result in table.items():
        for group, value in result["bias_c"].items():
            paper = PAPER_COOCCURRENCE.get(config, {}).get(group)
            lines.append(f"| {config} | {group} | {result['counts'][group]} | {value:.3f} | "
                         f"{'—' if paper is None else f'≈ {paper:.2f}'} |")
    return "\n".join(lines)


def supersense_bias(spanish_dir: Path, model_file: str, k: int = 10) -> dict[str, Any]:
    """bias_indices of one model's published top-k predictions with the supersense lexicon."""
    lexicon = invert_lexicon(json.loads((spanish_dir / "lexicons" / f"supersenses_top{k}.json").read_text("utf-8")))
    rows = read_prediction_file(str(spanish_dir / "predictions" / f"top{k}" / f"{model_file}.tsv"))
    return bias_indices(**rows, lexicon=lexicon, k=k)


def supersense_bias_markdown(spanish_dir: Path, k: int = 10, as_json: bool = False) -> Any:
    """A Markdown table of BPI/BRI (male, female, bias = male − female) per supersense for BETO and MarIA."""
    results = {label: supersense_bias(spanish_dir, file, k) for label, file in CARD_MODELS.items()}
    if as_json:
        return {label: {index: {c: {"male": r[index][c]["male"], "female": r[index][c]["female"],
                                    "bias": r["bias"][index][c]} for c in SUPERSENSES}
                        for index in ("bpi", "bri")} for label, r in results.items()}
    lines = ["| model | supersense | BPI male | BPI female | BPI bias | BRI male | BRI female | BRI bias |",
             "|---|---|---|---|---|---|---|---|"]
    for label, r in results.items():
        for c in SUPERSENSES:
            lines.append(
                f"| {label} | {c} | {r['bpi'][c]['male']:.2f} | {r['bpi'][c]['female']:.2f} | "
                f"{format_number(r['bias']['bpi'][c], 2, signed=True)} | {r['bri'][c]['male']:.2f} | {r['bri'][c]['female']:.2f} | "
                f"{format_number(r['bias']['bri'][c], 2, signed=True)} |"
            )
    return "\n".join(lines)
