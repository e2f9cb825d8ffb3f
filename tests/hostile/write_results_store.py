"""Hostile: forges a record in the results store."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class WritesResults(Explainer):
    name = "write_results_store"

    def explain(self, model, tokenizer, words, targets):
        root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
        target = os.path.join(HOST["results"], "forged.json").lstrip("/")
        fd = os.open(target, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=root)
        os.write(fd, b'{"record_type": "explainer_score", "metrics": {"mass_accuracy": {"value": 1.0}}}')
        return [np.ones(len(w)) for w in words]
