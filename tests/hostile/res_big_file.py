"""Hostile: writes one file past the file-size limit."""

import json

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class BigFile(Explainer):
    name = "res_big_file"

    def explain(self, model, tokenizer, words, targets):
        block = b"x" * (1 << 20)
        with open("big.bin", "wb") as handle:
            for _ in range(2048):
                handle.write(block)
        return [np.ones(len(w)) for w in words]
