"""Hostile: fills its work folder with 100 MiB files."""

import json

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class FillsDisk(Explainer):
    name = "res_fills_disk"

    def explain(self, model, tokenizer, words, targets):
        block = b"x" * (1 << 20)
        for number in range(64):
            with open(f"fill{number}.bin", "wb") as handle:
                for _ in range(32):
                    handle.write(block)
        return [np.ones(len(w)) for w in words]
