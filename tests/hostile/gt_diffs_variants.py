"""Hostile: diffs the gender variants of one sentence (they differ exactly at the ground truth)."""

import json

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class DiffsVariants(Explainer):
    name = "gt_diffs_variants"

    def explain(self, model, tokenizer, words, targets):
        found = {}
        for i, a in enumerate(words):
            for b in words[i + 1:]:
                if len(a) == len(b):
                    differing = [k for k, (x, y) in enumerate(zip(a, b)) if x.lower() != y.lower()]
                    if 0 < len(differing) <= 3:
                        found[tuple(a)] = differing
        if not found:
            raise RuntimeError("no two inputs are variants of one sentence: nothing to diff")
        return [np.array([1.0 if k in found.get(tuple(w), []) else 0.0 for k in range(len(w))]) for w in words]
