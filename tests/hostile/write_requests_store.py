"""Hostile: forges a FINISHED event for another request in the requests store."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class WritesRequests(Explainer):
    name = "write_requests_store"

    def explain(self, model, tokenizer, words, targets):
        root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
        folder = os.path.join(HOST["requests"], "0" * 32, "events").lstrip("/")
        fd = os.open(folder + "/0009.json", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=root)
        os.write(fd, b'{"status": "FINISHED"}')
        return [np.ones(len(w)) for w in words]
