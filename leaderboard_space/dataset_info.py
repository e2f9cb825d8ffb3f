"""The Dataset tab: GECO configs, sizes, ground-truth statistics and co-occurrence bias, computed once.

Uses :func:`geco_dataset.load_geco` and :func:`gecobench.metrics.cooccurrence.cooccurrence_bias`; when the
data (or those modules) are not available the tab shows a message instead of failing.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

GROUP_OF_GENDER = {"female": "female", "male": "male", "neutral": "non-binary"}


def _split_stats(rows: Any, config: str, split: str) -> tuple[dict[str, Any], list[list[str]], list[str]]:
    words = list(rows["words"])
    truth = list(rows["ground_truth"])
    genders = list(rows["gender"])
    lengths = np.array([len(w) for w in words], dtype=float)
    n_truth = np.array([int(np.sum(t)) for t in truth], dtype=float)
    stats = {
        "config": config,
        "split": split,
        "rows": len(words),
        "source sentences": len(set(rows["sentence_id"])),
        "words / sentence": round(float(lengths.mean()), 2) if len(lengths) else np.nan,
        "ground-truth words / sentence": round(float(n_truth.mean()), 2) if len(n_truth) else np.nan,
        "ground-truth share of words": round(float(n_truth.sum() / lengths.sum()), 4) if lengths.sum() else np.nan,
        "rows without ground truth": int((n_truth == 0).sum()),
    }
    for gender in ("female", "male", "neutral"):
        stats[f"{GROUP_OF_GENDER[gender]} rows"] = sum(1 for g in genders if g == gender)
    return stats, words, [GROUP_OF_GENDER.get(g, g) for g in genders]


@functools.lru_cache(maxsize=4)
def geco_statistics(data_dir: str | None = None) -> tuple[pd.DataFrame, str]:
    """(table, message): one row per GECO config and split; the message is non-empty when something is missing.

    Cached per ``data_dir``: the figures depend only on the (checksummed) released files.
    """
    try:
        from geco_dataset import GECO_CONFIGS, GECO_SPLITS, load_geco
    except ImportError as err:
        return pd.DataFrame(), f"The GECO loader is not available ({err})."
    try:
        from gecobench.metrics.cooccurrence import DEFAULT_TERMS, cooccurrence_bias
    except ImportError:
        cooccurrence_bias = None
    rows, notes = [], []
    for config in GECO_CONFIGS:
        for split in GECO_SPLITS:
            try:
                dataset = load_geco(config, split, data_dir=data_dir)
            except Exception as err:  # offline without local data, checksum mismatch: report, go on
                notes.append(f"{config}/{split}: {type(err).__name__}: {err}")
                continue
            stats, words, groups = _split_stats(dataset, config, split)
            if cooccurrence_bias is not None:
                present = [g for g in DEFAULT_TERMS if g in set(groups)]
                bias = cooccurrence_bias(words, groups, {g: DEFAULT_TERMS[g] for g in present})["bias_c"]
                for group, value in bias.items():
                    stats[f"co-occurrence bias {group}"] = round(float(value), 4)
            rows.append(stats)
    message = ""
    if cooccurrence_bias is None:
        notes.append("co-occurrence bias unavailable (gecobench.metrics.cooccurrence missing)")
    if notes:
        message = "Some GECO statistics are unavailable: " + "; ".join(notes)
    if not rows:
        message = "The GECO data is not available here. " + message
    return pd.DataFrame(rows), message
