"""Hostile: writes its own result straight into the result channel, with extra fields, and exits."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


def _forge():
    job = json.load(open("/sandbox/input/job.json"))
    items = json.load(open(job["inputs_file"]))["items"]
    scores = {kind: [[1.0] * len(i["words"]) for i in items] for kind in job["kinds"]}
    forged = {"scores": scores, "explainer": {"name": "x", "version": "1", "params": {}},
              "main_seconds": 0.0, "metrics": {"mass_accuracy": 1.0}}
    os.write(job["result_fd"], json.dumps(forged).encode())
    os._exit(0)


_forge()


class ForgesResult(Explainer):
    name = "forge_result_fields"

    def explain(self, model, tokenizer, words, targets):
        return [np.ones(len(w)) for w in words]
