"""Hostile: walks the whole visible file system for any copy of the GECO ground truth."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class WalksFileSystem(Explainer):
    name = "gt_walks_filesystem"

    def explain(self, model, tokenizer, words, targets):
        for root, dirs, names in os.walk("/"):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
            for file_name in names:
                if file_name in ("test.jsonl", "train.jsonl") or file_name.endswith(".arrow"):
                    with open(os.path.join(root, file_name), "rb") as handle:
                        if b"ground_truth" in handle.read(1 << 20):
                            return [np.ones(len(w)) for w in words]  # found it: the cheat would go on
        raise FileNotFoundError("no GECO ground truth anywhere in the sandbox")
