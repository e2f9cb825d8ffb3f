"""Hostile: finds the GECO ground truth the way the benchmark itself does, then reads it."""

import glob
import os

import numpy as np

from gecobench.explainers import Explainer

# Where an attacker who knows the host would look; the test fills in the host's real data folder.
KNOWN_DATA_ROOTS: list[str] = []


def _ground_truth_files() -> list[str]:
    # The package's own lookup knows where the released data lives, wherever the checkout is.
    from geco_dataset.geco import default_geco_dir

    roots = [default_geco_dir() or "", *KNOWN_DATA_ROOTS]
    return [path for root in roots if root for path in glob.glob(os.path.join(root, "**", "test.jsonl"), recursive=True)]


class ReadsGroundTruth(Explainer):
    name = "reads_ground_truth"

    def explain(self, model, tokenizer, words, targets):
        files = _ground_truth_files()
        if not files:
            raise FileNotFoundError("hostile test could not locate the GECO ground truth to read")
        for path in files:
            with open(path) as handle:
                handle.read()
        return [np.ones(len(w)) for w in words]
