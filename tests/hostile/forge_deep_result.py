"""Hostile: writes a deeply nested result to crash the worker's JSON parser."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


def _forge():
    job = json.load(open("/sandbox/input/job.json"))
    os.write(job["result_fd"], b"[" * 500_000 + b"]" * 500_000)
    os._exit(0)


_forge()


class DeepResult(Explainer):
    name = "forge_deep_result"

    def explain(self, model, tokenizer, words, targets):
        return [np.ones(len(w)) for w in words]
