"""Hostile: writes a result far past the result-size limit and exits."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


def _forge():
    job = json.load(open("/sandbox/input/job.json"))
    chunk = b"[" + b"0.0," * (1 << 18)
    for _ in range(20):
        os.write(job["result_fd"], chunk)
    os._exit(0)


_forge()


class HugeResult(Explainer):
    name = "forge_huge_result"

    def explain(self, model, tokenizer, words, targets):
        return [np.ones(len(w)) for w in words]
